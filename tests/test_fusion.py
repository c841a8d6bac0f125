"""Pure unit tests for query analysis, RRF and the ranking heuristics (no I/O, no model)."""

from __future__ import annotations

import pytest

from semantic.analysis import path_words, query_terms, stem
from semantic.fusion import (
    ChunkMeta,
    definition_match,
    file_penalty,
    fuse,
    rrf,
    stem_match,
    superseded,
)
from semantic.path_leg import path_files
from semantic.ranking import DEFAULT

RRF_K = DEFAULT.rrf_k


def test_rrf_sums_reciprocal_ranks_and_records_them() -> None:
    fused = rrf({"bm25": [1, 2, 3], "vector": [3, 1]})
    assert fused[1][0] == pytest.approx(1 / (RRF_K + 1) + 1 / (RRF_K + 2))
    assert fused[3][0] == pytest.approx(1 / (RRF_K + 3) + 1 / (RRF_K + 1))
    assert fused[2][1] == {"bm25": 2}
    assert fused[3][1] == {"bm25": 3, "vector": 1}


def test_rrf_ignores_duplicates_within_a_leg() -> None:
    fused = rrf({"bm25": [7, 7, 8]})
    assert fused[8][1] == {"bm25": 2}


def test_query_terms_split_identifiers_and_drop_stopwords() -> None:
    t = query_terms("where do we retry the createSalesOrder call")
    assert "createSalesOrder" in t.identifiers
    assert t.words == ("retry", "create", "sales", "order", "call")
    assert stem("orders") == "order" and stem("classes") == "class" and stem("status") == "status"


def test_single_bare_token_counts_as_identifier() -> None:
    assert query_terms("Flask").identifiers == ("Flask",)


@pytest.mark.parametrize(
    ("symbol", "query", "expected"),
    [
        ("Session.send", "Session.send", True),
        ("orders.create_sales_order", "how is a sales order created createSalesOrder", True),
        ("create_sales_order", "create sales order", True),
        ("Session.send", "how do sessions send requests over the wire", False),
        ("redirect", "redirect", True),
        ("Wrapping.serialize", "Serialize", False),
        ("Serialize", "Serialize", True),
        ("Serialize", "serialize", True),
        (None, "anything", False),
        # A name's common word (a stopword) counts when the query says it and a content word matched.
        ("Store.replace_file", "where is a file's rows replaced in the database", True),
        ("Store.file_row", "where is the file", False),
        ("parse_file", "parsing a file", True),
    ],
)
def test_definition_match(symbol: str | None, query: str, expected: bool) -> None:
    assert definition_match(symbol, query_terms(query)) is expected


def test_stem_match_and_skips_generic_names() -> None:
    assert stem_match("src/flask/sessions.py", query_terms("session management"))
    assert not stem_match("src/flask/__init__.py", query_terms("init the app"))
    assert not stem_match("src/flask/app.py", query_terms("session management"))


def test_penalties_unless_the_query_asks() -> None:
    assert file_penalty("tests/test_app.py", query_terms("app routing")) < 1.0
    assert file_penalty("tests/test_app.py", query_terms("tests for app routing")) == 1.0
    assert file_penalty("vendor/x/y.go", query_terms("routing")) < file_penalty("tests/a.py", query_terms("x"))
    assert file_penalty("src/app.py", query_terms("routing")) == 1.0


def _meta(*rows: tuple[int, str, str | None]) -> dict[int, ChunkMeta]:
    return {cid: ChunkMeta(cid, path, sym, 1) for cid, path, sym in rows}


def test_files_rank_by_sum_of_top_chunks() -> None:
    # a.py has one chunk at rank 1; b.py has three chunks at ranks 2..4: b's sum wins.
    meta = _meta((1, "a.py", None), (2, "b.py", None), (3, "b.py", None), (4, "b.py", None))
    out = fuse({"bm25": [1, 2, 3, 4]}, meta, query_terms("zzz"), limit=10)
    assert [r.path for r in out[:2]] == ["b.py", "a.py"]
    assert out[0].id == 2  # the best chunk of the best file comes first
    assert len(out) == 4 and out[0].ranks == {"bm25": 2}


def test_definition_boost_and_test_penalty_reorder() -> None:
    meta = _meta((1, "tests/test_orders.py", "test_create"), (2, "orders.py", "create_sales_order"))
    out = fuse({"bm25": [1, 2]}, meta, query_terms("create sales order"), limit=10)
    assert out[0].path == "orders.py"


