"""The classifier's defaults (issue 29): ``embedding_depth="auto"`` and what it promises.

* ``"auto"`` is the whole tree for ``variant="dprm"`` at every ε and one level per
  computation for ``variant="paper"`` (the paper's behaviour, and the old default,
  unchanged); with dprm's defaults a noisy row count (``COUNT_SHARE`` of ε) comes
  first and may choose the small-budget release instead
  (``tests/test_dp_classifier_small_budget.py``);
* the default fit spends exactly ε (the count and one release, their sum equal to
  ``privacy_spent_``); with ``variant="paper"`` the ledger and ``privacy_spent_``
  agree and never exceed ε;
* the documented utility bound of the whole-tree release
  (:func:`dprm.classifier.parameters.auto_embedding_depth`): the training rows right
  are at least the majority class's less ``(ln(C / LEAF_PRIOR) + t) / ε_tree`` with
  probability at least ``1 - e^{-t}``, so the default is not far below the majority
  class even when ε cannot tell 19 classes apart.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprm.classifier import DPDecisionTreeClassifier
from dprm.classifier.parameters import LEAF_PRIOR, auto_embedding_depth
from dprm.classifier.small_budget import COUNT_SHARE
from dprm.privacy import Accountant, DiscreteLaplaceCount, SeededNoise

UCI = Path(__file__).resolve().parents[2] / "shared" / "data" / "uci"


@pytest.fixture(scope="module")
def vote():
    path = UCI / "vote.csv"
    if not path.exists():
        path = Path("/work/shared/data/uci/vote.csv")
    data = pd.read_csv(path, dtype=str, keep_default_na=False)
    y = data.pop("class").to_numpy()
    X = data.replace("?", np.nan)
    return X, y, {c: ["n", "y"] for c in X.columns}, ["democrat", "republican"]


def test_auto_is_the_whole_tree_for_dprm_and_one_level_for_the_paper(vote) -> None:
    """Where the small-budget rule keeps the tree (vote at ε ≥ 1); at ε = 0.1 it
    releases the chosen root split instead, one level."""
    X, y, categories, classes = vote
    for variant, epsilon, expected, release in (("dprm", 1.0, 3, "tree"), ("dprm", 10.0, 3, "tree"),
                                                ("paper", 1.0, 1, "tree"), ("dprm", 0.1, 1, "chosen split")):
        clf = DPDecisionTreeClassifier(epsilon=epsilon, max_depth=3, variant=variant, categories=categories,
                                       classes=classes, random_state=1, mcmc_steps=300)
        assert clf.embedding_depth == "auto"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            clf.fit(X, y)
        assert clf.release_ == release
        if release == "tree":
            assert clf.embedding_depth_ == expected == auto_embedding_depth(variant, 3)
        else:
            assert clf.embedding_depth_ == expected and clf.tree_.node_count > 1


def test_auto_is_the_row_count_then_the_explicit_whole_tree_with_the_rest(vote) -> None:
    """Where the small-budget rule keeps the tree, "auto" is the noisy row count
    (``COUNT_SHARE`` of ε) followed by exactly the seeded fit of the explicit whole
    tree with the rest of ε on the same noise stream: same tree, same ledger after
    the count."""
    X, y, categories, classes = vote
    epsilon, seed = Fraction(1, 2), 3
    auto = DPDecisionTreeClassifier(epsilon=0.5, max_depth=4, categories=categories, classes=classes,
                                    random_state=seed, mcmc_steps=400)
    accountant = Accountant(epsilon, SeededNoise(np.random.default_rng(seed)))
    DiscreteLaplaceCount(epsilon * COUNT_SHARE).release(accountant, "rows", len(y))
    explicit = DPDecisionTreeClassifier(epsilon=float(epsilon * (1 - COUNT_SHARE)), max_depth=4, embedding_depth=4,
                                        categories=categories, classes=classes, random_state=seed,
                                        mcmc_steps=400, accountant=accountant)
    trees = []
    for clf in (auto, explicit):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            clf.fit(X, y)
        trees.append((clf.tree_.feature.tolist(), clf.tree_.threshold.tolist(), clf.tree_.proba.tolist()))
    assert auto.release_ == explicit.release_ == "tree"
    assert trees[0] == trees[1]
    assert [e["step"] for e in auto.ledger_] == ["rows", "structure#1"]
    assert auto.ledger_[1] == explicit.ledger_[0]


@pytest.mark.parametrize(("variant", "epsilon"), [("dprm", 0.1), ("dprm", 1.0), ("dprm", 10.0), ("paper", 1.0),
                                                 ("paper", 10.0)])
def test_the_default_fit_spends_what_its_ledger_says_and_never_more_than_epsilon(vote, variant: str,
                                                                                   epsilon: float) -> None:
    """dprm: the row count, then one structure release with the rest (labels inside it), the budget
    all used (at ε = 0.1 the chosen root split, step ``split``, at ε ≥ 1 the whole tree). The paper: one computation per level and a leaf release, at most ε.
    In both the ledger, the accountant and ``privacy_spent_`` agree."""
    X, y, categories, classes = vote
    accountant = Accountant(epsilon, SeededNoise(np.random.default_rng(0)))
    clf = DPDecisionTreeClassifier(epsilon=epsilon, max_depth=3, categories=categories, classes=classes,
                                   accountant=accountant, mcmc_steps=300, variant=variant).fit(X, y)
    if variant == "dprm":
        second = "split" if epsilon < 1 else "structure#1"
        assert clf.release_ == ("chosen split" if epsilon < 1 else "tree")
        assert [e.step for e in accountant.ledger] == ["rows", second]
        assert clf.privacy_spent_ == pytest.approx(epsilon, abs=1e-12)
    else:
        assert 2 <= len(accountant.ledger) <= 4
        assert accountant.ledger[-1].step == "leaves"
    assert float(accountant.spent()) == clf.privacy_spent_
    assert sum(entry["epsilon"] for entry in clf.ledger_) == pytest.approx(clf.privacy_spent_, abs=1e-12)
    assert clf.privacy_spent_ <= epsilon + 1e-12


def many_classes(rng: np.random.Generator, n_rows: int, n_classes: int):
    """Labels with no signal in the features, one class larger than the others."""
    weights = np.ones(n_classes)
    weights[0] = 2.0
    y = rng.choice(n_classes, size=n_rows, p=weights / weights.sum())
    X = pd.DataFrame({f"a{i}": rng.choice(["p", "q", "r"], size=n_rows) for i in range(3)})
    return X, np.array([f"k{c:02d}" for c in y]), {c: ["p", "q", "r"] for c in X.columns}


def test_the_default_keeps_the_documented_bound_against_the_majority_class() -> None:
    """Exact whole-tree draws (a schema small enough for the exact search) on 19
    classes at ε = 0.1 (the level where the one-step tree fell below the majority
    class on soybean): the training rows right fall short of the majority class's by
    more than ``(ln(C / LEAF_PRIOR) + t) / ε`` in at most a share ``e^{-t}`` of the
    fits (t = 2: 13.5 %; allowed: 10 of 40, a binomial tail of 0.4 %). The bound is
    not vacuous: a release whose label ignored the data (right on about ``n / C``
    rows) would be below it in every fit."""
    n_classes, epsilon, t, fits = 19, 0.1, 2.0, 40
    # the tree's release gets ε less the row count's share (the rule keeps the tree here)
    slack = (math.log(n_classes / LEAF_PRIOR) + t) / (epsilon * (1 - float(COUNT_SHARE)))
    classes = [f"k{c:02d}" for c in range(n_classes)]

    def shortfalls(embedding_depth: int | str) -> int:
        short = 0
        for seed in range(fits):
            X, y, categories = many_classes(np.random.default_rng(seed), 3000, n_classes)
            assert len(y) / n_classes < pd.Series(y).value_counts().max() - slack
            clf = DPDecisionTreeClassifier(epsilon=epsilon, max_depth=2, embedding_depth=embedding_depth,
                                           search="exhaustive", categories=categories, classes=classes,
                                           random_state=100 + seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                clf.fit(X, y)
            assert clf.release_ == "tree"
            right = int(np.sum(clf.predict(X) == y))
            majority = int(pd.Series(y).value_counts().max())
            short += right < majority - slack
        return short

    assert shortfalls("auto") <= 10


@pytest.mark.parametrize(("variant", "expected"), [("dprm", 8), ("paper", 5)])
def test_max_depth_auto_is_the_measured_cap_and_spends_epsilon(vote, variant: str, expected: int) -> None:
    """``max_depth="auto"``: 8 for dprm (the whole tree of depth 8 in one release after
    the count), 5 for the paper; the ledger still sums to ``privacy_spent_`` and at most ε."""
    from dprm.classifier.parameters import AUTO_MAX_DEPTH, auto_max_depth

    X, y, categories, classes = vote
    clf = DPDecisionTreeClassifier(epsilon=1.0, max_depth="auto", variant=variant, categories=categories,
                                   classes=classes, random_state=2, mcmc_steps=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        clf.fit(X, y)
    assert clf.max_depth == "auto" and clf.max_depth_ == expected == auto_max_depth(variant)
    assert AUTO_MAX_DEPTH == 8
    if variant == "dprm":
        assert clf.embedding_depth_ == expected
        assert [e["step"] for e in clf.ledger_] in (["rows", "structure#1"], ["rows", "leaves"])
        assert clf.privacy_spent_ == pytest.approx(1.0, abs=1e-12)
    assert sum(e["epsilon"] for e in clf.ledger_) == pytest.approx(clf.privacy_spent_, abs=1e-12)
    assert clf.privacy_spent_ <= 1.0 + 1e-12


def test_max_depth_auto_is_checked_with_the_embedding_depth() -> None:
    from dprm.errors import ParameterError

    X = np.array([["a"], ["b"]] * 10, dtype=object)
    y = np.array(["p", "q"] * 10)
    with pytest.raises(ParameterError, match="embedding_depth"):
        DPDecisionTreeClassifier(max_depth="auto", embedding_depth=9, categories=[["a", "b"]],
                                 classes=["p", "q"]).fit(X, y)
    with pytest.raises(ParameterError, match="max_depth"):
        DPDecisionTreeClassifier(max_depth="deep", categories=[["a", "b"]], classes=["p", "q"]).fit(X, y)
