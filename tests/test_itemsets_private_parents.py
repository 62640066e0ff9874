"""dprm.itemsets.private_parents: the score's sensitivity, the choice's privacy, the table's tree, the budget."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import minimize

from dprm.errors import ParameterError
from dprm.itemsets.private_parents import (
    MAX_CANDIDATES,
    SCORE_SENSITIVITY,
    SELECT_SHARE,
    candidate_parents,
    dependence,
    next_candidates,
    nonnegative_counts,
    oblivious_tree,
    release_conditional,
)
from dprm.privacy import Accountant, DiscreteLaplaceHistogram, ExponentialMechanism, SeededNoise

SIZES = [3, 2, 2, 4]


def _codes(n: int, seed: int) -> np.ndarray:
    """Column 1 copies column 0's parity 90 % of the time; columns 2 and 3 are independent."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, size=n)
    b = np.where(rng.random(n) < 0.9, a % 2, 1 - a % 2)
    return np.column_stack([a, b, rng.integers(0, 2, size=n), rng.integers(0, 4, size=n)])


def _table(rows: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    return np.bincount(rows[:, 0] * shape[1] + rows[:, 1], minlength=shape[0] * shape[1]).reshape(shape)


def test_dependence_changes_by_at_most_three_when_a_row_is_added_or_removed() -> None:
    worst = 0.0
    # every table of up to 7 rows over 2 x 3 cells, with every row added or removed
    cells = list(itertools.product(range(2), range(3)))
    for n in range(0, 8):
        for rows in itertools.combinations_with_replacement(range(len(cells)), n):
            table = np.bincount(np.array(rows, dtype=int), minlength=6).reshape(2, 3)
            for cell in range(6):
                bigger = table.copy()
                bigger[cell // 3, cell % 3] += 1
                worst = max(worst, abs(dependence(bigger) - dependence(table)))
    rng = np.random.default_rng(0)
    for _ in range(2000):  # larger random tables
        shape = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
        table = rng.integers(0, rng.integers(1, 50), size=shape)
        cell = (int(rng.integers(shape[0])), int(rng.integers(shape[1])))
        bigger = table.copy()
        bigger[cell] += 1
        worst = max(worst, abs(dependence(bigger) - dependence(table)))
    assert worst <= SCORE_SENSITIVITY + 1e-9
    assert worst > 1.0  # the bound is not vacuous: one row can move the score by more than a count


def test_the_choice_is_epsilon_dp_on_neighbouring_datasets() -> None:
    """The exponential mechanism's probabilities of every candidate differ by at most e^ε between neighbours."""
    codes = _codes(300, seed=1)
    candidates = next_candidates([0, 2], [1, 3], SIZES)
    scale = DiscreteLaplaceHistogram(Fraction(7, 10)).scale
    epsilon = 0.3
    mechanism = ExponentialMechanism(epsilon, SCORE_SENSITIVITY)

    def probabilities(rows: np.ndarray) -> np.ndarray:
        scores = [dependence(_table(np.column_stack([_config(rows, p), rows[:, x]]),
                                    (math.prod(SIZES[q] for q in p), SIZES[x])))
                  - (math.prod(SIZES[q] for q in p) - 1) * SIZES[x] * scale / 2 for x, p in candidates]
        return mechanism.probabilities(np.array(scores))

    base = probabilities(codes)
    for extra in itertools.product(*[range(s) for s in SIZES]):
        for neighbour in (np.vstack([codes, extra]), codes[1:]):
            ratio = probabilities(neighbour) / base
            assert np.all(ratio <= math.exp(epsilon) * (1 + 1e-9)) and np.all(ratio >= math.exp(-epsilon) * (1 - 1e-9))


def _config(rows: np.ndarray, parents: tuple[int, ...]) -> np.ndarray:
    config = np.zeros(len(rows), dtype=np.int64)
    for p in parents:
        config = config * SIZES[p] + rows[:, p]
    return config


def test_candidates_are_public_and_bounded() -> None:
    assert candidate_parents([0, 1, 2], SIZES, 3, max_parents=1) == [(), (0,), (1,), (2,)]
    assert candidate_parents([0, 1, 2], SIZES, 3, max_parents=2, max_cells=16) == [(), (0,), (1,), (2,), (1, 2)]
    assert candidate_parents([], SIZES, 3) == [()]
    with pytest.raises(ParameterError):
        candidate_parents([0], SIZES, 3, max_parents=-1)
    assert next_candidates([], [3, 0], SIZES) == [(3, ())]
    assert {x for x, _ in next_candidates([3], [0, 1, 2], SIZES)} == {0, 1, 2}


def test_nonnegative_counts_is_the_projection_with_the_same_total() -> None:
    rng = np.random.default_rng(2)
    for _ in range(40):
        y = rng.normal(0, 5, size=int(rng.integers(2, 7))) + rng.integers(0, 10, size=1)
        x = nonnegative_counts(y)
        assert (x >= 0).all()
        total = max(y.sum(), 0.0)
        assert x.sum() == pytest.approx(total, abs=1e-9)
        if total > 0:
            best = minimize(lambda v: ((v - y) ** 2).sum(), np.full(len(y), total / len(y)), method="SLSQP",
                            bounds=[(0, None)] * len(y), constraints=[{"type": "eq", "fun": lambda v: v.sum() - total}])
            assert ((x - y) ** 2).sum() <= best.fun + 1e-9  # no feasible point is nearer
            assert np.allclose(x, best.x, atol=1e-3)


def test_oblivious_tree_predicts_each_configuration_by_its_counts_and_marginalises_by_weights() -> None:
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 20, size=(3 * 2, 4)).astype(float)
    tree = oblivious_tree(3, [0, 2], SIZES, counts)
    assert tree.split_columns() == {0, 2}
    for a, c in itertools.product(range(3), range(2)):
        row = np.array([[a, -1, c, -1]])
        expected = counts[a * 2 + c] / counts[a * 2 + c].sum()
        assert np.allclose(tree.predict_proba(row)[0], expected)
    assert np.allclose(tree.predict_proba(np.array([[-1, -1, -1, -1]]))[0], counts.sum(axis=0) / counts.sum())
    single = oblivious_tree(1, [], SIZES, np.array([[3.0, 1.0]]))
    assert single.n_nodes == 1 and np.allclose(single.predict_proba(np.zeros((1, 4), dtype=int)), [[0.75, 0.25]])


def test_release_spends_its_budget_choice_and_counts() -> None:
    codes = _codes(4000, seed=4)
    accountant = Accountant(2, SeededNoise(np.random.default_rng(5)))
    release = release_conditional(codes, next_candidates([0, 2, 3], [1], SIZES), SIZES, 1, accountant, "x")
    assert [(e.step, e.epsilon) for e in accountant.ledger] == [("x: parents", SELECT_SHARE),
                                                                 ("x: counts", 1 - SELECT_SHARE)]
    assert 0 in release.parents  # the dependence is found
    only = release_conditional(codes, [(3, ())], SIZES, 1, accountant, "y")
    assert [(e.step, e.epsilon) for e in accountant.ledger[2:]] == [("y: counts", 1)]
    assert only.parents == () and accountant.spent() == 2
    with pytest.raises(ParameterError):
        release_conditional(codes, [], SIZES, 1, accountant, "z")


def test_a_large_budget_recovers_the_conditional_and_the_order() -> None:
    codes = _codes(20000, seed=6)
    accountant = Accountant(100, SeededNoise(np.random.default_rng(7)))
    first = release_conditional(codes, next_candidates([], [0, 2, 1, 3], SIZES), SIZES, 50, accountant, "1")
    assert (first.target, first.parents) == (0, ())
    # the chain chooses what to release next: the variable that depends on what is released
    second = release_conditional(codes, next_candidates([0], [2, 1, 3], SIZES), SIZES, 50, accountant, "2")
    assert (second.target, second.parents) == (1, (0,))
    for a in range(3):
        share = np.mean(codes[codes[:, 0] == a, 1] == a % 2)
        assert second.tree.predict_proba(np.array([[a, -1, -1, -1]]))[0, a % 2] == pytest.approx(share, abs=0.02)


def test_wide_tables_choose_among_a_public_random_subset_of_candidates() -> None:
    sizes = [3] * 500
    released, remaining = list(range(0, 400, 2)), list(range(1, 500, 2)) + list(range(400, 500, 2))
    with pytest.raises(ParameterError, match="rng"):
        next_candidates(released, remaining, sizes)
    draws = [next_candidates(released, remaining, sizes, rng=np.random.default_rng(seed)) for seed in (0, 0, 1)]
    assert draws[0] == draws[1] != draws[2]  # the subset comes from rng alone
    for candidates in draws:
        assert 0 < len(candidates) <= MAX_CANDIDATES
        assert len(set(candidates)) == len(candidates)
        assert {x for x, _ in candidates} <= set(remaining) and len({x for x, _ in candidates}) > 1
        assert all(set(parents) <= set(released) and len(parents) <= 2 for _, parents in candidates)
        assert {len(parents) for _, parents in candidates} == {0, 1, 2}
    # a table that fits is enumerated whole, whatever rng
    narrow = next_candidates([0, 1, 2, 3], [4, 5, 6], [2] * 7, rng=np.random.default_rng(0))
    assert narrow == next_candidates([0, 1, 2, 3], [4, 5, 6], [2] * 7) and len(narrow) == 3 * 11
