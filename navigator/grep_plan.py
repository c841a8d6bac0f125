"""``nav grep``'s planner (pure): a pattern, read as ripgrep reads it (Rust regex syntax, or a
literal under ``-F``), becomes a boolean query over trigrams that every matching line must
contain — a sound over-approximation. Anything it does not fully understand (``.``, ``\\w+``,
inline flags, nested classes) weakens the query towards "all files", never towards missing one.
See :mod:`navigator.grep` for how an answer is made from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

EXACT_SET_MAX = 64

# -- planning (pure) -------------------------------------------------------------------------

Query = tuple[Any, ...]  # ("all",) | ("tri", int) | ("and", (Query, ...)) | ("or", (Query, ...))
ALL: Query = ("all",)
_UNSURE_UNDER_I = frozenset(b"ks")
"""ASCII letters whose case-insensitive match includes a non-ASCII character (K: U+212A KELVIN
SIGN, s: U+017F LONG S): their trigrams cannot narrow a case-insensitive search."""


class _Bail(Exception):
    """Syntax the planner does not handle: the whole pattern is planned as "all files"."""


@dataclass(frozen=True, slots=True)
class _Info:
    exact: frozenset[bytes] | None  # every string the node can match (lowercased), when known and small
    query: Query = ALL  # what any match contains, when ``exact`` is None


_ANY = _Info(None, ALL)
_EMPTY = _Info(frozenset({b""}))


def trigram(b: bytes) -> int:
    return (b[0] << 16) | (b[1] << 8) | b[2]


def _and(parts: Sequence[Query]) -> Query:
    out: list[Query] = []
    for p in parts:
        if p == ALL:
            continue
        if p[0] == "and":
            out.extend(p[1])
        elif p not in out:
            out.append(p)
    if not out:
        return ALL
    return out[0] if len(out) == 1 else ("and", tuple(out))


def _or(parts: Sequence[Query]) -> Query:
    out: list[Query] = []
    for p in parts:
        if p == ALL:
            return ALL
        if p[0] == "or":
            out.extend(p[1])
        elif p not in out:
            out.append(p)
    if not out:
        return ALL
    return out[0] if len(out) == 1 else ("or", tuple(out))


def _string_query(s: bytes) -> Query:
    if b"\n" in s:
        return ALL
    return _and([("tri", trigram(s[i : i + 3])) for i in range(len(s) - 2)])


def _query(info: _Info) -> Query:
    if info.exact is None:
        return info.query
    return _or([_string_query(s) for s in info.exact])


def _concat(items: Sequence[_Info]) -> _Info:
    cur: frozenset[bytes] = frozenset({b""})
    parts: list[Query] = []
    flushed = False
    for it in items:
        if it.exact is not None and len(cur) * len(it.exact) <= EXACT_SET_MAX:
            cur = frozenset(a + b for a in cur for b in it.exact)
            continue
        parts.append(_query(_Info(cur)))
        flushed = True
        if it.exact is not None:
            cur = it.exact
        else:
            parts.append(it.query)
            cur = frozenset({b""})
    if not flushed:
        return _Info(cur)
    parts.append(_query(_Info(cur)))
    return _Info(None, _and(parts))


def _alternate(items: Sequence[_Info]) -> _Info:
    if all(it.exact is not None for it in items):
        union: frozenset[bytes] = frozenset().union(*(it.exact or () for it in items))
        if len(union) <= EXACT_SET_MAX:
            return _Info(union)
    return _Info(None, _or([_query(it) for it in items]))


def _char(c: str, ignore_case: bool) -> _Info:
    b = c.encode("utf-8", "surrogatepass")
    # under -i a non-ASCII character may fold to others of other bytes (ripgrep's Unicode
    # tables, not Python's): it narrows nothing
    if ignore_case and (len(b) > 1 or b.lower()[0] in _UNSURE_UNDER_I):
        return _ANY
    return _Info(frozenset({b.lower()}))


def _literal(text: str, ignore_case: bool) -> _Info:
    return _concat([_char(c, ignore_case) for c in text])


class _Parser:
    """Rust-regex syntax, as far as narrowing needs it; :class:`_Bail` on anything else."""

    def __init__(self, pattern: str, ignore_case: bool) -> None:
        self.p = pattern
        self.i = 0
        self.icase = ignore_case

    def parse(self) -> _Info:
        info = self.alternation()
        if self.i != len(self.p):
            raise _Bail("unbalanced )")
        return info

    def alternation(self) -> _Info:
        branches = [self.sequence()]
        while self.i < len(self.p) and self.p[self.i] == "|":
            self.i += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else _alternate(branches)

    def sequence(self) -> _Info:
        items: list[_Info] = []
        while self.i < len(self.p) and self.p[self.i] not in "|)":
            items.extend(self.repeat(self.atom()))
        return _concat(items)

    def repeat(self, atom: _Info) -> list[_Info]:
        """The atom with its quantifiers, as a sequence: ``x+`` is ``x`` then anything, ``x{2,}``
        is ``xx`` then anything, ``x?`` is ``x`` or nothing, ``x*`` is anything."""
        p = self.p
        items = [atom]
        while self.i < len(p) and p[self.i] in "*+?{":
            c = p[self.i]
            if c == "{":
                end = p.find("}", self.i)
                if end < 0:
                    raise _Bail("unclosed {")
                body = p[self.i + 1 : end]
                lo_s, comma, hi_s = body.partition(",")
                if not lo_s.strip().isdigit() or (hi_s.strip() and not hi_s.strip().isdigit()):
                    raise _Bail("bad repetition")
                lo = int(lo_s)
                exact = not comma
                if not exact and hi_s.strip():
                    exact = int(hi_s) == lo
                self.i = end + 1
            else:
                lo, exact = (1, False) if c == "+" else (0, False)
                self.i += 1
            if self.i < len(p) and p[self.i] == "?":
                self.i += 1  # lazy
            whole = _concat(items)
            if c == "?":
                items = (
                    [_Info(whole.exact | {b""})]
                    if whole.exact is not None and len(whole.exact) < EXACT_SET_MAX
                    else [_ANY]
                )
            elif lo == 0:
                items = [_ANY]
            else:
                items = [whole] * min(lo, 4) + ([] if exact and lo <= 4 else [_ANY])
        return items

    def atom(self) -> _Info:
        p = self.p
        c = p[self.i]
        if c == "(":
            self.i += 1
            if p.startswith("?", self.i):
                if p.startswith("?:", self.i):
                    self.i += 2
                elif p.startswith("?P<", self.i) or p.startswith("?<", self.i):
                    end = p.find(">", self.i)
                    if end < 0:
                        raise _Bail("bad group name")
                    self.i = end + 1
                else:
                    raise _Bail("inline flags")  # (?i) (?x) ... change how the rest reads
            inner = self.alternation()
            if self.i >= len(p) or p[self.i] != ")":
                raise _Bail("unclosed (")
            self.i += 1
            return inner
        if c in "*+?{":
            raise _Bail("repetition without an operand")
        if c == "[":
            return self.char_class()
        if c == ".":
            self.i += 1
            return _ANY
        if c in "^$":
            self.i += 1
            return _EMPTY
        if c == "\\":
            return self.escape()
        self.i += 1
        return _char(c, self.icase)

    def escape(self) -> _Info:
        p = self.p
        if self.i + 1 >= len(p):
            raise _Bail("trailing backslash")
        c = p[self.i + 1]
        self.i += 2
        if c in "dDwWsS":
            return _ANY
        if c in "pP":
            if self.i < len(p) and p[self.i] == "{":
                end = p.find("}", self.i)
                if end < 0:
                    raise _Bail("unclosed \\p{")
                self.i = end + 1
            else:
                self.i += 1
            return _ANY
        if c in "bBAz":
            return _EMPTY
        simple = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
        if c in simple:
            return _char(simple[c], self.icase)
        if c in "xuU":
            return _char(self.hex_escape(c), self.icase)
        if c.isascii() and not c.isalnum():
            return _char(c, self.icase)
        raise _Bail(f"escape \\{c}")

    def hex_escape(self, kind: str) -> str:
        p = self.p
        if self.i < len(p) and p[self.i] == "{":
            end = p.find("}", self.i)
            if end < 0:
                raise _Bail("unclosed \\x{")
            digits = p[self.i + 1 : end]
            self.i = end + 1
        else:
            n = {"x": 2, "u": 4, "U": 8}[kind]
            digits = p[self.i : self.i + n]
            self.i += n
            if len(digits) != n:
                raise _Bail("short hex escape")
        try:
            cp = int(digits, 16)
            return chr(cp)
        except (ValueError, OverflowError):
            raise _Bail("bad hex escape") from None

    def char_class(self) -> _Info:
        """A plain class of a few characters (``[abc]``, ``[0-9]``); ANY for a bigger or negated
        one; a bail for nested classes and set operations."""
        p = self.p
        i = self.i + 1
        negated = i < len(p) and p[i] == "^"
        if negated:
            i += 1
        chars: list[str] = []
        first = True
        simple = not negated
        while True:
            if i >= len(p):
                raise _Bail("unclosed [")
            c = p[i]
            if c == "]" and not first:
                i += 1
                break
            first = False
            if c == "[" or p.startswith(("&&", "--", "~~"), i):
                raise _Bail("nested class or set operation")
            if c == "\\":
                if i + 1 >= len(p):
                    raise _Bail("trailing backslash")
                e = p[i + 1]
                if e in "xuU":
                    sub = _Parser(p, self.icase)
                    sub.i = i + 2
                    lit = sub.hex_escape(e)
                    i = sub.i
                elif e in "pP":
                    simple = False
                    i += 2
                    if i < len(p) and p[i] == "{":
                        end = p.find("}", i)
                        if end < 0:
                            raise _Bail("unclosed \\p{")
                        i = end + 1
                    else:
                        i += 1
                    continue
                elif e in "dDwWsS":
                    simple = False
                    i += 2
                    continue
                elif e in "ntrfva":
                    lit = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}[e]
                    i += 2
                elif e.isascii() and not e.isalnum():
                    lit = e
                    i += 2
                else:
                    raise _Bail(f"escape \\{e} in a class")
            else:
                lit = c
                i += 1
            if i + 1 < len(p) and p[i] == "-" and p[i + 1] != "]":
                hi_c = p[i + 1]
                if hi_c in "\\[":
                    raise _Bail("escaped range end")
                i += 2
                lo, hi = ord(lit), ord(hi_c)
                if hi < lo or hi - lo > EXACT_SET_MAX:
                    simple = False
                    continue
                chars.extend(chr(x) for x in range(lo, hi + 1))
            else:
                chars.append(lit)
        self.i = i
        if not simple or not chars or len(chars) > 16:
            return _ANY
        return _alternate([_char(ch, self.icase) for ch in chars])


def plan(pattern: str, *, fixed: bool = False, ignore_case: bool = False) -> Query:
    """The trigram query every line matching ``pattern`` satisfies (over ASCII-lowercased bytes);
    ``ALL`` when nothing narrows it. Sound by construction: unknown syntax plans as ``ALL``."""
    if "\n" in pattern:
        return ALL  # ripgrep reads several patterns, or refuses: let it decide on every file
    if fixed:
        return _query(_literal(pattern, ignore_case))
    try:
        return _query(_Parser(pattern, ignore_case).parse())
    except (_Bail, IndexError):
        return ALL
