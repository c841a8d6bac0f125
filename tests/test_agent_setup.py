"""`nav setup AGENT`: each agent's own file format (parsed back with json / tomllib), second runs
that change nothing, `--remove` giving back the user's files byte for byte, `--print` writing
nothing, malformed files refused; and one agent's entry started as written, over the MCP SDK."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from navigator.frontends import agent_setup, jsonc_text
from navigator.frontends.agent_setup import INSTRUCTIONS, TOOLS_NAMED
from navigator.frontends.cli import main
from storage.errors import UsageError

NAV = "/opt/nav tools/bin/nav"  # a space, as in real install paths
REPO = Path(__file__).parent.parent


@pytest.fixture
def where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(root, home): a repository and a home folder of their own; HOME points at the latter."""
    root, home = tmp_path / "repo", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    (root / ".git").mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_CONFIG_HOME", "CODEX_HOME", "APPDATA"):
        monkeypatch.delenv(var, raising=False)
    return root, home


def run(agent: str, root: Path, home: Path, *, scope: str | None = None, remove: bool = False,
        command: list[str] | None = None) -> agent_setup.Plan:  # fmt: skip
    plan = agent_setup.plan(
        agent, scope=scope, root=str(root), home=str(home), env={}, command=command or [NAV],
        remove=remove, read=agent_setup.read_file, platform="linux",
    )  # fmt: skip
    agent_setup.apply(plan)
    return plan


def snapshot(*folders: Path) -> dict[str, bytes]:
    out = {}
    for folder in folders:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                out[str(p)] = p.read_bytes()
    return out


def block_of(text: str) -> str:
    start = text.index("<!-- nav:begin")
    end = text.index("<!-- nav:end -->")
    return text[start:end]


# -- each agent's format ---------------------------------------------------------------------

PROJECT = {  # agent -> (config file, how the entry is reached, the entry, instructions file)
    "claude": (".mcp.json", ("mcpServers", "nav"), "stdio", "CLAUDE.md"),
    "codex": (".codex/config.toml", ("mcp_servers", "nav"), "plain", "AGENTS.md"),
    "cursor": (".cursor/mcp.json", ("mcpServers", "nav"), "plain", ".cursor/rules/nav.mdc"),
    "opencode": ("opencode.json", ("mcp", "nav"), "opencode", "AGENTS.md"),
    "gemini": (".gemini/settings.json", ("mcpServers", "nav"), "plain", "GEMINI.md"),
    "vscode": (".vscode/mcp.json", ("servers", "nav"), "stdio", ".github/copilot-instructions.md"),
}
USER = {
    "claude": (".claude.json", ("mcpServers", "nav"), "stdio", ".claude/CLAUDE.md"),
    "codex": (".codex/config.toml", ("mcp_servers", "nav"), "plain", ".codex/AGENTS.md"),
    "cursor": (".cursor/mcp.json", ("mcpServers", "nav"), "plain", None),
    "opencode": (".config/opencode/opencode.json", ("mcp", "nav"), "opencode", ".config/opencode/AGENTS.md"),
    "gemini": (".gemini/settings.json", ("mcpServers", "nav"), "plain", ".gemini/GEMINI.md"),
    "vscode": (".config/Code/User/mcp.json", ("servers", "nav"), "stdio", ".config/Code/User/prompts/nav.instructions.md"),
}  # fmt: skip


def expected_entry(kind: str, args: list[str]) -> dict[str, Any]:
    if kind == "stdio":
        return {"type": "stdio", "command": NAV, "args": args}
    if kind == "opencode":
        return {"type": "local", "command": [NAV, *args], "enabled": True}
    return {"command": NAV, "args": args}


def load(path: Path) -> Any:
    text = path.read_text()
    return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)


