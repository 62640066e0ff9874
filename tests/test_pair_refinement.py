"""The refinement split of a literal pair: its scores against brute force, their monotone
sensitivity and the choice's probabilities on neighbouring datasets, counts that add up over
shards, what it finds, and the ledger of a refined-pair run."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import neighbour_changes, random_view

from dprm.data import load_two_view
from dprm.data.literal_index import LiteralIndex
from dprm.datasets import make_planted
from dprm.errors import ParameterError
from dprm.mining import make_miner
from dprm.mining.initial_targets import InitialTarget, literal_masks
from dprm.mining.pair_refinement import (REFINEMENT_SENSITIVITY, majority_scores, refine_pair, refinement_counts,
                                         refinement_sides)
from dprm.privacy import Accountant, ExponentialMechanism, SeededNoise


def _indexes(views) -> list[LiteralIndex]:
    return [LiteralIndex(v, mode="private", max_splits=5) for v in views]


def _pair(indexes):
    """A fixed pair: the first split of the left view as the target, the first numeric split on the right."""
    partner = next(s for s in indexes[1].splits if s.kind.name == "NUMERIC")
    return InitialTarget(0, indexes[0].splits[0]), partner


def _scores(indexes, target, partner) -> np.ndarray:
    sides = refinement_sides(indexes, target, partner)
    return np.concatenate([majority_scores(refinement_counts(indexes[s.side], s.base, indexes[1 - s.side], s.klass,
                                                             s.candidates)).ravel() for s in sides])


def test_the_scores_are_the_majority_counts_of_every_refined_tree() -> None:
    """Brute force: each candidate's partition of the rows, each part's larger class, summed."""
    rng = np.random.default_rng(5)
    views = random_view(rng, 150, "left", 0.15), random_view(rng, 150, "right", 0.15)
    indexes = _indexes(views)
    target, partner = _pair(indexes)
    sides = refinement_sides(indexes, target, partner)
    assert [s.side for s in sides] == [1, 0]  # the partner's side, then the target's (a split)
    for s in sides:
        holds, missing = literal_masks(indexes[1 - s.side], [s.klass])
        klass = np.where(missing[:, 0], -1, holds[:, 0].astype(int))
        base_holds, base_missing = (m[:, 0] for m in literal_masks(indexes[s.side], [(s.base, None)]))
        scores = majority_scores(refinement_counts(indexes[s.side], s.base, indexes[1 - s.side], s.klass,
                                                   s.candidates))
        for j, split in enumerate(s.candidates):
            q_holds, q_missing = (m[:, 0] for m in literal_masks(indexes[s.side], [(split, None)]))
            for b, branch in enumerate((base_holds, ~base_holds & ~base_missing)):
                part = np.select([base_missing, ~branch, q_missing, q_holds], [0, 1, 2, 3], 4)
                expected = sum(max(int(((part == p) & (klass == 1)).sum()), int(((part == p) & (klass == 0)).sum()))
                               for p in range(5))
                assert scores[b, j] == expected


@pytest.mark.parametrize("seed", range(5))
def test_the_scores_are_monotone_and_the_choice_is_epsilon_dp_on_neighbouring_datasets(seed: int) -> None:
    """Every candidate's score drops by 0 or 1 when a row is removed (never rises), and the
    exact probabilities of the choice with and without the row are within e^ε (the monotone
    mechanism's rate exp(ε·score); the bound is reached, so the check can fail)."""
    rng = np.random.default_rng(400 + seed)
    n = int(rng.integers(30, 90))
    views = random_view(rng, n, "left", missing=0.2), random_view(rng, n, "right", missing=0.2)
    indexes = _indexes(views)
    target, partner = _pair(indexes)
    epsilon = 0.7
    mechanism = ExponentialMechanism(epsilon, REFINEMENT_SENSITIVITY, monotone=True)
    drops, worst_ratio = neighbour_changes(views, lambda vs: _scores(_indexes(vs), target, partner), mechanism,
                                           rng.choice(n, size=8, replace=False))
    assert drops <= {0.0, 1.0}
    assert 1.0 in drops
    assert worst_ratio <= epsilon + 1e-9


def test_counts_of_disjoint_rows_add_up_to_the_counts_of_all() -> None:
    rng = np.random.default_rng(9)
    views = random_view(rng, 300, "left", 0.1), random_view(rng, 300, "right", 0.1)
    indexes = _indexes(views)
    target, partner = _pair(indexes)
    for s in refinement_sides(indexes, target, partner):
        args = (indexes[s.side], s.base, indexes[1 - s.side], s.klass, s.candidates)
        whole = refinement_counts(*args)
        parts = refinement_counts(*args, rows=slice(0, 117)) + refinement_counts(*args, rows=slice(117, 300))
        assert np.array_equal(whole, parts)


def test_counted_in_small_chunks_the_same(monkeypatch) -> None:
    rng = np.random.default_rng(10)
    views = random_view(rng, 200, "left", 0.1), random_view(rng, 200, "right", 0.1)
    indexes = _indexes(views)
    target, partner = _pair(indexes)
    whole = _scores(indexes, target, partner)
    monkeypatch.setattr("dprm.mining.target_refinement._CHUNK_CELLS", 1)  # 256 rows at a time (the counts' chunks)
    assert np.array_equal(_scores(indexes, target, partner), whole)


def test_the_refinement_adds_the_missing_literal_of_a_disjunction() -> None:
    """``a ∨ b`` against ``x``: with the pair ``a ↔ x``, ``b`` under ``a``'s false branch."""
    planted = make_planted(2000, n_left_boolean=20, n_right_numeric=6, relations=["threshold-or"], noise=0.03,
                           random_state=1)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    indexes = _indexes(data.views)
    names = [[a.name for a in index.attributes] for index in indexes]
    a = next(s for s in indexes[0].splits if names[0][s.attribute] == "l_bool_0")
    x_position = names[1].index("r_num_0")
    code = int(np.argmin(np.abs(indexes[1].thresholds[x_position] - 60)))  # the grid's point nearest 60
    x = next(s for s in indexes[1].splits if s.attribute == x_position and s.code == code)
    accountant = Accountant(0.1, SeededNoise(np.random.default_rng(3)))
    left, right, refinement = refine_pair(indexes, InitialTarget(0, a), x, 0.1, accountant, "refinement 1")
    chosen = (refinement.side, refinement.branch, names[refinement.side][refinement.split.attribute])
    assert chosen == (0, False, "l_bool_1")
    assert left.splits[0] == a and left.splits[2] == refinement.split and right.splits == [x]
    assert [e.step for e in accountant.ledger] == ["refinement 1"]


def test_a_refined_pair_run_spends_exactly_in_the_stated_shares() -> None:
    planted = make_planted(2000, n_left_boolean=40, n_right_numeric=12, relations=["thresholds"], noise=0.03,
                           random_state=0)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    accountant = Accountant(0.3, SeededNoise(np.random.default_rng(4)))
    miner = make_miner("mcmc-tree-pair", epsilon=0.3, trial="refined-pair", init_trials=2)
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(4))
    assert math.isclose(float(accountant.spent()), 0.3)
    entries = [e for e in accountant.ledger if not e.step.startswith(("grids:", "grid of", "data size"))]
    assert [e.step for e in entries] == ["literal pair 1", "refinement 1", "extraction 1: cell counts",
                                         "literal pair 2", "refinement 2", "extraction 2: cell counts"]
    trial = sum(e.epsilon for e in entries[:3])
    assert [e.epsilon / trial for e in entries[:3]] == [pytest.approx(0.6), pytest.approx(0.2), pytest.approx(0.2)]
    # the thresholds relation a ↔ x > 60 ∧ y > 60, refined to its conjunction
    refined = [r for r in miner.redescriptions_ if not r.pruned
               and all(name in f"{r.left} {r.right}" for name in ("l_bool_0", "r_num_0", "r_num_1"))]
    assert refined and max(r.stats.jaccard for r in refined) > 0.75, [str(r) for r in miner.redescriptions_]


def test_a_refined_pair_needs_scored_targets() -> None:
    with pytest.raises(ParameterError, match="trial refined-pair needs targets scored"):
        make_miner("mcmc-tree-pair", trial="refined-pair", targets="uniform")
