"""How far can re-ranking take issue localization's function recall? (diagnostic, issue 9)

For each instance of a split (trees at their base commits, as ``loc_bench.py``): nav's code view
(lexical legs, k = 100) as a list of functions, and where the gold functions are in it. If the
gold functions are not among the first 100 candidates, no re-ranking of them reaches the goal
(function Recall@10 ≥ 0.55).

    PYTHONPATH=$PWD python bench/archive/loc_ceiling.py --split dev
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # bench/ (this one-off is kept in bench/archive/)
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from loc_bench import LEXICAL, Defs, at_base_commits, function_list  # noqa: E402

from navigator.search import SemanticSearch  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=("dev", "check"), default="dev")
    args = ap.parse_args()
    recall: dict[int, list[float]] = {10: [], 50: [], 100: []}
    module, top1, top5, cap = [], [], [], []
    for store, inst in at_base_commits(args.split):
        gold = set(inst["gold_functions"])
        if not gold:
            for k in recall:
                recall[k].append(0.0)
            continue
        code = SemanticSearch(store).search(inst["query"], k=100, legs=LEXICAL, view="code")
        spans = [(h.path, h.start_line, h.end_line) for h in code.items]
        funcs = function_list(spans, Defs(store.conn), exact=True)
        files = list(dict.fromkeys(p for p, _, _ in spans))
        for k in recall:
            recall[k].append(len(gold & set(funcs[:k])) / len(gold))
        module.append(sum(g.endswith("::<module>") for g in gold) / len(gold))
        top1.append(sum(g.split("::")[0] in files[:1] for g in gold) / len(gold))
        top5.append(sum(g.split("::")[0] in files[:5] for g in gold) / len(gold))
        cap.append(min(1.0, 10 / len(gold)))
    mean = statistics.fmean
    print(f"{args.split}: {len(recall[10])} instances")
    print(f"code view function recall @10 / @50 / @100: {mean(recall[10]):.3f} / {mean(recall[50]):.3f} / {mean(recall[100]):.3f}")
    print(f"share of gold functions that are <module>: {mean(module):.3f}")
    print(f"share of gold functions in the code view's first file / first 5 files: {mean(top1):.3f} / {mean(top5):.3f}")
    print(f"Recall@10 of a perfect ranking (more than 10 gold functions cap it): {mean(cap):.3f}")


if __name__ == "__main__":
    main()
