"""``nav grep`` against its oracle, ripgrep, on the same tree: generated patterns over a tree of
ripgrep's hard cases, incremental updates, the CLI, the daemon, and hostile input."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from grep_oracle import answer_set, make_tree, nav_flags, patterns, rg_lines, same_answer

from navigator import grep as engine
from navigator import grep_index, grep_plan
from navigator.api import Navigator
from navigator.frontends.client import DaemonClient
from navigator.paths import daemon_paths
from storage.errors import UsageError
from storage.ngrams import GrepStore

pytestmark = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")


def nav_lines(
    nav: Navigator, pattern: str, flags: tuple[str, ...], **kw: object
) -> tuple[bool, set[tuple[str, int, str]]]:
    """(refused, {(path, line, text)}) of nav's answer."""
    try:
        r = nav.grep(pattern, limit=None, **nav_flags(flags), **kw)  # type: ignore[arg-type]
    except UsageError:
        return True, set()
    assert r.complete, r.reason
    return False, answer_set(r.items, flags)


def textual(root: Path, lines: set[str]) -> set[str]:
    """``lines`` without those of files holding a NUL byte, where ripgrep's answer varies from
    run to run (see :func:`grep_oracle.same_answer`; the oracle tests compare those)."""
    binary = {p.name for p in root.iterdir() if p.is_file() and b"\0" in p.read_bytes()}
    return {
        x
        for x in lines
        if not any(x.startswith(b) and x[len(b) : len(b) + 1] in (":", "-", "") for b in binary)
    }


def assert_same(nav: Navigator, root: Path, pattern: str, flags: tuple[str, ...] = ()) -> None:
    rc, want = rg_lines(root, pattern, flags)
    refused, got = nav_lines(nav, pattern, flags)
    assert refused == (rc == 2), (pattern, flags)
    assert same_answer(root, want, got), (pattern, flags, sorted(want - got)[:3], sorted(got - want)[:3])


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("grep") / "repo"
    make_tree(root)
    return root.resolve()


@pytest.fixture(scope="module")
def nav(tree: Path) -> Iterator[Navigator]:
    with Navigator(tree, refresh=False) as n:
        yield n


def test_generated_patterns_equal_rg(nav: Navigator, tree: Path) -> None:
    """The oracle: 2,000 generated patterns, every difference in (path, line, text) counted."""
    diffs = []
    narrowed = 0
    for pattern, flags in patterns(tree, count=2000):
        rc, want = rg_lines(tree, pattern, flags)
        refused, got = nav_lines(nav, pattern, flags)
        narrowed += grep_plan.plan(pattern, fixed="-F" in flags, ignore_case="-i" in flags) != grep_plan.ALL
        if refused != (rc == 2) or not same_answer(tree, want, got):
            diffs.append((pattern, flags, [str(x)[:100] for x in sorted(want ^ got)[:2]]))
    assert diffs == [], f"{len(diffs)} differences: {diffs[:5]}"
    assert narrowed > 1200  # the index narrowed most of them: the comparison exercised it


@pytest.mark.parametrize(
    "flags,kw",
    [
        (("-l",), {"files_only": True}),
        (("-c",), {"count": True}),
        (("-m", "1"), {"max_count": 1}),
        (("-g", "*.py"), {"globs": ("*.py",)}),
        (("-g", "!src/**"), {"globs": ("!src/**",)}),
        (("-t", "py"), {"types": ("py",)}),
        (("-t", "md", "--", "docs", "lib", "ignored.txt"), {"paths": ("docs", "lib", "ignored.txt")}),
    ],
)
def test_options_equal_rg(nav: Navigator, tree: Path, flags: tuple[str, ...], kw: dict[str, object]) -> None:
    for pattern, pflags in patterns(tree, count=90, seed=3):
        if set(pflags) & {"-l", "-c", "-g", "-t", "-m"}:
            continue  # this test adds its own options
        args = ["rg", "--no-config", "--no-heading", "--with-filename", "-n", *pflags]
        rg_paths: list[str] = []
        if "--" in flags:
            rg_paths = list(flags[flags.index("--") + 1 :])
            args += list(flags[: flags.index("--")])
        else:
            args += list(flags)
        proc = subprocess.run(
            [*args, "-e", pattern, "--", *rg_paths], cwd=tree, capture_output=True, check=False
        )
        if "-t" in flags and "--" in flags:
            kw = {**kw, "types": ("md",)}
        try:
            r = nav.grep(pattern, limit=None, **{**nav_flags(pflags), **kw})  # type: ignore[arg-type]
        except UsageError:
            assert proc.returncode == 2
            continue
        lines = {
            x for x in proc.stdout.decode("utf-8", "replace").split("\n") if x and "binary file" not in x
        }
        if kw.get("files_only"):
            got = {h.path for h in r.items}
        elif kw.get("count"):
            got = {f"{h.path}:{h.count}" for h in r.items}
        else:
            got = {f"{h.path}:{h.line}:{h.text}" for h in r.items}
        assert textual(tree, got) == textual(tree, lines), (pattern, pflags, flags, sorted(got ^ lines)[:3])


