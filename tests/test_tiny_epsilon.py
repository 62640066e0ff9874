"""A tiny ε: refused before any release by every miner, and honest in every building block (issue 9).

``dprm mine ... --epsilon 1e-30`` ended in a ``ZeroDivisionError`` in the private
extraction (the variance of discrete Laplace noise of scale 1e30). The miners now
refuse an ε below their minimum before anything is released; the mechanisms, the
extraction, the quality releases and the Serenade quality work for any positive ε
that has a float scale, and return nothing useful, honestly.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from conftest import random_view

from dprm.data import load_two_view
from dprm.data.literal_index import LiteralIndex
from dprm.datasets import make_planted
from dprm.errors import ParameterError
from dprm.mining import make_miner
from dprm.mining.extraction import Constraints
from dprm.mining.interval_estimates import INTERVAL_KEY, simulate_tables
from dprm.mining.noisy_estimates import combine_estimates, discrete_laplace_variance
from dprm.mining.private_extraction import private_extract
from dprm.mining.serenade.compute_quality import release_quality
from dprm.mining.serenade.quality import choose_steepness
from dprm.privacy import (
    Accountant,
    DiscreteLaplaceCount,
    DiscreteLaplaceHistogram,
    ExponentialMechanism,
    SecureNoise,
    SeededNoise,
    WeightedReservoir,
)
from dprm.trees.tree import Tree

PRIVATE = ["alt-expm", "alt-mcmc", "mcmc-tree-pair", "serenade-cs", "serenade-es"]
FAST = {"alt-expm": {"init_trials": 2}, "alt-mcmc": {"init_trials": 2, "mcmc_iterations": 300},
        "mcmc-tree-pair": {"init_trials": 2, "mcmc_iterations": 300}, "serenade-cs": {}, "serenade-es": {}}
TINY = [1e-30, 1e-300]
STATISTICS = ("jaccard", "intersection", "support_left", "support_right", "p_value")


@pytest.fixture(scope="module")
def planted():
    raw = make_planted(400, n_planted=2, noise=0.02, missing=0.02, random_state=3)
    return load_two_view(raw.left, raw.right, types=raw.types)


def assert_honest(redescriptions) -> None:
    for r in redescriptions:
        interval = r.extra.get(INTERVAL_KEY)
        assert interval is not None
        for key in STATISTICS:
            low, high = interval[key]
            value = getattr(r.stats, key)
            assert math.isfinite(low) and math.isfinite(high) and low <= value <= high, (key, value, interval[key])


# -- the miners ---------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", PRIVATE)
@pytest.mark.parametrize("epsilon", TINY)
def test_every_miner_refuses_a_tiny_epsilon_before_any_release(planted, algorithm, epsilon) -> None:
    accountant = Accountant(1, SeededNoise(np.random.default_rng(0)))
    with pytest.raises(ParameterError, match="epsilon must be in") as error:
        make_miner(algorithm, epsilon=epsilon, **FAST[algorithm]).fit(planted, accountant=accountant,
                                                                      rng=np.random.default_rng(0))
    message = str(error.value)
    assert "\n" not in message and "0.0001" in message  # one line, naming the minimum
    assert accountant.ledger == [] and accountant.spent() == 0


@pytest.mark.parametrize("algorithm", PRIVATE)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_miner_runs_at_a_small_epsilon_and_prunes_everything(planted, algorithm, seed) -> None:
    """Close to the minimum: noise of ~10^4 rows. It runs, spends exactly ε, draws no
    warning, and marks every result pruned, with intervals that hold the estimates."""
    epsilon = 2e-4
    accountant = Accountant(epsilon, SeededNoise(np.random.default_rng(seed)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        miner = make_miner(algorithm, epsilon=epsilon, **FAST[algorithm]).fit(
            planted, accountant=accountant, rng=np.random.default_rng(seed))
    assert float(accountant.spent()) == pytest.approx(epsilon)
    assert all(r.pruned for r in miner.redescriptions_)
    assert_honest(miner.redescriptions_)


# -- the building blocks, at any positive ε ----------------------------------------------


# Seeded noise only: at these epsilons both sources saturate every count at +-2**63 and draw
# selections as usual (test_mechanisms_at_a_tiny_epsilon checks that of each source, secure
# included), so the extraction sees the same kind of values whichever source made them.
@pytest.mark.parametrize("epsilon", TINY)
@pytest.mark.parametrize("counts", ["cells", "paper"])
def test_private_extraction_at_a_tiny_epsilon(epsilon, counts) -> None:
    rng = np.random.default_rng(1)
    views = [random_view(rng, 300, side) for side in ("left", "right")]
    indexes = [LiteralIndex(v, mode="private", max_splits=4) for v in views]
    trees = [Tree(depth=2, splits=[i.splits[int(rng.integers(len(i.splits)))] for _ in range(3)]) for i in indexes]
    cells = [t.apply_cells(i) for t, i in zip(trees, indexes)]
    accountant = Accountant(epsilon, SeededNoise(np.random.default_rng(2)))
    loose = Constraints(min_support=1, max_support=1.0, min_jaccard=0.0, max_pvalue=1.0, max_clauses=1)
    for data_size in (None, (300.0, discrete_laplace_variance(1 / epsilon))):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            found = private_extract(cells[0], trees[0], indexes[0], cells[1], trees[1], indexes[1],
                                    epsilon / 2, accountant, "extract", loose, counts=counts,
                                    data_size=data_size, rng=np.random.default_rng(3), n_simulations=100)
        assert_honest(found)
    assert accountant.spent() == accountant.total_epsilon


@pytest.mark.parametrize("epsilon", TINY)
def test_quality_release_at_a_tiny_epsilon(epsilon) -> None:
    left, right = np.arange(200) < 120, np.arange(200) < 100
    accountant = Accountant(epsilon, SeededNoise(np.random.default_rng(0)))
    released = release_quality(accountant, "quality 1", epsilon, left, right)
    assert released.data_size[1] == math.inf or released.data_size[1] > 1e59
    for n_rows in (1.0, float(2**63)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            stats = released.stats(n_rows)
            interval = released.interval(n_rows, 0.95, np.random.default_rng(1), n_simulations=200)
        for key in STATISTICS:
            assert interval[key][0] <= getattr(stats, key) <= interval[key][1]


@pytest.mark.parametrize("epsilon", TINY)
@pytest.mark.parametrize("noise", ["seeded", "secure"])
def test_mechanisms_at_a_tiny_epsilon(epsilon, noise) -> None:
    source = SeededNoise(np.random.default_rng(0)) if noise == "seeded" else SecureNoise()
    accountant = Accountant(4 * epsilon, source)
    count = DiscreteLaplaceCount(epsilon).release(accountant, "count", 500)
    assert count in (-(2**63), 2**63 - 1)  # noise beyond int64 saturates, as in OpenDP
    histogram = DiscreteLaplaceHistogram(epsilon).release(accountant, "cells", np.arange(50))
    assert histogram.dtype == np.int64 and len(set(histogram.tolist()) - {-(2**63), 2**63 - 1}) == 0
    scores = np.array([0.0, 1e6, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ExponentialMechanism(epsilon, 1).release(accountant, "select", scores) in (0, 1, 2)
        assert WeightedReservoir(epsilon, 1).release(accountant, "stream", [scores]).tolist()[0] in (0, 1, 2)
    assert accountant.spent() == accountant.total_epsilon


def test_variances_and_simulations_of_huge_scales_stay_finite() -> None:
    assert discrete_laplace_variance(1e30) == pytest.approx(2e60)
    assert discrete_laplace_variance(1e300) == math.inf
    assert combine_estimates(10.0, math.inf, (12.0, 3.0)) == (12.0, 3.0)
    assert combine_estimates(10.0, 3.0, (12.0, math.inf)) == (10.0, 3.0)
    assert combine_estimates(10.0, math.inf, (12.0, math.inf)) == (10.0, math.inf)
    draws = simulate_tables(np.array([[5, -2], [2**63 - 1, 0]]), 1e300, 50, np.random.default_rng(0))
    assert draws.dtype == np.int64 and np.all(np.abs(draws.astype(float)) > 2**62)


def test_serenade_quality_line_search_for_a_huge_noisy_row_count() -> None:
    """A tiny ε's noisy row count saturates near 2**63; its centre (10 %) is ~1e18.
    The line search used to take minutes and gigabytes there; now it is exact
    bookkeeping over blocks (and unchanged for ordinary centres)."""
    quality = choose_steepness(float(2**63) / 10, objective="range")
    down, up = quality.one_sided_sensitivity()
    assert 0 < down < up < 1e-15 and math.isfinite(quality.steepness)
    assert choose_steepness(257.5).sensitivity() == pytest.approx(0.005133, abs=5e-7)  # MAMMAL, as before


def test_the_smallest_float_epsilon_is_refused_before_any_charge() -> None:
    accountant = Accountant(1, SeededNoise(np.random.default_rng(0)))
    with pytest.raises(ParameterError):
        DiscreteLaplaceHistogram(Fraction(5e-324) / 4)
    assert accountant.ledger == []
