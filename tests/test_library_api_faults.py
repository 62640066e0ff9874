"""Faults found by fuzzing dprm as a Python library (helper-P's round), each pinned.

Every test failed on the code before its fix and passes after (checked by running
this file against ``git archive`` of the parent commit). Bad input is refused with a
one-line :class:`~dprm.errors.ParameterError` naming the parameter or column, before
any budget is spent:

- ``fit_private_estimator(..., synthetic_timeout=-1 | nan | 0)`` was accepted; with
  ``private_method="mst"`` / ``"aim"`` the whole ε was charged and dpmm then failed
  at once ("did not finish within the timeout of -1 s"): budget spent on bad input.
- ``DPDecisionTreeClassifier(bounds={True: ...})`` (or ``categories=``) took the
  Boolean as column position 1 (``True == 1`` in a dict); a numpy integer position
  (``np.int64(1)``, as a loop over ``np.arange`` gives) was refused as an unknown column.
- A list, dict, set (or a tuple holding one) in a feature column stopped ``fit`` and
  ``predict`` with pandas' ``TypeError: unhashable type`` naming no column.
- ``make_miner(["alt-expm"])`` (and ``parameter_specs``, ``parameter_help``) stopped with
  ``TypeError: unhashable type: 'list'``.
- ``DensityEstimator.density([("a", "x")])`` stopped with ``AttributeError``;
  ``sample(2.5, rng)`` / ``sample(True, rng)`` with numpy's ``TypeError`` naming no parameter.
- ``DPDecisionTreeClassifier(bounds={"a": (False, True)})`` was read as (0, 1), where a types
  file refuses Boolean bounds; ``load_two_view(..., keep_constant="no")`` kept the constant
  columns (a non-empty string is true).
- ``DensityEstimator(orders=["ab"])`` read the string as the order ``["a", "b"]``;
  ``bins={"z": [False, True]}`` (or ``"012"``) was taken as numeric edges.
- ``DPTreeEnsembleClassifier.fit`` charged the first parts and then refused a bad row
  (inf, a value outside its domain, a label outside the classes) in a later part: budget
  spent on bad input; it fitted X and y of different lengths silently, stopped with
  IndexError on ``X=None`` and TypeError on a None label; ``predict`` before ``fit``
  was AttributeError, not NotFittedError.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dprm.classifier import DPDecisionTreeClassifier
from dprm.errors import ParameterError
from dprm.itemsets import DensityEstimator
from dprm.itemsets.private import fit_private_estimator
from dprm.mining import make_miner, parameter_help, parameter_specs
from dprm.privacy import Accountant, SeededNoise


def _table() -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    return X, (X["a"].to_numpy() > 0).astype(int)


# -- the private itemset estimate: synthetic_timeout ------------------------------------

@pytest.mark.parametrize("timeout", [-1, 0, float("nan"), float("inf"), True, "60"])
def test_synthetic_timeout_refused_before_budget(timeout: object) -> None:
    data = pd.DataFrame({"a": ["x", "y"] * 20, "b": ["p", "q", "q", "p"] * 10})
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    with pytest.raises(ParameterError, match="^synthetic_timeout must be a positive finite number"):
        fit_private_estimator(data, 1.0, private_method="mst", synthetic_timeout=timeout, accountant=accountant,
                              domains={"a": ["x", "y"], "b": ["p", "q"]}, random_state=0)
    assert accountant.spent() == 0 and accountant.ledger == []


def test_synthetic_timeout_default_and_positive_accepted() -> None:
    data = pd.DataFrame({"a": ["x", "y"] * 20})
    fit = fit_private_estimator(data, 1.0, domains={"a": ["x", "y"]}, synthetic_timeout=5, random_state=0)
    assert fit.privacy["epsilon"] == 1.0


# -- the classifier: columns named by position ------------------------------------------

@pytest.mark.parametrize("what", ["bounds", "categories"])
def test_boolean_column_key_refused(what: str) -> None:
    X, y = _table()
    spec = {True: (-5, 5)} if what == "bounds" else {True: ["u", "v"]}
    with pytest.raises(ParameterError, match=f"^{what} names a column by the Boolean True"):
        DPDecisionTreeClassifier(random_state=0, **{what: spec}).fit(X, y)


def test_numpy_integer_column_position_accepted() -> None:
    X, y = _table()
    by_int = DPDecisionTreeClassifier(random_state=0, bounds={1: (-5, 5)}).fit(X, y)
    by_numpy = DPDecisionTreeClassifier(random_state=0, bounds={np.int64(1): (-5, 5)}).fit(X, y)
    assert by_numpy.domains_[1].domain.bounds == by_int.domains_[1].domain.bounds == (-5.0, 5.0)
    assert np.array_equal(by_numpy.predict_proba(X), by_int.predict_proba(X))


# -- the classifier: unhashable cells -------------------------------------------------------

@pytest.mark.parametrize("cell, kind", [([1], "list"), ({1: 2}, "dict"), ({1}, "set"), ((1, [2]), "tuple")])
def test_unhashable_cell_refused_in_fit(cell: object, kind: str) -> None:
    X, y = _table()
    column = pd.Series(["u"] * len(X), dtype=object)
    column[3] = cell
    with pytest.raises(ParameterError, match=f"^column 'c' holds a value of type {kind}, which is neither"):
        DPDecisionTreeClassifier(random_state=0).fit(X.assign(c=column), y)


def test_unhashable_cell_refused_in_predict() -> None:
    X, y = _table()
    model = DPDecisionTreeClassifier(random_state=0).fit(X.assign(c=["u", "v"] * 30), y)
    column = pd.Series(["u"] * len(X), dtype=object)
    column[5] = ["u"]
    for method in (model.predict, model.predict_proba):
        with pytest.raises(ParameterError, match="^column 'c' holds a value of type list"):
            method(X.assign(c=column))
    assert model.score(X.assign(c=["u", "v"] * 30), y) > 0.5  # ordinary rows still predicted


# -- miners by name -----------------------------------------------------------------------

@pytest.mark.parametrize("name", [["alt-expm"], {"a": 1}, None, 3])
def test_make_miner_unhashable_or_odd_name(name: object) -> None:
    with pytest.raises(ParameterError, match="^unknown algorithm"):
        make_miner(name)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="^unknown algorithm"):
        parameter_specs(name)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="^unknown algorithm"):
        parameter_help([name])  # type: ignore[list-item]


# -- the density estimate's queries --------------------------------------------------------

@pytest.fixture(scope="module")
def estimate() -> DensityEstimator:
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"a": rng.choice(["x", "y"], 200), "b": rng.choice(["p", "q"], 200)})
    return DensityEstimator(n_chains=1, n_samples=500, random_state=0).fit(data)


@pytest.mark.parametrize("assignment", [[("a", "x")], "a", None])
def test_density_of_non_mapping_refused(estimate: DensityEstimator, assignment: object) -> None:
    with pytest.raises(ParameterError, match="^an assignment must be a mapping from column name to value"):
        estimate.density(assignment)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="^an assignment must be a mapping"):
        estimate.conditional("b", assignment)  # type: ignore[arg-type]


@pytest.mark.parametrize("n", [2.5, True, "3", None])
def test_sample_size_must_be_integer(estimate: DensityEstimator, n: object) -> None:
    with pytest.raises(ParameterError, match="^the number of rows to draw must be an integer"):
        estimate.sample(n, np.random.default_rng(0))  # type: ignore[arg-type]


def test_sample_numpy_integer_accepted(estimate: DensityEstimator) -> None:
    assert estimate.sample(np.int64(4), np.random.default_rng(0)).shape == (4, 2)
    assert 0.0 <= estimate.density({"a": "x"}) <= 1.0


# -- Booleans where a number or a flag is asked for -------------------------------------------

@pytest.mark.parametrize("bounds", [(False, True), (0, np.True_)])
def test_boolean_bounds_refused(bounds: tuple[object, object]) -> None:
    X, y = _table()
    with pytest.raises(ParameterError, match="^bounds of column 'a' must be a pair of numbers"):
        DPDecisionTreeClassifier(random_state=0, bounds={"a": bounds}).fit(X, y)


@pytest.mark.parametrize("flag", ["no", 1, None])
def test_load_two_view_keep_constant_must_be_boolean(flag: object) -> None:
    from dprm.data import load_two_view
    from dprm.data.loading import read_view

    left, right = pd.DataFrame({"a": [1.0, 2.0, 3.0], "c": [5, 5, 5]}), pd.DataFrame({"b": [1.0, 2.0, 4.0]})
    with pytest.raises(ParameterError, match="^keep_constant must be True or False"):
        load_two_view(left, right, keep_constant=flag)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="^keep_constant must be True or False"):
        read_view(left, keep_constant=flag)  # type: ignore[arg-type]
    assert load_two_view(left, right, keep_constant=np.bool_(True)).left.names == ["a", "c"]


# -- the density estimate's parameters -------------------------------------------------------

@pytest.mark.parametrize("edges", [[False, True], [0, np.True_, 2], "012"])
def test_bin_edges_must_be_numbers(edges: object) -> None:
    data = pd.DataFrame({"a": ["x", "y"] * 10, "z": [0.5] * 20})
    with pytest.raises(ParameterError, match="^bins for column 'z': the edges must be numbers"):
        DensityEstimator(bins={"z": edges}).fit(data)


@pytest.mark.parametrize("orders", [["ab"], ["ab", "ba"], "ab"])
def test_orders_as_strings_refused(orders: object) -> None:
    data = pd.DataFrame({"a": ["x", "y"] * 10, "b": ["p", "q", "q", "p"] * 5})
    with pytest.raises(ParameterError, match="^orders must be a list of orders, each a list of column names"):
        DensityEstimator(orders=orders, n_samples=100).fit(data)  # type: ignore[arg-type]
    assert len(DensityEstimator(orders=[["b", "a"]], n_samples=100).fit(data).chains_) == 1


# -- the private ensemble: every part checked before the first is charged ----------------------

def _ensemble_table() -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=90), "b": rng.normal(size=90)})
    return X, (X["a"].to_numpy() > 0).astype(int)


@pytest.mark.parametrize("fault", ["inf", "category", "bounds", "label"])
def test_ensemble_bad_row_in_a_later_part_spends_nothing(fault: str) -> None:
    from dprm.classifier.ensemble import DPTreeEnsembleClassifier

    X, y = _ensemble_table()
    kwargs: dict[str, object] = {}
    if fault == "inf":
        X.loc[89, "a"] = np.inf
    elif fault == "category":
        X = X.assign(c=["u"] * 89 + ["w"])
        kwargs = {"categories": {"c": ["u", "v"]}}
    elif fault == "bounds":
        X.loc[89, "a"] = 7.0
        kwargs = {"bounds": {"a": (-5, 5)}}
    else:
        y = np.r_[y[:-1], [2]]
        kwargs = {"classes": [0, 1]}
    accountant = Accountant(3.0, SeededNoise(np.random.default_rng(0)))
    with pytest.raises(ParameterError):
        DPTreeEnsembleClassifier(accountant=accountant, epsilon=1.0, random_state=0, **kwargs).fit(X, y)
    assert accountant.spent() == 0 and accountant.ledger == []


def test_ensemble_refuses_rows_of_unequal_length_and_missing_labels() -> None:
    from dprm.classifier.ensemble import DPTreeEnsembleClassifier

    X, y = _ensemble_table()
    accountant = Accountant(3.0, SeededNoise(np.random.default_rng(0)))
    with pytest.raises(ValueError, match="inconsistent numbers of samples: \\[90, 89\\]"):
        DPTreeEnsembleClassifier(accountant=accountant, random_state=0).fit(X, y[:-1])
    labels = np.where(np.arange(90) == 80, None, y).astype(object)
    with pytest.raises(ParameterError, match="^the target y has missing labels \\(first at row 80\\)"):
        DPTreeEnsembleClassifier(accountant=accountant, random_state=0).fit(X, labels)
    with pytest.raises(ValueError, match="^Expected a 2D array or a DataFrame of features"):
        DPTreeEnsembleClassifier(accountant=accountant, random_state=0).fit(None, y)
    assert accountant.spent() == 0


def test_ensemble_predict_before_fit_is_not_fitted() -> None:
    from sklearn.exceptions import NotFittedError

    from dprm.classifier.ensemble import DPTreeEnsembleClassifier

    X, _ = _ensemble_table()
    with pytest.raises(NotFittedError):
        DPTreeEnsembleClassifier().predict(X)
