"""Lexical legs of search, over the SQLite index: BM25 over chunks, symbol names, paths.

- :func:`bm25_chunks`: FTS5 BM25 over ``chunks_fts`` (path, enclosing symbol and
  identifier-split text; ``createSalesOrder``, ``create_sales_order`` and "create sales
  order" find each other, and the whole identifier still matches exactly).
- :func:`symbol_chunks`: query words and identifiers matched against symbol names
  (``symbols_fts``), each symbol mapped to the chunk holding its definition.
- :func:`path_files`: files whose path words match the query, weighted by rarity.

The query analysis (:func:`query_terms`) is pure; the legs ask the index through its query seam
(:class:`storage.query.IndexQueries`), never in SQL.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from semantic.ranking import DEFAULT, RankingConfig
from storage.query import FtsTable, IndexQueries, Scope
from storage.tokens import fts_clause, fts_clauses, fts_query, split_identifier

__all__ = [
    "Mentions",
    "QueryTerms",
    "budgeted_match",
    "cap_terms",
    "doc_freqs",
    "mentions",
    "by_basename",
    "by_path_word",
    "named_files",
    "bm25_chunks",
    "path_files",
    "query_terms",
    "stem",
    "variants",
    "symbol_chunks",
]

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "not",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "without",
        "into",
        "onto",
        "over",
        "under",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "done",
        "doing",
        "have",
        "has",
        "had",
        "how",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "whose",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "there",
        "their",
        "them",
        "they",
        "we",
        "our",
        "you",
        "your",
        "i",
        "me",
        "my",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "if",
        "then",
        "else",
        "than",
        "so",
        "such",
        "as",
        "about",
        "via",
        "per",
        "each",
        "every",
        "all",
        "any",
        "some",
        "use",
        "used",
        "uses",
        "using",
        "get",
        "gets",
        "make",
        "makes",
        "made",
        "work",
        "works",
        "handle",
        "handles",
        "handled",
        "happen",
        "happens",
        "code",
        "function",
        "functions",
        "method",
        "methods",
        "class",
        "classes",
        "file",
        "files",
        "implement",
        "implemented",
        "implementation",
        "logic",
        "find",
        "where's",
        "whats",
    ]
)

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|[0-9]+")


def stem(word: str) -> str:
    """A deliberately tiny normalizer: lower case, and regular plurals to the singular."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("sses", "shes", "ches", "xes", "ses")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "as")):
        return w[:-1]
    return w


def variants(word: str, *, config: RankingConfig = DEFAULT) -> set[str]:
    """Spellings a query word may take in a name: itself, its singular and plural forms
    (and, with ``config.verb_forms``, the verb a past or -ing form comes from)."""
    w = word.lower()
    out = {w, stem(w), w + "s", w + "es"}
    if config.verb_forms and len(w) > 4:
        if w.endswith("ed"):
            out |= {w[:-1], w[:-2]}
            if len(w) > 5 and w[-3] == w[-4]:
                out.add(w[:-3])  # stopped -> stop
        elif w.endswith("ing"):
            out |= {w[:-3], w[:-3] + "e"}
            if len(w) > 5 and w[-4] == w[-5]:
                out.add(w[:-4])  # running -> run
    if w.endswith("y") and len(w) > 2:
        out.add(w[:-1] + "ies")
    if w.endswith("s") and len(w) > 3:
        out.add(w[:-1])
        if w.endswith("es"):
            out.add(w[:-2])
    return out


_FRAME = re.compile(r'File "([^"\n]+)", line \d+(?:, in ([A-Za-z_<][\w<>.]*))?')
_EXTENSIONS = (
    "py|pyi|js|mjs|cjs|jsx|ts|tsx|go|rs|java|rb|php|c|h|cc|cpp|hpp|cs|kt|scala|swift|lua|sh|bash|ex|exs|hs|zig"
)
_PATH = re.compile(rf"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:{_EXTENSIONS}))(?![\w/])")
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_QUOTED = re.compile(r"`([^`\n]+)`")
_ERROR_CLASS = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Exit|Interrupt)\b")
_URL = re.compile(r"\b(?:https?://|www\.)\S+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_FILE_EXTENSIONS = frozenset(
    [*_EXTENSIONS.split("|"), "yaml", "yml", "json", "toml", "txt", "md", "rst", "cfg", "ini", "png", "jpg", "html", "csv", "lock", "log"]
)
"""A dotted token ending in one of these is a file name (``template.yaml``), not a qualified name."""
_NOT_NAMES = frozenset({"e.g", "i.e", "etc", "vs", "a.k.a", "self", "cls", "none", "true", "false"})


