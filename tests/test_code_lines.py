"""The code view's per-span sums (navigator.code_lines.FileLines.aggregate) and its leaf
definitions (navigator.pipeline._leaves) against plain loops over the same lines: the fast paths
(a whole file's postings, sorted starts) must count exactly what the loops count."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from navigator.code_lines import FileLines, SpanQuery, line_parts
from navigator.pipeline import Definition, _leaves

VOCAB = ["ledger", "post", "entry", "Book", "retry_erp", "total", "x"]


def _line(rng: random.Random) -> str:
    kind = rng.random()
    words = " ".join(rng.choice(VOCAB) for _ in range(rng.randint(0, 5)))
    if kind < 0.1:
        return f"    raise LedgerError('could not post the ledger entry {rng.randint(0, 3)}')"
    if kind < 0.2:
        return ""
    return f"    {words} = post_entry(book)  # {rng.choice(VOCAB)}"


def _naive(
    lines: list[str], rows: list[list[int]], query: SpanQuery
) -> list[tuple[list[int], int, int, bool, bool]]:
    """Per row of line numbers: (tf per query word, words, identifier tokens held, quoted, raising)."""
    out = []
    for row in rows:
        parts = [line_parts(lines[n]) for n in row]
        tf = [sum(p[1].count(w) for p in parts) for w in query.words]
        length = sum(len(p[1]) for p in parts)
        held = len({t for p in parts for t in p[0]} & set(query.idents))
        quoted = any(query.quotes(p[2]) for p in parts)
        raising = any(p[3] & query.raise_names for p in parts)
        out.append((tf, length, held, quoted, raising))
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_span_sums_equal_plain_loops_whole_file_or_spans(seed: int, spans_first: bool) -> None:
    rng = random.Random(seed)
    text = [_line(rng) for _ in range(rng.randint(1, 60))]
    # chunks that overlap, as an index's do (the first chunk holding a line gives it)
    chunks: list[tuple[int, str]] = []
    at = 1
    while at <= len(text):
        size = rng.randint(1, 15)
        chunks.append((at, "\n".join(text[at - 1 : at - 1 + size])))
        at += max(1, size - rng.randint(0, 3))
    lines = FileLines(chunks)
    full = [""] + text + [""]
    spans = []
    for _ in range(rng.randint(1, 6)):
        s = rng.randint(1, len(text))
        spans.append((s, min(len(text) + 3, s + rng.randint(0, 12))))
    query = SpanQuery.of(
        sorted(set(rng.sample(["ledger", "post", "entry", "book", "erp", "zebra"], 3))),
        {"Book", "retry_erp", "post_entry"} if rng.random() < 0.7 else set(),
        "post the ledger entry 1 to the book",
        {"LedgerError"},
    )
    covered = {n for s, e in spans for n in range(s, min(e, len(text)) + 1)}
    uncovered = [n for n in range(1, len(text) + 1) if n not in covered]
    rows = [list(range(max(s, 0), min(e, len(text)) + 1)) for s, e in spans]
    calls = [None, uncovered, uncovered] if spans_first else [uncovered, None, uncovered, uncovered]
    for module in calls:  # spans only, the whole file line by line, then from its postings
        got = lines.aggregate(spans, module, query)
        want = _naive(full, rows + ([module] if module is not None else []), query)
        assert [list(map(int, r)) for r in got.tf] == [w[0] for w in want]
        assert list(map(int, got.length)) == [w[1] for w in want]
        assert list(map(int, got.idents)) == [w[2] for w in want]
        assert list(map(bool, got.quoted)) == [w[3] for w in want]
        assert list(map(bool, got.raising)) == [w[4] for w in want]


def _brute_leaves(inside: list[Definition]) -> list[Definition]:
    return [d for d in inside if not any(o is not d and d[1] <= o[1] and o[2] <= d[2] for o in inside)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.integers(0, 15)), max_size=25), st.booleans())
def test_leaf_definitions_equal_the_pairwise_check(spans: list[tuple[int, int]], share: bool) -> None:
    inside: list[Definition] = [(f"d{i}", s, s + n, None) for i, (s, n) in enumerate(spans)]
    if share and inside:
        inside.append(inside[0])  # the same definition twice is one definition
        inside.append(("twin", inside[0][1], inside[0][2], None))  # an equal span: they hold each other
    assert _leaves(inside) == _brute_leaves(inside)
