"""What the issue-localization benchmarks share (``loc_bench.py``, ``loc_full_bench.py``): moving a
working tree to an instance's base commit, Python definitions per file from nav's symbol table, a
ranked list of spans as a list of functions, the plain and code-aware BM25 baselines, the scores,
and which paths are no source code.

The baselines and :func:`non_source` are written independently of nav's own ranking (a baseline
must not share nav's blind spots, and a metric must not be nav's own classifier)."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.harness.metrics import acc_at_k, recall_at_k

DEF_KINDS = ("function", "method", "class")
METRICS = ("file@1", "file@5", "file@10", "fn@5", "fn@10")


def checkout(tree: Path, commit: str) -> None:
    """Move the working tree to ``commit``. Blobs the fetched mirror lacks (large data files)
    are left out through sparse checkout, and said on stderr."""
    for _ in range(5):
        p = subprocess.run(
            ["git", "-C", str(tree), "checkout", "-q", "-f", commit], capture_output=True, text=True
        )
        if p.returncode == 0:
            break
        missing = re.findall(r"unable to read sha1 file of (\S+) \(", p.stderr)
        if not missing:
            raise RuntimeError(f"git checkout {commit} in {tree}: {p.stderr[-500:]}")
        print(
            f"{tree.name}: leaving out {len(missing)} files the mirror lacks: {missing[:3]}", file=sys.stderr
        )
        sparse = tree / ".git" / "info" / "sparse-checkout"
        lines = sparse.read_text().splitlines() if sparse.exists() else ["/*"]
        sparse.parent.mkdir(parents=True, exist_ok=True)
        sparse.write_text("\n".join([*lines, *("!/" + m for m in missing)]) + "\n")
        subprocess.run(["git", "-C", str(tree), "config", "core.sparseCheckout", "true"], check=True)
    else:
        raise RuntimeError(f"git checkout {commit} in {tree} kept failing")
    subprocess.run(["git", "-C", str(tree), "clean", "-q", "-f", "-d", "-e", ".nav"], check=True)


class Defs:
    """Python definitions per file, from nav's symbol table (the same for every system)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.by_path: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
        kinds = ",".join("?" * len(DEF_KINDS))
        for path, start, end, qn in conn.execute(
            f"SELECT f.path, s.start_line, s.end_line, s.qualified_name FROM symbols s JOIN files f ON f.id = s.file_id "
            f"WHERE s.kind IN ({kinds}) AND f.path LIKE '%.py' ORDER BY s.start_line",
            DEF_KINDS,
        ):
            self.by_path[str(path)].append((int(start), int(end), str(qn)))

    def functions(self, path: str, start: int, end: int) -> list[str]:
        defs = self.by_path.get(path, [])
        inside = [qn for s, _e, qn in defs if start <= s <= end]
        if inside:
            return [f"{path}::{qn}" for qn in inside]
        around = [(e - s, qn) for s, e, qn in defs if s <= start and e >= start]
        if around:
            return [f"{path}::{min(around)[1]}"]
        return [f"{path}::<module>"]


def function_list(spans: list[tuple[str, int, int]], defs: Defs, *, exact: bool = False) -> list[str]:
    """A ranked list of spans as a ranked list of functions: per span, the Python definitions
    that start inside it, else the innermost one around it, else ``<module>`` (``exact``: the
    one definition a code-view hit is)."""
    out: list[str] = []
    for path, start, end in spans:
        names = defs.functions(path, start, start if exact else end)
        for n in names[:1] if exact else names:
            if n not in out:
                out.append(n)
    return out


_CODE_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def code_words(text: str) -> str:
    """Identifiers spelled as words, written independently of nav's tokenizer (a baseline must
    not share nav's blind spots): ``parseHTTPResponse_v2`` -> ``parse http response v 2``."""
    return " ".join(m.group(0).lower() for m in _CODE_WORD.finditer(text))


