"""The lexical legs' own rules, run over the in-memory fake index (storage/fake.py): no SQLite,
milliseconds. The same legs over the real index are tests/test_search_lexical.py and the
contract both stores pass is tests/test_store_contract.py."""

from __future__ import annotations

from semantic.analysis import query_terms
from semantic.lexical import cap_terms, symbol_chunks
from storage.fake import FakeIndex
from storage.model import Chunk, ParsedFile, Span, SymbolDef, SyntaxRef


def _file(
    path: str, text: str, defs: list[tuple[str, str, str, int]], refs: list[tuple[str, int]] | None = None
) -> ParsedFile:
    """One chunk per file holding ``text``; ``defs`` = (name, qualified name, kind, line)."""
    lines = text.count("\n") + 1
    symbols = tuple(
        SymbolDef(
            n, qn, kind, path, "python", Span(line, 1, line, 9), Span(line, 5, line, 5 + len(n)), f"def {n}"
        )
        for n, qn, kind, line in defs
    )
    return ParsedFile(
        path,
        "python",
        symbols=symbols,
        refs=tuple(SyntaxRef(name, line, 1, 1 + len(name)) for name, line in refs or ()),
        chunks=(Chunk(path, "python", 1, lines, text, defs[0][1] if defs else None, None, f"h-{path}"),),
    )


def _index(*files: ParsedFile) -> FakeIndex:
    fake = FakeIndex()
    for f in files:
        fake.replace_file(f, content_hash=f"b-{f.path}", size=1, lines=1)
    return fake


def _paths(fake: FakeIndex, ranked: list[tuple[int, float]] | list[int]) -> list[str]:
    ids = [r[0] if isinstance(r, tuple) else r for r in ranked]
    places = fake.chunk_places(ids)
    return [places[i].path for i in ids]


def test_a_named_identifier_leads_the_symbols_leg_before_word_matches() -> None:
    fake = _index(
        _file(
            "retry.py", "def retry_delay(n):\n    return n", [("retry_delay", "retry_delay", "function", 1)]
        ),
        _file(
            "wait.py", "def retryDelay(n):\n    return n * 2", [("retryDelay", "retryDelay", "function", 1)]
        ),
        _file(
            "other.py",
            "def delay_retry_loop():\n    pass",
            [("delay_retry_loop", "delay_retry_loop", "function", 1)],
        ),
    )
    ranked = symbol_chunks(fake, query_terms("why does `retryDelay` double the wait"))
    assert _paths(fake, ranked)[0] == "wait.py"
    assert ranked[0][1] > 999  # an exact name match scores above every BM25 match


def test_fields_are_matched_by_exact_name_only() -> None:
    fake = _index(
        _file(
            "money.py",
            "class Money:\n    cents = 0",
            [("Money", "Money", "class", 1), ("cents", "Money.cents", "field", 2)],
        )
    )
    assert symbol_chunks(fake, query_terms("the cents of an amount")) == []
    assert _paths(fake, symbol_chunks(fake, query_terms("`cents`"))) == ["money.py"]


def test_a_long_query_keeps_its_rarest_words_present_in_the_index() -> None:
    files = [
        _file(
            f"m{i}.py",
            f"def handle_{i}(record):\n    return record.parcel + {i}",
            [(f"handle_{i}", f"handle_{i}", "function", 1)],
        )
        for i in range(30)
    ]
    files.append(
        _file("rates.py", "def quote(zone):\n    return zone.tariff", [("quote", "quote", "function", 1)])
    )
    fake = _index(*files)
    text = "every record and every parcel goes through a tariff for its zone " + " ".join(
        f"absent{i}x" for i in range(40)
    )
    capped = cap_terms(fake, query_terms(text))
    assert "tariff" in capped.words and "zone" in capped.words
    assert not any(w.startswith("absent") for w in capped.words)  # not in the index: dropped
    assert capped.match is not None and "record" not in capped.match  # in every chunk: not sent
