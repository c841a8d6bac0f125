#!/usr/bin/env bash
# The whole toolchain in one command: lint, format check, types (strict on navigator/ and storage/), tests.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m pip install -q -e '.[dev]' --config-settings editable_mode=compat >/dev/null  # ruff, mypy (pinned)
.venv/bin/ruff check navigator storage lsp semantic tests bench
.venv/bin/ruff format --check navigator storage lsp semantic
.venv/bin/mypy
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
