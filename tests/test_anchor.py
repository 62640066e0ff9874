"""Anchored tree pairs (``mcmc-tree-pair --anchor``): validation, the restriction, the budget.

An anchored trial's second tree (the initial target's view) keeps the released target
literal at its root (``anchor="literal"``) or its attribute (``"attribute"``, the
thresholds within ``anchor_window`` grid points); the chain is the same mechanism on
a smaller state space, so the ledger is the unanchored run's.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from dprm.data import load_two_view
from dprm.datasets import make_planted
from dprm.errors import ParameterError
from dprm.mining import make_miner
from dprm.mining.tree_pair import MCMCTreePair
from dprm.privacy import Accountant, SeededNoise
from dprm.trees.chain_draws import Anchor, node_choices

RELATIONS = ["disjunction", "interval", "thresholds", "threshold-or"]


@pytest.fixture(scope="module")
def planted():
    p = make_planted(1500, n_left_boolean=30, n_left_numeric=0, n_right_numeric=10, relations=RELATIONS,
                     noise=0.05, random_state=0)
    return load_two_view(p.left, p.right, types=p.types)


class Recording(MCMCTreePair):
    """Records each released tree with the trial's target literal."""

    def released(self, side, tree):
        self.seen.append((side, tree, self._target_literal))
        super().released(side, tree)


def run(data, seed: int = 1, **options):
    miner = Recording(epsilon=1.0, mcmc_iterations=2000, init_trials=4, trial="trees", **options)
    miner.seen = []
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(seed)))
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(seed))
    return miner, accountant


def second_trees(miner):
    """``(trial, second tree, target literal)``: the tree on the target's view of every trial."""
    return [(k // 2 + 1, tree, literal) for k, (side, tree, literal) in enumerate(miner.seen)
            if literal is not None and side == literal.side]


@pytest.mark.parametrize(("options", "message"), [
    ({"anchor": "root"}, "anchor must be one of"),
    ({"anchor": "literal", "anchor_from": 0}, "anchor-from must be at least 1"),
    ({"anchor": "literal", "targets": "uniform"}, "anchor literal needs targets scored"),
    ({"anchor": "literal", "anchor_window": 2}, "anchor-window needs anchor attribute"),
    ({"anchor": "attribute", "anchor_window": 0}, "anchor-window must be at least 1"),
])
def test_bad_anchor_options_are_refused_in_one_line(options, message) -> None:
    with pytest.raises(ParameterError, match=message) as error:
        make_miner("mcmc-tree-pair", **options)
    assert "\n" not in str(error.value)


def test_the_anchored_trees_root_is_the_released_target_literal(planted) -> None:
    miner, accountant = run(planted, anchor="literal", anchor_from=2)
    trees = second_trees(miner)
    assert len(trees) == miner.init_trials_ == 4
    anchored = 0
    for trial, tree, literal in trees:
        held = [s for s in literal.tree().splits if s is not None]  # a split, or an interval's two
        if trial >= 2:
            assert tree.splits[:len(held)] == held
            anchored += 1
    assert anchored == 3


def test_the_attribute_anchor_keeps_the_attribute_and_the_window(planted) -> None:
    miner, _ = run(planted, seed=2, anchor="attribute", anchor_from=1, anchor_window=2)
    for _, tree, literal in second_trees(miner):
        held = [s for s in literal.tree().splits if s is not None]
        for node, split in enumerate(held):
            assert tree.splits[node].attribute == split.attribute
        if held[0].kind.name == "NUMERIC":
            codes = [s.code for s in held]
            # every split of the anchored attribute in the second tree, anchored or not, is in the window
            for split in tree.splits:
                if split.attribute == held[0].attribute:
                    assert min(codes) - 2 <= split.code <= max(codes) + 2


@pytest.mark.parametrize("options", [{"anchor": "literal", "anchor_from": 1},
                                     {"anchor": "attribute", "anchor_from": 2, "anchor_window": 3}])
def test_an_anchored_run_spends_the_unanchored_runs_ledger(planted, options) -> None:
    _, free = run(planted)
    _, anchored = run(planted, **options)
    assert anchored.spent() == free.spent() == 1  # exactly (fractions)
    # every chain is charged what the free run's is (the later targets, hence their steps, may differ)
    chains = [[(e.step, e.epsilon) for e in ledger.ledger if e.step.startswith("sampleTreePair")]
              for ledger in (anchored, free)]
    assert len(chains[0]) == 4 and chains[0] == chains[1]


def document(miner, accountant) -> str:
    doc = miner.document()
    for name in ("anchor", "anchor_from", "anchor_window"):
        doc["parameters"].pop(name)
    return json.dumps({"document": doc, "ledger": [str(e) for e in accountant.ledger]}, sort_keys=True,
                      default=str)


def test_the_anchor_changes_nothing_before_its_first_trial(planted) -> None:
    free = run(planted, seed=3)
    late = run(planted, seed=3, anchor="literal", anchor_from=5)  # 4 trials
    assert document(*late) == document(*free)
    second = run(planted, seed=3, anchor="literal", anchor_from=2)[0]
    # the first trial's pair is the free run's; the second trial's differs
    assert [str(t) for _, t, _ in second.seen[:2]] == [str(t) for _, t, _ in free[0].seen[:2]]
    assert [str(t) for _, t, _ in second.seen[2:4]] != [str(t) for _, t, _ in free[0].seen[2:4]]


def test_held_nodes_are_never_proposed_and_local_ones_always_move_locally() -> None:
    rng = np.random.default_rng(0)
    for node_choice in ("uniform", "by-depth"):
        drawn = node_choices(node_choice, 2, 2, 5000, rng, held=(3, 4))
        assert set(np.unique(drawn)) == {0, 1, 2, 5}
    anchor = Anchor(nodes=(0,), splits=(1,), move="local")
    assert anchor.move == "local" and anchor.window is None
