"""Initial targets chosen privately (issue 13): the score against brute force, its sensitivity
on neighbouring datasets, the ledger, and that the choice finds a planted relation."""

from __future__ import annotations


import numpy as np
import pytest
from conftest import random_view, without_row

from dprm.data import load_two_view
from dprm.data.attributes import View
from dprm.data.literal_index import LiteralIndex
from dprm.datasets import make_planted
from dprm.mining import initial_targets, make_miner
from dprm.mining.initial_targets import (TARGET_SCORE_SENSITIVITY, best_split_gains, candidate_literals,
                                         choose_targets, literal_masks, split_gain_counts)
from dprm.privacy import Accountant, SeededNoise


def _impurity(x: float, y: float) -> float:
    return 0.0 if x + y == 0 else x + y - (x * x + y * y) / (x + y)  # Gini n - Σ n_c² / n


def brute_force_gains(targets: LiteralIndex, other: LiteralIndex) -> np.ndarray:
    """``max_p max(gini gain / 2, majority gain)``, one branch at a time."""
    out = []
    for split in targets.splits:
        ones, zeros = targets.split_branches(split)
        best = 0.0
        for candidate in other.splits:
            true, false = other.split_branches(candidate)
            missing = ~true & ~false
            branches = [((ones & branch).sum(), (zeros & branch).sum()) for branch in (true, false, missing)]
            gini = _impurity(ones.sum(), zeros.sum()) - sum(_impurity(a, b) for a, b in branches)
            majority = sum(max(a, b) for a, b in branches) - max(ones.sum(), zeros.sum())
            best = max(best, gini / 2, majority)
        out.append(best)
    return np.array(out)


@pytest.mark.parametrize("missing", [0.1, 0.0])  # without: the products with missing indicators are skipped
@pytest.mark.parametrize("seed", range(4))
def test_gains_equal_brute_force(seed: int, missing: float) -> None:
    rng = np.random.default_rng(seed)
    left, right = random_view(rng, 150, "left", missing), random_view(rng, 150, "right", missing)
    indexes = [LiteralIndex(v, mode="private", max_splits=6) for v in (left, right)]
    for side in (0, 1):
        fast = best_split_gains(indexes[side], indexes[1 - side])
        assert np.allclose(fast, brute_force_gains(indexes[side], indexes[1 - side]))
        assert (fast >= 0).all()


def _expected_counts(indexes: list[LiteralIndex], literals: list, side: int) -> tuple[list, list]:
    """The counts of :func:`split_gain_counts` from the literals' row indicators, in integers."""
    t_true, t_missing = (m.astype(np.int64) for m in literal_masks(indexes[side], literals[side]))
    o_true, o_missing = (m.astype(np.int64) for m in literal_masks(indexes[1 - side], literals[1 - side]))
    zeros = 1 - t_true - t_missing
    return ([t_true.T @ o_true, zeros.T @ o_true, t_true.T @ o_missing, zeros.T @ o_missing],
            [t_true.sum(axis=0), zeros.sum(axis=0)])


