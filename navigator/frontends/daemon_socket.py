"""The daemon's socket: JSON-RPC 2.0 messages, one per line, a thread per connection (bounded).

What it serves is an :class:`Endpoint` (the :class:`~navigator.frontends.daemon.Daemon`):
each line read goes to ``handle`` and every reply it returns is written back. The transport
holds the bounds that keep a client from hurting the daemon: at most :data:`MAX_CONNECTIONS`
connections at once (the next is told so and closed), a line longer than
:data:`~navigator.frontends.wire.MAX_MESSAGE_BYTES` is skipped unread and answered "request too
large" (a client streaming on past :data:`MAX_DRAIN_BYTES` is disconnected), and a reply JSON
cannot carry is answered as an internal error. A daemon whose code changed on disk answers
nothing more: the connection closes and the client starts one running the new code.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import socketserver
import threading
from typing import Any, Protocol

from navigator.errors import shorten
from navigator.frontends.wire import INTERNAL_ERROR, INVALID_REQUEST, MAX_MESSAGE_BYTES, dumps, error_reply

log = logging.getLogger("nav.daemon")

MAX_DRAIN_BYTES = 256 * 1024 * 1024
"""How much of an oversized request line is skipped, unread, before the connection is dropped."""
MAX_CONNECTIONS = 256
"""Connections served at once (a thread each); more are answered "too many connections" and closed."""
SERVER_BUSY = -32000
LISTEN_BACKLOG = socket.SOMAXCONN
"""Connections the kernel queues before the daemon accepts them (was 5: a burst of clients got EAGAIN)."""


class Endpoint(Protocol):
    """What the socket serves."""

    def handle(self, raw: bytes) -> list[dict[str, Any]]:
        """One request line to its replies (none for a notification); never raises."""
        ...

    def code_changed(self) -> bool:
        """Whether nav's code on disk differs from the running code (then nothing is answered)."""
        ...

    def stop(self) -> None: ...

    def stopping(self) -> bool:
        """Whether the endpoint is on its way out (then nothing more is answered)."""
        ...


class SocketServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: str, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread per connection, up to :data:`MAX_CONNECTIONS`; past that, a connection is
        told why and closed at once, so no number of clients can exhaust the daemon's threads."""
        if not self._slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.settimeout(1.0)
                request.sendall(
                    dumps(
                        error_reply(
                            None, SERVER_BUSY, f"too many connections (at most {MAX_CONNECTIONS}); try again"
                        )
                    )
                )
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()  # the thread never started
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


class _Handler(socketserver.StreamRequestHandler):
    server: SocketServer

    def handle(self) -> None:
        """Read request lines and answer each. A line longer than :data:`MAX_MESSAGE_BYTES` is
        skipped to its end unread (a bounded drain: memory stays flat, no parsing) and answered
        with "request too large"; a client that streams on without a line end past
        :data:`MAX_DRAIN_BYTES` is answered and disconnected."""
        endpoint = self.server.endpoint
        while True:
            try:
                line = self.rfile.readline(MAX_MESSAGE_BYTES + 1)
            except OSError:
                return
            if not line:
                return
            if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
                ended = self._drain_line()
                message = f"request too large: more than {MAX_MESSAGE_BYTES:,} bytes (at most {MAX_MESSAGE_BYTES:,})"
                if not ended:
                    message += "; closing the connection"
                if not self._send(error_reply(None, INVALID_REQUEST, message)) or not ended:
                    return
                continue
            if endpoint.stopping():
                return  # on its way out: the client sees the connection close and asks a new daemon
            if endpoint.code_changed():
                # no answer from stale code: the client sees the connection close, starts a
                # daemon running the new code and asks again
                log.warning("nav's code changed on disk since this daemon started; stopping")
                endpoint.stop()
                return
            # every line is answered, an empty one too (a parse error): a client never waits
            for reply in endpoint.handle(line):
                if not self._send(reply):
                    return

    def _drain_line(self) -> bool:
        """Discard the rest of an oversized line; True when its end was reached within the bound."""
        drained = 0
        while drained < MAX_DRAIN_BYTES:
            try:
                chunk = self.rfile.readline(64 * 1024)
            except OSError:
                return False
            if not chunk:
                return False
            drained += len(chunk)
            if chunk.endswith(b"\n"):
                return True
        return False

    def _send(self, reply: dict[str, Any]) -> bool:
        try:
            data = dumps(reply)
        except (TypeError, ValueError) as exc:  # a result JSON cannot carry: say so, keep serving
            log.error("cannot encode the reply to request %r: %s", reply.get("id"), exc)
            data = dumps(
                error_reply(reply.get("id"), INTERNAL_ERROR, f"cannot encode the reply: {shorten(str(exc))}")
            )
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            return False
        return True


def signal_ready(fd: int | None, word: str) -> None:
    """Tell the process that started the daemon how it went (``ready`` / ``busy``), once."""
    if fd is None:
        return
    try:
        os.write(fd, (word + "\n").encode())
        os.close(fd)
    except OSError:
        pass