def test_path_leg_adds_files_through_their_representative_chunk() -> None:
    meta = _meta((1, "a.py", None), (9, "retry.py", None))
    out = fuse({"bm25": [1]}, meta, query_terms("retry"), path_leg=["retry.py"], file_reps={"retry.py": 9})
    assert {r.path for r in out} == {"a.py", "retry.py"}
    assert next(r for r in out if r.path == "retry.py").ranks == {"path": 1}


def test_fuse_drops_chunks_without_meta() -> None:
    assert fuse({"vector": [5]}, {}, query_terms("x")) == []


def test_path_leg_prefers_rare_words() -> None:
    files = {p: path_words(p) for p in ["src/retry/policy.py", "src/http/client.py", "src/http/retry.py"]}
    ranked = path_files(files, query_terms("http retry policy"))
    assert ranked[0][0] == "src/retry/policy.py"
    assert {p for p, _ in ranked} == set(files)


def test_superseded_versions_are_the_older_siblings_only() -> None:
    paths = ["pkg/src/v3/types.ts", "pkg/src/v4/core/schemas.ts", "api/v1/x.py", "other/v2/y.py"]
    assert superseded(paths) == {"pkg/src/v3/types.ts"}


def test_legacy_and_private_modules_are_penalized() -> None:
    q = query_terms("how are model fields declared")
    assert file_penalty("pydantic/v1/fields.py", q) < 1.0
    assert file_penalty("pydantic/_internal/_fields.py", q) < 1.0
    assert file_penalty("pydantic/fields.py", q) == 1.0
    assert file_penalty("pydantic/__init__.py", q) == 1.0


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("lib/bats-core/test_functions.bash", False),  # a library file of bats-core
        ("src/testing_utils.rs", False),
        ("lib/latest.py", False),
        ("pkg/test_app.py", True),
        ("router_test.go", True),
        ("src/api.test.ts", True),
        ("spec/models/user_spec.rb", True),
        ("lib/user_spec.rb", True),
        ("test/bats/run.bash", True),
        ("conftest.py", True),
    ],
)
def test_test_files_by_folder_or_language_convention(path: str, is_test: bool) -> None:
    """A file is a test by its folder or its language's naming convention, not because
    "test" is somewhere in its name."""
    q = query_terms("how are functions run")
    assert (file_penalty(path, q) < 1.0) is is_test


def test_ranking_settings_are_a_value_passed_in_not_a_module_global() -> None:
    """Two configs rank the same legs differently side by side; neither changes the other, nor
    the shipped :data:`DEFAULT` (a module constant patched by one caller changed every search)."""
    import dataclasses

    meta = _meta((1, "tests/test_app.py", None), (2, "src/app.py", None))
    legs = {"bm25": [1, 2]}
    terms = query_terms("request routing")
    lenient = dataclasses.replace(DEFAULT, test_penalty=1.0)
    assert [r.path for r in fuse(legs, meta, terms)] == ["src/app.py", "tests/test_app.py"]
    assert [r.path for r in fuse(legs, meta, terms, config=lenient)] == ["tests/test_app.py", "src/app.py"]
    assert [r.path for r in fuse(legs, meta, terms)] == ["src/app.py", "tests/test_app.py"]
    assert DEFAULT.test_penalty == 0.3
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT.test_penalty = 1.0  # type: ignore[misc]  # the point: it is frozen


@pytest.mark.parametrize(("field", "value"), [("depth", 0), ("top_chunks_per_file", 2.5), ("rrf_k", -1), ("match_postings", 0)])
def test_a_ranking_config_no_ranking_can_use_is_refused_by_name(field: str, value: object) -> None:
    import dataclasses

    with pytest.raises(ValueError, match=field):
        dataclasses.replace(DEFAULT, **{field: value})


def test_a_path_score_does_not_depend_on_the_order_of_its_words() -> None:
    """The words a path holds come from a set (its order changes with PYTHONHASHSEED); a plain
    float sum in that order gave (0.1 + 0.2) + 0.3 != 0.1 + (0.2 + 0.3) and broke ties per process."""
    import itertools

    from semantic.path_leg import path_score

    idfs = [0.1, 0.2, 0.3, 1e-17, 2.5]
    scores = {path_score(list(p), 7) for p in itertools.permutations(idfs)}
    assert len(scores) == 1
    assert sum([0.1, 0.2, 0.3]) != sum([0.3, 0.2, 0.1])  # the hazard is real

