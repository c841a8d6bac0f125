"""``nav grep PATTERN [PATH...]``: ripgrep's options and output, answered from nav's grep index.

On the console script's fast path (:mod:`navigator.frontends.entry` sends ``grep`` here before
click is imported): the options are read by hand, a running daemon is asked over its socket
with :mod:`navigator.frontends.fastjson`, and its reply printed field by field. With no daemon
running (or ``--no-daemon``), the answer is made in this process by :mod:`navigator.grep`
after a stat walk of the tree; ``nav grep`` does not start a daemon (its first full index would
cost more than one grep).

Output: ``path:line:col:text`` per matching line (paths relative to the root, columns in code
points), ``path-line-text`` for context lines, ``--`` between groups; ``-l`` paths, ``-c``
``path:count``; ``--json`` one nav Response object (``navigator.results:GrepHit`` items).
Exit codes as ripgrep's: 0 when something matched, 1 when nothing did, 2 on a usage error.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: this module is on the console script's fast path
if TYPE_CHECKING:
    from typing import Any

USAGE = """usage: nav grep [OPTIONS] PATTERN [PATH...]

Search every text file ripgrep would search (same ignore rules), from nav's trigram index;
answers equal `rg`'s on the same tree. Paths print relative to the root.

  -F, --fixed-strings      PATTERN is a literal, not a regular expression
  -i, --ignore-case        case-insensitive
  -w, --word-regexp        whole words only
  -e, --regexp PATTERN     the pattern (for one that starts with -)
  -l, --files-with-matches print only the paths of files that match
  -c, --count              print path:count of matching lines per file
  -g, --glob GLOB          include (or, with !, exclude) files by glob; repeatable
  -t, --type TYPE          only files of ripgrep's TYPE (py, js, rust...); repeatable
  -A/-B/-C, --after-context/--before-context/--context N   context lines
  -m, --max-count N        at most N matching lines per file
  -n, --line-number        (on by default)
  --limit N                at most N matching lines in all (default 1000; 0: no limit)
  --deadline S             stop after S seconds (default 30), saying so
  --json                   one JSON object: nav's Response of GrepHit items
  --no-daemon              answer in this process even when the root's daemon runs
"""

_VALUE = {
    "-e": "pattern", "--regexp": "pattern", "-g": "globs", "--glob": "globs", "-t": "types", "--type": "types",
    "-A": "after", "--after-context": "after", "-B": "before", "--before-context": "before",
    "-C": "context", "--context": "context", "-m": "max_count", "--max-count": "max_count",
    "--limit": "limit", "--deadline": "deadline_s",
}  # fmt: skip
_FLAG = {
    "-F": "fixed", "--fixed-strings": "fixed", "-i": "ignore_case", "--ignore-case": "ignore_case",
    "-w": "word", "--word-regexp": "word", "-l": "files_only", "--files-with-matches": "files_only",
    "-c": "count", "--count": "count", "-n": None, "--line-number": None, "--json": "json",
    "--no-daemon": "no_daemon", "-h": "help", "--help": "help",
}  # fmt: skip
_SHORT_VALUE = frozenset("egtABCm")
_SHORT_FLAG = frozenset("Fiwlcnh")


class ArgError(Exception):
    pass


def parse(argv: list[str]) -> dict[str, Any]:
    """The options as a dict (``pattern``, ``paths`` and the Navigator.grep keywords)."""
    out: dict[str, Any] = {"globs": [], "types": [], "positional": []}
    i = 0
    only_positional = False
    while i < len(argv):
        a = argv[i]
        i += 1
        if only_positional or a == "-" or not a.startswith("-"):
            out["positional"].append(a)
            continue
        if a == "--":
            only_positional = True
            continue
        name, eq, inline = a.partition("=") if a.startswith("--") else (a, "", "")
        if name in _FLAG and not eq:
            key = _FLAG[name]
            if key is not None:
                out[key] = True
            continue
        if name in _VALUE:
            if eq:
                value = inline
            elif i < len(argv):
                value, i = argv[i], i + 1
            else:
                raise ArgError(f"option {name} needs a value")
            _set(out, _VALUE[name], value, name)
            continue
        if not a.startswith("--") and len(a) > 2:  # bundled short options: -iw, -A3, -gGLOB
            j = 1
            while j < len(a):
                ch = a[j]
                if ch in _SHORT_FLAG:
                    key = _FLAG["-" + ch]
                    if key is not None:
                        out[key] = True
                    j += 1
                    continue
                if ch in _SHORT_VALUE:
                    rest = a[j + 1 :]
                    if not rest:
                        if i >= len(argv):
                            raise ArgError(f"option -{ch} needs a value")
                        rest, i = argv[i], i + 1
                    _set(out, _VALUE["-" + ch], rest, "-" + ch)
                    break
                raise ArgError(f"unknown option -{ch} in {a}")
            continue
        raise ArgError(f"unknown option {a}")
    pos = out.pop("positional")
    if "pattern" not in out:
        if not pos:
            raise ArgError("no PATTERN given")
        out["pattern"] = pos.pop(0)
    out["paths"] = pos
    return out


def _set(out: dict[str, Any], key: str, value: str, name: str) -> None:
    if key in ("globs", "types"):
        out[key].append(value)
        return
    if key == "pattern":
        out[key] = value
        return
    try:
        number: float = float(value) if key == "deadline_s" else int(value)
    except ValueError:
        raise ArgError(f"option {name} takes a number, got {value[:60]!r}") from None
    if number < 0:
        raise ArgError(f"option {name} takes a number of at least 0, got {value[:60]!r}")
    if key == "context":
        out["before"] = out["after"] = number
    else:
        out[key] = number


def _params(opts: dict[str, Any], root: str) -> dict[str, Any]:
    """Navigator.grep's keywords; paths made absolute (the daemon confines them to the root)."""
    cwd = os.getcwd()
    params: dict[str, Any] = {"pattern": opts["pattern"]}
    for key in ("fixed", "ignore_case", "word", "files_only", "count"):
        if opts.get(key):
            params[key] = True
    if opts["globs"]:
        params["globs"] = opts["globs"]
    if opts["types"]:
        params["types"] = opts["types"]
    if opts["paths"]:
        params["paths"] = [os.path.normpath(os.path.join(cwd, p)) for p in opts["paths"]]
    for key in ("before", "after", "max_count", "deadline_s"):
        if key in opts:
            params[key] = opts[key]
    limit = opts.get("limit", 1000)
    params["limit"] = None if limit == 0 else limit
    return params