_DEFINER = re.compile(r"(?<![\w])(?:def|class|import|from|function|func|fn)\s+$")
_DEFINER_REACH = 40
"""Characters looked back from a name for the keyword that defines it (``def  name``)."""


def _defined_at(code: str, start: int) -> bool:
    """Whether the name at ``start`` follows a definition keyword (``def``, ``class``, ``import`` …).

    Looks back a bounded stretch, not the whole text before the name: searching every prefix
    was quadratic in a pasted fenced block's length."""
    # The look-behind sees before ``pos``: a keyword cut from a longer word does not count.
    return _DEFINER.search(code, max(0, start - _DEFINER_REACH), start) is not None


@dataclass(frozen=True, slots=True)
class Mentions:
    """What a text names, strongest first (pure: no lookup in the index)."""

    names: tuple[str, ...]
    """Identifiers and qualified names: functions of traceback frames (innermost first),
    quoted code (backticks, fenced blocks), error classes, then other code-looking words."""
    paths: tuple[str, ...]
    """File paths: those of traceback frames (innermost first), then others named."""


def mentions(text: str) -> Mentions:
    """Pull out what an issue names: traceback frames (``File "x.py", line N, in f``), file
    paths, quoted code, error class names, dotted/camelCase/snake_case names."""
    text = _URL.sub(" ", text)
    names: list[str] = []
    paths: list[str] = []
    frames = _FRAME.findall(text)
    for path, func in reversed(frames):
        if not path.startswith("<"):
            paths.append(path.replace("\\", "/"))
        if func and not func.startswith("<"):
            names.append(func)
    fenced = [re.sub(r"^```[\w+-]*", "", m.group(0)).strip("`") for m in _FENCE.finditer(text)]
    inline = _QUOTED.findall(_FENCE.sub(" ", text))
    for code in [*inline, *fenced]:
        code = _FRAME.sub(" ", code)
        single = _NAME.fullmatch(code.strip().rstrip("()"))
        for m in _NAME.finditer(code):
            tok = m.group(0)
            # In quoted code: a name quoted alone, a call, a definition, or a code-looking token;
            # not every English word of a shell command or a log line.
            called = code[m.end() : m.end() + 1] == "("
            defined = _defined_at(code, m.start())
            code_like = single or called or defined or _looks_like_identifier(tok)
            if code_like and len(tok) > 2 and tok.lower() not in STOPWORDS and not tok.isdigit():
                names.append(tok.removeprefix("self.").removeprefix("cls."))
    names.extend(_ERROR_CLASS.findall(text))
    for tok in _NAME.findall(_FRAME.sub(" ", text)):
        if _looks_like_identifier(tok):
            names.append(tok.removeprefix("self.").removeprefix("cls."))
    for m in _PATH.finditer(text):
        paths.append(m.group(1))
    kept = [
        n
        for n in dict.fromkeys(n.strip(".") for n in names)
        if n and n.lower() not in _NOT_NAMES and not re.fullmatch(r"[\d.]+", n)
        and n.rsplit(".", 1)[-1].lower() not in _FILE_EXTENSIONS
    ]
    return Mentions(names=tuple(kept), paths=tuple(dict.fromkeys(paths)))


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """What a query says, for matching: content words and code-looking identifiers."""

    words: tuple[str, ...]
    """Lower-cased content words (identifiers split, stopwords dropped), in query order."""
    stems: frozenset[str]
    """Every singular/plural spelling of the words (see :func:`variants`), for matching names."""
    identifiers: tuple[str, ...]
    """Tokens written like code: camelCase, snake_case, dotted, or any single bare token query;
    in a long query, the names it mentions (see :func:`mentions`), strongest first."""
    text: str
    paths: tuple[str, ...] = ()
    """File paths the query names (traceback frames first)."""
    prose: tuple[str, ...] = ()
    """A long query's prose words before :func:`cap_terms` picks the rarest."""
    said: frozenset[str] = frozenset()
    """A short query's every word, stopwords included (``file`` in "a file's rows"), in all
    its spellings: a name's common words may match these once a content word matched."""
    match: str | None = None
    """A long query's BM25 MATCH expression, chosen by :func:`cap_terms` under a postings
    budget; None: built from the identifiers and words."""
    name_match: str | None = None
    """A long query's MATCH over symbol names (``symbols_fts``), chosen the same way; None:
    built from the words."""

    @property
    def long(self) -> bool:
        return bool(self.prose)


