"""The LSP handshake of a server launched early (:mod:`lsp.launch`), with the standard library only.

A server loads its workspace only once it is initialized (and, for gopls, once it has its
configuration): launching it before multilspy is imported gains nothing if ``initialize``
waits for that import. :class:`EarlyHandshake` sends ``initialize`` at launch, then, in a
thread, reads the server until a session adopts it: it sends ``initialized`` when the answer
comes, answers the server's requests as the session would (``workspace/configuration`` from
the definition's settings, the rest with nothing), and keeps every other message's bytes, in
order, for the session to read as if they had just arrived (``$/progress``, log lines: what
readiness is read from). :meth:`EarlyHandshake.finish` stops it and hands over.

A server that loads a project only once one of its files is opened (tsserver:
:attr:`~lsp.servers.base.ServerDefinition.open_before_ready`) is given the files the coming
question starts at (``open_first``, a hint) right after ``initialized``; the session takes them
as open, with the disk state they were read at, so a file changed since is sent again.

:func:`initialize_params` and :func:`configuration` are the session's own (one piece of code
for both).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import select
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsp.servers.base import ServerDefinition

__all__ = ["EARLY_ID", "EarlyHandshake", "Handover", "configuration", "frame", "initialize_params"]

log = logging.getLogger("nav.lsp")

EARLY_ID = 0
"""The id of the early ``initialize`` (multilspy's client numbers its requests from 1)."""

_NULL_ANSWERED = frozenset(
    {"client/registerCapability", "client/unregisterCapability", "window/workDoneProgress/create",
     "window/showMessageRequest", "workspace/diagnostic/refresh", "workspace/semanticTokens/refresh",
     "workspace/inlayHint/refresh", "workspace/codeLens/refresh"}
)  # fmt: skip
"""Server requests the session answers with nothing (and so does the handshake)."""

_LENGTH = re.compile(rb"content-length:\s*(\d+)", re.IGNORECASE)


def initialize_params(definition: ServerDefinition, root: Path) -> dict[str, Any]:
    """What nav's client sends with ``initialize`` to ``definition``'s server for ``root``."""
    folder = definition.workspace_folder(root)
    root_uri = folder.as_uri()
    return {
        "processId": os.getpid(),
        "clientInfo": {"name": "nav"},
        "rootPath": str(folder),
        "rootUri": root_uri,
        "workspaceFolders": [{"uri": root_uri, "name": root.name}],
        "initializationOptions": definition.initialization_options(root),
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "window": {"workDoneProgress": True, "showMessage": {}},
            "workspace": {
                "configuration": True,
                "workspaceFolders": True,
                "didChangeConfiguration": {"dynamicRegistration": True},
                "didChangeWatchedFiles": {"dynamicRegistration": True, "relativePatternSupport": True},
                "symbol": {"dynamicRegistration": False},
            },
            "textDocument": {
                "synchronization": {"dynamicRegistration": False, "didSave": True},
                "definition": {"linkSupport": False},
                "declaration": {"linkSupport": False},
                "implementation": {"linkSupport": False},
                "typeDefinition": {"linkSupport": False},
                "references": {},
                "hover": {"contentFormat": ["plaintext", "markdown"]},
                "callHierarchy": {"dynamicRegistration": False},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
                "publishDiagnostics": {"relatedInformation": False},
            },
        },
    }


def configuration(settings: dict[str, Any], params: Any) -> list[Any]:
    """The answer to ``workspace/configuration``: each item's section of ``settings`` (dotted
    sections walk nested tables; none: all of them)."""
    out: list[Any] = []
    for item in (params or {}).get("items", []) if isinstance(params, dict) else []:
        section = item.get("section") if isinstance(item, dict) else None
        out.append(_section(settings, section) if section else settings)
    return out


