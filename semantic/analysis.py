"""Query analysis (pure): what a query says, read before any index is asked. Words (stop words
dropped, a tiny stemmer, verb forms), identifiers and their parts, and what an issue names
(:func:`mentions`: traceback frames innermost first, file paths, quoted code, error classes),
gathered into :class:`QueryTerms` that every leg and the fusion read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from semantic.issue_text import Frame, frames
from semantic.ranking import DEFAULT, RankingConfig
from storage.tokens import split_identifier

__all__ = [
    "Mentions",
    "QueryTerms",
    "STOPWORDS",
    "mentions",
    "path_words",
    "query_terms",
    "stem",
    "variants",
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
_EXTENSIONS = "py|pyi|js|mjs|cjs|jsx|ts|tsx|go|rs|java|rb|php|c|h|cc|cpp|hpp|cs|kt|scala|swift|lua|sh|bash|ex|exs|hs|zig"
_PATH = re.compile(rf"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:{_EXTENSIONS}))(?![\w/])")
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_QUOTED = re.compile(r"`([^`\n]+)`")
_ERROR_CLASS = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Exit|Interrupt)\b")
_URL = re.compile(r"\b(?:https?://|www\.)\S+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_FILE_EXTENSIONS = frozenset(
    [
        *_EXTENSIONS.split("|"),
        "yaml",
        "yml",
        "json",
        "toml",
        "txt",
        "md",
        "rst",
        "cfg",
        "ini",
        "png",
        "jpg",
        "html",
        "csv",
        "lock",
        "log",
    ]
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
        if n
        and n.lower() not in _NOT_NAMES
        and not re.fullmatch(r"[\d.]+", n)
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
    frames: tuple[Frame, ...] = ()
    """The stack frames a long query quotes, innermost first (with ``RankingConfig.frame_boost``)."""
    title: str = ""
    """A long query's title (see :func:`issue_title`), searched as a short query of its own
    (``RankingConfig.title_leg``); empty when it has none."""

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
        quoted = frames(text) if config.frame_boost != 1.0 else ()
        if quoted:  # every trace format's paths, innermost first, before the other paths named
            named = Mentions(named.names, tuple(dict.fromkeys([*(f.path for f in quoted), *named.paths])))
        named_idents = named.names[:max_names]
        name_words = _words_of(named_idents)
        path_words_ = [
            w for p in named.paths[:max_names] for w in sorted(path_words("/".join(p.split("/")[-2:])))
        ]
        head = list(dict.fromkeys(name_words + [w for w in path_words_ if w not in STOPWORDS]))
        prose = tuple(w for w in words if w not in head)
        return QueryTerms(
            words=tuple(head),
            stems=frozenset(v for w in head for v in variants(w, config=config)),
            identifiers=named_idents,
            text=text,
            paths=named.paths[:max_names],
            prose=prose or ("",),
            frames=quoted,
            title=issue_title(text, config=config),
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


_NOT_TITLE = re.compile(
    r"^(?:#|```|~~~|>|\||[-*=_]{3}|Traceback \(most recent call last\)|File \"|at\s+\S+\s?\(|https?://|www\.)"
)
"""A first line that is a heading (a template's ``### Describe the bug``), a fence, a quote, a
table, a rule, a stack trace's first line or a link: no title."""


_TITLE_CHARS = 160
"""A longer first line is a paragraph, not a title (the 237 SWE-bench Lite titles of loc_full: at most 120)."""


_LEAD_IN = frozenset(
    {"here", "issue", "issues", "bug", "bugs", "fix", "please", "following", "report", "task", "github",
     "git", "hub", "problem", "ticket", "description", "title", "summary", "solve", "resolve", "help"}
)  # fmt: skip
"""Words of a line that only introduces the issue ("Here is the issue:", "Fix the following GitHub
issue", "Description:"): a line of these alone is skipped, and the next is the title."""
_LEAD_IN_LINES = 3


def issue_title(text: str, *, config: RankingConfig = DEFAULT) -> str:
    """An issue's title: its first non-blank line (after at most :data:`_LEAD_IN_LINES` lines of
    :data:`_LEAD_IN` words alone, an agent's or a template's lead-in) when more text follows and
    the line reads as a short query (at most :data:`_TITLE_CHARS` characters and
    ``config.long_query_words`` content words) and not as a heading, fence, quote, link or stack
    trace (:data:`_NOT_TITLE`); else empty. Issue text leads with its title, the densest statement
    of the problem, whose common words a long query's rarest-words cap drops (bench/README.md,
    "Issue 18, stop 31 (second session)")."""
    lines = [line.strip() for line in text.strip().splitlines()]
    lines = [line for line in lines if line]
    skipped = 0
    while skipped < min(_LEAD_IN_LINES, len(lines)):
        words = _words_of(_TOKEN.findall(lines[skipped]))
        if words and not set(words) <= _LEAD_IN:
            break
        skipped += 1
    if len(lines) - skipped < 2:  # no line, or nothing after it
        return ""
    first = lines[skipped]
    if len(first) > _TITLE_CHARS or _NOT_TITLE.match(first):
        return ""
    words = _words_of(_TOKEN.findall(first))
    if not words or set(words) <= _LEAD_IN or len(words) > config.long_query_words:
        return ""
    return first


def path_words(path: str) -> set[str]:
    """Lower-cased words of a path's folders and file name (extension dropped)."""
    parts = path.split("/")
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    return {w for part in parts for w in split_identifier(part) if len(w) > 1}
