"""bench/mining/mine_pairs.py: the exclusion rule, the message and path filters, diff → changed
parent lines → innermost definition, and one real repository mined end to end (git CLI)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "mining"))

import mine_pairs as mp  # noqa: E402

# ---------------------------------------------------------------- exclusion


def test_exclusion_list_holds_every_evaluation_set() -> None:
    ex = mp.load_excluded()
    assert all(r == r.lower() and r.count("/") == 1 for r in ex)
    for repo in ("django/django", "sympy/sympy", "mwaskom/seaborn", "psf/requests", "pallets/flask"):
        assert repo in ex  # SWE-bench
    for repo in ("urllib3/urllib3", "ipython/ipython", "aws-cloudformation/cfn-lint", "yt-dlp/yt-dlp"):
        assert repo in ex  # SWE-bench-Live
    semble = json.loads(Path("/work/shared/bench/semble/repos.json").read_text()) if Path(
        "/work/shared/bench/semble/repos.json").exists() else []  # fmt: skip
    for r in semble:
        assert r["url"].split("github.com/")[1].removesuffix(".git").lower() in ex


def test_miner_refuses_excluded_repositories_and_their_forks() -> None:
    ex = frozenset({"django/django", "tokio-rs/axum"})
    with pytest.raises(mp.ExcludedRepository, match="(?i)django/django"):
        mp.check_allowed("Django/Django", ex)
    with pytest.raises(mp.ExcludedRepository, match="fork or mirror"):
        mp.check_allowed("someone/axum", ex)
    mp.check_allowed("pallets/jinja", ex)  # not excluded: no error


def test_main_refuses_before_mining(tmp_path: Path) -> None:
    repos = tmp_path / "repos.json"
    repos.write_text(json.dumps([{"repo": "pallets/jinja", "language": "python"},
                                 {"repo": "sympy/sympy", "language": "python"}]))  # fmt: skip
    out = tmp_path / "pairs.jsonl"
    with pytest.raises(mp.ExcludedRepository, match="sympy/sympy"):
        mp.main(["--repos", str(repos), "--out", str(out), "--manifest", str(tmp_path / "m.json"),
                 "--mirror-root", str(tmp_path)])  # fmt: skip
    assert not out.exists()  # refused before any repository was read


def test_committed_repository_choice_is_allowed() -> None:
    ex = mp.load_excluded()
    for r in json.loads(mp.REPOS.read_text()):
        assert mp.excluded_reason(r["repo"], ex) is None, r["repo"]


# ---------------------------------------------------------------- message filters


@pytest.mark.parametrize(
    "subject",
    [
        "Bump lodash from 4.17.15 to 4.17.21",
        'Revert "Fix the parser on empty input"',
        "Release 3.1.2",
        "v2.0.0",
        "style: run black over the code base",
        "Fix typo in the error message of the loader",
        "chore(deps): update dependency eslint to v9",
        "docs: explain the cache settings in more detail",
        "Merge branch 'main' into feature/x",
        "Update changelog for the upcoming release",
        "Preparing for a 2.5.2 release.  Fixed an issue with setup.py",
        "fix trivial typo (side -> size)",
    ],
)
def test_chore_messages_are_dropped(subject: str) -> None:
    assert mp.message_skip_reason(subject, subject + " with some more words here") == "chore_message"


def test_short_messages_are_dropped_and_real_ones_kept() -> None:
    assert mp.message_skip_reason("Fix crash", "Fix crash") == "short_message"
    q = "Fix crash when the config file is empty"
    assert mp.message_skip_reason(q, q) is None
    assert mp.is_fixlike(q)
    assert not mp.is_fixlike("Add a --json flag to the export command")
    assert mp.is_fixlike("Support nested routes (closes #123)")


def test_bots_are_recognised() -> None:
    assert mp.is_bot("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com")
    assert mp.is_bot("renovate-bot", "bot@renovateapp.com")
    assert mp.is_bot("pre-commit-ci[bot]", "x@users.noreply.github.com")
    assert not mp.is_bot("Jane Doe", "jane@example.org")


def test_pr_merge_message_gives_title_and_body() -> None:
    assert mp.pr_message("Merge pull request #42 from jane/fix-cache", "Fix the cache key\n\nIt ignored the locale.") == (
        "Fix the cache key", "It ignored the locale.")  # fmt: skip
    assert mp.pr_message("Merge pull request #42 from jane/fix-cache", "") is None  # no PR text
    assert mp.pr_message("Merge branch 'dev'", "Fix the cache key") is None


def test_clean_message_strips_trailers_and_pr_number() -> None:
    msg = "Fix the cache key (#1234)\n\nIt ignored the locale.\n\nSigned-off-by: A <a@b.c>\nCo-authored-by: B <b@c.d>\n"
    assert mp.clean_message(msg) == "Fix the cache key\n\nIt ignored the locale."


# ---------------------------------------------------------------- paths


@pytest.mark.parametrize(
    ("path", "lang"),
    [
        ("src/pkg/core.py", "python"),
        ("lib/request.js", "javascript"),
        ("internal/server/run.go", "go"),
        ("src/main/java/a/B.java", "java"),
        ("tests/test_core.py", None),
        ("pkg/core_test.go", None),
        ("src/test/java/a/BTest.java", None),
        ("packages/x/__tests__/a.ts", None),
        ("src/a.spec.ts", None),
        ("spec/models/user_spec.rb", None),
        ("docs/conf.py", None),
        ("README.md", None),
        ("CHANGES.rst", None),
        ("setup.cfg", None),
        ("vendor/github.com/x/y.go", None),
        ("types/index.d.ts", None),
        ("setup.py", None),
        ("packages/app/vite.config.ts", None),
    ],
)
def test_source_language(path: str, lang: str | None) -> None:
    assert mp.source_language(path) == lang


# ---------------------------------------------------------------- diff → lines → definitions

DIFF = """diff --git a/pkg/a.py b/pkg/a.py
index 1111111..2222222 100644
--- a/pkg/a.py
+++ b/pkg/a.py
@@ -3 +3 @@ class A:
-        return 1
+        return 2
@@ -9,0 +10,2 @@ def h():
+    y = 2
+    return y
diff --git a/pkg/new.py b/pkg/new.py
new file mode 100644
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1 @@
+x = 1
diff --git a/pkg/gone.py b/pkg/gone.py
deleted file mode 100644
--- a/pkg/gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-a = 1
-b = 2
"""

PARENT = """class A:
    def f(self):
        return 1

    def g(self):
        return 3


