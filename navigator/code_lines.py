"""A file's lines as the code view's learned order reads them (navigator/code_order.py): each
line split once into its tokens, identifier words, quoted literals and raised names, and a span's
sums over them (how often each query word occurs, how many words, which identifier tokens,
whether it quotes the query or raises an error it names) by prefix sums over sorted events. The
last files read are kept, keyed by their indexed text, for the next query. Pure: no I/O.
"""

from __future__ import annotations

import functools
import operator
import re
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from typing import TypeVar, cast

import numpy as np
import numpy.typing as npt

from navigator.pipeline import snippet_at
from storage.tokens import split_words

__all__ = [
    "SNIPPET_READ",
    "WORD",
    "FileLines",
    "SpanQuery",
    "SpanSums",
    "clear_kept",
    "file_lines",
    "line_parts",
]

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""An identifier-like token."""
_LITERAL = re.compile(r"""(?:'([^'\\\n]{12,})'|"([^"\\\n]{12,})")""")
_FORMAT = re.compile(r"%[-#0-9.]*[sdrfi]|\{[^}]*\}")
_RAISE = re.compile(r"\braise\s+([A-Za-z_][\w.]*)")
_QUOTED = 12
"""A string literal's part counts as quoted by the query from this many characters."""
SNIPPET_READ = 40
"""Lines a snippet is cut from (it shows eight, after leading blank lines)."""


@functools.lru_cache(maxsize=65_536)
def line_parts(line: str) -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...], frozenset[str]]:
    """One line's tokens, lowercased identifier words, quoted literals and raised names (a pool
    reads the same lines for query after query)."""
    tokens = WORD.findall(line)
    words = tuple(chain.from_iterable(map(split_words, tokens)))
    literals = tuple(a or b for a, b in _LITERAL.findall(line)) if ("'" in line or '"' in line) else ()
    raised = frozenset(r.rsplit(".", 1)[-1] for r in _RAISE.findall(line)) if "raise" in line else frozenset()
    return frozenset(tokens), words, literals, raised


@dataclass(frozen=True, slots=True)
class SpanQuery:
    """What a pool's spans are matched against: the query's words, its identifier tokens, the
    literals it quotes and the error names it says."""

    words: tuple[str, ...]
    idents: tuple[str, ...]
    text: str
    raise_names: frozenset[str]
    word_set: frozenset[str] = frozenset()
    word_at: dict[str, int] = field(default_factory=dict)
    ident_set: frozenset[str] = frozenset()
    ident_at: dict[str, int] = field(default_factory=dict)
    windows: frozenset[str] = frozenset()
    """Every 12 characters of the text (a literal it quotes starts with one)."""

    @classmethod
    def of(
        cls, words: Sequence[str], idents: Iterable[str], text: str, raise_names: Iterable[str]
    ) -> SpanQuery:
        ws, ids = tuple(words), tuple(sorted(idents))
        return cls(
            ws, ids, text, frozenset(raise_names), frozenset(ws), {w: n for n, w in enumerate(ws)},
            frozenset(ids), {t: n for n, t in enumerate(ids)},
            frozenset(text[i : i + _QUOTED] for i in range(len(text) - _QUOTED + 1)),
        )  # fmt: skip

    def quotes(self, literals: Iterable[str]) -> bool:
        """Whether one of ``literals`` (split at format placeholders) is quoted by the query:
        a part of at least 12 characters found in its text (whose first 12 are one of the
        text's windows, looked up before the text is searched)."""
        for lit in literals:
            for part in _FORMAT.split(lit):
                part = part.strip()
                if len(part) >= _QUOTED and part[:_QUOTED] in self.windows and part in self.text:
                    return True
        return False


@dataclass(frozen=True, slots=True)
class SpanSums:
    """:meth:`FileLines.aggregate`'s sums, a row per span."""

    tf: npt.NDArray[np.int64]
    """(spans, query words): each word's count among the span's words."""
    length: npt.NDArray[np.int64]
    idents: npt.NDArray[np.int64]
    quoted: npt.NDArray[np.bool_]
    raising: npt.NDArray[np.bool_]


_T = TypeVar("_T")


def _pick(items: Sequence[_T], at: Sequence[int]) -> Sequence[_T]:
    """``items`` at the indexes ``at`` (one C call)."""
    if len(at) == 1:
        return (items[at[0]],)
    got: tuple[_T, ...] = operator.itemgetter(*at)(items)
    return got


