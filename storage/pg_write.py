"""The team store's write path, inside one publish transaction: the published commit's values
(:class:`PubFile`, :class:`PubChunk`, :class:`PublishResult`), content keys, and the statements that
write a commit's blobs, files, chunks, symbols and vectors and move its branch head. Each function
takes the transaction's cursor; :meth:`storage.pg.PgStore.publish` owns the connection, the
transaction and its retries.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from storage.errors import StoreError
from storage.model import SymbolDef
from storage.tokens import index_text

DIM = 384
"""Dimension of the stored vectors (all-MiniLM-L6-v2). HNSW needs one fixed dimension."""

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class PubChunk:
    key: str
    content_hash: str
    start_line: int
    end_line: int
    symbol: str | None
    signature: str | None
    text: str


@dataclass(frozen=True, slots=True)
class PubFile:
    path: str
    blob: str
    language: str | None
    size: int
    lines: int
    chunks: tuple[PubChunk, ...]
    symbols: tuple[SymbolDef, ...]


@dataclass(frozen=True, slots=True)
class PublishResult:
    already: bool
    """The commit was published before (only the branch head moved)."""
    files: int
    chunks: int
    new_files: int
    new_chunks: int
    new_vectors: int


def file_key(path: str, blob: str) -> str:

    return hashlib.blake2b(f"{path}\0{blob}".encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def clean(text: str | None) -> str | None:
    return None if text is None else text.replace("\x00", "")


def vec_text(v: npt.NDArray[Any]) -> str:
    return "[" + ",".join(repr(float(x)) for x in v) + "]"


def check_dim(vectors: Mapping[str, Vectors]) -> None:
    dims = {int(v.shape[-1]) for v in vectors.values()}
    if dims - {DIM}:
        raise StoreError(
            f"the team store holds {DIM}-dimension vectors; this model gives {sorted(dims)}; "
            "use all-MiniLM-L6-v2 (the default) or another 384-dimension model"
        )


def insert_vectors(cur: Any, model: str, vectors: Mapping[str, Vectors]) -> int:
    cur.execute("CREATE TEMP TABLE IF NOT EXISTS s_emb (chunk text, embedding text) ON COMMIT DROP")
    with cur.copy("COPY s_emb (chunk, embedding) FROM STDIN") as cp:
        for key in sorted(vectors):
            cp.write_row((key, vec_text(vectors[key])))
    cur.execute(
        "INSERT INTO nav_embeddings (model, chunk, embedding) "
        "SELECT DISTINCT ON (chunk) %s, chunk, embedding::vector FROM s_emb ORDER BY chunk "
        "ON CONFLICT DO NOTHING",
        (model,),
    )
    n = int(cur.rowcount)
    cur.execute("DROP TABLE s_emb")
    return n


def move_head(cur: Any, repo: str, branch: str, sha: str) -> None:
    cur.execute(
        "INSERT INTO nav_heads(repo, branch, sha) VALUES (%s,%s,%s) ON CONFLICT (repo, branch) "
        "DO UPDATE SET sha = excluded.sha, updated_at = now()",
        (repo, branch, sha),
    )


def insert_content(
    cur: Any,
    repo: str,
    sha: str,
    files: Sequence[PubFile],
    model: str | None,
    vectors: dict[str, Vectors],
) -> PublishResult:
    by_key = {file_key(f.path, f.blob): f for f in files}
    # blobs
    cur.execute("CREATE TEMP TABLE s_blobs (hash text, language text, size bigint, lines int) ON COMMIT DROP")
    with cur.copy("COPY s_blobs FROM STDIN") as cp:
        for f in files:
            cp.write_row((f.blob, f.language, f.size, f.lines))
    cur.execute(
        "INSERT INTO nav_blobs SELECT DISTINCT ON (hash) hash, language, size, lines FROM s_blobs "
        "ORDER BY hash ON CONFLICT DO NOTHING"
    )
    # file versions: only new ones get their chunks and symbols written
    cur.execute("CREATE TEMP TABLE s_files (key text, path text, blob text, language text) ON COMMIT DROP")
    with cur.copy("COPY s_files FROM STDIN") as cp:
        for key, f in by_key.items():
            cp.write_row((key, f.path, f.blob, f.language))
    cur.execute(
        "INSERT INTO nav_files SELECT key, path, blob, language FROM s_files ORDER BY key "
        "ON CONFLICT DO NOTHING RETURNING key"
    )
    new_files = sorted(str(r[0]) for r in cur.fetchall())
    new_chunks = 0
    if new_files:
        cur.execute(
            "CREATE TEMP TABLE s_chunks (key text, content_hash text, path text, name text, symbol text,"
            " signature text, text text, tsv text) ON COMMIT DROP"
        )
        seen: set[str] = set()
        with cur.copy("COPY s_chunks FROM STDIN") as cp:
            for fk in new_files:
                f = by_key[fk]
                path_words = index_text(f.path.replace("/", " ").replace(".", " "))
                for ch in f.chunks:
                    if ch.key in seen:
                        continue
                    seen.add(ch.key)
                    sym = clean(ch.symbol)
                    name = sym.rsplit(".", 1)[-1] if sym else None
                    text = clean(ch.text) or ""
                    tsv = " ".join((path_words, index_text((sym or "").replace(".", " ")), index_text(text)))
                    cp.write_row(
                        (
                            ch.key,
                            ch.content_hash,
                            f.path,
                            name,
                            sym,
                            clean(ch.signature),
                            text,
                            tsv[:900_000],
                        )
                    )
        cur.execute(
            "INSERT INTO nav_chunks SELECT key, content_hash, path, name, symbol, signature, text, "
            "to_tsvector('simple', tsv) FROM s_chunks ORDER BY key ON CONFLICT DO NOTHING"
        )
        new_chunks = int(cur.rowcount)
        cur.execute(
            "CREATE TEMP TABLE s_fc (file text, ord int, chunk text, start_line int, end_line int) "
            "ON COMMIT DROP"
        )
        with cur.copy("COPY s_fc FROM STDIN") as cp:
            for fk in new_files:
                for i, ch in enumerate(by_key[fk].chunks):
                    cp.write_row((fk, i, ch.key, ch.start_line, ch.end_line))
        cur.execute(
            "INSERT INTO nav_file_chunks SELECT * FROM s_fc ORDER BY file, ord ON CONFLICT DO NOTHING"
        )
        cur.execute(
            "CREATE TEMP TABLE s_sym (file text, ord int, name text, qualified_name text, kind text,"
            " line int, col int, end_line int, end_col int, signature text, container text,"
            " docstring text) ON COMMIT DROP"
        )
        with cur.copy("COPY s_sym FROM STDIN") as cp:
            for fk in new_files:
                for i, s in enumerate(by_key[fk].symbols):
                    cp.write_row(
                        (fk, i, clean(s.name), clean(s.qualified_name), s.kind, s.name_span.start_line,
                         s.name_span.start_col, s.span.end_line, s.span.end_col, clean(s.signature),
                         clean(s.container), clean(s.docstring))
                    )  # fmt: skip
        cur.execute("INSERT INTO nav_symbols SELECT * FROM s_sym ORDER BY file, ord ON CONFLICT DO NOTHING")
    new_vectors = insert_vectors(cur, model, vectors) if (vectors and model) else 0
    cur.execute("CREATE TEMP TABLE s_cf (file text) ON COMMIT DROP")
    with cur.copy("COPY s_cf FROM STDIN") as cp:
        for fk in sorted(by_key):
            cp.write_row((fk,))
    cur.execute(
        "INSERT INTO nav_commit_files(repo, sha, file) SELECT %s, %s, file FROM s_cf ORDER BY file "
        "ON CONFLICT DO NOTHING",
        (repo, sha),
    )
    return PublishResult(
        already=False,
        files=len(files),
        chunks=sum(len(f.chunks) for f in files),
        new_files=len(new_files),
        new_chunks=new_chunks,
        new_vectors=new_vectors,
    )


# -- queries across repositories -------------------------------------------------------
