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
    "uses_chunks",
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


VERB_FORMS = True
"""Also match a query's past and -ing forms against names (``replaced`` -> ``replace_file``,
``parsing`` -> ``parse``); see bench/README.md for what it did."""


ABBREVIATIONS = 0
"""Code's customary short forms of a query word join its spellings (:func:`variants`), so
"context" finds ``ctx.go`` by its path and ``parse_ctx`` by its name: 0 off, 1 for the
query's content words, 2 for its stopwords too ("implementations" -> ``impls.rs``). Only the
name and path signals see them (never the BM25 text match: ``err`` is in every Go function)."""
_ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "implementation": ("impl", "impls"), "implement": ("impl", "impls"), "function": ("fn", "func"),
    "configuration": ("cfg", "conf", "config"), "config": ("cfg", "conf"), "context": ("ctx",),
    "message": ("msg",), "request": ("req",), "response": ("resp", "res"), "error": ("err",),
    "buffer": ("buf",), "connection": ("conn",), "database": ("db",), "string": ("str",),
    "number": ("num",), "index": ("idx",), "authentication": ("auth",), "authorization": ("auth", "authz"),
    "environment": ("env",), "utility": ("util", "utils"), "argument": ("arg", "args"),
    "parameter": ("param", "params"), "initialize": ("init",), "initialization": ("init",),
    "directory": ("dir",), "temporary": ("tmp", "temp"), "attribute": ("attr", "attrs"),
    "reference": ("ref", "refs"), "iterator": ("iter",), "allocator": ("alloc",), "allocation": ("alloc",),
    "synchronous": ("sync",), "synchronization": ("sync",), "asynchronous": ("async",),
    "specification": ("spec",), "description": ("desc",), "document": ("doc",), "documentation": ("doc", "docs"),
    "information": ("info",), "library": ("lib",), "package": ("pkg",), "previous": ("prev",),
    "source": ("src",), "destination": ("dst", "dest"), "object": ("obj",), "value": ("val",),
    "variable": ("var",), "command": ("cmd",), "manager": ("mgr",), "repository": ("repo",),
    "expression": ("expr",), "statement": ("stmt",), "serialize": ("ser",), "serialization": ("ser",),
    "deserialize": ("de",), "deserialization": ("de",), "memory": ("mem",), "execute": ("exec",),
    "execution": ("exec",), "certificate": ("cert",), "password": ("passwd", "pwd"), "address": ("addr",),
    "character": ("char",), "integer": ("int",), "boolean": ("bool",), "template": ("tmpl", "tpl"),
    "protocol": ("proto",), "transaction": ("tx", "txn"), "image": ("img",), "button": ("btn",),
    "length": ("len",), "position": ("pos",), "sequence": ("seq",), "utilities": ("util", "utils"),
    "administrator": ("admin",), "application": ("app",), "calculate": ("calc",), "generator": ("gen",),
    "generate": ("gen",), "statistics": ("stats",), "extension": ("ext",), "dictionary": ("dict",),
    "parser": ("parse",), "miscellaneous": ("misc",), "operation": ("op", "ops"), "operator": ("op", "ops"),
}


def abbreviations(words: Iterable[str]) -> set[str]:
    """The short forms of ``words`` (pure; see :data:`ABBREVIATIONS`)."""
    out: set[str] = set()
    for w in words:
        for form in {w, stem(w)}:
            out.update(_ABBREVIATIONS.get(form, ()))
    return out


def variants(word: str) -> set[str]:
    """Spellings a query word may take in a name: itself, its singular and plural forms
    (and, with :data:`VERB_FORMS`, the verb a past or -ing form comes from)."""
    w = word.lower()
    out = {w, stem(w), w + "s", w + "es"}
    if VERB_FORMS and len(w) > 4:
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


