"""Can nav train a better embedder from what installs here? Two attempts, measured on semble's
benchmark (the vector leg alone: files ranked by their best chunk, NDCG@10), development set
only for choices (bench/README.md, "Training the embedder from installable parts").

1. ``adapter``: a query-side linear map ``q -> normalize(W q)`` (W starts at the identity,
   penalised by ``lam * |W - I|^2``), trained on the DEVELOPMENT queries' labelled files
   against the stored int8 vectors of their repositories; chosen by 3-fold leave-repositories-
   out cross-validation on DEVELOPMENT.
2. ``pairs`` / ``train`` / ``eval``: LoRA (rank 16 on every linear layer of the six encoder
   layers, 0.66M parameters) on (doc sentence, code as nav embeds it) pairs from code no check
   set holds: Python in this venv's site-packages (minus the issue-localization check
   repositories' packages) and semble's 21 DEVELOPMENT repositories (doc comments before a
   definition, every language they have). In-batch negatives from the same package (hard).
   ``eval`` merges a checkpoint into the default model, runs it on ONNX int8 as nav does, and
   pairs it with the stored vectors of the default model per query.

Needs the all-63 indexes with int8 vectors (``semble_bench.py --index-dir``).

    OMP_NUM_THREADS=1 python bench/archive/embedder_training.py vectors            # stored vectors + query vectors
    OMP_NUM_THREADS=1 python bench/archive/embedder_training.py adapter
    python bench/archive/embedder_training.py pairs
    OMP_NUM_THREADS=2 python bench/archive/embedder_training.py train --steps 500
    OMP_NUM_THREADS=2 python bench/archive/embedder_training.py eval --checkpoint <work>/lora_500.pt --set dev
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import random
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parents[1]  # bench/ (this one-off is kept in bench/archive/)
sys.path.insert(0, str(HERE.parent))

from bench.semble_bench import BENCH, CORPORA, DEVELOPMENT, label_prefix  # noqa: E402
from semantic.embed import (  # noqa: E402
    OnnxInt8Embedder,
    default_model_path,
    embedding_text,
    load_embedder,
    set_thread_limit,
)
from semantic.vectors import VectorIndex  # noqa: E402

REPOS = {r["name"]: r for r in json.loads((BENCH / "repos.json").read_text())}
SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
LOC_CHECK_PACKAGES = {"attr", "attrs", "IPython", "beets", "beetsplug", "patroni", "datamodel_code_generator"}
"""The packages of the issue-localization CHECK repositories: never trained on."""


def vec_dir(index_dir: Path) -> Path:
    return next(p for p in index_dir.iterdir() if p.is_dir() and p.name.endswith("ort-int8"))


def targets(query: dict[str, Any]) -> set[str]:
    return {t if isinstance(t, str) else t["path"] for t in query["relevant"] + query["secondary"]}


# -- stored vectors -----------------------------------------------------------------------------


def cmd_vectors(args: argparse.Namespace) -> None:
    """Per repository: the stored chunk vectors, their files (as labelled) and the queries' vectors."""
    vd = vec_dir(args.index_dir)
    emb = load_embedder()
    args.work.mkdir(parents=True, exist_ok=True)
    for name in sorted(REPOS):
        vi = VectorIndex.load(next((vd / f"{name}.vectors").glob("*.npz")))
        if vi is None:
            raise SystemExit(f"{name}: no stored vectors under {vd}")
        ids, vecs = vi.reconstruct_all()
        db = sqlite3.connect(vd / f"{name}.db")
        path_of = dict(db.execute("SELECT c.id, f.path FROM chunks c JOIN files f ON f.id = c.file_id"))
        prefix = label_prefix(REPOS[name], CORPORA)
        queries = json.loads((BENCH / "annotations" / f"{name}.json").read_text())
        qv = np.stack([emb.embed_query(q["query"]) for q in queries]).astype(np.float32)
        np.savez(args.work / f"{name}.npz", ids=ids, vecs=vecs.astype(np.float32),
                 paths=np.array([prefix + path_of[int(i)] for i in ids]), qv=qv)  # fmt: skip
        print(name, len(ids), len(queries), flush=True)


def load_repo(work: Path, name: str) -> dict[str, Any]:
    z = np.load(work / f"{name}.npz")
    files, inverse = np.unique(z["paths"], return_inverse=True)
    queries = json.loads((BENCH / "annotations" / f"{name}.json").read_text())
    return {"ids": z["ids"], "vecs": z["vecs"], "paths": z["paths"], "files": files, "inverse": inverse,
            "qv": z["qv"], "targets": [targets(q) for q in queries]}  # fmt: skip


