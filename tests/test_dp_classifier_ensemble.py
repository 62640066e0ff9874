"""The private ensemble of trees on disjoint row parts (:mod:`dprm.classifier.ensemble`, issue 29).

* the partition is data-independent and row by row: one row more or less leaves every
  other row in its part;
* the parts' accountants charge the ensemble's for the largest part's total only
  (parallel composition), before each release; the ensemble's ledger, the
  accountant and ``privacy_spent_`` agree and equal ε; a part cannot overspend;
* the whole fit is ε-indistinguishable on neighbouring datasets (empirical check).
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dprm.classifier.ensemble import DPTreeEnsembleClassifier, ParallelParts, PartAccountant, partition_rows
from dprm.errors import BudgetExceededError, ParameterError
from dprm.privacy import Accountant, SeededNoise


def test_the_partition_moves_no_other_row_when_one_is_removed() -> None:
    for seed in range(5):
        many = partition_rows(101, 3, np.random.default_rng(seed))
        fewer = partition_rows(100, 3, np.random.default_rng(seed))
        assert [p[p < 100].tolist() for p in many] == [p.tolist() for p in fewer]
    sizes = [len(p) for p in partition_rows(30_000, 3, np.random.default_rng(0))]
    assert all(abs(s - 10_000) < 500 for s in sizes)  # uniform


def test_the_parts_charge_the_ensemble_for_their_maximum_before_the_release() -> None:
    parent = Accountant(1, SeededNoise(np.random.default_rng(0)))
    shared = ParallelParts(parent, 3)
    parts = [PartAccountant(1, shared) for _ in range(3)]
    parts[0].charge("0.1", "rows", "m")
    parts[1].charge("0.3", "rows", "m")  # adds 0.2 to the maximum
    parts[2].charge("0.2", "rows", "m")  # covered
    assert parent.spent() == Fraction(3, 10)
    parts[0].charge("0.9", "split", "m")  # part 0 at 1.0: the excess 0.7
    assert parent.spent() == 1 and [e.epsilon for e in parent.ledger] == [Fraction(1, 10), Fraction(1, 5),
                                                                           Fraction(7, 10)]
    with pytest.raises(BudgetExceededError):
        parts[1].charge("0.8", "split", "m")  # over the part's own budget: nothing charged anywhere
    assert parent.spent() == 1 and parts[1].spent() == Fraction(3, 10)
    tight = Accountant("0.5", SeededNoise(np.random.default_rng(0)))
    with pytest.raises(BudgetExceededError):
        PartAccountant(1, ParallelParts(tight, 2)).charge("0.6", "rows", "m")  # over the ensemble's budget


def table(rng: np.random.Generator, n_rows: int):
    y = rng.integers(2, size=n_rows)
    X = pd.DataFrame({"a": np.where((y == 1) ^ (rng.random(n_rows) < 0.2), "p", "q"),
                      "b": rng.choice(["p", "q"], size=n_rows)})
    return X, np.array([f"k{c}" for c in y]), {"a": ["p", "q"], "b": ["p", "q"]}, ["k0", "k1"]


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
def test_the_ledger_adds_up_to_epsilon(epsilon: float) -> None:
    X, y, categories, classes = table(np.random.default_rng(1), 300)
    accountant = Accountant(epsilon, SeededNoise(np.random.default_rng(0)))
    clf = DPTreeEnsembleClassifier(n_estimators=3, epsilon=epsilon, max_depth=2, categories=categories,
                                   classes=classes, accountant=accountant, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        clf.fit(X, y)
    assert accountant.spent() == Fraction(str(epsilon))
    assert clf.privacy_spent_ == pytest.approx(epsilon, abs=1e-12)
    assert sum(e["epsilon"] for e in clf.ledger_) == pytest.approx(epsilon, abs=1e-12)
    assert all(tree.privacy_spent_ == pytest.approx(epsilon, abs=1e-12) for tree in clf.estimators_)
    assert all(e["step"].endswith("(parallel over 3 parts)") for e in clf.ledger_)
    assert clf.predict(X).shape == (300,) and set(clf.predict(X)) <= set(classes)


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    low = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def test_ensemble_fits_on_neighbours_do_not_contradict_epsilon() -> None:
    """300 fits of a 2-tree ensemble on ``D`` (40 rows) and on ``D`` plus one row:
    every output's (the predicted class of each possible input) Clopper–Pearson
    bounds keep the ratio within ``e^ε`` (1e-5 per comparison). Exact search."""
    epsilon, fits = 1.0, 300
    X, y, categories, classes = table(np.random.default_rng(2), 40)
    neighbour = (pd.concat([X, pd.DataFrame({"a": ["p"], "b": ["q"]})], ignore_index=True), np.append(y, "k1"))
    probe = pd.DataFrame({"a": ["p", "p", "q", "q"], "b": ["p", "q", "p", "q"]})
    counts = []
    for (data, target), base in (((X, y), 0), (neighbour, 100_000)):
        seen: dict = {}
        for seed in range(fits):
            clf = DPTreeEnsembleClassifier(n_estimators=2, epsilon=epsilon, max_depth=2, categories=categories,
                                           classes=classes, random_state=base + seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                clf.fit(data, target)
            key = tuple(clf.predict(probe))
            seen[key] = seen.get(key, 0) + 1
        counts.append(seen)
    assert len(counts[0]) > 1
    bound = math.exp(epsilon)
    for key in set(counts[0]) | set(counts[1]):
        a = clopper_pearson(counts[0].get(key, 0), fits, 1e-5)
        b = clopper_pearson(counts[1].get(key, 0), fits, 1e-5)
        assert a[0] <= bound * b[1] and b[0] <= bound * a[1], (key, counts[0].get(key), counts[1].get(key))


@pytest.mark.parametrize("keywords, message", [
    ({"n_estimators": 0}, "n_estimators must be in"), ({"n_estimators": 2.5}, "n_estimators must be an integer"),
    ({"epsilon": -1}, "epsilon must be > 0"), ({"max_depth": 0}, "max_depth must be in"),
    ({"random_state": -1}, r"random_state must be in \[0, 9223372036854775807\], got -1"),
    ({"random_state": "x"}, "random_state must be None, an integer in .* or a numpy.random.RandomState, got 'x'"),
])
def test_bad_keywords_are_refused_before_any_charge(keywords: dict, message: str) -> None:
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    with pytest.raises(ParameterError, match=message):
        DPTreeEnsembleClassifier(accountant=accountant, **keywords).fit([[0], [1]], [0, 1])
    assert accountant.spent() == 0 and not accountant.ledger


@pytest.mark.parametrize("kind", ["RandomState", "Generator"])
def test_a_random_state_object_seeds_the_ensemble_as_the_integer_drawn_from_it(kind: str) -> None:
    X, y, categories, classes = table(np.random.default_rng(1), 300)
    make = np.random.RandomState if kind == "RandomState" else np.random.default_rng
    seed = int(make(5).randint(2**63, dtype=np.int64) if kind == "RandomState" else make(5).integers(2**63))
    fits = []
    for random_state in (make(5), seed):
        clf = DPTreeEnsembleClassifier(n_estimators=2, epsilon=1.0, max_depth=2, categories=categories,
                                       classes=classes, random_state=random_state)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            fits.append(clf.fit(X, y))
    assert fits[0].ledger_ == fits[1].ledger_
    # the trees' seeds are the rng's draws after the noise's and the partition's: the same stream
    assert [t.random_state for t in fits[0].estimators_] == [t.random_state for t in fits[1].estimators_]
    other = DPTreeEnsembleClassifier(n_estimators=2, epsilon=1.0, max_depth=2, categories=categories,
                                     classes=classes, random_state=seed + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        other.fit(X, y)
    assert [t.random_state for t in other.estimators_] != [t.random_state for t in fits[1].estimators_]
    assert (fits[0].predict_proba(X) == fits[1].predict_proba(X)).all()
    assert fits[0].guarantee_ == fits[1].guarantee_ == "none" and fits[0].private_ is False


@pytest.mark.parametrize("as_frame", [False, True])
def test_predicting_no_rows_is_refused_in_the_ensembles_name(as_frame: bool) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 2))
    y = (X[:, 0] > 0).astype(int)
    if as_frame:
        X = pd.DataFrame(X, columns=["a", "b"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = DPTreeEnsembleClassifier(random_state=0).fit(X, y)
    for method in (model.predict, model.predict_proba):
        with pytest.raises(ValueError, match=r"0 sample\(s\).* required by DPTreeEnsembleClassifier\.$"):
            method(X[:0])
