"""JSON-RPC messages on the wire: bounded parsing, parameter checks, and result objects.

The daemon sends ``{"type": "navigator.results:Response", "item": "navigator.results:Symbol",
"value": {...}}``; the client rebuilds the same frozen dataclasses the in-process API
returns, so the CLI cannot tell (and need not care) which one answered.

Nothing read from a socket is trusted: :func:`loads` bounds a message's size and nesting
and refuses ``NaN``/``Infinity``; :func:`check_message` is the one JSON-RPC 2.0 envelope
check of every front end (daemon socket, ``nav lsp``, ``nav mcp``): whatever a message holds,
one that may be a request gets an error reply (with its id when the id can be read), a
malformed notification or response is only logged; :func:`check_params` holds JSON parameters against the
verb's own type annotations, so a wrong type is an "invalid params" error that names the
parameter and its value, never an exception deep inside the engine. Pure; the only import
it may trigger is the module that defines a result type.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import importlib
import inspect
import json
import os
import re
import types
import typing
from collections.abc import Callable
from typing import Any

from navigator.errors import shorten
from navigator.results import Response, to_data

MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""A request line: real ones are a few hundred bytes (a pasted issue is well under 1 MB)."""
MAX_REPLY_BYTES = 256 * 1024 * 1024
"""A reply line the client reads: generous (ten thousand hits with their code), but bounded."""
MAX_DEPTH = 32
"""Nesting of a request: nav's parameters are at most a list inside an object."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class WireError(Exception):
    """A message that cannot be used, with the JSON-RPC error code to answer it with."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(raw: bytes | str, *, max_bytes: int = MAX_MESSAGE_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """Parse one JSON message, bounded: size, nesting depth, and no ``NaN``/``Infinity``."""
    if len(raw) > max_bytes:
        raise WireError(INVALID_REQUEST, f"message too large: {len(raw):,} bytes (at most {max_bytes:,})")
    try:
        value = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:
        raise WireError(INVALID_REQUEST, f"JSON nested too deep (at most {max_depth} levels)") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise WireError(PARSE_ERROR, f"invalid JSON: {shorten(str(exc))}") from None
    if depth(value, stop=max_depth + 1) > max_depth:
        raise WireError(INVALID_REQUEST, f"JSON nested too deep (at most {max_depth} levels)")
    return value


def depth(value: Any, *, stop: int) -> int:
    """How deeply ``value`` nests lists and objects, counted up to ``stop`` (no recursion)."""
    deepest = 0
    todo: list[tuple[Any, int]] = [(value, 1)]
    while todo:
        item, level = todo.pop()
        if not isinstance(item, dict | list):
            continue
        deepest = max(deepest, level)
        if deepest >= stop:
            return deepest
        children = item.values() if isinstance(item, dict) else item
        todo.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


# -- envelopes ----------------------------------------------------------------------------
# One check of a JSON-RPC 2.0 envelope for every front end (the daemon socket, `nav lsp`,
# `nav mcp`): a message that may be a request always gets a reply, with its id when the id
# can be read; a malformed notification or response is only logged (answering a response
# could loop between two peers).

RequestId = str | int


@dataclasses.dataclass(frozen=True, slots=True)
class Rejected:
    """A message that cannot be used. When ``answer`` is true, each of ``ids`` gets an error
    reply with ``code`` and ``message`` (``None``: the id could not be read, so id null);
    when false (a malformed notification or response), it is logged and dropped."""

    code: int
    message: str
    ids: tuple[RequestId | None, ...] = (None,)
    answer: bool = True

    def replies(self) -> list[dict[str, Any]]:
        return [error_reply(i, self.code, self.message) for i in self.ids] if self.answer else []


def error_reply(req_id: RequestId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": req_id, "error": error}


def error_type(exc: BaseException) -> str:
    """The name a client can rebuild ``exc`` by: its nearest class in nav's documented tree
    (``storage.errors``), so a subclass defined elsewhere (``semantic.embed.EmbedError``,
    a :class:`ModelError`) still crosses as what it is."""
    for cls in type(exc).__mro__:
        if cls.__module__ == "storage.errors":
            return cls.__name__
    return type(exc).__name__


def is_request_id(value: Any) -> bool:
    """JSON-RPC ids nav answers under: a string or an integer (MCP and LSP allow no others)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def check_message(
    raw: bytes | str,
    *,
    max_bytes: int = MAX_MESSAGE_BYTES,
    max_depth: int = MAX_DEPTH,
    array_params: bool = False,
) -> dict[str, Any] | Rejected:
    """One message off the wire: its JSON object when it is a usable JSON-RPC 2.0 request,
    notification or response, else what to answer. Never raises. ``array_params``: the
    protocol allows ``params`` to be an array (LSP does; MCP and the daemon take objects)."""
    if len(raw) > max_bytes:
        return Rejected(INVALID_REQUEST, f"message too large: {len(raw):,} bytes (at most {max_bytes:,})")
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            what = f"the message is not valid UTF-8 (byte {exc.start}: {raw[exc.start : exc.start + 4]!r})"
            return Rejected(PARSE_ERROR, what, _ids_in(raw.decode("utf-8", "replace"), max_depth))
    else:
        text = raw
    if not text.strip():
        return Rejected(PARSE_ERROR, "an empty message: expected a JSON-RPC 2.0 object")
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        return Rejected(INVALID_REQUEST, _too_deep(max_depth), _top_level_id(text))
    except ValueError as exc:
        return Rejected(PARSE_ERROR, f"the message is not JSON: {shorten(str(exc))}")
    if depth(value, stop=max_depth + 1) > max_depth:
        ids = tuple(_id_of(v) for v in value) if isinstance(value, list) else (_id_of(value),)
        return Rejected(INVALID_REQUEST, _too_deep(max_depth), ids or (None,))
    return check_envelope(value, array_params=array_params)