@pytest.mark.parametrize("scope", ["project", "user"])
@pytest.mark.parametrize("agent", agent_setup.AGENTS)
def test_each_agent_gets_its_own_format(agent: str, scope: str, where: tuple[Path, Path]) -> None:
    root, home = where
    config, keys, kind, instructions = (PROJECT if scope == "project" else USER)[agent]
    base = root if scope == "project" else home
    plan = run(agent, root, home, scope=scope)
    assert plan.scope == scope
    value = load(base / config)
    for key in keys:
        value = value[key]
    args = ["-C", str(root), "mcp"] if scope == "project" else ["mcp"]
    assert value == expected_entry(kind, args)
    written = {Path(e.path) for e in plan.edits}
    if instructions is None:
        assert written == {base / config}
        assert any("Rules" in n for n in plan.notes)
    else:
        assert written == {base / config, base / instructions}
        text = (base / instructions).read_text()
        assert INSTRUCTIONS in text
        if instructions.endswith((".mdc", ".instructions.md")):  # front matter first, or the rule never applies
            head = text.split("---\n")
            assert text.startswith("---\n") and ("alwaysApply: true" in head[1] or "applyTo: '**'" in head[1])
    # the second run changes nothing
    before = snapshot(root, home)
    again = run(agent, root, home, scope=scope)
    assert again.edits == () and len(again.unchanged) == len(written)
    assert snapshot(root, home) == before
    # --remove takes out all of it: the files nav created are gone again
    run(agent, root, home, scope=scope, remove=True)
    assert snapshot(root, home) == {}


def test_default_scopes_are_each_agents_own(where: tuple[Path, Path]) -> None:
    root, home = where
    assert run("codex", root, home).scope == "user"  # `codex mcp add` writes ~/.codex/config.toml
    for agent in ("claude", "cursor", "opencode", "gemini", "vscode"):
        assert run(agent, root, home).scope == "project"


def test_every_tool_the_instructions_name_is_a_tool_of_the_server() -> None:
    from mcp import Client

    from navigator.frontends.mcp_server import build_server

    async def go() -> set[str]:
        async with Client(build_server(None)) as client:
            return {t.name for t in (await client.list_tools()).tools}

    tools = anyio.run(go)
    assert set(TOOLS_NAMED) <= tools
    for name in TOOLS_NAMED:
        assert f"`{name}`" in INSTRUCTIONS


# -- the user's own files, kept byte for byte ------------------------------------------------

USERS_FILES = {
    # strict JSON, four-space indent, another server, a key after
    ".mcp.json": '{\n    "mcpServers": {\n        "other": {"command": "x", "args": []}\n    },\n    "extra": [1, 2]\n}\n',
    # JSONC: comments, a trailing comma, CRLF line ends, an `inputs` list
    ".vscode/mcp.json": '{\r\n\t// my servers\r\n\t"inputs": [],\r\n\t"servers": {\r\n\t\t/* the db */\r\n\t\t"db": {"type": "stdio", "command": "db-mcp"},\r\n\t},\r\n}',
    # JSONC without the container yet
    ".cursor/mcp.json": "// Cursor\n{\n  \"theme\": \"dark\" // a comment after\n}\n",
    ".gemini/settings.json": '{"theme": "GitHub", "mcpServers": {}}',
    # TOML with comments, a table of its own and no final newline
    ".codex/config.toml": '# my codex\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "other"\nargs = ["--x"]  # keep',
    # instruction files: no final newline; a blank line at the end; CRLF
    "CLAUDE.md": "# Project rules\n\nRun `make test` before committing.",
    "AGENTS.md": "# Agents\n\n- be brief\n\n",
    "GEMINI.md": "Gemini notes\r\nline two\r\n",
    ".github/copilot-instructions.md": "Use tabs.\n",
    ".cursor/rules/nav.mdc": "---\ndescription: mine\nalwaysApply: false\n---\n\nmy own rule\n",
}  # fmt: skip


@pytest.fixture
def users_files(where: tuple[Path, Path]) -> Iterator[tuple[Path, Path, dict[str, bytes]]]:
    root, home = where
    for rel, text in USERS_FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode())
    (home / ".claude.json").write_bytes(b'{\n  "numStartups": 3,\n  "projects": {\n    "/x": {"mcpServers": {}}\n  }\n}\n')
    yield root, home, snapshot(root, home)


