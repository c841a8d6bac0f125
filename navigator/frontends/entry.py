"""The ``nav`` console script: a fast path for the hottest queries, else the click CLI.

``nav def|refs|callers|callees|impl NAME [--json]`` (optionally after ``-C ROOT``) is what
agents run most, and against a warm daemon most of its time is Python start-up and
imports; click alone is ~50 ms of it. These exact shapes are answered here through the
daemon client, with the same output, messages and exit codes as the click commands
(both print through :mod:`navigator.frontends.display`). Anything else — another option, help,
``--no-daemon`` or ``NAV_NO_DAEMON=1`` — goes to the click CLI unchanged.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# command -> (Navigator verb, what the hits are called, takes deadline/limit keywords)
_HOT: dict[str, tuple[str, str, bool]] = {
    "def": ("definitions", "definitions", False),
    "refs": ("references", "refs", True),
    "callers": ("callers", "callers", True),
    "callees": ("callees", "callees", True),
    "impl": ("implementations", "impl", True),
}
_DEADLINE_S = 30.0  # the click commands' default --deadline


def _parse(argv: list[str]) -> tuple[str | None, str, str, bool] | None:
    """(root, command, name, as_json) for a hot shape, else None."""
    args = list(argv)
    root: str | None = None
    if args[:1] in (["-C"], ["--root"]) and len(args) >= 2:
        root, args = args[1], args[2:]
    elif args and args[0].startswith("--root="):
        root, args = args[0].split("=", 1)[1], args[1:]
    if not args or args[0] not in _HOT:
        return None
    command, rest = args[0], args[1:]
    as_json = "--json" in rest
    rest = [a for a in rest if a != "--json"]
    if len(rest) != 1 or rest[0].startswith("-") or not rest[0].strip():
        return None  # options, help, no name or several: the click CLI says what is wrong
    return root, command, rest[0], as_json


def _fast(root_arg: str | None, command: str, name: str, as_json: bool) -> int:
    from navigator.frontends import display
    from navigator.frontends.client import DaemonClient
    from navigator.paths import find_root
    from navigator.results import to_json
    from storage.errors import NavError

    out, err = sys.stdout, sys.stderr
    color_out, color_err = out.isatty(), err.isatty()
    verb, what, bounded = _HOT[command]
    root = Path(root_arg) if root_arg else find_root(Path.cwd())
    client = None
    try:
        client = DaemonClient(root)
        method = getattr(client, verb)
        resp = method(name, deadline_s=_DEADLINE_S, limit=None) if bounded else method(name)
    except NavError as exc:
        print(display.style(f"nav: {exc}", fg="red", color=color_err), file=err)
        return exc.exit_code
    finally:
        if client is not None:
            client.close()
    if as_json:
        print(to_json(resp), file=out)
        return 0
    if command == "def":
        for sym in resp.items:
            print(display.symbol_line(sym, color=color_out), file=out)
        if len(resp.items) > 1:
            print(
                display.style(
                    f"({len(resp.items)} definitions of `{name}`)", fg="bright_black", color=color_err
                ),
                file=err,
            )
    else:
        if len(resp.items) > display.SHRINK_ABOVE:
            for line in display.counts_per_file(resp.items, what, color=color_out):
                print(line, file=out)
        else:
            for hit in resp.items:
                print(display.hit_line(hit, color=color_out), file=out)
        if not resp.items:
            print(display.style(f"no {what} for `{name}`", fg="yellow", color=color_err), file=err)
    for line in display.incomplete_lines(resp, color=color_err):
        print(line, file=err)
    return 0


def run() -> None:  # pragma: no cover - console-script entry; tested through subprocesses
    parsed = None
    if os.environ.get("NAV_NO_DAEMON") not in ("1", "true", "yes"):
        parsed = _parse(sys.argv[1:])
    if parsed is not None:
        from navigator.paths import daemon_possible, find_root

        if not daemon_possible(Path(parsed[0]) if parsed[0] else find_root(Path.cwd())):
            parsed = None  # no daemon can live in a read-only .nav: the click CLI runs in-process
    if parsed is None:
        from navigator.frontends.cli import run as click_run

        click_run()
        return
    try:
        code = _fast(*parsed)
    except KeyboardInterrupt:
        print("nav: interrupted", file=sys.stderr)
        code = 130
    except BrokenPipeError:
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        code = 1
    os._exit(code)  # nothing of ours runs in this process: skip the interpreter's teardown


if __name__ == "__main__":  # pragma: no cover
    run()
