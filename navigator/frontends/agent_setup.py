"""``nav setup AGENT``: nav's MCP server entry and a short instruction text, in the files a coding
agent reads (Claude Code, Codex, Cursor, OpenCode, Gemini CLI, VS Code).

The core is pure: :func:`plan` reads the files it needs through a ``read`` function and returns
the edits as data (path, old bytes, new bytes). :func:`apply` writes them, one file at a time,
atomically (a temporary file beside it, then a rename; the file's mode is kept).

Every edit is textual, so what is not nav's stays byte for byte: a JSON(C) file gets nav's member
inserted after the opening brace of its container (comments, key order and the user's indentation
untouched), a TOML or Markdown file gets a block between ``nav:begin`` / ``nav:end`` markers.
``remove`` takes out exactly what setup put in: the member (and a container nav added, when it is
left empty), or the marked block; a file left with nothing but what nav starts a new file with is
deleted. Every edited file is parsed again and compared with what was meant before anything is
written; a file that does not parse, or that nav will not guess how to merge into, is refused with
a :class:`~storage.errors.UsageError` naming the file and the problem (nothing is written).

This module is on the CLI's light path: it imports nothing of the engine (nor ``tomllib``,
``difflib`` or ``shutil`` before they are needed).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from navigator.errors import UsageError, shorten
from navigator.frontends.jsonc_text import (
    JsonObject,
    JsonSyntaxError,
    delete_member,
    find_member,
    indent_unit,
    insert_member,
    jsonc_value,
    line_indent,
    newline,
    parse_object,
    render,
)

SERVER = "nav"
"""The MCP server's name in every agent's configuration."""

AGENTS = ("claude", "codex", "cursor", "opencode", "gemini", "vscode")
ALIASES = {
    "claude-code": "claude",
    "gemini-cli": "gemini",
    "vs-code": "vscode",
    "code": "vscode",
    "copilot": "vscode",
}
TITLES = {
    "claude": "Claude Code",
    "codex": "Codex",
    "cursor": "Cursor",
    "opencode": "OpenCode",
    "gemini": "Gemini CLI",
    "vscode": "VS Code",
}
DEFAULT_SCOPE = {
    "claude": "project",
    "codex": "user",  # `codex mcp add` writes the user's file; .codex/config.toml is read only in trusted projects
    "cursor": "project",
    "opencode": "project",
    "gemini": "project",
    "vscode": "project",
}
SCOPES = ("project", "user")

INSTRUCTIONS = """\
## Code navigation: nav

nav's MCP server (`nav`) answers questions about this repository's code from language servers and
a fresh index. Use it before grep and before reading whole files:

- `def` NAME: where a symbol is defined (`name`, `Class.method`, `pkg.module.func`), with its signature;
  `show` NAME or `path:line`: that definition's source, without reading the whole file.
- `refs` NAME, `callers` NAME: every reference or call site, resolved by the language server (grep
  also matches comments, strings and unrelated things of the same name).
- `outline` PATH: one file's symbols, instead of reading the file.
- `find` QUERY: a name, a `path:line:col` or a question; `search` TEXT: code by meaning.
- `map`: the most-referenced symbols' signatures, an overview of the repository.

