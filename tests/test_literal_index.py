"""The literal index against brute-force evaluation of its literals."""

from __future__ import annotations

import numpy as np
import pytest

from dprm.data.attributes import Attribute, AttributeKind, Domain, View
from dprm.data.literal_index import LiteralIndex, pack_rows, popcount
from conftest import random_view


def brute_support(attribute: Attribute, operator: str, value) -> np.ndarray:
    x = attribute.values
    if operator == "is":
        return x == 1
    if operator == "is-not":
        return x == 0
    if operator == "eq":
        return x == value
    if operator == "le":
        return ~np.isnan(x) & (x <= value)
    return ~np.isnan(x) & (x > value)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("mode", ["data", "private"])
def test_literal_supports_match_brute_force(seed: int, mode: str) -> None:
    rng = np.random.default_rng(seed)
    view = random_view(rng, 203)
    index = LiteralIndex(view, mode=mode, max_splits=5)
    bitsets = index.bitsets
    for number, (position, operator, code) in enumerate(index.literals):
        attribute = index.attributes[position]
        value = index.thresholds[position][code] if operator in ("le", "gt") else code
        expected = brute_support(attribute, operator, value)
        assert np.array_equal(index.literal_support((position, operator, code)), expected)
        assert np.array_equal(bitsets[number], pack_rows(expected))
        assert int(popcount(bitsets[number])) == int(expected.sum())


def test_private_thresholds_come_from_public_bounds_not_data() -> None:
    values = np.array([0.123, 0.456, 9.87, 3.21])
    attribute = Attribute("x", "left", AttributeKind.NUMERIC, values, Domain(bounds=(0.0, 10.0), declared=True))
    index = LiteralIndex(View("left", [attribute]), mode="private", max_splits=4)
    assert index.thresholds[0].tolist() == [2.0, 4.0, 6.0, 8.0]
    assert not set(index.thresholds[0]) & set(values)
    assert index.private_domains
    shifted = Attribute("x", "left", AttributeKind.NUMERIC, values + 0.01, attribute.domain)
    assert LiteralIndex(View("left", [shifted]), mode="private", max_splits=4).thresholds[0].tolist() == [
        2.0, 4.0, 6.0, 8.0]


def test_undeclared_bounds_make_the_index_not_private() -> None:
    attribute = Attribute("x", "left", AttributeKind.NUMERIC, np.array([1.0, 5.0, 3.0]), Domain())
    index = LiteralIndex(View("left", [attribute]), mode="private", max_splits=3)
    assert not index.private_domains
    assert index.thresholds[0].tolist() == [2.0, 3.0, 4.0]


def test_data_thresholds_at_distinct_values_or_quantiles() -> None:
    few = Attribute("few", "left", AttributeKind.NUMERIC, np.tile([1.0, 2.0, 2.0, 3.0, np.nan], 200))
    many = Attribute("many", "left", AttributeKind.NUMERIC, np.arange(1000.0))
    index = LiteralIndex(View("left", [few, many]), mode="data", max_splits=8)
    assert index.thresholds[0].tolist() == [1.0, 2.0]
    assert len(index.thresholds[1]) == 8
    assert set(index.thresholds[1]) <= set(many.values)


def test_split_branches_exclude_missing_values() -> None:
    attribute = Attribute("b", "left", AttributeKind.BOOLEAN, np.array([1, 0, -1, 1], dtype=np.int8))
    index = LiteralIndex(View("left", [attribute]))
    true, false = index.split_branches(index.splits[0])
    assert true.tolist() == [True, False, False, True]
    assert false.tolist() == [False, True, False, False]


def test_wide_categorical_attributes_use_wider_codes() -> None:
    categories = tuple(f"c{k}" for k in range(300))
    values = np.arange(300, dtype=np.int32)
    values[0] = -1
    attribute = Attribute("c", "left", AttributeKind.CATEGORICAL, values, Domain(categories=categories))
    index = LiteralIndex(View("left", [attribute]))
    assert index.codes.dtype == np.uint16
    assert index.literal_support((0, "eq", 299)).sum() == 1
    assert index.literal_support((0, "eq", 0)).sum() == 0


@pytest.mark.parametrize("mode, max_splits", [("data", 5), ("private", 5), ("data", 300), ("private", 300)])
def test_the_threaded_construction_gives_the_serial_index(monkeypatch, mode: str, max_splits: int) -> None:
    from dprm.data import literal_index

    view = random_view(np.random.default_rng(17), 5_003)
    serial = LiteralIndex(view, mode=mode, max_splits=max_splits)
    monkeypatch.setattr(literal_index, "PARALLEL_ENCODING_CODES", 1)
    threaded = LiteralIndex(view, mode=mode, max_splits=max_splits)
    assert threaded.codes.dtype == serial.codes.dtype and np.array_equal(threaded.codes, serial.codes)
    assert all(np.array_equal(a, b) for a, b in zip(threaded.thresholds, serial.thresholds))
    assert threaded.splits == serial.splits and threaded.missing_code == serial.missing_code
    assert (serial.codes == serial.missing_code).sum() > 0  # missing values were encoded