@pytest.mark.parametrize("agent", ["claude", "vscode", "cursor", "gemini", "codex", "opencode"])
def test_remove_gives_back_the_users_files_byte_for_byte(
    agent: str, users_files: tuple[Path, Path, dict[str, bytes]]
) -> None:
    root, home, original = users_files
    scope = "project"
    plan = run(agent, root, home, scope=scope)
    assert plan.edits
    for e in plan.edits:  # the user's servers and keys are all still there
        if e.old is not None and e.path.endswith((".json", ".toml")):
            old_text, new_text = e.old.decode(), (e.new or b"").decode()
            if e.path.endswith(".toml"):
                old_v, new_v = tomllib.loads(old_text), tomllib.loads(new_text)
                assert new_v["mcp_servers"]["other"] == old_v["mcp_servers"]["other"] and new_v["model"] == "o3"
            else:
                old_v, new_v = jsonc_text.jsonc_value(old_text), jsonc_text.jsonc_value(new_text)
                for key, value in old_v.items():
                    if isinstance(value, dict):
                        assert {k: v for k, v in new_v[key].items() if k != "nav"} == value
                    else:
                        assert new_v[key] == value
            for comment in ("// my servers", "/* the db */", "// a comment after", "# my codex", "# keep"):
                assert (comment in old_text) <= (comment in new_text)
    after_setup = snapshot(root, home)
    assert run(agent, root, home, scope=scope).edits == ()
    assert snapshot(root, home) == after_setup
    run(agent, root, home, scope=scope, remove=True)
    assert snapshot(root, home) == original


def test_the_entry_sits_at_the_files_own_indentation(users_files: tuple[Path, Path, dict[str, bytes]]) -> None:
    root, home, _ = users_files
    run("claude", root, home)
    text = (root / ".mcp.json").read_text()
    assert '\n        "nav": {\n            "type": "stdio",' in text  # four spaces a level, as the user's
    run("vscode", root, home)
    text = (root / ".vscode/mcp.json").read_bytes().decode()
    assert '\r\n\t\t"nav": {\r\n\t\t\t"type": "stdio",' in text and "\n" not in text.replace("\r\n", "")
    run("claude", root, home, scope="user")  # Claude's own file: a container added, its other keys kept
    doc = json.loads((home / ".claude.json").read_text())
    assert doc["numStartups"] == 3 and doc["projects"] == {"/x": {"mcpServers": {}}} and "nav" in doc["mcpServers"]


def test_a_changed_nav_is_updated_in_place_and_still_removed_exactly(
    users_files: tuple[Path, Path, dict[str, bytes]],
) -> None:
    root, home, original = users_files
    for agent in ("claude", "codex", "opencode"):
        run(agent, root, home, scope="project")
        plan = run(agent, root, home, scope="project", command=["/new/place/nav"])
        assert [e.what for e in plan.edits] == ["MCP server `nav`"]  # the instructions did not change
        config = Path(plan.edits[0].path)
        assert "/new/place/nav" in config.read_text() and NAV not in config.read_text()
    for agent in ("claude", "codex", "opencode"):
        run(agent, root, home, scope="project", remove=True)
    assert snapshot(root, home) == original


def test_agents_md_is_shared_by_codex_and_opencode(where: tuple[Path, Path]) -> None:
    root, home = where
    run("codex", root, home, scope="project")
    plan = run("opencode", root, home, scope="project")
    assert str(root / "AGENTS.md") in plan.unchanged
    assert (root / "AGENTS.md").read_text().count("<!-- nav:begin") == 1


def test_text_written_after_navs_block_is_kept(where: tuple[Path, Path]) -> None:
    root, home = where
    (root / "CLAUDE.md").write_text("mine\n")
    run("claude", root, home)
    with (root / "CLAUDE.md").open("a") as f:
        f.write("\nmore of mine\n")
    run("claude", root, home, remove=True)
    assert (root / "CLAUDE.md").read_text() == "mine\n\nmore of mine\n"


def test_an_older_block_is_replaced_where_it_stands(where: tuple[Path, Path]) -> None:
    root, home = where
    old_block = "<!-- nav:begin: written by an older nav -->\nuse nav (old words)\n<!-- nav:end -->\n"
    (root / "CLAUDE.md").write_text("# Mine\n\n" + old_block + "\n## Also mine\n")
    plan = run("claude", root, home)
    assert [e.path for e in plan.edits if e.what == "instructions"] == [str(root / "CLAUDE.md")]
    text = (root / "CLAUDE.md").read_text()
    assert text.startswith("# Mine\n\n<!-- nav:begin") and text.endswith("<!-- nav:end -->\n\n## Also mine\n")
    assert INSTRUCTIONS in text and "old words" not in text