def _section(settings: dict[str, Any], section: str) -> Any:
    if section in settings:
        return settings[section]
    node: Any = settings
    for part in section.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def frame(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


@dataclass(frozen=True, slots=True)
class Handover:
    """What the handshake hands to the session that adopts its server."""

    initialize: dict[str, Any] | None
    """The server's ``initialize`` result (``initialized`` was sent); None when the handshake
    did not get one (the server exited or said something unreadable: the session finds out)."""
    stdout: bytes
    """What the server wrote and nobody has read yet: the messages the handshake kept and
    anything after the last whole one."""
    stderr: bytes
    opened: dict[str, tuple[int, int]]
    """Files opened (``didOpen``, version 1) at launch: absolute path -> (mtime_ns, size) of the
    disk text sent."""


class EarlyHandshake:
    """Initializes a just-launched server and speaks for its client until :meth:`finish`."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        definition: ServerDefinition,
        root: Path,
        *,
        open_first: Sequence[str] = (),
    ) -> None:
        if popen.stdin is None or popen.stdout is None or popen.stderr is None:
            raise ValueError("the server must have been started with stdin, stdout and stderr pipes")
        self._popen = popen
        self._settings = definition.settings(root)
        self._folders = [{"uri": definition.workspace_folder(root).as_uri(), "name": root.name}]
        self._out = popen.stdout.fileno()
        self._err = popen.stderr.fileno()
        self._unread = b""
        self._kept = bytearray()
        self._stderr = bytearray()
        self._result: dict[str, Any] | None = None
        self.answered = threading.Event()
        """Set once the server answered ``initialize`` (or the handshake gave up on it)."""
        self._stop = threading.Event()
        self._said = threading.Condition()
        self._notes: list[dict[str, Any]] = []
        self._definition = definition
        self._open_first = list(open_first) if definition.open_before_ready else []
        self.opened: dict[str, tuple[int, int]] = {}
        self._write(frame({"jsonrpc": "2.0", "id": EARLY_ID, "method": "initialize",
                           "params": initialize_params(definition, root)}))  # fmt: skip
        self._wake_r, self._wake_w = os.pipe()  # after the write: a server dead at once leaks nothing
        self._thread = threading.Thread(target=self._run, name=f"nav-handshake-{popen.pid}", daemon=True)
        self._thread.start()

    def finish(self, timeout_s: float) -> Handover:
        """Wait (up to ``timeout_s``) for the answer to ``initialize``, stop reading, and hand
        over. Raises :class:`TimeoutError` when the server did not answer in time."""
        if not self.answered.wait(timeout_s):
            self.close()
            raise TimeoutError(f"no answer to initialize within {timeout_s:.0f}s")
        self.close()
        return Handover(
            self._result, bytes(self._kept) + self._unread, bytes(self._stderr), dict(self.opened)
        )

    def wait_said(self, heard: Callable[[dict[str, Any]], bool], timeout_s: float) -> bool:
        """Whether the server sends a message ``heard(message)`` holds for (among those kept for
        the session), waiting up to ``timeout_s`` while the handshake reads."""
        end = time.monotonic() + timeout_s
        with self._said:
            while not any(heard(m) for m in self._notes):
                left = end - time.monotonic()
                if left <= 0 or not self._thread.is_alive():
                    return False
                self._said.wait(min(left, 1.0))
            return True

    def close(self) -> None:
        """Stop the reading thread (idempotent); the pipes stay open for the session."""
        if not self._stop.is_set():
            self._stop.set()
            with contextlib.suppress(OSError):
                os.write(self._wake_w, b"x")
            if threading.current_thread() is not self._thread:
                self._thread.join(timeout=10.0)
            for fd in (self._wake_r, self._wake_w):
                with contextlib.suppress(OSError):
                    os.close(fd)

    # -- the reading thread ----------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        stdin = self._popen.stdin
        if stdin is not None:
            stdin.write(data)
            stdin.flush()

    def _run(self) -> None:
        try:
            self._read_until_stopped()
        except (OSError, ValueError) as exc:  # a server gone, or one that is not speaking LSP
            log.warning("early handshake with pid %s ended: %s", self._popen.pid, exc)
        finally:
            self.answered.set()

    def _read_until_stopped(self) -> None:
        open_fds = [self._out, self._err]
        while not self._stop.is_set() and self._out in open_fds:
            ready, _, _ = select.select([*open_fds, self._wake_r], [], [])
            for fd in ready:
                if fd == self._wake_r:
                    return
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    open_fds.remove(fd)
                elif fd == self._err:
                    self._stderr += chunk
                else:
                    self._unread += chunk
                    self._messages()

    def _messages(self) -> None:
        while True:
            head, sep, rest = self._unread.partition(b"\r\n\r\n")
            if not sep:
                return
            m = _LENGTH.search(head)
            if m is None:
                raise ValueError(f"a message without Content-Length: {head[:80]!r}")
            length = int(m.group(1))
            if len(rest) < length:
                return
            whole = self._unread[: len(head) + len(sep) + length]
            self._unread = rest[length:]
            self._one(whole, json.loads(rest[:length]))

    def _one(self, whole: bytes, msg: Any) -> None:
        if not isinstance(msg, dict):
            self._kept += whole
            return
        method = msg.get("method")
        if method is None and msg.get("id") == EARLY_ID:
            result = msg.get("result")
            self._result = result if isinstance(result, dict) else None
            if self._result is None:
                log.warning("the server answered initialize with %s", str(msg.get("error"))[:300])
            else:
                self._write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
                for path in self._open_first:
                    self._open(path)
            self.answered.set()
        elif method is not None and "id" in msg and self._result is not None:
            self._answer(whole, msg["id"], str(method), msg.get("params"))
        else:  # a notification (or a request before initialize's answer): the session's to read
            self._kept += whole
            with self._said:
                self._notes.append(msg)
                self._said.notify_all()

    def _open(self, path: str) -> None:
        """``didOpen`` with the disk's text, as :meth:`lsp.session.ServerSession.ensure_open`
        sends it; the state is taken before the read (a change in between is sent again)."""
        try:
            st = os.stat(path)
            with open(path, encoding="utf-8", errors="replace", newline="") as fh:
                text = fh.read()
        except OSError:
            return
        if text.startswith("\ufeff") and not self._definition.bom_is_text:
            text = text[1:]
        self.opened[path] = (st.st_mtime_ns, st.st_size)
        doc = {
            "uri": Path(path).as_uri(),
            "languageId": self._definition.language_id(path),
            "version": 1,
            "text": text,
        }
        self._write(
            frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": doc}})
        )

    def _answer(self, whole: bytes, rid: Any, method: str, params: Any) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
        if method == "workspace/configuration":
            reply["result"] = configuration(self._settings, params)
        elif method == "workspace/workspaceFolders":
            reply["result"] = self._folders
        elif method in _NULL_ANSWERED:
            reply["result"] = None
        else:  # a request the session answers some other way (or refuses): left to it
            self._kept += whole
            return
        self._write(frame(reply))
