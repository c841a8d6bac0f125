"""Embedding speed of the default model at several max_seq_length, interleaved in one process.

Takes chunk texts (exactly what search embeds) from a bench index and times each setting
on the same texts, alternating rounds so machine load hits every setting alike.

    python bench/embed_speed.py --db bench/corpora/.idx/<slug>/flask.db --n 128 --rounds 3 --lengths 128,256
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from semantic.embed import SentenceTransformerEmbedder, embedding_text  # noqa: E402
from storage.db import Store  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lengths", default="128,256")
    args = ap.parse_args()
    store = Store(Path(args.db))
    ids = [int(r[0]) for r in store.conn.execute("SELECT id FROM chunks")]
    random.Random(0).shuffle(ids)
    rows = store.chunks_by_ids(ids[: args.n])
    texts = [embedding_text(r.path, r.symbol, r.signature, r.text) for r in rows.values()]
    lengths = [int(x) for x in args.lengths.split(",")]
    models = {n: SentenceTransformerEmbedder(max_seq_length=n) for n in lengths}
    tok = models[lengths[0]]._load().tokenizer
    ntok = sorted(len(tok(t, truncation=False)["input_ids"]) for t in texts)
    print(f"{len(texts)} chunks; tokens p50={ntok[len(ntok) // 2]} p90={ntok[int(len(ntok) * 0.9)]} "
          f">128: {sum(n > 128 for n in ntok) / len(ntok):.0%} >256: {sum(n > 256 for n in ntok) / len(ntok):.0%}")
    for m in models.values():
        m.embed_documents(texts[:8])
    spent = {n: 0.0 for n in lengths}
    for _ in range(args.rounds):
        for n, m in models.items():
            t = time.perf_counter()
            m.embed_documents(texts)
            spent[n] += time.perf_counter() - t
    for n in lengths:
        print(f"max_seq_length {n}: {len(texts) * args.rounds / spent[n]:.1f} chunks/s")


if __name__ == "__main__":
    main()
