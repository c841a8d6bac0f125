"""bench/harness: the ranking metrics and resampling statistics every benchmark reports, on cases
computed by hand (pure Python, no index, no model)."""

from __future__ import annotations

import math
import random
import statistics
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness.metrics import (  # noqa: E402
    acc_at_k,
    distinct,
    first_hit_rank,
    graded_ndcg_at_k,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
    semble_ndcg,
)
from bench.harness.stats import bootstrap_ci, mean_ci, percentile  # noqa: E402

D2, D3, D4 = 1 / math.log2(3), 1 / math.log2(4), 1 / math.log2(5)  # discounts of ranks 2, 3, 4


# -- NDCG ------------------------------------------------------------------------------------------


def test_ndcg_relevant_first_is_one_and_lower_ranks_are_discounted() -> None:
    assert ndcg_at_k(["a", "b", "c"], {"a"}) == 1.0
    assert ndcg_at_k(["b", "a", "c"], {"a"}) == pytest.approx(D2)  # ideal DCG 1
    assert ndcg_at_k(["a", "x", "c"], {"a", "c"}) == pytest.approx((1 + D3) / (1 + D2))
    assert ndcg_at_k(["x", "y", "z"], {"a"}) == 0.0


def test_ndcg_ideal_counts_every_relevant_item_even_ones_never_returned() -> None:
    # two relevant, one returned at rank 1: the ideal list would have had both at ranks 1 and 2
    assert ndcg_at_k(["a"], {"a", "b"}) == pytest.approx(1 / (1 + D2))
    # k larger than the list: nothing past its end counts, the ideal is still min(n_relevant, k)
    assert ndcg_at_k(["x", "a"], {"a", "b"}, k=50) == pytest.approx(D2 / (1 + D2))


def test_ndcg_ideal_is_capped_at_k() -> None:
    relevant = {f"r{i}" for i in range(12)}
    ranked = sorted(relevant)[:10]
    assert ndcg_at_k(ranked, relevant, k=10) == 1.0
    assert ndcg_at_k(ranked[:3], relevant, k=3) == 1.0
    assert ndcg_at_k(["x", *ranked], relevant, k=3) == pytest.approx((D2 + D3) / (1 + D2 + D3))


def test_ndcg_empty_relevant_set_or_k_zero_is_zero() -> None:
    assert ndcg_at_k(["a", "b"], set()) == 0.0
    assert ndcg_at_k([], {"a"}) == 0.0
    assert ndcg_at_k(["a"], {"a"}, k=0) == 0.0


def test_ndcg_counts_an_item_once_so_it_never_exceeds_one() -> None:
    assert ndcg_at_k(["a", "a", "a"], {"a"}) == 1.0
    assert ndcg_at_k(["a", "a", "b"], {"a", "b"}) == pytest.approx((1 + D3) / (1 + D2))


def test_ndcg_with_a_predicate_needs_the_number_of_relevant_items() -> None:
    assert ndcg_at_k(["x", "a"], lambda p: p == "a", n_relevant=1) == pytest.approx(D2)
    with pytest.raises(ValueError, match="n_relevant"):
        ndcg_at_k(["a"], lambda p: True)


def test_graded_ndcg_hand_computed_and_ties_in_gain_do_not_matter() -> None:
    gains = {"a": 3.0, "b": 1.0}
    assert graded_ndcg_at_k(["a", "b"], gains) == 1.0
    assert graded_ndcg_at_k(["b", "a"], gains) == pytest.approx((1 + 3 * D2) / (3 + D2))
    tied = {"a": 2.0, "b": 2.0, "c": 1.0}
    assert graded_ndcg_at_k(["a", "b", "c"], tied) == graded_ndcg_at_k(["b", "a", "c"], tied) == 1.0
    assert graded_ndcg_at_k(["c", "a", "b"], tied) < 1.0
    assert graded_ndcg_at_k(["a"], {}) == 0.0
    assert graded_ndcg_at_k(["a"], {"a": 0.0}) == 0.0


def test_graded_ndcg_with_unit_gains_is_binary_ndcg() -> None:
    rng = random.Random(3)
    items = [f"f{i}" for i in range(30)]
    for _ in range(200):
        ranked = rng.sample(items, rng.randint(0, 20))
        relevant = set(rng.sample(items, rng.randint(1, 8)))
        k = rng.choice([1, 5, 10, 50])
        binary = ndcg_at_k(ranked, relevant, k=k)
        assert graded_ndcg_at_k(ranked, dict.fromkeys(relevant, 1.0), k=k) == pytest.approx(binary)
        assert 0.0 <= binary <= 1.0


def test_semble_ndcg_whole_files_and_overlapping_spans() -> None:
    chunks = [("x.py", 1, 5), ("y.py", 10, 20), ("z.py", 1, 3)]
    files = distinct(chunks)
    assert files == ["x.py", "y.py", "z.py"]
    # a span target is found when a returned chunk of that file overlaps it (ends inclusive)
    assert semble_ndcg(files, chunks, [{"path": "y.py", "start_line": 20, "end_line": 30}]) == pytest.approx(
        D2
    )
    assert semble_ndcg(files, chunks, [{"path": "y.py", "start_line": 21, "end_line": 30}]) == 0.0
    # a span with no lines given covers the whole file; a path target is the whole file
    assert semble_ndcg(files, chunks, [{"path": "z.py"}, "x.py"]) == pytest.approx((1 + D3) / (1 + D2))
    # two spans in one file are one relevant file
    two = [
        {"path": "y.py", "start_line": 1, "end_line": 2},
        {"path": "y.py", "start_line": 12, "end_line": 12},
    ]
    assert semble_ndcg(files, chunks, two) == pytest.approx(D2)
    assert semble_ndcg(files, chunks, []) == 0.0


