from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from navigator.walk import WalkOptions, walk


def paths(root: Path, **opts: object) -> list[str]:
    return [f.path for f in walk(root, WalkOptions(**opts)).files]  # type: ignore[arg-type]


NESTED_IGNORES = {
    ".gitignore": "*.log\nbuild_out/\n",
    "a.py": "x = 1\n",
    "debug.log": "noise\n",
    "build_out/gen.py": "y = 2\n",
    "pkg/.gitignore": "secret_*.py\n!secret_ok.py\n",
    "pkg/secret_key.py": "k = 1\n",
    "pkg/secret_ok.py": "ok = 1\n",
}


def test_gitignore_nested_and_negation(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo({**NESTED_IGNORES, "pkg/mod.py": "z = 3\n"})
    assert paths(root) == [".gitignore", "a.py", "pkg/.gitignore", "pkg/mod.py", "pkg/secret_ok.py"]


def test_navignore_and_extra_patterns(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo({".navignore": "generated/\n", "generated/x.py": "", "keep.py": "", "skip.pb.go": ""})
    assert paths(root, extra_ignores=("*.pb.go",)) == [".navignore", "keep.py"]


def test_skips_vendored_trees_virtualenvs_and_binaries(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo(
        {
            "src/app.py": "",
            "node_modules/lib/index.js": "",
            ".git/config": "",
            ".venv/lib/x.py": "",
            "myenv/pyvenv.cfg": "home = /usr",
            "myenv/lib/site.py": "",
            "logo.png": "",
        }
    )
    assert paths(root) == ["src/app.py"]


def test_size_limit_is_reported(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo({"big.py": "x = 1\n" * 1000, "small.py": "y = 2\n"})
    result = walk(root, WalkOptions(max_file_bytes=100))
    assert [f.path for f in result.files] == ["small.py"]
    assert result.skipped[0][0] == "big.py" and "size limit" in result.skipped[0][1]


def test_symlink_loop_and_broken_link_do_not_crash(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo({"a/b.py": ""})
    os.symlink(root / "a", root / "a" / "loop")
    os.symlink(root / "missing", root / "dangling.py")
    result = walk(root)
    assert [f.path for f in result.files] == ["a/b.py"]
    assert ("dangling.py", "broken symlink") in result.skipped


def test_unreadable_directory_is_reported(
    make_repo: Callable[[dict[str, str]], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # CI runs as root, which reads any mode; make the directory unreadable at the OS seam instead.
    root = make_repo({"locked/x.py": "", "ok.py": ""})
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = walk(root)
    assert [f.path for f in result.files] == ["ok.py"]
    assert result.skipped == [("locked", "unreadable directory: Permission denied")]


def test_walk_paths_gives_the_same_verdicts_as_walk(make_repo: Callable[[dict[str, str]], Path]) -> None:
    from navigator.walk import walk_paths

    root = make_repo(
        {
            **NESTED_IGNORES,
            "node_modules/x/index.js": "",
            "env1/pyvenv.cfg": "",
            "env1/lib/mod.py": "",
            "big.py": "x = 1\n" * 1000,
        }
    )
    candidates = [
        "a.py", "debug.log", "build_out/gen.py", "pkg/secret_key.py", "pkg/secret_ok.py",
        "node_modules/x/index.js", "env1/lib/mod.py", "missing.py", "../outside.py", "big.py",
    ]  # fmt: skip
    opts = WalkOptions(max_file_bytes=1000)
    full = {f.path for f in walk(root, opts).files}
    scoped = walk_paths(root, candidates, opts)
    assert {f.path for f in scoped.files} == full & set(candidates) == {"a.py", "pkg/secret_ok.py"}
    assert [p for p, _ in scoped.skipped] == ["big.py"]
