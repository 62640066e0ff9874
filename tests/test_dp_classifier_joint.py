"""Joint labels (the DP tree's default release): brute-force oracle and neighbour bound.

With ``SubtreeSpace(joint_labels=True)`` a candidate is a subtree *with a label per
leaf*, ``P(T, labels) ∝ μ(T) · C^(−leaves) · exp(η · score)``, score = rows whose
leaf's label is their class minus ``leaf_cost`` per non-missing-branch leaf. Tested:

* ``log_z`` equals the log-sum-exp over every labelled subtree, enumerated by brute
  force (1e-9), on tiny schemas;
* the exact sampler's structure and ``draw_label``'s labels have the joint
  distribution (chi-square over seeded draws);
* every labelled candidate's score moves by a value in [0, 1] when a row is added,
  and for every possible added row (a seeded third of them for binary splits)
  ``max |log P_D − log P_D'| ≤ ε`` with ``η = ε``
  (bounded range 1), a bound that is not vacuous;
* a seeded fit's ledger: one entry per computation run, shares halving, no leaf
  release, ``privacy_spent_`` = the ledger's sum ≤ ε.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import chisquare

from dprm.privacy import Accountant, SeededNoise, StructuredDraw
from dprm.classifier import DPDecisionTreeClassifier
from dprm.classifier.parameters import LEVEL_DECAY
from dprm.classifier.encoding import FeatureEncoding
from dprm.classifier.subtree_search import GrowNode, SubtreeSpace, exact_subtree

DOMAINS = [
    FeatureEncoding.categorical("a", ("x", "y")),
    FeatureEncoding.categorical("b", ("u", "v", "w")),
]


def space_for(codes: np.ndarray, y: np.ndarray, eta: float, splits: str, leaf_cost: float = 0.0) -> SubtreeSpace:
    return SubtreeSpace(codes, y, 2, DOMAINS, score="majority", eta=eta, allow_leaves=True,
                        leaf_prior=0.8, leaf_cost=leaf_cost, categorical_splits=splits, joint_labels=True)


def labelled_candidates(space: SubtreeSpace, rows: np.ndarray, remaining: int, used: frozenset, missing: bool):
    """Every (key, log μ, score) of labelled subtrees below a node, by brute force."""
    keys, mu, score = candidate_arrays(space, rows, remaining, used, missing)
    return list(zip(keys, mu.tolist(), score.tolist()))


def candidate_arrays(space: SubtreeSpace, rows: np.ndarray, remaining: int, used: frozenset, missing: bool):
    """:func:`labelled_candidates` as the list of keys and the arrays of log μ and of scores.

    A split's candidates are every combination of its children's: the keys in
    ``itertools.product`` order, and their log μ and scores summed over the children by
    broadcasting (the same C order), 150,000 combinations in a fraction of a second.
    """
    options = space.options(used) if remaining > 0 else []
    leaf_mu = space.log_prior_leaf(len(options)) if options else 0.0
    counts = np.bincount(space.y[rows], minlength=space.n_classes)
    cost = 0.0 if missing else space.leaf_cost
    keys = [("leaf", label) for label in range(space.n_classes)]
    mus = [np.full(space.n_classes, leaf_mu - math.log(space.n_classes))]
    scores = [counts.astype(np.float64) - cost]
    for option in options:
        parts = space.children_rows(rows, option)
        child_used = space.child_used(used, option)
        below = [candidate_arrays(space, part, remaining - 1, child_used, c == len(parts) - 1)
                 for c, part in enumerate(parts)]
        keys.extend(("split", option, combination) for combination in itertools.product(*(b[0] for b in below)))
        mu, score = np.zeros(()), np.zeros(())
        for _, child_mu, child_score in below:  # outer sums: the last child varies fastest, as in product
            mu = np.add.outer(mu, child_mu)
            score = np.add.outer(score, child_score)
        mus.append(space.log_prior_split(len(options)) + mu.ravel())
        scores.append(score.ravel())
    return keys, np.concatenate(mus), np.concatenate(scores)


def random_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    codes = np.column_stack([rng.integers(0, 3, n), rng.integers(0, 4, n)]).astype(np.int32)  # incl. missing
    y = (rng.random(n) < np.where(codes[:, 0] == 0, 0.8, 0.3)).astype(np.int64)
    return codes, y


@pytest.mark.parametrize("splits", ["binary", "multiway"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_log_z_equals_brute_force_over_labelled_subtrees(splits: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    codes, y = random_data(rng, 25)
    space = space_for(codes, y, eta=0.4, splits=splits, leaf_cost=0.7)
    rows = np.arange(len(y))
    for depth in (1, 2):
        brute = labelled_candidates(space, rows, depth, frozenset(), False)
        expected = float(logsumexp([mu + space.eta * score for _, mu, score in brute]))
        assert space.log_z(rows, depth, frozenset(), False) == pytest.approx(expected, abs=1e-9)


def structure_key(node: GrowNode, labels: bool = True):
    if node.option is None:
        return ("leaf", node.label) if labels else ("leaf",)
    return ("split", node.option, tuple(structure_key(c, labels) for c in node.children))


def test_exact_draws_with_labels_follow_the_joint_distribution() -> None:
    rng = np.random.default_rng(5)
    codes, y = random_data(rng, 12)
    space = space_for(codes, y, eta=0.3, splits="binary")
    rows = np.arange(len(y))
    brute = labelled_candidates(space, rows, 1, frozenset(), False)
    log_p = np.array([mu + space.eta * score for _, mu, score in brute])
    probability = dict(zip([key for key, _, _ in brute], np.exp(log_p - logsumexp(log_p))))
    noise = SeededNoise(np.random.default_rng(11))
    draws = Counter()
    n = 4000
    for _ in range(n):
        draw = StructuredDraw(noise, 1 / space.eta)
        root = GrowNode(rows=rows, depth=0)
        exact_subtree(space, root, 1, draw)
        for u in root.nodes():
            if u.option is None:
                u.label = space.draw_label(u, draw)
        draws[structure_key(root)] += 1
    keys = list(probability)
    assert set(draws) <= set(keys)
    expected = np.array([probability[k] * n for k in keys])
    observed = np.array([draws.get(k, 0) for k in keys])
    big = expected >= 5  # pool the rare candidates
    if not big.all():
        observed = np.append(observed[big], observed[~big].sum())
        expected = np.append(expected[big], expected[~big].sum())
    assert chisquare(observed, expected).pvalue > 1e-4


def log_probabilities(space: SubtreeSpace, rows: np.ndarray, depth: int) -> tuple[list, np.ndarray, np.ndarray]:
    """The candidates' keys, their log-probabilities and their scores (in the keys' order)."""
    keys, mu, score = candidate_arrays(space, rows, depth, frozenset(), False)
    log_p = mu + space.eta * score
    return keys, log_p - logsumexp(log_p), score


@pytest.mark.parametrize("splits", ["binary", "multiway"])
def test_neighbouring_datasets_bound_every_labelled_candidate(splits: str) -> None:
    epsilon = 0.9
    rng = np.random.default_rng(3)
    codes, y = random_data(rng, 10)
    worst = 0.0
    added = list(itertools.product(range(3), range(4), range(2)))  # every possible added row
    if splits == "binary":  # binary trees of depth 2 are many more: a seeded third of the rows
        added = [added[i] for i in np.random.default_rng(4).choice(len(added), 8, replace=False)]
    base = space_for(codes, y, eta=epsilon, splits=splits, leaf_cost=0.5)
    keys, p, score = log_probabilities(base, np.arange(len(y)), 2)  # the dataset without the added row: once
    assert len(set(keys)) == len(keys)  # each candidate once: positions name candidates
    for a, b, label in added:
        codes2 = np.vstack([codes, [[a, b]]]).astype(np.int32)
        y2 = np.append(y, label)
        more = space_for(codes2, y2, eta=epsilon, splits=splits, leaf_cost=0.5)
        keys2, q, score2 = log_probabilities(more, np.arange(len(y2)), 2)
        assert keys2 == keys  # the same candidates in the same order
        changes = score2 - score
        assert changes.min() >= 0 and changes.max() <= 1  # bounded range 1, same interval for all
        gap = float(np.abs(p - q).max())
        assert gap <= epsilon + 1e-9
        worst = max(worst, gap)
    assert worst >= 0.25 * epsilon  # the bound is not vacuous


def test_a_seeded_joint_fit_charges_each_computation_once_with_halving_shares() -> None:
    rng = np.random.default_rng(0)
    X = rng.choice(["p", "q", "r"], size=(400, 4)).astype(object)
    y = np.where((X[:, 0] == "p") | (X[:, 1] == "q"), "yes", "no")
    accountant = Accountant(2, SeededNoise(np.random.default_rng(1)))
    clf = DPDecisionTreeClassifier(epsilon=2, max_depth=3, embedding_depth=1, accountant=accountant,
                                   categories=[["p", "q", "r"]] * 4, classes=["no", "yes"], random_state=0)
    clf.fit(X, y)
    steps = [entry["step"] for entry in clf.ledger_]
    assert steps == [f"structure#{j + 1}" for j in range(len(steps))] and "leaves" not in steps
    shares = [float(LEVEL_DECAY) ** j for j in range(3)]
    expected = [2 * s / sum(shares) for s in shares][: len(steps)]
    assert [entry["epsilon"] for entry in clf.ledger_] == pytest.approx(expected)
    assert clf.privacy_spent_ == pytest.approx(sum(expected)) and clf.privacy_spent_ <= 2 + 1e-12
    assert float(accountant.spent()) == pytest.approx(clf.privacy_spent_)
    assert np.all(np.isin(clf.predict(X), ["no", "yes"]))