# -- Acc@k, Recall@k, ranks ----------------------------------------------------------------------


def test_acc_at_k_edges() -> None:
    ranked = ["a", "b", "c"]
    assert acc_at_k(ranked, {"c"}, 3) == 1.0
    assert acc_at_k(ranked, {"c"}, 2) == 0.0
    assert acc_at_k(ranked, {"c", "zz"}, 100) == 1.0  # k past the end
    assert acc_at_k(ranked, set(), 10) == 0.0
    assert acc_at_k([], {"a"}, 10) == 0.0


def test_recall_at_k_edges() -> None:
    gold = {"a", "b", "c", "d"}
    ranked = ["a", "x", "b"]
    assert recall_at_k(ranked, gold, 1) == 0.25
    assert recall_at_k(ranked, gold, 2) == 0.25
    assert recall_at_k(ranked, gold, 3) == 0.5
    assert recall_at_k(ranked, gold, 100) == 0.5
    assert recall_at_k(["a", "a"], {"a", "b"}, 2) == 0.5  # a repeated hit counts once
    assert recall_at_k(ranked, set(), 10) == 0.0


def test_first_hit_rank_and_reciprocal_rank() -> None:
    assert first_hit_rank(["x", "y", "a"], {"a", "b"}) == 3
    assert first_hit_rank(["x"], {"a"}) is None
    assert reciprocal_rank(["x", "a"], {"a"}) == 0.5
    assert reciprocal_rank([], {"a"}) == 0.0


# -- percentiles, bootstrap ------------------------------------------------------------------------


def test_percentile_is_nearest_rank() -> None:
    xs = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert percentile(xs, 0.0) == 1.0
    assert percentile(xs, 0.5) == 3.0
    assert percentile(xs, 1.0) == 5.0
    ten = [float(i) for i in range(1, 11)]
    assert percentile(ten, 0.9) == 9.0  # index round(0.9 * 9) = 8
    assert percentile(ten, 0.95) == 10.0  # index round(8.55) = 9
    assert percentile([7.0], 0.9) == 7.0
    assert math.isnan(percentile([], 0.5))


def test_bootstrap_interval_contains_the_mean_and_is_deterministic_for_a_seed() -> None:
    rng = random.Random(11)
    diffs = [rng.gauss(0.05, 0.2) for _ in range(80)]
    lo, hi = bootstrap_ci(diffs)
    assert lo < statistics.fmean(diffs) < hi
    assert bootstrap_ci(diffs) == (lo, hi)
    assert bootstrap_ci(diffs, seed=1) != (lo, hi)
    assert mean_ci(diffs) == (statistics.fmean(diffs), lo, hi)


def test_bootstrap_interval_narrows_with_more_items() -> None:
    rng = random.Random(5)
    population = [rng.gauss(0.0, 1.0) for _ in range(4000)]
    widths = []
    for n in (20, 200, 2000):
        lo, hi = bootstrap_ci(population[:n], rounds=1000)
        widths.append(hi - lo)
    assert widths[0] > widths[1] > widths[2]
    # the width of a mean's interval shrinks about as 1/sqrt(n): ten times the items, ~1/3.2 the width
    assert 2.0 < widths[0] / widths[1] < 5.0


def test_bootstrap_of_constant_values_and_of_nothing() -> None:
    assert bootstrap_ci([0.25] * 9) == (0.25, 0.25)
    assert bootstrap_ci([1.5]) == (1.5, 1.5)
    assert all(math.isnan(x) for x in bootstrap_ci([1.5], min_items=2))
    assert bootstrap_ci([1.5, 1.5], min_items=2) == (1.5, 1.5)
    lo, hi = bootstrap_ci([])
    assert math.isnan(lo) and math.isnan(hi)
    assert all(math.isnan(x) for x in mean_ci([]))


def test_bootstrap_takes_the_2_5_and_97_5_order_statistics() -> None:
    # 40 rounds: the interval is the sorted resampled means at index 1 and 38 (39 when not symmetric)
    draw = random.Random(2)
    values = [draw.gauss(0.0, 1.0) for _ in range(25)]  # resampled means all distinct
    rng = random.Random(0)
    means = sorted(statistics.fmean(rng.choices(values, k=25)) for _ in range(40))
    assert len(set(means)) == 40
    assert bootstrap_ci(values, rounds=40) == (means[1], means[38])
    assert bootstrap_ci(values, rounds=40, symmetric=False) == (means[1], means[39])


def test_bootstrap_of_the_median() -> None:
    values = [1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 4.0, 5.0, 100.0]
    lo, hi = bootstrap_ci(values, statistic=statistics.median, rounds=500, seed=7)
    assert 1.0 <= lo <= 3.0 <= hi <= 5.0  # the median resists the outlier; the mean does not
    assert bootstrap_ci(values, rounds=500, seed=7)[1] > 5.0
