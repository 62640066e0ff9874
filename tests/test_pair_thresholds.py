"""A literal pair's thresholds chosen again: the scores against brute force, their monotone
sensitivity and the choice's probabilities on neighbouring datasets, the candidates, what it
finds, sharded counts, and the ledger of a run with and without the step."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import neighbour_changes, random_view, view_rows

from dprm.data import load_two_view
from dprm.data import Attribute, AttributeKind, Domain
from dprm.data.attributes import View
from dprm.data.literal_index import LiteralIndex
from dprm.datasets import make_planted
from dprm.errors import ParameterError
from dprm.mining import make_miner
from dprm.mining.initial_targets import InitialTarget, literal_masks, majority_counts, split_gain_counts
from dprm.mining.pair_thresholds import THRESHOLD_SENSITIVITY, anchored_side, sharpen_pair, window_literals
from dprm.privacy import Accountant, ExponentialMechanism, SeededNoise


def _indexes(views) -> list[LiteralIndex]:
    return [LiteralIndex(v, mode="private", max_splits=9) for v in views]


def _numeric(index: LiteralIndex, code: int = 4):
    return next(s for s in index.splits if s.kind.name == "NUMERIC" and s.code == code)


def _scores(indexes, klass_side: int, klass, candidates) -> np.ndarray:
    counts, totals = split_gain_counts(indexes[klass_side], indexes[1 - klass_side], [klass], candidates)
    return majority_counts(counts, totals)[0]


@pytest.mark.parametrize("high", [None, 6])
def test_the_scores_are_the_majority_counts_of_each_candidate(high) -> None:
    """Brute force: each candidate's parts (holds, opposite, missing), each part's larger class, summed."""
    rng = np.random.default_rng(5)
    views = random_view(rng, 200, "left", 0.15), random_view(rng, 200, "right", 0.15)
    indexes = _indexes(views)
    klass = (indexes[0].splits[0], None)
    candidates = window_literals(indexes[1], _numeric(indexes[1], 3), high)
    holds, missing = literal_masks(indexes[0], [klass])
    classes = np.where(missing[:, 0], -1, holds[:, 0].astype(int))
    scores = _scores(indexes, 0, klass, candidates)
    for j, candidate in enumerate(candidates):
        c_holds, c_missing = (m[:, 0] for m in literal_masks(indexes[1], [candidate]))
        part = np.select([c_missing, c_holds], [0, 1], 2)
        expected = sum(max(int(((part == p) & (classes == 1)).sum()), int(((part == p) & (classes == 0)).sum()))
                       for p in range(3))
        assert scores[j] == expected


@pytest.mark.parametrize("seed", range(5))
def test_the_scores_are_monotone_and_the_choice_is_epsilon_dp_on_neighbouring_datasets(seed: int) -> None:
    """Every candidate's score drops by 0 or 1 when a row is removed (never rises), and the
    exact probabilities of the choice with and without the row are within e^ε (the monotone
    mechanism's rate exp(ε·score))."""
    rng = np.random.default_rng(500 + seed)
    n = int(rng.integers(30, 90))
    views = random_view(rng, n, "left", missing=0.2), random_view(rng, n, "right", missing=0.2)
    indexes = _indexes(views)
    klass = (indexes[0].splits[0], None)
    candidates = window_literals(indexes[1], _numeric(indexes[1], 4), high=None if seed % 2 else 7)
    epsilon = 0.7
    mechanism = ExponentialMechanism(epsilon, THRESHOLD_SENSITIVITY, monotone=True)
    drops, worst_ratio = neighbour_changes(views, lambda vs: _scores(_indexes(vs), 0, klass, candidates), mechanism,
                                           rng.choice(n, size=10, replace=False))
    assert drops <= {0.0, 1.0}
    assert 1.0 in drops
    assert worst_ratio <= epsilon + 1e-9


def test_the_candidates_are_the_released_attribute_near_its_thresholds() -> None:
    rng = np.random.default_rng(1)
    index = _indexes([random_view(rng, 100, "right", 0.0)])[0]
    split = _numeric(index, 1)
    codes = [s.code for s, high in window_literals(index, split, window=3)]
    assert codes == [0, 1, 2, 3, 4] and {s.attribute for s, _ in window_literals(index, split)} == {split.attribute}
    intervals = window_literals(index, split, high=5, window=2)
    assert all(abs(s.code - 1) <= 2 and abs(high - 5) <= 2 and high > s.code for s, high in intervals)
    assert (split, 5) in intervals and len(intervals) == 4 * 5 - 1   # j' in 0..3, k in 3..7, j' < k


def _related(n: int = 2000):
    """``c`` and ``u > 30`` (left) against ``x > 60`` (right), 3 % of ``c`` flipped."""
    rng = np.random.default_rng(6)
    x = rng.uniform(0, 100, n)
    c = (x > 60) ^ (rng.random(n) < 0.03)
    u = np.clip(x / 2 + rng.normal(0, 1, n), 0, 50)
    left = View("l", [Attribute("c", "l", AttributeKind.BOOLEAN, c.astype(np.int8)),
                      Attribute("u", "l", AttributeKind.NUMERIC, u, Domain(bounds=(0, 50)))])
    right = View("r", [Attribute("x", "r", AttributeKind.NUMERIC, x, Domain(bounds=(0, 100)))])
    return _indexes([left, right])


def _at(index: LiteralIndex, attribute: int, value: float):
    """The split ``a ≤ value`` of ``attribute`` (a grid point)."""
    points = index.thresholds[attribute]
    return next(s for s in index.splits if s.attribute == attribute and math.isclose(points[s.code], value))


def test_the_threshold_moves_to_the_relation_against_its_anchor() -> None:
    """``x ≤ 40 ↔ c`` released: the target moves to the relation's 60, ``c`` stays; ``c ↔ x ≤ 40``
    (the numeric literal the partner): the partner moves. Two numeric literals, or none: unchanged,
    nothing charged."""
    indexes = _related()
    x40, x60, c = _at(indexes[1], 0, 40), _at(indexes[1], 0, 60), indexes[0].splits[0]
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(3)))
    assert sharpen_pair(indexes, InitialTarget(1, x40), c, 0.5, accountant, "pair thresholds 1") == (
        InitialTarget(1, x60), c)
    assert sharpen_pair(indexes, InitialTarget(0, c), x40, 0.5, accountant, "pair thresholds 2") == (
        InitialTarget(0, c), x60)
    assert [(e.step, float(e.epsilon)) for e in accountant.ledger] == [("pair thresholds 1", 0.5),
                                                                       ("pair thresholds 2", 0.5)]
    untouched = Accountant(0.5, SeededNoise(np.random.default_rng(0)))
    u20 = _at(indexes[0], 1, 20)
    for target, partner in [(InitialTarget(1, x40), u20), (InitialTarget(0, c), c)]:
        assert anchored_side(target, partner) is None
        assert sharpen_pair(indexes, target, partner, 0.5, untouched, "t") == (target, partner)
    assert untouched.ledger == []


