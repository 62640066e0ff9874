"""Data-value cut points and order statistics merged exactly from parts of the rows.

The non-private miners put numeric thresholds at data values
(:class:`~dprm.data.LiteralIndex` ``mode="data"``): at the distinct values of an
attribute when it has at most ``max_splits + 1`` of them, else at ``max_splits``
quantile cut points (``numpy.quantile(values, j / (max_splits + 1),
method="inverted_cdf")``, ``j = 1..max_splits``, then the distinct ones below the
largest value). When the rows are split into parts (the shards of a sharded
engine), this module computes **the very same cut points** from what each part can
say about its own values, without gathering the values:

1. Each part sends a :class:`ValueSummary` per numeric attribute
   (:func:`summarise_values`): its number of present values, smallest and largest
   value, and its distinct values if it has at most ``limit = max_splits + 1`` of
   them (else only that it has more). :func:`merge_summaries` adds them up: the
   union of the parts' distinct values is the attribute's set of distinct values
   when every part had few and the union has at most ``limit``; otherwise the
   attribute has more than ``limit`` distinct values (a part alone has more, or the
   union has). Memory: ``O(limit)`` per attribute and part, whatever the rows.
2. ``inverted_cdf`` quantiles are **order statistics**: the value at 0-based rank
   ``r`` of the sorted present values, with ``r`` a function of ``n`` and the
   probability only (:func:`inverted_cdf_ranks` repeats numpy's float arithmetic, so
   the ranks are numpy's). The value of rank ``r`` is the smallest ``v`` with
   ``#{x ≤ v} ≥ r + 1``, and ``#{x ≤ v}`` is a sum over parts of counts of rows.
   :func:`select_order_statistics` finds that ``v`` by a search over the ordered
   float64 numbers between the smallest and the largest value
   (:func:`float_keys`: every float64 is an integer key, order kept), asking the
   parts for counts ``#{x ≤ candidate}`` of ``K`` candidates per rank and round:
   each round divides the range of keys by ``K``, so 2**64 keys take at most
   ``ceil(64 / log2(K))`` rounds (13 with ``K = 32``). The answer is a data value
   (the smallest key whose count reaches ``r + 1`` is a present value), exact.
   (Zero is returned as ``+0.0``: the search cannot tell a ``-0.0`` in the data from
   ``+0.0``; the two thresholds make the same literals.)

The same order statistics give numpy's ``linear`` percentiles
(:func:`linear_percentiles`, for the Freedman–Diaconis bins of a sharded run): the
two neighbouring order statistics and numpy's interpolation formula.

Examples
--------
>>> values = np.array([3.0, 1.0, np.nan, 2.0, 2.0, 5.0, 8.0, 13.0])
>>> parts = [values[:4], values[4:]]
>>> summary = merge_summaries([summarise_values(p, limit=3) for p in parts])
>>> summary.count, summary.low, summary.high, summary.distinct is None
(7, 1.0, 13.0, True)
>>> def count_at_most(candidates):   # what the parts answer, summed
...     return sum(np.searchsorted(np.sort(p[~np.isnan(p)]), candidates, side="right") for p in parts)
>>> data_cut_points(summary, 2, lambda ranks: select_order_statistics(count_at_most, summary.low,
...                                                                  summary.high, ranks)).tolist()
[2.0, 5.0]
>>> np.unique(np.quantile(values[~np.isnan(values)], [1 / 3, 2 / 3], method="inverted_cdf")).tolist()
[2.0, 5.0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ValueSummary", "summarise_values", "merge_summaries", "inverted_cdf_ranks", "data_cut_points",
           "cut_point_ranks", "float_keys", "key_values", "select_order_statistics", "linear_percentiles",
           "SEARCH_WIDTH"]

#: Candidates per rank and round of :func:`select_order_statistics` (13 rounds for 2**64 keys).
SEARCH_WIDTH = 32


@dataclass(frozen=True)
class ValueSummary:
    """What a part of the rows says about one numeric attribute's values.

    Attributes
    ----------
    count : int
        Present (non-missing) values.
    low, high : float
        Smallest and largest present value (NaN when ``count`` is 0).
    distinct : ndarray or None
        The sorted distinct present values when there are at most ``limit`` of them;
        None when there are more.
    limit : int
        The most distinct values a summary lists.
    """

    count: int
    low: float
    high: float
    distinct: np.ndarray | None
    limit: int


def summarise_values(values: np.ndarray, limit: int) -> ValueSummary:
    """The :class:`ValueSummary` of ``values`` (NaN: missing), listing at most ``limit`` distinct values.

    Examples
    --------
    >>> summarise_values(np.array([2.0, np.nan, 1.0, 2.0]), limit=2)
    ValueSummary(count=3, low=1.0, high=2.0, distinct=array([1., 2.]), limit=2)
    >>> summarise_values(np.array([3.0, 1.0, 2.0]), limit=2).distinct is None
    True
    """
    present = values[~np.isnan(values)]
    if present.size == 0:
        return ValueSummary(0, float("nan"), float("nan"), np.empty(0), limit)
    distinct = np.unique(present)
    return ValueSummary(int(present.size), float(distinct[0]), float(distinct[-1]),
                        distinct if distinct.size <= limit else None, limit)


def merge_summaries(parts: Sequence[ValueSummary]) -> ValueSummary:
    """The summary of all the parts' values together (see the module docstring).

    Examples
    --------
    >>> a = summarise_values(np.array([1.0, 2.0]), limit=3)
    >>> b = summarise_values(np.array([np.nan]), limit=3)   # a part without values of the attribute
    >>> c = summarise_values(np.array([2.0, 4.0]), limit=3)
    >>> merge_summaries([a, b, c]).distinct.tolist(), merge_summaries([a, b, c]).count
    ([1.0, 2.0, 4.0], 4)
    """
    limit = parts[0].limit
    present = [p for p in parts if p.count > 0]
    if not present:
        return ValueSummary(0, float("nan"), float("nan"), np.empty(0), limit)
    count = sum(p.count for p in present)
    low = min(p.low for p in present)
    high = max(p.high for p in present)
    distinct = None
    if all(p.distinct is not None for p in present):
        union = np.unique(np.concatenate([p.distinct for p in present]))
        distinct = union if union.size <= limit else None
    return ValueSummary(count, low, high, distinct, limit)


def inverted_cdf_ranks(n: int, probabilities: np.ndarray) -> np.ndarray:
    """The 0-based ranks ``numpy.quantile(..., method="inverted_cdf")`` takes among ``n`` sorted values.

    The same float arithmetic as numpy 2: index ``n·p − 1``; its floor if the
    fractional part is 0, else the next integer; at least 0.

    Examples
    --------
    >>> inverted_cdf_ranks(10, np.array([0.1, 0.25, 0.5, 1.0])).tolist()
    [0, 2, 4, 9]
    """
    index = (n * np.asarray(probabilities, dtype=np.float64)) - 1
    previous = np.floor(index)
    ranks = np.where(index - previous == 0, previous, previous + 1).astype(np.int64)
    ranks[ranks < 0] = 0
    return ranks


def cut_point_ranks(n: int, max_splits: int) -> np.ndarray:
    """Ranks of the ``max_splits`` quantile cut points of :class:`~dprm.data.LiteralIndex` among ``n`` values."""
    probabilities = np.arange(1, max_splits + 1) / (max_splits + 1)
    return inverted_cdf_ranks(n, probabilities)


def data_cut_points(summary: ValueSummary, max_splits: int,
                    order_statistics: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The thresholds of :class:`~dprm.data.LiteralIndex` ``mode="data"`` from a merged summary.

    ``summary`` must list distinct values up to ``max_splits + 1``;
    ``order_statistics(ranks)`` returns the values at those 0-based ranks of all the
    sorted present values (called only when there are more distinct values).
    """
    if summary.limit != max_splits + 1:
        raise ValueError(f"a summary for max_splits {max_splits} lists up to {max_splits + 1} values, "
                         f"not {summary.limit}")
    if summary.distinct is not None:
        return summary.distinct[:-1]
    cuts = np.unique(np.asarray(order_statistics(cut_point_ranks(summary.count, max_splits)), dtype=np.float64))
    return cuts[cuts < summary.high]