def check_envelope(message: Any, *, array_params: bool = False) -> dict[str, Any] | Rejected:
    """The envelope rules of JSON-RPC 2.0 over an already parsed message (see :func:`check_message`)."""
    if isinstance(message, list):
        if not message:
            return Rejected(INVALID_REQUEST, "an empty batch: expected a JSON-RPC 2.0 object")
        # one error per member that may be a request, each sent as a message of its own (one
        # with id null stands for all whose id cannot be read)
        found = [_id_of(m) for m in message if _may_be_request(m)]
        ids = tuple(i for i in found if i is not None) + ((None,) if None in found else ())
        return Rejected(
            INVALID_REQUEST,
            f"batches are not supported (got an array of {len(message)}): send one JSON-RPC message at a time",
            ids,
            answer=bool(ids),
        )
    if not isinstance(message, dict):
        return Rejected(INVALID_REQUEST, f"expected a JSON-RPC 2.0 object, got {_quote(message)}")
    req_id = _id_of(message)
    if "method" not in message:
        if "result" in message or "error" in message:  # a response to a request of ours
            problem = _response_problem(message)
            return message if problem is None else Rejected(INVALID_REQUEST, problem, answer=False)
        return Rejected(
            INVALID_REQUEST,
            'a JSON-RPC 2.0 request needs a `method`: {"jsonrpc": "2.0", "id": 1, "method": ..., "params": {...}}',
            (req_id,),
        )
    is_request = "id" in message
    problem = None
    if message.get("jsonrpc") != "2.0":
        problem = (
            f'`jsonrpc` must be "2.0", got {_quote(message.get("jsonrpc"), missing="jsonrpc" not in message)}'
        )
    elif not isinstance(message["method"], str):
        problem = f"`method` must be a string, got {_quote(message['method'])}"
    elif is_request and req_id is None:
        problem = f"`id` must be a string or an integer, got {_quote(message['id'])}"
    elif "result" in message or "error" in message:
        problem = (
            "a message with a `method` is a request or a notification: it cannot carry `result` or `error`"
        )
    if problem is not None:
        return Rejected(INVALID_REQUEST, problem, (req_id,), answer=is_request)
    params = message.get("params")
    if params is not None and not (isinstance(params, dict) or (array_params and isinstance(params, list))):
        kinds = "an object or an array" if array_params else "an object"
        return Rejected(
            INVALID_PARAMS,
            f"`params` of `{shorten(message['method'])}` must be {kinds}, got {_quote(params)}",
            (req_id,),
            answer=is_request,
        )
    return message


def _may_be_request(message: Any) -> bool:
    """Anything but a notification (an object with a method and no id) or a response."""
    if not isinstance(message, dict):
        return True
    if "method" in message:
        return "id" in message
    return not ("result" in message or "error" in message)