def main(argv: list[str], *, root_arg: str | None = None, no_daemon: bool = False) -> int:
    out, err = sys.stdout, sys.stderr
    try:
        opts = parse(argv)
    except ArgError as exc:
        print(f"nav grep: {exc}\n\n{USAGE}", file=err, end="")
        return 2
    if opts.get("help"):
        print(USAGE, file=out, end="")
        return 0
    from navigator.frontends import entry

    color = out.isatty()
    try:
        root = entry._resolved_dir(root_arg) if root_arg else entry.find_root(os.getcwd())
        if root is None:
            from navigator.errors import UsageError

            raise UsageError(f"root `{root_arg}` is not a folder; pass the repository's top folder with -C")
        params = _params(opts, root)
        no_daemon = (
            no_daemon or opts.get("no_daemon") or os.environ.get("NAV_NO_DAEMON") in ("1", "true", "yes")
        )
        line = None if no_daemon else entry._ask(root, "grep", params)
        value: Any = None
        if line is not None:
            viewed = _view(line)
            if viewed is None:
                from navigator.frontends.client import read_reply

                resp = read_reply("grep", line)  # raises the daemon's error, or says what is wrong
                value = _to_value(resp)
            else:
                value = viewed
        else:
            value = _to_value(_in_process(root, params))
    except Exception as exc:
        from navigator.errors import NavError

        if not isinstance(exc, NavError):
            raise
        from navigator.frontends import display

        print(display.style(f"nav: {exc}", fg="red", color=err.isatty()), file=err)
        return exc.exit_code
    return _print(value, opts, out, err, color)


def _in_process(root: str, params: dict[str, Any]) -> Any:
    from pathlib import Path

    from navigator import grep as engine
    from navigator.confine import confine

    root_path = Path(root)
    paths = tuple(r for r in (confine(root_path, p) for p in params.pop("paths", ())) if r not in ("", "."))
    params["globs"] = tuple(params.get("globs", ()))
    params["types"] = tuple(params.get("types", ()))
    options = engine.GrepOptions(paths=paths, **params)
    index = engine.GrepIndex(root_path, root_path / ".nav")
    try:
        return engine.fresh_search(root_path, index, options, walk=True)
    finally:
        index.close()


def _to_value(resp: Any) -> Any:
    from navigator.results import to_data

    return to_data(resp)


def _view(line: bytes) -> Any:
    """The reply's Response value when it is a well-formed grep answer, else None."""
    from navigator.frontends.entry import response_envelope

    got = response_envelope(line)
    value = got[1] if got is not None else None
    if value is None or not isinstance(value.get("items"), list):
        return None
    for item in value["items"]:
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("path"), str)
            or not isinstance(item.get("line"), int)
        ):
            return None
    return value


def _print(value: Any, opts: dict[str, Any], out: Any, err: Any, color: bool) -> int:
    from navigator.frontends import display
    from navigator.printing import printable

    items = value["items"]
    if opts.get("json"):
        from navigator.frontends import fastjson

        print(fastjson.dumps(value, ensure_ascii=False, allow_nan=True), file=out)
    elif opts.get("files_only"):
        for it in items:
            print(display.style(printable(it["path"]), fg="cyan", color=color), file=out)
    elif opts.get("count"):
        for it in items:
            print(f"{display.style(printable(it['path']), fg='cyan', color=color)}:{it['count']}", file=out)
    else:
        context = bool(opts.get("before") or opts.get("after"))
        last: tuple[str, int] | None = None
        for it in items:
            path, line = it["path"], it["line"]
            if context and last is not None and (last[0] != path or line > last[1] + 1):
                print(display.style("--", fg="bright_black", color=color), file=out)
            last = (path, line)
            shown = display.style(printable(path), fg="cyan", color=color)
            if it.get("context"):
                print(f"{shown}-{line}-{it['text']}", file=out)
            else:
                print(f"{shown}:{line}:{it['col']}:{it['text']}", file=out)
    matched = any(not it.get("context") for it in items)
    if not value.get("complete", True):
        print(
            display.style(f"(incomplete: {value.get('reason')})", fg="yellow", color=err.isatty()), file=err
        )
    for note in value.get("notes") or ():
        print(display.style(f"note: {note}", fg="yellow", color=err.isatty()), file=err)
    return 0 if matched else 1
