"""SerenadeES's memoised extension race is exactly a sequence of exponential-mechanism draws."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy.special import softmax
from scipy.stats import chisquare

from dprm.errors import ParameterError
from dprm.mining.serenade.race import ExtensionRace
from dprm.privacy import Accountant, SeededNoise

# Two slots (redescriptions); slot 0 has three candidates, slot 1 two. After a round,
# the winning slot is "replaced": its candidates shift (the new redescription's scores).
SCORES = {0: np.array([0.0, 1.5, 0.7]), 1: np.array([1.0, 0.2])}
REPLACED = {0: np.array([2.0, 0.0, 0.5]), 1: np.array([0.3, 1.2])}
SCALE_EPS = 2.0  # epsilon per round with sensitivity 1: scale = 1


def _exact_two_rounds() -> dict[tuple, float]:
    """Probabilities of (winner 1, choice 1, winner 2, choice 2) under sequential EM draws."""
    out = {}
    flat1 = [(s, c, v) for s in (0, 1) for c, v in enumerate(SCORES[s])]
    p1 = softmax([v for _, _, v in flat1])
    for (s1, c1, _), q1 in zip(flat1, p1):
        current = dict(SCORES)
        current[s1] = REPLACED[s1]
        flat2 = [(s, c, v) for s in (0, 1) for c, v in enumerate(current[s])]
        p2 = softmax([v for _, _, v in flat2])
        for (s2, c2, _), q2 in zip(flat2, p2):
            out[(s1, c1, s2, c2)] = q1 * q2
    return out


@pytest.mark.parametrize("max_age", [0, 1, 40])
def test_two_rounds_have_the_exponential_mechanisms_joint_distribution(max_age: int) -> None:
    rng = np.random.default_rng(max_age)
    exact = _exact_two_rounds()
    # 5,000 runs (was 20,000): a false failure has probability 1e-3 (the chi-square threshold,
    # smallest expected cell 31); against the naive memoisation of the control below (its
    # distribution estimated from 300,000 draws) the non-centrality is 515 on 24 degrees of
    # freedom, so a race that behaved like it would pass with probability 8e-61.
    runs = 5000
    seen: Counter = Counter()
    for _ in range(runs):
        accountant = Accountant(2 * SCALE_EPS, SeededNoise(rng))
        race = ExtensionRace(SCALE_EPS, 1, max_age=max_age)
        current = dict(SCORES)
        s1, c1 = race.round(accountant, "extension 1", [0, 1], current.__getitem__)
        current[s1] = REPLACED[s1]
        s2, c2 = race.round(accountant, "extension 2", [0, 1], current.__getitem__)
        seen[(s1, c1, s2, c2)] += 1
    keys = sorted(exact)
    observed = np.array([seen[k] for k in keys])
    expected = np.array([exact[k] for k in keys]) * runs
    assert chisquare(observed, expected).pvalue > 1e-3


def test_naive_memoisation_would_fail_the_same_check() -> None:
    """Control: fresh keys for the new slot against old stored keys (the paper's scheme) differ."""
    rng = np.random.default_rng(5)
    exact = _exact_two_rounds()
    runs = 20000
    seen: Counter = Counter()
    for _ in range(runs):
        current = dict(SCORES)
        keys = {s: current[s] + rng.gumbel(size=current[s].size) for s in (0, 1)}
        best = {s: (int(np.argmax(k)), float(np.max(k))) for s, k in keys.items()}
        s1 = max((0, 1), key=lambda s: best[s][1])
        c1 = best[s1][0]
        current[s1] = REPLACED[s1]
        k = current[s1] + rng.gumbel(size=current[s1].size)
        best[s1] = (int(np.argmax(k)), float(np.max(k)))
        s2 = max((0, 1), key=lambda s: best[s][1])
        seen[(s1, c1, s2, best[s2][0])] += 1
    keys = sorted(exact)
    observed = np.array([seen[k] for k in keys])
    expected = np.array([exact[k] for k in keys]) * runs
    assert chisquare(observed, expected).pvalue < 1e-6


def test_each_round_is_charged_before_its_draws() -> None:
    charged = []

    class Recording(SeededNoise):
        def gumbel(self, size):
            charged.append(len(accountant.ledger))
            return super().gumbel(size)

    accountant = Accountant(1, Recording(np.random.default_rng(0)))
    race = ExtensionRace("1/4", 1, max_age=0)
    for t in range(1, 5):
        race.round(accountant, f"extension {t}", [0, 1], SCORES.__getitem__)
        assert len(accountant.ledger) == t and min(charged[-2:]) == t  # max_age 0: both slots redrawn
    assert accountant.remaining() == 0


def test_bad_max_age() -> None:
    with pytest.raises(ParameterError, match="max-age"):
        ExtensionRace(1, 1, max_age=-1)