def test_context_lines_equal_rg(nav: Navigator, tree: Path) -> None:
    for pattern in ("retry", "createSalesOrder", "Kelvin"):
        proc = subprocess.run(
            ["rg", "--no-config", "--no-heading", "--with-filename", "-n", "-B", "1", "-A", "2", "-e", pattern],
            cwd=tree, capture_output=True, check=True,
        )  # fmt: skip
        want = {
            x
            for x in proc.stdout.decode("utf-8", "replace").split("\n")
            if x and x != "--" and "binary file" not in x
        }
        r = nav.grep(pattern, before=1, after=2, limit=None)
        got = {
            f"{h.path}{'-' if h.context else ':'}{h.line}{'-' if h.context else ':'}{h.text}" for h in r.items
        }
        assert textual(tree, got) == textual(tree, want)


def test_plan_narrows_soundly() -> None:
    assert grep_plan.plan("createSalesOrder") != grep_plan.ALL
    assert grep_plan.plan(".") == grep_plan.ALL
    assert grep_plan.plan(r"\w+") == grep_plan.ALL
    assert grep_plan.plan("(?i)foo") == grep_plan.ALL  # inline flags: not read, so every file
    assert grep_plan.plan("foo|.") == grep_plan.ALL
    # under -i the trigrams of k and s cannot narrow (KELVIN SIGN, LONG S match them)
    assert grep_plan.plan("kks", ignore_case=True) == grep_plan.ALL
    assert grep_plan.plan("order", ignore_case=True) != grep_plan.ALL
    assert grep_plan.plan("a.b", fixed=True) == ("tri", grep_plan.trigram(b"a.b"))


