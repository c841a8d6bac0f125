"""The ``nav`` command line: a thin shell over :class:`navigator.Navigator`.

Library errors become messages and exit codes here, at the edge. ``--json`` on
every command prints the API's own result types serialized.

Exit codes: 0 ok; 1 other nav error; 2 bad usage; 3 not indexed; 4 unknown symbol
or file; 5 index database error; 6 language server error; 7 deadline; 8 model error.

This module is the entry point (``python -m navigator.frontends.cli``, and the console script's
fallback in :mod:`navigator.frontends.entry`); the group and its context live in
:mod:`~navigator.frontends.cli_base`, the commands in :mod:`~navigator.frontends.cli_index`
(building, publishing), :mod:`~navigator.frontends.cli_query` (the query verbs) and
:mod:`~navigator.frontends.cli_service` (servers, daemon, setup, doctor), imported here so that
each registers its commands on the one group.
"""

from __future__ import annotations

import os
import sys

from navigator.frontends import cli_index, cli_query, cli_service
from navigator.frontends.cli_base import Ctx, main

__all__ = ["main", "run"]

_COMMANDS = (cli_index, cli_query, cli_service)  # imported for their commands on `main`


def run() -> None:  # pragma: no cover - console-script entry
    Ctx.process_entry = True
    try:
        main(prog_name="nav")
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except SystemExit as done:
        if not (Ctx.only_talked_to_daemon or Ctx.skip_teardown):
            raise
        # Nothing of ours runs in this process (no index, no server): skip the interpreter's
        # teardown, ~15 ms of a ~110 ms `nav refs`. Output is flushed first.
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        if done.code is not None and not isinstance(done.code, int):
            print(done.code, file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