def float_keys(values: np.ndarray) -> np.ndarray:
    """Integer keys of float64 values, in the same order (``-0.0`` just below ``+0.0``).

    Examples
    --------
    >>> float_keys(np.array([-np.inf, -1.0, -0.0, 0.0, 5e-324, 1.0, np.inf])).argsort().tolist()
    [0, 1, 2, 3, 4, 5, 6]
    """
    bits = np.asarray(values, dtype=np.float64).view(np.int64)
    return np.where(bits < 0, -(bits & np.int64(0x7FFFFFFFFFFFFFFF)) - 1, bits)


def key_values(keys: np.ndarray) -> np.ndarray:
    """The float64 values of :func:`float_keys` keys.

    Examples
    --------
    >>> key_values(float_keys(np.array([-2.5, -0.0, 3.0]))).tolist()
    [-2.5, -0.0, 3.0]
    """
    keys = np.asarray(keys, dtype=np.int64)
    bits = np.where(keys < 0, (-(keys + 1)) | np.int64(-0x8000000000000000), keys)
    return bits.astype(np.int64).view(np.float64)


def select_order_statistics(count_at_most: Callable[[np.ndarray], np.ndarray], low: float, high: float,
                            ranks: np.ndarray, *, width: int = SEARCH_WIDTH) -> np.ndarray:
    """The values of 0-based ``ranks`` among present values in ``[low, high]``, from counts only.

    ``count_at_most(candidates)`` returns ``#{x ≤ c}`` for every candidate (a flat
    float64 array), summed over all parts. Each round asks for ``width`` candidates
    per unresolved rank (one call), and narrows each rank's range of
    :func:`float_keys` by ``width``.

    Examples
    --------
    >>> values = np.array([4.0, -1.5, 4.0, 7.25, 0.0])
    >>> select_order_statistics(lambda c: np.searchsorted(np.sort(values), c, side="right"),
    ...                         -1.5, 7.25, np.array([0, 1, 2, 3, 4])).tolist()
    [-1.5, 0.0, 4.0, 4.0, 7.25]
    """
    return select_many(lambda candidates: [count_at_most(candidates[0])], [(low, high, ranks)], width=width)[0]


