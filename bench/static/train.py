"""Fine-tune a model2vec static model on the mined (query -> changed code) triples.

The model is its token-embedding matrix (one row per tokenizer token; a text is the mean of its
tokens' rows). Training moves those rows with a contrastive loss: per batch of queries, every
query is scored (cosine / temperature) against every positive in the batch and every pair's hard
negatives (``training_data.py``), cross-entropy towards its own positive (in-batch + hard
negatives; a candidate with the same text as the query's positive is masked). Queries and code go
through the same matrix, as at run time.

Early stopping on the held-out repositories (``split == "holdout"``, chosen by repository in
``training_data.py``): their mean reciprocal rank of the first positive among every chunk of the
same repository's held-out triples, checked every ``--eval-every`` steps; the best matrix is kept.
One thread (``torch.set_num_threads(1)``), a wall-clock budget (``--minutes``).

    OMP_NUM_THREADS=1 PYTHONPATH=$PWD python bench/static/train.py \
        --base bench/corpora/static/minilm-m2v-256 --triples bench/corpora/static/triples.jsonl \
        --out bench/corpora/static/minilm-m2v-256-ft
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))


def load_triples(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if r["split"] == "train"], [r for r in rows if r["split"] == "holdout"]


class Tokens:
    """Token ids per distinct text, truncated as the model truncates at run time."""

    def __init__(self, model: Any, max_length: int) -> None:
        self.model = model
        self.max_length = max_length
        self.ids: dict[str, list[int]] = {}

    def add(self, texts: list[str]) -> None:
        todo = [t for t in dict.fromkeys(texts) if t not in self.ids]
        for i in range(0, len(todo), 512):
            part = todo[i : i + 512]
            for t, ids in zip(part, self.model.tokenize(part), strict=True):
                self.ids[t] = ids[: self.max_length] or [0]


def encode(torch: Any, table: Any, tokens: Tokens, texts: list[str]) -> Any:
    """Mean of the token rows per text, L2-normalized (what StaticModel.encode computes)."""
    flat: list[int] = []
    offsets: list[int] = []
    for t in texts:
        offsets.append(len(flat))
        flat.extend(tokens.ids[t])
    out = torch.nn.functional.embedding_bag(
        torch.tensor(flat, dtype=torch.long), table, torch.tensor(offsets, dtype=torch.long), mode="mean"
    )
    return torch.nn.functional.normalize(out, dim=1)


def holdout_mrr(torch: Any, table: Any, tokens: Tokens, held: list[dict[str, Any]]) -> float:
    """Mean reciprocal rank of a query's first positive among all chunks of its repository's
    held-out triples (positives and negatives of every held-out pair there)."""
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in held:
        by_repo[r["repo"]].append(r)
    rr: list[float] = []
    with torch.no_grad():
        for rows in by_repo.values():
            pool = list(dict.fromkeys(t for r in rows for t in (*r["positives"], *r["negatives"])))
            where = {t: i for i, t in enumerate(pool)}
            docs = encode(torch, table, tokens, pool)
            qs = encode(torch, table, tokens, [r["query"] for r in rows])
            scores = qs @ docs.T
            for j, r in enumerate(rows):
                order = torch.argsort(scores[j], descending=True).tolist()
                gold = {where[t] for t in r["positives"]}
                rank = next(k for k, i in enumerate(order, 1) if i in gold)
                rr.append(1.0 / rank)
    return float(np.mean(rr)) if rr else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the distilled model2vec directory")
    ap.add_argument("--triples", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--temperature", type=float, default=0.05)
    ap.add_argument("--negatives", type=int, default=3, help="hard negatives per pair in a batch")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--minutes", type=float, default=20.0, help="wall-clock budget")
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--patience", type=int, default=4, help="evaluations without improvement before stopping")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import torch
    from model2vec import StaticModel

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    t_start = time.perf_counter()
    base = StaticModel.from_pretrained(args.base)
    train, held = load_triples(Path(args.triples))
    tokens = Tokens(base, int(base.max_length or 512))
    for r in (*train, *held):
        tokens.add([r["query"], *r["positives"], *r["negatives"]])
    t_tok = time.perf_counter() - t_start
    table = torch.nn.Parameter(torch.tensor(np.asarray(base.embedding, dtype=np.float32)))
    opt = torch.optim.Adam([table], lr=args.lr)
    best = holdout_mrr(torch, table, tokens, held)
    history: list[dict[str, float]] = [{"step": 0, "holdout_mrr": round(best, 4)}]
    print(f"step 0: holdout MRR {best:.4f} ({len(train)} train, {len(held)} held-out triples)", flush=True)
    best_table = table.detach().clone()
    step, stale, stop = 0, 0, ""
    deadline = t_start + args.minutes * 60
    for epoch in range(args.epochs):
        order = list(range(len(train)))
        rng.shuffle(order)
        for b in range(0, len(order) - args.batch + 1, args.batch):
            rows = [train[i] for i in order[b : b + args.batch]]
            queries = [r["query"] for r in rows]
            positives = [rng.choice(r["positives"]) for r in rows]
            negatives = [t for r in rows for t in r["negatives"][: args.negatives]]
            cands = positives + negatives
            q = encode(torch, table, tokens, queries)
            c = encode(torch, table, tokens, cands)
            logits = (q @ c.T) / args.temperature
            # a candidate equal to a query's own positive text (another pair's copy) is no negative
            own = [set(r["positives"]) for r in rows]
            mask = torch.tensor(
                [[j != i and cands[j] in own[i] for j in range(len(cands))] for i in range(len(rows))]
            )
            logits = logits.masked_fill(mask, float("-inf"))
            loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(rows)))
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % args.eval_every == 0:
                mrr = holdout_mrr(torch, table, tokens, held)
                history.append(
                    {
                        "step": step,
                        "epoch": epoch,
                        "loss": round(float(loss.detach()), 4),
                        "holdout_mrr": round(mrr, 4),
                    }
                )
                print(
                    f"step {step} epoch {epoch}: loss {float(loss.detach()):.3f} holdout MRR {mrr:.4f}",
                    flush=True,
                )
                if mrr > best + 1e-4:
                    best, stale = mrr, 0
                    best_table = table.detach().clone()
                else:
                    stale += 1
                if stale >= args.patience:
                    stop = "early stop"
                    break
            if time.perf_counter() > deadline:
                stop = "time budget"
                break
        if stop:
            break
    seconds = time.perf_counter() - t_start
    model = StaticModel(
        vectors=best_table.numpy().astype(np.float32),
        tokenizer=base.tokenizer,
        config=base.config,
        normalize=True,
        base_model_name=base.base_model_name,
        max_length=base.max_length,
    )
    model.save_pretrained(args.out)
    info = {
        "command": " ".join(["python", "bench/static/train.py", *sys.argv[1:]]),
        "base": str(args.base),
        "train_triples": len(train),
        "holdout_triples": len(held),
        "holdout_repositories": sorted({r["repo"] for r in held}),
        "distinct_texts": len(tokens.ids),
        "tokens": sum(len(v) for v in tokens.ids.values()),
        "steps": step,
        "stopped": stop or "epochs done",
        "best_holdout_mrr": round(best, 4),
        "start_holdout_mrr": history[0]["holdout_mrr"],
        "tokenize_seconds": round(t_tok, 1),
        "train_seconds": round(seconds, 1),
        "settings": {
            k: getattr(args, k)
            for k in (
                "batch",
                "lr",
                "temperature",
                "negatives",
                "epochs",
                "minutes",
                "eval_every",
                "patience",
                "seed",
            )
        },
        "history": history,
    }
    (Path(args.out) / "nav_train.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in info.items() if k != "history"}))


if __name__ == "__main__":
    main()
