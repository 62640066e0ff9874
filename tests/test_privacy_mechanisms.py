"""Statistical tests of every mechanism's distribution, on the seeded and the secure path.

Each goodness-of-fit test also has a power check: the same samples must *reject* a
wrong parameter (1.3 times the scale or epsilon), so a test that cannot fail does not
pass silently. Seeded tests are deterministic; the secure path is random, so its
thresholds are p-values of 1e-4 with enough samples to still reject wrong
distributions.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import softmax

from dprm.errors import ParameterError
from dprm.privacy import (
    Accountant,
    DiscreteLaplaceCount,
    DiscreteLaplaceHistogram,
    ExponentialMechanism,
    MetropolisHastings,
    NoiseSource,
    SecureNoise,
    SeededNoise,
    WeightedReservoir,
)

ALPHA = 1e-4
PATHS = ["seeded", "secure"]


def make_noise(path: str, seed: int = 0) -> NoiseSource:
    return SeededNoise(np.random.default_rng(seed)) if path == "seeded" else SecureNoise()


def make_accountant(path: str, seed: int = 0, total: float = 10**9) -> Accountant:
    return Accountant(total, make_noise(path, seed))


def chi2_pvalue(counts: np.ndarray, probs: np.ndarray) -> float:
    """Chi-square goodness of fit; bins with expected count < 5 are pooled."""
    counts = np.asarray(counts, dtype=float)
    probs = np.asarray(probs, dtype=float)
    n = counts.sum()
    expected = n * probs / probs.sum()
    keep = expected >= 5
    obs, exp = list(counts[keep]), list(expected[keep])
    rest_obs, rest_exp = counts[~keep].sum(), expected[~keep].sum()
    if rest_exp >= 5:
        obs.append(rest_obs)
        exp.append(rest_exp)
    elif rest_exp > 0 or rest_obs > 0:
        smallest = int(np.argmin(exp))
        obs[smallest] += rest_obs
        exp[smallest] += rest_exp
    return float(stats.chisquare(obs, exp).pvalue)


def discrete_laplace_bins(scale: float, half_width: int) -> np.ndarray:
    """Probabilities of bins (< -K), -K, ..., K, (> K) for P(z) ∝ exp(-|z|/scale)."""
    a = math.exp(-1.0 / scale)
    z = np.arange(-half_width, half_width + 1)
    centre = (1 - a) / (1 + a) * a ** np.abs(z)
    tail = a ** (half_width + 1) / (1 + a)
    return np.concatenate(([tail], centre, [tail]))


def bin_noise(noise: np.ndarray, half_width: int) -> np.ndarray:
    clipped = np.clip(noise, -half_width - 1, half_width + 1) + half_width + 1
    return np.bincount(clipped, minlength=2 * half_width + 3)


def permute_and_flip_probs(scores: np.ndarray, scale: float) -> np.ndarray:
    """P(argmax(q/s + E)) for standard exponential E, by numerical integration."""
    a = scores / scale
    top = a.max()

    def density(t: float, i: int) -> float:
        x = t + top
        others = np.delete(a, i)
        return math.exp(-(x - a[i])) * float(np.prod(1.0 - np.exp(-(x - others))))

    probs = np.array(
        [integrate.quad(density, 0.0, np.inf, args=(i,), epsabs=1e-13)[0] for i in range(a.size)]
    )
    assert math.isclose(probs.sum(), 1.0, rel_tol=1e-6)
    return probs


SCORES = np.array([0.0, 1.5, 3.0, 2.2, -1.0, 0.7])


# --- discrete Laplace ----------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
def test_discrete_laplace_histogram_matches_pmf(path):
    n = 200_000 if path == "seeded" else 100_000
    mech = DiscreteLaplaceHistogram(epsilon=0.4)
    assert mech.scale >= 2.5 and math.isclose(mech.scale, 2.5)  # rounded up, never down
    values = np.arange(n, dtype=np.int64) % 50
    noisy = mech.release(make_accountant(path), "h", values)
    assert noisy.dtype == np.int64 and noisy.shape == values.shape
    counts = bin_noise(noisy - values, 20)
    assert chi2_pvalue(counts, discrete_laplace_bins(mech.scale, 20)) > ALPHA
    # power: a 1.3x wrong scale is rejected by the same samples
    assert chi2_pvalue(counts, discrete_laplace_bins(1.3 * mech.scale, 20)) < ALPHA
    assert chi2_pvalue(counts, discrete_laplace_bins(mech.scale / 1.3, 20)) < ALPHA


@pytest.mark.parametrize("path", PATHS)
def test_discrete_laplace_count_matches_pmf(path):
    acc = make_accountant(path, seed=1)
    mech = DiscreteLaplaceCount(epsilon=1.0)
    noise = np.array([mech.release(acc, f"c{i}", 100) - 100 for i in range(5000)])
    counts = bin_noise(noise, 6)
    assert chi2_pvalue(counts, discrete_laplace_bins(1.0, 6)) > ALPHA
    assert chi2_pvalue(counts, discrete_laplace_bins(1.3, 6)) < ALPHA
    assert acc.spent() == 5000
    assert isinstance(mech.release(acc, "c", np.int64(4)), int)


@pytest.mark.parametrize("path", PATHS)
def test_discrete_laplace_extreme_scales(path):
    acc = make_accountant(path, seed=2)
    values = np.full(10_000, 7, dtype=np.int64)
    assert np.array_equal(DiscreteLaplaceHistogram(60).release(acc, "sharp", values), values)
    wide = DiscreteLaplaceHistogram(1e-4).release(acc, "wide", values) - 7
    a = math.exp(-1e-4)
    expected_sd = math.sqrt(2 * a) / (1 - a)  # the discrete Laplace standard deviation
    assert abs(wide.std() / expected_sd - 1) < 0.05
    big = np.array([2**40, -(2**40)], dtype=np.int64)
    assert np.all(np.abs(DiscreteLaplaceHistogram(1).release(acc, "big", big) - big) < 10**4)


def test_seeded_noise_is_reproducible():
    draws = []
    for _ in range(2):
        acc = make_accountant("seeded", seed=42)
        draws.append(
            (
                DiscreteLaplaceHistogram(0.5).release(acc, "h", np.zeros(20, dtype=int)).tolist(),
                ExponentialMechanism(0.5, 1).release_parallel(acc, "e", [SCORES] * 20).tolist(),
                WeightedReservoir(0.5, 1, k=3).release(acc, "r", [SCORES, SCORES]).tolist(),
                MetropolisHastings(0.5, 1).start(acc, "m").accept_many(SCORES, SCORES[::-1]).tolist(),
            )
        )
    assert draws[0] == draws[1]


def test_secure_noise_is_not_repeated():
    noise = SecureNoise()
    a = noise.discrete_laplace(np.zeros(20, dtype=int), 100.0)
    b = noise.discrete_laplace(np.zeros(20, dtype=int), 100.0)
    assert not np.array_equal(a, b)
    u = noise.uniform(1000)
    assert np.all((u > 0) & (u < 1)) and len(np.unique(u)) == 1000


# --- empirical differential privacy on neighbouring counts ------------------------------


def _count_outputs(noise: NoiseSource, count: int, n: int, scale: float) -> np.ndarray:
    return noise.discrete_laplace(np.full(n, count, dtype=np.int64), scale)


@pytest.mark.parametrize("path", PATHS)
def test_count_mechanism_likelihood_ratio_is_bounded_by_exp_epsilon(path):
    epsilon, c = 0.5, 10
    # 50,000 a side: 11 outputs with >= 1,000 draws each, and the weak mechanism's pooled
    # log ratio (0.65) is 14 of its sigmas (0.008) above the bound's 0.5 + 4.5 sigma
    n = 50_000
    mech = DiscreteLaplaceCount(epsilon)
    noise = make_noise(path, seed=3)
    out_d = _count_outputs(noise, c, n, mech.scale)  # dataset D: count c
    out_d1 = _count_outputs(noise, c + 1, n, mech.scale)  # neighbour D': one more row
    support = np.arange(c - 15, c + 17)
    hist_d = np.array([(out_d == k).sum() for k in support])
    hist_d1 = np.array([(out_d1 == k).sum() for k in support])
    enough = (hist_d >= 1000) & (hist_d1 >= 1000)
    assert enough.sum() >= 8
    log_ratio = np.log(hist_d[enough] / hist_d1[enough])
    sigma = np.sqrt(1 / hist_d[enough] + 1 / hist_d1[enough])
    # every output k: P[M(D)=k] / P[M(D')=k] <= e^eps (both directions), within 4 sigma
    assert np.all(np.abs(log_ratio) <= epsilon + 4.5 * sigma)
    # pooled over k <= c the ratio is exactly e^eps: the bound is tight, not loose
    pooled_d, pooled_d1 = (out_d <= c).sum(), (out_d1 <= c).sum()
    pooled = math.log(pooled_d / pooled_d1)
    pooled_sigma = math.sqrt(1 / pooled_d + 1 / pooled_d1)
    assert abs(pooled - epsilon) < 4.5 * pooled_sigma
    # power: a mechanism with too little noise (scale / 1.3) visibly exceeds e^eps
    weak_d = _count_outputs(noise, c, n, mech.scale / 1.3)
    weak_d1 = _count_outputs(noise, c + 1, n, mech.scale / 1.3)
    weak = math.log((weak_d <= c).sum() / (weak_d1 <= c).sum())
    assert weak > epsilon + 4.5 * pooled_sigma


# --- exponential mechanism ------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
def test_exponential_mechanism_matches_softmax(path):
    # 8,000 draws a score vector: chi-square non-centrality 243 against epsilon x 1.3 and 143
    # against epsilon / 1.3, so a wrong epsilon is missed with probability < 1e-12 (alpha 1e-4)
    n = 16_000
    em = ExponentialMechanism(epsilon=1.0, sensitivity=1)
    acc = make_accountant(path, seed=4)
    # two different score vectors interleaved: each partition is sampled on its own
    other = SCORES[::-1] * 0.5
    picks = em.release_parallel(acc, "level", [SCORES, other] * (n // 2))
    assert acc.spent() == 1 and len(acc.ledger) == 1
    counts = np.bincount(picks[0::2], minlength=6)
    counts_other = np.bincount(picks[1::2], minlength=6)
    assert chi2_pvalue(counts, em.probabilities(SCORES)) > ALPHA
    assert chi2_pvalue(counts_other, em.probabilities(other)) > ALPHA
    np.testing.assert_allclose(em.probabilities(SCORES), softmax(SCORES / 2.0))
    wrong = ExponentialMechanism(epsilon=1.3, sensitivity=1)
    assert chi2_pvalue(counts, wrong.probabilities(SCORES)) < ALPHA
    assert chi2_pvalue(counts, ExponentialMechanism(1 / 1.3, 1).probabilities(SCORES)) < ALPHA


@pytest.mark.parametrize("path", PATHS)
def test_exponential_mechanism_single_release(path):
    em = ExponentialMechanism(epsilon=2.0, sensitivity=1)
    acc = make_accountant(path, seed=5)
    picks = [em.release(acc, f"s{i}", SCORES) for i in range(4000)]
    counts = np.bincount(picks, minlength=6)
    assert all(isinstance(p, int) for p in picks[:5])
    assert chi2_pvalue(counts, em.probabilities(SCORES)) > ALPHA
    assert chi2_pvalue(counts, ExponentialMechanism(2.6, 1).probabilities(SCORES)) < ALPHA


@pytest.mark.parametrize("path", PATHS)
def test_permute_and_flip_distribution(path):
    # 8,000 draws: non-centrality 143 against the exponential mechanism's softmax and 317
    # against a scale / 1.3, each missed with probability < 1e-12 (alpha 1e-4)
    n = 8_000
    pf = ExponentialMechanism(epsilon=1.0, sensitivity=1, sampler="permute-and-flip")
    acc = make_accountant(path, seed=6)
    counts = np.bincount(pf.release_parallel(acc, "pf", [SCORES] * n), minlength=6)
    assert chi2_pvalue(counts, permute_and_flip_probs(SCORES, pf.scale)) > ALPHA
    # a different distribution from the exponential mechanism's
    assert chi2_pvalue(counts, softmax(SCORES / pf.scale)) < ALPHA
    assert chi2_pvalue(counts, permute_and_flip_probs(SCORES, pf.scale / 1.3)) < ALPHA
    # the library's probabilities (Gauss–Legendre panels) against adaptive quadrature
    np.testing.assert_allclose(pf.probabilities(SCORES), permute_and_flip_probs(SCORES, pf.scale), rtol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_permute_and_flip_with_monotone_scores_is_epsilon_dp_at_half_the_scale(seed: int) -> None:
    """Neighbouring score vectors that all move one way by at most Δ: the exact probabilities at the
    scale Δ/ε stay within e^ε (the derivation in dprm.privacy.exponential), up to it for a candidate
    left behind; scores that move both ways need 2Δ/ε (at Δ/ε the ratio exceeds e^ε, so the check can fail)."""
    rng = np.random.default_rng(40 + seed)
    epsilon, sensitivity = 0.5, 1.0
    monotone = ExponentialMechanism(epsilon, sensitivity, sampler="permute-and-flip", monotone=True)
    plain = ExponentialMechanism(epsilon, sensitivity, sampler="permute-and-flip")
    assert monotone.scale == sensitivity / epsilon and plain.scale == 2 * sensitivity / epsilon
    worst_monotone = worst_two_sided = worst_two_sided_plain = 0.0
    for _ in range(40):
        scores = rng.normal(0, 3, int(rng.integers(2, 12)))
        up = scores + sensitivity * rng.choice([0.0, 1.0, rng.uniform()], size=scores.size)
        both = scores + sensitivity * rng.choice([-1.0, 1.0], size=scores.size)
        ratio = lambda m, q: float(np.max(np.abs(np.log(m.probabilities(scores)) - np.log(m.probabilities(q)))))
        worst_monotone = max(worst_monotone, ratio(monotone, up))
        worst_two_sided = max(worst_two_sided, ratio(monotone, both))
        worst_two_sided_plain = max(worst_two_sided_plain, ratio(plain, both))
    assert worst_monotone <= epsilon + 1e-9
    assert worst_monotone > 0.9 * epsilon
    assert worst_two_sided_plain <= epsilon + 1e-9
    assert worst_two_sided > epsilon + 0.05


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("sampler", ["gumbel", "permute-and-flip"])
def test_huge_and_tiny_scores(path, sampler):
    acc = make_accountant(path, seed=7)
    em = ExponentialMechanism(epsilon=1.0, sensitivity=1, sampler=sampler)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        huge = em.release_parallel(acc, "huge", [np.array([1e6, 0.0, -1e6])] * 200)
        assert np.all(huge == 0)
        assert em.release(acc, "huge1", [-1e6, 1e6]) == 1
        if sampler == "gumbel":
            # scores 1e6 apart by 1: exactly softmax([0, 1/2]) despite the magnitude
            close = em.release_parallel(acc, "close", [np.array([1e6, 1e6 + 1])] * 4000)
            probs = em.probabilities([1e6, 1e6 + 1])
            np.testing.assert_allclose(probs, softmax([0.0, 0.5]))
            assert chi2_pvalue(np.bincount(close, minlength=2), probs) > ALPHA
            assert chi2_pvalue(np.bincount(close, minlength=2), [0.5, 0.5]) < ALPHA
        tiny = em.release_parallel(acc, "tiny", [np.array([1e-300, 0.0, 5e-324])] * 3000)
        assert chi2_pvalue(np.bincount(tiny, minlength=3), [1 / 3] * 3) > ALPHA
        assert np.all(np.isfinite(ExponentialMechanism(1, 1).probabilities([1e300, -1e300])))


# --- weighted reservoir ----------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
def test_reservoir_k1_is_the_exponential_mechanism(path):
    n = 6_000  # non-centrality 182 against epsilon x 1.3: missed with probability < 1e-17 (alpha 1e-4)
    reservoir = WeightedReservoir(epsilon=1.0, sensitivity=1, k=1)
    acc = make_accountant(path, seed=8)
    chunks = [SCORES[:2], SCORES[2:5], SCORES[5:]]
    picks = [int(reservoir.release(acc, f"r{i}", chunks)[0]) for i in range(n)]
    counts = np.bincount(picks, minlength=6)
    em = ExponentialMechanism(epsilon=1.0, sensitivity=1)
    assert reservoir.scale == em.scale
    assert chi2_pvalue(counts, em.probabilities(SCORES)) > ALPHA
    assert chi2_pvalue(counts, ExponentialMechanism(1.3, 1).probabilities(SCORES)) < ALPHA
    assert acc.spent() == n


@pytest.mark.parametrize("path", PATHS)
def test_reservoir_k2_samples_without_replacement(path):
    n = 6_000  # non-centrality 365 against epsilon x 1.3 (29 df): missed with probability < 1e-30
    reservoir = WeightedReservoir(epsilon=2.0, sensitivity=1, k=2)
    acc = make_accountant(path, seed=9)
    chunks = [SCORES[:3], SCORES[3:4], SCORES[4:]]
    pairs = np.array([reservoir.release(acc, f"r{i}", chunks) for i in range(n)])
    assert pairs.shape == (n, 2) and np.all(pairs[:, 0] != pairs[:, 1])
    # sequential exponential mechanism without replacement, epsilon / k per draw

    def pair_probs(epsilon_per_draw: float) -> np.ndarray:
        p = softmax(SCORES * epsilon_per_draw / 2)
        probs = np.outer(p, p) / (1 - p)[:, None]
        np.fill_diagonal(probs, 0.0)
        return probs.ravel()

    counts = np.bincount(pairs[:, 0] * 6 + pairs[:, 1], minlength=36)
    assert chi2_pvalue(counts, pair_probs(1.0)) > ALPHA
    assert chi2_pvalue(counts, pair_probs(1.3)) < ALPHA
    assert acc.spent() == 2 * n  # one charge of epsilon=2 per stream draw


@pytest.mark.parametrize("path", PATHS)
def test_reservoir_keep_then_exclude_is_the_exponential_mechanism_over_the_rest(path):
    """A draw that keeps 3 keys, then skips up to 2 candidates named after the stream, picks the
    first kept key not excluded: the exponential mechanism over the rest at the draw's full ε
    (not ε / 3), and it is charged ε once."""
    n = 6_000
    reservoir = WeightedReservoir(epsilon=1.0, sensitivity=1, k=1)
    acc = make_accountant(path, seed=11)
    chunks = [SCORES[:2], SCORES[2:5], SCORES[5:]]
    excluded = {int(np.argmax(SCORES)), 0}  # the best candidate and another
    rest = np.array([i for i in range(len(SCORES)) if i not in excluded])
    picks = []
    for i in range(n):
        draw = reservoir.start(acc, f"r{i}", keep=3)
        for chunk in chunks:
            draw.offer(chunk)
        assert len(draw.result()) == 1  # the other kept keys never leave the draw
        picks.append(int(draw.result(exclude=excluded)[0]))
    counts = np.bincount(picks, minlength=len(SCORES))[rest]
    assert counts.sum() == n
    assert chi2_pvalue(counts, ExponentialMechanism(1.0, 1).probabilities(SCORES[rest])) > ALPHA
    assert chi2_pvalue(counts, ExponentialMechanism(1.0 / 3, 1).probabilities(SCORES[rest])) < ALPHA
    assert acc.spent() == n
    with pytest.raises(ParameterError, match="keep must be an integer >= 1"):
        reservoir.start(acc, "bad", keep=0)


def test_reservoir_streams_and_short_streams():
    acc = make_accountant("seeded", seed=10)
    draw = WeightedReservoir(1.0, 1, k=3).start(acc, "stream")
    for chunk in np.array_split(np.arange(10_000, dtype=float), 7):
        draw.offer(chunk * 1e3)  # huge scores: the top 3 are certain
    assert draw.result().tolist() == [9999, 9998, 9997] and draw.n_seen == 10_000
    short = WeightedReservoir(1.0, 1, k=5).release(acc, "short", [[1.0, 2.0]])
    assert sorted(short.tolist()) == [0, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert WeightedReservoir(1.0, 1).release(acc, "huge", [[-1e6], [1e6]]).tolist() == [1]


# --- Metropolis-Hastings ----------------------------------------------------------------


def run_parallel_chains(chain, n_chains: int, n_steps: int, step_probs, lpr_sign: float = 1.0):
    """Chains on the cycle 0..5: move +j with probability step_probs[j] (j = 1..5)."""
    proposal_rng = np.random.default_rng(123)  # the proposal is the miner's, not noise
    moves = np.arange(1, 6)
    state = np.zeros(n_chains, dtype=np.int64)
    log_g = np.log(step_probs)
    for _ in range(n_steps):
        move_index = proposal_rng.choice(5, size=n_chains, p=step_probs)
        proposal = (state + moves[move_index]) % 6
        # log g(x | x') - log g(x' | x): the reverse move is 6 - move
        lpr = log_g[4 - move_index] - log_g[move_index]
        accepted = chain.accept_many(SCORES[state], SCORES[proposal], lpr_sign * lpr)
        state = np.where(accepted, proposal, state)
    return np.bincount(state, minlength=6)


@pytest.mark.parametrize("path", PATHS)
def test_metropolis_hastings_converges_to_the_exponential_mechanism(path):
    mh = MetropolisHastings(epsilon=2.0, sensitivity=1)
    acc = make_accountant(path, seed=11)
    chain = mh.start(acc, "chain")
    counts = run_parallel_chains(chain, 20_000, 60, np.full(5, 0.2))
    target = ExponentialMechanism(2.0, 1).probabilities(SCORES)
    assert chi2_pvalue(counts, target) > ALPHA
    assert chi2_pvalue(counts, ExponentialMechanism(2.6, 1).probabilities(SCORES)) < ALPHA
    assert acc.spent() == 2 and len(acc.ledger) == 1
    assert acc.ledger[0].mechanism == "exponential (MCMC)"
    assert 0 < chain.acceptance_rate < 1


@pytest.mark.parametrize("path", PATHS)
def test_metropolis_hastings_asymmetric_proposal_uses_the_ratio(path):
    mh = MetropolisHastings(epsilon=2.0, sensitivity=1)
    chain = mh.start(make_accountant(path, seed=12), "chain")
    step_probs = np.array([0.55, 0.05, 0.05, 0.05, 0.30])
    target = ExponentialMechanism(2.0, 1).probabilities(SCORES)
    counts = run_parallel_chains(chain, 20_000, 150, step_probs)
    assert chi2_pvalue(counts, target) > ALPHA
    # with the proposal ratio inverted, the chain converges elsewhere: rejected
    wrong = run_parallel_chains(chain, 20_000, 150, step_probs, lpr_sign=-1.0)
    assert chi2_pvalue(wrong, target) < ALPHA


@pytest.mark.parametrize("path", PATHS)
def test_metropolis_hastings_single_chain(path):
    steps = 60_000
    mh = MetropolisHastings(epsilon=1.0, sensitivity=1)
    chain = mh.start(make_accountant(path, seed=13), "chain")
    proposal_rng = np.random.default_rng(321)
    proposals = proposal_rng.integers(1, 6, size=steps)
    state, visits = 0, np.zeros(6)
    for move in proposals:
        proposal = (state + int(move)) % 6
        if chain.accept(SCORES[state], SCORES[proposal]):
            state = proposal
        visits[state] += 1
    empirical = visits / steps
    target = ExponentialMechanism(1.0, 1).probabilities(SCORES)
    wrong = ExponentialMechanism(1.3, 1).probabilities(SCORES)
    assert 0.5 * np.abs(empirical - target).sum() < 0.02
    assert 0.5 * np.abs(empirical - wrong).sum() > 0.04
    assert chain.n_proposed == steps


@pytest.mark.parametrize("path", PATHS)
def test_metropolis_hastings_huge_score_differences(path):
    chain = MetropolisHastings(1.0, 1).start(make_accountant(path, seed=14), "chain")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert all(chain.accept(0.0, 1e6) for _ in range(100))
        assert not any(chain.accept(0.0, -1e6) for _ in range(100))
        assert not any(chain.accept(1e6, 0.0, log_proposal_ratio=3.0) for _ in range(100))
        accepted = chain.accept_many(np.zeros(1000), np.full(1000, 1e6))
        assert accepted.all()
        assert not chain.accept_many(np.zeros(1000), np.full(1000, -1e300)).any()
        tiny = chain.accept_many(np.zeros(20_000), np.full(20_000, 1e-300))
        assert 0.99 < tiny.mean() <= 1.0
    with pytest.raises(ParameterError):
        chain.accept(0.0, float("nan"))


def test_exact_epsilon_is_what_is_charged():
    acc = make_accountant("seeded", seed=15, total=1)
    DiscreteLaplaceCount(0.1).release(acc, "a", 1)
    ExponentialMechanism(0.2, 1).release(acc, "b", [1.0])
    WeightedReservoir(Fraction(3, 10), 1).release(acc, "c", [[1.0]])
    MetropolisHastings("0.4", 1).start(acc, "d")
    assert acc.remaining() == 0
    assert [e.epsilon for e in acc.ledger] == [Fraction(1, 10), Fraction(1, 5), Fraction(3, 10), Fraction(2, 5)]


def test_bounded_range_metropolis_hastings_is_epsilon_dp_on_neighbours():
    """``score_range=R`` targets ``exp(ε q / R)``; where every candidate's change
    between neighbours lies in one interval of width R, the target's probabilities
    differ by at most ``e^ε`` — checked exactly on random score changes of that form,
    and the check fails with R too small."""
    rng = np.random.default_rng(5)
    epsilon, width = 0.7, 3.0
    mh = MetropolisHastings(epsilon, sensitivity=2, score_range=width)
    assert mh.scale == pytest.approx(width / epsilon)
    worst = 0.0
    for _ in range(2000):
        scores = rng.uniform(-50, 50, size=8)
        shift = rng.uniform(-1, 0)  # the common lower end a of the interval [a, a + R]
        changes = shift + width * rng.choice([0.0, 1.0, rng.uniform()], size=8)
        before = np.exp(scores / mh.scale - np.logaddexp.reduce(scores / mh.scale))
        after_scores = scores + changes
        after = np.exp(after_scores / mh.scale - np.logaddexp.reduce(after_scores / mh.scale))
        worst = max(worst, float(np.max(np.abs(np.log(after / before)))))
    assert worst <= epsilon + 1e-9
    assert worst > 0.9 * epsilon  # the bound is nearly attained: the check is not vacuous
    too_sharp = MetropolisHastings(epsilon, sensitivity=2, score_range=2)
    scores = np.zeros(200)  # one candidate loses 1, the many others gain 2
    changes = np.concatenate([[-1.0], np.full(199, 2.0)])
    before = np.exp(scores / too_sharp.scale - np.logaddexp.reduce(scores / too_sharp.scale))
    after = np.exp((scores + changes) / too_sharp.scale - np.logaddexp.reduce((scores + changes) / too_sharp.scale))
    assert np.max(np.abs(np.log(after / before))) > epsilon


def test_bounded_range_cannot_exceed_twice_the_sensitivity():
    with pytest.raises(ParameterError):
        MetropolisHastings(1.0, sensitivity=1, score_range=3)
    assert MetropolisHastings(1.0, sensitivity=1).scale == pytest.approx(2.0)


# --- uniforms strictly inside (0, 1), and huge scales (issue 9) ------------------------


class _FixedIntegers:
    """Stands in for a numpy Generator whose 64-bit integers are given."""

    def __init__(self, values):
        self.values = np.array(values, dtype=np.uint64)

    def integers(self, low, high, size, dtype, endpoint):
        assert (low, high, dtype, endpoint) == (0, 2**64, np.uint64, False)
        return self.values[:size]


EDGE_BITS = [0, 1, 2**11, 2**12 - 1, 2**12, 2**63, 2**64 - 2**13, 2**64 - 2**11, 2**64 - 1]
# k = bits >> 12, so the uniform is (2k + 1) / 2**53
EDGE_UNIFORMS = [2.0**-53] * 4 + [3 * 2.0**-53, 0.5 + 2.0**-53, 1 - 3 * 2.0**-53, 1 - 2.0**-53, 1 - 2.0**-53]


def test_seeded_uniforms_at_the_edges_are_exact_and_strictly_inside():
    noise = SeededNoise(np.random.default_rng(0))
    noise.rng = _FixedIntegers(EDGE_BITS)
    u = noise.uniform(len(EDGE_BITS))
    assert u.tolist() == EDGE_UNIFORMS  # exact: every value is (2k + 1) * 2**-53
    assert np.all((u > 0) & (u < 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the old sampler gave u = 1.0: log(0), a RuntimeWarning
        g = noise.gumbel(len(EDGE_BITS))
    assert np.all(np.isfinite(g)) and g.max() < 37 and g.min() > -4


def test_secure_uniforms_at_the_edges_are_exact_and_strictly_inside(monkeypatch):
    import dprm.privacy.noise as noise_module

    raw = np.array(EDGE_BITS, dtype=np.uint64).tobytes()
    monkeypatch.setattr(noise_module.os, "urandom", lambda n: raw[:n])
    noise = SecureNoise()
    assert noise.uniform(len(EDGE_BITS)).tolist() == EDGE_UNIFORMS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.all(np.isfinite(noise.gumbel(len(EDGE_BITS))))


def test_uniform_grid_keeps_every_top_value_distinct():
    # The old (k + 1/2) / 2**53 rounded k + 1/2 for k >= 2**52: neighbours collapsed.
    k = np.arange(2**52 - 8, 2**52, dtype=np.uint64)
    noise = SeededNoise(np.random.default_rng(0))
    noise.rng = _FixedIntegers(k << np.uint64(12))
    u = noise.uniform(k.size)
    assert np.all(np.diff(u) > 0) and u[-1] == 1 - 2.0**-53


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("scale", [1e17, 1e30, 1e300])
def test_huge_scales_saturate_at_the_int64_bounds_and_never_vanish(path, scale):
    """A tiny ε: noise far beyond int64 is clamped there (OpenDP saturates), never lost."""
    noisy = make_noise(path, seed=3).discrete_laplace(np.full(400, 7, dtype=np.int64), scale)
    assert noisy.dtype == np.int64
    assert np.count_nonzero(noisy == 7) == 0
    low, high = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    if scale >= 1e30:  # |noise| > 2**63 but with probability ~1e-11
        assert set(noisy.tolist()) == {low, high}
    assert 100 < np.count_nonzero(noisy > 7) < 300  # symmetric


def test_seeded_large_scale_sampler_matches_the_discrete_laplace_law():
    """Above 2**52 the seeded path draws floor(s E1) - floor(s E2): |Z| / s ~ Exp(1)."""
    scale = 2.0**60
    z = SeededNoise(np.random.default_rng(4)).discrete_laplace(np.zeros(20_000, dtype=np.int64), scale)
    magnitude = np.abs(z.astype(np.float64)) / scale
    assert stats.kstest(magnitude, "expon").pvalue > ALPHA
    assert stats.kstest(magnitude, "expon", args=(0, 1.3)).pvalue < ALPHA
    assert stats.binomtest(int(np.count_nonzero(z > 0)), z.size).pvalue > ALPHA


def test_saturating_release_near_the_bounds():
    values = np.repeat(np.array([2**63 - 3, -(2**63) + 3], dtype=np.int64), 200)
    acc = make_accountant("seeded", seed=5)
    out = DiscreteLaplaceHistogram(Fraction(1, 10**6)).release(acc, "edge", values)
    low, high = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    # clamped, never wrapped around to the other end
    assert np.all(out[:200] > 2**62) and np.all(out[200:] < -(2**62))
    assert np.count_nonzero(out[:200] == high) > 50 and np.count_nonzero(out[200:] == low) > 50


@pytest.mark.parametrize("count", [2**63, -(2**63) - 1, 10**30, 2**64 - 1])
def test_a_count_beyond_int64_is_refused_before_the_charge(count) -> None:
    """Not wrapped around in int64 (2**63 came back as -9223372036854775774), and nothing charged."""
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    with pytest.raises(ParameterError, match=r"within ±2\*\*63"):
        DiscreteLaplaceCount(0.1).release(accountant, "c", count)
    if 0 < count < 2**64:
        with pytest.raises(ParameterError, match=r"within ±2\*\*63"):
            DiscreteLaplaceHistogram(0.1).release(accountant, "h", np.array([count], dtype=np.uint64))
    assert accountant.spent() == 0 and not accountant.ledger