def test_counts_summed_over_shards_give_the_same_choice() -> None:
    """A sharded run sums its shards' counts: counters over two halves of the rows choose alike."""
    rng = np.random.default_rng(8)
    views = random_view(rng, 300, "left", 0.1), random_view(rng, 300, "right", 0.1)
    indexes = _indexes(views)
    halves = [_indexes([view_rows(v, rows) for v in views])
              for rows in (slice(0, 130), slice(130, 300))]
    target, partner = InitialTarget(1, _numeric(indexes[1], 4)), indexes[0].splits[0]   # a Boolean partner

    def counter(side):
        def count(targets, others):
            parts = [split_gain_counts(half[side], half[1 - side], targets, others) for half in halves]
            return parts[0][0] + parts[1][0], parts[0][1] + parts[1][1]
        return count

    def run(counters):
        accountant = Accountant(1.0, SeededNoise(np.random.default_rng(2)))
        return sharpen_pair(indexes, target, partner, 1.0, accountant, "t", counters), accountant.ledger

    (alone, ledger), (counted, _) = run(None), run((counter(0), counter(1)))
    assert alone == counted and [e.step for e in ledger] == ["t"]
    assert sum(e.epsilon for e in ledger) == pytest.approx(1.0)


@pytest.mark.parametrize("setting", ["on", "off"])
def test_a_refined_pair_run_spends_exactly_with_and_without_the_step(setting: str) -> None:
    planted = make_planted(2000, n_left_boolean=40, n_right_numeric=12, relations=["thresholds"], noise=0.03,
                           random_state=0)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(4)))
    miner = make_miner("alt-expm", epsilon=1.0, trial="refined-pair", init_trials=2, pair_thresholds=setting)
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(4))
    assert math.isclose(float(accountant.spent()), 1.0) and accountant.remaining() == 0
    steps = [e.step for e in accountant.ledger if not e.step.startswith(("grids:", "grid of", "data size"))]
    thresholds = [s for s in steps if s.startswith("pair thresholds")]
    assert bool(thresholds) == (setting == "on")
    by_trial = {k: sum(e.epsilon for e in accountant.ledger if e.step.split(":")[0].endswith(f" {k}")
                       and not e.step.startswith(("grid", "data size"))) for k in (1, 2)}
    assert by_trial[1] == pytest.approx(by_trial[2])  # each trial spends its share, the step's included
    if setting == "on":
        pair = next(e.epsilon for e in accountant.ledger if e.step == "literal pair 1")
        step = sum(e.epsilon for e in accountant.ledger if e.step.startswith("pair thresholds 1"))
        assert step / (pair + step) == pytest.approx(0.2)


def test_altexpm_sharpens_its_refined_pairs_by_default_where_each_has_600_rows() -> None:
    planted = make_planted(2500, n_left_boolean=40, n_right_numeric=12, relations=["disjunction", "thresholds"],
                           noise=0.05, random_state=1)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    miner = make_miner("alt-expm", epsilon=1.0).fit(data, accountant=Accountant(1.0, SeededNoise(
        np.random.default_rng(0))), rng=np.random.default_rng(0))
    assert miner.settings_["trial"] == "refined-pair" and miner.settings_["pair_thresholds"] == "on"
    default = make_miner("mcmc-tree-pair", epsilon=0.3).fit(data, accountant=Accountant(0.3, SeededNoise(
        np.random.default_rng(0))), rng=np.random.default_rng(0))
    assert default.settings_["trial"] == "refined-pair" and default.settings_["pair_thresholds"] == "off"
    assert make_miner("alt-expm", variant="paper").pair_thresholds == "off"


def test_the_step_needs_a_pair_trial() -> None:
    with pytest.raises(ParameterError, match="pair-thresholds on needs a pair trial"):
        make_miner("mcmc-tree-pair", trial="trees", pair_thresholds="on")
