"""The ``nav`` console script: a fast path for the hottest queries, else the click CLI.

``nav def|refs|callers|callees|impl|hover|show|symbols|outline NAME [--json]`` and
``nav search|find TEXT... [--json]`` (optionally after ``-C ROOT``), with no other option, are what
agents run most, and against a warm daemon most of its time is Python start-up and
imports (click alone was ~50 ms). These exact shapes are answered here, with the same output,
messages and exit codes as the click commands (both print through
:mod:`navigator.frontends.display`). A running daemon is asked over ``_socket`` with
:mod:`navigator.frontends.fastjson` and its reply printed field by field: no ``typing``,
``dataclasses``, ``pathlib`` or ``json`` is imported (``bench/bench_fastpath.py`` times it
against ``rg -w``). Anything unusual goes to :class:`~navigator.frontends.client.DaemonClient`,
which starts a daemon, retries, and names what is wrong. Anything else — another option, help,
``--no-daemon`` or ``NAV_NO_DAEMON=1`` — goes to the click CLI unchanged.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: this module's imports are the fast path's start-up time
if TYPE_CHECKING:
    from typing import Any, TextIO

_DEADLINE_S = 30.0  # the click commands' default --deadline
_FIND_DEADLINE_S = 10.0  # `nav find`'s default --deadline

# command -> (Navigator verb, what the hits are called, the click command's default options,
# whether the words after the command are one text: `nav search where do we retry`)
_HOT: dict[str, tuple[str, str, dict[str, object], bool]] = {
    "def": ("definitions", "definitions", {}, False),
    "refs": ("references", "refs", {"deadline_s": _DEADLINE_S, "limit": None}, False),
    "callers": ("callers", "callers", {"deadline_s": _DEADLINE_S, "limit": None}, False),
    "callees": ("callees", "callees", {"deadline_s": _DEADLINE_S, "limit": None}, False),
    "impl": ("implementations", "impl", {"deadline_s": _DEADLINE_S, "limit": None}, False),
    "hover": ("hover", "hover", {"deadline_s": _DEADLINE_S}, False),
    "show": ("show", "source", {"max_lines": 200, "limit": 5}, False),
    "symbols": ("symbols", "symbols", {"limit": 30, "kinds": None}, False),
    "outline": ("outline", "symbols", {}, False),
    "search": ("search", "hits", {"k": 10}, True),
    "find": ("query", "answers", {"limit": 20, "deadline_s": _FIND_DEADLINE_S}, True),
}

# Copies of the engine's constants and result fields, so the lean path imports none of it;
# tests/test_entry_fast.py holds each one equal to its original.
_NAV_DIR = ".nav"  # navigator.paths.NAV_DIR
_MAX_SOCKET_PATH = 100  # navigator.paths._MAX_SOCKET_PATH
_REQUEST_TIMEOUT_S = 300.0  # navigator.frontends.client.REQUEST_TIMEOUT_S
_MAX_REPLY_BYTES = 256 * 1024 * 1024  # navigator.frontends.wire.MAX_REPLY_BYTES
_OTHER_ROOT = -32001  # navigator.frontends.daemon.OTHER_ROOT
_RESPONSE = ("items", "complete", "reason", "source", "elapsed_ms", "notes")
_ITEMS = {
    "navigator.results:Symbol": (
        "name", "qualified_name", "kind", "path", "line", "col", "end_line", "end_col",
        "signature", "language", "container", "docstring",
    ),
    "navigator.results:Hit": (
        "path", "line", "col", "end_line", "end_col", "code", "symbol", "is_definition",
        "provenance", "kind",
    ),
    "navigator.results:HoverInfo": ("path", "line", "col", "symbol", "text", "provenance"),
    "navigator.results:Source": (
        "path", "start_line", "end_line", "text", "symbol", "kind", "signature", "cut",
    ),
    "navigator.results:OutlineEntry": ("symbol", "depth"),
    "navigator.results:SearchHit": (
        "path", "start_line", "end_line", "symbol", "signature", "snippet", "score", "language", "ranks",
        "snippet_line",
    ),
    "navigator.results:Found": (
        "path", "line", "col", "end_line", "kind", "code", "symbol", "score", "ranks", "signature",
    ),
}  # fmt: skip


def _take_root(argv: list[str]) -> tuple[str | None, list[str]]:
    """A leading ``-C ROOT`` / ``--root ROOT`` / ``--root=ROOT``, and the arguments after it."""
    args = list(argv)
    if args[:1] in (["-C"], ["--root"]) and len(args) >= 2:
        return args[1], args[2:]
    if args and args[0].startswith("--root="):
        return args[0].split("=", 1)[1], args[1:]
    return None, args


def _parse(argv: list[str]) -> tuple[str | None, str, str, bool] | None:
    """(root, command, name or text, as_json) for a hot shape, else None."""
    root, args = _take_root(argv)
    if not args or args[0] not in _HOT:
        return None
    command, rest = args[0], args[1:]
    as_json = "--json" in rest
    rest = [a for a in rest if a != "--json"]
    if _HOT[command][3] and rest and not any(a.startswith("-") for a in rest):
        text = " ".join(rest)  # click's nargs=-1, joined as its command joins them
        return (root, command, text, as_json) if text.strip() else None
    if len(rest) != 1 or rest[0].startswith("-") or not rest[0].strip():
        return None  # options, help, no name or several: the click CLI says what is wrong
    return root, command, rest[0], as_json


def find_root(start: str) -> str:
    """:func:`navigator.paths.find_root` on strings: the nearest folder at or above ``start``
    holding ``.git`` or this user's own ``.nav`` folder, else ``start`` (resolved)."""
    import stat

    start = os.path.realpath(start)
    cand = start
    uid = os.getuid()
    while True:
        try:
            st = os.lstat(os.path.join(cand, _NAV_DIR))
            own_nav = stat.S_ISDIR(st.st_mode) and st.st_uid == uid
        except OSError:
            own_nav = False
        if own_nav or os.path.exists(os.path.join(cand, ".git")):
            return cand
        parent = os.path.dirname(cand)
        if parent == cand:
            return start
        cand = parent


