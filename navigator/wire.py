"""Result objects on the wire: a type tag plus plain JSON data, and back.

The daemon sends ``{"type": "navigator.results:Response", "item": "navigator.results:Symbol",
"value": {...}}``; the client rebuilds the same frozen dataclasses the in-process API
returns, so the CLI cannot tell (and need not care) which one answered. Pure; the
only import it may trigger is the module that defines a result type.
"""

from __future__ import annotations

import dataclasses
import importlib
import types
import typing
from typing import Any

from navigator.results import Response, to_data


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


def _build(cls: type, data: Any, item_cls: type | None = None) -> Any:
    hints = typing.get_type_hints(cls)
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
