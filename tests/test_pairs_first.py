"""Trees-then-pairs reads the pairs' released top score first: weak structure gets refined pairs at once.

Where MCMCTreePair's auto rule makes trees-then-pairs (two trials' budget and more),
:data:`~dprm.mining.auto_trees.PAIR_SKETCH_SHARE` of the budget first releases the literal
pairs' top score (rounded down, discrete Laplace, sensitivity 1: the release of
tests/test_decisive_pairs.py, whose neighbouring-dataset test covers it). Below
:data:`~dprm.mining.auto_trees.WEAK_TOP_SCORE` of the noisy row count every trial is a
refined pair, as many as that release says the budget chooses decisively; above it the
release came out of the initial targets' share and the trials are trees as before.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dprm.mining import make_miner
from dprm.mining.auto_trees import PAIR_SKETCH_SHARE, WEAK_TOP_SCORE, pairs_first
from dprm.privacy import Accountant, SeededNoise

from conftest import spent_before_trials

EPSILON = 1.0  # 3,000 rows: about 3,000 rows of budget, the auto rule's three trees trials of trees-then-pairs, or
# (pairs first) four or five refined pairs at most


def test_the_rule_reads_the_top_score_as_a_share_of_the_rows() -> None:
    assert pairs_first(WEAK_TOP_SCORE * 3000 - 1, 3000)
    assert not pairs_first(WEAK_TOP_SCORE * 3000, 3000)
    assert pairs_first(-40, 3000)  # a negative release (noise) as well


def _fit(data, seed: int = 0, **options):
    miner = make_miner("mcmc-tree-pair", epsilon=EPSILON, mcmc_iterations=300, **options)
    accountant = Accountant(EPSILON, SeededNoise(np.random.default_rng(seed)))
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(seed + 1))
    return miner, accountant



def assert_refined_pairs_from_the_start(miner, accountant: Accountant, trial: str, tree_step: str) -> list[str]:
    """A run of trial ``trial`` on weak data: the top score released first, then only refined pairs (no
    target, no ``tree_step``), the sketch's share and the ledger exact, the note. Returns the ledger's steps."""
    steps = [e.step for e in accountant.ledger]
    assert miner.settings_["trial"] == trial
    assert not any(step.startswith((tree_step, "initial target")) for step in steps)
    assert steps.index("pairs' top score") < steps.index("literal pair 1")
    assert accountant.spent() == accountant.total_epsilon  # exactly (fractions)
    rest = accountant.total_epsilon - spent_before_trials(accountant)
    sketch = next(e.epsilon for e in accountant.ledger if e.step == "pairs' top score")
    assert sketch == rest * Fraction(str(PAIR_SKETCH_SHARE))
    pairs = sum(step.startswith("literal pair") for step in steps)
    assert 1 <= pairs <= miner.init_trials_ and sum(step.startswith("refinement") for step in steps) == pairs
    assert any(note.startswith(f"trial {trial}: the released top score of the pairs") for note in miner.notes_)
    return steps


@pytest.mark.parametrize("seed", range(3))
def test_weak_data_get_refined_pairs_from_the_start(independent_pairs_table, seed: int) -> None:
    miner, accountant = _fit(independent_pairs_table, seed)
    steps = assert_refined_pairs_from_the_start(miner, accountant, "trees-then-pairs", "sampleTreePair")
    assert miner.init_trials_ >= 4
    # one release of the top score decides both the trial kind and the number of pairs
    assert steps.count("pairs' top score") == 1
    assert any("mcmc-iterations had no effect: no MCMC chain ran (its trials were literal pairs)" in note
               for note in miner.notes_)
    assert miner.privacy_["guarantee"] != "pure-dp-on-mcmc-convergence"


def test_strong_data_keep_their_trees_and_the_release_comes_out_of_the_targets_share(strong_pairs_table) -> None:
    miner, accountant = _fit(strong_pairs_table)
    steps = [e.step for e in accountant.ledger]
    assert steps.index("pairs' top score") < steps.index("initial target 1: attribute")
    assert sum(step.startswith("sampleTreePair") for step in steps) == miner.init_trials_ == 3
    assert not any(step.startswith("literal pair") for step in steps)
    assert not any("refined pairs" in note for note in miner.notes_)
    assert accountant.spent() == accountant.total_epsilon
    rest = accountant.total_epsilon - spent_before_trials(accountant)
    targets = sum((e.epsilon for e in accountant.ledger
                   if e.step.startswith("initial target") or e.step == "pairs' top score"), Fraction(0))
    assert targets == rest * Fraction(str(miner.target_share_))  # the trees' share is unchanged


def test_trees_given_make_no_release_of_the_top_score(independent_pairs_table) -> None:
    _, accountant = _fit(independent_pairs_table, trial="trees")
    steps = [e.step for e in accountant.ledger]
    assert "pairs' top score" not in steps and "sampleTreePair#1" in steps
    assert accountant.spent() == accountant.total_epsilon