def daemon_possible(root: str) -> bool:
    """:func:`navigator.paths.daemon_possible` on strings."""
    folder = os.path.join(root, _NAV_DIR)
    try:
        probe = folder if os.path.isdir(folder) else root
        if not os.access(probe, os.W_OK):
            return False
        return not os.statvfs(probe).f_flag & os.ST_RDONLY
    except OSError:
        return False


def _ask(root: str, verb: str, params: dict[str, object]) -> bytes | None:
    """One request to the root's running daemon over ``_socket`` and ``_json`` alone: the reply
    line, or None when :class:`~navigator.frontends.client.DaemonClient` must take over (no
    daemon yet or a stale socket: it starts one; a deep root whose socket lives elsewhere;
    another user's socket: it refuses, saying why; the daemon died mid-request: it restarts it
    and asks again; the daemon serves another root, e.g. this folder's old path: it stops that
    one and starts this root's own)."""
    import _socket

    from navigator.frontends import fastjson

    sock_path = os.path.join(root, _NAV_DIR, "daemon.sock")
    if len(os.fsencode(sock_path)) > _MAX_SOCKET_PATH:
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        try:
            sock.connect(sock_path)
        except OSError:
            return None
        option = getattr(_socket, "SO_PEERCRED", None)
        if option is not None:  # struct ucred: pid, uid, gid as native ints
            creds = sock.getsockopt(_socket.SOL_SOCKET, option, 12)
            if int.from_bytes(creds[4:8], sys.byteorder, signed=True) != os.getuid():
                return None
        sock.settimeout(_REQUEST_TIMEOUT_S)
        st = os.stat(root)
        claim = {"path": root, "dev": st.st_dev, "ino": st.st_ino}  # client.root_claim
        msg = {"jsonrpc": "2.0", "id": 1, "method": verb, "params": params, "nav_root": claim}
        try:
            sock.sendall(fastjson.dumps(msg, ensure_ascii=True, allow_nan=False).encode("ascii") + b"\n")
        except (TypeError, ValueError):
            return None  # e.g. a name JSON cannot carry: the client says so
        chunks: list[bytes] = []
        size = 0
        import time

        deadline = time.monotonic() + _REQUEST_TIMEOUT_S  # in all, not per read
        while True:
            try:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                sock.settimeout(remaining)
                chunk = sock.recv(1 << 20)
            except TimeoutError:
                from navigator.errors import DeadlineError

                raise DeadlineError(
                    f"nav's daemon did not answer `{verb}` within {_REQUEST_TIMEOUT_S:.0f} s"
                ) from None
            if not chunk:
                return None
            chunks.append(chunk)
            size += len(chunk)
            if b"\n" in chunk or size > _MAX_REPLY_BYTES:
                break
        data = b"".join(chunks)
        end = data.find(b"\n")
        line = data[: end + 1] if end >= 0 else data
        return None if _other_root(line) else line
    except (BrokenPipeError, ConnectionResetError, FileNotFoundError):
        return None
    finally:
        sock.close()