def _events(
    keys: Sequence[str], postings: dict[str, array[int]]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(index of the key in ``keys``, line) for each line of each key's postings."""
    held = [(j, postings[k]) for j, k in enumerate(keys) if k in postings]
    lines = np.fromiter(chain.from_iterable(at for _j, at in held), dtype=np.int64)
    ids = np.repeat(
        np.fromiter((j for j, _at in held), dtype=np.int64, count=len(held)),
        np.fromiter((len(at) for _j, at in held), dtype=np.int64, count=len(held)),
    )
    return ids, lines


class FileLines:
    """One file's indexed lines (``text[n]`` is line ``n``; "" where the index holds none) and each
    line's parts (:func:`line_parts`), split when a candidate first reads them."""

    def __init__(self, chunks: Sequence[tuple[int, str]]) -> None:
        parts = [(start, chunk.splitlines()) for start, chunk in chunks]
        self.last = max((start + len(lines) - 1 for start, lines in parts), default=0)
        size = self.last + 2
        self.text = [""] * size
        for start, lines in reversed(parts):  # the first chunk holding a line gives it
            self.text[start : start + len(lines)] = lines
        self._tokens: list[frozenset[str]] = [frozenset()] * size
        self._words: list[tuple[str, ...]] = [()] * size
        self._literals: list[tuple[str, ...]] = [()] * size
        self._raised: list[frozenset[str]] = [frozenset()] * size
        self._split = bytearray(size)
        self._len_cache: npt.NDArray[np.int64] | None = None
        self._whole_reads = 0
        self._postings: tuple[dict[str, array[int]], dict[str, array[int]]] | None = None
        self._lock = threading.Lock()  # kept files are shared by the daemon's request threads

    def _lens(self) -> npt.NDArray[np.int64]:
        """Each line's word count (0 for a line not split yet), kept until more are split (under
        the lock)."""
        if self._len_cache is None:
            self._len_cache = np.fromiter(map(len, self._words), dtype=np.int64, count=self.last + 2)
        return self._len_cache

    def _inverted(self) -> tuple[dict[str, array[int]], dict[str, array[int]]]:
        """The whole file's postings, once every line is split (under the lock): word -> the line
        of each of its occurrences, identifier token -> each line holding it (4 bytes a line number). A query's events
        are then read per query word, not per line (a module-level row spans the whole file)."""
        if self._postings is None:
            words: dict[str, array[int]] = {}
            tokens: dict[str, array[int]] = {}
            for n, ws in enumerate(self._words):
                for w in ws:
                    words.setdefault(w, array("I")).append(n)
            for n, ts in enumerate(self._tokens):
                for t in ts:
                    tokens.setdefault(t, array("I")).append(n)
            self._postings = (words, tokens)
        return self._postings

    def _fill(self, lo: int, hi: int) -> None:
        """Split lines ``lo``..``hi - 1`` (a line split before is split again from the cache;
        under the lock)."""
        tokens, words, literals, raised = zip(*map(line_parts, self.text[lo:hi]), strict=True)
        self._tokens[lo:hi] = tokens
        self._words[lo:hi] = words
        self._literals[lo:hi] = literals
        self._raised[lo:hi] = raised
        self._split[lo:hi] = b"\x01" * (hi - lo)
        self._len_cache = None
        self._postings = None

    def _clip(self, start: int, end: int) -> tuple[int, int]:
        """Lines ``start``..``end`` as the index holds them: [lo, hi)."""
        lo, hi = max(start, 0), min(end, self.last) + 1
        return lo, max(lo, hi)

    def aggregate(
        self, spans: Sequence[tuple[int, int]], uncovered: Sequence[int] | None, query: SpanQuery
    ) -> SpanSums:
        """Per span (and for the lines ``uncovered``, when given, as one more row last): how often
        each query word is among its words, how many words it has, how many of the query's
        identifier tokens it holds, and whether it quotes a literal of the query or raises an
        error the query names. Each needed line is split once; the sums are prefix sums."""
        ranges = [self._clip(s, e) for s, e in spans]
        needed = [(1, self.last + 1)] if uncovered is not None else ranges  # a whole file, or spans
        with self._lock:  # a line's parts never change once split: only splitting is guarded
            for lo, hi in needed:
                if lo < hi and self._split.find(0, lo, hi) >= 0:
                    self._fill(lo, hi)
            whole_lens = self._lens() if uncovered is not None else None
            postings = None
            if uncovered is not None:  # postings from a file's second whole read: a first query pays none
                self._whole_reads += 1
                postings = self._inverted() if self._whole_reads > 1 else None
        words: Sequence[tuple[str, ...]]
        tokens: Sequence[frozenset[str]]
        literals: Sequence[tuple[str, ...]]
        raised: Sequence[frozenset[str]]
        if uncovered is not None:
            at: Sequence[int] = range(self.last + 2)
            words, tokens = self._words, self._tokens
            literals, raised = self._literals, self._raised
            lens = cast("npt.NDArray[np.int64]", whole_lens)
        else:  # only the spans' lines, in order (a file's few definitions, not all its lines)
            marks = bytearray(self.last + 2)
            for lo, hi in ranges:
                marks[lo:hi] = b"\x01" * (hi - lo)
            at = list(compress(range(self.last + 2), marks))
            if not at:
                at = [0]
            words, tokens = _pick(self._words, at), _pick(self._tokens, at)
            literals, raised = _pick(self._literals, at), _pick(self._raised, at)
            lens = np.fromiter(map(len, words), dtype=np.int64, count=len(at))
        size = len(at)
        where = np.asarray(at, dtype=np.int64)
        starts = np.searchsorted(where, np.array([r[0] for r in ranges], dtype=np.int64))
        ends = np.searchsorted(where, np.array([r[1] for r in ranges], dtype=np.int64))
        mask = None
        if uncovered is not None:
            mask = np.zeros(size, dtype=np.bool_)
            mask[list(uncovered)] = True
        no_events = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        word_events = no_events
        ident_events = no_events
        if postings is not None:  # the whole file: (query word, line) from its postings
            word_events = _events(query.words, postings[0])
            ident_events = _events(query.idents, postings[1])
        elif query.words:  # (query word, line) of each occurrence, from the lines holding one, in C
            hits = list(compress(range(size), map(operator.not_, map(query.word_set.isdisjoint, words))))
            if hits:
                held = _pick(words, hits)
                flat = list(chain.from_iterable(held))
                ids = np.fromiter(map(query.word_at.get, flat, repeat(-1)), dtype=np.int64, count=len(flat))
                lines = np.repeat(
                    np.asarray(hits, dtype=np.int64), np.fromiter(map(len, held), dtype=np.int64)
                )
                keep = ids >= 0
                word_events = (ids[keep], lines[keep])
        if postings is None and query.idents:  # (identifier token, line) of each line holding it
            hits = list(compress(range(size), map(operator.not_, map(query.ident_set.isdisjoint, tokens))))
            if hits:
                found = list(map(query.ident_set.intersection, _pick(tokens, hits)))
                flat_ids = list(chain.from_iterable(found))
                ids = np.fromiter(
                    map(query.ident_at.__getitem__, flat_ids), dtype=np.int64, count=len(flat_ids)
                )
                lines = np.repeat(
                    np.asarray(hits, dtype=np.int64), np.fromiter(map(len, found), dtype=np.int64)
                )
                ident_events = (ids, lines)

        def counted(
            events: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]], width: int
        ) -> npt.NDArray[np.int64]:
            """(spans [+ module], width): the events of each id on each span's lines."""
            ids, lines = events
            keys = np.sort(ids * (size + 1) + lines)
            base = np.arange(width, dtype=np.int64)[None, :] * (size + 1)
            out: npt.NDArray[np.int64] = np.searchsorted(keys, base + ends[:, None]) - np.searchsorted(
                keys, base + starts[:, None]
            )
            if mask is not None:
                module = np.bincount(ids[mask[lines]], minlength=width)[None, :]
                out = np.concatenate([out, module], axis=0)
            return out

        def total(a: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
            prefix = np.zeros(size + 1, dtype=np.int64)
            np.cumsum(a, out=prefix[1:])
            out: npt.NDArray[np.int64] = prefix[ends] - prefix[starts]
            if mask is not None:
                out = np.concatenate([out, [int(a[mask].sum())]])
            return out

        quoted = np.zeros(size, dtype=np.int64)
        for x in compress(range(size), literals):
            quoted[x] = query.quotes(literals[x])
        raising = np.zeros(size, dtype=np.int64)
        for x in compress(range(size), raised):
            raising[x] = bool(raised[x] & query.raise_names)
        return SpanSums(
            tf=counted(word_events, len(query.words)),
            length=total(lens),
            idents=(counted(ident_events, len(query.idents)) > 0).sum(axis=1),
            quoted=total(quoted) > 0,
            raising=total(raising) > 0,
        )

    def uncovered(self, spans: Iterable[tuple[int, int]]) -> list[int]:
        """The lines (of those the index holds) no span covers."""
        covered = bytearray(self.last + 2)
        for s, e in spans:
            lo, hi = max(s, 0), min(e, self.last) + 1
            if lo < hi:
                covered[lo:hi] = b"\x01" * (hi - lo)
        return [n for n in range(1, self.last + 1) if not covered[n]]

    def module_snippet(self, uncovered: list[int]) -> tuple[str, int]:
        """The module level's snippet: from its first line that is not blank, up to the next
        definition ("" when it has none)."""
        at = next((n for n in uncovered if self.text[n].strip()), 0)
        if not at:
            return "", 0
        run = [at]
        for n in uncovered[uncovered.index(at) + 1 :]:
            if n != run[-1] + 1 or len(run) == SNIPPET_READ:
                break
            run.append(n)
        return snippet_at("\n".join(self.text[n] for n in run), at)


_FILES: OrderedDict[tuple[str, tuple[tuple[int, str], ...]], FileLines] = OrderedDict()
_FILES_KEPT = 64
_FILES_LOCK = threading.Lock()


def file_lines(path: str, chunks: Sequence[tuple[int, str]]) -> FileLines:
    """The lines of a file of these chunks, split as earlier queries split them: the last
    :data:`_FILES_KEPT` files read are kept, keyed by their indexed text (a file changed since
    is another key), so the files a session keeps asking about are split once."""
    key = (path, tuple(chunks))
    with _FILES_LOCK:
        got = _FILES.get(key)
        if got is not None:
            _FILES.move_to_end(key)
            return got
    got = FileLines(chunks)
    with _FILES_LOCK:
        _FILES[key] = got
        while len(_FILES) > _FILES_KEPT:
            _FILES.popitem(last=False)
    return got


def clear_kept() -> None:
    """Forget the kept files (a benchmark timing first queries, a test splitting afresh)."""
    with _FILES_LOCK:
        _FILES.clear()
