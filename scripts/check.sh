#!/usr/bin/env bash
# The whole toolchain in one command: lint, format check, types (strict on navigator/ and storage/), tests.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m pip install -q -e '.[dev]' --config-settings editable_mode=compat >/dev/null  # ruff, mypy (pinned)
.venv/bin/ruff check navigator storage lsp semantic tests bench
.venv/bin/ruff format --check lsp/answers.py lsp/registry.py lsp/requests.py lsp/servers navigator/calls.py navigator/doctor.py navigator/exact_possible.py navigator/exact_targets.py navigator/find.py navigator/frontends/agent_setup.py navigator/frontends/cli.py navigator/frontends/cli_base.py navigator/frontends/cli_index.py navigator/frontends/cli_query.py navigator/frontends/cli_service.py navigator/frontends/client.py navigator/frontends/daemon.py navigator/frontends/daemon_activity.py navigator/frontends/daemon_embed.py navigator/frontends/daemon_identity.py navigator/frontends/editor.py navigator/frontends/editor_answers.py navigator/frontends/editor_engine.py navigator/frontends/editor_server.py navigator/frontends/jsonc_text.py navigator/grep.py navigator/grep_index.py navigator/grep_plan.py navigator/index_handle.py navigator/pipeline.py navigator/router.py navigator/search.py navigator/show.py navigator/symbol_table.py semantic/analysis.py semantic/chunking.py semantic/definitions.py semantic/embed.py semantic/lexical.py semantic/onnx_int8.py semantic/parse.py semantic/path_leg.py semantic/ranking.py semantic/syntax.py storage
.venv/bin/mypy
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
