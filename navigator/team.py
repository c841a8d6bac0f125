"""The team store composed with the local index: publish, start warm, ask across repositories.

- :meth:`TeamStore.publish` (``nav publish``, what CI runs for a branch head): brings the
  local index up to date, takes the vectors the store already has, embeds only the rest,
  and uploads the commit (git ``HEAD`` of the root) in one transaction, content-addressed.
- :meth:`TeamStore.warm` (``nav index`` with a store): copies every vector the store has
  for this clone's chunks into the local embedding cache, embeds the rest locally and,
  with write access, pushes those back. The local SQLite + FAISS index stays the query
  path; a store that is down costs a note, never an error.
- :meth:`TeamStore.search` / :meth:`TeamStore.definitions` (``--all-repos``): queries run
  in PostgreSQL (HNSW vectors, full text, trigram symbol names), ranked by the same
  pipeline core as locally (:func:`navigator.pipeline.rank`). Every hit names its repository, commit and path.

The store is chosen by ``--store URL``, else ``NAV_STORE``, else ``[store] url``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from navigator.config import Config, resolve_store_url
from navigator.pipeline import Candidates, PathIndex, chunk_hit, path_candidates, rank, unlisted
from navigator.results import Response, SearchHit, Symbol
from semantic.analysis import QueryTerms, query_terms
from semantic.fusion import ChunkMeta, Ranked
from semantic.ranking import DEFAULT, RankingConfig
from storage.errors import NavError, UsageError
from storage.pg import (
    DIM,
    ChunkLoc,
    PgStore,
    PubChunk,
    PubFile,
    StoreError,
)

if TYPE_CHECKING:
    from navigator.results import IndexReport
    from navigator.search import SemanticSearch, SyncReport
    from semantic.embed import Embedder
    from storage.db import Store

log = logging.getLogger(__name__)

__all__ = [
    "PublishReport",
    "TeamHit",
    "TeamStore",
    "TeamSymbol",
    "WarmReport",
    "resolve_store_url",
]

TEAM_LEGS = ("bm25", "vector", "symbols", "path")
"""The team store's legs, as local search's (``navigator.search.LEGS``) less the feedback leg:
:meth:`TeamStore.search` runs them all unless told fewer (for benchmarks). The path leg: files
whose path words (folders and file name, not the repository's name) are the query's, ranked by
their rarity, fused at file level; the head files' words are kept per store and read again when
a head moves. Local search's feedback leg, ported, measured no gain here (bench/README.md,
"Team store": semble's 21 development repositories in one store, 422 queries, ``--all-repos``
NDCG@10 +0.000 [−0.008, +0.010] for +33 ms p50) and was deleted."""


class _Candidates:
    """A search's located chunks, numbered for :func:`semantic.fusion.fuse`: one id per (chunk,
    repository, path), in the branch heads and the asked languages."""

    def __init__(self, pg: PgStore, languages: Sequence[str] | None, depth: int) -> None:
        self.pg = pg
        self.depth = depth
        self.wanted = {lang.lower() for lang in languages} if languages else None
        self.locs: dict[str, list[ChunkLoc]] = {}
        self.ids: dict[tuple[str, str, str], int] = {}
        self.by_id: dict[int, ChunkLoc] = {}
        self.meta: dict[int, ChunkMeta] = {}
        self.legs: dict[str, list[int]] = {}

    def locate(self, keys: Sequence[str]) -> None:
        found = self.pg.locate(list(dict.fromkeys(k for k in keys if k not in self.locs)))
        for key, ls in found.items():
            self.locs[key] = [
                x for x in ls if self.wanted is None or (x.language or "").lower() in self.wanted
            ]

    def number(self, loc: ChunkLoc) -> int:
        ident = (loc.key, loc.repo, loc.path)
        if ident not in self.ids:
            i = self.ids[ident] = len(self.ids)
            self.by_id[i] = loc
            self.meta[i] = ChunkMeta(i, f"{loc.repo}/{loc.path}", loc.symbol, loc.start_line)
        return self.ids[ident]

    def add_legs(self, new: dict[str, list[str]]) -> None:
        """Locate the legs' chunk keys and number them, at most ``depth`` keys a leg."""
        self.locate([k for ks in new.values() for k in ks])
        for leg, ks in new.items():
            self.legs[leg] = [
                self.number(loc)
                for k in [k for k in ks if k in self.locs][: self.depth]
                for loc in self.locs[k]
            ]


