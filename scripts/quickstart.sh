#!/usr/bin/env bash
# Install everything, then index a real repository (default: nav's own source) and show answers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
REPO="$(cd "${1:-.}" && pwd)"
NAV=.venv/bin/nav
run() { echo; echo "\$ nav $*"; "$NAV" -C "$REPO" "$@" || true; }
run index --embed   # embed now, so the search shown below is the one users get (vectors included)
run doctor
if [ "$REPO" = "$(pwd)" ]; then
    run def Navigator
    run refs Store.replace_file
    run callers index_root
    run symbols 'index root' -n 5
    run outline navigator/walk.py
    run search "where is a file's rows replaced in the database" -k 5
    run search --code "where is a file's rows replaced in the database" -k 5
    run find "who calls \`index_root\`" -n 8
else
    run map --tokens 600
fi
run map --tokens 300
run status
run daemon status
"$NAV" -C "$REPO" daemon stop
