"""Serenade's lower-sensitivity quality: values, sensitivity (oracle: brute force), line search."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dprm.errors import ParameterError
from dprm.mining.serenade.quality import (
    JACCARD_ONE_SIDED,
    JACCARD_SENSITIVITY,
    LogisticQuality,
    brute_force_sensitivity,
    choose_steepness,
    jaccard_quality,
)

CENTERS = [0.0, 1.0, 3.5, 10.0, 25.0, 57.3, 80.0]
STEEPNESSES = [1e-7, 0.01, 0.1, 0.37, 1.0, 4.0, 1e5]


def direct_quality(i: int, u: int, center: float, lam: float) -> float:
    if u == 0:
        return 0.0
    z = lam * (i - center)
    logistic = 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))
    return i / u * logistic


# --- quality values -----------------------------------------------------------------


@pytest.mark.parametrize("center, lam", [(0.0, 0.5), (10.0, 0.3), (40.0, 2.0), (5.0, 1e-6)])
def test_values_match_direct_formula(center, lam):
    q = LogisticQuality(center, lam)
    pairs = [(i, u) for u in range(0, 60) for i in range(0, u + 1)]
    inter = np.array([p[0] for p in pairs])
    union = np.array([p[1] for p in pairs])
    got = q(inter, union)
    assert got.dtype == np.float64 and got.shape == inter.shape
    want = np.array([direct_quality(i, u, center, lam) for i, u in pairs])
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


def test_values_stable_for_huge_exponents():
    q = LogisticQuality(1e6, 1e4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = q([0, 5, 2e6, 1e6], [10, 10, 2e6, 1e6])
    assert np.all(np.isfinite(out))
    assert out[0] == 0.0 and out[1] == 0.0 and out[2] == 1.0 and out[3] == 0.5


def test_jaccard_quality():
    rng = np.random.default_rng(0)
    u = rng.integers(0, 50, size=200)
    i = (u * rng.random(200)).astype(int)
    got = jaccard_quality(i, u)
    want = np.where(u > 0, i / np.maximum(u, 1), 0.0)
    np.testing.assert_array_equal(got, want)
    assert JACCARD_SENSITIVITY == 1.0


# --- sensitivity with a public centre ------------------------------------------------


@pytest.mark.parametrize("center", CENTERS)
@pytest.mark.parametrize("lam", STEEPNESSES)
def test_sensitivity_at_size_equals_brute_force(center, lam):
    q = LogisticQuality(center, lam)
    for n in (0, 1, 2, 3, 7, 20, 45, 60):
        assert q.sensitivity(n) == pytest.approx(brute_force_sensitivity(q, n), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("center", CENTERS)
@pytest.mark.parametrize("lam", STEEPNESSES)
def test_sup_over_sizes_bounds_every_size(center, lam):
    q = LogisticQuality(center, lam)
    total = q.sensitivity()
    assert 0.0 < total <= 1.0
    for n in (1, 5, 30, 60):
        assert brute_force_sensitivity(q, n) <= total * (1 + 1e-12)


@pytest.mark.parametrize("center, lam", [(3.0, 0.8), (10.0, 0.35), (20.0, 0.3), (8.0, 2.0), (0.0, 0.2)])
def test_sup_over_sizes_is_tight(center, lam):
    # At a size well above c + 10/λ the restricted brute force reaches the supremum.
    q = LogisticQuality(center, lam)
    n = 200
    assert brute_force_sensitivity(q, n) == pytest.approx(q.sensitivity(), rel=1e-3)
    assert q.sensitivity(2000) == pytest.approx(q.sensitivity(), rel=1e-6)


def test_sup_over_sizes_matches_large_restricted_size():
    # The O(n) restricted computation (itself checked against brute force above)
    # converges to the size-free supremum from below.
    for center, lam in [(257.5, 0.02), (988.0, 0.0065), (50.0, 0.05)]:
        q = LogisticQuality(center, lam)
        big = q.sensitivity(int(20 * (center + 10 / lam)))
        assert big <= q.sensitivity() * (1 + 1e-12)
        assert big == pytest.approx(q.sensitivity(), rel=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_neighbouring_datasets_never_exceed_sensitivity(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(2, 80))
        center = float(rng.uniform(0, 20))
        lam = float(np.exp(rng.uniform(np.log(0.01), np.log(5))))
        q = LogisticQuality(center, lam)
        delta = q.sensitivity()
        # Two Boolean columns (one per view); densities chosen to vary i and u.
        left = rng.random(n) < rng.uniform(0.05, 0.95)
        right = rng.random(n) < rng.uniform(0.05, 0.95)
        i, u = np.sum(left & right), np.sum(left | right)
        before = q(i, u)
        for row in range(n):  # remove each row in turn
            keep = np.arange(n) != row
            i2, u2 = np.sum(left[keep] & right[keep]), np.sum(left[keep] | right[keep])
            assert abs(q(i2, u2) - before) <= delta * (1 + 1e-12)
            assert abs(q(i2, u2) - before) <= q.sensitivity(n) * (1 + 1e-12)


def test_known_extremes():
    # λ → 0: q → J/2 and the worst move is (0,0) -> (1,1), change ≈ 1/2.
    assert LogisticQuality(30.0, 1e-9).sensitivity() == pytest.approx(0.5, abs=1e-6)
    # λ huge: a step at c; (c,c) -> (c+1,c+1) jumps from 1/2 to 1 at an integer centre.
    assert LogisticQuality(30.0, 1e6).sensitivity() == pytest.approx(0.5, abs=1e-9)
    assert LogisticQuality(30.5, 1e6).sensitivity() == pytest.approx(1.0, abs=1e-9)


def test_sensitivity_is_cached_and_fast_path_handles_large_centre():
    q = LogisticQuality(10_000.0, 8.5e-4)
    first = q.sensitivity()
    assert q.sensitivity() is first
    assert 0 < first < 1e-3


# --- engine mode (centre f·n moves with n) -------------------------------------------


@pytest.mark.parametrize("share", [0.1, 0.35, 1.0])
@pytest.mark.parametrize("lam", [0.01, 0.2, 1.0, 5.0])
@pytest.mark.parametrize("min_rows", [0, 12, 40])
def test_engine_bound_covers_brute_force(share, lam, min_rows):
    q = LogisticQuality(123.0, lam, center_share=share, min_rows=min_rows)
    n_max = 64
    brute = brute_force_sensitivity(q, n_max)
    assert brute <= q.sensitivity(n_max) * (1 + 1e-12)
    assert q.sensitivity(n_max) <= q.sensitivity() * (1 + 1e-12)
    if share <= 0.35 and lam <= 0.2:
        # Tight in the regime that matters (small share, gentle slope).
        assert q.sensitivity(n_max) <= brute * 1.05


def test_engine_bound_covers_larger_sizes_than_brute_force():
    # min_rows large enough for a useful Δ; brute force over all n in [min_rows, 160).
    q = LogisticQuality(0.0, 0.3, center_share=0.1, min_rows=100)
    assert brute_force_sensitivity(q, 160) <= q.sensitivity() * (1 + 1e-12)
    assert brute_force_sensitivity(q, 160) == pytest.approx(q.sensitivity(), rel=0.05)


def test_engine_sensitivity_ignores_private_centre():
    a = LogisticQuality(50.0, 0.05, center_share=0.1, min_rows=300)
    b = LogisticQuality(977.3, 0.05, center_share=0.1, min_rows=300)
    assert a.sensitivity() == b.sensitivity()
    qa = choose_steepness(40.0, center_share=0.1, min_rows=300)
    qb = choose_steepness(4000.0, center_share=0.1, min_rows=300)
    assert qa.steepness == qb.steepness and qa.center == 40.0 and qb.center == 4000.0


@pytest.mark.parametrize("seed", [0, 1])
def test_engine_neighbouring_datasets(seed):
    rng = np.random.default_rng(seed)
    share, lam, min_rows = 0.2, 0.4, 20
    delta = LogisticQuality(0.0, lam, center_share=share, min_rows=min_rows).sensitivity()
    for _ in range(30):
        n = int(rng.integers(min_rows + 1, 90))
        left = rng.random(n) < rng.uniform(0.1, 0.9)
        right = rng.random(n) < rng.uniform(0.1, 0.9)
        big = LogisticQuality(share * n, lam, center_share=share, min_rows=min_rows)
        small = LogisticQuality(share * (n - 1), lam, center_share=share, min_rows=min_rows)
        before = big(np.sum(left & right), np.sum(left | right))
        for row in range(n):
            keep = np.arange(n) != row
            after = small(np.sum(left[keep] & right[keep]), np.sum(left[keep] | right[keep]))
            assert abs(after - before) <= delta * (1 + 1e-12)


def test_engine_bound_dominates_public_centres_for_tiny_share():
    # With f → 0 the engine bound covers every public centre c ≥ f·min_rows, up to the
    # centre's own move f, which changes q by at most λ f / 4.
    share, lam = 1e-6, 0.05
    q = LogisticQuality(0.0, lam, center_share=share, min_rows=50_000_000)
    c_low = share * 50_000_000
    for c in (c_low, c_low + 0.3, c_low + 1.7, c_low + 10, c_low + 100):
        assert LogisticQuality(c, lam).sensitivity() <= q.sensitivity() + lam * share / 4


# --- line search ----------------------------------------------------------------------


@pytest.mark.parametrize("center", [5.0, 57.3, 257.5, 988.0])
def test_line_search_beats_fixed_steepness(center):
    best = choose_steepness(center)
    delta = best.sensitivity()
    assert best.center == center
    for lam in (1e-4 / max(center, 1), 0.5 * best.steepness, 2 * best.steepness, 0.02, 0.1, 1.0, 50.0):
        assert delta <= LogisticQuality(center, lam).sensitivity() * (1 + 1e-9)
    # local optimality on a fine grid around the choice
    for factor in np.exp(np.linspace(-0.2, 0.2, 21)):
        assert delta <= LogisticQuality(center, best.steepness * factor).sensitivity() * (1 + 1e-6)


def test_line_search_is_deterministic_and_engine_mode_works():
    assert choose_steepness(257.5).steepness == choose_steepness(257.5).steepness
    q = choose_steepness(0.0, center_share=0.1, min_rows=2_000)
    assert q.center_share == 0.1 and q.min_rows == 2_000
    assert q.sensitivity() < LogisticQuality(0.0, 1.0, center_share=0.1, min_rows=2_000).sensitivity()


# --- bad input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"center": -1.0, "steepness": 1.0},
        {"center": float("nan"), "steepness": 1.0},
        {"center": 1.0, "steepness": 0.0},
        {"center": 1.0, "steepness": float("inf")},
        {"center": 1.0, "steepness": 1.0, "center_share": 0.0},
        {"center": 1.0, "steepness": 1.0, "center_share": 1.5},
        {"center": 1.0, "steepness": 1.0, "min_rows": 10},
        {"center": 1.0, "steepness": 1.0, "center_share": 0.1, "min_rows": -3},
        {"center": 1.0, "steepness": 1.0, "center_share": 0.1, "min_rows": 2.5},
    ],
)
def test_bad_parameters(kwargs):
    with pytest.raises(ParameterError):
        LogisticQuality(**kwargs)


def test_bad_n_max():
    with pytest.raises(ParameterError, match="n_max"):
        LogisticQuality(1.0, 1.0).sensitivity(-1)


# --- the inner maximisation over the union size ----------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rise_fall_max_against_enumeration(seed):
    # max over u in [k, U] of alpha (u-k)/(u(u+1)) + k beta/u: the helper both modes use
    # for move B. Its interior optimum rarely decides Δ, so it is checked on its own.
    from dprm.mining.serenade.quality import _rise_fall_max

    rng = np.random.default_rng(seed)
    size = 60
    k = rng.integers(1, 200, size=size).astype(float)
    alpha = rng.uniform(0.01, 1.0, size=size)
    beta = alpha * rng.uniform(0.0, 1.2, size=size) * rng.choice([1e-3, 0.1, 1.0], size=size)
    for upper in (math.inf, 150.0):
        k_ok = np.minimum(k, 150.0) if math.isfinite(upper) else k
        got = _rise_fall_max(alpha, beta, k_ok, upper, integer=True)
        relaxed = _rise_fall_max(alpha, beta, k_ok, upper, integer=False)
        for j in range(size):
            top = int(min(upper, 20_000))
            u = np.arange(int(k_ok[j]), top + 1, dtype=float)
            values = alpha[j] * (u - k_ok[j]) / (u * (u + 1)) + k_ok[j] * beta[j] / u
            assert got[j] == pytest.approx(values.max(), rel=1e-12)
            assert relaxed[j] >= values.max() * (1 - 1e-12)
            fine = np.geomspace(k_ok[j], min(upper, 1e5), 50_001)
            fine_values = alpha[j] * (fine - k_ok[j]) / (fine * (fine + 1)) + k_ok[j] * beta[j] / fine
            assert relaxed[j] >= fine_values.max() * (1 - 1e-12)
            assert relaxed[j] == pytest.approx(fine_values.max(), rel=1e-6)


# --- one-sided sensitivities (bounded range) ------------------------------------------


def brute_force_one_sided(quality, n_max: int) -> tuple[float, float]:
    """Largest decrease and increase of q when one row is added, over all (i, u), u + 1 <= n_max."""
    down = up = 0.0
    for u in range(0, n_max):
        for i in range(0, u + 1):
            before = quality(i, u)
            for after in (quality(i + 1, u + 1), quality(i, u + 1)):
                change = float(after - before)
                down, up = max(down, -change), max(up, change)
    return down, up


@pytest.mark.parametrize("center", [0.0, 3.5, 10.0, 25.0])
@pytest.mark.parametrize("lam", [0.01, 0.37, 4.0])
def test_one_sided_at_size_equals_brute_force(center, lam):
    q = LogisticQuality(center, lam)
    for n in (0, 1, 2, 7, 45):
        got = q.one_sided_sensitivity(n)
        want = brute_force_one_sided(q, n)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15)
        assert max(got) == pytest.approx(q.sensitivity(n), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("center, lam", [(3.0, 0.8), (10.0, 0.35), (20.0, 0.3), (0.0, 0.2)])
def test_one_sided_over_sizes_bounds_and_is_tight(center, lam):
    q = LogisticQuality(center, lam)
    down, up = q.one_sided_sensitivity()
    assert max(down, up) == pytest.approx(q.sensitivity(), rel=1e-12)
    assert q.score_range() == pytest.approx(down + up, rel=1e-15)
    small = brute_force_one_sided(q, 150)
    assert small[0] <= down * (1 + 1e-12) and small[1] <= up * (1 + 1e-12)
    big = q.one_sided_sensitivity(4000)
    assert big == pytest.approx((down, up), rel=1e-6)


def test_jaccard_one_sided_constant_is_brute_force():
    assert brute_force_one_sided(jaccard_quality, 40) == JACCARD_ONE_SIDED


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_removing_a_row_moves_every_score_inside_the_mirrored_interval(seed):
    # Removing a row is the reverse of adding it: changes lie in [-up, down].
    rng = np.random.default_rng(seed)
    for _ in range(30):
        n = int(rng.integers(2, 60))
        q = LogisticQuality(float(rng.uniform(0, 15)), float(np.exp(rng.uniform(np.log(0.02), np.log(3)))))
        down, up = q.one_sided_sensitivity()
        left = rng.random((5, n)) < rng.uniform(0.1, 0.9)
        right = rng.random((5, n)) < rng.uniform(0.1, 0.9)
        i = (left[:, None] & right[None]).sum(-1)
        u = (left[:, None] | right[None]).sum(-1)
        row = int(rng.integers(n))
        keep = np.arange(n) != row
        i2 = (left[:, None, keep] & right[None, :, keep]).sum(-1)
        u2 = (left[:, None, keep] | right[None, :, keep]).sum(-1)
        change = q(i2, u2) - q(i, u)
        assert change.min() >= -up * (1 + 1e-12) - 1e-15
        assert change.max() <= down * (1 + 1e-12) + 1e-15


def test_bounded_range_draw_is_epsilon_dp_on_neighbours():
    # Exact selection probabilities ∝ exp(ε q / R) over many candidates on D and D minus a row.
    from scipy.special import log_softmax

    rng = np.random.default_rng(7)
    epsilon = 1.0
    for _ in range(20):
        n = int(rng.integers(5, 50))
        q = LogisticQuality(float(rng.uniform(0, 8)), float(np.exp(rng.uniform(np.log(0.05), np.log(2)))))
        left = rng.random((6, n)) < rng.uniform(0.1, 0.9, size=(6, 1))
        right = rng.random((6, n)) < rng.uniform(0.1, 0.9, size=(6, 1))
        scale = q.score_range() / epsilon
        logp = []
        for keep in (np.ones(n, bool), np.arange(n) != int(rng.integers(n))):
            i = (left[:, None, keep] & right[None, :, keep]).sum(-1).ravel()
            u = (left[:, None, keep] | right[None, :, keep]).sum(-1).ravel()
            logp.append(log_softmax(q(i, u) / scale))
        assert np.abs(logp[0] - logp[1]).max() <= epsilon * (1 + 1e-9)


def test_range_line_search_never_worse_than_sensitivity_search():
    for center in (30.0, 257.5):
        by_range = choose_steepness(center, objective="range")
        by_delta = choose_steepness(center)
        assert by_range.score_range() <= by_delta.score_range() * (1 + 1e-9)
        assert by_range.score_range() < 2 * by_range.sensitivity()
    with pytest.raises(ParameterError, match="objective"):
        choose_steepness(10.0, objective="width")
    with pytest.raises(ParameterError, match="public centre"):
        LogisticQuality(10.0, 0.1, center_share=0.1, min_rows=100).one_sided_sensitivity()