@dataclass(frozen=True)
class _HeadPaths:
    """The team store's head files as the path leg reads them (``repo/path`` keys)."""

    signature: tuple[int, str]
    index: PathIndex
    files: dict[str, tuple[str, str | None]]  # repo/path -> (file key, language)


def require_store_url(config: Config | None, override: str | None = None) -> str:
    """:func:`resolve_store_url`, or a clear error naming the three ways to configure one."""
    url = resolve_store_url(config, override)
    if url is None:
        raise UsageError(
            "no team store configured: set NAV_STORE=postgresql://…, `[store] url` in .nav.toml, or pass --store URL"
        )
    return url


# -- results -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TeamHit(SearchHit):
    """A search hit from the team store: a chunk in a published commit of some repository."""

    repo: str = ""
    commit: str = ""
    branch: str = ""


@dataclass(frozen=True, slots=True)
class TeamSymbol(Symbol):
    """A definition from the team store, in a published commit of some repository."""

    repo: str = ""
    commit: str = ""
    branch: str = ""


@dataclass(frozen=True, slots=True)
class WarmReport:
    chunks: int
    """Chunks in the local index."""
    from_store: int
    """Vectors copied from the team store into the local cache in this run."""
    embedded: int
    """Chunks embedded locally in this run (what the store and the cache lacked)."""
    pushed: int
    """Locally embedded vectors stored in the team store (0 without write access)."""
    vectors: int
    """Chunks with a vector after the run."""
    seconds: float
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PublishReport:
    repo: str
    commit: str
    branch: str
    files: int
    chunks: int
    new_files: int
    """File versions the store did not have (their chunks and symbols were uploaded)."""
    new_chunks: int
    new_vectors: int
    from_store: int
    """Vectors the store already had for this commit's chunks (not embedded again)."""
    embedded: int
    already_published: bool
    seconds: float
    notes: tuple[str, ...] = ()


# -- git ---------------------------------------------------------------------------------------


def _git(root: Path, *args: str, strip: bool = True) -> str:
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NavError(f"cannot run git in {root}: {exc}") from None
    if proc.returncode != 0:
        raise UsageError(
            f"`git {' '.join(args)}` failed in {root}: {proc.stderr.strip()[:200]}; "
            "`nav publish` publishes the HEAD commit of a git checkout"
        )
    return proc.stdout.strip() if strip else proc.stdout


def _ci_branch() -> str | None:
    for var in ("NAV_BRANCH", "GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME", "BRANCH_NAME"):
        value = os.environ.get(var)
        if value:
            return value
    return None


def git_head(root: Path, *, branch: str | None = None, repo: str | None = None) -> tuple[str, str, str]:
    """(repository name, commit sha, branch) of the checkout at ``root``."""
    sha = _git(root, "rev-parse", "HEAD")
    if branch is None:
        branch = _ci_branch()
    if branch is None:
        name = _git(root, "rev-parse", "--abbrev-ref", "HEAD")
        if name == "HEAD":
            raise UsageError(
                f"{root} is at a detached HEAD ({sha[:12]}); name the branch: `nav publish --branch main`"
            )
        branch = name
    if repo is None:
        try:
            remote = _git(root, "config", "--get", "remote.origin.url")
        except UsageError:
            remote = ""
        tail = remote.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git") if remote else ""
        repo = tail or root.name
    return repo, sha, branch


def _dirty(root: Path) -> list[str]:
    out = _git(root, "status", "--porcelain", "--untracked-files=no", strip=False)
    return [line[3:] for line in out.splitlines() if line.strip()]


# -- the facade --------------------------------------------------------------------------------