Answers say when they are incomplete and why. Grep is still right for text that is not code (log
messages, config values). In a shell: `nav def NAME`, `nav refs NAME`, `nav search "..."`.
"""
"""The text each agent gets in its instructions file (it reaches the agent's context every session)."""

TOOLS_NAMED = ("def", "show", "refs", "callers", "outline", "find", "search", "map")
"""The MCP tools :data:`INSTRUCTIONS` names (tests hold each one to the server's tool list)."""

_MD_BEGIN = "<!-- nav:begin"
_MD_END = "<!-- nav:end -->"
_MD_BEGIN_LINE = "<!-- nav:begin: written by `nav setup`; `nav setup AGENT --remove` takes it out -->"
_TOML_BEGIN = "# nav:begin"
_TOML_END = "# nav:end"
_TOML_BEGIN_LINE = "# nav:begin: written by `nav setup codex`; `nav setup codex --remove` takes it out"

_CURSOR_RULE = """\
---
description: Code navigation with nav's MCP tools (def, refs, callers, outline, search)
alwaysApply: true
---
"""
_VSCODE_USER_RULE = """\
---
description: Code navigation with nav's MCP tools (def, refs, callers, outline, search)
applyTo: '**'
---
"""
_JSON_BASE = "{}\n"
_OPENCODE_BASE = '{\n  "$schema": "https://opencode.ai/config.json"\n}\n'


# -- what a plan is ------------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    """One file's change: ``old`` None when the file does not exist, ``new`` None to delete it."""

    path: str
    old: bytes | None
    new: bytes | None
    what: str

    @property
    def action(self) -> str:
        if self.new is None:
            return "delete"
        return "create" if self.old is None else "update"


@dataclass(frozen=True)
class Plan:
    agent: str
    scope: str
    edits: tuple[Edit, ...]
    """Only the files that change."""
    unchanged: tuple[str, ...]
    """Files already as they should be (a second run lists them all here)."""
    notes: tuple[str, ...]


@dataclass(frozen=True)
class _Config:
    path: str
    fmt: str  # "json" (strict), "jsonc" (comments and trailing commas allowed) or "toml"
    container: tuple[str, ...]
    entry: dict[str, Any]
    base: str = _JSON_BASE  # what a new file starts as (and a file left as it is deleted)


@dataclass(frozen=True)
class _Text:
    path: str
    base: str = ""


Reader = Callable[[str], "bytes | None"]


def normalize_agent(name: str) -> str:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in AGENTS:
        raise UsageError(f"unknown agent `{shorten(name)}`; nav sets up {', '.join(AGENTS)}")
    return key


def plan(
    agent: str,
    *,
    scope: str | None,
    root: str | None,
    home: str,
    env: Mapping[str, str],
    command: list[str],
    remove: bool = False,
    read: Reader,
    platform: str = sys.platform,
) -> Plan:
    """The edits that set nav up for ``agent`` (or take it out, ``remove``), as data.

    ``root`` is the repository (needed for project scope), ``home`` the user's home folder,
    ``command`` the nav executable (and any leading arguments) the agent should run.
    """
    agent = normalize_agent(agent)
    scope = scope or DEFAULT_SCOPE[agent]
    if scope not in SCOPES:
        raise UsageError(f"unknown scope `{shorten(scope)}`; use --scope project or --scope user")
    if scope == "project" and not root:
        raise UsageError("project scope needs the repository root (-C ROOT)")
    args = list(command[1:]) + (["-C", str(root)] if scope == "project" else []) + ["mcp"]
    config, text, notes = _targets(agent, scope, root or "", home, env, platform, command[0], args, read)
    edits: list[Edit] = []
    unchanged: list[str] = []
    for target in (config, text):
        if target is None:
            continue
        old = read(target.path)
        if isinstance(target, _Config):
            new = _plan_config(target, old, remove=remove)
            what = f"MCP server `{SERVER}`"
        else:
            new = _plan_text(target, old, remove=remove)
            what = "instructions"
        if new == old:
            unchanged.append(target.path)
        else:
            edits.append(Edit(target.path, old, new, what))
    return Plan(agent, scope, tuple(edits), tuple(unchanged), tuple(notes))


def _targets(
    agent: str,
    scope: str,
    root: str,
    home: str,
    env: Mapping[str, str],
    platform: str,
    exe: str,
    args: list[str],
    read: Reader,
) -> tuple[_Config, _Text | None, list[str]]:
    j = os.path.join
    project = scope == "project"
    stdio = {"type": "stdio", "command": exe, "args": args}
    plain = {"command": exe, "args": args}
    notes: list[str] = []
    if project:
        notes.append(
            "the entry holds this machine's paths to nav and the repository: keep it out of version control"
        )
    else:
        notes.append(
            "the entry has no -C: nav serves the repository the agent runs in (the nearest folder with .nav or .git)"
        )
    if agent == "claude":
        if project:
            notes.append("Claude Code asks once before it starts a server from .mcp.json")
            return (
                _Config(j(root, ".mcp.json"), "json", ("mcpServers",), stdio),
                _Text(j(root, "CLAUDE.md")),
                notes,
            )
        return (
            _Config(j(home, ".claude.json"), "json", ("mcpServers",), stdio),
            _Text(j(home, ".claude", "CLAUDE.md")),
            notes,
        )
    if agent == "codex":
        if project:
            notes.append("Codex reads .codex/config.toml only in a project you have marked as trusted")
            return (
                _Config(j(root, ".codex", "config.toml"), "toml", ("mcp_servers",), plain, ""),
                _Text(j(root, "AGENTS.md")),
                notes,
            )
        codex_home = env.get("CODEX_HOME") or j(home, ".codex")
        return (
            _Config(j(codex_home, "config.toml"), "toml", ("mcp_servers",), plain, ""),
            _Text(j(codex_home, "AGENTS.md")),
            notes,
        )
    if agent == "cursor":
        if project:
            return (
                _Config(j(root, ".cursor", "mcp.json"), "jsonc", ("mcpServers",), plain),
                _Text(j(root, ".cursor", "rules", "nav.mdc"), _CURSOR_RULE),
                notes,
            )
        notes.append(
            "Cursor keeps user rules in its settings (Rules), not in a file: paste the instructions there "
            "(`nav setup cursor --scope project --print` shows them)"
        )
        return _Config(j(home, ".cursor", "mcp.json"), "jsonc", ("mcpServers",), plain), None, notes
    if agent == "opencode":
        folder = root if project else j(env.get("XDG_CONFIG_HOME") or j(home, ".config"), "opencode")
        name = "opencode.jsonc" if read(j(folder, "opencode.jsonc")) is not None else "opencode.json"
        path = j(folder, name)
        container: tuple[str, ...] = ("mcp",)
        entry: dict[str, Any] = {"type": "local", "command": [exe, *args], "enabled": True}
        if _opencode_v2(read(path)):  # the file already uses OpenCode 2's own shape: mcp.servers.NAME
            container, entry = ("mcp", "servers"), {"type": "local", "command": [exe, *args]}
        return _Config(path, "jsonc", container, entry, _OPENCODE_BASE), _Text(j(folder, "AGENTS.md")), notes
    if agent == "gemini":
        folder = j(root if project else home, ".gemini")  # GEMINI.md: the project's root, or ~/.gemini
        return (
            _Config(j(folder, "settings.json"), "jsonc", ("mcpServers",), plain),
            _Text(j(root, "GEMINI.md") if project else j(folder, "GEMINI.md")),
            notes,
        )
    # vscode
    if project:
        return (
            _Config(j(root, ".vscode", "mcp.json"), "jsonc", ("servers",), stdio),
            _Text(j(root, ".github", "copilot-instructions.md")),
            notes,
        )
    user = _vscode_user_dir(home, env, platform)
    return (
        _Config(j(user, "mcp.json"), "jsonc", ("servers",), stdio),
        _Text(j(user, "prompts", "nav.instructions.md"), _VSCODE_USER_RULE),
        notes,
    )


def _vscode_user_dir(home: str, env: Mapping[str, str], platform: str) -> str:
    if platform == "darwin":
        return os.path.join(home, "Library", "Application Support", "Code", "User")
    if platform.startswith("win"):
        return os.path.join(env.get("APPDATA") or os.path.join(home, "AppData", "Roaming"), "Code", "User")
    return os.path.join(env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "Code", "User")


def _opencode_v2(data: bytes | None) -> bool:
    """True when the file's ``mcp`` object holds a ``servers`` object (OpenCode 2's shape)."""
    if data is None:
        return False
    try:
        value = jsonc_value(data.decode("utf-8"))
    except (UnicodeDecodeError, JsonSyntaxError, ValueError):
        return False  # said properly when the file is planned
    mcp = value.get("mcp") if isinstance(value, dict) else None
    return isinstance(mcp, dict) and isinstance(mcp.get("servers"), dict)


# -- the nav executable ----------------------------------------------------------------------


def nav_command(argv0: str | None = None) -> list[str]:
    """The command an agent runs to start this nav: the ``nav`` script that is running, as an
    absolute path (not resolved through symlinks: a package manager's link on PATH outlives the
    versioned folder it points at), else ``nav`` on PATH, else this Python with ``-m``."""
    import shutil

    argv0 = sys.argv[0] if argv0 is None else argv0
    if os.path.basename(argv0) in ("nav", "nav.exe"):
        found = argv0 if os.sep in argv0 else shutil.which(argv0)
        if found and os.path.isfile(found) and os.access(found, os.X_OK):
            return [os.path.abspath(found)]
    found = shutil.which("nav")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "navigator.frontends.cli"]


