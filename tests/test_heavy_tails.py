"""Heavy-tailed columns: a public log transform declared in the types file, and its grid."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dprm.data import LiteralIndex, load_two_view
from dprm.data.grid import log_grid, public_grid
from dprm.data.types_file import TypesSpec
from dprm.errors import DataError


def _lognormal_views(rng: np.random.Generator, n: int = 400) -> tuple[dict, dict]:
    income = np.round(rng.lognormal(8, 1.2, n), 1)
    visits = rng.negative_binomial(1, 0.15, n).astype(float)
    return {"id": np.arange(n), "income": income}, {"id": np.arange(n), "visits": visits,
                                                    "old": (rng.random(n) < 0.3).astype(int)}


TYPES = {"id_column": "id", "columns": {
    "income": {"type": "numeric", "bounds": [0, 1_000_000], "transform": "log"},
    "visits": {"type": "numeric", "bounds": [0, 500], "transform": "log"},
    "old": "boolean"}}


def test_the_log_grid_is_dense_where_heavy_tailed_values_are() -> None:
    linear, logarithmic = public_grid(0.0, 1_000_000.0, 32), public_grid(0.0, 1_000_000.0, 32, "log")
    rng = np.random.default_rng(0)
    income = rng.lognormal(8, 1.2, 10_000)
    # the rows between neighbouring thresholds: one linear cell holds nearly all, the log cells share them
    linear_cells = np.bincount(np.searchsorted(linear, income), minlength=linear.size + 1)
    log_cells = np.bincount(np.searchsorted(logarithmic, income), minlength=logarithmic.size + 1)
    assert linear_cells.max() > 0.95 * income.size
    assert log_cells.max() < 0.25 * income.size
    assert np.all(np.diff(logarithmic) > 0) and logarithmic[0] >= 0 and logarithmic[-1] <= 1_000_000


def test_a_declared_transform_sets_the_private_grid_a_function_of_the_public_schema_only() -> None:
    left, right = _lognormal_views(np.random.default_rng(1))
    data = load_two_view(pd.DataFrame(left), pd.DataFrame(right), types=TYPES)
    income = data.views[0].attributes[0]
    assert income.domain.transform == "log" and income.domain.declared
    index = LiteralIndex(data.views[0], mode="private", max_splits=32)
    assert index.thresholds[0].tolist() == log_grid(0.0, 1_000_000.0, 32).tolist()
    # a neighbouring dataset (one row less) has the very same thresholds: nothing was read off the rows
    fewer = load_two_view(pd.DataFrame(left).iloc[1:], pd.DataFrame(right).iloc[1:], types=TYPES)
    assert LiteralIndex(fewer.views[0], mode="private", max_splits=32).thresholds[0].tolist() == \
        index.thresholds[0].tolist()


@pytest.mark.parametrize("entry, fragment", [
    ({"type": "numeric", "bounds": [0, 10], "transform": "sqrt"}, "unknown transform 'sqrt'"),
    ({"type": "categorical", "categories": ["a"], "transform": "log"}, "only for numeric columns"),
    ({"type": "numeric", "bounds": [-5, 10], "transform": "log"}, "lower bound of at least 0"),
    ({"type": "numeric", "transform": "log"}, "needs declared 'bounds'"),
])
def test_a_bad_transform_is_one_line_naming_the_column(entry: dict, fragment: str) -> None:
    with pytest.raises(DataError, match="column 'x'") as error:
        TypesSpec.from_mapping({"columns": {"x": entry}}, source="types.json")
    assert fragment in str(error.value) and "\n" not in str(error.value)


def test_a_declared_log_column_or_the_private_grid_keeps_what_the_public_linear_grid_misses() -> None:
    """Planted: visits above its median (a few units) is 'old'; the linear grid of [0, 500] cannot cut there.

    Declared ``log``, or no declaration with the grid chosen privately (the default),
    finds it; the public equally wide grid (``numeric_grid="equal-width"``) does not.
    """
    from dprm.mining import default_algorithm, default_parameters, make_miner
    from dprm.privacy import Accountant, SeededNoise

    rng = np.random.default_rng(3)
    n = 3000
    visits = rng.negative_binomial(1, 0.15, n).astype(float)
    old = ((visits > np.median(visits)) ^ (rng.random(n) < 0.05)).astype(int)
    left, right = {"id": np.arange(n), "old": old}, {"id": np.arange(n), "visits": visits}
    kept = {}
    for transform, grid in ((None, "equal-width"), ("log", "equal-width"), (None, "auto")):
        entry = {"type": "numeric", "bounds": [0, 500]} | ({"transform": transform} if transform else {})
        data = load_two_view(pd.DataFrame(left), pd.DataFrame(right),
                             types={"id_column": "id", "columns": {"old": "boolean", "visits": entry}})
        best = 0.0
        for seed in range(3):
            miner = make_miner(default_algorithm(1.0), **default_parameters(1.0), epsilon=1.0, numeric_grid=grid)
            miner.fit(data, accountant=Accountant(1.0, SeededNoise(np.random.default_rng(seed))),
                      rng=np.random.default_rng(seed))
            best = max([best] + [r.stats.jaccard for r in miner.redescriptions_ if not r.pruned])
        kept[transform or grid] = best
    assert kept["log"] > 0.8 and kept["log"] > kept["equal-width"] + 0.1, kept
    assert kept["auto"] > 0.8 and kept["auto"] > kept["equal-width"] + 0.1, kept


def test_a_declared_integers_transform_cuts_a_count_at_whole_numbers_only() -> None:
    """``"transform": "integers"``: the thresholds are whole numbers of the public bounds, nothing read off the rows."""
    from dprm.data.grid import integer_grid

    rng = np.random.default_rng(4)
    visits = rng.negative_binomial(1, 0.15, 500).astype(float)
    types = {"columns": {"visits": {"type": "numeric", "bounds": [0, 120], "transform": "integers"},
                         "flag": "boolean"}}
    left = pd.DataFrame({"visits": visits})
    right = pd.DataFrame({"flag": (visits > 3).astype(int)})
    data = load_two_view(left, right, types=types)
    assert data.views[0].attributes[0].domain.transform == "integers"
    thresholds = LiteralIndex(data.views[0], mode="private", max_splits=32).thresholds[0]
    assert thresholds.tolist() == integer_grid(0.0, 120.0, 32).tolist()
    assert np.all(thresholds == np.floor(thresholds)) and thresholds[:3].tolist() == [0.0, 1.0, 2.0]
    fewer = load_two_view(left.iloc[1:], right.iloc[1:], types=types)   # a neighbouring dataset: the same grid
    assert LiteralIndex(fewer.views[0], mode="private", max_splits=32).thresholds[0].tolist() == thresholds.tolist()


@pytest.mark.parametrize("bounds", [(43.79, 188.5), (0.1, 0.7), (-3.3, 12.9), (6.981, 28.11)])
@pytest.mark.parametrize("member", ["log:10", "log:100", "log:10000", "log:1000000"])
def test_a_log_grid_over_bounds_with_digits_prints_its_thresholds_as_the_numbers_they_are(bounds, member) -> None:
    """No binary last-place error in a threshold (``43.79 + 47`` is 90.78999999999999 in float64): it would be
    printed so, and a row holding exactly the readable value would fall on the wrong side."""
    from dprm.queries.text import format_number

    grid = public_grid(*bounds, 32, member)
    assert all(float(f"{t:.15g}") == t for t in grid.tolist())
    assert max(len(format_number(t).lstrip("-").replace(".", "")) for t in grid.tolist()) <= 12
    assert np.all(np.diff(grid) > 0) and grid[0] >= bounds[0] and grid[-1] <= bounds[1]


def test_an_undeclared_whole_number_column_of_a_narrow_range_is_cut_at_every_whole_number() -> None:
    """Inferred domains: a whole-number column spanning at most 32 gets ``"integers"`` (every value a threshold);
    wider or fractional columns, and every declared one, keep the private grid choice."""
    from dprm.mining import default_algorithm, default_parameters, make_miner
    from dprm.privacy import Accountant, SeededNoise
    from dprm.queries import NumericLiteral

    rng = np.random.default_rng(7)
    n = 1500
    chronic = rng.poisson(1.5, n).clip(0, 8).astype(float)
    left = pd.DataFrame({"chronic": chronic, "visits": rng.negative_binomial(1, 0.1, n).astype(float) + 89 * (
        np.arange(n) == 0), "income": np.round(rng.lognormal(2, 1, n), 2)})
    right = pd.DataFrame({"sick": (chronic + rng.normal(0, 0.7, n) > 2).astype(int),
                          "age": rng.integers(18, 90, n).astype(float)})
    data = load_two_view(left, right)
    domains = {a.name: a.domain for view in data.views for a in view.attributes}
    assert domains["chronic"].transform == "integers" and not domains["chronic"].declared
    assert domains["visits"].transform is None and domains["income"].transform is None   # range 89; fractions
    assert domains["age"].transform is None                                              # range above 32
    thresholds = LiteralIndex(data.views[0], mode="private", max_splits=32).thresholds[0]
    assert thresholds.tolist() == list(np.arange(chronic.min(), chronic.max()))           # every whole number
    declared = load_two_view(left, right, types={"columns": {"chronic": {"type": "numeric", "bounds": [0, 8]}}})
    assert declared.views[0].attributes[0].domain.transform is None   # declared: the types file decides

    epsilon = 1.0
    miner = make_miner(default_algorithm(epsilon), **{**default_parameters(epsilon), "epsilon": epsilon})
    miner.fit(data, accountant=Accountant(epsilon, SeededNoise(np.random.default_rng(1))), rng=np.random.default_rng(2))
    document = miner.document()
    assert document["privacy"]["private"] is False   # inferred domains: the run says so
    assert not any("chronic" in entry["step"] for entry in document["privacy"]["ledger"])   # no grid bought for it
    cuts = [lit for r in miner.redescriptions_ for q in (r.left, r.right) for lit in q.literals()
            if isinstance(lit, NumericLiteral) and lit.attr == "chronic"]
    assert cuts and all(float(v).is_integer() for lit in cuts for v in lit.bounds().values())
