"""The git history in the index (navigator.history) and the history leg: real git repositories,
real SQLite, the real search pipeline."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest

from navigator.history import MAX_FILES, index_history, parse_log
from navigator.indexer import index_root
from navigator.search import SemanticSearch
from semantic.history import history_files
from semantic.ranking import DEFAULT
from storage.db import Store, rebuild_database
from storage.query import Scope
from tests.store_repos import git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

LEXICAL = ("bm25", "symbols", "path")
WITH = dataclasses.replace(DEFAULT, history_leg=True)
WITHOUT = dataclasses.replace(DEFAULT, history_leg=False)
ISSUE = "the ledger shows the wrong invoice total after a refund"


def _repo(root: Path) -> Path:
    """A repository whose ``money/settle.py`` shares one common word with :data:`ISSUE` (the
    shop's files share more) but whose history shares many (three commits about ledger
    invoices changed it)."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    files = {
        "money/settle.py": "def settle(rows):\n    acc = 0  # the total\n    for r in rows:\n        acc += r.amt\n    return acc\n",
        "shop/cart.py": "def add_item(cart, item):\n    cart.total = cart.total + item.price  # wrong after a change\n    return cart\n",
        "shop/views.py": "def show_cart(cart):\n    return render(cart.items, total=cart.total)  # shows the total\n",
        "shop/refunds.py": "def refund_item(cart, item):\n    cart.total -= item.price  # the refund\n    return cart\n",
        "README.md": "A shop.\n",
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "add", ".")
    git(root, "commit", "-qm", "Initial shop")
    for i, msg in enumerate(
        [
            "Fixed ledger invoice total when a refund is booked",
            "Ledger: invoice totals round half up",
            "Refunds no longer double-count on the invoice",
        ]
    ):
        (root / "money/settle.py").write_text(files["money/settle.py"] + f"# {i}\n")
        git(root, "commit", "-qam", msg)
    return root


def _top(store: Store, config: object, **kw: object) -> list[str]:
    res = SemanticSearch(store, config=config).search(ISSUE, legs=LEXICAL, k=5, **kw)  # type: ignore[arg-type]
    return [h.path for h in res.items]