class Checkout(Protocol):
    """What the team store asks of a checkout's facade. :class:`navigator.api.Navigator` is
    one; it composes this module, which therefore does not import it (the engine's imports
    point one way: ``tests/test_layout.py``)."""

    @property
    def root(self) -> Path: ...

    @property
    def store(self) -> Store: ...

    def _searcher(self) -> SemanticSearch: ...

    def index(self) -> IndexReport: ...

    def embed(self, *, progress: Any = None) -> SyncReport: ...

    def team(self, url: str | None = None) -> TeamStore: ...

    def search(self, text: str, *, k: int, languages: Sequence[str] | None) -> Response[SearchHit]: ...

    def definitions(self, name: str) -> Response[Symbol]: ...


class TeamStore:
    """The team store seen from one checkout (``nav``) or from none (queries only)."""

    def __init__(
        self,
        url: str,
        *,
        nav: Checkout | None = None,
        embedder: Embedder | None = None,
        connect_timeout_s: float = 5.0,
        statement_timeout_s: float = 30.0,
        config: RankingConfig = DEFAULT,
    ) -> None:
        """``config``: how :meth:`search` ranks (the local search's settings)."""
        self.config = config
        self.pg = PgStore(url, connect_timeout_s=connect_timeout_s, statement_timeout_s=statement_timeout_s)
        self.nav = nav
        self._embedder = embedder
        self._paths: _HeadPaths | None = None
        self._paths_lock = threading.Lock()

    @property
    def safe_url(self) -> str:
        return self.pg.safe_url

    def close(self) -> None:
        self.pg.close()

    def __enter__(self) -> TeamStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _need_nav(self) -> Checkout:
        if self.nav is None:
            raise UsageError("this needs a checkout: open the team store with `nav=Navigator(root)`")
        return self.nav

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            if self.nav is not None:
                self._embedder = self.nav._searcher().embedder
            else:
                from semantic.embed import load_embedder

                self._embedder = load_embedder()
        return self._embedder

    # -- local vectors ---------------------------------------------------------------------

    def _chunk_keys(self) -> list[str]:
        """The embedding key of every chunk in the local index (repeated when chunks repeat)."""
        from navigator.search import embed_key

        return [embed_key(c.hash, c.path, c.symbol, c.signature) for c in self._need_nav().store.chunk_keys()]

    def _local_keys(self) -> list[str]:
        """Embedding keys of the chunks in the local index, each once."""
        return sorted(set(self._chunk_keys()))

    def _cached(self, model: str, keys: Sequence[str]) -> set[str]:
        return self._need_nav().store.vector_keys(model, keys)

    def _read_cached(self, model: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        return self._need_nav().store.fetch_vectors(model, keys)

    def _pull(self, model: str, keys: Sequence[str]) -> int:
        """Copy the store's vectors for keys the local cache lacks into it; returns how many."""
        lacking = sorted(set(keys) - self._cached(model, keys))
        if not lacking:
            return 0
        got = self.pg.fetch_vectors(model, lacking)
        if not got:
            return 0
        return self._need_nav().store.push_vectors(model, got)

    # -- start warm ------------------------------------------------------------------------

    def warm(self, *, embed: bool = True, push: bool = True, progress: Any = None) -> WarmReport:
        """Take the store's vectors for this checkout's chunks, embed the rest, push those back.

        The store being down, unreadable or read-only is a note in the report, never an error:
        the local index is the query path and works without it.
        """
        t0 = time.perf_counter()
        nav = self._need_nav()
        notes: list[str] = []
        model = self.embedder.model_id
        keys = self._local_keys()
        from_store = 0
        store_ok = True
        try:
            self.pg.ensure_schema(write=False)
            from_store = self._pull(model, keys)
        except StoreError as exc:
            store_ok = False
            log.info("team store not used for %s: %s", nav.root, exc)
            notes.append(f"team store not used: {exc}")
        embedded = 0
        cached = self._cached(model, keys)
        per_chunk = self._chunk_keys()
        vectors, chunks = sum(1 for k in per_chunk if k in cached), len(per_chunk)
        if embed:
            rep = nav.embed(progress=progress)
            embedded, vectors, chunks = rep.embedded, rep.vectors, rep.chunks
        pushed = 0
        if embed and push and store_ok and embedded:
            try:
                if self.pg.writable():
                    have = self.pg.vector_keys(model, keys)
                    pushed = self.pg.push_vectors(
                        model, self._read_cached(model, [k for k in keys if k not in have])
                    )
                else:
                    notes.append("team store is read-only for this role: locally embedded vectors not pushed")
            except StoreError as exc:
                notes.append(f"vectors not pushed to the team store: {exc}")
        return WarmReport(
            chunks=chunks,
            from_store=from_store,
            embedded=embedded,
            pushed=pushed,
            vectors=vectors,
            seconds=time.perf_counter() - t0,
            notes=tuple(notes),
        )

    # -- publish ---------------------------------------------------------------------------

    def publish(
        self,
        *,
        repo: str | None = None,
        branch: str | None = None,
        allow_dirty: bool = False,
        progress: Any = None,
    ) -> PublishReport:
        """Publish the checkout's HEAD commit (what CI runs for a branch head). Idempotent."""
        t0 = time.perf_counter()
        nav = self._need_nav()
        repo, sha, branch = git_head(nav.root, branch=branch, repo=repo)
        notes: list[str] = []
        dirty = _dirty(nav.root)
        if dirty and not allow_dirty:
            shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
            raise UsageError(
                f"{nav.root} has changes not in {sha[:12]} ({shown}); publish a clean checkout "
                "(as CI does), commit first, or pass --allow-dirty"
            )
        if dirty:
            notes.append(f"published the working tree, which differs from {sha[:12]} in {len(dirty)} files")
        self.pg.ensure_schema(write=True)
        self.pg.require_writer()
        model = self.embedder.model_id
        known = self.pg.commit_size(repo, sha)
        if known is not None:
            self.pg.publish(repo=repo, sha=sha, branch=branch, model=model, files=[], vectors={})
            return PublishReport(repo, sha, branch, known[0], known[1], 0, 0, 0, 0, 0, True,
                                 time.perf_counter() - t0, tuple(notes))  # fmt: skip
        nav.index()
        keys = self._local_keys()
        from_store = self._pull(model, keys)
        rep = nav.embed(progress=progress)
        if rep.vectors < rep.chunks:
            raise NavError(
                f"only {rep.vectors} of {rep.chunks} chunks have vectors after embedding; publish not started"
            )
        files = self._payload()
        have = self.pg.vector_keys(model, keys)
        vectors = self._read_cached(model, [k for k in keys if k not in have])
        if vectors:
            dim = int(next(iter(vectors.values())).shape[0])
            if dim != DIM:
                raise UsageError(
                    f"the team store holds {DIM}-dimension vectors and model {model} gives {dim}; "
                    "publish with the default model (all-MiniLM-L6-v2)"
                )
        result = self.pg.publish(repo=repo, sha=sha, branch=branch, model=model, files=files, vectors=vectors)
        log.info(
            "published %s@%s (%s) to %s: %d new chunks",
            repo,
            sha[:12],
            branch,
            self.safe_url,
            result.new_chunks,
        )
        return PublishReport(
            repo=repo,
            commit=sha,
            branch=branch,
            files=result.files,
            chunks=result.chunks,
            new_files=result.new_files,
            new_chunks=result.new_chunks,
            new_vectors=result.new_vectors,
            from_store=from_store,
            embedded=rep.embedded,
            already_published=result.already,
            seconds=time.perf_counter() - t0,
            notes=tuple(notes),
        )

    def _payload(self) -> list[PubFile]:
        """Every file of the local index with its chunks (and their keys) and symbols."""
        from navigator.search import embed_key

        return [
            PubFile(
                path=f.path, blob=f.hash, language=f.language, size=f.size, lines=f.lines,
                chunks=tuple(
                    PubChunk(embed_key(c.hash, f.path, c.symbol, c.signature), c.hash, c.start_line, c.end_line,
                             c.symbol, c.signature, c.text)
                    for c in f.chunks
                ),
                symbols=f.symbols,
            )
            for f in self._need_nav().store.file_contents()
        ]  # fmt: skip

    # -- across repositories ---------------------------------------------------------------

    def search(
        self,
        text: str,
        *,
        k: int = 10,
        languages: Sequence[str] | None = None,
        legs: Sequence[str] = TEAM_LEGS,
    ) -> Response[SearchHit]:
        """Search every published branch head: vectors (HNSW), full text, symbol names and
        paths, fused by RRF with the local heuristics. ``legs`` selects which legs run (all
        by default; for benchmarks). Hits are :class:`TeamHit`."""
        t0 = time.perf_counter()
        if not isinstance(text, str) or not text.strip():
            raise UsageError(f"search text is required, got {text!r}; e.g. `where do we retry the ERP call`")
        self.pg.ensure_schema(write=False)
        cfg = self.config
        terms = query_terms(text, config=cfg)
        notes: list[str] = []
        found: dict[str, list[str]] = {}
        # the store's legs are not filtered to branch heads (locate() is): ask for more than depth
        want = 2 * cfg.depth
        text_words = list(terms.words) + [i.lower() for i in terms.identifiers]
        if "bm25" in legs:
            found["bm25"] = self.pg.text_leg(text_words, limit=want)
        names = [i.rsplit(".", 1)[-1] for i in terms.identifiers]
        if "symbols" in legs:
            found["symbols"] = self.pg.symbol_leg(names, " ".join(terms.words), limit=want)
        complete, reason = True, None
        if "vector" in legs:
            try:
                qv = self.embedder.embed_query(text)
            except Exception as exc:  # a broken model must not take the lexical legs down
                log.warning("query embedding failed: %s", exc)
                complete, reason = False, f"vector leg unavailable: {exc}"
            else:
                found["vector"] = self.pg.vector_leg(self.embedder.model_id, qv, limit=want)
        cand = _Candidates(self.pg, languages, cfg.depth)
        cand.add_legs(found)
        path_leg: list[str] = []
        reps: dict[str, int] = {}
        if "path" in legs:
            try:
                path_leg, reps = self._path_leg(terms, languages, cand)
            except StoreError as exc:  # the other legs answer, and the answer says what is missing
                log.warning("team store path leg failed: %s", exc)
                notes.append(f"path leg unavailable: {exc}")
                complete, reason = False, "; ".join(r for r in (reason, f"path leg unavailable: {exc}") if r)
        ranked = rank(Candidates(cand.legs, cand.meta, path_leg, reps), terms, k=k, config=cfg)
        by_id = cand.by_id
        hits = tuple(_team_hit(r, by_id[r.id]) for r in ranked)
        return Response(
            items=hits,
            complete=complete,
            reason=reason,
            source="team-store",
            elapsed_ms=(time.perf_counter() - t0) * 1000.0,
            notes=tuple(notes),
        )

    def _head_paths(self) -> _HeadPaths:
        """The head files' path words, postings and file names, read again when a head moves."""
        sig = self.pg.heads_signature()
        with self._paths_lock:
            if self._paths is None or self._paths.signature != sig:
                files = self.pg.head_files()
                self._paths = _HeadPaths(
                    signature=sig,
                    index=PathIndex.of({f"{repo}/{path}": path for repo, path, _, _ in files}),
                    files={f"{repo}/{path}": (key, lang) for repo, path, key, lang in files},
                )
            return self._paths

    def _path_leg(
        self, terms: QueryTerms, languages: Sequence[str] | None, cand: _Candidates
    ) -> tuple[list[str], dict[str, int]]:
        """The path leg (see :data:`TEAM_LEGS`): ``repo/path`` keys, best first, and for the best
        few not among the other legs' chunks, the id of their first chunk in ``cand``, so a file
        found by its path alone can be listed."""
        heads = self._head_paths()
        wanted = cand.wanted
        keep = None if wanted is None else (lambda p: (heads.files[p][1] or "").lower() in wanted)
        ranked = path_candidates(heads.index, terms, depth=self.config.depth, keep=keep, config=self.config)
        missing = unlisted(ranked, cand.meta, config=self.config)
        reps: dict[str, int] = {}
        if missing:
            first = self.pg.first_chunks([heads.files[p][0] for p in missing])
            chunk_of = {p: first[heads.files[p][0]] for p in missing if heads.files[p][0] in first}
            cand.locate(list(chunk_of.values()))
            for p, chunk in chunk_of.items():
                loc = next((x for x in cand.locs.get(chunk, ()) if f"{x.repo}/{x.path}" == p), None)
                if loc is not None:
                    reps[p] = cand.number(loc)
        return ranked, reps

    def definitions(self, name: str) -> Response[Symbol]:
        """Where ``name`` is defined in every published branch head (:class:`TeamSymbol` items)."""
        t0 = time.perf_counter()
        if not isinstance(name, str) or not name.strip():
            raise UsageError(
                f"a symbol name is required, got {name!r}; e.g. `createSalesOrder` or `Order.create`"
            )
        self.pg.ensure_schema(write=False)
        found = self.pg.require_definitions(name.strip())
        items = tuple(
            TeamSymbol(
                name=s.definition.name,
                qualified_name=s.definition.qualified_name,
                kind=s.definition.kind,
                path=s.definition.path,
                line=s.definition.name_span.start_line,
                col=s.definition.name_span.start_col,
                end_line=s.definition.span.end_line,
                end_col=s.definition.span.end_col,
                signature=s.definition.signature,
                language=s.definition.language,
                container=s.definition.container,
                docstring=s.definition.docstring,
                repo=s.repo,
                commit=s.commit,
                branch=s.branch,
            )
            for s in found
        )
        return Response(items=items, source="team-store", elapsed_ms=(time.perf_counter() - t0) * 1000.0)


# -- what the Navigator delegates --------------------------------------------------------------


def _team_hit(r: Ranked, loc: ChunkLoc) -> TeamHit:
    """The files-view hit of :func:`navigator.pipeline.chunk_hit`, with where the chunk was published."""
    hit = chunk_hit(r, loc)
    fields = {f.name: getattr(hit, f.name) for f in dataclasses.fields(hit)}
    return TeamHit(**fields, repo=loc.repo, commit=loc.commit, branch=loc.branch)


def _fallback_note(exc: StoreError) -> str:
    return f"team store unavailable ({exc}); answered from this checkout's local index only"


def _nothing_local(exc: StoreError, local: NavError) -> StoreError:
    """The store could not answer and neither could this checkout: the store's error (its exit
    code), saying both, so "no symbol named X" never hides that the store was not asked."""
    err = type(exc)(f"{exc}; this checkout's local index could not answer either: {local}")
    return err


def search_all_repos(
    nav: Checkout, text: str, *, k: int, languages: Sequence[str] | None, store: str | None = None
) -> Response[SearchHit]:
    """``Navigator.search(all_repos=True)``: the team store (``store``, else the configured one),
    or the local index with a note when the store cannot answer (down, unreachable, no schema)."""
    team = nav.team(store)
    try:
        return team.search(text, k=k, languages=languages)
    except StoreError as exc:
        log.info("all-repos search answered locally: %s", exc)
        try:
            local = nav.search(text, k=k, languages=languages)
        except NavError as local_exc:
            raise _nothing_local(exc, local_exc) from None
        note = _fallback_note(exc)
        return dataclasses.replace(
            local, complete=False, reason=note, notes=(*local.notes, note), source="index"
        )


def definitions_all_repos(nav: Checkout, name: str, store: str | None = None) -> Response[Symbol]:
    team = nav.team(store)
    try:
        return team.definitions(name)
    except StoreError as exc:
        log.info("all-repos definitions answered locally: %s", exc)
        try:
            local = nav.definitions(name)
        except NavError as local_exc:
            raise _nothing_local(exc, local_exc) from None
        note = _fallback_note(exc)
        return dataclasses.replace(
            local, complete=False, reason=note, notes=(*local.notes, note), source="index"
        )