def test_opencode_2_files_get_the_entry_under_mcp_servers(where: tuple[Path, Path]) -> None:
    root, home = where
    (root / "opencode.jsonc").write_text('{\n  // v2\n  "mcp": {\n    "servers": {\n      "x": {"type": "local", "command": ["x"]},\n    },\n  },\n}\n')  # fmt: skip
    original = (root / "opencode.jsonc").read_bytes()
    run("opencode", root, home)
    doc = jsonc_text.jsonc_value((root / "opencode.jsonc").read_text())
    assert doc["mcp"]["servers"]["nav"] == {"type": "local", "command": [NAV, "-C", str(root), "mcp"]}
    assert not (root / "opencode.json").exists()
    run("opencode", root, home, remove=True)
    assert (root / "opencode.jsonc").read_bytes() == original


def test_mode_and_symlinks_are_kept(where: tuple[Path, Path]) -> None:
    root, home = where
    real = home / "dotfiles" / "claude.json"
    real.parent.mkdir()
    real.write_text('{"userID": "u"}\n')
    real.chmod(0o600)
    (home / ".claude.json").symlink_to(real)
    run("claude", root, home, scope="user")
    assert (home / ".claude.json").is_symlink()
    assert "nav" in json.loads(real.read_text())["mcpServers"]
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert [p.name for p in real.parent.iterdir()] == ["claude.json"]  # no temporary file left


# -- refusals --------------------------------------------------------------------------------

MALFORMED = [
    ("claude", ".mcp.json", b'{"mcpServers": {', "not valid JSON"),
    ("claude", ".mcp.json", b'{"mcpServers": []}', "`mcpServers` is not an object"),
    ("claude", ".mcp.json", b"[1, 2]", "does not hold a JSON object"),
    ("claude", ".mcp.json", b'{"mcpServers": {}, "mcpServers": {}}', "2 `mcpServers` keys"),
    ("vscode", ".vscode/mcp.json", b'{"servers": {} /* never closed', "never closed"),
    ("cursor", ".cursor/mcp.json", b'{"mcpServers": {"a": 1,, }}', "line 1, column 24"),
    ("gemini", ".gemini/settings.json", b'{"x": "\xff"}', "not UTF-8"),
    ("codex", ".codex/config.toml", b"model = \n", "not valid TOML"),
    ("codex", ".codex/config.toml", b'[mcp_servers.nav]\ncommand = "mine"\n', "already defines [mcp_servers.nav]"),
    ("codex", ".codex/config.toml", b'mcp_servers = { a = { command = "a" } }\n', "add this by hand"),
    ("claude", "CLAUDE.md", b"<!-- nav:begin -->\nno end\n", "markers"),
]


@pytest.mark.parametrize(("agent", "rel", "content", "says"), MALFORMED)
def test_malformed_files_are_refused_and_nothing_is_written(
    agent: str, rel: str, content: bytes, says: str, where: tuple[Path, Path]
) -> None:
    root, home = where
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(content)
    before = snapshot(root, home)
    with pytest.raises(UsageError) as info:
        run(agent, root, home, scope="project")
    assert str(p) in str(info.value) and says in str(info.value)
    assert snapshot(root, home) == before
    # through the CLI: a message naming the file, exit 2, no traceback
    result = CliRunner().invoke(main, ["-C", str(root), "setup", agent, "--scope", "project"])
    assert result.exit_code == 2 and str(p) in result.output and "Traceback" not in result.output
    assert snapshot(root, home) == before


# -- the command -----------------------------------------------------------------------------


def test_print_shows_each_file_and_writes_nothing(users_files: tuple[Path, Path, dict[str, bytes]]) -> None:
    root, home, original = users_files
    result = CliRunner().invoke(main, ["-C", str(root), "setup", "claude", "--print"])
    assert result.exit_code == 0, result.output
    assert f"+++ {root / '.mcp.json'}" in result.output and f"+++ {root / 'CLAUDE.md'}" in result.output
    assert '+        "nav": {' in result.output
    assert snapshot(root, home) == original
    CliRunner().invoke(main, ["-C", str(root), "setup", "claude"])
    result = CliRunner().invoke(main, ["-C", str(root), "setup", "claude", "--remove", "--print"])
    assert result.exit_code == 0 and '-        "nav": {' in result.output
    assert snapshot(root, home) != original
    result = CliRunner().invoke(main, ["-C", str(root), "setup", "claude", "--remove"])
    assert result.exit_code == 0 and snapshot(root, home) == original


