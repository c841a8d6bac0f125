"""``nav lsp``'s wire: LSP framing over stdio that survives bad input, and a protocol that
answers every request.

pygls 1.3 reads frames with a regular expression and hands each body to ``json.loads`` with
its message classes as an object hook. Three things go wrong there (nav issue 8, pygls
issue #326): a request whose params do not fit the protocol's types is logged and never
answered, so the editor waits forever; a frame it cannot parse (``Content-Length: abc``, a
body that is not JSON) leaves its buffer holding garbage, and no later message is ever
answered; ``Content-Length: 99999999999`` makes it allocate that much and die.

Here the reader owns the framing (:func:`read_messages`, pure over a binary file) and:

- a request whose params do not deserialise gets ``-32602 invalid params`` naming the field
  and the bad value (shortened to ~100 characters);
- a body that is not JSON gets ``-32700`` (id null) and the next frame is read as usual;
- a frame with a bad or missing ``Content-Length`` gets ``-32700`` (id null) and the reader
  skips to the next ``Content-Length`` header;
- a frame over :data:`MAX_MESSAGE_BYTES` is refused the same way, without reading it into
  memory;
- stray bytes before a frame's headers are skipped (reported once) and the frame is read;
- the envelope is checked by :func:`navigator.frontends.wire.check_message` (a batch, bad
  UTF-8, JSON nested past :data:`MAX_DEPTH`, ``jsonrpc`` not "2.0", an id that is not a
  string or an integer all get an error reply, with the id when it can be read);
- after ``shutdown`` every request but ``exit`` gets ``-32600 server is shutting down``, as
  LSP says; a request whose method is a notification (``initialized`` with an id) gets
  ``-32600`` rather than silence.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import IO, Any

import attrs
import cattrs
from pygls.exceptions import JsonRpcException, JsonRpcRequestCancelled
from pygls.protocol import LanguageServerProtocol

from navigator import errors
from navigator.frontends.wire import Rejected, check_message

log = logging.getLogger("nav.editor")

MAX_MESSAGE_BYTES = 32 * 1024 * 1024
"""Largest body accepted: a 1 MB source file (nav's index limit) sent whole, many times over."""
MAX_HEADER_BYTES = 8192
MAX_DEPTH = 64
"""Nesting of a message: LSP's deepest (capabilities, settings) are a dozen levels."""
SHOWN = 100
"""Characters of a bad value echoed back in an error message."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


def shorten(value: object, limit: int = SHOWN) -> str:
    """JSON-like text of ``value`` for a message, shortened by :func:`storage.errors.shorten`."""
    return errors.shorten(value if isinstance(value, str) else json.dumps(value, default=repr), limit)


@dataclass(frozen=True, slots=True)
class Raw:
    """A result sent to the editor exactly as it came (a managed server's own answer)."""

    value: Any


@dataclass(frozen=True, slots=True)
class BadFrame:
    """A frame the reader could not take; the reader has moved past it."""

    message: str


def read_messages(rfile: IO[bytes], *, max_bytes: int = MAX_MESSAGE_BYTES) -> Iterator[bytes | BadFrame]:
    """Yield each frame's body, or a :class:`BadFrame` for one that had to be skipped.
    Ends at end of input. Never holds more than ``max_bytes`` of one body in memory.

    Bytes before a frame's first header that are not a header (stray bytes, on a line of
    their own or glued to the header) are skipped and reported once; the frame after them
    is read as usual."""
    pending: bytes | None = None  # a header line found glued to the end of a skipped body
    while True:
        length: int | None = None
        bad: str | None = None
        seen_header = False
        stray = 0
        stray_sample = b""
        while True:  # headers, up to the blank line
            line = pending if pending is not None else rfile.readline(MAX_HEADER_BYTES)
            pending = None
            if not line:
                return
            if not line.strip():
                if seen_header:
                    break
                continue  # stray blank lines between frames
            at = line.lower().find(b"content-length:")
            if at > 0 and not line[:at].endswith(b"-"):  # bytes glued before the header
                stray, stray_sample = stray + at, stray_sample or line[:at]
                line = line[at:]
            if not seen_header and at < 0 and not _is_header(line):
                stray, stray_sample = stray + len(line), stray_sample or line
                continue
            if stray:
                text = shorten(stray_sample.decode("utf-8", "replace").strip())
                yield BadFrame(f"skipped {stray} stray bytes before a header: `{text}`")
                stray, stray_sample = 0, b""
            seen_header = True
            if not line.endswith(b"\n"):
                bad = bad or f"a header line longer than {MAX_HEADER_BYTES} bytes"
                continue
            name, sep, value = line.partition(b":")
            if not sep:
                bad = bad or f"`{shorten(line.decode('utf-8', 'replace').strip())}` is not a header"
                continue
            if name.strip().lower() == b"content-length":
                raw = value.strip().decode("ascii", "replace")
                if not raw.isdigit():
                    bad = bad or f"Content-Length `{shorten(raw)}` is not a number of bytes"
                elif int(raw) > max_bytes:
                    bad = bad or f"Content-Length {shorten(raw)} is over the limit of {max_bytes} bytes"
                else:
                    length = int(raw)
        if bad is None and length is None:
            bad = "a frame without a Content-Length header"
        if bad is None and length is not None:
            body = rfile.read(length)
            if len(body) < length:
                return  # the input ended inside a body
            yield body
            continue
        # Skip to the next frame: the bad frame's body (of unknown length) runs up to the
        # next Content-Length header, often on the same line (bodies end without a newline).
        yield BadFrame(f"bad frame skipped: {bad}")
        while True:
            line = rfile.readline(MAX_HEADER_BYTES)
            if not line:
                return
            at = line.lower().find(b"content-length:")
            if at >= 0:
                pending = line[at:]
                break


_HEADER = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+[ \t]*:.*\r?\n")


def _is_header(line: bytes) -> bool:
    """``Name: value`` and a line end: a header line, not stray bytes."""
    return _HEADER.fullmatch(line) is not None


def describe_invalid(method: str, message: dict[str, Any], exc: BaseException) -> str:
    """``textDocument/definition: invalid params: expected int at params.position.line
    (got "abc")`` — the field and the bad value, shortened."""
    try:
        problems = cattrs.transform_error(exc, path="$")
    except Exception:  # noqa: BLE001 - describing must never fail; fall back to the exception
        problems = [str(exc)]
    parts = []
    for problem in problems[:3]:
        what, _, where = problem.rpartition(" @ ")
        path = where.removeprefix("$.").removeprefix("$")
        value = _at(message, path)
        got = "missing" if value is _MISSING else f"got {shorten(json.dumps(value, default=repr))}"
        parts.append(f"{what or problem} at `{path or 'the message'}` ({got})")
    return f"{method}: invalid params: " + "; ".join(parts)


_MISSING = object()


def _at(message: Any, path: str) -> Any:
    node = message
    for part in [p for p in path.replace("[", ".").replace("]", "").split(".") if p]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            # cattrs names attrs fields (text_document); the wire has camelCase (textDocument)
            head, *rest = part.split("_")
            camel = head + "".join(w.title() for w in rest)
            if isinstance(node, dict) and camel in node:
                node = node[camel]
            else:
                return _MISSING
    return node


class NavProtocol(LanguageServerProtocol):
    """pygls's protocol, fed whole bodies by :func:`serve`, answering every request."""

    def handle_body(self, body: bytes) -> None:
        message = check_message(body, max_bytes=MAX_MESSAGE_BYTES, max_depth=MAX_DEPTH, array_params=True)
        if isinstance(message, Rejected):
            if message.answer:
                for reply in message.replies():
                    self._send_data(reply)  # type: ignore[no-untyped-call]
            else:
                log.warning("ignored a malformed notification or response: %s", message.message)
                self.show_log(f"ignored a malformed notification or response: {message.message}")
            return
        if self._shutdown and message.get("method") != "exit":
            # LSP: after `shutdown`, requests get InvalidRequest; notifications are dropped
            if "method" in message and "id" in message:
                self._reply_error(message["id"], INVALID_REQUEST, "server is shutting down")
            else:
                log.warning("ignored %s after shutdown", shorten(message.get("method", "a response")))
            return
        method = message.get("method")
        is_request = method is not None and "id" in message
        if method is not None:
            message_type = self.get_message_type(method)
            if is_request and message_type is not None and "id" not in attrs.fields_dict(message_type):
                # pygls would handle it as the notification it is, and never answer the id
                self._reply_error(
                    message["id"],
                    INVALID_REQUEST,
                    f"`{shorten(method)}` is a notification: send it without an id",
                )
                return
            if message_type is not None:
                try:
                    self._converter.structure(message, message_type)
                except Exception as exc:  # noqa: BLE001 - any failure to fit the types is bad params
                    text = describe_invalid(method, message, exc)
                    if is_request:
                        self._reply_error(message.get("id"), INVALID_PARAMS, text)
                    else:
                        log.warning("ignored notification: %s", text)
                        self.show_log(text)
                    return
        try:
            self._procedure_handler(self._deserialize_message(message))  # type: ignore[no-untyped-call]
        except JsonRpcException as exc:
            if is_request:
                self._reply_error(message.get("id"), exc.code, exc.message)
        except Exception as exc:  # noqa: BLE001 - one bad message costs that message only
            log.exception("failed to handle %s", shorten(method))
            if is_request:
                self._reply_error(message.get("id"), -32603, f"internal error: {shorten(str(exc))}")

    def show_log(self, text: str) -> None:
        self.notify("window/logMessage", {"type": 2, "message": f"nav: {text}"})

    def _reply_error(self, msg_id: Any, code: int, message: str) -> None:
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})  # type: ignore[no-untyped-call]

    def _execute_request(self, msg_id: Any, handler: Any, params: Any) -> None:
        if asyncio.iscoroutinefunction(handler):
            future = asyncio.ensure_future(handler(params))
            self._request_futures[msg_id] = future
            future.add_done_callback(partial(self._request_done, msg_id))
        else:
            super()._execute_request(msg_id, handler, params)  # type: ignore[no-untyped-call]

    def _request_done(self, msg_id: Any, future: asyncio.Future[Any]) -> None:
        """pygls turns every error of a coroutine handler into -32603; keep nav's codes.
        Whatever happens, the request gets a reply."""
        self._request_futures.pop(msg_id, None)
        try:
            if future.cancelled():
                self._reply_error(
                    msg_id, JsonRpcRequestCancelled.CODE, f"request {shorten(msg_id)} was cancelled"
                )
                return
            exc = future.exception()
            if exc is None:
                result = future.result()
                if isinstance(result, Raw):
                    self._send_data({"jsonrpc": "2.0", "id": msg_id, "result": result.value})  # type: ignore[no-untyped-call]
                else:
                    self._send_response(msg_id, result=result)
            elif isinstance(exc, JsonRpcException):
                error: dict[str, Any] = {"code": exc.code, "message": exc.message}
                if exc.data is not None:
                    error["data"] = exc.data
                self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": error})  # type: ignore[no-untyped-call]
            else:
                log.error("internal error answering %s", msg_id, exc_info=exc)
                self._reply_error(
                    msg_id, -32603, f"internal error: {type(exc).__name__}: {shorten(str(exc))}"
                )
        except Exception as exc:  # noqa: BLE001 - a reply that cannot be built still gets an error reply
            log.exception("could not send the reply to %s", msg_id)
            self._reply_error(msg_id, -32603, f"internal error sending the reply: {shorten(str(exc))}")


