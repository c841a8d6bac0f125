"""Go modules gopls cannot load as they are: required modules missing from the module cache
(GOPROXY is off, nothing downloads), and go.mod versions older gopls builds cannot parse.
Real gopls on copies of the committed Go workspace."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_exact_servers import DEADLINE, WORKSPACES, require_server

from lsp.registry import Gopls, available_definition
from lsp.servers.go import missing_requirements, strip_requirements
from navigator.api import Navigator
from navigator.exact import ExactNavigator, NavigatorTable

GO_MOD = """module example.com/orders

go 1.21

require github.com/absent/money v1.2.3 // not in any module cache

require (
	github.com/absent/log v0.1.0
	golang.org/x/absent v0.0.0-20240101000000-abcdefabcdef // indirect
)

replace example.com/other => ../other
"""


def test_strip_requirements_keeps_everything_else() -> None:
    stripped = strip_requirements(GO_MOD)
    assert "require" not in stripped and "absent" not in stripped
    assert "module example.com/orders" in stripped and "go 1.21" in stripped and "replace" in stripped


def test_missing_requirements_are_those_not_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "go.mod").write_text(GO_MOD)
    cache = tmp_path / "modcache"
    monkeypatch.setenv("GOMODCACHE", str(cache))
    assert missing_requirements(tmp_path) == [
        "github.com/absent/money",
        "github.com/absent/log",
        "golang.org/x/absent",
    ]
    present = cache / "cache" / "download" / "github.com" / "absent" / "log" / "@v"
    present.mkdir(parents=True)
    (present / "v0.1.0.mod").write_text("module github.com/absent/log\n")
    assert "github.com/absent/log" not in missing_requirements(tmp_path)


def test_old_gopls_is_not_started_on_a_three_part_go_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "go.mod").write_text("module x\n\ngo 1.25.0\n")
    monkeypatch.setattr(Gopls, "built_with", lambda self, binary: "go1.19.5")
    why = Gopls().unusable(tmp_path, "/usr/bin/gopls")
    assert why and "go1.19.5" in why and "`go 1.25.0`" in why
    monkeypatch.setattr(Gopls, "built_with", lambda self, binary: "go1.23.4")
    assert Gopls().unusable(tmp_path, "/usr/bin/gopls") is None
    (tmp_path / "go.mod").write_text("module x\n\ngo 1.20\n")
    monkeypatch.setattr(Gopls, "built_with", lambda self, binary: "go1.19.5")
    assert Gopls().unusable(tmp_path, "/usr/bin/gopls") is None


@pytest.mark.slow
def test_references_inside_a_module_whose_requirements_are_missing(tmp_path: Path) -> None:
    require_server("go")
    root = tmp_path / "go"
    shutil.copytree(WORKSPACES / "go", root)
    (root / "go.mod").write_text(GO_MOD)
    (root / "money.go").write_text(
        'package orders\n\nimport "github.com/absent/money"\n\nvar Zero = money.Zero\n'
    )
    nav = Navigator(root)
    nav.index()
    exact = ExactNavigator(nav.root, NavigatorTable(nav))
    try:
        resp = exact.references("CreateSalesOrder", deadline_s=DEADLINE)
        assert resp.complete, resp.reason
        assert resp.source == "lsp:gopls"
        assert ("cmd/app/main.go", 14) in {(h.path, h.line) for h in resp.items}
        assert any("3 required modules are not in the Go module cache" in n for n in resp.notes), resp.notes
        assert (root / "go.mod").read_text() == GO_MOD, "the repository's own go.mod is never touched"
    finally:
        exact.close()
        nav.close()
    assert available_definition("go") is not None


@pytest.mark.skipif(available_definition("go") is None, reason="gopls is not installed")
def test_the_go_release_gopls_was_built_with_is_remembered_per_binary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon asks before it launches gopls; ``go version`` on a cold disk made the launch late.
    The answer is remembered in the user's cache, keyed by the binary (a reinstall asks again);
    a broken or unwritable cache only costs the question."""
    import lsp.servers.go as go

    found = available_definition("go")
    assert found is not None
    real = go._go_version_of(found[1])
    assert real and real.startswith("go1.")
    monkeypatch.setenv("NAV_CACHE_DIR", str(tmp_path / "cache"))
    asked: list[str] = []
    monkeypatch.setattr(go, "_go_version_of", lambda b: asked.append(b) or real)
    binary = tmp_path / "bin" / "gopls"
    binary.parent.mkdir()
    shutil.copy2(found[1], binary)
    assert go._go_built_with(str(binary)) == real and len(asked) == 1
    assert go._go_built_with(str(binary)) == real and len(asked) == 1  # remembered
    link = tmp_path / "bin" / "gopls-link"
    link.symlink_to(binary)
    assert go._go_built_with(str(link)) == real and len(asked) == 1  # the same binary
    with binary.open("ab") as f:  # reinstalled: another binary
        f.write(b"\0")
    assert go._go_built_with(str(binary)) == real and len(asked) == 2
    cache = tmp_path / "cache" / "go-built-with.json"
    cache.write_text("{not json")  # a torn or hostile cache file
    assert go._go_built_with(str(binary)) == real and len(asked) == 3
    assert go._go_built_with(str(binary)) == real and len(asked) == 3  # rewritten whole
    cache.write_text(json.dumps({go._binary_key(str(binary)): "rm -rf /"}))  # not a Go release
    assert go._go_built_with(str(binary)) == real and len(asked) == 4
    monkeypatch.setenv("NAV_CACHE_DIR", str(tmp_path / "a-file" / "nav"))
    (tmp_path / "a-file").write_text("")  # nothing can be made there
    assert go._go_built_with(str(binary)) == real and len(asked) == 5
    assert not list((tmp_path / "cache").glob("*.tmp"))
    assert Gopls().version(str(binary)) and real in (Gopls().version(str(binary)) or "")