def _plan_config(target: _Config, old: bytes | None, *, remove: bool) -> bytes | None:
    if target.fmt == "toml":
        return _plan_toml(target, old, remove=remove)
    if old is None and remove:
        return None
    text = target.base if old is None else _decode(old, target.path)
    top, before = parse_object(text, target.fmt, target.path, len(target.container))
    unit = indent_unit(text, top)
    where = "the top-level object"
    if remove:
        chain: list[JsonObject] = [top]
        for key in target.container:
            m = find_member(chain[-1], key, target.path, where)
            if m is None or m.obj is None:
                return old
            chain.append(m.obj)
            where = f"`{key}`"
        mine = find_member(chain[-1], SERVER, target.path, where)
        if mine is None:
            return old
        text = delete_member(text, chain[-1], chain[-1].members.index(mine))
        # A container left empty goes too when nav could have added it: nav puts what it adds first
        # in its object, so an empty `"mcpServers": {}` of the user's further down stays.
        dropped = 0
        for depth in range(len(target.container), 0, -1):
            objs = _chain(text, target, upto=depth)
            parent, inner = objs[depth - 1], objs[depth]
            if inner.members or text[inner.start : inner.end] != "{}":
                break
            if parent.members[0].key != target.container[depth - 1]:
                break
            text = delete_member(text, parent, 0)
            dropped += 1
        expected = _without(before, target.container, dropped)
        if old is not None and text == target.base:
            _check(text, target, expected)
            return None
    else:
        obj = top
        for key in target.container:
            m = find_member(obj, key, target.path, where)
            if m is None:
                text = insert_member(text, obj, key, {}, unit)
                obj = _chain(text, target, upto=target.container.index(key) + 1)[-1]
            elif m.obj is None:
                raise UsageError(
                    f"{target.path}: `{key}` is not an object; nav will not guess how to merge into it — "
                    f"add {_by_hand(target)} by hand"
                )
            else:
                obj = m.obj
            where = f"`{key}`"
        mine = find_member(obj, SERVER, target.path, where)
        if mine is None:
            text = insert_member(text, obj, SERVER, target.entry, unit)
        else:
            nl = newline(text)
            ind = line_indent(text, mine.key_start)
            compact = "\n" not in text[obj.start : obj.end]
            rendered = render(target.entry, ind, unit, nl, compact=compact)
            text = text[: mine.value_start] + rendered + text[mine.value_end :]
        expected = _with(before, target.container, target.entry)
    _check(text, target, expected)
    return text.encode("utf-8")