def _response_problem(message: dict[str, Any]) -> str | None:
    if message.get("jsonrpc") != "2.0":
        return f'a response whose `jsonrpc` is not "2.0": {_quote(message)}'
    if ("result" in message) == ("error" in message):
        return f"a response with both `result` and `error`: {_quote(message)}"
    if not is_request_id(message.get("id")) and not ("error" in message and message.get("id") is None):
        return f"a response whose `id` is not a string or an integer: {_quote(message)}"
    return None


def _id_of(message: Any) -> RequestId | None:
    req_id = message.get("id") if isinstance(message, dict) else None
    return req_id if is_request_id(req_id) else None


def _quote(value: Any, *, missing: bool = False) -> str:
    return "nothing (it is missing)" if missing else shorten(json.dumps(value, default=repr))


def _too_deep(max_depth: int) -> str:
    return f"JSON nested too deep (at most {max_depth} levels)"


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]')
_SCAN_CHARS = 1024 * 1024


def _top_level_id(text: str) -> tuple[RequestId | None]:
    """The ``id`` member of a message too deep to parse, read without recursion: a scan of
    its strings and brackets. Only when the brackets balance (a truncated message's id is
    not trusted); else ``(None,)``."""
    stack: list[str] = []
    found: RequestId | None = None
    key: str | None = None
    for match in _TOKENS.finditer(text, 0, _SCAN_CHARS):
        token = match.group()
        if token in "{[":
            stack.append(token)
        elif token in "}]":
            if not stack or stack.pop() != ("{" if token == "}" else "["):
                return (None,)
        elif token == ":":
            if key == "id" and stack == ["{"] and found is None:
                try:
                    value, _ = json.JSONDecoder().raw_decode(text[match.end() : match.end() + 200].lstrip())
                except ValueError:
                    value = None
                found = value if is_request_id(value) else None
        elif token != ",":
            key = json.loads(token) if len(stack) == 1 else None
            continue
        key = None
    return (found,) if not stack and len(text) <= _SCAN_CHARS else (None,)


def _ids_in(text: str, max_depth: int) -> tuple[RequestId | None, ...]:
    """The ids of a message whose bytes were not all valid UTF-8 (read with replacements)."""
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        return _top_level_id(text)
    except ValueError:
        return (None,)
    if isinstance(value, list):
        return tuple(_id_of(v) for v in value if _may_be_request(v)) or (None,)
    return (_id_of(value),)


def dumps(message: Any) -> bytes:
    """One message as a line. ASCII-only: a name that is not valid UTF-8 (an escaped lone
    surrogate) still crosses intact, where UTF-8 output would fail to encode it."""
    return json.dumps(message, ensure_ascii=True, allow_nan=False).encode("ascii") + b"\n"


# -- parameters ------------------------------------------------------------------------------


def check_params(fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Bind JSON ``args``/``kwargs`` to ``fn`` and check each against its annotation.

    Returns the bound arguments by name (JSON arrays converted to tuples where a tuple is
    annotated). Raises :class:`WireError` with ``INVALID_PARAMS`` naming the parameter, what
    it takes and the value it got (shortened).
    """
    name = getattr(fn, "__name__", "method")
    sig, hints = _signature(fn)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise WireError(INVALID_PARAMS, f"bad parameters for `{name}`: {shorten(str(exc))}") from None
    out: dict[str, Any] = {}
    for param, value in bound.arguments.items():
        hint = hints.get(param)
        if hint is not None:
            ok, value = _accepts(hint, value)
            if not ok:
                raise WireError(
                    INVALID_PARAMS,
                    f"bad parameter `{param}` for `{name}`: expected {_describe(hint)}, "
                    f"got {shorten(json.dumps(value, default=repr))}",
                )
        out[param] = value
    return out


_SIGNATURES: dict[Any, tuple[inspect.Signature, dict[str, Any]]] = {}


def _signature(fn: Callable[..., Any]) -> tuple[inspect.Signature, dict[str, Any]]:
    """``fn``'s signature and evaluated parameter annotations, computed once per function."""
    key = (getattr(fn, "__func__", fn), getattr(fn, "__self__", None) is not None)
    found = _SIGNATURES.get(key)
    if found is None:
        sig = inspect.signature(fn)
        found = _SIGNATURES[key] = (sig, _param_hints(fn, sig))
    return found


def _param_hints(fn: Callable[..., Any], sig: inspect.Signature) -> dict[str, Any]:
    """Each parameter's annotation, evaluated where possible (unevaluable ones are not checked)."""
    module = inspect.getmodule(fn)
    namespace = {**vars(typing), **vars(collections.abc), "os": os, **(vars(module) if module else {})}
    hints: dict[str, Any] = {}
    for param in sig.parameters.values():
        ann = param.annotation
        if ann is inspect.Parameter.empty:
            continue
        if isinstance(ann, str):
            try:
                ann = eval(ann, namespace)  # noqa: S307 - our own annotations, not input
            except Exception:
                continue
        hints[param.name] = ann
    return hints


def _accepts(hint: Any, value: Any) -> tuple[bool, Any]:
    """Does a JSON value fit the annotation? Returns (fits, value converted for the call)."""
    if hint is Any or hint is object:
        return True, value
    if hint is None or hint is type(None):
        return value is None, value
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            ok, converted = _accepts(arg, value)
            if ok:
                return True, converted
        return False, value
    if hint is bool:
        return isinstance(value, bool), value
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool), value
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool), value
    if hint is str:
        return isinstance(value, str), value
    if origin in (tuple, list, collections.abc.Sequence) or hint in (tuple, list):
        if not isinstance(value, list):
            return False, value
        item = args[0] if args else Any
        items = []
        for v in value:
            ok, converted = _accepts(item, v)
            if not ok:
                return False, value
            items.append(converted)
        return True, tuple(items) if origin is tuple or hint is tuple else items
    if origin is dict or hint is dict:
        return isinstance(value, dict), value
    return False, value  # a callable, a path object...: nothing JSON can carry