def test_the_command_reports_and_rejects_bad_input(where: tuple[Path, Path]) -> None:
    root, home = where
    result = CliRunner().invoke(main, ["-C", str(root), "setup", "Claude-Code"])
    assert result.exit_code == 0 and f"created {root / '.mcp.json'}" in result.output
    result = CliRunner().invoke(main, ["-C", str(root), "setup", "claude"])
    assert result.exit_code == 0 and "already set up" in result.output
    result = CliRunner().invoke(main, ["-C", str(root), "setup", "windsurf"])
    assert result.exit_code == 2 and "unknown agent `windsurf`" in result.output and "claude" in result.output
    result = CliRunner().invoke(main, ["-C", str(root), "setup", "claude", "--scope", "team"])
    assert result.exit_code == 2 and "team" in result.output
    result = CliRunner().invoke(main, ["-C", str(root / "nope"), "setup", "claude"])
    assert result.exit_code == 2 and "nope" in result.output
    result = CliRunner().invoke(main, ["-C", str(root), "setup", "codex", "--remove"])
    assert result.exit_code == 0 and "not set up" in result.output and not (home / ".codex").exists()


def test_the_command_names_the_running_nav(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "bin" / "nav"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert agent_setup.nav_command(str(script)) == [str(script)]
    monkeypatch.chdir(tmp_path)
    assert agent_setup.nav_command("bin/nav") == [str(script)]  # relative: made absolute
    link = tmp_path / "nav-link-dir" / "nav"
    link.parent.mkdir()
    link.symlink_to(script)
    assert agent_setup.nav_command(str(link)) == [str(link)]  # the link, which outlives upgrades
    monkeypatch.setenv("PATH", str(script.parent))
    assert agent_setup.nav_command("/usr/lib/python3/pytest") == [str(script)]  # not nav: nav on PATH
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert agent_setup.nav_command("pytest") == [os.path.abspath(sys.executable), "-m", "navigator.frontends.cli"]


ENGINE = ("navigator.api", "navigator.frontends.client", "navigator.frontends.mcp_server", "lsp", "semantic",
          "mcp", "multilspy", "sqlite_utils", "sentence_transformers", "faiss", "torch", "tree_sitter")  # fmt: skip


def test_setup_stays_off_the_engine(where: tuple[Path, Path]) -> None:
    """`nav setup` imports no engine, model, server or MCP code (the console script, as pip installs it)."""
    root, home = where
    probe = (
        "import atexit, sys\n"
        f"heavy = {ENGINE!r}\n"
        "atexit.register(lambda: sys.stderr.write('LOADED ' + repr(sorted(m for m in sys.modules "
        "if m.split('.')[0] in heavy or m in heavy)) + '\\n'))\n"
        "from navigator.frontends.entry import run\n"
        "sys.argv[0] = 'nav'\n"
        "run()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(home)}
    env.pop("NAV_NO_DAEMON", None)
    for args in (["setup", "--help"], ["-C", str(root), "setup", "claude", "--print"]):
        out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, env=env, timeout=60)
        assert out.returncode == 0, out.stderr
        assert "LOADED []" in out.stderr, out.stderr
    assert snapshot(root, home) == {}


# -- end to end: the entry Claude Code would run, started as written ------------------------


def test_claude_codes_entry_starts_nav_mcp(where: tuple[Path, Path]) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    root, home = where
    (root / "shop.py").write_text("def create_sales_order(customer: str) -> int:\n    return 1\n")
    script = Path(sys.executable).parent / "nav"  # the console script pip installed beside this Python
    if not script.exists():
        pytest.skip(f"no `nav` console script beside {sys.executable} (pip install -e . makes one)")
    env = {"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", ""), "HOME": str(home), "NAV_NO_DAEMON": "1"}
    done = subprocess.run([str(script), "-C", str(root), "setup", "claude"], capture_output=True, text=True,
                          env=env, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    entry = json.loads((root / ".mcp.json").read_text())["mcpServers"]["nav"]
    assert entry["type"] == "stdio" and entry["command"] == str(script)
    assert entry["args"] == ["-C", str(root.resolve()), "mcp"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"], cwd=str(home), env=env)

    async def go() -> tuple[set[str], str]:
        async with Client(params) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            outline = await client.call_tool("outline", {"path": "shop.py"})
            return tools, "\n".join(c.text for c in outline.content if getattr(c, "text", None))

    tools, outline = anyio.run(go)
    assert set(TOOLS_NAMED) <= tools
    assert "create_sales_order" in outline


# -- the textual JSON edit, over many shapes of the user's file -----------------------------

KEYS = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=6).filter(lambda k: k != "nav")
SCALARS = st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
                      max_leaves=8)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    doc=st.dictionaries(KEYS, VALUES, max_size=4),
    servers=st.none() | st.dictionaries(KEYS, st.dictionaries(KEYS, SCALARS, max_size=2), max_size=3),
    servers_first=st.booleans(),
    indent=st.sampled_from([None, 2, 4, "\t"]),
    crlf=st.booleans(),
    final_newline=st.booleans(),
    comment=st.booleans(),
)
def test_setup_then_remove_is_the_identity_on_any_json(
    doc: dict[str, Any], servers: dict[str, Any] | None, servers_first: bool, indent: int | str | None,
    crlf: bool, final_newline: bool, comment: bool,
) -> None:  # fmt: skip
    doc = {k: v for k, v in doc.items() if k != "mcpServers"}
    if servers is not None:
        doc = {"mcpServers": servers, **doc} if servers_first else {**doc, "mcpServers": servers}
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    if comment:
        text = text.replace("{\n", "{ // mine\n", 1) if "{\n" in text else "/* mine */ " + text
    text += "\n" if final_newline else ""
    text = text.replace("\n", "\r\n") if crlf else text
    # nav cannot tell a user's empty container first in its object from one it added (documented)
    assume(not (servers == {} and (servers_first or len(doc) == 1)) and text != "{}\n")
    path = "/r/.cursor/mcp.json"
    files: dict[str, bytes] = {path: text.encode()}

    def step(remove: bool) -> agent_setup.Plan:
        plan = agent_setup.plan("cursor", scope="project", root="/r", home="/h", env={}, command=[NAV],
                                remove=remove, read=files.get, platform="linux")  # fmt: skip
        for e in plan.edits:
            if e.new is None:
                del files[e.path]
            else:
                files[e.path] = e.new
        return plan

    step(remove=False)
    written = files[path].decode()
    value = jsonc_text.jsonc_value(written)
    assert value["mcpServers"]["nav"] == {"command": NAV, "args": ["-C", "/r", "mcp"]}
    assert {k: v for k, v in value["mcpServers"].items() if k != "nav"} == (servers or {})
    assert ("\n" in written.replace("\r\n", "")) == (not crlf and "\n" in written)  # line ends kept
    assert step(remove=False).edits == ()
    step(remove=True)
    assert files[path] == text.encode()


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.sampled_from("ab #-\n\r\t<>!é"), min_size=1, max_size=60), toml_lines=st.lists(
    st.sampled_from(['x = 1', '[t]', 'y = "s"  # c', '', '# note', '[mcp_servers.other]', 'command = "o"']), max_size=6))
