"""Every setting that steers search ranking, in one frozen value passed to what reads it.

:class:`RankingConfig` holds the shipped values as defaults (:data:`DEFAULT`); nothing reads a
ranking setting from a module global. A benchmark or a test that varies one builds its own
config, ``dataclasses.replace(DEFAULT, rrf_k=20)``, and hands it to
:class:`navigator.search.SemanticSearch` or :class:`navigator.team.TeamStore` (or to the pure
functions of :mod:`semantic.fusion`, :mod:`semantic.analysis`, :mod:`semantic.path_leg` and :mod:`semantic.lexical` that take ``config=``).

The values were measured on semble's benchmark and the issue-localization development set; what
each measured is in ``bench/README.md``. This module imports nothing of ours: both the lexical
analysis and the fusion read it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

__all__ = ["DEFAULT", "Ranker", "RankingConfig"]


class Ranker(Protocol):
    """A learned fusion (:mod:`semantic.learned`): scores one view's table of candidate features
    (a ``semantic.learned.Table``: ``view`` is ``files`` or ``chunks``), higher first and positive,
    or None to keep nav's own scores for that view."""

    def score(self, table: Any) -> Sequence[float] | None: ...


_PROSE_EXTENSIONS = frozenset(
    {
        "md",
        "markdown",
        "rst",
        "txt",
        "adoc",
        "json",
        "yaml",
        "yml",
        "toml",
        "ini",
        "cfg",
        "html",
        "css",
        "svg",
        "lock",
        "csv",
        "ipynb",
    }
)
_CODE_KINDS = ("function", "method", "class", "interface", "struct", "trait", "enum", "type", "module")


def _leg_weights() -> Mapping[str, float]:
    return MappingProxyType({"prf": 0.5})


