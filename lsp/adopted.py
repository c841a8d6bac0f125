"""A running :class:`subprocess.Popen` with the face of the :class:`asyncio.subprocess.Process`
that multilspy's client reads and writes: how a session adopts a server launched before the
pool existed (:mod:`lsp.launch`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import threading
from typing import IO

__all__ = ["AdoptedProcess"]


class AdoptedProcess:
    """An already running :class:`subprocess.Popen` as an asyncio process: ``stdin`` a
    :class:`asyncio.StreamWriter`, ``stdout``/``stderr`` :class:`asyncio.StreamReader`\\ s,
    ``wait()`` a coroutine. Exit is seen by a thread blocked in ``Popen.wait`` (the loop's
    child watcher does not know a process it did not start)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.stdin: asyncio.StreamWriter | None = None
        self.stdout: asyncio.StreamReader | None = None
        self.stderr: asyncio.StreamReader | None = None
        self._transports: list[asyncio.BaseTransport] = []
        self._exit: asyncio.Future[int] | None = None

    @classmethod
    async def attach(
        cls, popen: subprocess.Popen[bytes], stdout: bytes = b"", stderr: bytes = b""
    ) -> AdoptedProcess:
        """Attach to ``popen``'s pipes; ``stdout``/``stderr``: what was read from them before
        (by :class:`lsp.handshake.EarlyHandshake`), read first."""
        if popen.stdin is None or popen.stdout is None or popen.stderr is None:
            raise ValueError("the process must have been started with stdin, stdout and stderr pipes")
        proc = cls(popen)
        loop = asyncio.get_running_loop()
        proc.stdout = await _reader(loop, popen.stdout, proc._transports, stdout)
        proc.stderr = await _reader(loop, popen.stderr, proc._transports, stderr)
        write_transport, write_protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop)), popen.stdin
        )
        proc._transports.append(write_transport)
        proc.stdin = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
        exit_code: asyncio.Future[int] = loop.create_future()
        proc._exit = exit_code

        def reap() -> None:
            code = popen.wait()

            def settle() -> None:
                if not exit_code.done():
                    exit_code.set_result(code)

            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
                loop.call_soon_threadsafe(settle)

        threading.Thread(target=reap, name=f"nav-reap-{popen.pid}", daemon=True).start()
        return proc

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        exit_code = self._exit
        return exit_code.result() if exit_code is not None and exit_code.done() else None

    async def wait(self) -> int:
        if self._exit is None:
            raise RuntimeError("AdoptedProcess.attach() makes these; this one was never attached")
        return await asyncio.shield(self._exit)

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._popen.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def close(self) -> None:
        """Close the pipes' transports (once the process is gone)."""
        for transport in self._transports:
            transport.close()
        self._transports = []


async def _reader(
    loop: asyncio.AbstractEventLoop, pipe: IO[bytes], transports: list[asyncio.BaseTransport], unread: bytes
) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=2**16, loop=loop)  # asyncio's subprocess default
    if unread:
        reader.feed_data(unread)

    def protocol() -> asyncio.StreamReaderProtocol:
        return asyncio.StreamReaderProtocol(reader)

    transport, _ = await loop.connect_read_pipe(protocol, pipe)
    transports.append(transport)
    return reader
