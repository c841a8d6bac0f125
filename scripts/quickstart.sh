#!/usr/bin/env bash
# Install everything, then index a real repository (default: nav's own source) and show answers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
REPO="${1:-.}"
NAV=.venv/bin/nav
echo; echo "\$ nav index $REPO";               "$NAV" -C "$REPO" index
echo; echo "\$ nav def Navigator";              "$NAV" -C "$REPO" def Navigator || true
echo; echo "\$ nav symbols 'index root'";       "$NAV" -C "$REPO" symbols 'index root' -n 5 || true
echo; echo "\$ nav outline navigator/walk.py";  "$NAV" -C "$REPO" outline navigator/walk.py || true
echo; echo "\$ nav status";                     "$NAV" -C "$REPO" status