class _Writer:
    """The transport pygls writes to. ``close`` (pygls's ``exit`` handler calls it) flushes and
    leaves the input alone: closing a file another thread is reading blocks on its lock."""

    def __init__(self, wfile: IO[bytes]) -> None:
        self.wfile = wfile
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self._lock:
            self.wfile.write(data)
            self.wfile.flush()

    def close(self) -> None:
        with self._lock, contextlib.suppress(OSError, ValueError):
            self.wfile.flush()


def serve(
    server: Any, rfile: IO[bytes], wfile: IO[bytes], *, on_start: Callable[[], None] | None = None
) -> int:
    """Run ``server`` (a pygls server built with :class:`NavProtocol`) over a byte stream pair
    until the input ends or the editor sends ``exit``; returns the exit code (0 after a
    ``shutdown`` request, else 1, as LSP says). Frames are read on a daemon thread (a
    blocked read never holds up the exit)."""
    loop: asyncio.AbstractEventLoop = server.loop
    protocol: NavProtocol = server.lsp
    protocol.connection_made(_Writer(wfile))  # type: ignore[arg-type]
    queue: asyncio.Queue[bytes | BadFrame | None] = asyncio.Queue()

    def reader() -> None:
        try:
            for item in read_messages(rfile):
                loop.call_soon_threadsafe(queue.put_nowait, item)
        except (OSError, ValueError) as exc:
            log.error("reading from the editor failed: %s", exc)
        finally:
            loop.call_soon_threadsafe(queue.put_nowait, None)

    async def pump() -> None:
        threading.Thread(target=reader, name="nav-lsp-reader", daemon=True).start()
        if on_start is not None:
            on_start()
        while True:
            item = await queue.get()
            if item is None:
                return
            if isinstance(item, BadFrame):
                log.warning("%s", item.message)
                protocol._reply_error(None, PARSE_ERROR, item.message)
                continue
            try:
                protocol.handle_body(item)
            except (BrokenPipeError, SystemExit, KeyboardInterrupt):
                raise
            except Exception:  # a bug must cost one message, never the server
                log.exception("internal error reading a message; the server keeps serving")

    code = 1
    try:
        loop.run_until_complete(pump())
    except BrokenPipeError:
        log.error("the editor closed the connection")
    except SystemExit as exc:  # pygls's `exit` handler
        code = exc.code if isinstance(exc.code, int) else 1
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
    return code
