"""``json.loads`` / ``json.dumps`` for the console script's fast path, without importing :mod:`json`.

Importing :mod:`json` imports and compiles regular expressions (:mod:`re`, :mod:`enum`), which
measured ~20 ms of a ~50 ms warm ``nav refs`` on this project's machine — as much as the
interpreter's own start. Both functions call the C scanner and encoder that :mod:`json`
itself uses (CPython's ``_json``, the one-shot path of ``json.loads``/``json.dumps``), so the
result is the same value and the same text; ``tests/test_entry_fast.py`` holds them equal to
:mod:`json` on generated values. Where ``_json`` is missing (not CPython) they are :mod:`json`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: this module is on the fast path
if TYPE_CHECKING:
    from typing import Any

_WS = " \t\n\r"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class _Context:
    """The attributes ``_json.make_scanner`` reads (``json.JSONDecoder``'s defaults), except
    ``NaN``/``Infinity``, refused as :func:`navigator.frontends.wire.loads` refuses them."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_no_constant)


def loads(raw: bytes) -> Any:
    """``json.loads(raw, parse_constant=refuse)`` for UTF-8 ``raw``; ValueError when it is not
    one JSON value (with only whitespace around it)."""
    try:
        from _json import make_scanner
    except ImportError:  # pragma: no cover - not CPython
        import json

        return json.loads(raw, parse_constant=_no_constant)
    text = raw.decode("utf-8")
    start = len(text) - len(text.lstrip(_WS))
    try:
        value, end = make_scanner(_Context())(text, start)  # type: ignore[arg-type]  # typeshed: any object with these attributes
    except StopIteration:
        raise ValueError("invalid JSON: no value") from None
    if text[end:].strip(_WS):
        raise ValueError("invalid JSON: extra data")
    return value


def dumps(value: Any, *, ensure_ascii: bool, allow_nan: bool) -> str:
    """``json.dumps(value, ensure_ascii=..., allow_nan=...)`` with its default separators and no
    indent."""
    try:
        from _json import encode_basestring, encode_basestring_ascii, make_encoder
    except ImportError:  # pragma: no cover - not CPython
        import json

        return json.dumps(value, ensure_ascii=ensure_ascii, allow_nan=allow_nan)
    encoder = encode_basestring_ascii if ensure_ascii else encode_basestring
    if isinstance(value, str):
        return str(encoder(value))

    def default(obj: object) -> object:
        raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")

    chunks = make_encoder({}, default, encoder, None, ": ", ", ", False, False, allow_nan)(value, 0)
    return "".join(chunks)