@dataclass(frozen=True, slots=True)
class RankingConfig:
    """How search ranks: fusion weights, file penalties, query analysis, leg depths, feedback."""

    # -- fusion (semantic.fusion.fuse) -----------------------------------------------------
    rrf_k: int = 10
    """RRF constant k in ``weight / (k + rank)``: 10 beat 60 by +0.018 NDCG@10 on semble's Python."""
    top_chunks_per_file: int = 3
    """A file's score is the sum of its best this-many chunk scores."""
    definition_boost: float = 1.5
    """Multiplier of a chunk that defines a symbol the query names."""
    stem_boost: float = 1.3
    """Multiplier of a chunk whose file's stem is a query word."""
    leg_weights: Mapping[str, float] = field(default_factory=_leg_weights)
    """RRF weight per chunk leg, 1 when absent; the feedback leg ``prf`` counts half."""
    path_leg_weight: float = 1.0
    """RRF weight of the file-level path leg."""
    path_listed: int = 10
    """Files of the path leg's best that enter the ranking by their first chunk when no chunk leg found them."""
    history_leg: bool = True
    """A file-level ``history`` leg: BM25 over the messages of the repository's past commits (the
    index's git history, :mod:`navigator.history`), each of the best :attr:`history_commits`
    crediting the indexed files it changed with its score shared among them (BugLocator's
    similar-report score); it adds to the files the other legs found (letting its own best ten in
    as well changed no answer on either development set); runs with the ``bm25`` leg. Chosen on both development sets (issue 18, stop 32, at weight
    0.5: level on file Acc@5, function Recall@10 +0.011 full text and +0.005 one-line, code view
    fn@5 +0.011; False before)."""
    history_leg_weight: float = 1.0
    """RRF weight of the history leg. 1.0 against 0.5, chosen on both development sets with every
    leg, as nav answers once its vectors exist (issue 18, stop 33): files view Acc@5 +0.024
    [+0.006, +0.048] one-line and +0.011 [0, +0.032] full text, no headline loss; with the lexical
    legs alone (before vectors) one-line Acc@5 −0.012 [−0.036, +0.006] (0.5 from stop 32 to 33)."""
    history_commits: int = 50
    """Past commits, best first, whose files the history leg credits."""
    history_max_files: int = 30
    """A past commit changing more files than this (a sweep: renames, formatting) credits none."""
    test_penalty: float = 0.3
    """File multiplier of tests (``tests/``, ``*_test.go``, ``*.spec.ts``…) unless the query asks for them."""
    vendor_penalty: float = 0.25
    """File multiplier of vendored and generated code (``vendor/``, ``node_modules/``, ``dist/``…)."""
    docs_penalty: float = 0.85
    """File multiplier of docs, examples and benchmarks folders unless the query asks for them."""
    prose_penalty: float = 0.5
    """File multiplier of Markdown, config and data files (:attr:`prose_extensions`)."""
    prose_extensions: frozenset[str] = _PROSE_EXTENSIONS
    """File extensions :attr:`prose_penalty` applies to."""
    compat_penalty: float = 0.3
    """File multiplier of compatibility shims and legacy code (``compat/``, ``legacy/``, ``v1/``…)."""
    private_penalty: float = 0.5
    """File multiplier of private modules and packages (``_internal/``, ``_fields.py``)."""
    superseded_penalty: float = 0.5
    """File multiplier of a ``vN/`` file when a newer ``vM/`` sibling is among the candidates."""
    non_source_penalty: float = 0.3
    """File multiplier of CI and repository meta files (``.github/``), change logs and release
    notes, shell scripts, build files, ``*_tests/`` folders and theme/static web assets, unless the
    query asks for them (issue 18; 1.0 before)."""
    frame_boost: float = 2.0
    """Multiplier of the file a quoted stack trace's innermost in-repository frame is in (and of its
    function's chunk); 1: frames are no evidence beyond their names and paths (issue 18; 1.0 before)."""
    frame_decay: float = 0.5
    """Each further file of the trace, outwards, keeps this share of ``frame_boost - 1``."""
    identifier_leg: bool = True
    """For a long query (issue text), an ``ident`` leg: BM25 over the names it mentions alone, fused
    beside the others (its RRF weight in :attr:`leg_weights`, 1 when absent; issue 18). Measured on
    every query first, it cost the one-line development set file Acc@5 −0.05 and semble's −0.002
    (False before)."""
    title_leg: bool = True
    """For a long query with a title (its first line, :func:`semantic.analysis.issue_title`), two
    legs more: ``title``, BM25 over the title analysed as a short query, and ``title_symbols``, its
    symbol-name matches (RRF weights in :attr:`leg_weights`, 1 when absent). Full-text development
    file Acc@5 +0.063 [+0.021, +0.116], code view function Recall@10 +0.042 [+0.005, +0.089];
    short queries are untouched (issue 18, stop 31; False before)."""
    said_parts: bool = True
    """A multi-word name matches a short query that says all its parts, stopwords included."""
    code_file_weight: float = 0.5
    """In the code view, the share of a chunk's file score added to its own."""
    code_split_decay: float = 0.5
    """In the code view, the floor of a definition's score taken out of a chunk of several."""
    ranker: str | Ranker | None = None
    """A learned fusion in place of the hand-tuned file and code-view scores (issue 18): a shipped
    model's name (``semantic/models/<name>.json``), a model file's path, or a :class:`Ranker`;
    None: the hand-tuned scores. See :mod:`semantic.learned`."""

    code_order: str | None = "learned"
    """How the code view orders definitions (issue 18): ``"learned"``, the shipped within-file
    model over the code view's and the files view's best (``navigator/code_order.py``), or a
    model file's path; None: the fused code view alone (before). The local index only: the
    team store's code view stays fused."""

    # -- nav find: the exact and semantic legs of a routed query (navigator.find) ----------
    query_rrf_k: int = 60
    """RRF constant of ``nav find``'s fusion of the exact and semantic legs (the classic 60)."""
    query_leg_depth: int = 50
    """Hits ``nav find`` takes from the semantic leg (and a quarter of the exact leg's limit)."""
    max_exact_names: int = 4
    """Names of one query the exact leg looks up (each costs a language-server request)."""

    # -- query analysis (semantic.analysis) ------------------------------------------------
    verb_forms: bool = True
    """A query's past and -ing forms also match names (``replaced`` -> ``replace_file``)."""
    alnum_names: bool = True
    """A token of letters and digits (``sha256``, ``v4``) is a name, never two loose words."""
    path_roots: bool = True
    """An action word (``pagination``) also matches a file named after its agent (``paginator.rb``)."""
    long_query_words: int = 24
    """A query with more content words than this is issue text: names lead, prose is capped."""
    max_prose_words: int = 16
    """Prose words a long query keeps: the rarest in the index."""
    max_prose_df: float = 0.1
    """A long query's prose word in more than this share of the chunks is dropped."""
    prose_lookups: int = 120
    """Distinct prose words of a long query whose document frequency is looked up."""
    prose_first_count: int = 64
    """How far each prose word's document frequency is counted first."""
    max_names: int = 24
    """Names (and paths) kept from a long query, strongest first."""
    df_by_match: bool = True
    """Count a long query's document frequencies through FTS5 MATCH (False: the first round's fts5vocab)."""
    match_postings: int | None = 10_000
    """A long query's BM25 MATCH reads at most this many postings, rarest terms first (None: no budget)."""
    bm25_weights: tuple[float, float, float] = (2.0, 3.0, 1.0)
    """BM25 column weights of (path, symbol, text) in ``chunks_fts``."""
    word_skip_kinds: tuple[str, ...] = ("field",)
    """Symbol kinds the symbols leg matches by exact name only, never by the query's words."""

    # -- legs and feedback (navigator.search, navigator.team) ------------------------------
    depth: int = 50
    """Candidates taken from each leg before fusion (at least; a larger ``k`` deepens every leg)."""
    prf_terms: int = 8
    """Words the feedback leg ``prf`` adds to a short query (0: no feedback leg)."""
    prf_docs: int = 5
    """Best chunks of the first ranking the feedback words come from."""
    prf_min_docs: int = 2
    """A feedback word is in at least this many of those chunks."""
    prf_base: int = 200
    """How many of the ``bm25`` leg's scores the feedback leg adds the shared words' scores to."""
    prf_max_df: float = 0.1
    """A feedback word in more than this share of the chunks is too common to help."""
    code_kinds: tuple[str, ...] = _CODE_KINDS
    """Definition kinds the code view lists (constants and variables are read in their code)."""

    def __post_init__(self) -> None:
        """A value no ranking can use is refused, naming the field (a benchmark's typo fails at once)."""
        positive = ("top_chunks_per_file", "depth", "long_query_words", "max_prose_words", "prose_lookups",
                    "prose_first_count", "max_names", "prf_docs", "prf_min_docs", "prf_base", "path_listed",
                    "query_leg_depth", "max_exact_names", "history_commits", "history_max_files")  # fmt: skip
        for name in positive:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"RankingConfig.{name} must be a positive integer, got {value!r}")
        for name in ("rrf_k", "query_rrf_k", "prf_terms"):
            if getattr(self, name) < 0:
                raise ValueError(f"RankingConfig.{name} must be >= 0, got {getattr(self, name)!r}")
        if self.match_postings is not None and self.match_postings < 1:
            raise ValueError(
                f"RankingConfig.match_postings must be None or positive, got {self.match_postings!r}"
            )


DEFAULT = RankingConfig()
"""The shipped ranking."""