def test_the_history_leg_lifts_the_file_past_commits_describe(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r")
    with Store(tmp_path / "idx.db") as store:
        report = index_root(root, store)
        assert not report.notes
        assert store.get_meta("history_head") == git(root, "rev-parse", "HEAD")
        without = _top(store, WITHOUT)
        assert "money/settle.py" in without and without[0] != "money/settle.py"
        hits = SemanticSearch(store, config=WITH).search(ISSUE, legs=LEXICAL, k=5)
        paths = [h.path for h in hits.items]
        assert paths.index("money/settle.py") < without.index("money/settle.py")
        assert hits.items[paths.index("money/settle.py")].ranks.get("history") == 1
        heavy = dataclasses.replace(WITH, history_leg_weight=4.0)  # the weight is the history's say
        assert _top(store, heavy)[0] == "money/settle.py"
        # a scope the file is outside of: the history leg keeps to it
        assert "money/settle.py" not in _top(store, WITH, paths=["shop/"])


def test_history_is_read_incrementally_also_after_a_rewrite(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r")
    with Store(tmp_path / "idx.db") as store:
        first = index_history(root, store)
        assert first.reset and first.added == 4 and first.problem is None
        assert index_history(root, store).added == 0  # nothing new: git log is not read
        index_root(root, store)  # the files (history_commits lists indexed files only)
        (root / "shop/cart.py").write_text("def add_item(cart, item):\n    return cart\n")
        git(root, "commit", "-qam", "Cart keeps its items")
        more = index_history(root, store)
        assert (more.added, more.reset) == (1, False)
        found = store.history_commits('"cart"', limit=5, max_files=30, scope=Scope())
        assert [paths for _s, paths in found] == [["shop/cart.py"]]
        # the last commit rewritten: only the new one is read, what was read stays
        git(root, "reset", "-q", "--hard", "HEAD~1")
        (root / "shop/views.py").write_text("def show_cart(cart):\n    return cart\n")
        git(root, "commit", "-qam", "Views show the basket")
        again = index_history(root, store)
        assert (again.added, again.reset) == (1, False)
        assert store.history_commits('"basket"', limit=5, max_files=30, scope=Scope())
        assert store.history_commits('"cart" AND "keeps"', limit=5, max_files=30, scope=Scope())
        # the commit read to is gone from the object store: HEAD's history is read, none twice
        store.set_meta("history_head", "f" * 40)
        store.set_meta("history_sig", "")
        assert index_history(root, store).added == 0 and store.get_meta("history_head") == git(
            root, "rev-parse", "HEAD"
        )


def test_a_budgeted_refresh_reads_the_history_over_several_runs(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r")
    for i in range(40):
        (root / "shop/cart.py").write_text(f"def add_item(cart, item):\n    return {i}\n")
        git(root, "commit", "-qam", f"Cart step {i}")
    with Store(tmp_path / "idx.db") as store:
        seen = []
        for _ in range(200):  # bounded: each run reads for at most a millisecond
            index_history(root, store, budget_s=0.001)
            seen.append(store.get_meta("history_seen"))
            if seen[-1] == "done":
                break
        assert seen[-1] == "done"
        assert store.stats().history_commits == 44  # every commit once, however many runs it took
        (root / "shop/views.py").write_text("def show_cart(cart):\n    return None\n")
        git(root, "commit", "-qam", "Views show nothing")
        assert index_history(root, store, budget_s=0.001).added == 1  # new commits: never budgeted


def test_an_unmoved_head_costs_no_git_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path / "r")
    with Store(tmp_path / "idx.db") as store:
        head = index_history(root, store).head
        monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))  # no git to run
        assert index_history(root, store) == index_history(root, store)
        assert index_history(root, store).head == head and index_history(root, store).problem is None
        monkeypatch.undo()
        (root / "shop/cart.py").write_text("def add_item(cart, item):\n    return None\n")
        git(root, "commit", "-qam", "Cart forgets")  # HEAD moved: read again
        assert index_history(root, store).added == 1
        git(root, "checkout", "-q", "-b", "topic", "HEAD~2")  # another branch: HEAD moved, nothing new
        moved = index_history(root, store)
        assert moved.head == git(root, "rev-parse", "HEAD") and (moved.added, moved.reset) == (0, False)


def test_no_history_outside_the_root_nor_without_git(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r")
    # a root inside a larger repository: its commits describe files outside it, none is read
    with Store(tmp_path / "sub.db") as store:
        report = index_root(root / "money", store)
        assert not report.notes and store.get_meta("history_head") is None
        assert store.history_commits('"ledger"', limit=5, max_files=30, scope=Scope()) == []
    # a folder that is no repository
    plain = tmp_path / "plain"
    shutil.copytree(root, plain, ignore=shutil.ignore_patterns(".git"))
    with Store(tmp_path / "plain.db") as store:
        assert not index_root(plain, store).notes
        assert _top(store, WITH) == _top(store, WITHOUT)  # the leg is empty, nothing else moves


def test_git_missing_or_refusing_is_a_note_not_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path / "r")
    with Store(tmp_path / "idx.db") as store:
        monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
        report = index_root(root, store)
        assert report.files == 5 and any("git history" in n for n in report.notes)
        monkeypatch.undo()
        assert _top(store, WITH)  # search works without a history
        # GIT_DIR pointing at another repository is not followed
        other = _repo(tmp_path / "other")
        git(other, "commit", "-q", "--allow-empty", "-m", "unrelated")
        head = git(root, "rev-parse", "HEAD")
        monkeypatch.setenv("GIT_DIR", str(other / ".git"))
        assert index_history(root, store).head == head


