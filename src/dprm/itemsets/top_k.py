"""The ``k`` itemsets of largest estimated support, without listing millions of frequent ones (dense data).

On dense data the frequent itemsets at a low θ run into the millions (a table of 35
columns whose rows mostly share one value per column has ``2^k`` frequent subsets
of every frequent ``k``-itemset), and ISON lists them all. :func:`run_top_k` reports
the ``k`` itemsets of largest estimated support among those reaching θ instead.

Supports are monotone (an itemset is at most as frequent as its subsets), so the
top ``k`` are the frequent itemsets at the threshold ``θ_k`` of the ``k``-th largest
support: ISON at ``θ_k`` lists them and little else. ``θ_k`` is found by bisection on
the threshold: ISON is run at ``θ`` and, when it finds more than ``cap = 4k``
itemsets (at least 1,000), stopped there (``max_itemsets``) and run again at a
threshold halfway to the lowest threshold known to give too few (at first 1), until
a run finds between ``k`` and ``cap`` itemsets. Every run that gives up stops after
about ``cap`` itemsets, so the work follows ``k``, not the number of frequent
itemsets. The itemsets reported are the ``k`` of largest support of that run (ties
at the ``k``-th support broken by length, then items), all of them when fewer than
``k`` reach θ.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from dprm.itemsets.estimator import DensityEstimator
>>> rng = np.random.default_rng(0)
>>> frame = pd.DataFrame({c: rng.choice(["x", "y"], p=[0.9, 0.1], size=3000) for c in "abcdefgh"})
>>> est = DensityEstimator(n_chains=1, random_state=0).fit(frame)
>>> top = run_top_k(est, 3, min_support=0.01)
>>> [(len(s.items), round(s.support, 1)) for s in top.run.itemsets]   # three single items 'x'
[(1, 0.9), (1, 0.9), (1, 0.9)]
>>> len(run_top_k(est, 500, min_support=0.3).run.itemsets)   # 2^8 - 1 itemsets of 'x' reach 0.3
255
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from dprm.errors import ParameterError, short_repr
from dprm.itemsets.estimator import DensityEstimator
from dprm.itemsets.ison import IsonRun, check_fitted, check_limits, ison_search, itemsets_of_rows, path_index
from dprm.itemsets.parameters import whole_number

__all__ = ["RELATIVE_ERROR", "TopK", "reference_rows", "run_top_k"]

#: Bisection steps at most (the threshold to within 2^-30 of the interval).
MAX_STEPS = 30
#: The standard error of a support at θ read off reference samples of :func:`reference_rows` rows, as a
#: share of the nearer of θ and 1 - θ.
RELATIVE_ERROR = 0.007


def reference_rows(min_support: float, most: int = 100_000) -> int:
    """Rows of each chain's reference sample for ``dprm itemsets --top-k`` at θ: enough that a support at θ
    has a standard error of at most :data:`RELATIVE_ERROR` (0.7 %) of ``min(θ, 1 - θ)``; no more than ``most``.

    A support ``p`` read off ``n`` rows drawn from a chain has standard error
    ``sqrt(p (1 - p) / n)``; at ``p = θ`` it is at most ``r · min(θ, 1 - θ)`` from
    ``n = max((1 - θ) / θ, θ / (1 - θ)) / r²`` rows on (the share of rows holding an itemset
    and the share not holding it both known to within ``r`` of themselves). At θ = 0.3
    that is 47,620 rows instead of the estimate's 100,000 (standard error 0.0021 instead
    of 0.0014 at θ); on θ ≤ 0.1 or θ ≥ 0.9 it is 100,000. ``r`` is the least of the
    sizes measured (``r`` = 0.7 % and 1 %: 47,620 and 23,334 rows at θ = 0.3) whose top-k
    itemsets match those of 100,000 rows within their standard error over 12 seeds on the
    dense benchmark table, mushroom, vote and the IBM-like table (``docs/itemsets.md``);
    the samples take half the time. A function of θ only (public).

    Examples
    --------
    >>> reference_rows(0.3), reference_rows(0.5), reference_rows(0.8), reference_rows(0.05), reference_rows(1.0)
    (47620, 20409, 81633, 100000, 100000)
    """
    theta = float(min_support)
    if theta >= 1.0:
        return int(most)
    odds = max((1.0 - theta) / theta, theta / (1.0 - theta))
    return min(int(most), math.ceil(odds / RELATIVE_ERROR ** 2 - 1e-6))


@dataclass
class TopK:
    """The outcome of :func:`run_top_k`.

    Attributes
    ----------
    run : IsonRun
        The final ISON run, its itemsets cut to the ``k`` of largest support (ordered
        by decreasing support).
    threshold : float
        The threshold of that run (θ when fewer than ``k`` itemsets reach θ).
    runs : int
        ISON runs made (the bisection's probes).
    candidates : int
        Candidates estimated over all runs.
    """

    run: IsonRun
    threshold: float
    runs: int
    candidates: int


def run_top_k(estimator: DensityEstimator, k: int, min_support: float, max_length: int | None = None,
              max_seconds: float | None = None) -> TopK:
    """The ``k`` itemsets of largest estimated support among those reaching ``min_support`` (module notes).

    Parameters
    ----------
    estimator : DensityEstimator
    k : int
        How many itemsets, at least 1.
    min_support : float
        θ in (0, 1].
    max_length, max_seconds
        As for :func:`~dprm.itemsets.ison.run_ison` (``max_seconds`` bounds all runs together).

    Returns
    -------
    TopK
    """
    check_fitted(estimator)
    if not whole_number(1)(k):
        raise ParameterError(f"k must be a whole number >= 1, not {short_repr(k)}")
    k = int(k)
    min_support, max_length, max_seconds, _ = check_limits(min_support, max_length, max_seconds)
    deadline = None if max_seconds is None else time.perf_counter() + max_seconds
    cap = max(4 * k, 1000)
    low, high = float(min_support), 1.0  # low: too many itemsets (once probed); high: too few
    threshold, runs, candidates = low, 0, 0
    paths = path_index(estimator)  # the same for every probe
    memo: dict[bytes, float] = {}  # the supports estimated by the probes so far (the same in every probe)
    while True:
        started = time.perf_counter()
        left = None if deadline is None else max(1e-3, deadline - time.perf_counter())
        miner, per_iteration = ison_search(estimator, threshold, max_length, left, "exact-or-sample", cap, paths, memo)
        runs += 1
        candidates += miner.candidates
        stopped_early = miner.stopped and not miner.too_many
        if not miner.too_many and (miner.n_found >= k or threshold == low):
            break  # between k and cap itemsets, or all of those reaching θ
        if stopped_early or runs > MAX_STEPS:
            break
        if miner.too_many:
            low = threshold
        else:
            high = threshold
        threshold = (low + high) / 2
    rows, supports = miner.found_rows()
    if len(supports) > k:  # only those at or above the k-th largest support are made itemsets
        keep = supports >= np.partition(supports, len(supports) - k)[len(supports) - k]
        rows, supports = rows[keep], supports[keep]
    ranked = sorted(itemsets_of_rows(estimator, rows, supports),
                    key=lambda s: (-s.support, len(s.items), list(s.items.items())))[:k]
    run = IsonRun(ranked, per_iteration, miner.candidates, miner.pruned, stopped_early,
                  time.perf_counter() - started, miner.too_many)
    return TopK(run, threshold, runs, candidates)