def _other_root(line: bytes) -> bool:
    """Whether the reply is the daemon's "I serve another root" (client.other_root)."""
    if b'"error"' not in line[:200]:
        return False
    from navigator.frontends import fastjson

    try:
        reply = fastjson.loads(line)
    except (ValueError, RecursionError):
        return False
    error = reply.get("error") if isinstance(reply, dict) else None
    return isinstance(error, dict) and error.get("code") == _OTHER_ROOT


def response_envelope(
    line: bytes, type_tag: str = "navigator.results:Response"
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(envelope, value) of a daemon reply that carries a ``type_tag`` (a ``Response``), else None
    (an error reply, or one that is not JSON of that shape). Shared by the fast paths that read replies."""
    from navigator.frontends import fastjson

    try:
        reply = fastjson.loads(line)
    except (ValueError, RecursionError):
        return None
    env = reply.get("result") if isinstance(reply, dict) and "error" not in reply else None
    if not isinstance(env, dict) or env.get("type") != type_tag:
        return None
    value = env.get("value")
    return (env, value) if isinstance(value, dict) else None


class _Row:
    """A result object read straight from the reply (the fields of a ``navigator.results`` type)."""

    def __init__(self, fields: dict[str, Any]) -> None:
        self.__dict__.update(fields)


def _view(line: bytes) -> tuple[_Row, Any] | None:
    """The reply as (response, its JSON value) when it is a well-formed answer of this nav's
    shape, else None (then :func:`navigator.frontends.client.read_reply` reads it, raising
    the daemon's error or saying what is wrong with the reply)."""
    if not line.endswith(b"\n") or len(line) > _MAX_REPLY_BYTES:
        return None
    got = response_envelope(line)
    if got is None:
        return None
    env, value = got
    if tuple(value) != _RESPONSE:
        return None
    items, notes = value["items"], value["notes"]
    if not isinstance(items, list) or not isinstance(notes, list) or not isinstance(value["complete"], bool):
        return None
    fields = _ITEMS.get(env.get("item") or "")
    rows = []
    for item in items:
        if fields is None or not isinstance(item, dict) or tuple(item) != fields:
            return None
        row = dict(item)
        if "provenance" in row:
            if not isinstance(row["provenance"], list):
                return None
            row["provenance"] = tuple(row["provenance"])
        if "ranks" in row and not isinstance(row["ranks"], dict):
            return None
        if isinstance(row.get("symbol"), dict):  # an OutlineEntry's Symbol
            if tuple(row["symbol"]) != _ITEMS["navigator.results:Symbol"]:
                return None
            row["symbol"] = _Row(row["symbol"])
        rows.append(_Row(row))
    resp = _Row({**value, "items": tuple(rows), "notes": tuple(notes)})
    return resp, value


def _fast(root_arg: str | None, command: str, name: str, as_json: bool) -> int:
    out, err = sys.stdout, sys.stderr
    color_out, color_err = out.isatty(), err.isatty()
    verb, what, defaults, _ = _HOT[command]
    params: dict[str, object] = {**defaults, "__args__": [name]}
    resp: Any = None
    value: Any = None
    try:
        root = find_root(os.getcwd()) if not root_arg else _resolved_dir(root_arg)
        line = _ask(root, verb, params) if root is not None else None
        viewed = _view(line) if line is not None else None
        if viewed is not None:
            resp, value = viewed
        elif line is not None:
            from navigator.frontends.client import read_reply

            resp = read_reply(verb, line)
        else:
            resp = _client_call(root_arg, root, verb, name, defaults)
    except Exception as exc:
        from navigator.errors import NavError

        if not isinstance(exc, NavError):
            raise
        from navigator.frontends import display

        print(display.style(f"nav: {exc}", fg="red", color=color_err), file=err)
        return exc.exit_code
    return _print(resp, value, command, name, what, as_json, out, err, color_out, color_err)


_STATUS = (
    "root", "index_path", "indexed", "files", "symbols", "chunks", "refs", "languages",
    "last_run_complete", "last_indexed_at", "stale_files", "notes", "history_commits", "history_head",
)  # fmt: skip  # navigator.results.Status's fields
_ENV_STORE = "NAV_STORE"  # navigator.config.ENV_STORE


def _parse_status(argv: list[str]) -> tuple[str | None, bool] | None:
    """(root, as_json) for ``nav [-C ROOT] status [--json]``, else None."""
    root, args = _take_root(argv)
    if args == ["status"]:
        return root, False
    return (root, True) if args == ["status", "--json"] else None


def _store_configured(root: str) -> bool:
    """Whether a team store may be configured (``NAV_STORE``, ``.nav.toml``, ``[tool.nav]``):
    the click command prints its line, so it answers (reading the configuration takes tomllib)."""
    if (os.environ.get(_ENV_STORE) or "").strip() or os.path.lexists(os.path.join(root, ".nav.toml")):
        return True
    try:
        with open(os.path.join(root, "pyproject.toml"), "rb") as fh:
            return b"tool.nav" in fh.read()
    except OSError:
        return False


def _fast_status(root_arg: str | None, as_json: bool) -> int | None:
    """``nav status`` from a running daemon, printed as the click command prints it; None when
    the click command must answer (no daemon, a store configured, an unusual reply)."""
    root = find_root(os.getcwd()) if not root_arg else _resolved_dir(root_arg)
    if root is None or _store_configured(root):
        return None
    line = _ask(root, "status", {"__args__": []})
    if line is None or not line.endswith(b"\n"):
        return None
    got = _status_value(line)
    if got is None:
        return None
    out = sys.stdout
    if as_json:
        from navigator.frontends import fastjson

        print(fastjson.dumps(got, ensure_ascii=False, allow_nan=True), file=out)
        return 0
    from navigator.frontends import display

    print(f"root:     {got['root']}", file=out)
    print(f"index:    {got['index_path']}", file=out)
    if not got["indexed"]:
        print("state:    not indexed (run `nav index`)", file=out)
        return 0
    import time

    at = got["last_indexed_at"]
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at)) if at else "?"
    print(
        f"indexed:  {got['files']} files, {got['symbols']} symbols, {got['chunks']} chunks, "
        f"{got['refs']} references",
        file=out,
    )
    langs = ", ".join(f"{k} {v}" for k, v in sorted(got["languages"].items(), key=lambda kv: -kv[1]))
    print(f"languages: {langs}", file=out)
    print(f"last run: {'complete' if got['last_run_complete'] else 'INCOMPLETE'} at {when}", file=out)
    print(f"stale:    {got['stale_files']} files changed since (indexed again on the next query)", file=out)
    print(f"history:  {display.history_line(got['history_commits'], got['history_head'])}", file=out)
    color = out.isatty()
    for note in got["notes"]:
        print(display.style(f"note: {note}", fg="yellow", color=color), file=out)
    return 0


