"""The daemon's background embedding respects the machine (issue 9): it yields to queries, one of the
user's daemons embeds at a time, and an idle daemon gives the model's memory back. Real daemon
processes and the real default model; waits are on the daemon's own reported state, bounded."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from navigator.frontends.client import DaemonClient
from navigator.frontends.daemon import Daemon
from navigator.paths import daemon_paths

FILES = {
    "orders.py": """\
        class Order:
            def total(self) -> int:
                return 0


        def create_sales_order(customer: str) -> Order:
            \"\"\"Make a new order for a customer.\"\"\"
            return Order()
        """,
    "billing.py": "def invoice(order):\n    return order.total()\n",
}


@pytest.fixture
def root(
    make_repo: Callable[[dict[str, str]], Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Path]:
    monkeypatch.delenv("NAV_DAEMON_NO_EMBED", raising=False)  # these tests are about embedding
    monkeypatch.setenv("NAV_DAEMON_NO_WARM", "1")
    monkeypatch.setenv("NAV_RUNTIME_DIR", str(tmp_path / "runtime"))  # this test's own user lock
    r = make_repo(FILES).resolve()
    yield r
    info = daemon_paths(r).info
    if info.exists():  # never leave a daemon behind
        with contextlib.suppress(ProcessLookupError, ValueError, KeyError):
            os.kill(int(json.loads(info.read_text())["pid"]), signal.SIGKILL)


def wait_for(
    client: DaemonClient, what: str, ok: Callable[[dict[str, Any]], bool], timeout_s: float = 180
) -> dict[str, Any]:
    """Wait for the daemon to report a state (its own status over RPC, which does not count as use)."""
    deadline = time.monotonic() + timeout_s
    while True:
        status = client.daemon_status()
        if ok(status):
            return status
        assert time.monotonic() < deadline, f"the daemon never reported {what}: {status}"
        time.sleep(0.1)  # polling the daemon's own state, bounded


def complete(status: dict[str, Any]) -> bool:
    v = status.get("vectors")
    return bool(v) and v.split("/")[0] == v.split("/")[1] and status["embedding"] == "done"


def test_one_daemon_of_the_user_embeds_at_a_time(root: Path, tmp_path: Path) -> None:
    lock = tmp_path / "runtime" / "embed.lock"
    lock.parent.mkdir(parents=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another root's daemon is embedding (as far as this one can tell)
    client = DaemonClient(root)
    try:
        status = wait_for(client, "waiting", lambda s: s["embedding"] == "waiting for another nav daemon")
        assert status["vectors"] is None  # it has not embedded a thing
        assert client.search("make a new order", k=3).items  # and queries answer meanwhile
        fcntl.flock(fd, fcntl.LOCK_UN)  # the other one is done
        wait_for(client, "complete vectors", complete)
    finally:
        os.close(fd)
        client.stop()


def test_an_idle_daemon_gives_the_model_back_and_reloads_it(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAV_MODEL_IDLE_S", "1")
    client = DaemonClient(root)
    try:
        loaded = wait_for(client, "complete vectors", complete)
        from semantic.embed import load_embedder, runtime_of

        # the runtime it embeds on is the one this machine chooses (int8 unless torch measured faster)
        assert loaded["embed_runtime"] == runtime_of(load_embedder().model_id)
        released = wait_for(client, "a model release", lambda s: s["model_releases"] >= 1)
        assert released["rss_now_mb"] < loaded["rss_now_mb"]
        assert released["embed_runtime"] == loaded["embed_runtime"]  # still said: the vectors' runtime
        hits = client.search("make a new order for a customer", k=3)  # loads it again, lazily
        assert hits.items and hits.items[0].path == "orders.py"
        assert any("vector" in h.ranks for h in hits.items)
    finally:
        client.stop()


def test_background_embedding_pauses_while_a_request_is_served(root: Path) -> None:
    d = Daemon(root, watch=False, embed=False, warm_servers=False)
    try:
        d.activity.begin(work=True)  # a request in flight
        result: list[bool] = []
        t = threading.Thread(target=lambda: result.append(d.embedder.wait_for_quiet()), daemon=True)
        t.start()
        deadline = time.monotonic() + 10
        while d.embedder.embedding != "paused for a query":
            assert time.monotonic() < deadline and t.is_alive()
            time.sleep(0.01)
        assert t.is_alive() and not result  # no slice starts while the request runs
        d.activity.end(work=True)  # answered
        t.join(timeout=10)
        assert result == [True]
        d.stop()
        assert d.embedder.wait_for_quiet() is False  # and a stopping daemon never starts one
    finally:
        d.nav.close()
