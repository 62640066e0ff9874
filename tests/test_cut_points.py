"""Data-value cut points merged from parts of the rows equal those computed over all rows.

:mod:`dprm.data.cut_points` and :class:`dprm.engine.value_statistics.ValueStatistics`
must give exactly :class:`~dprm.data.LiteralIndex` ``mode="data"``'s thresholds (the
distinct values, or numpy's ``inverted_cdf`` quantiles) and numpy's ``linear``
percentiles, whatever the split of the rows: ties, missing values, a part without
values of an attribute, constant columns, values far apart.
"""

from __future__ import annotations

import numpy as np
import pytest

from dprm.data.attributes import Attribute, AttributeKind, TwoViewData, View
from dprm.data.cut_points import (
    cut_point_ranks,
    data_cut_points,
    float_keys,
    inverted_cdf_ranks,
    key_values,
    linear_percentiles,
    merge_summaries,
    select_order_statistics,
    summarise_values,
)
from dprm.data.literal_index import LiteralIndex, data_thresholds
from dprm.engine.value_statistics import ValueAnswers, ValueStatistics
from dprm.engine.workers import LocalWorkers, ShardWorkers
from dprm.trees.targets import freedman_diaconis_bins, freedman_diaconis_rule


def _columns(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Numeric columns of every awkward shape, with missing values."""
    columns = {
        "continuous": rng.normal(size=n),
        "ties": np.round(rng.normal(size=n), 1),
        "few": rng.integers(0, 5, size=n).astype(float),
        "constant": np.full(n, 3.5),
        "wide": rng.uniform(-1e6, 1e6, size=n),
        "huge": rng.choice([-1e300, -2.5, 0.0, 7.0, 1e300], size=n) * rng.integers(1, 4, size=n),
        "skewed": np.exp(rng.normal(scale=3, size=n)),
        "tiny": rng.normal(scale=1e-310, size=n),
    }
    for values in columns.values():
        values[rng.random(n) < 0.1] = np.nan
    columns["mostly_missing"] = np.where(np.arange(n) < n // 10, rng.normal(size=n), np.nan)
    return columns


def _parts(values: np.ndarray, n_parts: int, rng: np.random.Generator) -> list[np.ndarray]:
    dealt = rng.integers(n_parts, size=values.size)
    return [values[dealt == k] for k in range(n_parts)]


def _merged(parts: list[np.ndarray], max_splits: int) -> np.ndarray:
    summary = merge_summaries([summarise_values(p, max_splits + 1) for p in parts])
    sorted_parts = [np.sort(p[~np.isnan(p)]) for p in parts]

    def count_at_most(candidates: np.ndarray) -> np.ndarray:
        return sum(np.searchsorted(s, candidates, side="right") for s in sorted_parts)

    return data_cut_points(summary, max_splits,
                           lambda ranks: select_order_statistics(count_at_most, summary.low, summary.high, ranks))


@pytest.mark.parametrize("n_rows", [1, 7, 250, 3001])
@pytest.mark.parametrize("max_splits", [1, 3, 12, 40])
@pytest.mark.parametrize("n_parts", [1, 2, 3, 5])
def test_merged_cut_points_are_the_literal_index_thresholds_over_all_rows(n_rows, max_splits, n_parts) -> None:
    rng = np.random.default_rng(n_rows * 100 + max_splits * 10 + n_parts)
    for name, values in _columns(rng, n_rows).items():
        present = values[~np.isnan(values)]
        if present.size == 0:
            continue
        expected = data_thresholds(values, max_splits)
        view = View("left", [Attribute(name, "left", AttributeKind.NUMERIC, values)])
        assert np.array_equal(LiteralIndex(view, mode="data", max_splits=max_splits).thresholds[0], expected)
        merged = _merged(_parts(values, n_parts, rng), max_splits)
        assert merged.dtype == np.float64 and np.array_equal(merged, expected), (name, merged, expected)


def test_a_part_without_values_of_an_attribute_and_a_constant_column_merge_exactly() -> None:
    values = np.array([np.nan, np.nan, 4.0, 4.0, 1.0, 9.0, 9.0, 9.0, 2.0, 7.0, 7.0, 3.0])
    parts = [values[:2], values[2:]]  # the first part has only missing values
    assert summarise_values(parts[0], 4).count == 0
    for max_splits in (1, 2, 3, 5, 8):
        assert np.array_equal(_merged(parts, max_splits), data_thresholds(values, max_splits))
    constant = np.array([2.0, np.nan, 2.0, 2.0])
    assert _merged([constant[:2], constant[2:]], 4).size == 0 == data_thresholds(constant, 4).size


def test_the_merged_cut_points_are_not_those_of_any_one_part() -> None:
    """The check has teeth: with the rows split unevenly, one part's own cut points differ from the merged ones."""
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.normal(size=600), rng.normal(loc=5, size=300)])
    parts = [values[:600], values[600:]]
    merged = _merged(parts, 8)
    assert np.array_equal(merged, data_thresholds(values, 8))
    assert all(not np.array_equal(data_thresholds(p, 8), merged) for p in parts)