def test_index_is_incremental(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_tree(root, files=10)
    with Navigator(root) as nav:
        assert_same(nav, root, "createSalesOrder")
        index = nav._handle.grep_index()
        target = next(p for p in sorted(root.glob("src/*")) if p.is_file())
        target.write_text("brandNewIdentifier here\n", encoding="utf-8")
        report = index.update()
        assert report.written == 1 and report.removed == 0
        assert_same(nav, root, "brandNewIdentifier")
        # a rename: the old path is gone, the new one found
        moved = root / "docs" / "moved.txt"
        moved.parent.mkdir(exist_ok=True)
        target.rename(moved)
        assert_same(nav, root, "brandNewIdentifier")
        assert {h.path for h in nav.grep("brandNewIdentifier").items} == {"docs/moved.txt"}
        moved.unlink()
        assert nav.grep("brandNewIdentifier").items == ()
        # touched, same content: nothing rewritten
        f = root / "unicode.txt"
        os.utime(f, None)
        assert index.update().written == 0
        # a newly ignored file drops out, as rg drops it
        (root / ".gitignore").write_text("*.txt\n", encoding="utf-8")
        assert_same(nav, root, "retry")
        assert_same(nav, root, "Kelvin", ("-i",))


def test_watcher_paths_update_only_those(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_tree(root, files=6)
    with Navigator(root, refresh=False) as nav:
        nav.grep("warm")
        (root / "nonl.txt").write_text("watcherSawThis\n", encoding="utf-8")
        nav.grep_changed(["nonl.txt"])
        assert [h.path for h in nav.grep("watcherSawThis").items] == ["nonl.txt"]
        (root / "brand_new.py").write_text("watcherSawThis too\n", encoding="utf-8")
        nav.grep_changed(["brand_new.py"])  # new: ripgrep's walk decides it is searched
        assert {h.path for h in nav.grep("watcherSawThis").items} == {"nonl.txt", "brand_new.py"}
        # a folder renamed: the watcher may name only the folders
        (root / "docs").mkdir(exist_ok=True)
        (root / "docs" / "guide.txt").write_text("retry the guide\n", encoding="utf-8")
        nav.grep_changed(["docs/guide.txt"])
        assert "docs/guide.txt" in {h.path for h in nav.grep("retry the guide").items}
        (root / "docs").rename(root / "manual")
        nav.grep_changed(["docs", "manual"])
        assert_same(nav, root, "retry")
        assert not any(h.path.startswith("docs/") for h in nav.grep("e", limit=None).items)


def test_compaction_keeps_answers_and_bounds_segments(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_tree(root, files=4)
    with Navigator(root) as nav:
        f = root / "nonl.txt"
        for i in range(3 * engine.__dict__.get("MAX_SEGMENTS", 8) + 5):
            f.write_text(f"version{i} of the file\n", encoding="utf-8")
            hits = nav.grep(f"version{i} ").items
            assert [h.path for h in hits] == ["nonl.txt"]
        store = nav._handle.grep_index().store
        assert store.stats()["segments"] <= 9
        assert nav.grep("version0 ").items == ()
        assert_same(nav, root, "createSalesOrder")


def test_size_and_streaming(
    tree: Path, nav: Navigator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The index stays within ~3x the text it covers, and is built in segments of bounded size."""
    nav.grep("warm")
    stats = nav._handle.grep_index().store.stats()
    assert stats["db_bytes"] <= 3 * stats["text_bytes"] + 200_000  # SQLite's fixed pages on a tiny tree
    root = tmp_path / "repo"
    make_tree(root, files=30)
    monkeypatch.setattr("storage.ngrams.FLUSH_PAIRS", 500)
    monkeypatch.setattr("storage.ngrams.MAX_SEGMENTS", 10_000)
    store = GrepStore(tmp_path / "g.db")
    index = engine.GrepIndex(root, tmp_path / "nav")
    index._store = store
    index.update()
    assert store.stats()["segments"] > 5  # flushed as it went, not held whole
    with Navigator(root, refresh=False) as n2:
        n2._handle.thread.grep = index
        assert_same(n2, root, "createSalesOrder")
        assert_same(n2, root, "retry|Order", ("-i",))


def test_files_too_big_to_index_are_still_searched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "repo"
    make_tree(root, files=4)
    monkeypatch.setattr(grep_index, "MAX_INDEX_BYTES", 1000)
    with Navigator(root) as nav:
        assert_same(nav, root, "createSalesOrder")  # long.txt and bin_late.dat are over the cap
        assert any(h.path == "long.txt" for h in nav.grep("createSalesOrder").items)


def test_hostile_input(nav: Navigator, tree: Path) -> None:
    with pytest.raises(UsageError, match="characters"):
        nav.grep("a" * (engine.MAX_PATTERN_CHARS + 1))
    with pytest.raises(UsageError, match=r"cannot use the pattern `\(unclosed`"):
        nav.grep("(unclosed")
    with pytest.raises(UsageError, match="NUL"):
        nav.grep("a\0b")
    with pytest.raises(UsageError, match="max_count"):
        nav.grep("a", max_count=0)
    r = nav.grep("(a|aa)*b.{0,50}x{1,20}", deadline_s=1e-9)
    assert not r.complete and "deadline" in (r.reason or "")
    r = nav.grep("e", limit=3)
    assert len([h for h in r.items if not h.context]) == 3 and not r.complete and "limit" in (r.reason or "")


def _nav(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "navigator.frontends.entry", "-C", str(root), *args],
        capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=120, check=False,
    )  # fmt: skip


def test_cli(tree: Path) -> None:
    bounded = _nav(tree, "grep", "--no-daemon", "--limit", "5", "-w", "createSalesOrder")
    assert len(bounded.stdout.splitlines()) == 5 and "limit reached" in bounded.stderr
    ok = _nav(tree, "grep", "--no-daemon", "--limit", "0", "-w", "createSalesOrder")
    assert ok.returncode == 0
    lines = ok.stdout.splitlines()
    assert lines and all(len(x.split(":", 3)) == 4 for x in lines)
    rg = subprocess.run(
        ["rg", "--no-config", "-n", "-w", "createSalesOrder"], cwd=tree, capture_output=True, text=True
    )
    want = {x for x in rg.stdout.splitlines() if "binary file" not in x}
    assert textual(tree, {":".join(x.split(":", 3)[i] for i in (0, 1, 3)) for x in lines}) == textual(
        tree, want
    )
    none = _nav(tree, "grep", "--no-daemon", "noSuchThingAnywhere")
    assert none.returncode == 1 and none.stdout == ""
    bad = _nav(tree, "grep", "--no-daemon", "(x")
    assert bad.returncode == 2 and "pattern `(x`" in bad.stderr
    js = _nav(tree, "grep", "--no-daemon", "--json", "-c", "retry")
    data = json.loads(js.stdout)
    assert data["complete"] and all(i["count"] >= 1 for i in data["items"])
    unknown = _nav(tree, "grep", "--frobnicate", "x")
    assert unknown.returncode == 2 and "--frobnicate" in unknown.stderr


def test_cli_fast_path_imports(tree: Path) -> None:
    """`nav grep` imports no click, model, language-server client or sqlite_utils."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "navigator.frontends.entry", "-C", str(tree), "grep", "--no-daemon", "retry"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {
        line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")
    }
    for heavy in ("click", "torch", "multilspy", "sqlite_utils", "sentence_transformers", "navigator.api"):
        assert heavy not in imported, heavy


@pytest.fixture
def daemon_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("NAV_DAEMON_NO_EMBED", "1")
    monkeypatch.setenv("NAV_DAEMON_NO_WARM", "1")
    root = (tmp_path / "repo").resolve()
    make_tree(root, files=8)
    yield root
    info = daemon_paths(root).info
    if info.exists():  # never leave a daemon behind
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(json.loads(info.read_text())["pid"]), signal.SIGKILL)


def test_daemon_answers_grep_and_sees_edits(daemon_root: Path) -> None:
    root = daemon_root
    client = DaemonClient(root)
    try:
        r = client.grep("createSalesOrder", limit=None)
        rc, want = rg_lines(root, "createSalesOrder", ())
        assert same_answer(root, want, {(h.path, h.line, h.text) for h in r.items})
        assert client.daemon_status()["watching"]
        syncs = client.daemon_status()["syncs"]
        (root / "nonl.txt").write_text("seenByTheDaemon\n", encoding="utf-8")
        deadline = time.monotonic() + 30
        while client.daemon_status()["syncs"] <= syncs:
            assert time.monotonic() < deadline, "the watcher never re-indexed"
            time.sleep(0.02)  # polling the daemon's own counter over RPC, bounded
        assert [h.path for h in client.grep("seenByTheDaemon").items] == ["nonl.txt"]
        # the CLI's fast path asks the same daemon
        out = _nav(root, "grep", "seenByTheDaemon")
        assert out.returncode == 0 and out.stdout.startswith("nonl.txt:1:1:seenByTheDaemon")
        with pytest.raises(UsageError, match="pattern"):
            client.grep("(broken")
    finally:
        client.stop()


def test_word_literals_scanned_in_process_equal_rg(tmp_path: Path) -> None:
    """-w on a literal is decided here where the neighbours are ASCII, by rg where they are not."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "w.txt").write_bytes(
        b"foo\nfoo_bar\n_foo\nfoo1\n(foo)\nxfoo foo\nfoo\r\n-foo-\n"
        + "éfoo\nfooé\nfoo\u00a0\n".encode()
        + b"\xfffoo\nfoo\xff\nbar foo"
    )
    with Navigator(root) as nav:
        for pattern in ("foo", "(foo)", "foo foo", "-foo", "foo\r"):
            for flags in ((), ("-w",), ("-F", "-w"), ("-F",)):
                if "\r" in pattern and "-F" not in flags:
                    continue
                assert_same(nav, root, pattern, flags)
        assert engine.plain_literal(engine.GrepOptions("foo", word=True)) == b"foo"


def test_hits_carry_their_enclosing_symbol(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "m.py").write_text(
        "class Order:\n    def total(self):\n        return needle_here\n\nneedle_here = 1\n",
        encoding="utf-8",
    )
    with Navigator(root) as nav:
        nav.index()
        hits = {h.line: h.symbol for h in nav.grep("needle_here", symbols=True).items}
        assert hits == {3: "Order.total", 5: None}
        assert all(h.symbol is None for h in nav.grep("needle_here").items)  # off unless asked


def test_an_unusable_index_folder_degrades_to_rg(tmp_path: Path) -> None:
    """`.nav` a symlink (refused): the answer is still rg's, and says the index was not used."""
    root = tmp_path / "repo"
    make_tree(root, files=4)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / ".nav").symlink_to(elsewhere)
    with Navigator(root) as nav:
        assert_same(nav, root, "createSalesOrder")
        r = nav.grep("createSalesOrder")
        assert r.source == "rg" and any("cannot be used" in n for n in r.notes)
    out = _nav(root, "grep", "--no-daemon", "-c", "retry")
    assert out.returncode == 0 and "cannot be used" in out.stderr
    assert not list(elsewhere.iterdir())


def test_filters_that_leave_no_file_are_refused_as_rg_refuses(nav: Navigator, tree: Path) -> None:
    """ripgrep exits 2 ("No files were searched") when -t/-g leave nothing: nav refuses too,
    whether the pattern narrows through the index or ripgrep walks the tree itself."""
    for pattern in (".", "createSalesOrder"):
        for flags, kw in (
            (("-t", "go"), {"types": ("go",)}),
            (("-g", "*.nothing"), {"globs": ("*.nothing",)}),
        ):
            rc, _ = rg_lines(tree, pattern, flags)
            assert rc == 2
            with pytest.raises(UsageError, match="filters"):
                nav.grep(pattern, **kw)  # type: ignore[arg-type]


def test_daemon_grep_waits_for_the_grep_index_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A re-index brings the grep index up to date first: a grep is answered, fresh, while the
    symbol index (the parse of a first index of millions of lines) is still at work."""
    from navigator.frontends.daemon import Daemon

    root = tmp_path / "repo"
    make_tree(root, files=4)
    d = Daemon(root, watch=False, embed=False, warm_servers=False)
    try:
        d.nav.grep("warm")  # the grep index is built
        entered, release = threading.Event(), threading.Event()

        def slow_index(**kw: object) -> None:
            entered.set()
            release.wait(60)

        monkeypatch.setattr(d.nav, "index", slow_index)
        (root / "nonl.txt").write_text("freshForGrep\n", encoding="utf-8")
        d._changed = {str(root / "nonl.txt")}  # what the watcher saw
        d._dirty = True
        d.watching = True  # requests wait for freshness, as with a watcher,
        d.nav.refresh = False  # which keeps the indexes fresh instead of a walk per query
        sync = threading.Thread(target=d._sync, daemon=True)
        sync.start()
        assert entered.wait(30)
        reply = d._dispatch("grep", {"pattern": "freshForGrep"})
        assert sync.is_alive() and not release.is_set()  # answered while the symbol index runs
        assert [i["path"] for i in reply["value"]["items"]] == ["nonl.txt"]
        assert d.wait_fresh(timeout_s=0.05) is False  # the other verbs still wait for it
        release.set()
        sync.join(30)
        assert d.wait_fresh(timeout_s=5)
    finally:
        release.set()
        d.nav.close()


def _open_grep_db_fds() -> int:
    return sum(
        1 for fd in os.listdir("/proc/self/fd") if "grep.db" in os.path.realpath(f"/proc/self/fd/{fd}")
    )


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts this process's descriptors in /proc")
def test_a_thread_per_request_reuses_the_grep_index_of_finished_ones(tmp_path: Path) -> None:
    """The daemon answers each connection on a thread of its own: each request opened a grep.db
    connection of its own that was never closed (65 descriptors after 31 CLI greps)."""
    root = tmp_path / "repo"
    make_tree(root, files=4)
    with Navigator(root, refresh=False) as nav:
        nav.grep("warm")
        before = _open_grep_db_fds()
        for _ in range(20):
            t = threading.Thread(target=nav.grep, args=("createSalesOrder",))
            t.start()
            t.join(60)
        assert _open_grep_db_fds() <= before + 2  # one more connection at most (the threads' one)
        assert_same(nav, root, "createSalesOrder")


def test_grep_does_not_wait_for_a_symbol_index_run(tmp_path: Path) -> None:
    """An index run holds the handle's lock for its whole length (minutes on a big tree); a
    grep from a new thread (a daemon request) waited for it only to open its grep index."""
    root = tmp_path / "repo"
    make_tree(root, files=4)
    with Navigator(root, refresh=False) as nav:
        nav.grep("warm")
        held, release = threading.Event(), threading.Event()

        def index_run() -> None:
            with nav._handle.lock:
                held.set()
                release.wait(120)

        runner = threading.Thread(target=index_run, daemon=True)
        runner.start()
        assert held.wait(30)
        answers: list[int] = []
        asker = threading.Thread(
            target=lambda: answers.append(len(nav.grep("createSalesOrder").items)), daemon=True
        )
        asker.start()
        asker.join(60)  # a bound for the failure case: before the fix it waited for `release`
        try:
            assert answers and answers[0] > 0 and not release.is_set()
        finally:
            release.set()
            runner.join(30)