def select_many(count_at_most: Callable[[list[np.ndarray]], list[np.ndarray]],
                requests: Sequence[tuple[float, float, np.ndarray]], *, width: int = SEARCH_WIDTH) -> list[np.ndarray]:
    """:func:`select_order_statistics` of several attributes at once (one call per round for all).

    ``requests`` holds ``(low, high, ranks)`` per attribute; ``count_at_most`` takes
    one candidate array per attribute and returns one count array per attribute.
    """
    lo = [np.full(np.size(r), float_keys(np.array([low]))[0] - 1, dtype=np.int64) for low, _, r in requests]
    hi = [np.full(np.size(r), float_keys(np.array([high]))[0], dtype=np.int64) for _, high, r in requests]
    targets = [np.asarray(r, dtype=np.int64) + 1 for _, _, r in requests]
    multiples = np.arange(1, width, dtype=np.uint64)
    # invariant per rank: count(≤ value(lo)) < r + 1 ≤ count(≤ value(hi)); lo starts one key below low.
    # Key differences can exceed int64 (e.g. -1e6 to 1e6): offsets from lo are unsigned, exact below 2**64.
    while True:
        gaps = [h.view(np.uint64) - l.view(np.uint64) for l, h in zip(lo, hi)]
        if not any((g > 1).any() for g in gaps):
            break
        candidates, grids = [], []
        for l, gap in zip(lo, gaps):
            step = np.maximum(gap // np.uint64(width), np.uint64(1))
            offsets = np.minimum(step[:, None] * multiples[None, :], gap[:, None])
            grid = (l.view(np.uint64)[:, None] + offsets).view(np.int64)  # wraps back into int64 exactly
            candidates.append(key_values(grid.ravel()))
            grids.append(grid)
        counts = count_at_most(candidates)
        for a, (grid, count) in enumerate(zip(grids, counts)):
            count = np.asarray(count).reshape(grid.shape)
            reached = count >= targets[a][:, None]
            # the first candidate reaching the rank is the new upper end; the one before it the lower end
            first = np.where(reached.any(axis=1), reached.argmax(axis=1), grid.shape[1])
            rows = np.arange(grid.shape[0])
            hi[a] = np.where(first < grid.shape[1], grid[rows, np.minimum(first, grid.shape[1] - 1)], hi[a])
            lo[a] = np.where(first > 0, grid[rows, np.maximum(first - 1, 0)], lo[a])
    out = []
    for h in hi:
        values = key_values(h)
        out.append(np.where(values == 0, 0.0, values))  # -0.0 and +0.0 count alike: +0.0
    return out


def linear_percentiles(n: int, q: np.ndarray,
                       order_statistics: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``numpy.percentile(values, q)`` (method ``linear``) of ``n`` present values, from order statistics.

    ``order_statistics(ranks)`` gives the values at 0-based ranks; numpy's virtual
    index ``(n − 1)·q/100``, its bounds and its interpolation formula are repeated
    exactly, so the result is numpy's to the last bit.

    Examples
    --------
    >>> values = np.array([1.0, 7.0, 2.5, 3.0, 10.0, 2.5])
    >>> linear_percentiles(values.size, np.array([75, 25]), lambda r: np.sort(values)[r]).tolist()
    [6.0, 2.5]
    >>> np.percentile(values, [75, 25]).tolist()
    [6.0, 2.5]
    """
    quantiles = np.true_divide(np.asarray(q), 100)
    virtual = (n - 1) * quantiles
    previous = np.floor(virtual)
    following = previous + 1
    above = virtual >= n - 1
    previous[above] = n - 1
    following[above] = n - 1
    below = virtual < 0
    previous[below] = 0
    following[below] = 0
    gamma = np.asanyarray(virtual - np.where(above, -1, previous), dtype=virtual.dtype)
    ranks = np.concatenate([previous, following]).astype(np.int64)
    values = np.asarray(order_statistics(ranks), dtype=np.float64)
    a, b = values[: previous.size], values[previous.size:]
    difference = b - a
    result = np.add(a, difference * gamma)
    np.subtract(b, difference * (1 - gamma), out=result, where=gamma >= 0.5)
    return result
