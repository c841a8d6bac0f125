#!/usr/bin/env bash
# The whole toolchain in one command: lint, format check, types (strict on navigator/ and storage/), tests.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m pip install -q -e '.[dev]' --config-settings editable_mode=compat >/dev/null  # ruff, mypy (pinned)
.venv/bin/ruff check navigator storage lsp semantic tests bench
.venv/bin/ruff format --check navigator/frontends/client.py navigator/frontends/daemon.py navigator/router.py navigator/find.py navigator/grep.py navigator/grep_index.py navigator/grep_plan.py navigator/calls.py navigator/index_handle.py navigator/symbol_table.py navigator/exact_targets.py navigator/exact_possible.py navigator/show.py navigator/doctor.py semantic/syntax.py semantic/definitions.py semantic/chunking.py semantic/parse.py semantic/embed.py semantic/onnx_int8.py lsp/registry.py lsp/servers navigator/frontends/jsonc_text.py navigator/frontends/agent_setup.py storage
.venv/bin/mypy
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
