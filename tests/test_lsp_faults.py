"""A server that hangs cannot hang nav: the deadline answers, and nothing is left running."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from fake_servers import ScriptServer, script_server

import lsp.registry as registry
from lsp.pool import Position, ServerPool

HangingServer = script_server("hanging", "hanging_server.py")
BusyServer = script_server("busy", "busy_server.py")


def test_hanging_server_answers_incomplete_at_the_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.SERVERS, "python", (HangingServer,))
    (tmp_path / "a.py").write_text("x = 1\n")
    with ServerPool() as pool:
        started = time.monotonic()
        answer = pool.query(tmp_path, "python", "references", [Position(str(tmp_path / "a.py"), 0, 0)], deadline_s=1.0)
        assert time.monotonic() - started < 10
        assert not answer.complete and answer.reason == "deadline reached" and not answer.answered
        info = pool.session_info(tmp_path, "python")
        assert info and info["alive"]
        pid = info["pid"]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the pool's close() killed its process group


def test_a_hung_server_is_restarted_and_a_talking_one_is_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that answers nothing and says nothing is killed and started afresh by the next
    query once ``hung_after`` requests in a row went unanswered; the answer before says so."""
    monkeypatch.setitem(registry.SERVERS, "python", (HangingServer,))
    (tmp_path / "a.py").write_text("x = 1\n")
    where = [Position(str(tmp_path / "a.py"), 0, 0)]
    with ServerPool(hung_after=2, hung_silent_s=0.5) as pool:
        first = pool.query(tmp_path, "python", "references", where, deadline_s=0.6)
        assert first.reason == "deadline reached"
        pid = pool.session_info(tmp_path, "python")["pid"]  # type: ignore[index]
        second = pool.query(tmp_path, "python", "references", where, deadline_s=0.6)
        assert "hanging answered none of the last 2 requests" in (second.reason or "")
        assert pool.session_info(tmp_path, "python")["pid"] == pid  # type: ignore[index]
        pool.query(tmp_path, "python", "references", where, deadline_s=0.6)
        restarted = pool.session_info(tmp_path, "python")
        assert restarted and restarted["alive"] and restarted["pid"] != pid
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)

    monkeypatch.setitem(registry.SERVERS, "python", (BusyServer,))
    with ServerPool(hung_after=2, hung_silent_s=2.0) as pool:
        pids = set()
        for _ in range(4):
            answer = pool.query(tmp_path, "python", "references", where, deadline_s=0.6)
            assert answer.reason and answer.reason.startswith("deadline reached")
            pids.add(pool.session_info(tmp_path, "python")["pid"])  # type: ignore[index]
        assert len(pids) == 1  # it logs what it is doing: slow, not hung, never restarted


def test_missing_server_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry.Gopls, "locate", lambda self: None)
    with ServerPool() as pool:
        answer = pool.query(tmp_path, "go", "references", [Position(str(tmp_path / "x.go"), 0, 0)], deadline_s=2.0)
    assert not answer.answered and "apt-get install -y golang-go gopls" in (answer.reason or "")


class LoadingServer(ScriptServer):
    name = "slowpoke"
    script = "loading_server.py"
    ready_after_initialize = False

    def is_ready_event(self, method: str, params: object) -> bool:
        return method == "window/logMessage" and "Found" in str(params)


class FinishingServer(LoadingServer):
    args = ("--finish",)


def test_an_answer_that_runs_out_waiting_for_loading_says_how_far_it_got(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry.SERVERS, "python", (LoadingServer,))
    (tmp_path / "a.py").write_text("x = 1\n")
    with ServerPool() as pool:
        answer = pool.query(tmp_path, "python", "references", [Position(str(tmp_path / "a.py"), 0, 0)], deadline_s=2.0)
    assert not answer.complete and not answer.answered
    reason = answer.reason or ""
    assert reason.startswith("server still indexing (slowpoke loading for "), reason
    assert reason.endswith('; last: "Searching for source files")'), reason


def test_an_answer_that_waited_for_loading_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.SERVERS, "python", (FinishingServer,))
    (tmp_path / "a.py").write_text("x = 1\n")
    with ServerPool() as pool:
        answer = pool.query(tmp_path, "python", "references", [Position(str(tmp_path / "a.py"), 0, 0)], deadline_s=20.0)
    assert answer.complete and answer.answered, answer.reason
    assert any(n.startswith("waited ") and n.endswith("s for slowpoke to load the workspace") for n in answer.notes), answer.notes


class MuteServer(ScriptServer):
    """A server that never answers ``initialize``: its session stays starting."""

    name = "mute"

    def launch(self, root: Path, binary: str) -> registry.Launch:
        return registry.Launch(cmd=(binary, "-c", "import time; time.sleep(600)"), cwd=str(root))


def test_a_warm_up_the_pool_s_close_cuts_short_answers_false(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A daemon that stops closes its pool while a server is still starting: the warm-up waiting
    for it answers False (the close's cancellation reached the warming thread as a CancelledError,
    a traceback in the daemon's log) and nothing is left running."""
    import threading

    from faultkit import running_in, wait_until

    monkeypatch.setitem(registry.SERVERS, "python", (MuteServer,))
    (tmp_path / "a.py").write_text("x = 1\n")
    pool = ServerPool()
    got: list[object] = []

    def warm() -> None:
        try:
            got.append(pool.warm(tmp_path, "python", deadline_s=120.0))
        except BaseException as exc:  # noqa: BLE001 - what the test is about
            got.append(exc)

    thread = threading.Thread(target=warm)
    thread.start()
    try:
        wait_until(lambda: running_in(tmp_path.resolve()), 60, "the server to be launched")
    finally:
        pool.close()
    thread.join(timeout=60)
    assert not thread.is_alive() and got == [False], got
    wait_until(lambda: not running_in(tmp_path.resolve()), 30, "the server to be gone")
