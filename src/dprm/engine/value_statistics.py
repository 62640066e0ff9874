"""Exact statistics of numeric values over all shards: data cut points and order statistics.

The non-private miners (ReReMi, CARTwheels) put numeric thresholds at data values
(:class:`~dprm.data.LiteralIndex` ``mode="data"``) and CARTwheels bins a numeric
target by the Freedman–Diaconis rule (an interquartile range). On a sharded engine
no process holds all the values, so the driver merges them from the shards
(:mod:`dprm.data.cut_points`): each shard's :class:`ValueAnswers` worker answers

* ``summaries(limit)``: per numeric attribute its number of present values, smallest
  and largest value, and its distinct values if it has at most ``limit`` (one round
  trip);
* ``count_at_most(requests)``: per attribute the number of its present values at
  most each candidate (about 13 round trips for every attribute at once; each shard
  sorts the attributes asked about once and drops the sorted copies on ``release``).

The driver (:class:`ValueStatistics`) turns the sums into exactly the cut points
and percentiles computed over all rows in one process. **What crosses the network**:
counts, extreme values and up to ``limit`` distinct values per attribute and shard
(data values: fine for these non-private miners, whose output is not private; the
private miners never ask for them).

Examples
--------
>>> from dprm.data import LiteralIndex, load_two_view
>>> from dprm.datasets import make_planted
>>> from dprm.engine import InProcessEngine
>>> planted = make_planted(500, n_planted=2, missing=0.05, random_state=1)
>>> data = load_two_view(planted.left, planted.right, types=planted.types)
>>> statistics = ValueStatistics(InProcessEngine(data).workers(ValueAnswers))
>>> merged = statistics.data_thresholds(8)
>>> all(np.array_equal(m, t) for m, t in zip(merged[1], LiteralIndex(data.right, max_splits=8).thresholds))
True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dprm.data.attributes import AttributeKind, TwoViewData
from dprm.data.cut_points import (ValueSummary, cut_point_ranks, data_cut_points, merge_summaries, select_many,
                                  summarise_values)
from dprm.engine.workers import ShardWorkers, add_answers

__all__ = ["ValueAnswers", "ValueStatistics"]


class ValueAnswers:
    """A shard's answers about its numeric values (a worker: :mod:`dprm.engine.workers`).

    Parameters
    ----------
    data : TwoViewData
        The shard's rows.
    """

    def __init__(self, data: TwoViewData) -> None:
        self.data = data
        self._sorted: dict[tuple[int, int], np.ndarray] = {}

    def summaries(self, limit: int) -> list[list[ValueSummary | None]]:
        """Per view and attribute, :func:`~dprm.data.cut_points.summarise_values` (None if not numeric)."""
        return [[summarise_values(a.values, limit) if a.kind is AttributeKind.NUMERIC else None
                 for a in view.attributes] for view in self.data.views]

    def summary(self, side: int, position: int, limit: int) -> ValueSummary:
        """:func:`~dprm.data.cut_points.summarise_values` of one numeric attribute."""
        return summarise_values(self.data.views[side].attributes[position].values, limit)

    def count_at_most(self, requests: Sequence[tuple[int, int, np.ndarray]]) -> list[np.ndarray]:
        """Per ``(side, attribute position, candidates)``: this shard's present values ``≤`` each candidate."""
        out = []
        for side, position, candidates in requests:
            key = (side, position)
            if key not in self._sorted:
                values = self.data.views[side].attributes[position].values
                self._sorted[key] = np.sort(values[~np.isnan(values)])
            out.append(np.searchsorted(self._sorted[key], candidates, side="right").astype(np.int64))
        return out

    def release(self) -> None:
        """Drop the sorted copies."""
        self._sorted.clear()


class ValueStatistics:
    """The driver's side: merged summaries, order statistics and data cut points over all shards.

    Parameters
    ----------
    workers : ShardWorkers
        A :class:`ValueAnswers` on every shard (``engine.workers(ValueAnswers)``).
    """

    def __init__(self, workers: ShardWorkers) -> None:
        self.workers = workers

    def summaries(self, limit: int) -> list[list[ValueSummary | None]]:
        """Per view and attribute, the summary of all shards' values (None if not numeric)."""
        answers = self.workers.call("summaries", limit)
        return [[None if parts[0] is None else merge_summaries(list(parts)) for parts in zip(*sides)]
                for sides in zip(*answers)]

    def summary(self, side: int, position: int, limit: int) -> ValueSummary:
        """The summary of one numeric attribute's values over all shards."""
        return merge_summaries(self.workers.call("summary", side, position, limit))

    def order_statistics(self, requests: Sequence[tuple[int, int, ValueSummary, np.ndarray]]) -> list[np.ndarray]:
        """Per ``(side, position, merged summary, ranks)``: the values at those 0-based ranks of all shards."""
        if not requests:
            return []
        keys = [(side, position) for side, position, _, _ in requests]

        def count_at_most(candidates: list[np.ndarray]) -> list[np.ndarray]:
            return add_answers(self.workers.call("count_at_most",
                                                 [(s, p, c) for (s, p), c in zip(keys, candidates)]))

        try:
            return select_many(count_at_most, [(summary.low, summary.high, np.asarray(ranks, dtype=np.int64))
                                               for _, _, summary, ranks in requests])
        finally:
            self.workers.call("release")

    def data_thresholds(self, max_splits: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per view, every attribute's thresholds of :class:`~dprm.data.LiteralIndex` ``mode="data"`` over all rows.

        One round trip of summaries; the attributes with more than ``max_splits + 1``
        distinct values then have their quantile ranks selected together.
        """
        summaries = self.summaries(int(max_splits) + 1)
        pending: list[tuple[int, int, ValueSummary, np.ndarray]] = []
        for side, view in enumerate(summaries):
            for position, summary in enumerate(view):
                if summary is not None and summary.distinct is None:
                    pending.append((side, position, summary, cut_point_ranks(summary.count, int(max_splits))))
        selected = dict(zip([(s, p) for s, p, _, _ in pending], self.order_statistics(pending)))
        out: list[list[np.ndarray]] = []
        for side, view in enumerate(summaries):
            thresholds = []
            for position, summary in enumerate(view):
                if summary is None:
                    thresholds.append(np.empty(0))
                else:
                    values = selected.get((side, position))
                    thresholds.append(data_cut_points(summary, int(max_splits), lambda ranks, v=values: v))
            out.append(thresholds)
        return out[0], out[1]
