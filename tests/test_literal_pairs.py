"""Literal pairs chosen at once (the low-budget trial): the scores against brute force, their
sensitivity and the choice's probabilities on neighbouring datasets, the ledger of a run."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import random_view, without_row

from dprm.data.literal_index import LiteralIndex
from dprm.datasets import make_planted
from dprm.data import load_two_view
from dprm.mining import make_miner
from dprm.mining.initial_targets import TARGET_SCORE_SENSITIVITY, candidate_literals, split_gains
from dprm.mining.literal_pairs import PairChooser
from dprm.privacy import Accountant, ExponentialMechanism, SeededNoise


def _indexes(views) -> list[LiteralIndex]:
    return [LiteralIndex(v, mode="private", max_splits=5) for v in views]


def test_the_scores_are_every_target_literal_against_every_split_of_the_other_view() -> None:
    rng = np.random.default_rng(7)
    views = random_view(rng, 200, "left", 0.1), random_view(rng, 200, "right", 0.1)
    indexes = _indexes(views)
    chooser = PairChooser(indexes)
    gains = [split_gains(indexes[side], indexes[1 - side], candidate_literals(indexes[side]),
                         [(split, None) for split in indexes[1 - side].splits]) for side in (0, 1)]
    n_left, n_right = len(indexes[0].splits), len(indexes[1].splits)
    # two splits: once, as a left target, with the better direction; intervals: as targets of their view
    expected = [np.maximum(gains[0][:n_left], gains[1][:n_right].T), gains[0][n_left:], gains[1][n_right:]]
    assert np.array_equal(chooser.scores(), np.concatenate([e.ravel() for e in expected]))
    n_targets = [len(candidate_literals(index)) for index in indexes]
    assert chooser.scores().size == n_targets[0] * n_right + (n_targets[1] - n_right) * n_left
    assert PairChooser.scored(indexes) == n_targets[0] * n_right + n_targets[1] * n_left
    assert len(gains[1]) > n_right and len(gains[0]) > n_left  # intervals on both sides


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("sampler", ["gumbel", "permute-and-flip"])
def test_the_choice_is_epsilon_dp_on_neighbouring_datasets(seed: int, sampler: str) -> None:
    """Exact probabilities of the pair's choice with and without a row: within e^ε of each other
    (scores that move by at most 1; the bound is reached, so the check can fail)."""
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(20, 90))
    views = random_view(rng, n, "left", missing=0.2), random_view(rng, n, "right", missing=0.2)
    full = PairChooser(_indexes(views)).scores()
    epsilon = 0.7
    mechanism = ExponentialMechanism(epsilon, TARGET_SCORE_SENSITIVITY, sampler)   # either draw
    worst_move, worst_ratio = 0.0, 0.0
    for row in rng.choice(n, size=6, replace=False):
        smaller = PairChooser(_indexes([without_row(v, int(row)) for v in views])).scores()
        worst_move = max(worst_move, float(np.abs(full - smaller).max()))
        ratio = np.abs(np.log(mechanism.probabilities(full)) - np.log(mechanism.probabilities(smaller)))
        worst_ratio = max(worst_ratio, float(ratio.max()))
    assert worst_move <= TARGET_SCORE_SENSITIVITY
    assert worst_ratio <= epsilon + 1e-9
    assert worst_move > 0.9


def test_taken_attributes_leave_the_candidates_until_none_is_left() -> None:
    rng = np.random.default_rng(11)
    views = random_view(rng, 120, "left", 0.0), random_view(rng, 120, "right", 0.0)
    indexes = _indexes(views)
    chooser = PairChooser(indexes)
    accountant = Accountant(100.0, SeededNoise(np.random.default_rng(2)))
    seen = []
    for trial in range(min(len(indexes[0].attributes), len(indexes[1].attributes))):
        target, partner = chooser.choose(1.0, accountant, f"literal pair {trial}")
        pair = {(target.side, target.split.attribute), (1 - target.side, partner.attribute)}
        assert not pair & set().union(*seen) if seen else True
        seen.append(pair)
    chooser.choose(1.0, accountant, "again")  # all taken on one side: every candidate again
    assert float(accountant.spent()) == len(seen) + 1


def test_a_pair_run_finds_a_planted_relation_and_spends_exactly() -> None:
    planted = make_planted(2000, n_left_boolean=40, n_right_numeric=12, relations=["thresholds"], noise=0.03,
                           random_state=0)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    names = {str(q) for q in planted.planted[0]}
    accountant = Accountant(0.3, SeededNoise(np.random.default_rng(4)))
    miner = make_miner("mcmc-tree-pair", epsilon=0.3, trial="pair", init_trials=2)
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(4))
    assert math.isclose(float(accountant.spent()), 0.3)
    steps = [e.step for e in accountant.ledger if not e.step.startswith(("grids:", "grid of"))]
    assert steps == ["data size", "literal pair 1", "extraction 1: cell counts",
                     "literal pair 2", "extraction 2: cell counts"]
    kept = [r for r in miner.redescriptions_ if not r.pruned]
    assert kept and max(r.stats.jaccard for r in kept) > 0.5, names


def test_scores_counted_in_blocks_equal_one_product(monkeypatch) -> None:
    rng = np.random.default_rng(21)
    views = random_view(rng, 150, "left", 0.1), random_view(rng, 150, "right", 0.1)
    indexes = _indexes(views)
    whole = PairChooser(indexes).scores()
    monkeypatch.setattr("dprm.mining.literal_pairs._BLOCK_PAIRS", 7)  # a few partners per block
    assert np.array_equal(PairChooser(indexes).scores(), whole)