@lru_cache(maxsize=65_536)
def _looks_like_identifier(token: str) -> bool:
    return (
        "_" in token.strip("_")
        or "." in token
        or bool(re.search(r"[a-z][A-Z]", token))
        or (token[:1].isupper() and any(c.islower() for c in token[1:]) and len(split_identifier(token)) > 1)
    )


_ALNUM = re.compile(r"(?=[A-Za-z0-9]*[A-Za-z])(?=[A-Za-z0-9]*[0-9])[A-Za-z0-9]{2,}")


def _code_looking(token: str, config: RankingConfig) -> bool:
    """A short query's token that is matched as a name (whole, or the phrase of its parts).

    With ``config.alnum_names`` a token of letters and digits (``E1152``, ``sha256``, ``http2``,
    ``v4``) is one: matched whole or as the phrase of its parts (``sha 256``), never as two loose
    words (a file full of 256s outranked ``hashlib.sha256``)."""
    return _looks_like_identifier(token) or (config.alnum_names and _ALNUM.fullmatch(token) is not None)


def _words_of(tokens: Sequence[str]) -> list[str]:
    """Content words of ``tokens`` (identifiers split), each once, in order: linear in the
    number of tokens (a pasted issue has thousands)."""
    words: dict[str, None] = {}
    for tok in tokens:
        for w in _token_words(tok):
            words.setdefault(w)
    return list(words)


@lru_cache(maxsize=65_536)
def _token_words(token: str) -> tuple[str, ...]:
    """One token's content words (pure; a pasted issue repeats its tokens many times)."""
    return tuple(
        w
        for piece in token.split(".")
        for w in split_identifier(piece) or [piece.lower()]
        if w and w not in STOPWORDS and (len(w) > 1 or w.isdigit())
    )


