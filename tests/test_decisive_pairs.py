"""How many refined pairs the auto rule makes: the released top score of the pairs decides.

Where the auto rule asks for two or more refined pairs, a share of their budget releases
the candidates' top score (rounded down, discrete Laplace, sensitivity 1) and
:func:`dprm.mining.auto_trees.decisive_pairs` keeps as many pairs as the rest of the
budget can choose decisively. Checked here: the sensitivity on neighbouring datasets, the
rule's bar, the ledger on weak and on strong data, and that a count given by the user or
the alternations' rule is kept.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from conftest import random_view, without_row

from dprm.data.literal_index import LiteralIndex
from dprm.mining import make_miner
from dprm.mining.auto_trees import DECISIVE_ODDS, PAIR_SKETCH_SHARE, decisive_pairs
from dprm.mining.literal_pairs import PairChooser
from dprm.privacy import Accountant, SeededNoise

EPSILON = 0.3  # 3,000 rows: about 900 rows of budget, the auto rule's two refined pairs


def _top_score(views) -> int:
    scores = PairChooser([LiteralIndex(v, mode="private", max_splits=5) for v in views]).scores()
    return math.floor(float(scores.max()))


@pytest.mark.parametrize("seed", range(4))
def test_the_top_score_moves_by_at_most_one_on_neighbouring_datasets(seed: int) -> None:
    """The largest pair score, rounded down, changes by 0 or 1 when any one row is removed (the
    grids are public: the bounds), so the discrete Laplace release of sensitivity 1 is ε-DP."""
    rng = np.random.default_rng(700 + seed)
    n = int(rng.integers(40, 90))
    views = random_view(rng, n, "left", missing=0.2), random_view(rng, n, "right", missing=0.2)
    full = _top_score(views)
    changes = {abs(full - _top_score([without_row(v, row) for v in views])) for row in range(n)}
    assert changes <= {0, 1}
    assert 1 in changes  # the bound is reached: a check that can fail


def test_the_rule_keeps_the_most_pairs_whose_choice_is_decisive() -> None:
    candidates = 1000
    bar = math.log(candidates) + math.log(DECISIVE_ODDS)  # ε·M/2 must reach it
    top = 400
    exact = 2 * bar / top  # the smallest choice budget that passes with this top score
    assert decisive_pairs(top, candidates, [4 * exact, 2 * exact, exact]) == 3
    assert decisive_pairs(top, candidates, [4 * exact, 2 * exact, 0.99 * exact]) == 2
    assert decisive_pairs(top, candidates, [0.99 * exact, 0.5 * exact]) == 1  # none passes: one pair
    assert decisive_pairs(-20, candidates, [1.0, 0.5]) == 1  # a negative release (noise) as well


def _fit(data, algorithm: str = "mcmc-tree-pair", seed: int = 0, **options):
    miner = make_miner(algorithm, epsilon=EPSILON, **options)
    accountant = Accountant(EPSILON, SeededNoise(np.random.default_rng(seed)))
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(seed + 1))
    return miner, [entry.step for entry in accountant.ledger], accountant


def test_weak_data_get_one_pair_with_the_budget_of_two(independent_pairs_table) -> None:
    """Seeded runs on independent views: the released top score (true value 125 rows, noise of scale
    74) is below what two choices need (about 320 rows) in all but an unlucky draw; one pair then
    takes the two pairs' budget, and every ledger adds up to ε exactly either way."""
    counts = []
    for seed in range(4):
        miner, steps, accountant = _fit(independent_pairs_table, seed=seed)
        assert miner.settings_["trial"] == "refined-pair" and miner.init_trials_ == 2
        assert steps.index("pairs' top score") < steps.index("literal pair 1")
        assert accountant.spent() == accountant.total_epsilon  # exactly (fractions)
        sketch = next(e.epsilon for e in accountant.ledger if e.step == "pairs' top score")
        pairs = sum(e.epsilon for e in accountant.ledger[steps.index("pairs' top score"):])
        assert sketch == pairs * Fraction(str(PAIR_SKETCH_SHARE))  # the sketch's share of the pairs' budget, exactly
        counts.append(sum(step.startswith("literal pair") for step in steps))
        assert any(note.startswith("refined pairs: 1 of 2") for note in miner.notes_) == (counts[-1] == 1)
        if counts[-1] == 1:
            choice = next(e.epsilon for e in accountant.ledger if e.step == "literal pair 1")
            assert choice == (pairs - sketch) * 3 / 5  # the pair's 0.6 of the whole rest: twice one of two
    assert counts.count(1) >= 3


def test_strong_data_keep_both_pairs(strong_pairs_table) -> None:
    miner, steps, accountant = _fit(strong_pairs_table)
    assert "pairs' top score" in steps and {"literal pair 1", "literal pair 2"} <= set(steps)
    assert accountant.spent() == accountant.total_epsilon
    assert not any(note.startswith("refined pairs:") for note in miner.notes_)


def test_a_count_given_by_the_user_and_the_alternations_keep_their_pairs(independent_pairs_table) -> None:
    _, steps, accountant = _fit(independent_pairs_table, init_trials=2, trial="refined-pair")
    assert "pairs' top score" not in steps and {"literal pair 1", "literal pair 2"} <= set(steps)
    assert accountant.spent() == accountant.total_epsilon
    _, steps, _ = _fit(independent_pairs_table, algorithm="alt-expm")
    assert "pairs' top score" not in steps and "literal pair 2" in steps
