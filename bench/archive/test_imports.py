"""How often would a top-ranked test file lead to the missed gold file through what it imports?
(issue 18, stop 31: a ceiling for "test evidence flows to the code it tests", not built.)

Per development instance (cached index, ``loc_full_bench.py --build-only``), nav's files view with
the lexical legs at k=50; the test files among its first N; the non-test files their chunks
import (``from a.b import c`` -> ``a/b.py``, ``a/b/__init__.py``, ``a/b/c.py``, also under
``lib/``); counted: instances missed at 5 whose gold file is among those imports.

    PYTHONPATH=$PWD python bench/archive/test_imports.py loc_full dev 10
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from loc_full_bench import LEXICAL, SETS, split_ids  # noqa: E402

from bench.harness.data import jsonl  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from semantic.fusion import _TEST  # noqa: E402
from storage.db import Store  # noqa: E402

IMPORT_FROM = re.compile(r"^\s*from\s+([\w.]+)\s+import\s+\(?([\w\s,]+)", re.M)
IMPORT = re.compile(r"^\s*import\s+([\w.]+)", re.M)


def imported_files(text: str, paths: set[str]) -> set[str]:
    mods = []
    for m in IMPORT_FROM.finditer(text):
        mods.append(m.group(1))
        mods += [f"{m.group(1)}.{n}" for n in re.split(r"[\s,]+", m.group(2)) if n]
    mods += [m.group(1) for m in IMPORT.finditer(text)]
    out = set()
    for mod in mods:
        base = mod.replace(".", "/")
        for cand in (f"{base}.py", f"{base}/__init__.py", f"lib/{base}.py", f"lib/{base}/__init__.py"):
            if cand in paths and not _TEST.search(cand):
                out.add(cand)
    return out


def main() -> None:
    name, split, top = sys.argv[1], sys.argv[2], int(sys.argv[3])
    root = SETS[name]
    stats = {
        "instances": 0,
        "missed@5": 0,
        "a test in top": 0,
        "gold imported": 0,
        "gold imported, missed@5": 0,
    }
    for inst in split_ids(name, split, jsonl(root / "instances.jsonl")):
        db = root / "idx" / "inst" / f"{inst['id']}.db"
        if not db.exists():
            continue
        store = Store(db)
        try:
            paths = {str(r[0]) for r in store.conn.execute("SELECT path FROM files")}
            res = SemanticSearch(store).search(inst["query"], k=50, legs=LEXICAL)
            files = list(dict.fromkeys(h.path for h in res.items))
            gold = set(inst["gold_files"])
            missed = not gold & set(files[:5])
            tests = [p for p in files[:top] if _TEST.search(p)]
            found: set[str] = set()
            for t in tests:
                text = "\n".join(
                    str(r[0])
                    for r in store.conn.execute(
                        "SELECT c.text FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?", (t,)
                    )
                )
                found |= imported_files(text, paths)
            hit = bool(gold & found)
            stats["instances"] += 1
            stats["missed@5"] += missed
            stats["a test in top"] += bool(tests)
            stats["gold imported"] += hit
            stats["gold imported, missed@5"] += hit and missed
        finally:
            store.close()
    print(stats)


if __name__ == "__main__":
    main()
