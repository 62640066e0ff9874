"""Redescription statistics and the binomial p-value."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dprm.errors import DprmError
from dprm.queries import STATS_KEYS, RedescriptionStats, p_value


def brute_force_p_value(inter: int, sl: int, sr: int, n: int) -> float:
    """P[X >= inter], X ~ Bin(n, (sl/n)(sr/n)), summed exactly with fractions."""
    p = Fraction(sl * sr, n * n)
    return float(sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(inter, n + 1)))


@pytest.mark.parametrize("seed", range(5))
def test_p_value_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(1, 40))
        sl, sr = (int(v) for v in rng.integers(0, n + 1, 2))
        inter = int(rng.integers(max(0, sl + sr - n), min(sl, sr) + 1))
        expected = brute_force_p_value(inter, sl, sr, n)
        assert p_value(inter, sl, sr, n) == pytest.approx(expected, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("seed", range(3))
def test_p_value_equals_scipy_binomial_tail_at_every_scale(seed):
    """p_value calls scipy's Boost tail directly (no scipy.stats import): the same numbers."""
    from scipy.stats import binom

    rng = np.random.default_rng(seed)
    n = np.rint(10 ** rng.uniform(0, 9, 5000))
    sl, sr = (np.floor(rng.uniform(0, 1, n.size) * (n + 1)) for _ in range(2))
    low, high = np.maximum(sl + sr - n, 0), np.minimum(sl, sr)
    inter = np.floor(low + rng.uniform(0, 1, n.size) * (high - low + 1))
    expected = np.where(inter <= 0, 1.0, binom.sf(inter - 1, n, (sl / n) * (sr / n)))
    assert np.array_equal(p_value(inter, sl, sr, n), expected)


def test_greater_or_equal_convention():
    # X ~ Bin(4, 1/4): P[X >= 1] = 1 - (3/4)^4, whereas P[X > 1] would be smaller
    assert p_value(1, 2, 2, 4) == pytest.approx(1 - 0.75**4)
    assert p_value(0, 2, 2, 4) == 1.0
    assert p_value(2, 2, 2, 4) == pytest.approx(1 - 0.75**4 - 4 * 0.25 * 0.75**3)
    q = 9 / 16  # X ~ Bin(4, (3/4)^2): P[X >= 3] = P[X = 3] + P[X = 4]
    assert p_value(3, 3, 3, 4) == pytest.approx(4 * q**3 * (1 - q) + q**4)
    assert p_value(0, 0, 0, 0) == 1.0
    assert p_value(3, 3, 3, 3) == 1.0  # p = 1: X = n surely


def test_vectorised_and_broadcast():
    inter = np.array([[0, 1, 2], [3, 4, 5]])
    out = p_value(inter, 5, 6, 20)
    assert isinstance(out, np.ndarray) and out.shape == (2, 3)
    expected = [[brute_force_p_value(int(k), 5, 6, 20) for k in row] for row in inter]
    np.testing.assert_allclose(out, expected, rtol=1e-9)
    assert np.all(np.diff(out, axis=1) < 0)  # larger overlap, smaller p-value
    assert isinstance(p_value(2, 5, 6, 20), float)


