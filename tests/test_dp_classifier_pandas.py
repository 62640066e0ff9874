"""The DP tree classifier and its ensemble on pandas inputs of pandas' own dtypes.

* A ``category`` column's declared categories (its dtype's, used or not) are the
  feature's domain where it is read off the data: a category no training row holds
  was an unknown value at prediction (code -1, routed as unseen), though the column
  said it exists.
* A pandas nullable integer or Boolean target (``Int64``, ``UInt8``, ``boolean``; every
  label present, as the fit requires) keeps its labels' type: ``classes_`` ``[0, 1]``
  and integer predictions, as for the numpy target of the same labels, in the tree and
  the ensemble alike (both read it as floats, ``[0., 1.]``); the ensemble's classes read
  off a text or uint8 target are of the tree's dtype (they were ``<U1`` / ``int64``
  where the tree's are ``object`` / ``uint8``).

Seeds are fixed (``random_state``); small budgets are irrelevant here: the domains and
labels are what is checked, not the fitted structure.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dprm.classifier import DPDecisionTreeClassifier, encode
from dprm.classifier.ensemble import DPTreeEnsembleClassifier


def _frame(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": pd.Categorical(rng.choice(["x", "y"], n), categories=["w", "x", "y", "z"]),
                         "b": rng.normal(size=n)})


@pytest.mark.parametrize("model", [DPDecisionTreeClassifier, DPTreeEnsembleClassifier])
def test_a_category_columns_unused_categories_are_known_values(model: type) -> None:
    X = _frame()
    y = np.where(X["a"] == "x", "yes", "no")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the domains are read off the data: not private, said so
        fitted = model(epsilon=5.0, random_state=0).fit(X, y)
    trees = fitted.estimators_ if hasattr(fitted, "estimators_") else [fitted]
    later = pd.DataFrame({"a": pd.Categorical(["z", "w", "x"], categories=["w", "x", "y", "z"]), "b": [0.0] * 3})
    for tree in trees:
        assert tree.domains_[0].categories == ("w", "x", "y", "z")
        codes = encode(later.to_numpy(dtype=object), tree.domains_, strict=False)
        assert codes[:, 0].tolist() == [3, 0, 1]  # known values, not the unknown code -1
        assert any("read off the data" in reason for reason in tree.privacy_reasons_)  # no declaration
    assert fitted.predict_proba(later).shape == (3, 2)
    # declared categories still win over the dtype's
    declared = model(epsilon=5.0, random_state=0, categories={"a": ["x", "y"]}, bounds={"b": (-5, 5)},
                     classes=["no", "yes"]).fit(X, y)
    for tree in (declared.estimators_ if hasattr(declared, "estimators_") else [declared]):
        assert tree.domains_[0].categories == ("x", "y")


@pytest.mark.parametrize("model", [DPDecisionTreeClassifier, DPTreeEnsembleClassifier])
@pytest.mark.parametrize("dtype, plain", [("Int64", "int64"), ("UInt8", "uint8"), ("boolean", "bool"),
                                          ("string", None), ("category", None)])
def test_a_pandas_targets_labels_keep_their_type_in_tree_and_ensemble(model: type, dtype: str, plain: str | None
                                                                       ) -> None:
    X = _frame()
    labels = (X["a"] == "x").to_numpy()
    if plain is None:  # text labels: pandas' own text dtypes against numpy's object text
        y, numpy_y = pd.Series(np.where(labels, "yes", "no"), dtype=dtype), np.where(labels, "yes", "no").astype(object)
    else:
        numpy_y = labels.astype(plain)
        y = pd.Series(numpy_y, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = model(epsilon=5.0, random_state=0).fit(X, y)
        reference = model(epsilon=5.0, random_state=0).fit(X, numpy_y)
    assert fitted.classes_.dtype == reference.classes_.dtype and fitted.classes_.tolist() == reference.classes_.tolist()
    if plain is not None:
        assert fitted.classes_.dtype == np.dtype(plain)
    predicted, expected = fitted.predict(X), reference.predict(X)
    assert predicted.dtype == expected.dtype and np.array_equal(predicted, expected)
    np.testing.assert_array_equal(fitted.predict_proba(X), reference.predict_proba(X))


@pytest.mark.parametrize("model", [DPDecisionTreeClassifier, DPTreeEnsembleClassifier])
def test_a_one_column_frame_of_nullable_labels_keeps_their_type(model: type) -> None:
    X = _frame()
    y = pd.DataFrame({"target": pd.Series((X["a"] == "x").astype(int), dtype="Int64")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's "a column-vector y was passed"
        fitted = model(epsilon=5.0, random_state=0).fit(X, y)
    assert fitted.classes_.dtype == np.dtype("int64") and fitted.predict(X).dtype == np.dtype("int64")


def test_a_nullable_target_with_a_missing_label_is_still_refused_naming_its_row() -> None:
    y = pd.Series([0, 1] * 150, dtype="Int64")
    y[7] = pd.NA
    for model in (DPDecisionTreeClassifier, DPTreeEnsembleClassifier):
        with pytest.raises(ValueError, match="first at row 7"):
            model(epsilon=1.0, random_state=0).fit(_frame(), y)


@pytest.mark.parametrize("y", [np.array(["no", "yes"] * 150, dtype=object), np.array([0, 1] * 150, dtype=np.uint8),
                               pd.Series(["no", "yes"] * 150, dtype="string")], ids=["object", "uint8", "string"])
def test_the_ensembles_classes_read_off_the_target_are_the_trees(y: object) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = DPDecisionTreeClassifier(epsilon=5.0, random_state=0).fit(_frame(), y)
        ensemble = DPTreeEnsembleClassifier(epsilon=5.0, random_state=0).fit(_frame(), y)
    assert ensemble.classes_.dtype == tree.classes_.dtype and ensemble.classes_.tolist() == tree.classes_.tolist()
    assert ensemble.predict(_frame()).dtype == tree.predict(_frame()).dtype


@pytest.mark.parametrize("model", [DPDecisionTreeClassifier, DPTreeEnsembleClassifier])
@pytest.mark.parametrize("y", [np.array(["a", 1] * 150, dtype=object), pd.Series([1.5, "b"] * 150, dtype=object)],
                         ids=["array", "series"])
def test_a_target_mixing_text_and_numbers_is_refused_naming_both(model: type, y: object) -> None:
    """numpy's sort failed deep in scikit-learn's checks: "TypeError: '<' not supported between
    instances of 'int' and 'str'"."""
    mixed = r"the target y mixes text and other labels \(.* at row [01], .* at row [01]\)"
    with pytest.raises(ValueError, match=mixed):
        model(epsilon=1.0, random_state=0).fit(_frame(), y)


def test_the_ensemble_checks_feature_names_once_in_its_own_name() -> None:
    """Predicting with an array after a fit on a DataFrame warned once a tree, naming
    DPDecisionTreeClassifier; a wrong column count was refused in the tree's name too."""
    X = _frame()
    y = np.where(X["a"] == "x", "yes", "no")
    schema = {"categories": {"a": ["w", "x", "y", "z"]}, "bounds": {"b": (-5, 5)}, "classes": ["no", "yes"]}
    fitted = DPTreeEnsembleClassifier(epsilon=5.0, random_state=0, **schema).fit(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        by_array = fitted.predict(X.to_numpy(dtype=object))
    assert [str(w.message) for w in caught] == [
        "X does not have valid feature names, but DPTreeEnsembleClassifier was fitted with feature names"]
    assert np.array_equal(by_array, fitted.predict(X))
    with pytest.raises(ValueError, match="X has 3 features, but DPTreeEnsembleClassifier is expecting 2"):
        fitted.predict(X.assign(c=1.0).to_numpy(dtype=object))