@pytest.mark.parametrize("histogram_rows", [0, 10**9])  # every pair of attributes by histograms / by products
@pytest.mark.parametrize("missing", [0.2, 0.0])
@pytest.mark.parametrize("seed", range(3))
def test_gain_counts_are_the_exact_row_counts(seed: int, missing: float, histogram_rows: int,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Class 0 in the true branch is counted without its own product (from column sums and the
    targets' missing rows), and pairs of attributes with several literals each from their joint
    histogram of codes: every count must still be the exact number of rows."""
    monkeypatch.setattr(initial_targets, "_HISTOGRAM_ROWS", histogram_rows)
    rng = np.random.default_rng(50 + seed)
    left, right = random_view(rng, 700, "left", missing), random_view(rng, 700, "right", missing)
    indexes = [LiteralIndex(v, mode="private", max_splits=6) for v in (left, right)]
    literals = [candidate_literals(index) for index in indexes]
    for side in (0, 1):
        counts, totals = split_gain_counts(indexes[side], indexes[1 - side], literals[side], literals[1 - side])
        expected, expected_totals = _expected_counts(indexes, literals, side)
        assert all(np.array_equal(c, e) for c, e in zip(counts, expected))
        assert np.array_equal(totals, expected_totals)
        assert (expected[2].any() and expected[3].any()) == (missing > 0)


def test_gain_counts_of_many_rows_come_from_histograms_not_row_indicators(monkeypatch: pytest.MonkeyPatch) -> None:
    """On 10,000 rows of numeric and categorical attributes (each of several literals) the counts of every pair of literals
    are taken from each pair of attributes' joint histogram of codes: no indicator of the rows
    per literal (``literal_masks``: 20 CPU-s of products on 100,000 rows × 50 + 50 columns, where
    the histograms take 2), and the same exact counts."""
    rng = np.random.default_rng(7)
    views = []
    for side in ("left", "right"):
        view = random_view(rng, 10_000, side, 0.1)
        views.append(View(side, [a for a in view.attributes  # a Boolean (or 2 categories) is one literal
                                 if a.kind.name == "NUMERIC" or len(a.domain.categories or ()) > 2]))
    indexes = [LiteralIndex(v, mode="private", max_splits=6) for v in views]
    literals = [candidate_literals(index) for index in indexes]
    expected = [_expected_counts(indexes, literals, side) for side in (0, 1)]

    def no_row_indicators(*args, **kwargs):
        raise AssertionError("indicators of the rows built per literal")

    monkeypatch.setattr(initial_targets, "literal_masks", no_row_indicators)
    for side in (0, 1):
        counts, totals = split_gain_counts(indexes[side], indexes[1 - side], literals[side], literals[1 - side])
        assert all(np.array_equal(c, e) for c, e in zip(counts, expected[side][0]))
        assert np.array_equal(totals, expected[side][1])


@pytest.mark.parametrize("seed", range(6))
def test_scores_move_by_less_than_the_sensitivity_between_neighbours(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(20, 120))
    left, right = random_view(rng, n, "left", missing=0.2), random_view(rng, n, "right", missing=0.2)
    full = [LiteralIndex(v, mode="private", max_splits=5) for v in (left, right)]
    worst = 0.0
    for row in rng.choice(n, size=8, replace=False):
        smaller = [LiteralIndex(without_row(v, int(row)), mode="private", max_splits=5) for v in (left, right)]
        for side in (0, 1):
            a = best_split_gains(full[side], full[1 - side])
            b = best_split_gains(smaller[side], smaller[1 - side])
            worst = max(worst, float(np.abs(a - b).max()))
    assert worst <= TARGET_SCORE_SENSITIVITY
    assert worst > 0.9  # the check can fail: scores do move, and the bound 1 is reached (a majority flips)


RELATIONS = ["disjunction", "thresholds", "threshold-or"]


def _planted():
    planted = make_planted(1500, n_left_boolean=40, n_right_numeric=12, relations=RELATIONS, noise=0.05,
                           random_state=0)
    relations = [{*_names(left), *_names(right)} for left, right in planted.planted]
    return load_two_view(planted.left, planted.right, types=planted.types), relations


def _names(query: dict) -> set:
    if "attr" in query:
        return {query["attr"]}
    return set().union(*(_names(q) for q in query.get("and", query.get("or", [query.get("not")]))))


def test_choice_finds_the_planted_relations_one_per_trial_and_charges_exactly() -> None:
    data, relations = _planted()
    indexes = [LiteralIndex(v, mode="private", max_splits=32) for v in data.views]
    found = []
    for seed in range(10):
        accountant = Accountant(1.0, SeededNoise(np.random.default_rng(seed)))
        chosen = choose_targets(indexes, 3, 0.45, accountant)
        assert float(accountant.spent()) == pytest.approx(0.45)
        assert [e.step for e in accountant.ledger] == [f"initial target {t}: {what}" for t in (1, 2, 3)
                                                        for what in ("attribute", "split")]
        names = [indexes[t.side].attributes[t.split.attribute].name for t in chosen]
        assert len(set(names)) == 3  # distinct attributes
        found.append(sum(any(name in relation for name in names) for relation in relations))
    # 10 of 52 attributes are planted: three uniform draws start from 0.56 relations on average
    assert np.mean(found) >= 1.8, found
    assert sum(len(r) for r in relations) == 10


def test_scored_miner_spends_exactly_and_ledger_names_the_targets() -> None:
    data, _ = _planted()
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(3)))
    miner = make_miner("mcmc-tree-pair", targets="scored", target_share=0.3, init_trials=2, depth=2,
                       mcmc_iterations=500)
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(3))
    assert accountant.spent() == 1
    steps = [e.step for e in accountant.ledger if not e.step.startswith(("grids:", "grid of"))]
    assert steps[0] == "data size" and steps[1:4] == ["initial target 1: attribute", "initial target 1: split",
                                                      "sampleTreePair#1"]
    assert steps[4:6] == ["initial target 2: attribute", "initial target 2: split"]  # after pair 1 is released
    target_spent = sum(e.epsilon for e in accountant.ledger if e.step.startswith("initial target"))
    assert float(target_spent) == pytest.approx(0.3 * 0.95 * 0.95)  # after the grids (5 %), the count (5 %)
    assert miner.privacy_["guarantee"] == "none"  # seeded; the mechanisms are those of pure-dp-on-mcmc


def test_interval_literals_and_their_classes() -> None:
    from dprm.data.attributes import Attribute, AttributeKind, Domain
    from dprm.mining.initial_targets import InitialTarget, candidate_literals, literal_masks

    values = np.array([0.05, 0.3, 0.45, 0.6, 0.95, np.nan])
    view = View("v", [Attribute("x", "v", AttributeKind.NUMERIC, values, Domain(bounds=(0, 1)))])
    index = LiteralIndex(view, mode="private", max_splits=4)
    literals = candidate_literals(index)
    thresholds = index.thresholds[0]
    holds, missing = literal_masks(index, literals)
    for j, (split, high) in enumerate(literals):
        low = thresholds[split.code]
        expected = values <= low if high is None else (values > low) & (values <= thresholds[high])
        assert holds[:, j].tolist() == [bool(e) for e in expected]
        assert missing[:, j].tolist() == [False] * 5 + [True]
    interval = next((s, h) for s, h in literals if h is not None)
    classes, n = InitialTarget(0, *interval).classes(index)
    assert n == 2 and classes[-1] == -1 and set(classes[:-1].tolist()) <= {0, 1}


def test_interval_relation_scores_far_higher_with_interval_candidates() -> None:
    from dprm.mining.initial_targets import candidate_literals, split_gains

    planted = make_planted(1500, n_left_boolean=10, n_right_numeric=6, relations=["interval"], noise=0.0,
                           random_state=1)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    indexes = [LiteralIndex(v, mode="private", max_splits=32) for v in data.views]
    # l_bool_0 (of l_bool_0 ∧ ¬l_bool_1) against 40 < r_num_0 ≤ 70
    thresholds_only = split_gains(indexes[0], indexes[1]).max(axis=1)[0]
    with_intervals = split_gains(indexes[0], indexes[1], None, candidate_literals(indexes[1])).max(axis=1)[0]
    assert with_intervals > 1.5 * thresholds_only


@pytest.mark.parametrize("block", [1, 7, 10_000])
def test_attribute_gains_are_the_best_per_attribute(block: int) -> None:
    from dprm.mining.initial_targets import attribute_gains, candidate_literals, split_gains

    rng = np.random.default_rng(7)
    left, right = random_view(rng, 120, "left"), random_view(rng, 120, "right")
    indexes = [LiteralIndex(v, mode="private", max_splits=5) for v in (left, right)]
    literals = [candidate_literals(index) for index in indexes]
    full = split_gains(indexes[0], indexes[1], literals[0], literals[1])
    by_attribute = attribute_gains(indexes[0], indexes[1], literals[0], literals[1], block=block)
    for a in range(len(indexes[1].attributes)):
        columns = [j for j, (split, _) in enumerate(literals[1]) if split.attribute == a]
        assert np.allclose(by_attribute[:, a], full[:, columns].max(axis=1))


def test_a_boolean_target_skips_its_choice_among_one_literal_and_passes_the_share_on() -> None:
    from fractions import Fraction

    from dprm.data import Attribute, AttributeKind
    from dprm.mining.initial_targets import TargetChooser

    rng = np.random.default_rng(5)
    base = rng.random((300, 4)) < 0.4
    left = View("l", [Attribute(f"a{j}", "l", AttributeKind.BOOLEAN, base[:, j].astype(np.int8)) for j in range(4)])
    right = View("r", [Attribute(f"b{j}", "r", AttributeKind.BOOLEAN,
                                 (base[:, j] ^ (rng.random(300) < 0.1)).astype(np.int8)) for j in range(4)])
    accountant = Accountant(0.6, SeededNoise(np.random.default_rng(1)))
    chooser = TargetChooser((LiteralIndex(left), LiteralIndex(right)), 3, Fraction(3, 5), accountant)
    chosen = [chooser.next() for _ in range(3)]
    assert all(t.split.kind is AttributeKind.BOOLEAN for t in chosen)
    share = Fraction(1, 5)  # each trial's
    assert [(e.step, e.epsilon) for e in accountant.ledger] == [
        ("initial target 1: attribute", share / 2),  # its split half goes on: a choice among one literal
        ("initial target 2: attribute", share),      # half its own share and the half carried
        ("initial target 3: attribute", share),
        ("initial target 3: split", share / 2),      # the last trial spends what is left: exactly ε
    ]
    assert accountant.spent() == Fraction(3, 5)
