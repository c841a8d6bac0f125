"""Statistics the benchmarks report: nearest-rank percentiles and seeded bootstrap intervals.

The resampling is the scripts' own, kept exactly so reported figures do not move: ``random.Random(seed)``,
``rng.choices(values, k=len(values))`` per round, the statistic of each resample, sorted, and the 2.5%
and 97.5% order statistics.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence

NAN = float("nan")


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-quantile (``q`` in [0, 1]): the value at index
    ``round(q * (n - 1))`` of the sorted values; NaN for no values."""
    if not values:
        return NAN
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def bootstrap_ci(
    values: Sequence[float],
    *,
    statistic: Callable[[list[float]], float] = statistics.fmean,
    rounds: int = 2000,
    seed: int = 0,
    symmetric: bool = True,
    min_items: int = 1,
) -> tuple[float, float]:
    """95% percentile interval of ``statistic`` (default: the mean) over ``rounds`` resamples of
    ``values`` with replacement; (NaN, NaN) for fewer than ``min_items`` values (semble_bench.py shows
    no interval for a single repository: ``min_items=2``).

    For paired figures pass the per-item differences (after − before): the interval of their mean.
    ``symmetric=False`` takes the upper bound one order statistic higher (index ``int(0.975 * rounds)``
    instead of ``int(0.975 * rounds) - 1``), as cold_start.py and bench_editor.py always have: kept so
    their reported intervals stay the same."""
    if len(values) < max(1, min_items) or rounds <= 0:
        return (NAN, NAN)
    rng = random.Random(seed)
    data = list(values)
    stats = sorted(statistic(rng.choices(data, k=len(data))) for _ in range(rounds))
    high = int(0.975 * rounds) - (1 if symmetric else 0)
    return stats[int(0.025 * rounds)], stats[high]


def mean_ci(diffs: Sequence[float], *, rounds: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """(mean, low, high) of paired differences: the mean and its bootstrap 95% interval."""
    if not diffs:
        return (NAN, NAN, NAN)
    return (statistics.fmean(diffs), *bootstrap_ci(diffs, rounds=rounds, seed=seed))