def _chain(text: str, target: _Config, upto: int | None = None) -> list[JsonObject]:
    top, _ = parse_object(text, target.fmt, target.path, len(target.container))
    objs = [top]
    for key in target.container[:upto]:
        m = next(m for m in objs[-1].members if m.key == key)
        if m.obj is None:  # pragma: no cover - checked before
            raise UsageError(f"{target.path}: `{key}` is not an object")
        objs.append(m.obj)
    return objs


def _with(doc: dict[str, Any], container: tuple[str, ...], entry: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(doc))
    node = out
    for key in container:
        node = node.setdefault(key, {})
    node[SERVER] = entry
    return dict(out)


def _without(doc: dict[str, Any], container: tuple[str, ...], dropped: int) -> dict[str, Any]:
    out = json.loads(json.dumps(doc))
    nodes = [out]
    for key in container:
        nodes.append(nodes[-1][key])
    nodes[-1].pop(SERVER, None)
    for depth in range(len(container), len(container) - dropped, -1):
        nodes[depth - 1].pop(container[depth - 1])
    return dict(out)


def _check(text: str, target: _Config, expected: Any) -> None:
    """The edited text parses to exactly what was meant, or nothing is written."""
    try:
        _, value = parse_object(text, target.fmt, target.path, len(target.container))
    except UsageError as err:  # pragma: no cover - a bug in the textual edit
        raise UsageError(
            f"nav could not merge into {target.path} safely ({err}); add {_by_hand(target)} by hand"
        ) from None
    if value != expected:  # pragma: no cover - a bug in the textual edit
        raise UsageError(f"nav could not merge into {target.path} safely; add {_by_hand(target)} by hand")