def h():
    x = 1
"""


def test_parse_unified_diff_parent_lines() -> None:
    files = mp.parse_unified_diff(DIFF)
    assert [(f.old_path, f.new_path) for f in files] == [("pkg/a.py", "pkg/a.py"), (None, "pkg/new.py"),
                                                         ("pkg/gone.py", None)]  # fmt: skip
    assert files[0].removed == [3] and files[0].inserted_after == [9]
    assert files[2].removed == [1, 2]


def test_innermost_definition_of_changed_lines() -> None:
    defs = mp.definitions("pkg/a.py", PARENT, "python")
    change = mp.parse_unified_diff(DIFF)[0]
    # line 3 is inside A.f; the insertion after line 9 ("def h():", before "x = 1") is inside h
    assert mp.changed_definitions(change, defs) == ["A.f", "h"]
    assert mp.innermost(defs, 1).qualified_name == "A"  # type: ignore[union-attr]
    assert mp.innermost(defs, 7) is None  # a blank line between definitions: the module


def test_insertion_between_definitions_is_the_module() -> None:
    defs = mp.definitions("pkg/a.py", PARENT, "python")
    # after A.f's last line, before the blank line inside class A: the class holds both neighbours
    change = mp.FileChange("pkg/a.py", "pkg/a.py", removed=[], inserted_after=[3])
    assert mp.changed_definitions(change, defs) == ["A"]
    for after in (6, 7):  # after class A's last line / between A and h: a new top-level definition
        change = mp.FileChange("pkg/a.py", "pkg/a.py", removed=[], inserted_after=[after])
        assert mp.changed_definitions(change, defs) == ["<module>"]


def test_inline_tests_are_no_positives() -> None:
    for name in ("tests", "tests.it_parses", "Parser.test_empty", "TestParser.setUp"):
        assert mp.INLINE_TEST_RE.search(name), name
    for name in ("Parser.parse", "attest", "contest.run", "Tester", "latest_version"):
        assert not mp.INLINE_TEST_RE.search(name), name


def test_other_languages_use_navs_parser() -> None:
    go = "package main\n\ntype S struct{}\n\nfunc (s *S) Run() int {\n\treturn 1\n}\n"
    defs = mp.definitions("main.go", go, "go")
    assert mp.innermost(defs, 6).qualified_name == "S.Run"  # type: ignore[union-attr]
    ts = "export class Box {\n  open(): number {\n    return 1;\n  }\n}\n"
    defs = mp.definitions("box.ts", ts, "typescript")
    assert mp.innermost(defs, 3).qualified_name == "Box.open"  # type: ignore[union-attr]


# ---------------------------------------------------------------- a real repository, end to end


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_mine_repo_on_a_real_git_history(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    _git(work, "config", "user.email", "dev@example.org")
    _git(work, "config", "user.name", "Dev")
    (work / "pkg").mkdir()
    (work / "tests").mkdir()
    (work / "pkg" / "a.py").write_text(PARENT)
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "Initial import of the package")
    (work / "pkg" / "a.py").write_text(PARENT.replace("return 1", "return 2"))
    (work / "tests" / "test_a.py").write_text("def test_f():\n    assert True\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "Fix A.f returning the wrong value (#7)\n\nSigned-off-by: Dev <d@e.f>")
    (work / "tests" / "test_a.py").write_text("def test_f():\n    assert 1\n")
    _git(work, "commit", "-q", "-am", "Make the test of A.f stricter than before")
    (work / "pkg" / "a.py").write_text(PARENT.replace("return 1", "return 2").replace("return 3", "return 4"))
    _git(work, "commit", "-q", "-am", "Fix A.f returning the wrong value (#8)")  # the same query again
    newest = _git(work, "rev-parse", "HEAD").strip()
    pairs, entry = mp.mine_repo("example/tiny", "python", work / ".git", frozenset({"django/django"}),
                                max_commits=100, max_pairs=10, seen_queries=set())  # fmt: skip
    assert len(pairs) == 1, pairs
    p = pairs[0]
    assert p["commit"] == newest  # newest first; the older commit with the same query is the duplicate
    assert p["query"] == "Fix A.f returning the wrong value"
    assert p["positive_files"] == ["pkg/a.py"]
    assert p["positive_functions"] == ["pkg/a.py::A.g"]
    assert p["fixlike"] is True
    assert entry["commits_seen"] == 4
    assert entry["dropped"] == {"duplicate_query": 1, "no_source_change": 1, "root_commit": 1}
    with pytest.raises(mp.ExcludedRepository):
        mp.mine_repo("someone/django", "python", work / ".git", frozenset({"django/django"}),
                     max_commits=1, max_pairs=1, seen_queries=set())  # fmt: skip


def test_a_mirror_lacking_a_blob_skips_only_the_commits_that_need_it(tmp_path: Path) -> None:
    """Snapshots leave out files of 4 MB and more: the one-call log fails on them; mining goes on."""
    work = tmp_path / "w"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    _git(work, "config", "user.email", "dev@example.org")
    _git(work, "config", "user.name", "Dev")
    (work / "pkg").mkdir()
    (work / "pkg" / "a.py").write_text(PARENT)
    (work / "big.dat").write_text("x\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "Initial import of the package")
    (work / "big.dat").write_text("y\n")
    _git(work, "commit", "-q", "-am", "Refresh the large data file used by the loader")
    big = _git(work, "rev-parse", "HEAD:big.dat").strip()
    (work / "pkg" / "a.py").write_text(PARENT.replace("return 1", "return 2"))
    _git(work, "commit", "-q", "-am", "Fix A.f returning the wrong value for empty input")
    (work / ".git" / "objects" / big[:2] / big[2:]).unlink()  # the mirror lacks that blob
    pairs, entry = mp.mine_repo("example/tiny", "python", work / ".git", frozenset(),
                                max_commits=100, max_pairs=10, seen_queries=set())  # fmt: skip
    assert [p["positive_functions"] for p in pairs] == [["pkg/a.py::A.f"]]
    assert entry["dropped"] == {"missing_blob": 1, "root_commit": 1}
