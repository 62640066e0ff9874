"""The second tree of a scored trees trial made from its target (``second_tree="refined-target"``): the
scores against brute force, their monotone sensitivity and the choice's probabilities on neighbouring
datasets, chunked counts, what the choice finds, and the ledger and options of the miner's runs (the
sharded runs: tests/test_tree_miners_sharded.py)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from conftest import neighbour_changes, random_view

from dprm.data import load_two_view
from dprm.data.literal_index import LiteralIndex
from dprm.datasets import make_planted
from dprm.errors import ParameterError
from dprm.mining import make_miner
from dprm.mining.initial_targets import InitialTarget, literal_masks
from dprm.mining.target_refinement import (TARGET_REFINEMENT_SENSITIVITY, leaf_refinement_counts, majority_scores,
                                           refine_target, refinement_candidates, root_candidates)
from dprm.privacy import Accountant, ExponentialMechanism, SeededNoise
from dprm.trees.tree import Tree


def _index(view) -> LiteralIndex:
    return LiteralIndex(view, mode="private", max_splits=9)


def _first_tree(index: LiteralIndex) -> Tree:
    """A fixed first tree of depth 2 on the left view: a numeric split, a Boolean and a categorical one below."""
    numeric = next(s for s in index.splits if s.kind.name == "NUMERIC" and s.code == 4)  # near the middle
    boolean = next(s for s in index.splits if s.kind.name == "BOOLEAN")
    categorical = next(s for s in index.splits if s.kind.name == "CATEGORICAL")
    return Tree(depth=2, splits=[numeric, boolean, categorical])


def _classes(tree: Tree, index: LiteralIndex) -> np.ndarray:
    cells = tree.apply_cells(index)
    return np.where(cells < tree.n_leaves, cells, -1)


def _target(index: LiteralIndex) -> InitialTarget:
    """A numeric target split in the middle of its grid (a window on both sides)."""
    return InitialTarget(1, next(s for s in index.splits if s.kind.name == "NUMERIC" and s.code == 4))


def _scores(views, target: InitialTarget) -> np.ndarray:
    left, right = _index(views[0]), _index(views[1])
    tree = _first_tree(left)
    roots, splits = root_candidates(right, target.split), refinement_candidates(right, target.split.attribute)
    return majority_scores(leaf_refinement_counts(right, roots, splits, _classes(tree, left), tree.n_leaves)).ravel()


def test_the_scores_are_the_majority_counts_of_every_candidate_tree() -> None:
    """Brute force: each candidate's partition of the rows, each part's largest class (a first-tree leaf), summed."""
    rng = np.random.default_rng(5)
    views = random_view(rng, 160, "left", 0.15), random_view(rng, 160, "right", 0.15)
    left, right = _index(views[0]), _index(views[1])
    tree = _first_tree(left)
    classes = _classes(tree, left)
    assert (classes == -1).any() and len(set(classes[classes >= 0])) == 4  # drop-outs and every leaf
    target = _target(right)
    roots = root_candidates(right, target.split)
    assert [r.code for r in roots] == [1, 2, 3, 4, 5, 6, 7]  # three grid points either side
    splits = refinement_candidates(right, target.split.attribute)
    scores = majority_scores(leaf_refinement_counts(right, roots, splits, classes, tree.n_leaves))
    for r, root in enumerate(roots):
        root_holds, root_missing = (m[:, 0] for m in literal_masks(right, [(root, None)]))
        for j, split in enumerate(splits):
            q_holds, q_missing = (m[:, 0] for m in literal_masks(right, [(split, None)]))
            for b, branch in enumerate((root_holds, ~root_holds & ~root_missing)):
                part = np.select([root_missing, ~branch, q_missing, q_holds], [0, 1, 2, 3], 4)
                expected = sum(max(int(((part == p) & (classes == c)).sum()) for c in range(4)) for p in range(5))
                assert scores[r, b, j] == expected


@pytest.mark.parametrize("seed", range(5))
def test_the_scores_are_monotone_and_the_choice_is_epsilon_dp_on_neighbouring_datasets(seed: int) -> None:
    """Every candidate's score drops by 0 or 1 when a row is removed (never rises; the first tree's leaf of
    every other row is unchanged), and the exact probabilities of the choice with and without the row are
    within e^ε (the monotone mechanism's rate exp(ε·score); the bound is reached, so the check can fail)."""
    rng = np.random.default_rng(500 + seed)
    n = int(rng.integers(30, 90))
    views = random_view(rng, n, "left", missing=0.2), random_view(rng, n, "right", missing=0.2)
    target = _target(_index(views[1]))
    epsilon = 0.6
    mechanism = ExponentialMechanism(epsilon, TARGET_REFINEMENT_SENSITIVITY, monotone=True)
    drops, worst_ratio = neighbour_changes(views, lambda vs: _scores(vs, target), mechanism,
                                           rng.choice(n, size=8, replace=False))
    assert drops <= {0.0, 1.0}
    assert 1.0 in drops
    assert worst_ratio <= epsilon + 1e-9


def test_counted_in_small_chunks_the_same(monkeypatch) -> None:
    rng = np.random.default_rng(10)
    views = random_view(rng, 700, "left", 0.1), random_view(rng, 700, "right", 0.1)
    target = _target(_index(views[1]))
    whole = _scores(views, target)
    monkeypatch.setattr("dprm.mining.target_refinement._CHUNK_CELLS", 1)  # 256 rows at a time
    assert np.array_equal(_scores(views, target), whole)


def test_the_choice_adds_the_second_literal_of_a_conjunction_and_moves_the_threshold() -> None:
    """``a`` against ``x > 60 ∧ y > 60``: from the target ``x > t`` two grid points off, the root moves to
    within a point of 60 and ``y`` goes under its true branch, at a small ε."""
    planted = make_planted(2000, n_left_boolean=20, n_right_numeric=8, relations=["thresholds"], noise=0.03,
                           random_state=1)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    left, right = (LiteralIndex(v, mode="private", max_splits=32) for v in data.views)
    names = [a.name for a in right.attributes]
    x = names.index("r_num_0")
    nearest = int(np.argmin(np.abs(right.thresholds[x] - 60)))
    target = InitialTarget(1, next(s for s in right.splits if s.attribute == x and s.code == nearest - 2))
    a = next(s for s in left.splits if left.attributes[s.attribute].name == "l_bool_0")
    classes = _classes(Tree(depth=1, splits=[a]), left)
    accountant = Accountant(0.1, SeededNoise(np.random.default_rng(3)))
    chosen = refine_target(right, target, lambda roots, splits: leaf_refinement_counts(right, roots, splits,
                                                                                       classes, 2),
                           0.1, accountant, "refineTarget#1")
    assert chosen.root.attribute == x and abs(chosen.root.code - nearest) <= 1
    assert chosen.branch is False and names[chosen.split.attribute] == "r_num_1"  # x ≤ t false: x > t ∧ …
    assert chosen.tree().splits == [chosen.root, None, chosen.split]
    assert [(e.step, float(e.epsilon)) for e in accountant.ledger] == [("refineTarget#1", 0.1)]


def test_earlier_attributes_are_left_out_but_the_targets_own_stays() -> None:
    rng = np.random.default_rng(2)
    index = _index(random_view(rng, 50, "right"))
    target = _target(index)
    splits = refinement_candidates(index, target.split.attribute, taken={target.split.attribute, 0, 3})
    attributes = {s.attribute for s in splits}
    assert target.split.attribute in attributes and not attributes & {0, 3}


def test_an_interval_target_is_not_refined() -> None:
    index = _index(random_view(np.random.default_rng(3), 50, "right"))
    split = next(s for s in index.splits if s.kind.name == "NUMERIC")
    with pytest.raises(ValueError, match="interval"):
        refine_target(index, InitialTarget(1, split, high=split.code + 2), lambda r, s: None, 0.1,
                      Accountant(0.1, SeededNoise(np.random.default_rng(0))), "refineTarget#1")


def _planted_data():
    planted = make_planted(2500, n_left_boolean=30, n_right_numeric=10, relations=["thresholds", "interval"],
                           noise=0.03, random_state=0)
    return load_two_view(planted.left, planted.right, types=planted.types)


def test_a_trees_run_spends_each_trials_tree_share_on_its_two_releases_exactly() -> None:
    data = _planted_data()
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(4)))
    miner = make_miner("mcmc-tree-pair", epsilon=1.0, trial="trees", init_trials=3, mcmc_iterations=600,
                       second_tree="refined-target")
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(4))
    assert accountant.spent() == 1  # exactly (fractions)
    steps = {e.step: e for e in accountant.ledger}
    assert not any(step.startswith("sampleTreePair") for step in steps)
    omega = Fraction(str(miner.omega_))   # the trees' share of a trial (the rule's: 0.6 for three trees trials)
    assert omega == Fraction(3, 5)
    for trial in (1, 2, 3):
        chain, extraction = steps[f"sampleTree#{trial}"], steps[f"extractReds#{trial}: cell counts"]
        refinement = steps.get(f"refineTarget#{trial}")
        assert chain.mechanism == "exponential (MCMC)"
        if refinement is None:  # an interval target: its own second tree, the chain takes the trees' share
            assert chain.epsilon * (1 - omega) == extraction.epsilon * omega
        else:
            assert refinement.mechanism == "exponential (gumbel, monotone scores)"
            assert chain.epsilon == refinement.epsilon
            assert (chain.epsilon + refinement.epsilon) * (1 - omega) == extraction.epsilon * omega
    assert miner.privacy_["guarantee"] == "none"  # seeded noise; the mechanisms are pure-dp-on-mcmc's


