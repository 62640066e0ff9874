"""Privacy of DPDecisionTreeClassifier: scores, exact and MCMC subtree draws, budget, labels.

What is tested
--------------
(a) **Bounded range of the scores.** On random small datasets and random
    neighbours (one row added or removed, random class and codes, missing values
    included), for every subtree of a small schema (enumerated) and many random
    deeper subtrees: the majority score (``SubtreeSpace(score="majority")``'s
    ``leaf_scores`` summed over the leaves, leaf costs included) of *every* subtree
    changes by a value in ``[0, 1]`` when a row is added (``[-1, 0]`` when one is
    removed), so the release may use ``R = 1``; the Gini score by at most 2.
(b) **Oracle for the exact and MCMC draws.** On tiny schemas (2-3 features with 2-3
    categories or thresholds, depth 2) every subtree is enumerated by brute force and
    ``P(T) ∝ μ(T) exp(η score(T))`` is computed from the documented base measure and
    score, written independently here. ``log_z`` and the probability the exact
    sampler gives each subtree (the product of its per-node choice probabilities)
    must equal the brute force to 1e-9; seeded draws of :func:`exact_subtree` and
    the final states of seeded :func:`mcmc_subtree` chains must fit it (chi-square,
    total variation) — with leaves allowed (dprm) and complete subtrees (paper).
(c) **StructuredExponentialMechanism at its boundary**: privacy map, cost, the
    scale ``R/ε`` rounded up (``η <= ε/R`` exactly, the next smaller float is not),
    the accountant's refusal before any noise is drawn.
(d) **The fit's ledger** adds up to epsilon (dprm: structure computations +
    leaves; paper: ``ε/(⌈D/d⌉+1)`` each) and ``privacy_spent_`` equals it, for
    several ``(max_depth, embedding_depth)``; every release is charged before its
    noise; the classifier hands the sampler ``η <= ε_j / R``.
(e) **Guarantee labels** of seeded, secure, MCMC and undeclared-domain fits.
(f) **Neighbouring datasets**: for the exhaustive search, the exact probability of
    every released structure under ``D`` and ``D' = D + row`` is within ``exp(±ε)``
    for *every* possible added row (the real test, exact); and an empirical check on
    seeded draws that does not contradict it (Clopper–Pearson bounds).

Everything is seeded; the statistical tests use fixed seeds and thresholds whose
false-alarm probability is stated next to them.
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import logsumexp

from dprm.errors import BudgetExceededError, ParameterError
from dprm.privacy import (
    Accountant,
    MetropolisChain,
    SecureNoise,
    SeededNoise,
    StructuredExponentialMechanism,
)
from dprm.privacy.accountant import SEEDED_REASON
from dprm.privacy.budget import as_epsilon
from dprm.privacy.scale import float_down
from dprm.privacy.structured import StructuredDraw
from dprm.classifier import DPDecisionTreeClassifier
from dprm.classifier import estimator as classifier_module
from dprm.classifier.encoding import CATEGORICAL, FeatureEncoding
from dprm.classifier.subtree_mcmc import mcmc_subtree
from dprm.classifier.subtree_search import GrowNode, SubtreeSpace, exact_subtree

UCI = Path(__file__).resolve().parents[2] / "shared" / "data" / "uci"


# -- an independent model of the subtree space ------------------------------------------
#
# A subtree *shape* is ``None`` (a leaf) or ``(feature, j, (child shapes...))``, ``j``
# being the threshold index (numeric), the tested category (binary categorical) or -1
# (multiway categorical). Everything below follows the documented rules of
# dprm.classifier.subtree_search, written without its code.


def cat(name: str, k: int) -> FeatureEncoding:
    return FeatureEncoding.categorical(name, tuple(f"{name}{i}" for i in range(k)))


def num(name: str, n_thresholds: int) -> FeatureEncoding:
    grid = np.arange(1, n_thresholds + 1, dtype=np.float64)
    return FeatureEncoding.numeric(name, 0.0, float(n_thresholds + 1), grid)


def options_of(domains, used, splits):
    out = []
    for f, d in enumerate(domains):
        if d.kind == CATEGORICAL:
            if d.n_codes < 2:
                continue
            if splits in ("multiway", "both") and f not in used:
                out.append((f, -1))
            if splits == "binary":
                out.extend((f, v) for v in range(1 if d.n_codes == 2 else d.n_codes))
            if splits == "both" and d.n_codes > 2:  # a two-category test would repeat the multiway split
                out.extend((f, v) for v in range(d.n_codes))
        else:
            out.extend((f, j) for j in range(len(d.thresholds)))
    return out


def multiway(domains, option, splits) -> bool:
    f, j = option
    return domains[f].kind == CATEGORICAL and splits in ("multiway", "both") and j < 0


def n_children(domains, option, splits) -> int:
    return domains[option[0]].n_codes + 1 if multiway(domains, option, splits) else 3


def child_used(domains, used, option, splits):
    return used | {option[0]} if multiway(domains, option, splits) else used


def child_index(codes, domains, option, splits) -> np.ndarray:
    """Child of each row (missing-values child last)."""
    f, j = option
    column = codes[:, f]
    missing = domains[f].n_codes
    if multiway(domains, option, splits):
        return column.astype(np.int64)
    below = (column == j) if domains[f].kind == CATEGORICAL else (column <= j)
    return np.where(column == missing, 2, np.where(below, 0, 1))


def all_shapes(domains, used, remaining, allow_leaves, splits):
    options = options_of(domains, used, splits)
    if remaining == 0 or not options:
        return [None]
    out = [None] if allow_leaves else []
    for option in options:
        below = all_shapes(domains, child_used(domains, used, option, splits), remaining - 1, allow_leaves, splits)
        out.extend((option[0], option[1], combo) for combo in itertools.product(below, repeat=n_children(domains, option, splits)))
    return out


def random_shape(rng, domains, used, remaining, splits, p_leaf=0.3):
    options = options_of(domains, used, splits)
    if remaining == 0 or not options or rng.random() < p_leaf:
        return None
    option = options[int(rng.integers(len(options)))]
    cu = child_used(domains, used, option, splits)
    return (option[0], option[1], tuple(random_shape(rng, domains, cu, remaining - 1, splits, p_leaf)
                                        for _ in range(n_children(domains, option, splits))))


def log_mu(shape, domains, used, remaining, allow_leaves, splits, leaf_prior) -> float:
    """Documented base measure: leaf ``leaf_prior``, each split ``(1 - leaf_prior)/m``
    (allow_leaves), every complete subtree 1 (paper); boundary / option-less nodes 1."""
    options = options_of(domains, used, splits)
    if remaining == 0 or not options:
        assert shape is None
        return 0.0
    if shape is None:
        return math.log(leaf_prior) if allow_leaves else -math.inf
    option = (shape[0], shape[1])
    here = math.log1p(-leaf_prior) - math.log(len(options)) if allow_leaves else 0.0
    cu = child_used(domains, used, option, splits)
    return here + sum(log_mu(c, domains, cu, remaining - 1, allow_leaves, splits, leaf_prior) for c in shape[2])


def own_leaf_score(counts: np.ndarray, missing_branch: bool, score: str, leaf_cost: float) -> float:
    if score == "majority":
        return float(counts.max()) - (0.0 if missing_branch else leaf_cost)
    size = float(counts.sum())
    return 0.0 if size == 0 else -(size - float(np.square(counts).sum()) / size)


def leaf_values(shape, codes, rows, domains, splits, value, cache: dict, missing_branch=False) -> tuple:
    """``value(rows, missing_branch)`` of every leaf of ``shape`` (boundary nodes included), in order.

    ``cache`` holds each subtree's values by (subtree, rows, missing branch): the
    enumerated shapes share most of their subtrees, so each is scored once per dataset.
    """
    key = (shape, missing_branch, rows.tobytes())
    if key not in cache:
        if shape is None:
            cache[key] = (value(rows, missing_branch),)
        else:
            child = child_index(codes[rows], domains, (shape[0], shape[1]), splits)
            last = len(shape[2]) - 1
            cache[key] = tuple(v for c, sub in enumerate(shape[2])
                               for v in leaf_values(sub, codes, rows[child == c], domains, splits, value, cache,
                                                    c == last))
    return cache[key]


def own_score(shape, codes, y, n_classes, domains, splits, score, leaf_cost, cache=None) -> float:
    rows = np.arange(codes.shape[0])
    return sum(leaf_values(shape, codes, rows, domains, splits,
                           lambda r, m: own_leaf_score(np.bincount(y[r], minlength=n_classes), m, score, leaf_cost),
                           {} if cache is None else cache))


def library_score(space: SubtreeSpace, shape, cache=None) -> float:
    """The library's score: ``space.leaf_scores`` summed over the shape's leaves
    (``cache``: see :func:`leaf_values`; one per space)."""
    rows = np.arange(space.codes.shape[0])
    return sum(leaf_values(shape, space.codes, rows, space.domains, space.categorical_splits,
                           lambda r, m: float(space.leaf_scores(space.counts(r), m)), {} if cache is None else cache))


def brute_log_weights(space: SubtreeSpace, shapes, depth: int) -> np.ndarray:
    """``log μ(T) + η score(T)`` of every shape, from the independent model."""
    d, splits = space.domains, space.categorical_splits
    cache: dict = {}
    return np.array([
        log_mu(s, d, frozenset(), depth, space.allow_leaves, splits, space.leaf_prior)
        + space.eta * own_score(s, space.codes, space.y, space.n_classes, d, splits, space.score, space.leaf_cost,
                                cache)
        for s in shapes
    ])


def sampler_log_prob(space: SubtreeSpace, shape, rows, remaining, used=frozenset(), missing_branch=False,
                     cache=None) -> float:
    """``log P`` that :func:`exact_subtree` draws ``shape``: the product of the choice
    probabilities ``softmax(leaf, splits)`` it uses at every node on the way
    (``cache``: the nodes' ``choice_weights`` and each subtree's value at a node, shared
    between shapes: the enumerated shapes share most of their subtrees)."""
    cache = {} if cache is None else cache
    key = (remaining, used, missing_branch, rows.tobytes())
    if (shape, key) in cache:
        return cache[shape, key]
    if key not in cache:
        leaf, options, weights = space.choice_weights(rows, remaining, used, missing_branch)
        logits = np.concatenate(([leaf], weights))
        cache[key] = (float(leaf), list(options), weights, float(logsumexp(logits)))
    leaf, options, weights, norm = cache[key]
    if not options:
        assert shape is None
        total = 0.0
    elif shape is None:
        total = leaf - norm
    else:
        option = (shape[0], shape[1])
        total = float(weights[options.index(option)]) - norm
        d, splits = space.domains, space.categorical_splits
        child = child_index(space.codes[rows], d, option, splits)
        cu = child_used(d, used, option, splits)
        last = len(shape[2]) - 1
        for c, sub in enumerate(shape[2]):
            total += sampler_log_prob(space, sub, rows[child == c], remaining - 1, cu, c == last, cache)
    cache[shape, key] = total
    return total


def node_shape(node: GrowNode):
    if node.option is None:
        return None
    return (int(node.option[0]), int(node.option[1]), tuple(node_shape(c) for c in node.children))


def random_data(rng, domains, n_rows, n_classes, missing=0.15):
    codes = np.empty((n_rows, len(domains)), dtype=np.int32)
    for f, d in enumerate(domains):
        column = rng.integers(0, d.n_codes, n_rows)
        column[rng.random(n_rows) < missing] = d.missing_code
        codes[:, f] = column
    # a class that depends on the first feature, so that the scores differ
    y = np.where(rng.random(n_rows) < 0.6, codes[:, 0] % n_classes, rng.integers(0, n_classes, n_rows))
    return codes, y.astype(np.int64)


def random_row(rng, domains, n_classes):
    code = [int(rng.integers(0, d.n_codes + 1)) for d in domains]  # the last code: missing
    return np.array([code], dtype=np.int32), int(rng.integers(n_classes))


def all_rows(domains, n_classes):
    for code in itertools.product(*[range(d.n_codes + 1) for d in domains]):
        for c in range(n_classes):
            yield np.array([code], dtype=np.int32), c


def make_space(codes, y, n_classes, domains, *, score="majority", allow_leaves=True, eta=0.5,
               splits="multiway", leaf_cost=1.5, leaf_prior=0.4) -> SubtreeSpace:
    return SubtreeSpace(codes, y, n_classes, domains, score=score, eta=eta, allow_leaves=allow_leaves,
                        leaf_prior=leaf_prior, leaf_cost=leaf_cost, categorical_splits=splits)


#: Tiny schemas of the oracle tests: (domains, categorical_splits).
SCHEMAS = {
    "cat2-cat3": ([cat("a", 2), cat("b", 3)], "multiway"),
    "cat2-num2": ([cat("a", 2), num("x", 2)], "multiway"),
    "cat3-cat2-cat2": ([cat("a", 3), cat("b", 2), cat("c", 2)], "multiway"),
    "binary-cat3": ([cat("a", 3)], "binary"),
    "both-cat3-cat2": ([cat("a", 3), cat("b", 2)], "both"),
}


# -- (a) the scores' bounded range ---------------------------------------------------------


def score_changes(domains, splits, shapes, codes, y, n_classes, row, label, score):
    """Score change of every shape when ``row`` (class ``label``) is added."""
    before = make_space(codes, y, n_classes, domains, score=score, splits=splits)
    after = make_space(np.vstack([codes, row]), np.append(y, label), n_classes, domains, score=score, splits=splits)
    caches: tuple[dict, dict] = ({}, {})
    return np.array([library_score(after, s, caches[0]) - library_score(before, s, caches[1]) for s in shapes])


@pytest.mark.parametrize("schema", sorted(SCHEMAS))
@pytest.mark.parametrize("seed", range(4))
def test_every_subtree_score_moves_within_its_bounded_range(schema: str, seed: int) -> None:
    """Adding a row moves the majority score of *every* subtree by a value in [0, 1]
    and the Gini score by at most 2; removing one, majority in [-1, 0]. Every subtree
    of the schema (depth 2), random data sizes (the empty dataset included)."""
    rng = np.random.default_rng(1000 + seed)
    domains, splits = SCHEMAS[schema]
    shapes = all_shapes(domains, frozenset(), 2, True, splits)
    n_classes = int(rng.integers(2, 4))
    for trial in range(6):
        n_rows = 0 if trial == 0 else int(rng.integers(1, 30))
        codes, y = random_data(rng, domains, n_rows, n_classes)
        row, label = random_row(rng, domains, n_classes)
        majority = score_changes(domains, splits, shapes, codes, y, n_classes, row, label, "majority")
        assert majority.min() >= 0.0 and majority.max() <= 1.0, (trial, majority.min(), majority.max())
        gini = score_changes(domains, splits, shapes, codes, y, n_classes, row, label, "gini")
        assert np.abs(gini).max() <= 2.0 + 1e-12
        if n_rows:
            drop = int(rng.integers(n_rows))
            keep = np.arange(n_rows) != drop
            removed = -score_changes(
                domains, splits, shapes, codes[keep], y[keep], n_classes, codes[drop : drop + 1], int(y[drop]), "majority"
            )
            assert removed.min() >= -1.0 and removed.max() <= 0.0


@pytest.mark.parametrize("splits", ["multiway", "binary", "both"])
@pytest.mark.parametrize("seed", range(3))
def test_random_deep_subtrees_keep_the_bounded_range(splits: str, seed: int) -> None:
    """Random subtrees of depth 4 over mixed features: the same intervals."""
    rng = np.random.default_rng(2000 + seed)
    domains = [cat("a", 3), cat("b", 2), num("x", 3), cat("c", 4), num("z", 5)]
    n_classes = 3
    shapes = [random_shape(rng, domains, frozenset(), 4, splits, p_leaf=0.2) for _ in range(150)]
    for _ in range(4):
        codes, y = random_data(rng, domains, int(rng.integers(5, 80)), n_classes)
        row, label = random_row(rng, domains, n_classes)
        majority = score_changes(domains, splits, shapes, codes, y, n_classes, row, label, "majority")
        assert majority.min() >= 0.0 and majority.max() <= 1.0
        gini = score_changes(domains, splits, shapes, codes, y, n_classes, row, label, "gini")
        assert np.abs(gini).max() <= 2.0 + 1e-12


def test_library_leaf_scores_follow_the_documented_formulas() -> None:
    """``leaf_scores``: majority count less the leaf cost (none on a missing-values
    branch); Gini ``-(τ - Σ τ_c² / τ)``, 0 for an empty leaf."""
    domains = [cat("a", 2)]
    space = make_space(np.zeros((1, 1), dtype=np.int32), np.zeros(1, dtype=np.int64), 3, domains, leaf_cost=0.75)
    counts = np.array([[5, 2, 0], [0, 0, 0], [1, 1, 1]])
    for row in counts:
        for missing in (False, True):
            assert float(space.leaf_scores(row, missing)) == pytest.approx(own_leaf_score(row, missing, "majority", 0.75))
    gini = make_space(np.zeros((1, 1), dtype=np.int32), np.zeros(1, dtype=np.int64), 3, domains, score="gini")
    for row in counts:
        assert float(gini.leaf_scores(row, False)) == pytest.approx(own_leaf_score(row, False, "gini", 0.0))


# -- (b) oracle: exact and MCMC draws against brute force ---------------------------------


ORACLE_CASES = [
    (schema, score, allow_leaves)
    for schema in sorted(SCHEMAS)
    for score, allow_leaves in (("majority", True), ("gini", False), ("majority", False), ("gini", True))
]


@pytest.mark.parametrize(("schema", "score", "allow_leaves"), ORACLE_CASES)
def test_log_z_and_sampler_probabilities_equal_brute_force(schema: str, score: str, allow_leaves: bool) -> None:
    """``log_z`` equals the log-sum-exp over all enumerated subtrees and the exact
    sampler's probability of each subtree equals ``μ(T) exp(η score(T)) / Z``, to 1e-9
    (several datasets, the empty one included)."""
    domains, splits = SCHEMAS[schema]
    shapes = all_shapes(domains, frozenset(), 2, allow_leaves, splits)
    assert len(set(shapes)) == len(shapes) >= 2
    rng = np.random.default_rng(hash((schema, score, allow_leaves)) % 2**32)
    for n_rows in (0, 7, 40):
        codes, y = random_data(rng, domains, n_rows, 2)
        eta = float(rng.uniform(0.1, 1.5))
        space = make_space(codes, y, 2, domains, score=score, allow_leaves=allow_leaves, eta=eta, splits=splits)
        weights = brute_log_weights(space, shapes, 2)
        brute = float(logsumexp(weights))
        rows = np.arange(n_rows)
        assert abs(space.log_z(rows, 2, frozenset(), False) - brute) <= 1e-9 * max(1.0, abs(brute))
        cache: dict = {}
        library = np.array([sampler_log_prob(space, s, rows, 2, cache=cache) for s in shapes])
        np.testing.assert_allclose(library, weights - brute, rtol=0, atol=1e-9)
        assert abs(float(logsumexp(library))) <= 1e-9  # nothing outside the enumeration


def remember_choice_weights(space: SubtreeSpace) -> SubtreeSpace:
    """``space`` with ``choice_weights`` remembered per node (its rows, depth left, used options, branch).

    The weights are a deterministic function of these (and of the space), so the draws are
    exactly those of the unremembered space: thousands of draws over the same few nodes then
    compute each node's weights once instead of at every draw (``log_z`` calls it too).
    """
    compute = space.choice_weights
    known: dict = {}

    def choice_weights(rows, remaining, used, missing_branch):
        key = (np.asarray(rows).tobytes(), remaining, used, missing_branch)
        if key not in known:
            known[key] = compute(rows, remaining, used, missing_branch)
        return known[key]

    space.choice_weights = choice_weights
    return space


def draw_frequencies(space, depth, n, seed):
    space = remember_choice_weights(space)
    noise = SeededNoise(np.random.default_rng(seed))
    draw = StructuredDraw(noise, 1.0 / space.eta)
    assert draw.eta == space.eta
    counts: dict = {}
    for _ in range(n):
        node = GrowNode(rows=np.arange(space.codes.shape[0]), depth=0)
        exact_subtree(space, node, depth, draw)
        key = node_shape(node)
        counts[key] = counts.get(key, 0) + 1
    return counts


def chi_square_p(counts: dict, shapes, log_p: np.ndarray) -> float:
    """p-value of the observed counts against ``exp(log_p)`` (cells with an expected
    count below 5 pooled)."""
    assert set(counts) <= set(shapes), "a draw outside the enumerated subtrees"
    n = sum(counts.values())
    expected = n * np.exp(log_p)
    observed = np.array([counts.get(s, 0) for s in shapes], dtype=float)
    small = expected < 5
    obs = np.append(observed[~small], observed[small].sum())
    exp_ = np.append(expected[~small], expected[small].sum())
    if exp_[-1] == 0:
        obs, exp_ = obs[:-1], exp_[:-1]
    return float(stats.chisquare(obs, exp_ * obs.sum() / exp_.sum()).pvalue)


@pytest.mark.parametrize(
    ("schema", "score", "allow_leaves"),
    [("cat2-num2", "gini", False), ("binary-cat3", "majority", True), ("both-cat3-cat2", "majority", True)],
)
def test_exact_sampler_frequencies_fit_brute_force(schema: str, score: str, allow_leaves: bool) -> None:
    """1000 seeded draws of :func:`exact_subtree` fit the brute-force distribution
    (chi-square; a false alarm has probability 1e-4).

    The schemas cover multiway splits (categorical and numeric), binary category tests,
    both at once, and both scores; the probability of every subtree is checked exactly
    by ``test_log_z_and_sampler_probabilities_equal_brute_force`` on every schema.
    Power at 1000 draws (measured on both-cat3-cat2): draws from a space with the leaf
    prior 0.3 instead of 0.4 (total variation 0.14) give p = 1e-5, a leaf cost of 1.0
    instead of 1.5 (TV 0.11) p = 3e-6, twice the η p = 1e-67: all fail."""
    domains, splits = SCHEMAS[schema]
    shapes = all_shapes(domains, frozenset(), 2, allow_leaves, splits)
    rng = np.random.default_rng(7)
    codes, y = random_data(rng, domains, 30, 2)
    space = make_space(codes, y, 2, domains, score=score, allow_leaves=allow_leaves, eta=0.25, splits=splits)
    log_p = brute_log_weights(space, shapes, 2)
    log_p -= logsumexp(log_p)
    assert np.exp(log_p).max() < 0.5  # a spread-out target, so the test has power
    counts = draw_frequencies(space, 2, 1000, seed=11)
    assert chi_square_p(counts, shapes, log_p) > 1e-4


def total_variation(counts: dict, shapes, log_p) -> float:
    n = sum(counts.values())
    observed = np.array([counts.get(s, 0) for s in shapes], dtype=float) / n
    return 0.5 * float(np.abs(observed - np.exp(log_p)).sum())


def sampling_total_variation(log_p, n: int) -> float:
    """Expected total variation of ``n`` exact draws from their distribution
    (``E|p̂ - p| ≈ sqrt(2 p (1 - p) / (π n))`` per cell)."""
    p = np.exp(log_p)
    return 0.5 * float(np.sqrt(2 * p * (1 - p) / (math.pi * n)).sum())


@pytest.mark.parametrize(
    ("schema", "score", "allow_leaves", "change_share"),
    [("cat2-cat3", "majority", True, 0.0), ("cat2-num2", "gini", False, 0.0), ("both-cat3-cat2", "majority", True, 0.0),
     ("cat2-num2", "gini", False, 0.5), ("both-cat3-cat2", "majority", True, 0.5), ("binary-cat3", "majority", True, 0.5),
     ("cat2-num2", "majority", True, 0.9)],  # 0.9: few regrow steps, so the chains run 400 steps
)
def test_mcmc_final_states_fit_brute_force(schema: str, score: str, allow_leaves: bool, change_share: float) -> None:
    """The final states of 1000 independent seeded chains (40 steps each) fit the
    exponential mechanism's distribution: a chi-square p-value above 1e-4 and a total
    variation within 0.05 of what exact draws would show. (A proposal ratio that
    misstates the generating distribution, leaf 0.6 instead of 0.75, fails the
    chi-square here with p ~ 1e-7.) With change moves (a share of the steps swaps a
    two-way test and keeps the subtree below) the limit is the same distribution."""
    domains, splits = SCHEMAS[schema]
    shapes = all_shapes(domains, frozenset(), 2, allow_leaves, splits)
    rng = np.random.default_rng(7)
    codes, y = random_data(rng, domains, 30, 2)
    eta = 0.25
    space = make_space(codes, y, 2, domains, score=score, allow_leaves=allow_leaves, eta=eta, splits=splits)
    log_p = brute_log_weights(space, shapes, 2)
    log_p -= logsumexp(log_p)
    chain = MetropolisChain(SeededNoise(np.random.default_rng(5)), 1.0 / eta)
    proposals = np.random.default_rng(6)
    counts: dict = {}
    n = 1000
    for _ in range(n):
        node = GrowNode(rows=np.arange(codes.shape[0]), depth=0)
        mcmc_subtree(space, node, 2, chain, proposals, 40 if change_share <= 0.5 else 400, change_share=change_share)
        key = node_shape(node)
        counts[key] = counts.get(key, 0) + 1
    assert chi_square_p(counts, shapes, log_p) > 1e-4
    assert total_variation(counts, shapes, log_p) < sampling_total_variation(log_p, n) + 0.05


# -- (c) the structured exponential mechanism at its boundary ---------------------------


class LoggedNoise(SeededNoise):
    """Seeded noise that logs ``(kind, ledger length, last step)`` at every draw."""

    def __init__(self, rng: np.random.Generator) -> None:
        super().__init__(rng)
        self.accountant: Accountant | None = None
        self.draws: list[tuple[str, int, str | None]] = []

    def _log(self, kind: str) -> None:
        ledger = self.accountant.ledger if self.accountant is not None else []
        self.draws.append((kind, len(ledger), ledger[-1].step if ledger else None))

    def discrete_laplace(self, values, scale):
        self._log("discrete_laplace")
        return super().discrete_laplace(values, scale)

    def gumbel(self, size):
        self._log("gumbel")
        return super().gumbel(size)

    def uniform(self, size):
        self._log("uniform")
        return super().uniform(size)

    def noisy_max(self, scores, scale, sampler="gumbel"):
        self._log("noisy_max")
        return super().noisy_max(scores, scale, sampler)


def logged_accountant(total, seed: int = 0) -> tuple[Accountant, LoggedNoise]:
    noise = LoggedNoise(np.random.default_rng(seed))
    accountant = Accountant(total, noise)
    noise.accountant = accountant
    return accountant, noise


def test_structured_mechanism_privacy_map_cost_and_ledger() -> None:
    """The privacy map is ``d_in ε / Δ`` (the charged ε at ``d_in = Δ``); one start
    charges ε once, also for a batch over disjoint parts; the default range is 2Δ
    and a range above 2Δ is refused."""
    mechanism = StructuredExponentialMechanism(Fraction(3, 10), sensitivity=1, score_range=1)
    assert mechanism.privacy_map(1) == Fraction(3, 10)
    assert mechanism.privacy_map(2) == Fraction(3, 5)
    assert StructuredExponentialMechanism(1, sensitivity=2).privacy_map(2) == 1
    assert StructuredExponentialMechanism(0.5, sensitivity=2).score_range == 4
    assert StructuredExponentialMechanism(0.5, sensitivity=2).scale == 8.0
    with pytest.raises(ParameterError, match="score_range"):
        StructuredExponentialMechanism(0.5, sensitivity=1, score_range=3)
    accountant, noise = logged_accountant(Fraction(3, 5))
    mechanism.start(accountant, "structure#1")
    mechanism.start(accountant, "structure#2", parts=3)
    assert [e.epsilon for e in accountant.ledger] == [Fraction(3, 10)] * 2
    assert accountant.remaining() == 0
    assert "parallel over 3 disjoint parts" in accountant.ledger[1].mechanism
    assert {e.guarantee for e in accountant.ledger} == {"pure-dp; floating-point selection"}
    assert noise.draws == []  # starting a release draws nothing


@pytest.mark.parametrize("score_range", [1, 2, 3, 4])
def test_structured_scale_is_range_over_epsilon_rounded_up(score_range: int) -> None:
    """``scale`` is the smallest float with ``R / scale <= ε`` (the next smaller float
    spends more than the float ε), and the draw's ``eta = 1/scale`` never exceeds
    ``ε/R`` (the exponent of the release must not spend more than charged). 400
    seeded epsilons per range, and classic decimals."""
    rng = np.random.default_rng(score_range)
    epsilons = [0.1, 0.3, 1 / 3, 0.7, 1.0, 2.5, 1e-3, 1.057514585101737] + list(rng.uniform(1e-3, 10, 400))
    sensitivity = 2 if score_range > 2 else 1
    for eps in epsilons:
        mechanism = StructuredExponentialMechanism(eps, sensitivity=sensitivity, score_range=score_range)
        exact = as_epsilon(eps)  # a float epsilon is read as typed: 0.1 is 1/10
        scale = mechanism.scale
        assert Fraction(score_range) / Fraction(scale) <= exact
        smaller = math.nextafter(scale, 0.0)
        assert Fraction(score_range) / Fraction(smaller) > Fraction(float_down(exact))
        draw = mechanism.start(Accountant(100, SeededNoise(np.random.default_rng(0))), "s")
        assert Fraction(draw.eta) * score_range <= exact, (eps, draw.eta)


def test_accountant_refuses_an_over_budget_release_before_any_noise() -> None:
    """Exactly the remaining budget is accepted; a hair more is refused with nothing
    recorded and no noise drawn."""
    accountant, noise = logged_accountant(Fraction(1, 2))
    StructuredExponentialMechanism(Fraction(3, 10), 1, 1).start(accountant, "a")
    with pytest.raises(BudgetExceededError):
        StructuredExponentialMechanism(Fraction(1, 5) + Fraction(1, 10**12), 1, 1).start(accountant, "b")
    assert len(accountant.ledger) == 1 and accountant.spent() == Fraction(3, 10)
    assert noise.draws == []
    draw = StructuredExponentialMechanism(Fraction(1, 5), 1, 1).start(accountant, "c")
    assert accountant.remaining() == 0
    draw.choose([0.0, 1.0])
    assert noise.draws and all(n == 2 and step == "c" for _, n, step in noise.draws)


# -- (d) the fit's ledger and what it hands the samplers --------------------------------


def vote() -> tuple[pd.DataFrame, np.ndarray, dict, list]:
    frame = pd.read_csv(UCI / "vote.csv", na_values="?")
    X = frame.drop(columns="class")
    y = frame["class"].to_numpy()
    return X, y, {c: ["n", "y"] for c in X.columns}, ["democrat", "republican"]


@pytest.fixture(scope="module")
def vote_data():
    if not (UCI / "vote.csv").exists():
        pytest.skip("the UCI data is not present")
    return vote()


def documented_shares(variant: str, leaf_labels: str, k: int, epsilon: Fraction) -> tuple[list[Fraction], Fraction | None]:
    """Structure computations' and leaves' epsilons (classifier docstring): the paper
    ``ε/(k+1)`` each; dprm: ``ε`` (joint labels) or ``(1 - LEAF_SHARE) ε`` (noisy
    counts) split over the computations in proportions ``LEVEL_DECAY**j``."""
    if variant == "paper":
        return [epsilon / (k + 1)] * k, epsilon / (k + 1)
    leaves = None if leaf_labels == "joint" else epsilon * classifier_module.LEAF_SHARE
    total = epsilon - (leaves or 0)
    weights = [Fraction(classifier_module.LEVEL_DECAY) ** j for j in range(k)]
    return [total * w / sum(weights) for w in weights], leaves


LEDGER_CASES = [
    ("dprm", "joint", 1, 1), ("dprm", "joint", 3, 1), ("dprm", "joint", 3, 2), ("dprm", "joint", 4, 3),
    ("dprm", "noisy-counts", 2, 1), ("dprm", "noisy-counts", 3, 1), ("dprm", "noisy-counts", 3, 2),
    ("dprm", "noisy-counts", 4, 3), ("dprm", "noisy-counts", 2, 2),
    ("paper", "noisy-counts", 2, 1), ("paper", "noisy-counts", 3, 2), ("paper", "noisy-counts", 3, 3),
]


@pytest.mark.parametrize(("variant", "leaf_labels", "max_depth", "embedding_depth"), LEDGER_CASES)
def test_ledger_adds_up_to_epsilon(vote_data, variant: str, leaf_labels: str, max_depth: int,
                                   embedding_depth: int) -> None:
    """At most ``k = ⌈D/d⌉`` structure computations, each with the documented share
    (:func:`documented_shares`), then the leaf release (noisy counts only); all charged on the given
    accountant before their noise, adding up to ε exactly (the leaves get their
    documented share when all ``k`` computations ran, and what the skipped ones leave
    otherwise); ``privacy_spent_`` and ``ledger_`` say the same. The dprm tree may
    stop growing before ``k`` computations (the release chooses leaves): with a leaf
    release the skipped computations' budget must go to it; with joint labels there
    is no later release to give it to, so the fit spends ``ran · ε/k <= ε`` and says so."""
    X, y, categories, classes = vote_data
    epsilon = Fraction(3)
    accountant, noise = logged_accountant(epsilon + 1, seed=max_depth)
    clf = DPDecisionTreeClassifier(
        epsilon=3.0, max_depth=max_depth, embedding_depth=embedding_depth, variant=variant, leaf_labels=leaf_labels,
        categories=categories, classes=classes, accountant=accountant, random_state=0, mcmc_steps=200,
    ).fit(X, y)
    k = -(-max_depth // embedding_depth)
    entries = accountant.ledger
    counts = leaf_labels == "noisy-counts"
    ran = len(entries) - counts
    assert 1 <= ran <= k
    assert [e.step for e in entries] == [f"structure#{j + 1}" for j in range(ran)] + (["leaves"] if counts else [])
    shares, leaves = documented_shares(variant, leaf_labels, k, epsilon)
    assert [e.epsilon for e in entries[:ran]] == shares[:ran]
    if ran == k and counts:
        assert entries[-1].epsilon == leaves
    expected = epsilon if counts or ran == k else sum(shares[:ran])
    assert accountant.spent() == expected, (
        f"{ran} of {k} structure computations ran; the ledger adds up to {float(accountant.spent()):g}, not 3"
    )
    assert clf.privacy_spent_ == float(expected)
    assert clf.ledger_ == [e.to_json() for e in entries]
    assert sum(entry["epsilon"] for entry in clf.ledger_) == pytest.approx(float(expected), abs=1e-12)
    # every draw comes after the charge of its release
    assert noise.draws, "the fit drew no noise"
    for kind, n_charged, step in noise.draws:
        assert n_charged >= 1
        assert step == "leaves" if kind == "discrete_laplace" else step.startswith("structure#")


def test_a_refused_fit_draws_nothing_and_records_nothing(vote_data) -> None:
    """An accountant whose remaining budget does not cover epsilon: ValueError naming
    the budget, no ledger entry, no noise."""
    X, y, categories, classes = vote_data
    accountant, noise = logged_accountant(1)
    StructuredExponentialMechanism(Fraction(1, 2), 1, 1).start(accountant, "earlier")
    clf = DPDecisionTreeClassifier(epsilon=0.6, max_depth=2, categories=categories, classes=classes,
                                   accountant=accountant, random_state=0)
    with pytest.raises(ValueError, match="budget"):
        clf.fit(X, y)
    assert [e.step for e in accountant.ledger] == ["earlier"]
    assert noise.draws == []


@pytest.mark.parametrize(("variant", "leaf_labels", "score_range"),
                         [("dprm", "joint", 1), ("dprm", "noisy-counts", 1), ("paper", "noisy-counts", 4)])
@pytest.mark.parametrize("search", ["exhaustive", "mcmc"])
def test_the_fit_hands_the_samplers_eta_at_most_epsilon_over_range(
    vote_data, monkeypatch, variant: str, leaf_labels: str, score_range: int, search: str
) -> None:
    """The temperature of every structure release is ``η <= ε_j / R`` with ``R = 1``
    for the majority score (dprm) and ``4`` for the Gini score (paper), the score and
    leaf rule are the variant's, and the leaf cost does not depend on the data (the
    same on the full data and on a third of it)."""
    X, y, categories, classes = vote_data
    seen: list[dict] = []
    real_exact, real_mcmc = classifier_module.exact_subtree, classifier_module.mcmc_subtree

    def spy_exact(space, node, depth, draw):
        seen.append({"key": id(draw), "space_eta": space.eta, "eta": draw.eta, "score": space.score,
                     "leaves": space.allow_leaves, "cost": space.leaf_cost})
        return real_exact(space, node, depth, draw)

    def spy_mcmc(space, node, depth, chain, rng, steps, **kwargs):
        seen.append({"key": id(chain), "space_eta": space.eta, "eta": space.eta, "scale": chain.scale,
                     "score": space.score,
                     "leaves": space.allow_leaves, "cost": space.leaf_cost})
        return real_mcmc(space, node, depth, chain, rng, steps, **kwargs)

    monkeypatch.setattr(classifier_module, "exact_subtree", spy_exact)
    monkeypatch.setattr(classifier_module, "mcmc_subtree", spy_mcmc)
    epsilon, D, d = Fraction(2), 2, 1
    k = D // d
    shares, _ = documented_shares(variant, leaf_labels, k, epsilon)
    costs = []
    for rows in (slice(None), slice(0, None, 3)):
        seen.clear()
        DPDecisionTreeClassifier(epsilon=2.0, max_depth=D, embedding_depth=d, variant=variant, search=search,
                                 leaf_labels=leaf_labels,
                                 mcmc_steps=50, categories=categories, classes=classes,
                                 random_state=0).fit(X.iloc[rows], y[rows])
        assert seen
        if search == "mcmc":  # skip exact draws below empty nodes (they use the chain's scale)
            seen[:] = [r for r in seen if "scale" in r]
        order = list(dict.fromkeys(r["key"] for r in seen))  # one draw / chain per computation
        assert 1 <= len(order) <= k
        for record in seen:
            each = shares[order.index(record["key"])]
            assert record["space_eta"] == record["eta"]
            assert Fraction(record["eta"]) * score_range <= each
            assert record["eta"] * score_range >= 0.999 * float(each)  # and no budget wasted
            if search == "mcmc":
                assert Fraction(score_range) / Fraction(record["scale"]) <= each
                assert Fraction(record["eta"]) <= 1 / Fraction(record["scale"])
            assert record["score"] == ("gini" if variant == "paper" else "majority")
            assert record["leaves"] is (variant != "paper")
        costs.append({r["cost"] for r in seen})
    assert costs[0] == costs[1] and len(costs[0]) == 1


# -- (e) guarantee labels ------------------------------------------------------------------


def small_vote(vote_data, n=120):
    X, y, categories, classes = vote_data
    return X.iloc[:n], y[:n], categories, classes


def fit_quietly(clf, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a private fit warns about nothing
        return clf.fit(X, y)


def test_seeded_fit_is_labelled_not_private(vote_data) -> None:
    X, y, categories, classes = small_vote(vote_data)
    clf = fit_quietly(DPDecisionTreeClassifier(max_depth=2, categories=categories, classes=classes, random_state=3), X, y)
    assert clf.guarantee_ == "none" and clf.private_ is False
    assert clf.privacy_reasons_[0] == SEEDED_REASON


@pytest.mark.parametrize(
    ("params", "label"),
    [
        ({"search": "exhaustive"}, "pure-dp; floating-point selection"),
        ({"search": "exhaustive", "variant": "paper"}, "pure-dp; floating-point selection"),
        # joint leaf labels (the dprm default): drawn given the chain's structure by float64 Gumbel keys
        ({"search": "mcmc", "mcmc_steps": 30}, "pure-dp-on-mcmc-convergence; floating-point selection"),
        ({"search": "mcmc", "mcmc_steps": 30, "mcmc_stop": "variance"},
         "pure-dp-on-mcmc-convergence; floating-point selection; data-dependent stop"),
        # leaves by discrete Laplace counts: the chain is the only selection that reads the rows
        ({"search": "mcmc", "mcmc_steps": 30, "leaf_labels": "noisy-counts"}, "pure-dp-on-mcmc-convergence"),
        ({"search": "mcmc", "mcmc_steps": 30, "variant": "paper"}, "pure-dp-on-mcmc-convergence"),
    ],
)
def test_secure_declared_fit_is_labelled_with_its_guarantee(vote_data, params: dict, label: str) -> None:
    """Secure noise, declared categories and classes: private, with the search's label.

    300 rows, so that the small-budget rule keeps the tree at ε = 1 whatever the
    (secure) row count's noise: at 120 rows the rule's boundary is within its noise,
    and the chosen root split, an exact draw, is labelled as one."""
    X, y, categories, classes = small_vote(vote_data, n=300)
    clf = fit_quietly(DPDecisionTreeClassifier(max_depth=2, categories=categories, classes=classes, **params), X, y)
    assert clf.guarantee_ == label
    assert clf.private_ is True and clf.privacy_reasons_ == []
    assert clf.privacy_spent_ == 1.0


def test_an_mcmc_fit_with_joint_labels_draws_them_by_gumbel_keys_on_the_rows_and_says_so(vote_data,
                                                                                        monkeypatch) -> None:
    """The joint labels of an MCMC fit are not part of the chain: each closed leaf's label is drawn
    given the chain's structure by :class:`StructuredDraw` (float64 Gumbel keys) with weights from
    that leaf's class counts, a floating-point selection on the rows, which the label must name (as
    the exact draws' ``pure-dp; floating-point selection`` does). Without joint labels no such
    draw reads a row (only a node without rows is drawn exactly, from a data-independent target:
    its float keys cannot leak a row), and the label is the chain's."""
    X, y, categories, classes = small_vote(vote_data, n=300)
    draws: list[np.ndarray] = []
    choose = StructuredDraw.choose

    def counting(self, log_weights):
        draws.append(np.asarray(log_weights, dtype=np.float64).copy())
        return choose(self, log_weights)

    monkeypatch.setattr(StructuredDraw, "choose", counting)
    joint = fit_quietly(DPDecisionTreeClassifier(max_depth=2, categories=categories, classes=classes,
                                                 search="mcmc", mcmc_steps=30), X, y)
    assert joint.release_ == "tree" and joint.search_ == "mcmc"
    assert any(np.ptp(w) > 0 for w in draws)  # labels chosen by weights that read the rows
    assert joint.guarantee_ == "pure-dp-on-mcmc-convergence; floating-point selection"
    counts = fit_quietly(DPDecisionTreeClassifier(max_depth=2, categories=categories, classes=classes,
                                                  search="mcmc", mcmc_steps=30, leaf_labels="noisy-counts"), X, y)
    assert counts.guarantee_ == "pure-dp-on-mcmc-convergence"


