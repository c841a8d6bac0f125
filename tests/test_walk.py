from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from navigator.walk import WalkOptions, walk, walk_paths


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


def _git_repo(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def test_git_info_exclude_is_honoured_like_gitignore(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo({"a.py": "a = 1\n", "local_notes.py": "n = 1\n", "scratch/s.py": "s = 1\n",
                      "pkg/keep.py": "k = 1\n", "pkg/local_x.py": "x = 1\n"})  # fmt: skip
    _git_repo(root)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("# mine\nlocal_*.py\n/scratch/\n")
    assert paths(root) == ["a.py", "pkg/keep.py"]
    # the same verdicts for a few paths (the watcher's incremental updates)
    scoped = walk_paths(root, ["local_notes.py", "scratch/s.py", "pkg/local_x.py", "a.py"])
    assert [f.path for f in scoped.files] == ["a.py"]
    # a root below the repository's top: the rules are relative to the top
    (root / ".git" / "info" / "exclude").write_text("/pkg/local_x.py\n")
    assert [f.path for f in walk(root / "pkg").files] == ["keep.py"]


def test_the_global_excludes_file_is_honoured(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({"a.py": "a = 1\n", "notes.scratch": "n\n"})
    _git_repo(root)
    config = tmp_path / "xdg"
    (config / "git").mkdir(parents=True)
    (config / "git" / "ignore").write_text("*.scratch\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    assert paths(root) == ["a.py"]
    # core.excludesFile names another file
    other = tmp_path / "my-excludes"
    other.write_text("a.py\n")
    (config / "git" / "config").write_text(f'[user]\n\tname = x\n[core]\n\texcludesFile = "{other}"\n')
    assert paths(root) == ["notes.scratch"]


@pytest.mark.parametrize("name", ["prod.env", "Docker.ENV", ".env", ".env.local", "staging/app.env"])
def test_env_files_by_any_name_are_likely_secrets(make_repo: Callable[[dict[str, str]], Path], name: str) -> None:
    root = make_repo({"a.py": "a = 1\n", name: "TOKEN=x\n", "app.env.example": "TOKEN=\n"})
    result = walk(root)
    assert [f.path for f in result.files] == ["a.py", "app.env.example"]
    assert [p for p, why in result.skipped if "likely secret" in why] == [name]
    assert name in {f.path for f in walk(root, WalkOptions(include_secrets=True)).files}
