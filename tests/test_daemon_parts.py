"""The parts the daemon is composed of, on their own: its request counters and its identity (the
root's folder and its socket), against the real file system."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

from navigator.frontends.daemon_activity import Activity
from navigator.frontends.daemon_identity import Identity


def test_a_status_request_is_counted_but_is_not_work() -> None:
    activity = Activity()
    activity.begin(work=False)  # daemon.status / daemon.ping
    busy, _ = activity.now()
    assert not busy and activity.requests == 1
    before = activity.last_used_wall
    activity.end(work=False)
    assert activity.last_used_wall == before  # asking how it is doing is not using it

    activity.begin(work=True)
    busy, idle = activity.now()
    assert busy and activity.requests == 2 and idle >= 0
    assert activity.last_used_wall >= before
    activity.end(work=True)
    assert activity.now()[0] is False


def _claim(root: Path) -> dict[str, object]:
    st = os.stat(root)
    return {"path": str(root), "dev": st.st_dev, "ino": st.st_ino}


def test_identity_follows_the_root_folder(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    ident = Identity(root, root / "daemon.sock")
    assert ident.why_lost() is None
    assert ident.serves(_claim(root))
    assert not ident.serves({"path": str(root), "dev": 0, "ino": 0})  # the same path, another folder
    assert not ident.serves(str(root))  # not a claim at all

    root.rename(tmp_path / "moved")
    assert "is gone" in (ident.why_lost() or "")
    root.mkdir()  # a new folder at the old path is not the daemon's root
    assert "another folder" in (ident.why_lost() or "")
    assert not ident.serves(_claim(root))


def test_identity_knows_its_socket_once_bound(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    path = root / "daemon.sock"
    ident = Identity(root, path)

    def bind() -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(path))
        return sock

    first = bind()
    try:
        ident.bound()
        assert ident.why_lost() is None
        path.unlink()
        assert "socket" in (ident.why_lost() or "") and "gone" in (ident.why_lost() or "")
        second = bind()  # another daemon's socket at the same path
        try:
            assert "another daemon's" in (ident.why_lost() or "")
        finally:
            second.close()
    finally:
        first.close()
    shutil.rmtree(root)


def test_the_index_is_closed_only_once_no_thread_uses_it() -> None:
    """A stopping daemon closes the index's connections only when no thread is inside (a
    connection closed under a statement crashes the process), and lets no new user in."""
    import threading

    from navigator.frontends.daemon_activity import IndexUsers

    users = IndexUsers()
    assert users.enter() and users.enter()  # two requests reading the index
    users.leave()
    assert users.close_gate(0.05) is False  # one still inside: not closed under it
    assert users.enter() is False  # a stopping daemon lets no new user in
    done = threading.Event()
    closer = threading.Thread(target=lambda: done.set() if users.close_gate(60.0) else None)
    closer.start()
    users.leave()  # the last one leaves: the close goes ahead at once
    closer.join(timeout=60)
    assert done.is_set()