def _status_value(line: bytes) -> dict[str, Any] | None:
    """The ``Status`` a daemon replied with, when it has this nav's fields and types."""
    got = response_envelope(line, "navigator.results:Status")
    if got is None or tuple(got[1]) != _STATUS:
        return None
    value = got[1]
    if not isinstance(value["languages"], dict) or not isinstance(value["notes"], list):
        return None
    at = value["last_indexed_at"]
    if at is not None and not isinstance(at, (int, float)):
        return None
    return value


def _resolved_dir(root_arg: str) -> str | None:
    """``-C ROOT`` resolved when it is a folder; None sends it to the client, which names
    what is wrong with it."""
    try:
        root = os.path.realpath(root_arg)
        return root if os.path.isdir(root) else None
    except (OSError, ValueError):
        return None


def _client_call(
    root_arg: str | None, root: str | None, verb: str, name: str, options: dict[str, object]
) -> Any:
    """The whole client: starts a daemon when none runs, retries once when it died, and
    says clearly what is wrong otherwise."""
    from navigator.frontends.client import DaemonClient

    client = None
    try:
        client = DaemonClient(root_arg or root or ".")
        return getattr(client, verb)(name, **options)
    finally:
        if client is not None:
            client.close()


def _print(
    resp: Any,
    value: Any,
    command: str,
    name: str,
    what: str,
    as_json: bool,
    out: TextIO,
    err: TextIO,
    color_out: bool,
    color_err: bool,
) -> int:
    if as_json:
        if value is None:
            from navigator.results import to_json

            print(to_json(resp), file=out)
        else:  # what to_json prints: the same fields in the same order, json.dumps's text
            from navigator.frontends import fastjson

            print(fastjson.dumps(value, ensure_ascii=False, allow_nan=True), file=out)
        return 0
    from navigator.frontends import display

    if command not in ("def", "refs", "callers", "callees", "impl"):
        return _print_other(resp, command, name, out, err, color_out, color_err)
    if command == "def":
        for sym in resp.items:
            print(display.symbol_line(sym, color=color_out), file=out)
        if len(resp.items) > 1:
            from navigator.errors import shorten  # only on this rarer path: the warm path stays light

            print(
                display.style(
                    f"({len(resp.items)} definitions of `{shorten(name)}`)",
                    fg="bright_black",
                    color=color_err,
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
            from navigator.errors import shorten  # only on this rarer path: the warm path stays light

            print(display.style(f"no {what} for `{shorten(name)}`", fg="yellow", color=color_err), file=err)
    for line in display.incomplete_lines(resp, color=color_err):
        print(line, file=err)
    return 0


def _grep_args(argv: list[str]) -> tuple[str | None, bool, list[str]] | None:
    """(root, no_daemon, the grep arguments) for ``nav [-C ROOT] [--no-daemon] grep ...``."""
    root: str | None = None
    no_daemon = False
    args = list(argv)
    while args:
        if args[0] in ("-C", "--root") and len(args) >= 2:
            root, args = args[1], args[2:]
        elif args[0].startswith("--root="):
            root, args = args[0].split("=", 1)[1], args[1:]
        elif args[0] == "--no-daemon":
            no_daemon, args = True, args[1:]
        else:
            break
    return (root, no_daemon, args[1:]) if args[:1] == ["grep"] else None


def _print_other(
    resp: Any, command: str, text: str, out: TextIO, err: TextIO, color_out: bool, color_err: bool
) -> int:
    """What the click commands hover, show, symbols, outline, search and find print, through the
    same :mod:`navigator.frontends.display` functions."""
    from navigator.frontends import display

    lines: Any
    if command == "symbols" and not resp.items:
        from navigator.errors import shorten

        print(display.style(f"no symbols match `{shorten(text)}`", fg="yellow", color=color_err), file=err)
        return 1
    if command == "hover":
        lines = (line for item in resp.items for line in display.hover_lines(item, color=color_out))
    elif command == "show":
        lines = (display.source_block(item, color=color_out) for item in resp.items)
    elif command == "symbols":
        lines = (display.symbol_line(sym, color=color_out) for sym in resp.items)
    elif command == "outline":
        lines = (display.symbol_line(e.symbol, indent=e.depth, color=color_out) for e in resp.items)
    elif command == "search":
        lines = (line for hit in resp.items for line in display.search_lines(hit, color=color_out))
    else:  # find
        lines = (line for f in resp.items for line in display.found_lines(f, color=color_out))
    for line in lines:
        print(line, file=out)
    tail = display.find_tail_lines if command == "find" else display.incomplete_lines
    for line in tail(resp, color=color_err):
        print(line, file=err)
    return 0


def run() -> None:  # pragma: no cover - console-script entry; tested through subprocesses
    grep = _grep_args(sys.argv[1:])
    if grep is not None:  # ripgrep's options, read by hand: no click, no engine unless in-process
        from navigator.frontends.grep_cli import main as grep_main

        try:
            code = grep_main(grep[2], root_arg=grep[0], no_daemon=grep[1])
            sys.stdout.flush()
            sys.stderr.flush()
        except KeyboardInterrupt:
            code = 130
        except BrokenPipeError:
            code = 1
        os._exit(code)
    parsed = None
    if os.environ.get("NAV_NO_DAEMON") not in ("1", "true", "yes"):
        parsed = _parse(sys.argv[1:])
        status = _parse_status(sys.argv[1:]) if parsed is None else None
        if status is not None and daemon_possible(status[0] or find_root(os.getcwd())):
            try:
                done = _fast_status(*status)
            except (OSError, KeyboardInterrupt):
                done = None  # the click command answers, and says what is wrong
            if done is not None:
                sys.stdout.flush()
                os._exit(done)
    if parsed is not None and not daemon_possible(parsed[0] or find_root(os.getcwd())):
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