LONG_QUERY_WORDS = 24
"""A query with more content words than this is issue text (a pasted issue, a traceback):
its names are pulled out and its prose words capped by rarity (:func:`cap_terms`)."""
MAX_PROSE_WORDS = 16
"""Prose words kept from a long query: the rarest in the index (highest IDF) that occur at all,
and in at most :data:`MAX_PROSE_DF` of the chunks."""
MAX_PROSE_DF = 0.1
PROSE_LOOKUPS = 120
"""Distinct prose words of a long query whose document frequency is looked up, in the order
they come (an issue's title and first paragraphs): each lookup costs ~0.5 ms on a large index."""
PROSE_FIRST_COUNT = 64
"""How far each prose word's document frequency is counted first (see :func:`cap_terms`)."""
MAX_NAMES = 24
"""Names kept from a long query, strongest first (see :func:`mentions`)."""

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


ALNUM_NAMES = True
"""A token of letters and digits (``E1152``, ``sha256``, ``http2``, ``v4``) is a name, matched
whole or as the phrase of its parts (``sha 256``), never as two loose words (a file full of 256s
outranked ``hashlib.sha256``). Measured on development data (bench/README.md, "Issue 9, fifth
round"): semble +0.0002 [0, +0.0005] (one query moved), issue localization file Acc@10 +0.006
[0, +0.018]; nothing lost."""
_ALNUM = re.compile(r"(?=[A-Za-z0-9]*[A-Za-z])(?=[A-Za-z0-9]*[0-9])[A-Za-z0-9]{2,}")


def _code_looking(token: str) -> bool:
    """A short query's token that is matched as a name (whole, or the phrase of its parts)."""
    return _looks_like_identifier(token) or (ALNUM_NAMES and _ALNUM.fullmatch(token) is not None)


CONTRACTIONS = frozenset(
    {"doesn", "isn", "don", "didn", "wasn", "weren", "aren", "won", "shouldn", "couldn", "wouldn", "hasn", "haven", "hadn", "cannot"}
)
"""What is left of "doesn't" once the tokenizer drops the apostrophe: never a code word."""
DROP_CONTRACTIONS = False
LEAD_VERBS = frozenset({"add", "adding", "allow", "support", "ensure", "enable", "fix", "improve", "implement"})
"""An issue title's request verb ("Add support for CSS Grid", "Allow unambiguous …"): it says
what is wanted, not where (``add`` matched every ``add_*`` function). Only as the query's first
word: "request and response interceptors" keeps its words."""
DROP_LEAD_VERB = False
DROP_SINGLE_DIGITS = False
"""Measured and rejected: a lone digit ("TLS 1.3", ``h2`` → ``2``) looks like noise, but
dropping it cost 0.013 file Acc@5 (issue localization) and Zod's ``v4`` queries."""


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


def _drop_noise(words: list[str], first: str) -> list[str]:
    """Contractions, an issue title's leading request verb (``first``, the query's first
    token) and, when on, lone digits out (see the constants above), unless nothing else
    would be left."""
    lead = first.lower() if DROP_LEAD_VERB and first.lower() in LEAD_VERBS else ""
    kept = [
        w
        for w in words
        if not (DROP_CONTRACTIONS and w in CONTRACTIONS)
        and w != lead
        and not (DROP_SINGLE_DIGITS and len(w) == 1 and w.isdigit())
    ]
    return kept or words


ISSUE_TAGS = False
"""Drop an issue title's leading tags (``[Bug]``, ``ENH:``, ``Feature Request:``, ``v1:``):
they say what kind of issue it is, not where the code is (``bug`` matched ``bug_report.yaml``)."""
_ISSUE_TAG = re.compile(r"^(?:\s*(?:\[[^\]\n]{1,40}\]|\([^)\n]{1,40}\)|[A-Za-z][\w.-]*(?: [A-Za-z][\w.-]*)?:(?=\s)))+")