def _by_hand(target: _Config) -> str:
    if target.fmt == "toml":
        return "this table:\n" + _toml_table(target.entry)
    path = ".".join((*target.container, SERVER))
    return f"`{path}` = {json.dumps(target.entry, ensure_ascii=False)}"


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UsageError(
            f"{path} is not UTF-8 text (byte {err.start}); nav will not edit it (nothing was written)"
        ) from None


# -- TOML (Codex): a marked table block ------------------------------------------------------


def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def _toml_table(entry: dict[str, Any]) -> str:
    lines = [f"[mcp_servers.{SERVER}]"]
    for key, value in entry.items():
        if isinstance(value, list):
            lines.append(f"{key} = [{', '.join(_toml_str(v) for v in value)}]")
        else:
            lines.append(f"{key} = {_toml_str(value)}")
    return "\n".join(lines) + "\n"


def _plan_toml(target: _Config, old: bytes | None, *, remove: bool) -> bytes | None:
    import tomllib

    text = "" if old is None else _decode(old, target.path)
    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise UsageError(f"{target.path} is not valid TOML ({err}); fix it and run `nav setup codex` again "
                         "(nothing was written)") from None  # fmt: skip
    span = _block(text, _TOML_BEGIN, _TOML_END, target.path)
    outside = text if span is None else text[: span[0]] + text[span[1] :]
    if remove:
        if span is None:
            return old
        new = _drop(text, span)
        return None if new == target.base and old is not None else new.encode("utf-8")
    try:
        rest = tomllib.loads(outside)
    except tomllib.TOMLDecodeError:  # pragma: no cover - a block that splits a user's table
        rest = before
    servers = rest.get("mcp_servers")
    if isinstance(servers, dict) and SERVER in servers:
        raise UsageError(
            f"{target.path} already defines [mcp_servers.{SERVER}] outside nav's block; "
            "remove it (or rename it) and run `nav setup codex` again"
        )
    nl = newline(text)
    block = (_TOML_BEGIN_LINE + "\n" + _toml_table(target.entry) + _TOML_END + "\n").replace("\n", nl)
    new = _put(text, span, block)
    try:
        after = tomllib.loads(new)
    except tomllib.TOMLDecodeError as err:
        raise UsageError(
            f"nav cannot add its table to {target.path} safely ({err}); add this by hand:\n{_toml_table(target.entry)}"
        ) from None
    if after.get("mcp_servers", {}).get(SERVER) != target.entry:
        raise UsageError(  # e.g. `mcp_servers` defined as an inline table or a value
            f"nav cannot add its table to {target.path} safely; add this by hand:\n{_toml_table(target.entry)}"
        )
    return new.encode("utf-8")


# -- instruction files: a marked block -------------------------------------------------------


def _block(text: str, begin: str, end: str, path: str) -> tuple[int, int] | None:
    """The span of nav's block (from the start of its first line to after its last line's
    newline), or None; a UsageError when the markers are broken."""
    starts = [m.start() for m in re.finditer(r"^" + re.escape(begin), text, re.M)]
    ends = [m.start() for m in re.finditer(r"^" + re.escape(end) + r"[ \t]*\r?$", text, re.M)]
    if not starts and not ends:
        return None
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise UsageError(
            f"{path} has {len(starts)} `{begin}` and {len(ends)} `{end}` markers; keep one pair around "
            "nav's block (or delete the block) and run `nav setup` again"
        )
    stop = text.find("\n", ends[0])
    return starts[0], len(text) if stop < 0 else stop + 1