def ndcg(repo: dict[str, Any], queries: np.ndarray, vecs: np.ndarray | None = None) -> list[float]:
    """The vector leg alone: files by their best chunk, NDCG@10 with binary gains."""
    sims = queries @ (repo["vecs"] if vecs is None else vecs).T
    out = []
    for i, tg in enumerate(repo["targets"]):
        best = np.full(len(repo["files"]), -9.0, dtype=np.float32)
        np.maximum.at(best, repo["inverse"], sims[i])
        order = np.argsort(-best)[:10]
        dcg = sum(1 / math.log2(r + 2) for r, j in enumerate(order) if repo["files"][j] in tg)
        idcg = sum(1 / math.log2(r + 2) for r in range(min(10, len(tg))))
        out.append(dcg / idcg if idcg else 0.0)
    return out


def paired(diffs: list[float], n: int = 2000) -> str:
    d = np.asarray(diffs)
    means = [np.random.default_rng(s).choice(d, len(d)).mean() for s in range(n)]
    return f"{d.mean():+.4f} [{np.percentile(means, 2.5):+.4f}, {np.percentile(means, 97.5):+.4f}]"


# -- 1. a query-side linear adapter ---------------------------------------------------------------


def train_adapter(data: dict[str, dict[str, Any]], names: list[str], lam: float, tau: float = 0.05, epochs: int = 30) -> np.ndarray:
    import torch

    torch.manual_seed(0)
    dim = next(iter(data.values()))["vecs"].shape[1]
    eye = torch.eye(dim)
    w = torch.nn.Parameter(eye.clone())
    opt = torch.optim.Adam([w], lr=1e-3)
    batches = []
    for n in names:
        r = data[n]
        pos = [torch.from_numpy(np.isin(r["paths"], list(t))) for t in r["targets"]]
        batches.append((torch.from_numpy(r["vecs"]), torch.from_numpy(r["qv"]), pos))
    for epoch in range(epochs):
        random.Random(epoch).shuffle(batches)
        for chunks, queries, pos in batches:
            x = torch.nn.functional.normalize(queries @ w.T, dim=1)
            s = x @ chunks.T / tau
            terms = [torch.logsumexp(s[i], 0) - torch.logsumexp(s[i][p], 0) for i, p in enumerate(pos) if p.any()]
            loss = torch.stack(terms).mean() + lam * ((w - eye) ** 2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return w.detach().numpy()


def cmd_adapter(args: argparse.Namespace) -> None:
    data = {n: load_repo(args.work, n) for n in REPOS}
    dev = sorted(n for n in data if n in DEVELOPMENT)
    order = dev[:]
    random.Random(1).shuffle(order)
    folds = [order[i::3] for i in range(3)]
    base = {n: ndcg(data[n], data[n]["qv"]) for n in data}

    def adapted(w: np.ndarray, n: int | str) -> list[float]:
        q = data[n]["qv"] @ w.T
        return ndcg(data[n], q / np.linalg.norm(q, axis=1, keepdims=True))

    for lam in args.lams:
        diffs: list[float] = []
        for fold in folds:
            w = train_adapter(data, [n for n in dev if n not in fold], lam)
            diffs += [a - b for n in fold for a, b in zip(adapted(w, n), base[n], strict=True)]
        print(f"DEVELOPMENT, 3-fold by repository, lam {lam:g}: {paired(diffs)}", flush=True)
    if args.check_lam is not None:  # once, with the λ the cross-validation chose
        w = train_adapter(data, dev, args.check_lam)
        check = [n for n in data if n not in DEVELOPMENT]
        diffs = [a - b for n in check for a, b in zip(adapted(w, n), base[n], strict=True)]
        print(f"CHECK, lam {args.check_lam:g}, trained on all DEVELOPMENT: {paired(diffs)}")


# -- 2. LoRA on doc/code pairs --------------------------------------------------------------------

_COMMENT = re.compile(r"^\s*(///?|//!|\*|/\*\*|#|--)\s?(.*)$")
_TEST_PATH = re.compile(r"(^|/)(tests?|spec|__tests__|testdata|examples?)/|_test\.|\.test\.|\.spec\.")
MAX_CODE = 1500


def first_sentence(doc: str) -> str | None:
    doc = " ".join(doc.strip().split("\n\n")[0].split())
    m = re.match(r"(.+?[.!?])(\s|$)", doc)
    s = m.group(1) if m else doc
    skip = ("todo", "deprecated", "copyright", "see ", "alias", "same as", "this is a ", "test")
    return s if 20 <= len(s) <= 300 and not s.lower().startswith(skip) else None


def python_pairs(path: Path, rel: str, cap: int, rng: random.Random) -> list[tuple[str, str, str]]:
    try:
        src = path.read_text(errors="replace")
        tree = ast.parse(src)
    except (SyntaxError, ValueError, OSError):
        return []
    lines = src.splitlines()
    out: list[tuple[str, str, str]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qn = prefix + ch.name
                doc = ast.get_docstring(ch)
                first = ch.body[0] if ch.body else None
                sentence = first_sentence(doc) if doc and not ch.name.startswith("test") else None
                if sentence and isinstance(first, ast.Expr) and first.end_lineno is not None and ch.end_lineno is not None:
                    code = "\n".join(lines[ch.lineno - 1 : first.lineno - 1] + lines[first.end_lineno : ch.end_lineno])
                    if code.count("\n") >= 2:
                        out.append((sentence, embedding_text(rel, qn, lines[ch.lineno - 1].strip(), code[:MAX_CODE]), "python"))
                walk(ch, qn + ".")

    walk(tree, "")
    rng.shuffle(out)
    return out[:cap]


def cmd_pairs(args: argparse.Namespace) -> None:
    rng = random.Random(0)
    pairs: list[tuple[str, str, str]] = []
    for pkg in sorted(p for p in SITE.iterdir() if p.is_dir()):
        if pkg.name.endswith(("dist-info", "libs")) or pkg.name in LOC_CHECK_PACKAGES or pkg.name.startswith("_"):
            continue
        files = [f for f in sorted(pkg.rglob("*.py")) if "/tests/" not in str(f) and "/test/" not in str(f)]
        rng.shuffle(files)
        got: list[tuple[str, str, str]] = []
        for f in files[:400]:
            got += python_pairs(f, str(f.relative_to(SITE)), 8, rng)
            if len(got) >= 600:
                break
        pairs += got
    print("site-packages:", len(pairs))
    vd = vec_dir(args.index_dir)
    for name in sorted(DEVELOPMENT):
        language = REPOS[name]["language"]
        root = CORPORA / name / (REPOS[name].get("benchmark_root") or "")
        db = sqlite3.connect(vd / f"{name}.db")
        got = []
        if language == "python":  # the docstring is inside the chunk
            for path, sym, sig, text in db.execute(
                "SELECT f.path, c.symbol, c.signature, c.text FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.symbol IS NOT NULL"
            ):
                if not path.endswith(".py") or _TEST_PATH.search(path):
                    continue
                m = re.search(r'^\s*(?:"""|\'\'\')(.*?)(?:"""|\'\'\')', "\n".join(text.splitlines()[1:]), re.S | re.M)
                sentence = first_sentence(m.group(1)) if m else None
                code = text.replace(m.group(0), "", 1) if m else ""
                if sentence and code.count("\n") >= 2:
                    got.append((sentence, embedding_text(path, sym, sig, code[:MAX_CODE]), language))
        else:  # the doc comment just above a definition
            cache: dict[str, list[str]] = {}
            for path, start, end, qn in db.execute(
                "SELECT f.path, s.start_line, s.end_line, s.qualified_name FROM symbols s JOIN files f ON f.id = s.file_id "
                "WHERE s.kind IN ('function','method','class','struct','interface','trait','type','enum')"
            ):
                if _TEST_PATH.search(path) or end - start < 2:
                    continue
                if path not in cache:
                    try:
                        cache[path] = (root / path).read_text(errors="replace").splitlines()
                    except OSError:
                        cache[path] = []
                lines = cache[path]
                i, doc = start - 2, []
                while i >= 0 and i < len(lines) and _COMMENT.match(lines[i]) and not lines[i].strip().startswith("#["):
                    doc.insert(0, _COMMENT.match(lines[i]).group(2))  # type: ignore[union-attr]
                    i -= 1
                doc = [d for d in doc if not d.strip().startswith(("@", "*/", "/"))]
                sentence = first_sentence(" ".join(doc).replace("*/", "")) if doc else None
                code = "\n".join(lines[start - 1 : end])
                if sentence and code.count("\n") >= 2:
                    got.append((sentence, embedding_text(path, qn, lines[start - 1].strip(), code[:MAX_CODE]), language))
        rng.shuffle(got)
        pairs += got[:500]
        print(name, len(got))
    rng.shuffle(pairs)
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "pairs.json").write_text(json.dumps(pairs))
    print("pairs:", len(pairs))


def cmd_train(args: argparse.Namespace) -> None:
    import time

    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(args.threads)
    rank, alpha, bs = 16, 32, 32
    torch.manual_seed(0)
    model = SentenceTransformer(str(default_model_path()), device="cpu")
    for p in model.parameters():
        p.requires_grad_(False)

    class LoRA(torch.nn.Module):
        def __init__(self, base: torch.nn.Linear) -> None:
            super().__init__()
            self.base = base
            self.A = torch.nn.Parameter(torch.randn(rank, base.in_features) / math.sqrt(base.in_features))
            self.B = torch.nn.Parameter(torch.zeros(base.out_features, rank))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.base(x) + (x @ self.A.T @ self.B.T) * (alpha / rank)

    adapters: list[tuple[str, LoRA]] = []
    for li, layer in enumerate(model[0].auto_model.encoder.layer):
        for name, mod in list(layer.named_modules()):
            for cname, child in list(mod.named_children()):
                if isinstance(child, torch.nn.Linear):
                    lora = LoRA(child)
                    setattr(mod, cname, lora)
                    adapters.append((f"encoder.layer.{li}.{name + '.' if name else ''}{cname}", lora))
    params = [p for _, a in adapters for p in (a.A, a.B)]
    opt = torch.optim.AdamW(params, lr=3e-4, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 30) * max(0.0, 1 - s / args.steps))
    pairs = json.loads((args.work / "pairs.json").read_text())
    pairs.sort(key=lambda p: (p[2], p[1].split("::")[0]))  # neighbours share a batch: hard negatives
    batches = [pairs[i : i + bs] for i in range(0, len(pairs) - bs + 1, bs)]
    random.Random(0).shuffle(batches)

    def encode(texts: list[str], max_len: int) -> torch.Tensor:
        model.max_seq_length = max_len
        return torch.nn.functional.normalize(model(model.tokenize(texts))["sentence_embedding"], dim=1)

    def save(path: Path) -> None:
        state: dict[str, Any] = {k: {"A": a.A.detach().clone(), "B": a.B.detach().clone()} for k, a in adapters}
        torch.save(state | {"_scale": alpha / rank}, path)

    t0 = time.time()
    model.train()
    for step in range(args.steps):
        batch = batches[step % len(batches)]
        logits = encode([b[0] for b in batch], 48) @ encode([b[1] for b in batch], 128).T / 0.05
        labels = torch.arange(len(batch))
        loss = (torch.nn.functional.cross_entropy(logits, labels) + torch.nn.functional.cross_entropy(logits.T, labels)) / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 20 == 0:
            print(step, round(float(loss.detach()), 4), f"{time.time() - t0:.0f}s", flush=True)
        if (step + 1) % 100 == 0:
            save(args.work / f"lora_{step + 1}.pt")


