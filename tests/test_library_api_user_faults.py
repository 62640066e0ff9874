"""Faults found using dprm as a scikit-learn user would (helper-D's round), each pinned.

Every test failed on the code before its fix and passes after (checked by running
this file with the unchanged sources first on the path):

- The classifiers and the private itemset estimate refused an ``epsilon`` their
  accountant could not afford with a :class:`~dprm.errors.ParameterError` only, and
  the miners with a :class:`~dprm.errors.BudgetExceededError`: a user catching the
  budget error around any dprm fit missed the classifiers' refusal. It is now an
  :class:`~dprm.errors.UnaffordableEpsilonError`, both (and still a ``ValueError``),
  raised at the same point, before any release.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dprm.classifier import DPDecisionTreeClassifier
from dprm.classifier.ensemble import DPTreeEnsembleClassifier
from dprm.errors import BudgetExceededError, ParameterError
from dprm.itemsets.private import fit_private_estimator
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
