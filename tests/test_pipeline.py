"""The search pipeline's pure core (navigator.pipeline): ranking with a feedback step and the
code view, over plain values (no store, no model). The adapters that feed it are tested end to
end in test_search_*.py (SQLite) and test_store_pg.py (PostgreSQL)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import pytest

from navigator.pipeline import (
    Candidates,
    Definition,
    PathIndex,
    code_view,
    feedback_words,
    path_candidates,
    rank,
    snippet,
    unlisted,
)
from semantic.analysis import query_terms
from semantic.fusion import ChunkMeta, Ranked
from semantic.ranking import DEFAULT


def _cands() -> Candidates:
    meta = {
        1: ChunkMeta(1, "erp/retry.py", "retry_erp_call", 1),
        2: ChunkMeta(2, "erp/timeouts.py", "erp_call_deadline", 1),
        3: ChunkMeta(3, "ui/colors.py", "palette", 1),
    }
    return Candidates({"bm25": [1, 2, 3], "symbols": [2, 1]}, meta)


def test_feedback_is_seeded_by_the_first_fusion_and_joins_as_the_prf_leg() -> None:
    terms = query_terms("ERP call")
    seen: list[list[int]] = []

    def feedback(best: Sequence[int]) -> tuple[list[int], Mapping[int, ChunkMeta]]:
        seen.append(list(best))
        return [4, 1], {4: ChunkMeta(4, "net/gateway.py", "backoff_gateway", 1)}

    plain = rank(_cands(), terms, k=10)
    assert all("prf" not in r.ranks for r in plain)
    fed = rank(_cands(), terms, k=10, feedback=feedback)
    assert seen == [[r.id for r in plain][: DEFAULT.prf_docs]]  # the first fusion, its best few
    by_id = {r.id: r for r in fed}
    assert by_id[4].ranks == {"prf": 1} and by_id[1].ranks["prf"] == 2
    assert [r.id for r in fed][:2] == [r.id for r in plain][:2]  # the direct matches keep the lead

    narrow = dataclasses.replace(DEFAULT, prf_docs=1)
    seen.clear()
    rank(_cands(), terms, k=10, feedback=feedback, config=narrow)
    assert seen == [[plain[0].id]]


def test_no_feedback_leg_when_it_finds_nothing() -> None:
    terms = query_terms("ERP call")
    fed = rank(_cands(), terms, k=10, feedback=lambda best: ([], {}))
    assert [(r.id, r.ranks) for r in fed] == [(r.id, r.ranks) for r in rank(_cands(), terms, k=10)]


def test_the_code_view_ranks_every_candidate_and_a_bad_view_is_refused() -> None:
    terms = query_terms("ERP call")
    code = rank(_cands(), terms, k=1, view="code")
    assert sorted(r.id for r in code) == [1, 2, 3]  # cut to k definitions later, by code_view
    assert [r.code_score for r in code] == sorted((r.code_score for r in code), reverse=True)
    with pytest.raises(ValueError, match="view must be one of files, code"):
        rank(_cands(), terms, k=1, view="lines")


@dataclasses.dataclass(frozen=True)
class _Row:
    path: str
    language: str | None
    start_line: int
    end_line: int
    symbol: str | None
    signature: str | None
    text: str


CHUNK = _Row(
    "billing/refunds.py",
    "python",
    1,
    7,
    None,
    None,
    "def refund_order(order):\n    return order.total\n\n\ndef audit_log(entry):\n    pass\n# end\n",
)
DEFS: list[Definition] = [
    ("refund_order", 1, 2, "def refund_order(order)"),
    ("audit_log", 5, 6, "def audit_log(entry)"),
]


def test_code_view_splits_a_chunk_into_the_definitions_it_holds() -> None:
    """A chunk of two functions lists both, the one the query matches first and at the chunk's
    score, the other at ``code_split_decay`` of it; each definition once."""
    r = Ranked(7, CHUNK.path, 1.0, {"bm25": 1}, file_score=1.0, code_score=2.0)
    terms = query_terms("refund an order")
    hits = code_view([(r, CHUNK, DEFS), (r, CHUNK, DEFS)], terms, 10)
    assert [(h.symbol, h.start_line, h.end_line) for h in hits] == [
        ("refund_order", 1, 2),
        ("audit_log", 5, 6),
    ]
    assert hits[0].score == 2.0 and hits[1].score == 2.0 * DEFAULT.code_split_decay
    assert hits[1].snippet.startswith("def audit_log(entry):")
    flat = code_view([(r, CHUNK, DEFS)], terms, 10, config=dataclasses.replace(DEFAULT, code_split_decay=1.0))
    assert [h.score for h in flat] == [2.0, 2.0]
    assert len(code_view([(r, CHUNK, DEFS)], terms, 1)) == 1


def test_code_view_falls_back_to_the_definition_around_then_the_chunk() -> None:
    inner = _Row("a.py", "python", 3, 4, "Order.total", None, "    x = 1\n    return x\n")
    r = Ranked(1, "a.py", 1.0, {}, code_score=1.0)
    around: list[Definition] = [("Order", 1, 9, "class Order"), ("Order.total", 2, 5, "def total(self)")]
    assert [h.symbol for h in code_view([(r, inner, around)], query_terms("total"), 5)] == ["Order.total"]
    assert [(h.symbol, h.start_line) for h in code_view([(r, inner, [])], query_terms("total"), 5)] == [
        ("Order.total", 3)
    ]


def test_snippet_drops_leading_blank_lines_and_keeps_eight() -> None:
    assert snippet("\n\n  \n" + "\n".join(f"line {i}" for i in range(20))) == "\n".join(
        f"line {i}" for i in range(8)
    )


def test_the_path_leg_reads_a_path_index_and_names_the_files_it_alone_found() -> None:
    """One path leg for both stores: the team store keys ``repo/path`` by the path's words only
    (its repository's name is no path word); a scope keeps only its files."""
    index = PathIndex.of(
        {"shop/payments/refunds/policy.py": "payments/refunds/policy.py", "shop/notes.py": "notes.py"}
    )
    terms = query_terms("refunds policy")
    assert path_candidates(index, terms, depth=10) == ["shop/payments/refunds/policy.py"]
    assert path_candidates(index, query_terms("shop"), depth=10) == []
    assert path_candidates(index, terms, depth=10, keep=lambda p: p.endswith("notes.py")) == []
    local = PathIndex.of(["src/refunds.py", "src/policy.py", "docs/refunds_policy.md"])
    found = path_candidates(local, terms, depth=10)
    assert found[0] == "docs/refunds_policy.md" and set(found) == set(local.words)
    meta = {1: ChunkMeta(1, "src/policy.py", None, 1)}
    assert unlisted(found, meta) == [p for p in found if p != "src/policy.py"]
    assert unlisted(found, meta, config=dataclasses.replace(DEFAULT, path_listed=1)) == found[:1]


def test_feedback_words_are_the_best_chunks_shared_rare_words_not_the_querys() -> None:
    docs = [
        ("retry_erp_call", "retry the erp call with backoff_gateway until the gateway answers"),
        ("erp_call_deadline", "how long one erp call may take before the gateway gives up backoff_gateway"),
        ("palette", "red green"),
    ]
    counts = {"gateway": 3, "backoff": 2}
    asked: list[tuple[list[str], int]] = []

    def doc_freqs(words: list[str], cap: int) -> dict[str, int]:
        asked.append((words, cap))
        return {w: counts.get(w, 0) for w in words}

    picked = feedback_words(docs, query_terms("ERP call"), doc_freqs, lambda: 100)
    assert picked == ["backoff", "gateway"]  # in both of the first two, rarest first; "erp", "call" asked
    assert asked[0][1] == int(DEFAULT.prf_max_df * 100)
    assert feedback_words(
        docs,
        query_terms("ERP call"),
        doc_freqs,
        lambda: 100,
        config=dataclasses.replace(DEFAULT, prf_terms=1),
    ) == ["backoff"]
    assert (
        feedback_words(docs[:1], query_terms("ERP call"), doc_freqs, lambda: 100) == []
    )  # fewer than prf_min_docs