def cmd_eval(args: argparse.Namespace) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    merged = args.work / f"merged-{args.checkpoint.stem}"
    if not merged.exists():
        model = SentenceTransformer(str(default_model_path()), device="cpu")
        state = torch.load(args.checkpoint)
        scale = state.pop("_scale")
        with torch.no_grad():
            for key, ab in state.items():
                mod: Any = model[0].auto_model
                for part in key.split("."):
                    mod = mod[int(part)] if part.isdigit() else getattr(mod, part)
                mod.weight += (ab["B"] @ ab["A"]) * scale
        model.save(str(merged))
    set_thread_limit(args.threads)
    emb = OnnxInt8Embedder(Path(str(merged) + "-onnx-int8"), model_path=merged)
    vd = vec_dir(args.index_dir)
    names = sorted(n for n in REPOS if (n in DEVELOPMENT) == (args.set == "dev"))
    diffs: list[float] = []
    for n in names:
        repo = load_repo(args.work, n)
        db = sqlite3.connect(vd / f"{n}.db")
        rows = {int(i): (p, s, sg, t) for i, p, s, sg, t in db.execute(
            "SELECT c.id, f.path, c.symbol, c.signature, c.text FROM chunks c JOIN files f ON f.id = c.file_id")}  # fmt: skip
        vecs = emb.embed_documents([embedding_text(*rows[int(i)]) for i in repo["ids"]])
        queries = json.loads((BENCH / "annotations" / f"{n}.json").read_text())
        qv = np.stack([emb.embed_query(q["query"]) for q in queries])
        base, new = ndcg(repo, repo["qv"]), ndcg(repo, qv, vecs)
        diffs += [b - a for a, b in zip(base, new, strict=True)]
        print(f"{n:<16} {REPOS[n]['language']:<11} default {np.mean(base):.3f}  trained {np.mean(new):.3f}", flush=True)
    print(f"{args.set}: trained − default, vector leg NDCG@10: {paired(diffs)} ({len(diffs)} queries)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("vectors", "adapter", "pairs", "train", "eval"))
    ap.add_argument("--index-dir", type=Path, default=Path("/work/corpora/semble_all63/idx"))
    ap.add_argument("--work", type=Path, default=Path(os.environ.get("NAV_TRAIN_WORK", "/tmp/nav-embedder-training")))
    ap.add_argument("--lams", type=float, nargs="*", default=[1.0, 0.3, 0.1, 0.03])
    ap.add_argument("--check-lam", type=float, default=None)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--checkpoint", type=Path)
    ap.add_argument("--set", choices=("dev", "check"), default="dev")
    args = ap.parse_args()
    {"vectors": cmd_vectors, "adapter": cmd_adapter, "pairs": cmd_pairs, "train": cmd_train, "eval": cmd_eval}[args.command](args)


if __name__ == "__main__":
    main()