def query_terms(text: str, *, config: RankingConfig = DEFAULT) -> QueryTerms:
    """Analyse a query. A short one: its words and code-looking tokens. A long one (more
    than ``config.long_query_words`` content words: issue text, a pasted traceback): the
    names and paths it mentions lead (at most ``config.max_names``), and its prose words
    wait for :func:`cap_terms`."""
    tokens = _TOKEN.findall(text)
    words = _words_of(tokens)
    named = mentions(text)
    max_names = config.max_names
    if len(words) > config.long_query_words:
        named_idents = named.names[:max_names]
        name_words = _words_of(named_idents)
        path_words_ = [w for p in named.paths[:max_names] for w in sorted(path_words("/".join(p.split("/")[-2:])))]
        head = list(dict.fromkeys(name_words + [w for w in path_words_ if w not in STOPWORDS]))
        prose = tuple(w for w in words if w not in head)
        return QueryTerms(
            words=tuple(head),
            stems=frozenset(v for w in head for v in variants(w, config=config)),
            identifiers=named_idents,
            text=text,
            paths=named.paths[:max_names],
            prose=prose or ("",),
        )
    idents: list[str] = []
    for tok in tokens:
        if _code_looking(tok, config) or len(tokens) == 1:
            idents.append(tok)
    idents.extend(n for n in named.names if n not in idents and "." not in n)
    said = {p for tok in tokens for piece in tok.split(".") for p in split_identifier(piece)}
    stems = {v for w in words for v in variants(w, config=config)}
    return QueryTerms(
        words=tuple(words),
        stems=frozenset(stems),
        identifiers=tuple(dict.fromkeys(idents)),
        text=text,
        paths=named.paths,
        said=frozenset(v for w in said for v in variants(w, config=config)),
    )


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
    kept = sorted((w for w in prose if 0 < df.get(w, 0) <= common), key=lambda w: (df[w], order[w]))[:max_words]
    kept.sort(key=lambda w: order[w])
    # The names' own words stay unless nearly every chunk has them ("data", "run").
    head = [w for w in terms.words if df.get(w, 0) <= 3 * common]
    words = tuple(dict.fromkeys([*head, *kept]))
    idents = tuple(
        i for i in terms.identifiers if not (i.lower() in plain_names and df.get(i.lower(), 0) > 3 * common)
    )
    capped = QueryTerms(
        words=words,
        stems=frozenset(v for w in words for v in variants(w, config=config)),
        identifiers=idents,
        text=terms.text,
        paths=terms.paths,
        prose=terms.prose,
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


def _content_query(terms: QueryTerms) -> str:
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
    match = _content_query(terms)
    if not match:
        return []
    found = store.bm25_chunks(match, weights=weights, scope=Scope.of(paths, languages), limit=limit)
    return [(c.chunk_id, c.score) for c in found]


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
                    qualified == ident or qualified.endswith("." + ident) or ident.split(".")[-2] in qualified.split(".")
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
            match, scope=scope, skip_kinds=skip_kinds, limit=limit * 2, rank_first=terms.name_match is not None
        )
        for chunk, score in found:
            if chunk is not None and chunk not in out:
                out[chunk] = score
            if len(out) >= limit:
                break
    return sorted(out.items(), key=lambda kv: -kv[1])[:limit]


def path_words(path: str) -> set[str]:
    """Lower-cased words of a path's folders and file name (extension dropped)."""
    parts = path.split("/")
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    return {w for part in parts for w in split_identifier(part) if len(w) > 1}


def by_basename(files: Sequence[str]) -> dict[str, list[str]]:
    """file name -> the indexed paths of that name (for :func:`named_files`)."""
    out: dict[str, list[str]] = {}
    for f in files:
        out.setdefault(f.rsplit("/", 1)[-1], []).append(f)
    return out


def named_files(
    files: Sequence[str], named: Sequence[str], *, index: dict[str, list[str]] | None = None
) -> list[str]:
    """Indexed files a query names, in the order named (pure): a named path matches a file
    path that ends with it, else one ending with its last two components (an absolute
    traceback path), else, for a bare file name, the files of that name. ``index`` is
    :func:`by_basename` of ``files``, when the caller keeps one."""
    names = index if index is not None else by_basename(files)
    out: list[str] = []
    for raw in named:
        p = raw.replace("\\", "/").lstrip("./")
        parts = [x for x in p.split("/") if x]
        if not parts:
            continue
        same_name = names.get(parts[-1], [])
        for tail in ("/".join(parts), "/".join(parts[-2:]), parts[-1]):
            hits = [f for f in same_name if f == tail or f.endswith("/" + tail)]
            if hits:
                if len(hits) <= 5:
                    out.extend(h for h in sorted(hits) if h not in out)
                break
    return out


def by_path_word(file_words: dict[str, set[str]]) -> dict[str, list[str]]:
    """path word -> the paths holding it (for :func:`path_files`), in ``file_words`` order."""
    out: dict[str, list[str]] = {}
    for path, words in file_words.items():
        for w in words:
            out.setdefault(w, []).append(path)
    return out