def test_setup_then_remove_is_the_identity_on_any_text(text: str, toml_lines: list[str]) -> None:  # fmt: skip
    toml = "\n".join(toml_lines)
    try:
        tomllib.loads(toml)
    except tomllib.TOMLDecodeError:
        toml = ""
    files: dict[str, bytes] = {"/r/CLAUDE.md": text.encode(), "/h/.codex/config.toml": toml.encode()}

    def step(agent: str, remove: bool) -> None:
        plan = agent_setup.plan(agent, scope=None, root="/r", home="/h", env={}, command=[NAV], remove=remove,
                                read=files.get, platform="linux")  # fmt: skip
        for e in plan.edits:
            if e.new is None:
                del files[e.path]
            else:
                files[e.path] = e.new

    original = dict(files)
    for agent in ("claude", "codex"):
        step(agent, remove=False)
    assert INSTRUCTIONS.replace("\n", "") in files["/r/CLAUDE.md"].decode().replace("\r", "").replace("\n", "")
    assert tomllib.loads(files["/h/.codex/config.toml"].decode())["mcp_servers"]["nav"]["args"] == ["mcp"]
    for agent in ("claude", "codex"):
        step(agent, remove=True)
    if not toml:
        original.pop("/h/.codex/config.toml")  # nothing of the user's in it: a file nav created goes
    assert files == original