def strip_issue_tags(text: str) -> str:
    """``"[Bug] ENH: x y"`` -> ``"x y"``; a text that is nothing but tags is kept whole."""
    rest = _ISSUE_TAG.sub("", text, count=1).lstrip()
    return rest if rest.strip() else text


def query_terms(text: str) -> QueryTerms:
    """Analyse a query. A short one: its words and code-looking tokens. A long one (more
    than :data:`LONG_QUERY_WORDS` content words: issue text): the names and paths it
    mentions lead, and its prose words wait for :func:`cap_terms`."""
    if ISSUE_TAGS:
        text = strip_issue_tags(text)
    tokens = _TOKEN.findall(text)
    words = _drop_noise(_words_of(tokens), tokens[0] if tokens else "")
    named = mentions(text)
    if len(words) > LONG_QUERY_WORDS:
        named_idents = named.names[:MAX_NAMES]
        name_words = _words_of(named_idents)
        path_words_ = [w for p in named.paths[:MAX_NAMES] for w in sorted(path_words("/".join(p.split("/")[-2:])))]
        head = list(dict.fromkeys(name_words + [w for w in path_words_ if w not in STOPWORDS]))
        prose = tuple(w for w in words if w not in head)
        return QueryTerms(
            words=tuple(head),
            stems=frozenset(v for w in head for v in variants(w)),
            identifiers=named_idents,
            text=text,
            paths=named.paths[:MAX_NAMES],
            prose=prose or ("",),
        )
    idents: list[str] = []
    for tok in tokens:
        if _code_looking(tok) or len(tokens) == 1:
            idents.append(tok)
    idents.extend(n for n in named.names if n not in idents and "." not in n)
    said = {p for tok in tokens for piece in tok.split(".") for p in split_identifier(piece)}
    stems = {v for w in words for v in variants(w)}
    if ABBREVIATIONS:
        stems |= abbreviations(said if ABBREVIATIONS > 1 else words)
    return QueryTerms(
        words=tuple(words),
        stems=frozenset(stems),
        identifiers=tuple(dict.fromkeys(idents)),
        text=text,
        paths=named.paths,
        said=frozenset(v for w in said for v in variants(w)),
    )


DF_BY_MATCH = True
"""Count a long query's document frequencies through FTS5 MATCH, which applies the index's own
tokenizer (porter: ``templates`` counts the chunks holding ``template``), each count stopping at
the largest frequency a rule needs. False: look the unstemmed word up in ``fts5vocab`` (the first
round's; every word whose stem differs — ``rules``, ``checks``, ``running`` — read as absent, a
common word's count walked its whole posting list, and the largest chunk id stood for the number
of chunks)."""
MATCH_POSTINGS: int | None = 10_000
"""A long query's BM25 MATCH (over chunks, and over symbol names) reads at most this many
postings (the sum of its terms' document frequencies), rarest terms first. FTS5 reads every
posting of every OR-ed term and scores every row any term matches against every term, so a
few common terms cost more than many rare ones and add least to BM25; a fixed budget keeps a
2,000-word query's cost independent of the index's size (~10 ms per leg on a 2-core machine).
A term in more than 3 × :data:`MAX_PROSE_DF` of the rows is never sent (a name's phrase falls
back to the whole name); terms absent from the index are not sent.
None: every word of the names and capped prose is sent (the first round's)."""


def doc_freqs(
    store: IndexQueries, words: Sequence[str], *, cap: int, table: FtsTable = "chunks"
) -> dict[str, int]:
    """How many rows of ``table`` (chunks or symbol names) hold each word, as the index
    tokenizes it (every column), counted up to ``cap + 1``: a word in more rows reads
    ``cap + 1``."""
    if not DF_BY_MATCH and table == "chunks":
        return store.vocab_doc_freqs(words)
    return store.table_doc_freqs(words, cap=cap, table=table)