# ``RankingConfig.path_roots``: a query word of action (``pagination``, ``logging``, ``presenting``: -ing, -ion) also matches
# a file whose own name holds a word of the same root (``paginator.rb``, ``job_logger.rb``,
# ``presenter.rb``): Ruby and Java name a file after its class, the agent of the action. The
# BM25 and name legs' Porter stemming already conflated these; the path leg compared spellings.
# Measured (bench/README.md, "Issue 9, fifth round"): a Ruby development set +0.011 [+0.001,
# +0.029], semble's development set +0.0002 [0, +0.0004]. Matching every word's root, through
# folder names too, cost semble's development set −0.002 (``router`` pulled all of ``routing/``).
_ROOT_SUFFIXES = (
    "izations", "ization", "ations", "ation", "ators", "ator", "ating", "ated", "ates", "ate",
    "ables", "able", "ions", "ion", "ings", "ing", "ers", "er", "ors", "or", "ed", "es", "e", "s",
)  # fmt: skip
_ACTION_SUFFIXES = ("ing", "ion", "ions")


@lru_cache(maxsize=65_536)
def root(word: str) -> str:
    """A word's root for ``RankingConfig.path_roots``: the first listed suffix off that leaves 4+ letters."""
    w = word.lower()
    for suffix in _ROOT_SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            return w[: -len(suffix)]
    return w


def _agent_words(vocabulary: Iterable[str], words: Iterable[str]) -> set[str]:
    """The words of ``vocabulary`` sharing a root with one of ``words``' action words: one pass
    over the path vocabulary, only for a query with such a word (3.5 ms for 50,000 words)."""
    roots = {root(w) for w in words if w.endswith(_ACTION_SUFFIXES)}
    if not roots:
        return set()
    heads = {r[:4] for r in roots}
    return {v for v in vocabulary if v[:4] in heads and root(v) in roots}


def path_files(
    file_words: dict[str, set[str]],
    terms: QueryTerms,
    *,
    limit: int = 50,
    basenames: dict[str, list[str]] | None = None,
    postings: dict[str, list[str]] | None = None,
    config: RankingConfig = DEFAULT,
) -> list[tuple[str, float]]:
    """Files ranked by the rarity-weighted query words found in their path (pure); files
    the query names by path (see :func:`named_files`) first. ``postings`` is
    :func:`by_path_word` of ``file_words``, when the caller keeps one: only the files holding a
    query word are then visited (a long query's many words made a pass over every file's words
    cost tens of milliseconds)."""
    named = named_files(list(file_words), terms.paths, index=basenames) if terms.paths else []
    if named:
        plain = QueryTerms(terms.words, terms.stems, (), terms.text)
        rest = [kv for kv in path_files(file_words, plain, limit=limit, postings=postings, config=config) if kv[0] not in named]
        return ([(p, float("inf")) for p in named] + rest)[:limit]
    if not terms.stems or not file_words:
        return []
    stems: frozenset[str] | set[str] = terms.stems
    rooted: set[str] = set()
    if config.path_roots and any(w.endswith(_ACTION_SUFFIXES) for w in terms.words):
        vocabulary = postings if postings is not None else {w for ws in file_words.values() for w in ws}
        rooted = _agent_words(vocabulary, terms.words) - stems
        stems = stems | rooted
    n = len(file_words)
    df: dict[str, int] = {}
    if postings is not None:
        holding = {w: postings[w] for w in stems if w in postings}
        df = {w: len(ps) for w, ps in holding.items()}
        candidates = set().union(*holding.values()) if holding else set()
        visit = [(p, file_words[p]) for p in candidates]  # the sort below is total: order is free
    else:
        for words in file_words.values():
            for w in stems & words:
                df[w] = df.get(w, 0) + 1
        visit = list(file_words.items())
    if not df:
        return []
    idf = {w: math.log(1 + n / c) for w, c in df.items()}
    scored = []
    for path, words in visit:
        hit = stems & words
        if hit & rooted:  # a root counts in the file's own name only, not its folders'
            own = path_words(path.rsplit("/", 1)[-1])
            hit = {w for w in hit if w not in rooted or w in own}
        if hit:
            scored.append((path, sum(idf[w] for w in hit) / math.sqrt(len(words) + 1)))
    scored.sort(key=lambda kv: (-kv[1], kv[0]))
    return scored[:limit]
