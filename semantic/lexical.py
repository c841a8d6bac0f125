"""Lexical legs of search over one checkout's index: BM25 over chunks, symbol names.

- :func:`bm25_chunks`: FTS5 BM25 over ``chunks_fts`` (path, enclosing symbol and
  identifier-split text; ``createSalesOrder``, ``create_sales_order`` and "create sales
  order" find each other, and the whole identifier still matches exactly).
- :func:`symbol_chunks`: query words and identifiers matched against symbol names
  (``symbols_fts``), each symbol mapped to the chunk holding its definition.

The query analysis is :mod:`semantic.analysis` (pure), the path leg :mod:`semantic.path_leg`;
the legs here ask the index through its query seam (:class:`storage.query.IndexQueries`), never
in SQL.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from semantic.analysis import QueryTerms, variants
from semantic.ranking import DEFAULT, RankingConfig
from storage.query import FtsTable, IndexQueries, Scope
from storage.tokens import fts_clause, fts_clauses, fts_query, split_identifier

__all__ = [
    "bm25_chunks",
    "budgeted_match",
    "cap_terms",
    "doc_freqs",
    "identifier_chunks",
    "symbol_chunks",
]


def doc_freqs(
    store: IndexQueries,
    words: Sequence[str],
    *,
    cap: int,
    table: FtsTable = "chunks",
    config: RankingConfig = DEFAULT,
) -> dict[str, int]:
    """How many rows of ``table`` (chunks or symbol names) hold each word, as the index
    tokenizes it (every column), counted up to ``cap + 1``: a word in more rows reads
    ``cap + 1``.

    Counted through FTS5 MATCH, which applies the index's own tokenizer (porter: ``templates``
    counts the chunks holding ``template``), each count stopping at ``cap + 1``. Without
    ``config.df_by_match``, the first round's lookup of the unstemmed word in the vocabulary
    (every word whose stem differs read as absent; kept for comparison in bench/)."""
    if not config.df_by_match and table == "chunks":
        return store.vocab_doc_freqs(words)
    return store.table_doc_freqs(words, cap=cap, table=table)


def cap_terms(store: IndexQueries, terms: QueryTerms, *, config: RankingConfig = DEFAULT) -> QueryTerms:
    """A long query's prose, weighed as prose: keep the ``config.max_prose_words`` rarest words
    that occur in the index (document frequency from FTS5) in at most ``config.max_prose_df`` of
    the chunks, drop the rest; then choose the BM25 MATCH terms under a postings budget
    (``config.match_postings``). Short queries are returned as they are.

    The budget: FTS5 reads every posting of every OR-ed term and scores every row any term
    matches against every term, so a few common terms cost more than many rare ones and add
    least to BM25; a fixed budget keeps a 2,000-word query's cost independent of the index's
    size. A term in more than 3 × ``max_prose_df`` of the rows is never sent (a name's phrase
    falls back to the whole name); terms absent from the index are not sent."""
    if not terms.long:
        return terms
    max_words = config.max_prose_words
    budget = config.match_postings
    prose = [w for w in terms.prose if len(w) > 2 and not w.isdigit()][: config.prose_lookups]
    plain_names = [i.lower() for i in terms.identifiers if len(split_identifier(i)) == 1 and "." not in i]
    # Chunks, not the largest chunk id: ids grow with every re-index (an index moved across
    # many commits had 25k chunks and ids up to 470k, which turned the frequency rules off).
    chunks = store.chunk_count() if config.df_by_match else store.chunk_id_high()
    common = max(1, int(config.max_prose_df * chunks))
    # Prose words are counted only as far as the prose rule needs, the names' words as far as
    # theirs. Only the ``max_words`` rarest prose words matter: counted first up to a small
    # cap, a word above it cannot be among them once ``max_words`` words fall within it (the
    # same words as counting each up to ``common``, reading a fraction of the postings).
    df: dict[str, int] = {}
    if config.df_by_match:
        low = min(common, config.prose_first_count)
        df = doc_freqs(store, prose, cap=low, config=config)
        if low < common and sum(1 for w in prose if 0 < df[w] <= low) < max_words:
            df.update(doc_freqs(store, [w for w in prose if df[w] > low], cap=common, config=config))
    df.update(
        doc_freqs(
            store,
            list(dict.fromkeys(w for w in [*prose, *terms.words, *plain_names] if w not in df)),
            cap=3 * common,
            config=config,
        )
    )
    order = {w: i for i, w in enumerate(prose)}
    kept = sorted((w for w in prose if 0 < df.get(w, 0) <= common), key=lambda w: (df[w], order[w]))[
        :max_words
    ]
    kept.sort(key=lambda w: order[w])
    # The names' own words stay unless nearly every chunk has them ("data", "run").
    head = [w for w in terms.words if df.get(w, 0) <= 3 * common]
    words = tuple(dict.fromkeys([*head, *kept]))
    idents = tuple(
        i for i in terms.identifiers if not (i.lower() in plain_names and df.get(i.lower(), 0) > 3 * common)
    )
    capped = dataclasses.replace(  # every other field (paths, frames, title…) carries over
        terms,
        words=words,
        stems=frozenset(v for w in words for v in variants(w, config=config)),
        identifiers=idents,
    )
    if budget is None:
        return capped
    clauses = fts_clauses(_match_text(capped))
    needed = [t for whole, parts in clauses for t in (whole, *parts) if t not in df]
    df.update(doc_freqs(store, needed, cap=3 * common, config=config))
    match = budgeted_match(clauses, df, budget=budget, most=3 * common)
    # The symbol leg's BM25 over names: the same rule, with the names' own frequencies.
    symbols = store.symbol_count()
    most = max(1, int(3 * config.max_prose_df * symbols))
    name_clauses = fts_clauses(" ".join(words))
    sdf = doc_freqs(
        store,
        list(dict.fromkeys(t for w, ps in name_clauses for t in (w, *ps))),
        cap=min(most, budget),
        table="symbols",
        config=config,
    )
    name_match = budgeted_match(name_clauses, sdf, budget=budget, most=most)
    return dataclasses.replace(capped, match=match, name_match=name_match)


def budgeted_match(
    clauses: Sequence[tuple[str, tuple[str, ...]]], df: dict[str, int], *, budget: int, most: int
) -> str:
    """The MATCH expression of ``clauses`` (see :func:`storage.tokens.fts_clauses`) whose terms'
    document frequencies sum to at most ``budget``, rarest clauses first (pure).

    A clause's phrase is sent only when each of its words is in 1..``most`` chunks, else its
    whole name alone; a term in no chunk or in more than ``most`` is not sent. Kept clauses
    stay in query order."""
    options: list[tuple[int, int, str, tuple[str, ...]]] = []
    for pos, (whole, parts) in enumerate(clauses):
        d_whole = df.get(whole, 0)
        phrase = bool(parts) and all(0 < df.get(p, 0) <= most for p in parts)
        if not phrase and not 0 < d_whole <= most:
            continue
        # At most this many chunks match the clause: rarer clauses weigh more in BM25.
        matches = (d_whole if d_whole <= most else 0) + (min(df[p] for p in parts) if phrase else 0)
        options.append((matches, pos, whole, parts if phrase else ()))
    options.sort()
    used = 0
    chosen: list[tuple[int, str]] = []
    for _matches, pos, whole, parts in options:
        d_whole = df.get(whole, 0) if df.get(whole, 0) <= most else 0
        full = d_whole + sum(df[p] for p in parts)
        if parts and used + full <= budget:
            used += full
            chosen.append((pos, fts_clause(whole, parts) if d_whole else fts_clause(" ".join(parts))))
        elif d_whole > 0 and used + d_whole <= budget:
            used += d_whole
            chosen.append((pos, fts_clause(whole)))
    return " OR ".join(c for _pos, c in sorted(chosen))


def _match_text(terms: QueryTerms) -> str:
    """Identifiers whole, then the words they do not cover: what the MATCH is built from."""
    parts = list(terms.identifiers)
    covered = {w for ident in terms.identifiers for p in ident.split(".") for w in split_identifier(p)}
    parts.extend(w for w in terms.words if w not in covered)
    return " ".join(parts)


def content_query(terms: QueryTerms) -> str:
    """The FTS5 MATCH text: a long query's budgeted one (:func:`cap_terms`), else identifiers
    whole (OR their words), then the remaining words."""
    if terms.match is not None:
        return terms.match
    return fts_query(_match_text(terms))


def bm25_chunks(
    store: IndexQueries,
    terms: QueryTerms,
    *,
    limit: int = 50,
    paths: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    weights: tuple[float, float, float] = DEFAULT.bm25_weights,
) -> list[tuple[int, float]]:
    """Chunk ids by BM25 (best first) with their positive scores; ``weights``: the columns'
    (path, symbol, text) of ``chunks_fts``."""
    match = content_query(terms)
    if not match:
        return []
    found = store.bm25_chunks(match, weights=weights, scope=Scope.of(paths, languages), limit=limit)
    return [(c.chunk_id, c.score) for c in found]


def identifier_chunks(
    store: IndexQueries,
    terms: QueryTerms,
    *,
    limit: int = 50,
    paths: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    weights: tuple[float, float, float] = DEFAULT.bm25_weights,
    max_names: int = 8,
) -> list[int]:
    """The ``ident`` leg (``RankingConfig.identifier_leg``): chunk ids by BM25 over the query's
    code-looking names alone (snake_case, CamelCase, dotted, ``ENV_VARS``; each whole or as the
    phrase of its parts), so a chunk holding a rare name the query says is not outranked by
    chunks sharing its common words; at most ``max_names`` names, strongest first (a long query's
    names are ordered by :func:`semantic.analysis.mentions`). Empty for a query that names nothing."""
    names = [i for i in terms.identifiers if len(split_identifier(i.rsplit(".", 1)[-1])) > 1 or "." in i]
    match = fts_query(" ".join(names[:max_names]))
    if not match:
        return []
    found = store.bm25_chunks(match, weights=weights, scope=Scope.of(paths, languages), limit=limit)
    return [c.chunk_id for c in found]


def symbol_chunks(
    store: IndexQueries,
    terms: QueryTerms,
    *,
    limit: int = 50,
    paths: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    named: Sequence[str] = (),
    skip_kinds: Sequence[str] = DEFAULT.word_skip_kinds,
) -> list[tuple[int, float]]:
    """Chunks holding the definitions of symbols whose names match the query, best first.

    Exact name matches of identifiers in the query come first — a qualified name matched
    whole, or a name defined in a file the query names (a traceback frame), before a bare
    name; then in the order the query names them, rarer names first — then symbols ranked
    by BM25 over their split qualified names, none of ``skip_kinds``
    (``RankingConfig.word_skip_kinds``: a data member, `Money.cents`, rarely holds the behaviour
    a prose query asks for, and short member names would crowd the leg; measured when Java,
    Kotlin, Scala and Rust gained field symbols: semble's Rust development repositories −0.010
    [−0.017, −0.005] NDCG@10 with fields in the word match, −0.003 [−0.009, 0] without).
    """
    scope = Scope.of(paths, languages)
    out: dict[int, float] = {}
    idents = list(terms.identifiers)
    names = list(dict.fromkeys(i.rsplit(".", 1)[-1] for i in idents))
    if names:
        rows = store.symbols_named(names, scope=scope, limit=limit * 20)
        per_name: dict[str, int] = {}
        for row in rows:
            per_name[row.name] = per_name.get(row.name, 0) + 1
        named_set = set(named)

        def strength(name: str, qualified: str, path: str) -> tuple[int, int, int]:
            """(how the name matched, where the query names it, how common the name is)."""
            best = (3, len(idents))
            for pos, ident in enumerate(idents):
                if ident.rsplit(".", 1)[-1] != name:
                    continue
                dotted = "." in ident
                qualified_match = dotted and (
                    qualified == ident
                    or qualified.endswith("." + ident)
                    or ident.split(".")[-2] in qualified.split(".")
                )
                if qualified_match or path in named_set:
                    best = min(best, (0, pos))
                else:
                    best = min(best, (1 if "." not in ident else 2, pos))
            return (*best, per_name[name])

        ranked = sorted(
            ((cid, strength(name, qn, path)) for cid, name, qn, path in rows if cid is not None),
            key=lambda kv: kv[1],
        )
        for rank, (cid, _key) in enumerate(ranked):
            if cid not in out:
                out[cid] = 1000.0 - rank / 1000.0
            if len(out) >= limit:
                break
    match = terms.name_match if terms.name_match is not None else fts_query(" ".join(terms.words))
    if match and len(out) < limit:
        # A long query's budgeted MATCH finds each name's chunk for the best names only.
        found = store.symbol_bm25_chunks(
            match,
            scope=scope,
            skip_kinds=skip_kinds,
            limit=limit * 2,
            rank_first=terms.name_match is not None,
        )
        for chunk, score in found:
            if chunk is not None and chunk not in out:
                out[chunk] = score
            if len(out) >= limit:
                break
    return sorted(out.items(), key=lambda kv: -kv[1])[:limit]