def test_the_default_and_the_paper_variant_keep_the_pair_chain() -> None:
    data = _planted_data()
    for options in ({}, {"variant": "paper", "init_trials": 2}):
        accountant = Accountant(1.0, SeededNoise(np.random.default_rng(1)))
        miner = make_miner("mcmc-tree-pair", epsilon=1.0, trial="trees", mcmc_iterations=300,
                           **{"init_trials": 2, **options})
        miner.fit(data, accountant=accountant, rng=np.random.default_rng(1))
        steps = [e.step for e in accountant.ledger]
        assert "sampleTreePair#1" in steps and not any(s.startswith(("sampleTree#", "refineTarget#"))
                                                       for s in steps), options


@pytest.mark.parametrize("options, message", [
    ({"targets": "uniform"}, "second-tree refined-target needs targets scored"),
    ({"anchor": "literal"}, "anchor literal acts on the pair's chain"),
    ({"pair_score": "paper"}, "pair-score paper scores the pair's chain"),
])
def test_refined_target_refuses_what_needs_the_pair_chain(options, message) -> None:
    with pytest.raises(ParameterError, match=message):
        make_miner("mcmc-tree-pair", second_tree="refined-target", **options)


def test_refined_target_in_a_run_without_trees_is_listed_as_unused() -> None:
    """At a budget where the auto rule makes literal pairs only, the option had no effect: the output says so."""
    data = _planted_data()
    miner = make_miner("mcmc-tree-pair", epsilon=0.1, second_tree="refined-target")
    miner.fit(data, accountant=Accountant(0.1, SeededNoise(np.random.default_rng(2))), rng=np.random.default_rng(2))
    assert miner.settings_["trial"] == "pair"
    assert miner.document()["parameters"]["unused"] == ["second_tree"]
