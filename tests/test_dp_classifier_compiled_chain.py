"""The compiled subtree chain (``dprm.classifier._chain_kernel``) is the Python chain, draw for draw.

:func:`dprm.classifier.subtree_mcmc.mcmc_subtree` runs a fixed-length chain in one
compiled loop by default (``compiled=True``) and in Python with ``compiled=False``.
Both draw the same proposals from the same generator and the same acceptance
numbers, so on the same seeds they must end in the same tree (shape, tests, rows of
every node, leaf weights), leave the proposal generator in the same state and record
the same numbers of steps and acceptances. The schemas cover every kind of split
(multiway, category tests, both, numeric thresholds), missing values, the three
scores, complete subtrees (no leaves, the paper) and change moves; the privacy
tests (``test_dp_classifier_privacy.py``) check the compiled chain's final states
against the exact distribution.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dprm.classifier import DPDecisionTreeClassifier, export_text
from dprm.classifier import estimator as estimator_module
from dprm.classifier.encoding import FeatureEncoding
from dprm.classifier.subtree_mcmc import CHANGE_SHARE, mcmc_subtree
from dprm.classifier.subtree_search import GrowNode, SubtreeSpace
from dprm.datasets import make_planted_classification
from dprm.privacy import MetropolisChain, SeededNoise


def _cat(name: str, k: int) -> FeatureEncoding:
    return FeatureEncoding.categorical(name, tuple(f"{name}{i}" for i in range(k)))


def _num(name: str, n_thresholds: int) -> FeatureEncoding:
    grid = np.arange(1, n_thresholds + 1, dtype=np.float64)
    return FeatureEncoding.numeric(name, 0.0, float(n_thresholds + 1), grid)


def _data(rng: np.random.Generator, domains, n_rows: int, n_classes: int):
    codes = np.empty((n_rows, len(domains)), dtype=np.int32)
    for f, d in enumerate(domains):
        column = rng.integers(0, d.n_codes, n_rows)
        column[rng.random(n_rows) < 0.1] = d.missing_code
        codes[:, f] = column
    signal = (codes[:, 0] + codes[:, 1]) % n_classes
    y = np.where(rng.random(n_rows) < 0.7, signal, rng.integers(0, n_classes, n_rows))
    return codes, y.astype(np.int64)


def _tree(node: GrowNode):
    """Everything the chain decides about a node, recursively (rows as a sorted tuple; a leaf's weight)."""
    leaf_weight = node._leaf_weight[1] if node.option is None else None  # an inner node's is a cache
    return (node.option, node.final, node.missing_branch, tuple(sorted(node.rows.tolist())), leaf_weight,
            tuple(_tree(c) for c in node.children))


def _run(space: SubtreeSpace, depth: int, steps: int, change_share: float, seed: int, compiled: bool, rows):
    chain = MetropolisChain(SeededNoise(np.random.default_rng(seed)), 1.0 / space.eta)
    proposals = np.random.default_rng(seed + 1000)
    node = GrowNode(rows=rows.copy(), depth=0)
    made = mcmc_subtree(space, node, depth, chain, proposals, steps, change_share=change_share, compiled=compiled)
    return _tree(node), made, chain.n_proposed, chain.n_accepted, proposals.random()


CASES = {
    "binary-joint": (lambda: [_cat("a", 3), _cat("b", 4), _cat("c", 2)], "binary", "majority", True, True, 4),
    "both-majority": (lambda: [_cat("a", 3), _cat("b", 5), _num("x", 4)], "both", "majority", True, False, 3),
    "multiway-gini-complete": (lambda: [_cat("a", 3), _cat("b", 2), _num("x", 3)], "multiway", "gini", False,
                               False, 3),
    "multiway-joint-deep": (lambda: [_cat("a", 2), _cat("b", 3), _cat("c", 2), _num("x", 2)], "multiway",
                            "majority", True, True, 5),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("change_share", [0.0, CHANGE_SHARE])
def test_the_compiled_chain_ends_where_the_python_chain_ends(case: str, change_share: float) -> None:
    make_domains, splits, score, allow_leaves, joint, depth = CASES[case]
    domains = make_domains()
    rng = np.random.default_rng(11)
    n_classes = 3
    codes, y = _data(rng, domains, 400, n_classes)
    every_row, some_rows = np.arange(400, dtype=np.int32), np.flatnonzero(codes[:, 2] != 0).astype(np.int64)
    # each η with each row set (all rows as int32, a subset as int64), the seeds in turn: the seed only
    # picks another trajectory of the same code, which every run compares step by step already
    for eta, seed, rows in ((0.05, 0, every_row), (0.05, 1, some_rows), (0.5, 1, every_row), (0.5, 0, some_rows)):
        space = SubtreeSpace(codes, y, n_classes, domains, score=score, eta=eta, allow_leaves=allow_leaves,
                             leaf_prior=0.6, leaf_cost=0.0 if joint else 1.5, categorical_splits=splits,
                             joint_labels=joint)
        python = _run(space, depth, 200, change_share, seed, False, rows)
        compiled = _run(space, depth, 200, change_share, seed, True, rows)
        assert compiled == python, (case, eta, seed)


def test_a_seeded_default_fit_is_the_same_with_either_chain(monkeypatch) -> None:
    """The estimator's whole-tree fit (defaults, ε = 1 and 10) with the compiled chain and the Python one."""
    data = make_planted_classification(600, rng=np.random.default_rng(3))
    real = estimator_module.mcmc_subtree
    fits = {}
    for compiled in (False, True):
        monkeypatch.setattr(estimator_module, "mcmc_subtree",
                            lambda *args, compiled=compiled, **kwargs: real(*args, compiled=compiled, **kwargs))
        for epsilon in (1.0, 10.0):
            clf = DPDecisionTreeClassifier(epsilon=epsilon, categories=data.categories, classes=data.classes,
                                           random_state=4)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                clf.fit(data.X, data.y)
            assert clf.search_ == "mcmc"
            fits[compiled, epsilon] = (export_text(clf), clf.ledger_, clf.privacy_spent_)
    assert fits[True, 1.0] == fits[False, 1.0] and fits[True, 10.0] == fits[False, 10.0]


def test_the_class_limit_is_the_kernels() -> None:
    from dprm.classifier import _chain_kernel, subtree_mcmc

    assert subtree_mcmc.MAX_CLASSES == _chain_kernel.MAX_CLASSES