def cap_terms(store: IndexQueries, terms: QueryTerms, *, max_words: int = MAX_PROSE_WORDS) -> QueryTerms:
    """A long query's prose, weighed as prose: keep the ``max_words`` rarest words that occur
    in the index (document frequency from FTS5), drop the rest; then choose the BM25 MATCH
    terms under a postings budget (:data:`MATCH_POSTINGS`). Short queries are returned as
    they are."""
    if not terms.long:
        return terms
    prose = [w for w in terms.prose if len(w) > 2 and not w.isdigit()][:PROSE_LOOKUPS]
    plain_names = [i.lower() for i in terms.identifiers if len(split_identifier(i)) == 1 and "." not in i]
    # Chunks, not the largest chunk id: ids grow with every re-index (an index moved across
    # many commits had 25k chunks and ids up to 470k, which turned the frequency rules off).
    chunks = store.chunk_count() if DF_BY_MATCH else store.chunk_id_high()
    common = max(1, int(MAX_PROSE_DF * chunks))
    # Prose words are counted only as far as the prose rule needs, the names' words as far as
    # theirs. Only the ``max_words`` rarest prose words matter: counted first up to a small
    # cap, a word above it cannot be among them once ``max_words`` words fall within it (the
    # same words as counting each up to ``common``, reading a fraction of the postings).
    df: dict[str, int] = {}
    if DF_BY_MATCH:
        low = min(common, PROSE_FIRST_COUNT)
        df = doc_freqs(store, prose, cap=low)
        if low < common and sum(1 for w in prose if 0 < df[w] <= low) < max_words:
            df.update(doc_freqs(store, [w for w in prose if df[w] > low], cap=common))
    df.update(doc_freqs(store, list(dict.fromkeys(w for w in [*prose, *terms.words, *plain_names] if w not in df)), cap=3 * common))
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
        stems=frozenset(v for w in words for v in variants(w)),
        identifiers=idents,
        text=terms.text,
        paths=terms.paths,
        prose=terms.prose,
    )
    if MATCH_POSTINGS is None:
        return capped
    clauses = fts_clauses(_match_text(capped))
    needed = [t for whole, parts in clauses for t in (whole, *parts) if t not in df]
    df.update(doc_freqs(store, needed, cap=3 * common))
    match = budgeted_match(clauses, df, budget=MATCH_POSTINGS, most=3 * common)
    # The symbol leg's BM25 over names: the same rule, with the names' own frequencies.
    symbols = store.symbol_count()
    most = max(1, int(3 * MAX_PROSE_DF * symbols))
    name_clauses = fts_clauses(" ".join(words))
    sdf = doc_freqs(
        store, list(dict.fromkeys(t for w, ps in name_clauses for t in (w, *ps))), cap=min(most, MATCH_POSTINGS), table="symbols"
    )
    name_match = budgeted_match(name_clauses, sdf, budget=MATCH_POSTINGS, most=most)
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


BM25_WEIGHTS = (2.0, 3.0, 1.0)
"""Column weights for (path, symbol, text) in ``chunks_fts``."""


def bm25_chunks(
    store: IndexQueries,
    terms: QueryTerms,
    *,
    limit: int = 50,
    paths: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
) -> list[tuple[int, float]]:
    """Chunk ids by BM25 (best first) with their positive scores."""
    match = _content_query(terms)
    if not match:
        return []
    found = store.bm25_chunks(match, weights=BM25_WEIGHTS, scope=Scope.of(paths, languages), limit=limit)
    return [(c.chunk_id, c.score) for c in found]


WORD_SKIP_KINDS: tuple[str, ...] = ("field",)
"""Symbol kinds the symbols leg matches by exact name only, never by the query's words: a data
member (`Money.cents`, a record component, a Rust struct field) rarely holds the behaviour a
prose query asks for, and short member names (`name`, `value`, `type`) would crowd the leg.
Measured when Java, Kotlin, Scala and Rust gained field symbols: semble's Rust development
repositories −0.010 [−0.017, −0.005] NDCG@10 with fields in the word match, −0.003 [−0.009, 0]
without (bench/README.md "Definitions for Ruby, Java, Kotlin, Scala and Rust")."""