def test_a_partial_clone_is_not_read(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r")
    git(root, "config", "remote.origin.url", "https://example.invalid/r.git")
    git(root, "config", "remote.origin.promisor", "true")  # its missing objects would be fetched
    with Store(tmp_path / "idx.db") as store:
        report = index_root(root, store)
        assert report.files == 5 and any("partial clone" in n for n in report.notes)
        assert store.get_meta("history_head") is None


def test_a_damaged_object_store_keeps_what_was_read(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r")
    first = git(root, "rev-list", "--max-parents=0", "HEAD")
    tree = git(root, "rev-parse", f"{first}^{{tree}}")
    obj = root / ".git" / "objects" / tree[:2] / tree[2:]
    os.chmod(obj, 0o644)
    obj.unlink()  # the first commit's tree is gone: git log stops there
    with Store(tmp_path / "idx.db") as store:
        report = index_root(root, store)
        assert report.files == 5 and any("git history" in n for n in report.notes)
        # git stopped early: what it read before the damage is kept (the newest commit)
        assert store.history_commits('"refunds"', limit=5, max_files=30, scope=Scope())


def test_a_first_run_that_dies_before_its_walk_is_recorded_starts_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path / "r")
    with Store(tmp_path / "idx.db") as store:
        real = store.set_meta

        def dies(key: str, value: str) -> None:
            if key == "history_start":
                raise KeyboardInterrupt  # killed between the first run's writes
            real(key, value)

        monkeypatch.setattr(store, "set_meta", dies)
        with pytest.raises(KeyboardInterrupt):
            index_history(root, store)
        monkeypatch.undo()
        assert store.get_meta("history_head") is None  # nothing half-written
        assert index_history(root, store).added == 4


def test_salvage_reads_the_history_again(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r")
    db = tmp_path / "idx.db"
    with Store(db) as store:
        index_root(root, store)
    rebuild_database(db)
    with Store(db) as store:
        assert store.get_meta("history_head") is None
        index_root(root, store)
        assert store.history_commits('"ledger"', limit=5, max_files=30, scope=Scope())


def _record(sha: str, name: str, body: str, *paths: str) -> bytes:
    files = ("\n" + "\x00".join(paths) + "\x00") if paths else ""
    return f"\x01{sha}\x00{name}\x00{name}@example.com\x00{body}\x00{files}".encode()


def test_parse_log_leaves_out_bots_sweeps_and_broken_records() -> None:
    a, b, c, d = ("a" * 40, "b" * 40, "c" * 40, "d" * 40)
    out = b"".join(
        [
            _record(a, "ann", "Fix the ledger\n\nSigned-off-by: ann <ann@example.com>\n", "money/settle.py"),
            _record(b, "dependabot[bot]", "Bump requests from 1 to 2", "requirements.txt"),
            _record(c, "bob", "Reformat everything", *[f"f{i}.py" for i in range(MAX_FILES + 1)]),
            _record(d, "cy", "message with a \x01 separator inside", "x.py"),
            _record("e" * 40, "dee", "Cut short by a failure", "y.py"),
        ]
    )
    got = list(parse_log(out))
    assert (
        [g.sha for g in got][0] == a
        and got[0].message == "Fix the ledger"
        and got[0].paths == ("money/settle.py",)
    )
    assert b not in {g.sha for g in got} and c not in {g.sha for g in got}
    assert all(len(g.sha) == 40 for g in got)
    assert "e" * 40 in {g.sha for g in got}
    assert "e" * 40 not in {g.sha for g in parse_log(out, complete=False)}  # a cut output's last record


def test_history_files_shares_a_commits_score_among_its_files() -> None:
    ranked = history_files(
        [(3.0, ["a.py"]), (4.0, ["b.py", "c.py"]), (1.0, ["c.py"]), (0.0, ["z.py"])], limit=10
    )
    assert ranked == ["a.py", "c.py", "b.py"]
    assert history_files([], limit=5) == [] and history_files([(2.0, [])], limit=5) == []


def test_status_says_how_much_history_the_index_holds(tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from navigator.frontends.cli import main

    root = _repo(tmp_path / "r")

    def nav(*args: str) -> str:
        result = CliRunner().invoke(main, ["-C", str(root), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.stdout

    head = git(root, "rev-parse", "HEAD")
    assert f"git history: 4 commits added, to {head[:12]}" in nav("index")
    assert "git history" not in nav("index")  # nothing new
    assert json.loads(nav("index", "--json"))["history_head"] == head
    assert f"history:  4 commits, to {head[:12]}" in nav("status")
    got = json.loads(nav("status", "--json"))
    assert got["history_commits"] == 4 and got["history_head"] == git(root, "rev-parse", "HEAD")
