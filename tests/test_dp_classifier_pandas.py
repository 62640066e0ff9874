"""The DP tree classifier and its ensemble on pandas inputs of pandas' own dtypes.

* A ``category`` column's declared categories (its dtype's, used or not) are the
  feature's domain where it is read off the data: a category no training row holds
  was an unknown value at prediction (code -1, routed as unseen), though the column
  said it exists.

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
