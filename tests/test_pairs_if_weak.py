"""The alternations read the pairs' released top score first too (trial ``pairs-if-weak``, session 40).

From two trials' budget AltMCMC's (and AltExpM's, where its trials are trees) auto rule
makes ``pairs-if-weak`` trials: :data:`~dprm.mining.auto_trees.PAIR_SKETCH_SHARE` of the
budget releases the literal pairs' top score (the release of tests/test_pairs_first.py);
below :data:`~dprm.mining.auto_trees.WEAK_TOP_SCORE` of the noisy row count every trial is a
refined pair, otherwise the release came out of the initial targets' share and the trials
are the alternations' trees to the end. MCMCTreePair takes the kind as an option: the same
start, then trees without trees-then-pairs' switch.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dprm.errors import ParameterError
from dprm.mining import make_miner
from dprm.mining.auto_trees import PAIRS_IF_WEAK, auto_tree_settings
from dprm.privacy import Accountant, SeededNoise

from conftest import spent_before_trials
from test_pairs_first import assert_refined_pairs_from_the_start

EPSILON = 1.0  # 3,000 rows: about 3,000 rows of budget, four or five trials


def _fit(data, algorithm: str = "alt-mcmc", seed: int = 0, epsilon: float = EPSILON, **options):
    iterations = {} if algorithm == "alt-expm" else {"mcmc_iterations": 300}
    miner = make_miner(algorithm, epsilon=epsilon, **iterations, **options)
    accountant = Accountant(epsilon, SeededNoise(np.random.default_rng(seed)))
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(seed + 1))
    return miner, accountant



def test_the_rule_gives_the_alternations_pairs_if_weak_from_two_trials() -> None:
    assert auto_tree_settings(1.0, 3000, alternating=True).trial == PAIRS_IF_WEAK
    assert auto_tree_settings(1.0, 3000).trial == "trees-then-pairs"                 # MCMCTreePair: unchanged
    assert auto_tree_settings(0.3, 3000, alternating=True).trial == "refined-pair"   # below two trials' budget
    assert auto_tree_settings(1.0, 3000, alternating=True, pairs=False).trial == "trees"
    assert auto_tree_settings(1.0, 3000, alternating=True, scored=False).trial == "trees"


@pytest.mark.parametrize("seed", range(2))
def test_weak_data_get_refined_pairs_from_the_start(independent_pairs_table, seed: int) -> None:
    miner, accountant = _fit(independent_pairs_table, seed=seed)
    assert_refined_pairs_from_the_start(miner, accountant, PAIRS_IF_WEAK, "tree ")


def test_strong_data_keep_the_alternations_trees_and_the_release_comes_out_of_the_targets_share(
        strong_pairs_table) -> None:
    miner, accountant = _fit(strong_pairs_table)
    steps = [e.step for e in accountant.ledger]
    assert steps.index("pairs' top score") < steps.index("initial target 1: attribute")
    trials = miner.init_trials_
    assert [step for step in steps if step.startswith("tree ")] == [f"tree {k}.{a}" for k in range(1, trials + 1)
                                                                    for a in (0, 1)]
    assert not any(step.startswith("literal pair") for step in steps)
    assert accountant.spent() == accountant.total_epsilon
    rest = accountant.total_epsilon - spent_before_trials(accountant)
    targets = sum((e.epsilon for e in accountant.ledger
                   if e.step.startswith("initial target") or e.step == "pairs' top score"), Fraction(0))
    assert targets == rest * Fraction(str(miner.target_share_))  # the trees' and extractions' shares are unchanged


def test_alt_expm_reads_it_where_its_trials_are_trees(independent_pairs_table, strong_pairs_table) -> None:
    # 3,000 rows at ε = 2.5: 7,500 rows of budget, above AltExpM's 6,000 for trees
    miner, accountant = _fit(independent_pairs_table, "alt-expm", epsilon=2.5)
    steps = [e.step for e in accountant.ledger]
    assert miner.settings_["trial"] == PAIRS_IF_WEAK and "literal pair 1" in steps
    assert not any(step.startswith("tree ") for step in steps)
    miner, accountant = _fit(strong_pairs_table, "alt-expm", epsilon=2.5)
    steps = [e.step for e in accountant.ledger]
    assert "pairs' top score" in steps and any(step.startswith("tree 1.0") for step in steps)
    assert accountant.spent() == accountant.total_epsilon


def test_mcmc_tree_pair_takes_it_as_an_option_without_the_switch(independent_pairs_table, trees_first) -> None:
    # trees_first: no top score counts as weak, so the run reaches its trees; on independent views
    # trees-then-pairs would switch to refined pairs after two trees trials, pairs-if-weak does not
    miner, accountant = _fit(independent_pairs_table, "mcmc-tree-pair", trial=PAIRS_IF_WEAK)
    steps = [e.step for e in accountant.ledger]
    assert sum(step.startswith("sampleTreePair") for step in steps) == miner.init_trials_
    assert not any(step.startswith("literal pair") for step in steps)
    assert accountant.spent() == accountant.total_epsilon


def test_given_trees_make_no_release_and_uniform_targets_are_refused(independent_pairs_table) -> None:
    _, accountant = _fit(independent_pairs_table, trial="trees")
    assert "pairs' top score" not in [e.step for e in accountant.ledger]
    with pytest.raises(ParameterError, match="needs targets scored"):
        _fit(independent_pairs_table, trial=PAIRS_IF_WEAK, targets="uniform")
    with pytest.raises(ParameterError, match="pairs-if-weak"):
        _fit(independent_pairs_table, trial="trees-then-pairs")