@pytest.mark.parametrize(
    ("declare", "reason"),
    [("classes", "feature domains read off the data"), ("categories", "classes read off the data")],
)
def test_domains_or_classes_read_off_the_data_are_labelled_and_warned(vote_data, declare: str, reason: str) -> None:
    """Secure noise but a domain or the classes read off the data: guarantee none, the
    reason, and a UserWarning."""
    X, y, categories, classes = small_vote(vote_data)
    declared = {"classes": classes} if declare == "classes" else {"categories": categories}
    with pytest.warns(UserWarning, match=reason):
        clf = DPDecisionTreeClassifier(max_depth=2, **declared).fit(X, y)
    assert clf.guarantee_ == "none" and clf.private_ is False
    assert any(reason in r for r in clf.privacy_reasons_)
    assert not any(r == SEEDED_REASON for r in clf.privacy_reasons_)


def test_undeclared_numeric_bounds_are_labelled_and_warned() -> None:
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, size=(80, 2))
    y = (X[:, 0] > 5).astype(int)
    with pytest.warns(UserWarning, match="read off the data"):
        clf = DPDecisionTreeClassifier(max_depth=2, classes=[0, 1], bounds={0: (0, 10)}).fit(X, y)
    assert clf.guarantee_ == "none"
    assert any("'x1'" in r for r in clf.privacy_reasons_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = DPDecisionTreeClassifier(max_depth=2, classes=[0, 1], bounds=[(0, 10), (0, 10)]).fit(X, y)
    assert clf.guarantee_ == "pure-dp; floating-point selection"


# -- (f) neighbouring datasets: the released structure's probabilities ------------------


NEIGHBOUR_CASES = [
    ("cat2-cat3", "majority", True, 1), ("cat3-cat2-cat2", "gini", False, 4),
    ("cat2-num2", "majority", True, 1), ("cat2-num2", "gini", False, 4),
    ("cat2-num2", "majority", False, 1), ("binary-cat3", "majority", True, 1),
    ("both-cat3-cat2", "majority", True, 1),
]


def structure_log_probs(domains, splits, codes, y, score, allow_leaves, eta, shapes) -> np.ndarray:
    space = make_space(codes, y, 2, domains, score=score, allow_leaves=allow_leaves, eta=eta, splits=splits)
    rows = np.arange(codes.shape[0])
    cache: dict = {}
    return np.array([sampler_log_prob(space, s, rows, 2, cache=cache) for s in shapes])


@pytest.mark.parametrize(("schema", "score", "allow_leaves", "score_range"), NEIGHBOUR_CASES)
def test_every_added_row_moves_every_structure_probability_by_at_most_exp_epsilon(
    schema: str, score: str, allow_leaves: bool, score_range: int
) -> None:
    """The real privacy test of the exhaustive search: with ``η = ε/R``, for *every*
    possible added row (all codes, missing included, and classes) and every subtree,
    ``|log P_D(T) - log P_D'(T)| <= ε`` with the exact sampler's probabilities
    (datasets of 0, 6 and 15 rows). For the majority score (``R = 1``) the worst case
    comes near the bound, so the check is not vacuous."""
    domains, splits = SCHEMAS[schema]
    shapes = all_shapes(domains, frozenset(), 2, allow_leaves, splits)
    epsilon = 0.7
    eta = float(Fraction(epsilon) / score_range)
    rng = np.random.default_rng(31)
    worst = 0.0
    for n_rows in (0, 6, 15):
        codes, y = random_data(rng, domains, n_rows, 2)
        base = structure_log_probs(domains, splits, codes, y, score, allow_leaves, eta, shapes)
        for row, label in all_rows(domains, 2):
            added = structure_log_probs(domains, splits, np.vstack([codes, row]), np.append(y, label),
                                        score, allow_leaves, eta, shapes)
            change = float(np.abs(added - base).max())
            assert change <= epsilon + 1e-9, (n_rows, row, label, change)
            worst = max(worst, change)
    assert worst > 0.0
    if score == "majority":
        assert worst >= 0.25 * epsilon


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    low = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def test_seeded_draws_on_neighbours_do_not_contradict_epsilon() -> None:
    """Empirical check: 1000 seeded exact draws on ``D`` and on ``D'`` = ``D`` plus the
    row that moves the probabilities most. For every structure drawn, the
    Clopper–Pearson lower bound of ``P_D(T)`` is at most ``e^ε`` times the upper bound
    of ``P_D'(T)`` and vice versa (each comparison fails by chance with probability at
    most 1e-5 if the mechanism is ε-DP). With 1000 draws a structure drawn with
    probability 0.3 on one side and 0.05 on the other (a ratio of 6 > e) fails it; the
    exact bound on these data is checked above (``structure_log_probs`` on every added row)."""
    domains, splits = SCHEMAS["cat2-cat3"]
    shapes = all_shapes(domains, frozenset(), 2, True, splits)
    epsilon = 1.0
    rng = np.random.default_rng(41)
    codes, y = random_data(rng, domains, 12, 2)
    base = structure_log_probs(domains, splits, codes, y, "majority", True, epsilon, shapes)
    worst_row, worst = None, -1.0
    for row, label in all_rows(domains, 2):
        added = structure_log_probs(domains, splits, np.vstack([codes, row]), np.append(y, label),
                                    "majority", True, epsilon, shapes)
        change = float(np.abs(added - base).max())
        if change > worst:
            worst_row, worst = (row, label), change
    row, label = worst_row
    neighbour = (np.vstack([codes, row]), np.append(y, label))
    n = 1000
    counts = [
        draw_frequencies(make_space(c, t, 2, domains, eta=epsilon, splits=splits), 2, n, seed=s)
        for (c, t), s in (((codes, y), 51), (neighbour, 52))
    ]
    bound = math.exp(epsilon)
    for shape in set(counts[0]) | set(counts[1]):
        a = clopper_pearson(counts[0].get(shape, 0), n, 1e-5)
        b = clopper_pearson(counts[1].get(shape, 0), n, 1e-5)
        assert a[0] <= bound * b[1] and b[0] <= bound * a[1], (shape, counts[0].get(shape), counts[1].get(shape))


def test_chains_with_change_moves_on_neighbours_do_not_contradict_epsilon() -> None:
    """Empirical check of the MCMC release with change moves (dprm's default chain):
    1500 seeded chains of 60 steps on ``D`` and on ``D'`` = ``D`` plus the row that
    moves the exact probabilities most; for every final structure the Clopper–Pearson
    bounds of its frequencies keep the ratio within ``e^ε`` (each comparison fails by
    chance with probability at most 1e-5 for an ε-DP release), and each side's final
    states fit the exact release on its data (chi-square p above 1e-4; a chain at
    4ε fails this). The guarantee is the chain's limit
    (``pure-dp-on-mcmc-convergence``): this checks that the change moves do not move
    the finite chains' output past it."""
    domains, splits = SCHEMAS["both-cat3-cat2"]
    shapes = all_shapes(domains, frozenset(), 2, True, splits)
    epsilon = 1.0
    rng = np.random.default_rng(43)
    codes, y = random_data(rng, domains, 12, 2)
    base = structure_log_probs(domains, splits, codes, y, "majority", True, epsilon, shapes)
    worst_row, worst = None, -1.0
    for row, label in all_rows(domains, 2):
        added = structure_log_probs(domains, splits, np.vstack([codes, row]), np.append(y, label),
                                    "majority", True, epsilon, shapes)
        change = float(np.abs(added - base).max())
        if change > worst:
            worst_row, worst = (row, label), change
    assert worst > 0.25 * epsilon
    row, label = worst_row
    n = 1500
    counts = []
    for (c, t), seed in (((codes, y), 61), ((np.vstack([codes, row]), np.append(y, label)), 62)):
        space = make_space(c, t, 2, domains, eta=epsilon, splits=splits)
        chain = MetropolisChain(SeededNoise(np.random.default_rng(seed)), 1.0 / epsilon)
        proposals = np.random.default_rng(seed + 100)
        frequencies: dict = {}
        for _ in range(n):
            node = GrowNode(rows=np.arange(c.shape[0]), depth=0)
            mcmc_subtree(space, node, 2, chain, proposals, 60, change_share=0.5)
            key = node_shape(node)
            frequencies[key] = frequencies.get(key, 0) + 1
        counts.append(frequencies)
        # each side's chains fit the exact release on their data (what the bound is about)
        exact = brute_log_weights(make_space(c, t, 2, domains, eta=epsilon, splits=splits), shapes, 2)
        assert chi_square_p(frequencies, shapes, exact - logsumexp(exact)) > 1e-4
    bound = math.exp(epsilon)
    for shape in set(counts[0]) | set(counts[1]):
        a = clopper_pearson(counts[0].get(shape, 0), n, 1e-5)
        b = clopper_pearson(counts[1].get(shape, 0), n, 1e-5)
        assert a[0] <= bound * b[1] and b[0] <= bound * a[1], (shape, counts[0].get(shape), counts[1].get(shape))


def test_random_state_with_a_secure_accountant_labels_an_mcmc_fit_not_private(vote_data) -> None:
    """A given accountant of secure noise does not make a seeded MCMC fit private:
    random_state still seeds the chains' proposals, so the label is none, with the reason
    and a UserWarning. Exact draws take all their randomness from the accountant: private."""
    from dprm.privacy.accountant import SEEDED_PROPOSALS_REASON

    X, y, categories, classes = small_vote(vote_data, n=300)
    params = {"max_depth": 2, "categories": categories, "classes": classes}
    with pytest.warns(UserWarning, match="proposals come from a given seed"):
        clf = DPDecisionTreeClassifier(**params, search="mcmc", mcmc_steps=30, random_state=0,
                                       accountant=Accountant(1.0, SecureNoise())).fit(X, y)
    assert clf.search_ == "mcmc" and clf.release_ == "tree"
    assert clf.guarantee_ == "none" and clf.private_ is False
    assert clf.privacy_reasons_ == [SEEDED_PROPOSALS_REASON]
    clf = fit_quietly(DPDecisionTreeClassifier(**params, search="mcmc", mcmc_steps=30,
                                               accountant=Accountant(1.0, SecureNoise())), X, y)
    assert clf.private_ is True and clf.privacy_reasons_ == []
    clf = fit_quietly(DPDecisionTreeClassifier(**params, search="exhaustive", random_state=0,
                                               accountant=Accountant(1.0, SecureNoise())), X, y)
    assert clf.guarantee_ == "pure-dp; floating-point selection" and clf.privacy_reasons_ == []