def test_huge_row_counts_do_not_overflow():
    # int32 inputs: sl * sr = 10^10 would overflow int32 (and n^2 for n > 46,340)
    n = np.array([100_000], dtype=np.int32)
    sl = sr = np.array([100_000 // 2], dtype=np.int32)
    inter = np.array([25_000], dtype=np.int32)
    out = p_value(inter, sl, sr, n)
    assert 0.4 < out[0] < 0.6  # the mean of Bin(10^5, 1/4) is 25,000
    big = p_value(260_000_000, 500_000_000, 500_000_000, 1_000_000_000)
    assert 0.0 <= big < 1e-100
    assert p_value(250_000_000, 500_000_000, 500_000_000, 1_000_000_000) == pytest.approx(0.5, abs=0.01)


def test_noisy_inputs_rounded_and_clipped():
    assert p_value(2.6, 3.4, 2.9, 10.2) == p_value(3, 3, 3, 10)
    assert p_value(-4.0, 3, 3, 10) == 1.0  # intersection below 0 -> 0
    assert p_value(9.0, 3, 3, 10) == p_value(3, 3, 3, 10)  # intersection clipped to min(sL, sR)
    assert p_value(3, 14, 3, 10) == p_value(3, 10, 3, 10)  # supports clipped to n
    assert p_value(0, 8, 7, 10) == p_value(5, 8, 7, 10)  # at least sL + sR - n = 5 rows overlap
    assert p_value(1, 1, 1, -5.0) == 1.0  # n clipped to 0
    with pytest.raises(DprmError):
        p_value(float("nan"), 1, 1, 4)


def test_from_supports_is_exact():
    left = np.array([1, 1, 1, 0, 0, 0, 1, 0], dtype=bool)
    right = np.array([1, 1, 0, 1, 0, 0, 1, 0], dtype=bool)
    s = RedescriptionStats.from_supports(left, right)
    assert (s.support_left, s.support_right, s.intersection, s.union) == (4, 4, 3, 5)
    assert s.jaccard == 0.6
    assert s.p_value == pytest.approx(brute_force_p_value(3, 4, 4, 8))
    empty = RedescriptionStats.from_supports(np.zeros(5, bool), np.zeros(5, bool))
    assert (empty.union, empty.jaccard, empty.p_value) == (0, 0.0, 1.0)
    with pytest.raises(DprmError):
        RedescriptionStats.from_supports(np.zeros(5, bool), np.zeros(4, bool))


def test_from_counts_equals_from_supports_on_exact_counts():
    rng = np.random.default_rng(3)
    for _ in range(20):
        left, right = rng.random(30) < 0.4, rng.random(30) < 0.5
        exact = RedescriptionStats.from_supports(left, right)
        counted = RedescriptionStats.from_counts(left.sum(), right.sum(), (left & right).sum(), 30)
        assert counted.to_json() == pytest.approx(exact.to_json())


def test_from_counts_clips_noisy_values():
    s = RedescriptionStats.from_counts(812.4, 790.1, 801.3)  # intersection above the right support
    assert (s.support_left, s.support_right, s.intersection) == (812.4, 790.1, 790.1)
    assert s.union == pytest.approx(812.4) and s.jaccard == pytest.approx(790.1 / 812.4)
    assert s.p_value is None  # no row count: unknown
    s = RedescriptionStats.from_counts(-3.2, 5.0, 1.7)
    assert (s.support_left, s.intersection, s.union, s.jaccard) == (0.0, 0.0, 5.0, 0.0)
    s = RedescriptionStats.from_counts(-1.0, -2.0, -0.5, 100.0)
    assert (s.union, s.jaccard, s.p_value) == (0.0, 0.0, 1.0)
    s = RedescriptionStats.from_counts(90.0, 80.0, 10.0, 100.0)  # at least 70 must overlap
    assert s.intersection == 70.0 and s.union == 100.0
    s = RedescriptionStats.from_counts(130.0, 20.0, 5.0, 100.0)
    assert (s.support_left, s.intersection) == (100.0, 20.0)


def test_to_json_and_validation():
    s = RedescriptionStats.from_counts(np.float64(10.5), np.int64(8), 6.0, 40)
    out = s.to_json()
    assert tuple(out) == STATS_KEYS
    assert all(type(v) in (int, float) for v in out.values())
    assert RedescriptionStats.from_json(out) == s
    with pytest.raises(DprmError, match="jaccard must be finite"):
        RedescriptionStats(1, 1, 1, 1, float("nan"), None)
    with pytest.raises(DprmError, match="union must be a number"):
        RedescriptionStats(1, 1, 1, None, 1.0, None)
    with pytest.raises(DprmError, match=r"noisy: missing key 'union'"):
        RedescriptionStats.from_json({k: 1 for k in STATS_KEYS if k != "union"})
    with pytest.raises(DprmError, match=r"noisy: unknown key 'n'"):
        RedescriptionStats.from_json({**out, "n": 3})
    with pytest.raises(DprmError, match=r"noisy\.jaccard: must be a finite number"):
        RedescriptionStats.from_json({**out, "jaccard": "0.5"})


@pytest.mark.parametrize("share_left, share_right", [(0.9, 0.9), (0.1, 0.3), (0.5, 0.02)])
def test_independence_jaccard_is_what_independent_queries_have(share_left: float, share_right: float) -> None:
    from dprm.queries import excess_jaccard, independence_jaccard

    rng = np.random.default_rng(4)
    n = 200_000
    left, right = rng.random(n) < share_left, rng.random(n) < share_right
    stats = RedescriptionStats.from_supports(left, right)
    expected = independence_jaccard(stats.support_left, stats.support_right, n)
    assert abs(stats.jaccard - expected) < 0.01
    assert abs(excess_jaccard(stats.jaccard, stats.support_left, stats.support_right, n)) < 0.01
    same = RedescriptionStats.from_supports(left, left)  # the same rows: all the excess there is
    assert excess_jaccard(1.0, same.support_left, same.support_left, n) == pytest.approx(1 - independence_jaccard(
        same.support_left, same.support_left, n))


def test_independence_jaccard_edges() -> None:
    from dprm.queries import independence_jaccard

    assert independence_jaccard(0, 0, 100) == 0.0
    assert independence_jaccard(10, 10, 0) == 0.0
    assert independence_jaccard(100, 100, 100) == 1.0
    assert independence_jaccard(150, -5, 100) == 0.0  # noisy sizes clipped into [0, n]