def test_the_ranks_are_numpys_inverted_cdf_ranks() -> None:
    for n in list(range(1, 200)) + [1000, 4097, 10**6 + 7]:
        positions = np.arange(n, dtype=np.float64)
        for max_splits in (1, 2, 3, 7, 19, 32, 40, 63):
            probabilities = np.arange(1, max_splits + 1) / (max_splits + 1)
            expected = np.quantile(positions, probabilities, method="inverted_cdf").astype(np.int64)
            assert np.array_equal(cut_point_ranks(n, max_splits), expected), (n, max_splits)
    assert inverted_cdf_ranks(5, np.array([0.0])).tolist() == [0]


def test_the_search_finds_every_order_statistic_and_returns_zero_as_positive_zero() -> None:
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.normal(size=50) * 1e5, [-np.inf, np.inf, 0.0, -0.0, 5e-324, -5e-324, 1.7e308]])
    ordered = np.sort(values)
    found = select_order_statistics(lambda c: np.searchsorted(ordered, c, side="right"), ordered[0], ordered[-1],
                                    np.arange(values.size))
    assert np.array_equal(found, ordered)
    assert not np.signbit(found[ordered == 0]).any()
    keys = float_keys(ordered)
    assert (np.diff(keys) >= 0).all() and np.array_equal(key_values(keys), ordered)


@pytest.mark.parametrize("n_rows", [1, 2, 3, 4, 10, 101, 2000])
def test_linear_percentiles_and_the_freedman_diaconis_bins_are_numpys(n_rows) -> None:
    rng = np.random.default_rng(n_rows)
    for name, values in _columns(rng, n_rows).items():
        present = values[~np.isnan(values)]
        if present.size < 2:
            continue
        ordered = np.sort(present)
        halved = linear_percentiles(present.size, np.array([75, 25]), lambda ranks: ordered[ranks] / 2)
        assert np.array_equal(halved, np.percentile(present / 2, [75, 25]), equal_nan=True), name
        bins = freedman_diaconis_rule(present.size, *halved, ordered[0], ordered[-1])
        assert bins == freedman_diaconis_bins(values), name


class _PartWorkers(ShardWorkers):
    """One worker per part of the rows, in this process."""

    def __init__(self, factory, parts) -> None:
        self.workers = [LocalWorkers(factory, part) for part in parts]
        self.n_shards = len(parts)

    def call(self, method, *args):
        return [w.call(method, *args)[0] for w in self.workers]


def _data(columns: dict[str, np.ndarray], rows: np.ndarray) -> TwoViewData:
    left = View("left", [Attribute(name, "left", AttributeKind.NUMERIC, values[rows])
                         for name, values in columns.items() if name != "flag"])
    right = View("right", [Attribute("flag", "right", AttributeKind.BOOLEAN, columns["flag"][rows])])
    return TwoViewData(left, right)


@pytest.mark.parametrize("n_parts", [2, 3, 4])
def test_value_statistics_over_parts_give_the_literal_index_thresholds(n_parts) -> None:
    rng = np.random.default_rng(n_parts)
    n = 1500
    columns = {name: values for name, values in _columns(rng, n).items()}
    columns["flag"] = rng.integers(0, 2, size=n).astype(np.int8)
    whole = _data(columns, np.arange(n))
    dealt = rng.integers(n_parts, size=n)
    dealt[:n // 10] = 0  # 'mostly_missing' has values in part 0 only: the other parts have none
    parts = [_data(columns, np.flatnonzero(dealt == k)) for k in range(n_parts)]
    statistics = ValueStatistics(_PartWorkers(ValueAnswers, parts))
    for max_splits in (2, 12, 40):
        left, right = statistics.data_thresholds(max_splits)
        expected = LiteralIndex(whole.left, mode="data", max_splits=max_splits).thresholds
        assert all(np.array_equal(m, e) for m, e in zip(left, expected))
        assert right[0].size == 0  # a Boolean attribute has no thresholds
    assert all(not w._worker._sorted for w in statistics.workers.workers)  # the sorted copies were dropped


def test_given_thresholds_make_the_same_index_as_computed_ones() -> None:
    values = np.array([0.5, 2.0, np.nan, 2.0, 8.0, 3.0])
    view = View("left", [Attribute("x", "left", AttributeKind.NUMERIC, values)])
    computed = LiteralIndex(view, mode="data", max_splits=2)
    given = LiteralIndex(view, mode="data", max_splits=2, thresholds=computed.thresholds)
    assert np.array_equal(given.codes, computed.codes) and given.splits == computed.splits
    with pytest.raises(Exception, match="mode must be 'data'"):
        LiteralIndex(view, mode="private", max_splits=2, thresholds=computed.thresholds)
