"""Close spellings and subsequences among every symbol name, without comparing each one.

``nav symbols getfixturevalue`` offers close names when few match: :func:`difflib.get_close_matches`
over every distinct name of the index (12k on pytest: ~25 ms of ``quick_ratio``) and a subsequence
test over all of them (~12 ms). Both tests have a necessary condition on character counts alone:

- ``difflib``'s ``quick_ratio`` *is* the multiset intersection of the two strings' characters
  (``2·M / (len a + len b)``), an upper bound of ``ratio``; ``get_close_matches`` drops every name
  whose ``quick_ratio`` is under the cutoff before it computes ``ratio``;
- a subsequence needs at least as many of each character in the name as in the needle.

:class:`NameTable` holds the counts of every name once (one row per name: 128 ASCII columns and one
for every other character together, which only loosens the bound), computes both bounds for all
names in one vectorised step, and runs the exact tests on the few that pass. The answers are the
very ones of the plain loops (``tests/test_close_names.py`` holds them equal). A table is built per
index state (:meth:`storage.query.IndexQueries.files_signature`) and kept for the next query.
"""

from __future__ import annotations

import difflib
import heapq
import threading
from collections.abc import Hashable, Sequence

import numpy as np

__all__ = ["NameTable", "subsequence", "table_for"]

_OTHER = 128  # the column of every non-ASCII character


def _counts(names: Sequence[str]) -> np.ndarray:
    """One row of character counts per name: ASCII by code point, the rest together."""
    width = _OTHER + 1
    if not names:
        return np.zeros((0, width), dtype=np.int32)
    codes = np.frombuffer("".join(names).encode("utf-32-le"), dtype=np.uint32)
    rows = np.repeat(np.arange(len(names), dtype=np.int64), [len(n) for n in names])
    flat = rows * width + np.minimum(codes, _OTHER).astype(np.int64)
    counts = np.bincount(flat, minlength=len(names) * width)
    return counts.reshape(len(names), width).astype(np.int32)


def subsequence(needle: str, hay: str) -> bool:
    """Whether ``needle`` (3 characters or more) appears in ``hay`` in order, not necessarily together."""
    if len(needle) < 3:
        return False
    it = iter(hay)
    return all(ch in it for ch in needle)


class NameTable:
    """Every distinct symbol name with its character counts, and the same of its lower case."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.lower = [n.lower() for n in self.names]
        self._counts = _counts(self.names)
        self._lower_counts = _counts(self.lower)
        self._lengths = np.array([len(n) for n in self.names], dtype=np.int64)

    def close_matches(self, word: str, *, n: int, cutoff: float) -> list[str]:
        """``difflib.get_close_matches(word, names, n, cutoff)``, the same list.

        The names whose bound passes are compared best bound first; once ``n`` are kept, the
        first name whose bound is under the worst kept score ends the search (no name after it
        can score more than its bound): a long name no longer costs a full comparison with
        the thousand that share its letters."""
        if n <= 0 or not 0.0 <= cutoff <= 1.0 or not self.names or not word:
            return difflib.get_close_matches(word, self.names, n=n, cutoff=cutoff)  # its errors, its answer
        q = _counts([word])[0]
        shared = np.minimum(self._counts, q).sum(axis=1, dtype=np.int64)
        total = self._lengths + len(word)
        bound = np.where(total > 0, 2.0 * shared / np.maximum(total, 1), 1.0)
        # the same float test difflib makes, with a hair of slack so rounding never drops a name
        keep = np.nonzero(bound >= cutoff - 1e-9)[0]
        order = keep[np.argsort(-bound[keep], kind="stable")]
        matcher = difflib.SequenceMatcher()
        matcher.set_seq2(word)
        best: list[tuple[float, str]] = []  # a min-heap of (score, name): difflib's own order
        for i in order:
            if len(best) == n and bound[i] < best[0][0] - 1e-9:
                break
            name = self.names[int(i)]
            matcher.set_seq1(name)
            if matcher.real_quick_ratio() >= cutoff and matcher.quick_ratio() >= cutoff:
                score = matcher.ratio()
                if score >= cutoff:
                    if len(best) < n:
                        heapq.heappush(best, (score, name))
                    elif (score, name) > best[0]:
                        heapq.heapreplace(best, (score, name))
        return [name for _, name in sorted(best, reverse=True)]

    def subsequences(self, needle: str) -> list[str]:
        """The names whose lower case holds ``needle`` (lower case) as a subsequence, in table order."""
        if len(needle) < 3:
            return []
        q = _counts([needle])[0]
        keep = np.nonzero((self._lower_counts >= q).all(axis=1))[0]
        return [self.names[i] for i in keep if subsequence(needle, self.lower[i])]


_TABLES: dict[Hashable, tuple[Hashable, NameTable]] = {}
_LOCK = threading.Lock()
_KEEP = 8  # indexes whose table one process keeps (a daemon serves one; tests make many)


def table_for(index: Hashable, state: Hashable, names: Sequence[str] | None = None) -> NameTable | None:
    """The table of index ``index`` at ``state``: the kept one if the state is the same, else
    one built from ``names`` (None, and nothing kept: the caller has to read the names first)."""
    with _LOCK:
        held = _TABLES.get(index)
        if held is not None and held[0] == state:
            return held[1]
    if names is None:
        return None
    table = NameTable(names)
    with _LOCK:
        _TABLES.pop(index, None)
        while len(_TABLES) >= _KEEP:
            del _TABLES[next(iter(_TABLES))]
        _TABLES[index] = (state, table)
    return table