def _put(text: str, span: tuple[int, int] | None, block: str) -> str:
    """The block in place of the old one, else at the end after a line break (a blank line when
    the text ends with one): :func:`_drop` takes the same break out again."""
    if span is not None:
        return text[: span[0]] + block + text[span[1] :]
    if not text:
        return block
    return text + newline(text) + block


def _drop(text: str, span: tuple[int, int]) -> str:
    head, tail = text[: span[0]], text[span[1] :]
    nl = (
        "\r\n" if text.endswith("\r\n", 0, span[1]) else "\n"
    )  # the block's own line ends, as _put wrote them
    # the break _put added; before a block the user has since written text after, one blank line
    if head.endswith(nl + nl if tail else nl):
        head = head[: -len(nl)]
    return head + tail


def _plan_text(target: _Text, old: bytes | None, *, remove: bool) -> bytes | None:
    if old is None and remove:
        return None
    text = target.base if old is None else _decode(old, target.path)
    span = _block(text, _MD_BEGIN, _MD_END, target.path)
    if remove:
        if span is None:
            return old
        new = _drop(text, span)
        return None if new == target.base else new.encode("utf-8")
    nl = newline(text)
    block = (_MD_BEGIN_LINE + "\n" + INSTRUCTIONS + _MD_END + "\n").replace("\n", nl)
    return _put(text, span, block).encode("utf-8")


# -- the edge: showing and writing a plan ----------------------------------------------------


def read_file(path: str) -> bytes | None:
    """A file's bytes, None when there is none; a UsageError when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise UsageError(f"{path} is a folder; nav setup expected a file there") from None
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror}") from None


def diff(plan: Plan) -> str:
    """What applying the plan would change, file by file, as unified diffs."""
    import difflib

    out: list[str] = []
    for e in plan.edits:
        a = (e.old or b"").decode("utf-8", "replace").splitlines(keepends=True)
        b = (e.new or b"").decode("utf-8", "replace").splitlines(keepends=True)
        src = e.path if e.old is not None else "/dev/null"
        dst = e.path if e.new is not None else "/dev/null"
        for line in difflib.unified_diff(a, b, src, dst):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def apply(plan: Plan) -> None:
    """Write each edit atomically: a temporary file in the same folder, renamed over the old one
    (whose mode it keeps; a symlinked file is written where the link points). A file that changed
    since it was planned is left alone, with an error."""
    for e in plan.edits:
        real = os.path.realpath(e.path)
        if read_file(real) != e.old:
            raise UsageError(f"{e.path} changed while nav was setting up; run `nav setup` again")
        if e.new is None:
            try:
                os.unlink(real)
            except OSError as err:
                raise UsageError(f"cannot delete {e.path}: {err.strerror}") from None
            continue
        _write_atomic(real, e.new, e.path)


def _write_atomic(real: str, data: bytes, shown: str) -> None:
    folder = os.path.dirname(real)
    try:
        os.makedirs(folder, exist_ok=True)
        mode = stat.S_IMODE(os.stat(real).st_mode) if os.path.exists(real) else None
    except OSError as err:
        raise UsageError(f"cannot write {shown}: {err.strerror}") from None
    tmp = os.path.join(folder, f".{os.path.basename(real)}.nav-setup-{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if mode is not None else 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, real)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise UsageError(f"cannot write {shown}: {err.strerror}") from None


def summary(plan: Plan, *, remove: bool, written: bool = True) -> list[str]:
    """One line per file (``written``: the edits too, as done), then the notes."""
    title = TITLES[plan.agent]
    lines = []
    for e in plan.edits if written else ():
        verb = {"create": "created", "update": "updated", "delete": "deleted"}[e.action]
        lines.append(f"{verb} {e.path} ({e.what})")
    for path in plan.unchanged:
        lines.append(f"unchanged {path}")
    if not plan.edits:
        lines.append(f"nothing to {'remove' if remove else 'change'}: {title} ({plan.scope} scope) is "
                     f"{'not set up' if remove else 'already set up'}")  # fmt: skip
    if not remove:
        lines.extend(f"note: {n}" for n in plan.notes)
    return lines
