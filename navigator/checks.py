"""Input checks shared by every front end: the API verbs call these, so the CLI, the daemon,
``nav lsp`` and ``nav mcp`` all refuse the same bad values with the same words.

Each check returns the cleaned value or raises :class:`UsageError` whose message names the
parameter, quotes the bad value (shortened by :func:`storage.errors.shorten`) and says what
would be accepted. Pure: no I/O.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence

from storage.errors import UsageError, shorten

MAX_NAME_CHARS = 1_000
"""A symbol name, qualified name or ``nav symbols`` pattern (real ones are far shorter)."""
MAX_PATH_CHARS = 4_096
"""A path or ``path:line:col`` (Linux's PATH_MAX)."""
MAX_TEXT_CHARS = 100_000
"""Search or query text: a pasted issue with its tracebacks fits many times over."""
MAX_COUNT = 10_000
"""A ``limit`` / ``k``: how many results to return."""
MAX_DEADLINE_S = 3_600.0
"""A deadline: every wait is bounded, so an infinite one is refused."""
MAX_FILTERS = 100
"""How many ``--path`` / ``--lang`` filters one search takes."""

# C0 and C1 control characters; tab, newline and carriage return are allowed in prose only.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_POSITION = re.compile(r"^(?P<path>.*?):(?P<line>[-+]?\d+)(?::(?P<col>[-+]?\d+))?$")
_PROSE_POSITION = re.compile(r"^(?P<path>\S*?):(?P<line>[-+]?\d+)(?::(?P<col>[-+]?\d+))?$")


def _got(value: object) -> str:
    """A wrongly typed value, quoted so its type shows: ``'5'`` for a string, ``None``, ``[1]``."""
    return shorten(repr(value)) if isinstance(value, str) else shorten(value)


def _text(value: object, *, what: str, example: str, max_chars: int) -> str:
    if not isinstance(value, str):
        raise UsageError(f"{what} must be a string, got {_got(value)}; e.g. {example}")
    if not value.strip():
        raise UsageError(f"{what} is required, got {shorten(value)!r}; e.g. {example}")
    if len(value) > max_chars:
        raise UsageError(
            f"{what} is too long ({len(value):,} characters; at most {max_chars:,}): `{shorten(value)}`"
        )
    return _utf8(value, what=what)


def _utf8(value: str, *, what: str, hint: str = "") -> str:
    """``value`` when it encodes as UTF-8 (every indexed path and name does); a lone surrogate is
    a usage error naming where it is."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(
            f"{what} is not valid text (a byte that is not UTF-8 at character {exc.start + 1}): "
            f"`{shorten(value)}`{hint}"
        ) from None
    return value


def name(value: object, *, what: str = "a symbol name") -> str:
    """A symbol name: ``createSalesOrder``, ``Order.create``, ``pkg.module.func``."""
    text = _text(
        value, what=what, example="`createSalesOrder` or `Order.create`", max_chars=MAX_NAME_CHARS
    ).strip()
    if _CONTROL.search(text):
        raise UsageError(f"{what} cannot contain control characters, got `{shorten(text)}`")
    return text


def pattern(value: object) -> str:
    """A ``nav symbols`` pattern: a name, part of one, or words."""
    return name(value, what="a pattern")


def target(value: object) -> str:
    """A name or ``path:line[:col]`` for the exact verbs; positions are 1-based."""
    text = _text(
        value,
        what="a symbol name or path:line:col",
        example="`createSalesOrder` or `src/orders.py:12:5`",
        max_chars=MAX_PATH_CHARS,
    ).strip()
    if "\x00" in text or _CONTROL.search(text):
        raise UsageError(
            f"a symbol name or path:line:col cannot contain control characters, got `{shorten(text)}`"
        )
    position(text)
    return text


def position(text: str, *, prose: bool = False) -> None:
    """Refuse a ``path:line[:col]`` whose line or column is below 1 (they are 1-based).

    ``prose``: the text may be a question, so only a whole text without spaces is a position
    ("error at line:0" is a question, not a position in a file called "error at line")."""
    m = (_PROSE_POSITION if prose else _POSITION).match(text)
    if m is None or not m["path"]:
        return
    for part, number in (("line", m["line"]), ("column", m["col"])):
        if number is not None and int(number) < 1:
            raise UsageError(
                f"{part} {shorten(number)} in `{shorten(text)}` is not a position: lines and columns "
                "start at 1, e.g. `src/orders.py:12:5`"
            )


def path(value: object, *, what: str = "a path") -> str:
    """A file path (relative to the root or cwd, or absolute)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise UsageError(f"{what} must be a string, got {_got(value)}; e.g. `src/orders.py`")
    if len(value) > MAX_PATH_CHARS:
        raise UsageError(
            f"{what} is too long ({len(value):,} characters; at most {MAX_PATH_CHARS:,}): `{shorten(value)}`"
        )
    if "\x00" in value:
        raise UsageError(f"{what} cannot contain a NUL character, got `{shorten(value)}`")
    return value


def text(value: object, *, what: str = "search text") -> str:
    """Prose or code to search for; line breaks and tabs are fine (pasted issues, tracebacks)."""
    out = _text(value, what=what, example="`where do we retry the ERP call`", max_chars=MAX_TEXT_CHARS)
    if "\x00" in out:
        raise UsageError(f"{what} cannot contain a NUL character, got `{shorten(out)}`")
    return out


def count(value: object, *, what: str, low: int = 1, high: int = MAX_COUNT) -> int:
    """A whole number in ``[low, high]`` (a bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{what} must be a whole number, got {_got(value)}")
    if not low <= value <= high:
        raise UsageError(f"{what} must be between {low:,} and {high:,}, got {shorten(value)}")
    return value


def optional_count(value: object, *, what: str, low: int = 1, high: int = MAX_COUNT) -> int | None:
    return None if value is None else count(value, what=what, low=low, high=high)


def seconds(
    value: object, *, what: str = "deadline", low: float = 0.01, high: float = MAX_DEADLINE_S
) -> float:
    """A finite number of seconds in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(f"{what} must be a number of seconds, got {_got(value)}")
    number = float(value)
    if not math.isfinite(number) or not low <= number <= high:
        raise UsageError(f"{what} must be between {low:g} and {high:g} seconds, got {shorten(value)}")
    return number


def strings(value: object, *, what: str, each: str = "a string") -> list[str] | None:
    """An optional list of short strings (search filters, kinds)."""
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise UsageError(f"{what} must be a list of strings, got {_got(value)}")
    if len(value) > MAX_FILTERS:
        raise UsageError(f"{what} takes at most {MAX_FILTERS} entries, got {len(value):,}")
    out: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise UsageError(f"each of {what} must be {each}, got {_got(item)}")
        entry = path(item, what=f"an entry of {what}")  # a lone surrogate could match no indexed path
        out.append(_utf8(entry, what=f"an entry of {what}", hint=f"; each must be {each}"))
    return out