def symbol_chunks(
    store: IndexQueries,
    terms: QueryTerms,
    *,
    limit: int = 50,
    paths: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    named: Sequence[str] = (),
) -> list[tuple[int, float]]:
    """Chunks holding the definitions of symbols whose names match the query, best first.

    Exact name matches of identifiers in the query come first — a qualified name matched
    whole, or a name defined in a file the query names (a traceback frame), before a bare
    name; then in the order the query names them, rarer names first — then symbols ranked
    by BM25 over their split qualified names.
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
            match, scope=scope, skip_kinds=WORD_SKIP_KINDS, limit=limit * 2, rank_first=terms.name_match is not None
        )
        for chunk, score in found:
            if chunk is not None and chunk not in out:
                out[chunk] = score
            if len(out) >= limit:
                break
    return sorted(out.items(), key=lambda kv: -kv[1])[:limit]


def uses_chunks(
    store: IndexQueries,
    terms: QueryTerms,
    *,
    limit: int = 50,
    paths: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
) -> list[int]:
    """Chunks that use the names the query mentions (syntax references), most uses first;
    a name used in more than 500 places says little and is skipped."""
    names = list(dict.fromkeys(i.rsplit(".", 1)[-1] for i in terms.identifiers))[:MAX_NAMES]
    if not names:
        return []
    common = {n for n, c in store.ref_counts(names).items() if c > 500}
    names = [n for n in names if n not in common]
    if not names:
        return []
    return store.chunks_using(names, scope=Scope.of(paths, languages), limit=limit)


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


PATH_ROOTS = True
"""A query word of action (``pagination``, ``logging``, ``presenting``: -ing, -ion) also matches
a file whose own name holds a word of the same root (``paginator.rb``, ``job_logger.rb``,
``presenter.rb``): Ruby and Java name a file after its class, the agent of the action. The
BM25 and name legs' Porter stemming already conflated these; the path leg compared spellings.
Measured (bench/README.md, "Issue 9, fifth round"): a Ruby development set +0.011 [+0.001,
+0.029], semble's development set +0.0002 [0, +0.0004]. Matching every word's root, through
folder names too, cost semble's development set −0.002 (``router`` pulled all of ``routing/``)."""
_ROOT_SUFFIXES = (
    "izations", "ization", "ations", "ation", "ators", "ator", "ating", "ated", "ates", "ate",
    "ables", "able", "ions", "ion", "ings", "ing", "ers", "er", "ors", "or", "ed", "es", "e", "s",
)  # fmt: skip
_ACTION_SUFFIXES = ("ing", "ion", "ions")


@lru_cache(maxsize=65_536)
def root(word: str) -> str:
    """A word's root for :data:`PATH_ROOTS`: the first listed suffix off that leaves 4+ letters."""
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
) -> list[tuple[str, float]]:
    """Files ranked by the rarity-weighted query words found in their path (pure); files
    the query names by path (see :func:`named_files`) first. ``postings`` is
    :func:`by_path_word` of ``file_words``, when the caller keeps one: only the files holding a
    query word are then visited (a long query's many words made a pass over every file's words
    cost tens of milliseconds)."""
    named = named_files(list(file_words), terms.paths, index=basenames) if terms.paths else []
    if named:
        plain = QueryTerms(terms.words, terms.stems, (), terms.text)
        rest = [kv for kv in path_files(file_words, plain, limit=limit, postings=postings) if kv[0] not in named]
        return ([(p, float("inf")) for p in named] + rest)[:limit]
    if not terms.stems or not file_words:
        return []
    stems: frozenset[str] | set[str] = terms.stems
    rooted: set[str] = set()
    if PATH_ROOTS and any(w.endswith(_ACTION_SUFFIXES) for w in terms.words):
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