def _describe(hint: Any) -> str:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        parts = [_describe(a) for a in args]
        return " or ".join(p for p in dict.fromkeys(parts) if p)
    if hint is None or hint is type(None):
        return "null"
    names = {bool: "true or false", int: "an integer", float: "a number", str: "a string", dict: "an object"}
    if hint in names:
        return names[hint]
    if origin in (tuple, list, collections.abc.Sequence):
        plural = {str: "strings", int: "integers", float: "numbers"}
        return f"an array of {plural.get(args[0], 'values') if args else 'values'}"
    return ""


def type_tag(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _resolve_tag(tag: str) -> type:
    module, _, qualname = tag.partition(":")
    if not module.startswith(("navigator.", "lsp.", "semantic.", "storage.")):
        raise ValueError(f"refusing to decode a result type from module {module!r}")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, type):
        raise ValueError(f"{tag} is not a type")
    return obj


def encode(obj: Any) -> dict[str, Any]:
    """An envelope with the type tags needed to rebuild ``obj``."""
    env: dict[str, Any] = {"value": to_data(obj)}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        env["type"] = type_tag(type(obj))
        if isinstance(obj, Response) and obj.items:
            env["item"] = type_tag(type(obj.items[0]))
    return env


def decode(env: dict[str, Any]) -> Any:
    tag = env.get("type")
    if not tag:
        return env.get("value")
    cls = _resolve_tag(str(tag))
    item_cls = _resolve_tag(str(env["item"])) if env.get("item") else None
    return _build(cls, env["value"], item_cls)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """A result type's field types, resolved once: ``get_type_hints`` evaluates every string
    annotation again on each call (~1 ms a hit on a busy machine, for replies of hundreds)."""
    return typing.get_type_hints(cls)


def _build(cls: type, data: Any, item_cls: type | None = None) -> Any:
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        kwargs[f.name] = _convert(hints[f.name], data[f.name], item_cls)
    return cls(**kwargs)


def _convert(tp: Any, value: Any, item_cls: type | None) -> Any:
    if value is None:
        return None
    if isinstance(tp, typing.TypeVar):
        if item_cls is not None and dataclasses.is_dataclass(item_cls):
            return _build(item_cls, value)
        return value
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            if arg is type(None):
                continue
            return _convert(arg, value, item_cls)
        return value
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v, item_cls) for v in value)
        if args:
            return tuple(_convert(a, v, item_cls) for a, v in zip(args, value, strict=False))
        return tuple(value)
    if origin is dict:
        vt = args[1] if len(args) == 2 else Any
        return {k: _convert(vt, v, item_cls) for k, v in value.items()}
    if origin is list:
        (et,) = args or (Any,)
        return [_convert(et, v, item_cls) for v in value]
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _build(tp, value)
    return value
