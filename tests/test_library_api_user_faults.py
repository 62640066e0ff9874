"""Faults found using dprm as a scikit-learn user would (helper-D's round), each pinned.

Every test failed on the code before its fix and passes after (checked by running
this file with the unchanged sources first on the path):

- The classifiers and the private itemset estimate refused an ``epsilon`` their
  accountant could not afford with a :class:`~dprm.errors.ParameterError` only, and
  the miners with a :class:`~dprm.errors.BudgetExceededError`: a user catching the
  budget error around any dprm fit missed the classifiers' refusal. It is now an
  :class:`~dprm.errors.UnaffordableEpsilonError`, both (and still a ``ValueError``),
  raised at the same point, before any release.
- ``Miner.document(extra)`` took any value: an object, a set, a date or NaN came back
  in the document and stopped ``json.dumps`` with json's own ``TypeError`` (or wrote
  ``NaN``) far from the call; a non-string key was turned into its text; a key that is
  one of the miner's parameters (``{"depth": 9}``) silently replaced the value the run
  used; a string or a list stopped with ``TypeError: not a mapping``. Each is now a
  one-line ``ParameterError`` naming the key, and no document is made.
- ``classes=[False, True]`` on a 0/1 target made the classifiers predict Booleans (and
  ``classes=[0, 1]`` on a Boolean target numbers), where scikit-learn's classifiers
  predict labels of the target's type (``classes_`` are the values of ``y``): the
  declared labels are now written as the target writes them (the same classes, the
  same order and released tree); a declared label with no Boolean form beside a
  Boolean target (``2``) is refused by name.
- A fitted ``DPTreeEnsembleClassifier`` could not be pickled or returned from a joblib
  process ("an Accountant cannot be pickled"), even with no accountant given: its trees
  kept their part's accountant. It had no ``n_features_in_`` / ``feature_names_in_``;
  a target of one class was refused as "classes must hold at least two labels, not 1"
  (no classes were declared), and a 2-D target named the shape of a part's rows, not
  the caller's.
- ``Miner.set_params`` stored values as given where ``__init__`` (``make_miner``)
  converts them: ``set_params(epsilon="1/3")`` passed the check and then stopped ``fit``
  with ``ValueError: could not convert string to float: '1/3'``; a numpy integer
  (``depth=np.int64(3)``) stayed a numpy integer, which ``__init__`` converts because
  it overflows in the miners' arithmetic.
- A date, time or duration column had no kind of its own in the classifiers: alone it
  became a numeric feature (nanoseconds since 1970), beside a text column a
  categorical one (a category per date), beside a number or Boolean column numpy
  stopped with ``DTypePromotionError`` naming no column. It is now refused naming the
  column, in ``fit`` (before any charge) and ``predict``.
- ``DPTreeEnsembleClassifier`` failed six of scikit-learn's estimator checks, which the
  tree passes: it declared none of the tree's tags (missing values and text are
  features), so the checks took its acceptance of NaN and text for a fault; sparse X
  became an array of one object (no "dense data is required"); an array-like that
  numpy reads only through ``__array__`` stopped ``np.ndim`` with ``TypeError``.
- An ensemble of more parts than the rows fill, with domains read off the data, was
  refused in the words of one part's tree ("Found array with 0 sample(s) (shape=(0,
  2))", rows the caller never passed); the message now says which part drew no row.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from dprm.classifier import DPDecisionTreeClassifier
from dprm.classifier.ensemble import DPTreeEnsembleClassifier
from dprm.errors import BudgetExceededError, ParameterError
from dprm.itemsets.private import fit_private_estimator
from dprm.mining import make_miner
from dprm.privacy import Accountant, SeededNoise


def _table(n: int = 120) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.choice(["u", "v"], size=n)})
    return X, (X["a"].to_numpy() > 0).astype(int)


# -- an over-spend is a budget error wherever it is refused --------------------------------

def _spent_accountant() -> Accountant:
    accountant = Accountant(1, SeededNoise(np.random.default_rng(0)))
    accountant.charge("0.75", "earlier", "discrete-laplace count")
    return accountant


@pytest.mark.parametrize("estimator", [DPDecisionTreeClassifier, DPTreeEnsembleClassifier])
def test_classifier_over_spend_is_a_budget_error(estimator: type) -> None:
    X, y = _table()
    accountant = _spent_accountant()
    model = estimator(epsilon=0.5, accountant=accountant, classes=[0, 1],
                      bounds={"a": (-4, 4)}, categories={"b": ["u", "v"]})
    with pytest.raises(BudgetExceededError, match="^the accountant's remaining budget 0.25 does not cover epsilon 0.5$"
                       ) as refused:
        model.fit(X, y)
    assert isinstance(refused.value, ParameterError) and isinstance(refused.value, ValueError)
    assert refused.value.code == "budget_exceeded" and not refused.value.data_dependent
    assert [entry.step for entry in accountant.ledger] == ["earlier"]


def test_itemset_estimate_over_spend_is_a_budget_error() -> None:
    accountant = _spent_accountant()
    with pytest.raises(BudgetExceededError, match="does not cover epsilon 1$") as refused:
        fit_private_estimator(pd.DataFrame({"a": ["x", "y"] * 30}), 1.0, domains={"a": ["x", "y"]},
                              accountant=accountant, private_method="basis", min_support=0.3)
    assert isinstance(refused.value, ParameterError)
    assert [entry.step for entry in accountant.ledger] == ["earlier"]


# -- Miner.document(extra_parameters) ----------------------------------------------------

@pytest.fixture(scope="module")
def fitted_miners() -> dict:
    from dprm.data import load_two_view
    from dprm.datasets import make_planted

    planted = make_planted(200, random_state=0)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    return {name: make_miner(name, epsilon=1, **options).fit(data, rng=0)
            for name, options in [("mcmc-tree-pair", {"mcmc_iterations": 200}),
                                  ("serenade-es", {"initial_pairs": 2, "extensions": 2})]}


@pytest.mark.parametrize("value, words", [
    (object(), " is of type object, which is not a JSON value"),
    ({1, 2}, " is of type set, which is not a JSON value"),
    (pd.Timestamp(0), " is of type Timestamp, which is not a JSON value"),
    ([1, float("nan")], r"\[1\] is nan, not a finite number"),
    ({"inner": float("inf")}, r"\['inner'\] is inf, not a finite number"),
])
def test_document_refuses_a_value_that_is_not_json(fitted_miners: dict, value: object, words: str) -> None:
    for miner in fitted_miners.values():
        with pytest.raises(ParameterError, match=r"^extra_parameters\['note'\]" + words):
            miner.document({"note": value})


@pytest.mark.parametrize("extra, words", [
    ({1: "x"}, "^extra_parameters has the key 1, which is not a string"),
    ({None: "x"}, "^extra_parameters has the key None, which is not a string"),
    ("seed", "^extra_parameters must be a mapping of names to JSON values, not str"),
    ([("seed", 1)], "^extra_parameters must be a mapping of names to JSON values, not list"),
])
def test_document_refuses_odd_keys_and_non_mappings(fitted_miners: dict, extra: object, words: str) -> None:
    for miner in fitted_miners.values():
        with pytest.raises(ParameterError, match=words):
            miner.document(extra)  # type: ignore[arg-type]


def test_document_refuses_replacing_what_the_run_states(fitted_miners: dict) -> None:
    trees, serenade = fitted_miners["mcmc-tree-pair"], fitted_miners["serenade-es"]
    with pytest.raises(ParameterError, match="^extra_parameters: 'depth' is stated by the MCMCTreePair run itself"):
        trees.document({"depth": 7})
    assert "chosen" in serenade.document()["parameters"]
    with pytest.raises(ParameterError, match="^extra_parameters: 'chosen' is stated by the SerenadeES run itself"):
        serenade.document({"chosen": {}})


def test_document_takes_plain_and_numpy_extras(fitted_miners: dict) -> None:
    import json

    for miner in fitted_miners.values():
        document = miner.document({"dataset": "planted", "seed": None, "sizes": (np.int64(3), np.float32(0.5))})
        assert document["parameters"]["sizes"] == [3, 0.5] and document["parameters"]["dataset"] == "planted"
        assert json.loads(json.dumps(document, allow_nan=False)) == document


# -- Boolean classes and a 0/1 target ----------------------------------------------------

@pytest.mark.parametrize("estimator", [DPDecisionTreeClassifier, DPTreeEnsembleClassifier])
@pytest.mark.parametrize("target, declared", [("int", [False, True]), ("float", [True, False]),
                                              ("bool", [0, 1]), ("bool", [1.0, 0.0])])
def test_classes_take_the_targets_type(estimator: type, target: str, declared: list) -> None:
    X, y = _table()
    y = y.astype(target)
    options = {"bounds": {"a": (-4, 4)}, "categories": {"b": ["u", "v"]}, "random_state": 0}
    as_declared = estimator(classes=declared, **options).fit(X, y)
    as_target = estimator(classes=sorted(np.unique(y).tolist()), **options).fit(X, y)
    assert as_declared.classes_.dtype == y.dtype == as_declared.predict(X).dtype
    assert np.array_equal(as_declared.classes_, as_target.classes_)
    assert np.array_equal(as_declared.predict(X), as_target.predict(X))
    assert np.array_equal(as_declared.predict_proba(X), as_target.predict_proba(X))
    assert as_declared.ledger_ == as_target.ledger_


def test_a_class_with_no_boolean_form_beside_a_boolean_target_is_refused() -> None:
    X, y = _table()
    accountant = Accountant(1, SeededNoise(np.random.default_rng(0)))
    with pytest.raises(ParameterError, match=r"^the target's labels are Booleans but the declared class 2 is not 0 "
                                             r"or 1: declare the classes as the target writes them"):
        DPDecisionTreeClassifier(classes=[0, 1, 2], accountant=accountant, bounds={"a": (-4, 4)},
                                 categories={"b": ["u", "v"]}).fit(X, y.astype(bool))
    assert accountant.ledger == []


# -- the ensemble as a fitted scikit-learn estimator ---------------------------------------

def test_fitted_ensemble_pickles_without_its_parts_accountants() -> None:
    import pickle

    X, y = _table()
    model = DPTreeEnsembleClassifier(random_state=0, classes=[0, 1], bounds={"a": (-4, 4)},
                                     categories={"b": ["u", "v"]}).fit(X, y)
    copy = pickle.loads(pickle.dumps(model))
    assert np.array_equal(copy.predict_proba(X), model.predict_proba(X))
    assert copy.ledger_ == model.ledger_ and all(tree.accountant is None for tree in model.estimators_)


def test_ensemble_sets_the_input_attributes() -> None:
    X, y = _table()
    model = DPTreeEnsembleClassifier(random_state=0).fit(X, y)
    assert model.n_features_in_ == 2 and list(model.feature_names_in_) == ["a", "b"]
    model.fit(X.to_numpy(), y)  # a refit on an array forgets the names, as scikit-learn's validation does
    assert model.n_features_in_ == 2 and not hasattr(model, "feature_names_in_")


def test_ensemble_names_one_class_and_a_2d_target_as_the_tree_does() -> None:
    X, y = _table()
    for estimator in (DPDecisionTreeClassifier, DPTreeEnsembleClassifier):
        with pytest.raises(ParameterError, match=r"^the target has only one class \(0\); a classifier needs at least"):
            estimator(random_state=0).fit(X, np.zeros(len(y), dtype=int))
        with pytest.raises(ValueError, match=r"^y should be a 1d array, got an array of shape \(120, 2\) instead"):
            estimator(random_state=0).fit(X, np.c_[y, y])


# -- Miner.set_params stores as __init__ does ------------------------------------------------

def test_set_params_stores_values_as_init_does() -> None:
    from dprm.data import load_two_view
    from dprm.datasets import make_planted

    planted = make_planted(200, random_state=0)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    made = make_miner("mcmc-tree-pair", epsilon="1/3", depth=np.int64(2), mcmc_iterations=100)
    updated = make_miner("mcmc-tree-pair", mcmc_iterations=100).set_params(epsilon="1/3", depth=np.int64(2))
    assert updated.get_params() == made.get_params()
    assert type(updated.depth) is int and updated.epsilon == made.epsilon
    fits = [miner.fit(data, accountant=Accountant("1/3", SeededNoise(np.random.default_rng(0))), rng=0)
            for miner in (updated, made)]
    assert fits[0].document() == fits[1].document()


# -- date, time and duration columns -------------------------------------------------------

_DATES = {
    "datetime64[ns]": pd.Series(pd.date_range("2020-01-01", periods=120)),
    "datetime64[ns, UTC]": pd.Series(pd.date_range("2020-01-01", periods=120, tz="UTC")),
    "timedelta64[ns]": pd.Series(pd.to_timedelta(np.arange(120), unit="s")),
    "category of datetime64[ns]": pd.Series(pd.Categorical(pd.date_range("2020-01-01", periods=120))),
}


@pytest.mark.parametrize("kind", list(_DATES))
@pytest.mark.parametrize("neighbours", [[], ["a"], ["b"]])
def test_date_columns_are_refused_by_name(kind: str, neighbours: list[str]) -> None:
    X, y = _table()
    frame = X[neighbours].assign(when=_DATES[kind])
    for estimator in (DPDecisionTreeClassifier, DPTreeEnsembleClassifier):
        accountant = Accountant(1, SeededNoise(np.random.default_rng(0)))
        with pytest.raises(ParameterError, match=r"^column 'when' holds values of pandas type .*; use numbers, "
                                                 r"text or Booleans \(.astype\(str\) makes them categories"):
            estimator(accountant=accountant).fit(frame, y)
        assert accountant.ledger == []


def test_date_arrays_and_date_columns_at_prediction_are_refused() -> None:
    X, y = _table()
    dates = np.array(pd.date_range("2020-01-01", periods=120)).reshape(-1, 1)
    with pytest.raises(ParameterError, match=r"^column 'x0' holds values of numpy type datetime64\[ns\]"):
        DPDecisionTreeClassifier(random_state=0).fit(dates, y)
    model = DPDecisionTreeClassifier(random_state=0).fit(X.assign(when=["u", "v"] * 60), y)
    with pytest.raises(ParameterError, match=r"^column 'when' holds values of pandas type datetime64\[ns\]"):
        model.predict(X.assign(when=_DATES["datetime64[ns]"]))


# -- the ensemble passes scikit-learn's estimator checks -------------------------------------

@parametrize_with_checks([DPTreeEnsembleClassifier(epsilon=100.0, random_state=0, max_depth=3)])
def test_ensemble_sklearn_estimator_checks(estimator: DPTreeEnsembleClassifier, check: object) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # domains and classes read off the checks' data
        check(estimator)  # type: ignore[operator]


def test_ensemble_names_the_part_that_drew_no_row() -> None:
    X, y = _table(20)
    with pytest.raises(ValueError, match=r"^part \d+ of the rows \(n_estimators=50\) drew no row: .* read off the "
                                         r"data: declare them to fit on no rows; or fit fewer parts$"):
        DPTreeEnsembleClassifier(n_estimators=50, random_state=0).fit(X, y)
    declared = DPTreeEnsembleClassifier(n_estimators=50, random_state=0, classes=[0, 1], bounds={"a": (-4, 4)},
                                        categories={"b": ["u", "v"]}).fit(X, y)
    assert declared.privacy_spent_ == 1.0