class PlainBM25:
    """FTS5 BM25 over the chunk text with the default tokenizer: the baseline (``suffix``:
    only the chunks of files ending so, e.g. ``.py``)."""

    TOKENIZE = "unicode61"

    def __init__(self, conn: sqlite3.Connection, suffix: str = "") -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(f"CREATE VIRTUAL TABLE b USING fts5(text, tokenize='{self.TOKENIZE}')")
        self.suffix = suffix
        self.ids: dict[int, str] = {}
        self.spans: dict[int, tuple[str, int, int]] = {}
        self.update(conn)

    def update(self, conn: sqlite3.Connection) -> None:
        """Follow the index after an incremental update: chunks gone are deleted, new ones added
        (chunk ids are the rows' ids, as in a fresh build, so the ranking is a fresh build's)."""
        now = {
            int(i): (str(p), int(s), int(e))
            for i, p, s, e in conn.execute(
                "SELECT c.id, f.path, c.start_line, c.end_line FROM chunks c JOIN files f ON f.id = c.file_id"
            )
        }
        mine = {
            int(i): str(h)
            for i, h in conn.execute(
                "SELECT c.id, c.hash FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path LIKE ?",
                (f"%{self.suffix}",),
            )
        }
        # a chunk id whose text changed in place counts as gone and new
        gone = sorted(i for i, h in self.ids.items() if mine.get(i) != h)
        self.db.executemany("DELETE FROM b WHERE rowid = ?", ((i,) for i in gone))
        new = sorted(i for i, h in mine.items() if self.ids.get(i) != h)
        for lo in range(0, len(new), 500):
            part = new[lo : lo + 500]
            rows = conn.execute(
                f"SELECT id, text FROM chunks WHERE id IN ({','.join('?' * len(part))})", part
            )
            self.db.executemany(
                "INSERT INTO b(rowid, text) VALUES (?, ?)", ((int(i), self.text(t)) for i, t in rows)
            )
        self.ids = mine
        self.spans = now

    def text(self, chunk: str) -> str:
        """What is indexed of a chunk (and searched of a query)."""
        return chunk

    def search(self, query: str, k: int = 100) -> list[tuple[str, int, int]]:
        words = list(dict.fromkeys(w.lower() for w in re.findall(r"\w+", self.text(query))))
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', "") + '"' for w in words)
        rows = self.db.execute(
            "SELECT rowid FROM b WHERE b MATCH ? ORDER BY bm25(b) LIMIT ?", (match, k)
        ).fetchall()
        return [self.spans[int(r[0])] for r in rows]


class CodeBM25(PlainBM25):
    """The stronger baseline: FTS5 BM25 with the Porter stemmer over the chunk text with every
    identifier also spelled as words (``createSalesOrder`` -> ``create sales order``), the query
    split the same way. What a careful engineer would build in an afternoon: no symbol table,
    no paths, no fusion."""

    TOKENIZE = "porter unicode61"

    def text(self, chunk: str) -> str:
        return f"{chunk}\n{code_words(chunk)}"


def score(files: list[str], funcs: list[str], inst: dict[str, Any]) -> dict[str, float]:
    """File Acc@1/5/10 and function Recall@5/10 of one ranked list against an instance's labels."""
    gf, gfn = set(inst["gold_files"]), set(inst["gold_functions"])
    return {
        "file@1": acc_at_k(files, gf, 1),
        "file@5": acc_at_k(files, gf, 5),
        "file@10": acc_at_k(files, gf, 10),
        "fn@5": recall_at_k(funcs, gfn, 5),
        "fn@10": recall_at_k(funcs, gfn, 10),
    }


_NON_SOURCE_DIR = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec|docs?|doc_src|examples?|galleries|tutorials?|benchmarks?|asv_bench"
    r"|\.github|\.circleci|ci|scripts?|tools|extras?|release|changelog\.d|news)(/|$)",
    re.I,
)
_NON_SOURCE_FILE = re.compile(r"(^|/)(test_[^/]*|[^/]*_tests?\.py|conftest\.py|setup\.py)$", re.I)


def non_source(path: str) -> bool:
    """Whether a file is no Python source of the project (what the labels of these Python sets
    can never be): a file that is not ``.py``, or one under tests, docs, examples, benchmarks,
    CI, scripts or release notes, or a test module. The top-5 share of such files is reported."""
    if not path.endswith(".py"):
        return True
    return bool(_NON_SOURCE_DIR.search(path) or _NON_SOURCE_FILE.search(path))
