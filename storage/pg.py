"""The team store: PostgreSQL with pgvector, shared by every clone and CI job of a team.

Content-addressed, so the expensive work (parsing, embedding) is stored once:

- ``nav_blobs``: file contents by content hash (language, size, lines; not the text).
- ``nav_files``: a file version, keyed by hash(path, blob): the same file at the same
  path in two commits, branches or forks is one row, with its chunks and symbols once.
- ``nav_chunks``: chunks by *chunk key* (the local index's embedding key: the chunk's
  content hash with its header, path + symbol + signature), with the text, a
  ``tsvector`` (GIN) for full text and a trigram index on the enclosing symbol's name.
- ``nav_file_chunks`` / ``nav_symbols``: where each file version's chunks and definitions
  are (line ranges), keyed by file version.
- ``nav_embeddings``: ``vector(384)`` by (model id, chunk key), HNSW index (cosine).
- ``nav_repos`` / ``nav_commits`` / ``nav_commit_files`` (the manifest of a commit) /
  ``nav_heads`` (the latest published commit of each branch: what ``--all-repos`` searches).
- ``nav_meta``: schema version; :data:`MIGRATIONS` upgrades, like the local index.

A commit is published in one transaction (content rows, manifest, commit row and the
branch head together), so a killed publisher leaves nothing visible and the next one
completes. Concurrent publishers of overlapping content insert in one global order
(table by table, keys sorted) with ``ON CONFLICT DO NOTHING``: they wait for each other
instead of deadlocking, and each chunk is stored once.

Connection details (host, user, password) come from the URL, ``PGPASSFILE`` or the
``PG*`` environment, as libpq reads them. Every message this module produces passes
through :func:`redact`: a password never reaches a log, an error or ``nav status``.

Depends on nothing of nav's above ``storage``.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from storage.errors import (
    StoreAuthError,
    StoreError,
    StoreReadOnlyError,
    StoreSchemaError,
    StoreUnavailableError,
    SymbolNotFoundError,
    UsageError,
)
from storage.model import SymbolDef
from storage.pg_write import (
    DIM,
    PubChunk,
    PubFile,
    PublishResult,
    Vectors,
    check_dim,
    insert_content,
    insert_vectors,
    move_head,
    vec_text,
)
from storage.query import TextStats, VectorCache
from storage.redact import redact, redact_url

log = logging.getLogger(__name__)

__all__ = [
    "DIM",
    "SCHEMA_VERSION",
    "ChunkLoc",
    "PgStore",
    "PubChunk",
    "PubFile",
    "PublishResult",
    "StoreAuthError",
    "StoreError",
    "StoreReadOnlyError",
    "StoreSchemaError",
    "StoreSymbol",
    "StoreUnavailableError",
    "redact",
    "redact_url",
]

SCHEMA_VERSION = 1


# -- errors ------------------------------------------------------------------------------------


# -- redaction: storage.redact ------------------------------------------------------------


def _short(text: str, n: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


# -- schema ------------------------------------------------------------------------------------

_SCHEMA_V1 = f"""
CREATE TABLE IF NOT EXISTS nav_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE nav_repos (name text PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE nav_blobs (
    hash text PRIMARY KEY, language text, size bigint NOT NULL, lines integer NOT NULL
);
CREATE TABLE nav_files (
    key text PRIMARY KEY, path text NOT NULL, blob text NOT NULL REFERENCES nav_blobs(hash),
    language text
);
CREATE TABLE nav_chunks (
    key text PRIMARY KEY, content_hash text NOT NULL, path text NOT NULL, name text, symbol text,
    signature text, text text NOT NULL, tsv tsvector NOT NULL
);
CREATE INDEX nav_chunks_tsv ON nav_chunks USING gin (tsv);
CREATE INDEX nav_chunks_symbol_trgm ON nav_chunks USING gin (symbol gin_trgm_ops);
CREATE INDEX nav_chunks_name ON nav_chunks (name);
CREATE TABLE nav_file_chunks (
    file text NOT NULL REFERENCES nav_files(key), ord integer NOT NULL,
    chunk text NOT NULL REFERENCES nav_chunks(key), start_line integer NOT NULL, end_line integer NOT NULL,
    PRIMARY KEY (file, ord)
);
CREATE INDEX nav_file_chunks_chunk ON nav_file_chunks (chunk);
CREATE TABLE nav_symbols (
    file text NOT NULL REFERENCES nav_files(key), ord integer NOT NULL,
    name text NOT NULL, qualified_name text NOT NULL, kind text NOT NULL,
    line integer NOT NULL, col integer NOT NULL, end_line integer NOT NULL, end_col integer NOT NULL,
    signature text NOT NULL, container text, docstring text,
    PRIMARY KEY (file, ord)
);
CREATE INDEX nav_symbols_name ON nav_symbols (name);
CREATE INDEX nav_symbols_name_trgm ON nav_symbols USING gin (name gin_trgm_ops);
CREATE INDEX nav_symbols_qualified_trgm ON nav_symbols USING gin (qualified_name gin_trgm_ops);
CREATE TABLE nav_embeddings (
    model text NOT NULL, chunk text NOT NULL, embedding vector({DIM}) NOT NULL,
    PRIMARY KEY (model, chunk)
);
CREATE INDEX nav_embeddings_hnsw ON nav_embeddings USING hnsw (embedding vector_cosine_ops);
CREATE TABLE nav_commits (
    repo text NOT NULL REFERENCES nav_repos(name), sha text NOT NULL, branch text NOT NULL,
    model text, files integer NOT NULL, chunks integer NOT NULL,
    published_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo, sha)
);
CREATE TABLE nav_commit_files (
    repo text NOT NULL, sha text NOT NULL, file text NOT NULL REFERENCES nav_files(key),
    PRIMARY KEY (repo, sha, file), FOREIGN KEY (repo, sha) REFERENCES nav_commits(repo, sha)
);
CREATE INDEX nav_commit_files_file ON nav_commit_files (file);
CREATE TABLE nav_heads (
    repo text NOT NULL, branch text NOT NULL, sha text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo, branch), FOREIGN KEY (repo, sha) REFERENCES nav_commits(repo, sha)
);
"""

MIGRATIONS: list[Callable[[Any], None]] = []
"""``MIGRATIONS[i]`` upgrades a store from version i+1 to i+2 inside the migration transaction."""


# -- values ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChunkLoc:
    """Where a chunk is, in the newest branch head that holds it."""

    key: str
    repo: str
    commit: str
    branch: str
    path: str
    language: str | None
    start_line: int
    end_line: int
    symbol: str | None
    signature: str | None
    text: str


@dataclass(frozen=True, slots=True)
class StoreSymbol:
    repo: str
    commit: str
    branch: str
    definition: SymbolDef


TEXT_RANK_NORMALIZATION = 0
"""``ts_rank``'s normalization for the full-text leg: 0, none. Dividing by 1 + log(length) (1, the
earlier choice) ranked short chunks of other repositories too high: without it, semble's 21
development repositories in one store, `--all-repos` NDCG@10 +0.010 [−0.000, +0.020] (the asked
repository's hits +0.007 [−0.001, +0.014]), same latency; the 42 check repositories, once: +0.013
[+0.005, +0.021] (and −0.001 [−0.008, +0.007]). 2 (divide by length) lost 0.069; 16 (by 1 + log of
the unique words) +0.004 (bench/store_prf.py --switch TEXT_RANK_PLAIN)."""


SYMBOL_SIMILARITY = 0.5
"""The symbol leg's trigram word-similarity threshold (``pg_trgm.word_similarity_threshold``).
Measured on semble's 21 development repositories in one store (``bench/store_prf.py
--set-const storage.pg.SYMBOL_SIMILARITY=…``), against 0.5: 0.3 `--all-repos` −0.007 [−0.017,
+0.003], 0.7 −0.003 [−0.009, +0.002]; 0.5 stays."""


def _tsquery(words: Sequence[str]) -> str:
    safe = [re.sub(r"[^0-9a-z_]", "", w.lower()) for w in words]
    return " | ".join(dict.fromkeys(w for w in safe if w))


# -- the adapter -------------------------------------------------------------------------------


class PgStore:
    """One connection to a team store. Use as a context manager; thread-safe (psycopg locks)."""

    def __init__(
        self, url: str, *, connect_timeout_s: float = 5.0, statement_timeout_s: float = 30.0
    ) -> None:
        if not isinstance(url, str) or not re.match(r"postgres(ql)?://", url.strip(), re.IGNORECASE):
            shown = _short(redact_url(str(url)), 100)
            raise UsageError(
                f"team store URL must start with postgresql://, got {shown!r}; "
                "e.g. NAV_STORE=postgresql://nav@db.example.com/nav"
            )
        self.url = url.strip()
        self.safe_url = redact_url(self.url)
        self.connect_timeout_s = connect_timeout_s
        self.statement_timeout_s = statement_timeout_s
        self._conn: Any = None
        self._schema_ok = False
        self._lock = threading.RLock()
        """One transaction at a time on the one connection (a daemon answers from several threads)."""

    # -- connection and errors -------------------------------------------------------------

    def _msg(self, text: str) -> str:
        return redact(text, self.url)

    def _error(self, exc: BaseException, doing: str) -> StoreError:
        """A psycopg exception as one of ours, with a redacted message naming the store."""
        import psycopg
        from psycopg import errors as pe

        detail = _short(self._msg(str(exc).strip() or type(exc).__name__))
        where = f"the team store {self.safe_url}"
        if isinstance(exc, pe.InsufficientPrivilege):
            return StoreReadOnlyError(
                f"{where} refused {doing}: {detail}; this role may only read. Publishing needs a "
                "role with INSERT/UPDATE on the nav_* tables (see README, Team store: roles)"
            )
        if isinstance(exc, (pe.UndefinedTable, pe.UndefinedObject, pe.UndefinedFunction)):
            return StoreSchemaError(
                f"{where} has no usable nav schema ({detail}) while {doing}; "
                "a writer's `nav publish` (or `nav store init`) creates it"
            )
        if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
            low = detail.lower()
            if "password authentication failed" in low or "no password supplied" in low:
                return StoreAuthError(
                    f"{where} refused the credentials while {doing}: {detail}; check the password in "
                    "the URL, PGPASSWORD or PGPASSFILE"
                )
            return StoreUnavailableError(f"cannot reach {where} while {doing}: {detail}")
        return StoreError(f"{where} failed while {doing}: {detail}")

    def _connect(self) -> Any:
        import psycopg

        if self._conn is not None and not self._conn.closed:
            return self._conn
        ms = int(self.statement_timeout_s * 1000)
        try:
            self._conn = psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=max(1, int(self.connect_timeout_s)),
                application_name="nav",
                options=f"-c statement_timeout={ms}",
            )
        except psycopg.Error as exc:
            raise self._error(exc, "connecting") from None
        return self._conn

    @contextmanager
    def _cursor(self, doing: str) -> Iterator[Any]:
        """A cursor inside one transaction; psycopg errors become store errors."""
        import psycopg

        with self._lock:
            conn = self._connect()
            try:
                with conn.transaction(), conn.cursor() as cur:
                    yield cur
            except psycopg.Error as exc:
                if conn.closed or conn.broken:
                    self._conn = None
                raise self._error(exc, doing) from None

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def __enter__(self) -> PgStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- schema ----------------------------------------------------------------------------

    def schema_version(self) -> int:
        with self._cursor("reading the schema version") as cur:
            cur.execute("SELECT to_regclass('nav_meta') IS NOT NULL")
            if not cur.fetchone()[0]:
                return 0
            cur.execute("SELECT value FROM nav_meta WHERE key = 'schema_version'")
            row = cur.fetchone()
            return int(row[0]) if row else 0

    def ensure_schema(self, *, write: bool) -> None:
        """Check the schema; a writer creates or migrates it (one transaction, serialized by
        an advisory lock), a reader gets a clear error when it is missing."""
        with self._lock:
            self._ensure_schema(write=write)

    def _ensure_schema(self, *, write: bool) -> None:
        if self._schema_ok:
            return
        version = self.schema_version()
        if version > SCHEMA_VERSION:
            raise StoreSchemaError(
                f"the team store {self.safe_url} has schema version {version}, newer than this nav "
                f"({SCHEMA_VERSION}); upgrade nav"
            )
        if version < SCHEMA_VERSION:
            if not write:
                raise StoreSchemaError(
                    f"the team store {self.safe_url} has no nav schema yet (version {version}); "
                    "a writer's `nav publish` (or `nav store init`) creates it"
                )
            self._migrate()
        self._schema_ok = True

    def _migrate(self) -> None:
        import psycopg
        from psycopg import errors as pe

        conn = self._connect()
        try:
            with conn.transaction(), conn.cursor() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(hashtext('nav-schema'))")
                for ext in ("vector", "pg_trgm"):
                    try:
                        with conn.transaction():
                            cur.execute(f"CREATE EXTENSION IF NOT EXISTS {ext}")
                    except (pe.InsufficientPrivilege, pe.FeatureNotSupported, pe.UndefinedFile) as exc:
                        what = "pgvector" if ext == "vector" else "pg_trgm (contrib)"
                        raise StoreSchemaError(
                            f"the team store {self.safe_url} lacks the `{ext}` extension and this role "
                            f"cannot create it ({_short(self._msg(str(exc)), 160)}); an administrator must "
                            f"install {what} on the server and run `CREATE EXTENSION {ext};` in the database"
                        ) from None
                cur.execute("SELECT to_regclass('nav_meta') IS NOT NULL")
                version = 0
                if cur.fetchone()[0]:
                    cur.execute("SELECT value FROM nav_meta WHERE key = 'schema_version'")
                    row = cur.fetchone()
                    version = int(row[0]) if row else 0
                if version == 0:
                    for stmt in (s.strip() for s in _SCHEMA_V1.split(";\n")):
                        if stmt:
                            cur.execute(stmt)
                    cur.execute(
                        "INSERT INTO nav_meta(key, value) VALUES ('dim', %s) ON CONFLICT DO NOTHING",
                        (str(DIM),),
                    )
                    version = 1
                while version < SCHEMA_VERSION:
                    MIGRATIONS[version - 1](cur)
                    version += 1
                cur.execute(
                    "INSERT INTO nav_meta(key, value) VALUES ('schema_version', %s) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (str(version),),
                )
        except psycopg.Error as exc:
            if conn.closed or conn.broken:
                self._conn = None
            raise self._error(exc, "creating the schema") from None

    def writable(self) -> bool:
        """Whether this role may publish (INSERT on the content tables)."""
        with self._cursor("checking privileges") as cur:
            cur.execute(
                "SELECT bool_and(has_table_privilege(t, 'INSERT')) FROM unnest(%s::text[]) AS t",
                (["nav_chunks", "nav_commits", "nav_embeddings", "nav_heads"],),
            )
            return bool(cur.fetchone()[0])

    def require_writer(self) -> None:
        if not self.writable():
            user = self._user()
            raise StoreReadOnlyError(
                f"the team store {self.safe_url} is read-only for role `{user}`; publishing needs a role "
                "with INSERT/UPDATE on the nav_* tables (see README, Team store: roles)"
            )

    def _user(self) -> str:
        with self._cursor("reading the role") as cur:
            cur.execute("SELECT current_user")
            return str(cur.fetchone()[0])

    # -- vectors -----------------------------------------------------------------------------

    def vector_keys(self, model: str, keys: Sequence[str]) -> set[str]:
        """Which of ``keys`` have a vector for ``model`` in the store."""
        have: set[str] = set()
        with self._cursor("looking up vectors") as cur:
            for start in range(0, len(keys), 5000):
                cur.execute(
                    "SELECT chunk FROM nav_embeddings WHERE model = %s AND chunk = ANY(%s)",
                    (model, list(keys[start : start + 5000])),
                )
                have.update(str(r[0]) for r in cur.fetchall())
        return have

    def fetch_vectors(self, model: str, keys: Sequence[str]) -> dict[str, Vectors]:
        """The stored vectors of ``keys`` (those the store has) for ``model``."""
        with self._lock:
            return self._fetch_vectors(model, keys)

    def _fetch_vectors(self, model: str, keys: Sequence[str]) -> dict[str, Vectors]:
        out: dict[str, Vectors] = {}
        conn = self._connect()
        import psycopg

        try:
            # pgvector's binary form (int16 dim, int16 unused, big-endian float4s): 10x faster than text
            with conn.transaction(), conn.cursor(binary=True) as cur:
                for start in range(0, len(keys), 2000):
                    cur.execute(
                        "SELECT chunk, vector_send(embedding) FROM nav_embeddings WHERE model = %s AND chunk = ANY(%s)",
                        (model, list(keys[start : start + 2000])),
                    )
                    for key, raw in cur.fetchall():
                        out[str(key)] = np.frombuffer(raw, dtype=">f4", offset=4).astype(np.float32)
        except psycopg.Error as exc:
            if conn.closed or conn.broken:
                self._conn = None
            raise self._error(exc, "fetching vectors") from None
        return out

    def push_vectors(self, model: str, vectors: Mapping[str, Vectors]) -> int:
        """Store vectors the store lacks (content-addressed: existing ones are kept). Returns
        how many rows were new."""
        if not vectors:
            return 0
        check_dim(vectors)
        with self._cursor("storing vectors") as cur:
            return insert_vectors(cur, model, vectors)

    # -- publish -----------------------------------------------------------------------------

    def commit_size(self, repo: str, sha: str) -> tuple[int, int] | None:
        """(files, chunks) of a published commit; None when it is not published."""
        with self._cursor("looking up a commit") as cur:
            cur.execute("SELECT files, chunks FROM nav_commits WHERE repo = %s AND sha = %s", (repo, sha))
            row = cur.fetchone()
            return None if row is None else (int(row[0]), int(row[1]))

    def publish(
        self,
        *,
        repo: str,
        sha: str,
        branch: str,
        model: str | None,
        files: Sequence[PubFile],
        vectors: dict[str, Vectors],
        retries: int = 3,
    ) -> PublishResult:
        """Publish one commit in one transaction; idempotent (a published commit only moves
        its branch head). Retried on a deadlock or serialization failure."""
        from psycopg import errors as pe

        if vectors:
            check_dim(vectors)
        for attempt in range(retries + 1):
            try:
                with self._lock:
                    result = self._publish_once(repo, sha, branch, model, files, vectors)
                if not result.already:
                    self._analyze()
                return result
            except StoreError as exc:
                cause = exc.__cause__
                if attempt < retries and isinstance(cause, (pe.DeadlockDetected, pe.SerializationFailure)):
                    log.info("publish of %s@%s retried after %s", repo, sha[:12], type(cause).__name__)
                    continue
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _publish_once(
        self,
        repo: str,
        sha: str,
        branch: str,
        model: str | None,
        files: Sequence[PubFile],
        vectors: dict[str, Vectors],
    ) -> PublishResult:
        import psycopg

        conn = self._connect()
        try:
            with conn.transaction(), conn.cursor() as cur:
                cur.execute("SET LOCAL statement_timeout = '30min'")
                cur.execute("INSERT INTO nav_repos(name) VALUES (%s) ON CONFLICT DO NOTHING", (repo,))
                n_chunks = sum(len(f.chunks) for f in files)
                cur.execute(
                    "INSERT INTO nav_commits(repo, sha, branch, model, files, chunks) VALUES (%s,%s,%s,%s,%s,%s) "
                    "ON CONFLICT DO NOTHING RETURNING sha",
                    (repo, sha, branch, model, len(files), n_chunks),
                )
                if cur.fetchone() is None:  # published before (or by a concurrent publisher)
                    move_head(cur, repo, branch, sha)
                    return PublishResult(True, len(files), n_chunks, 0, 0, 0)
                result = insert_content(cur, repo, sha, files, model, vectors)
                move_head(cur, repo, branch, sha)
                return result
        except psycopg.Error as exc:
            if conn.closed or conn.broken:
                self._conn = None
            raise self._error(exc, f"publishing {repo}@{sha[:12]}") from exc

    def _analyze(self) -> None:
        """Fresh planner statistics after new content (a first publish leaves none), best effort:
        a role that does not own the tables gets a warning from PostgreSQL, not an error."""
        import psycopg

        try:
            with self._cursor("analyzing") as cur:
                cur.execute(
                    "ANALYZE nav_chunks, nav_file_chunks, nav_files, nav_commit_files, nav_heads, nav_symbols"
                )
        except (psycopg.Error, StoreError) as exc:
            log.info("ANALYZE after publish skipped: %s", exc)

    def heads(self) -> list[tuple[str, str, str, float]]:
        """(repo, branch, sha, updated_at epoch) of every published branch head."""
        with self._cursor("listing repositories") as cur:
            cur.execute(
                "SELECT repo, branch, sha, extract(epoch FROM updated_at) FROM nav_heads ORDER BY repo, branch"
            )
            return [(str(r), str(b), str(s), float(t)) for r, b, s, t in cur.fetchall()]

    def vector_leg(self, model: str, query: Vectors, *, limit: int = 50) -> list[str]:
        """Chunk keys nearest to ``query`` (cosine, HNSW), best first.

        Not filtered to branch heads here (a visibility join per HNSW candidate cost ~50 ms on
        20 repositories): :meth:`locate` drops what no head holds, which is rare (chunks only
        in superseded commits), so callers ask for more than they keep."""
        with self._cursor("searching vectors") as cur:
            cur.execute(f"SET LOCAL hnsw.ef_search = {max(40, min(1000, 2 * int(limit)))}")
            cur.execute(
                "SELECT e.chunk FROM nav_embeddings e WHERE e.model = %s "
                "ORDER BY e.embedding <=> %s::vector LIMIT %s",
                (model, vec_text(query), limit),
            )
            return [str(r[0]) for r in cur.fetchall()]

    def text_leg(self, words: Sequence[str], *, limit: int = 50) -> list[str]:
        """Chunk keys matching any of ``words`` (full text, GIN), best first by ``ts_rank`` with
        length normalization (half the cost of ``ts_rank_cd`` on 20 repositories: 8 vs 16 ms)."""
        q = _tsquery(words)
        if not q:
            return []
        with self._cursor("searching text") as cur:
            # not filtered to branch heads: locate() drops the rare chunk no head holds
            cur.execute(
                "SELECT c.key FROM nav_chunks c, to_tsquery('simple', %s) q WHERE c.tsv @@ q "
                "ORDER BY ts_rank(c.tsv, q, %s) DESC, c.key LIMIT %s",
                (q, int(TEXT_RANK_NORMALIZATION), limit),
            )
            return [str(r[0]) for r in cur.fetchall()]

    def doc_freqs(self, words: Sequence[str], *, cap: int) -> dict[str, int]:
        """How many chunks hold each of ``words`` (full text, as :meth:`text_leg` matches them),
        counted up to ``cap + 1``: a word in more chunks reads ``cap + 1`` (bounded cost, like the
        local index's ``semantic.lexical.doc_freqs``). Over every stored chunk, as
        :meth:`chunk_count` counts them; a word the text search leaves nothing of reads 0."""
        safe = {w: _tsquery([w]) for w in dict.fromkeys(words)}
        asked = sorted({q for q in safe.values() if q})
        if not asked:
            return {w: 0 for w in safe}
        with self._cursor("counting words") as cur:
            # one round trip; each count stops at cap + 1 rows (GIN bitmap scan, LIMIT)
            cur.execute(
                "SELECT w.word, (SELECT count(*) FROM (SELECT 1 FROM nav_chunks c "
                "WHERE c.tsv @@ to_tsquery('simple', w.word) LIMIT %s) m) FROM unnest(%s::text[]) AS w(word)",
                (int(cap) + 1, asked),
            )
            got = {str(w): int(n) for w, n in cur.fetchall()}
        return {w: got.get(q, 0) for w, q in safe.items()}

    def chunk_count(self) -> int:
        """Chunks stored (every commit's, as :meth:`doc_freqs` counts them): the planner's
        estimate, which each publish refreshes (ANALYZE); counted when there is none yet."""
        with self._cursor("counting chunks") as cur:
            cur.execute("SELECT reltuples FROM pg_class WHERE oid = 'nav_chunks'::regclass")
            row = cur.fetchone()
            if row is not None and row[0] is not None and float(row[0]) >= 1:
                return int(row[0])
            cur.execute("SELECT count(*) FROM nav_chunks")
            return int(cur.fetchone()[0])

    def symbol_leg(self, names: Sequence[str], phrase: str, *, limit: int = 50) -> list[str]:
        """Chunk keys whose enclosing symbol is named ``names`` exactly, then by trigram word
        similarity of the symbol to ``phrase``."""
        out: list[str] = []
        with self._cursor("searching symbols") as cur:
            if names:
                cur.execute(
                    "SELECT c.key FROM nav_chunks c WHERE c.name = ANY(%s) ORDER BY c.key LIMIT %s",
                    (list(names), limit),
                )
                out.extend(str(r[0]) for r in cur.fetchall())
            if phrase.strip() and len(out) < limit:
                cur.execute(f"SET LOCAL pg_trgm.word_similarity_threshold = {float(SYMBOL_SIMILARITY)}")
                cur.execute(
                    "SELECT c.key FROM nav_chunks c WHERE %s <%% c.symbol "
                    "ORDER BY word_similarity(%s, c.symbol) DESC, c.key LIMIT %s",
                    (phrase, phrase, limit),
                )
                out.extend(str(r[0]) for r in cur.fetchall() if str(r[0]) not in out)
        return out[:limit]

    def locate(self, keys: Sequence[str]) -> dict[str, list[ChunkLoc]]:
        """Where each chunk key is: one location per (repo, path), in the newest head holding it."""
        out: dict[str, list[ChunkLoc]] = {}
        if not keys:
            return out
        with self._cursor("reading chunks") as cur:
            # start from the few chunks asked for, whatever the statistics say (MATERIALIZED)
            cur.execute(
                "WITH fc AS MATERIALIZED (SELECT chunk, file, start_line, end_line FROM nav_file_chunks "
                "WHERE chunk = ANY(%s)) "
                "SELECT DISTINCT ON (fc.chunk, h.repo, f.path) fc.chunk, h.repo, h.sha, h.branch, f.path, "
                "f.language, fc.start_line, fc.end_line, c.symbol, c.signature, c.text "
                "FROM fc JOIN nav_files f ON f.key = fc.file "
                "JOIN nav_commit_files cf ON cf.file = fc.file "
                "JOIN nav_heads h ON h.repo = cf.repo AND h.sha = cf.sha "
                "JOIN nav_chunks c ON c.key = fc.chunk "
                "ORDER BY fc.chunk, h.repo, f.path, h.updated_at DESC",
                (list(keys),),
            )
            for key, repo, sha, branch, path, lang, sl, el, sym, sig, text in cur.fetchall():
                loc = ChunkLoc(key, repo, sha, branch, path, lang, int(sl), int(el), sym, sig, text)
                out.setdefault(loc.key, []).append(loc)
        return out

    def heads_signature(self) -> tuple[int, str]:
        """Changes whenever a branch head moves (publish): what a cache of head files keys on."""
        with self._cursor("reading branch heads") as cur:
            cur.execute("SELECT count(*), coalesce(max(updated_at)::text, '') FROM nav_heads")
            n, at = cur.fetchone()
        return int(n), str(at)

    def head_files(self) -> list[tuple[str, str, str, str | None]]:
        """(repository, path, file key, language) of every file in a branch head, the newest
        head's where branches of one repository differ."""
        with self._cursor("listing head files") as cur:
            cur.execute(
                "SELECT DISTINCT ON (h.repo, f.path) h.repo, f.path, f.key, f.language "
                "FROM nav_heads h JOIN nav_commit_files cf ON cf.repo = h.repo AND cf.sha = h.sha "
                "JOIN nav_files f ON f.key = cf.file ORDER BY h.repo, f.path, h.updated_at DESC"
            )
            return [(str(r), str(p), str(k), lang) for r, p, k, lang in cur.fetchall()]

    def first_chunks(self, files: Sequence[str]) -> dict[str, str]:
        """file key -> the key of its first chunk (a file found by its path alone enters there)."""
        if not files:
            return {}
        with self._cursor("reading first chunks") as cur:
            cur.execute(
                "SELECT file, chunk FROM nav_file_chunks WHERE file = ANY(%s) AND ord = 0", (list(files),)
            )
            return {str(f): str(c) for f, c in cur.fetchall()}

    def definitions(self, name: str, *, limit: int = 200) -> list[StoreSymbol]:
        """Definitions named ``name`` (or whose qualified name ends with ``.name``) in every head."""
        last = name.rsplit(".", 1)[-1]
        dotted = "." in name
        with self._cursor("looking up definitions") as cur:
            cur.execute(
                "SELECT DISTINCT ON (h.repo, f.path, s.line, s.qualified_name) h.repo, h.sha, h.branch, "
                "s.name, s.qualified_name, s.kind, f.path, f.language, s.line, s.col, s.end_line, s.end_col,"
                " s.signature, s.container, s.docstring "
                "FROM nav_symbols s JOIN nav_files f ON f.key = s.file "
                "JOIN nav_commit_files cf ON cf.file = s.file "
                "JOIN nav_heads h ON h.repo = cf.repo AND h.sha = cf.sha "
                "WHERE s.name = %s AND (NOT %s OR s.qualified_name = %s OR s.qualified_name LIKE %s) "
                "ORDER BY h.repo, f.path, s.line, s.qualified_name, h.updated_at DESC LIMIT %s",
                (last, dotted, name, "%." + name.replace("%", r"\%").replace("_", r"\_"), limit),
            )
            rows = cur.fetchall()
        out = []
        for repo, sha, branch, n, qn, kind, path, lang, line, col, el, ec, sig, cont, doc in rows:
            from storage.model import Span

            out.append(
                StoreSymbol(
                    repo=repo,
                    commit=sha,
                    branch=branch,
                    definition=SymbolDef(
                        name=n,
                        qualified_name=qn,
                        kind=kind,
                        path=path,
                        language=lang or "",
                        span=Span(line, col, el, ec),
                        name_span=Span(line, col, line, col + len(n)),
                        signature=sig,
                        container=cont,
                        docstring=doc,
                    ),
                )  # fmt: skip
            )
        return out

    def similar_names(self, name: str, *, limit: int = 5) -> list[str]:
        with self._cursor("looking up similar names") as cur:
            cur.execute(
                "SELECT name FROM (SELECT DISTINCT name FROM nav_symbols WHERE name %% %s) n "
                "ORDER BY similarity(name, %s) DESC, name LIMIT %s",
                (name, name, limit),
            )
            return [str(r[0]) for r in cur.fetchall()]

    def require_definitions(self, name: str) -> list[StoreSymbol]:
        found = self.definitions(name)
        if not found:
            raise SymbolNotFoundError(name, [f"`{n}`" for n in self.similar_names(name.rsplit(".", 1)[-1])])
        return found

    def size(self) -> dict[str, int]:
        """Bytes on disk of each nav table (with its indexes and TOAST) and rows of the main ones."""
        with self._cursor("measuring the store") as cur:
            cur.execute(
                "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
                "WHERE c.relkind = 'r' AND c.relname LIKE 'nav\\_%%' ORDER BY c.relname"
            )
            out = {f"bytes:{r[0]}": int(r[1]) for r in cur.fetchall()}
            for table in ("nav_chunks", "nav_embeddings", "nav_files", "nav_commits"):
                cur.execute(f"SELECT count(*) FROM {table}")
                out[f"rows:{table}"] = int(cur.fetchone()[0])
        return out


if TYPE_CHECKING:  # the team store answers the parts of the query seam that apply to it

    def _conforms(pg: PgStore) -> tuple[VectorCache, TextStats]:
        return pg, pg
