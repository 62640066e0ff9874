"""The accountant's exact arithmetic, its refusals, and the mechanisms' cost boundaries."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import opendp.prelude as dp
import pytest

from dprm.errors import BudgetExceededError, ParameterError
from dprm.privacy import (
    Accountant,
    DiscreteLaplaceCount,
    DiscreteLaplaceHistogram,
    ExponentialMechanism,
    MetropolisHastings,
    SecureNoise,
    SeededNoise,
    WeightedReservoir,
    as_epsilon,
    as_fraction,
    noise_scale,
    split_budget,
)

dp.enable_features("contrib")


def seeded(total="1") -> Accountant:
    return Accountant(total, SeededNoise(np.random.default_rng(0)))


class SpyNoise(SeededNoise):
    """A seeded source that records every draw, to prove none happens before a charge."""

    def __init__(self) -> None:
        super().__init__(np.random.default_rng(0))
        self.calls: list[str] = []

    def discrete_laplace(self, values, scale):
        self.calls.append("discrete_laplace")
        return super().discrete_laplace(values, scale)

    def noisy_max(self, scores, scale, sampler="gumbel"):
        self.calls.append("noisy_max")
        return super().noisy_max(scores, scale, sampler)

    def noisy_max_many(self, score_vectors, scale, sampler="gumbel"):
        self.calls.append("noisy_max_many")
        return super().noisy_max_many(score_vectors, scale, sampler)

    def uniform(self, size):
        self.calls.append("uniform")
        return super().uniform(size)

    def gumbel(self, size):
        self.calls.append("gumbel")
        return super().gumbel(size)


# --- exact conversion -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.1, Fraction(1, 10)),
        (np.float64(0.1), Fraction(1, 10)),
        (0.3, Fraction(3, 10)),
        ("0.1", Fraction(1, 10)),
        ("1/3", Fraction(1, 3)),
        (Fraction(2, 7), Fraction(2, 7)),
        (3, Fraction(3)),
        (np.int64(2), Fraction(2)),
        (1e-300, Fraction("1e-300")),
    ],
)
def test_as_fraction_is_exact(value, expected):
    assert as_fraction(value) == expected


@pytest.mark.parametrize("bad", [0, -0.1, "-1", float("nan"), float("inf"), -math.inf, True, "abc", None, [1]])
def test_bad_epsilons_are_parameter_errors(bad):
    with pytest.raises(ParameterError):
        as_epsilon(bad)
    with pytest.raises(ParameterError):
        seeded().charge(bad, step="s", mechanism="m")
    with pytest.raises(ParameterError):
        Accountant(bad, SeededNoise(np.random.default_rng(0)))


def test_accountant_needs_a_noise_source():
    with pytest.raises(ParameterError):
        Accountant(1.0, np.random.default_rng(0))


# --- exact charges ------------------------------------------------------------------


def test_point_one_plus_point_two_exhausts_point_three_exactly():
    acc = seeded(0.3)
    acc.charge(0.1, step="a", mechanism="m")
    acc.charge(0.2, step="b", mechanism="m")
    assert acc.spent() == Fraction(3, 10)
    assert acc.remaining() == 0
    for tiny in (Fraction(1, 10**30), 1e-300, 5e-324):
        with pytest.raises(BudgetExceededError):
            acc.charge(tiny, step="c", mechanism="m")
    assert [e.step for e in acc.ledger] == ["a", "b"]
    assert acc.spent() == Fraction(3, 10)


def test_overspend_is_refused_and_records_nothing():
    acc = seeded(0.3)
    acc.charge(0.2, step="first", mechanism="m")
    with pytest.raises(BudgetExceededError) as info:
        acc.charge(0.2, step="second", mechanism="m")
    message = str(info.value)
    assert "\n" not in message
    assert "second" in message and "0.2" in message and "0.1" in message
    assert len(acc.ledger) == 1
    assert acc.spent() == Fraction(1, 5)
    assert acc.remaining() == Fraction(1, 10)
    acc.charge(0.1, step="third", mechanism="m")
    assert acc.remaining() == 0


def test_many_small_charges_add_up_exactly():
    acc = seeded(1)
    for i in range(10):
        acc.charge(0.1, step=f"s{i}", mechanism="m")
    assert acc.spent() == 1 and acc.remaining() == 0
    assert not acc.can_afford(1e-12)


def test_ledger_json_and_privacy_block():
    acc = Accountant("1", SecureNoise())
    acc.charge(0.25, "count#1", "discrete-laplace count")
    acc.charge("1/2", "tree#1", "exponential (MCMC)", guarantee="pure-dp-on-mcmc-convergence")
    assert acc.ledger_json() == [
        {"step": "count#1", "mechanism": "discrete-laplace count", "epsilon": 0.25},
        {"step": "tree#1", "mechanism": "exponential (MCMC)", "epsilon": 0.5},
    ]
    block = acc.privacy_block()
    assert block == {
        "epsilon": 0.75,
        "neighbouring": "add-remove-one-row",
        "guarantee": "pure-dp-on-mcmc-convergence",
        "private": True,
        "reasons": [],
        "ledger": acc.ledger_json(),
    }
    assert list(block) == ["epsilon", "neighbouring", "guarantee", "private", "reasons", "ledger"]  # the spec's order
    assert math.isclose(sum(e["epsilon"] for e in block["ledger"]), block["epsilon"])
    with pytest.raises(ParameterError):
        acc.privacy_block("approximately private")
    with pytest.raises(ParameterError):
        acc.charge(0.1, "x", "m", guarantee="pure-dp; fast")
    assert acc.spent() == Fraction(3, 4)  # a refused label records nothing


def test_seeded_privacy_block_says_not_private():
    acc = seeded(1)
    acc.charge(1, "all", "m")
    block = acc.privacy_block()
    assert block["guarantee"] == "none" and block["private"] is False
    assert "seed" in block["reasons"][0] and "reason" not in block


@pytest.mark.parametrize(("labels", "qualifiers", "expected"), [
    ([], (), "pure-dp"),
    (["pure-dp", "pure-dp"], (), "pure-dp"),
    (["pure-dp", "pure-dp-on-mcmc-convergence"], (), "pure-dp-on-mcmc-convergence"),
    (["pure-dp-on-mcmc-convergence; data-dependent stop", "pure-dp"], (), "pure-dp-on-mcmc-convergence; data-dependent stop"),
    (["pure-dp; floating-point selection", "pure-dp-on-mcmc-convergence"], (),
     "pure-dp-on-mcmc-convergence; floating-point selection"),
    (["pure-dp"], ("floating-point selection",), "pure-dp; floating-point selection"),
    (["pure-dp; floating-point selection"], ("floating-point selection",), "pure-dp; floating-point selection"),
])
def test_the_label_is_computed_from_the_releases(labels, qualifiers, expected):
    acc = Accountant(10, SecureNoise())
    for number, label in enumerate(labels):
        acc.charge(1, f"r{number}", "m", guarantee=label)
    block = acc.privacy_block(qualifiers=qualifiers)
    assert block["guarantee"] == expected and block["private"] is True and block["reasons"] == []


def test_a_reason_makes_the_label_none_and_the_block_covers_one_run():
    acc = Accountant(10, SecureNoise())
    acc.charge(1, "earlier run", "m", guarantee="pure-dp-on-mcmc-convergence")
    since = len(acc.ledger)
    acc.charge(2, "this run", "m")
    block = acc.privacy_block(since=since)
    assert block["guarantee"] == "pure-dp" and block["epsilon"] == 2.0 and len(block["ledger"]) == 1
    block = acc.privacy_block(reasons=["domains read off the data"], since=since)
    assert block["guarantee"] == "none" and block["private"] is False
    assert block["reasons"] == ["domains read off the data"]


def test_mechanisms_record_their_guarantee_with_their_charge():
    acc = Accountant(3, SecureNoise())
    MetropolisHastings(1, 1).start(acc, "chain")
    MetropolisHastings(1, 1, data_dependent_stop=True).start(acc, "stopped chain")
    ExponentialMechanism(1, 1).release(acc, "exact", [0.0, 1.0])
    assert [e.guarantee for e in acc.ledger] == [
        "pure-dp-on-mcmc-convergence", "pure-dp-on-mcmc-convergence; data-dependent stop", "pure-dp"]
    assert acc.privacy_block()["guarantee"] == "pure-dp-on-mcmc-convergence; data-dependent stop"


def test_guarantee_labels_parse():
    from dprm.privacy.accountant import is_guarantee, parse_guarantee

    assert parse_guarantee("pure-dp; floating-point selection; data-dependent stop") == (
        "pure-dp", ("floating-point selection", "data-dependent stop"))
    for bad in ("none; data-dependent stop", "pure-dp;", "pure-dp; data-dependent stop; data-dependent stop",
                "PURE-DP", None, 3):
        assert not is_guarantee(bad)


# --- exact splits -----------------------------------------------------------------


def test_split_budget_sums_exactly():
    shares = split_budget(0.3, [1, 1, 1, 1, 1, 1, 1])
    assert sum(shares) == Fraction(3, 10)
    assert len(set(shares)) == 1
    acc = seeded(0.3)
    for i, share in enumerate(shares):
        acc.charge(share, f"s{i}", "m")
    assert acc.remaining() == 0


def test_split_budget_is_proportional():
    assert split_budget(1, [1, 2, 7]) == [Fraction(1, 10), Fraction(1, 5), Fraction(7, 10)]


@pytest.mark.parametrize("weights", [[], [1, 0], [1, -1], [float("nan")]])
def test_split_budget_rejects_bad_weights(weights):
    with pytest.raises(ParameterError):
        split_budget(1, weights)


# --- no noise before a charge ---------------------------------------------------------


@pytest.mark.parametrize(
    "release",
    [
        lambda acc: DiscreteLaplaceCount(0.5).release(acc, "s", 3),
        lambda acc: DiscreteLaplaceHistogram(0.5).release(acc, "s", [1, 2]),
        lambda acc: ExponentialMechanism(0.5, 1).release(acc, "s", [1.0, 2.0]),
        lambda acc: ExponentialMechanism(0.5, 1).release_parallel(acc, "s", [[1.0], [2.0, 3.0]]),
        lambda acc: WeightedReservoir(0.5, 1).release(acc, "s", [[1.0, 2.0]]),
        lambda acc: MetropolisHastings(0.5, 1).start(acc, "s").accept(0.0, 1.0),
    ],
)
def test_refused_release_draws_no_noise(release):
    spy = SpyNoise()
    acc = Accountant(0.3, spy)
    with pytest.raises(BudgetExceededError):
        release(acc)
    assert spy.calls == []
    assert acc.ledger == []
    acc2 = Accountant(0.5, SpyNoise())
    release(acc2)
    assert acc2.spent() == Fraction(1, 2)
    assert acc2.noise.calls  # noise drawn only after the accepted charge


def test_invalid_scores_are_refused_before_charging():
    acc = seeded(1)
    em = ExponentialMechanism(0.5, 1)
    for bad in ([], [1.0, float("nan")], [[1.0, 2.0]], [1.0, float("inf")]):
        with pytest.raises(ParameterError):
            em.release(acc, "s", bad)
    with pytest.raises(ParameterError):
        em.release_parallel(acc, "s", [[1.0], []])
    with pytest.raises(ParameterError):
        DiscreteLaplaceCount(0.5).release(acc, "s", 2.5)
    with pytest.raises(ParameterError):
        DiscreteLaplaceHistogram(0.5).release(acc, "s", [1.5, 2.0])
    assert acc.spent() == 0


def test_mechanism_parameters_are_validated():
    with pytest.raises(ParameterError):
        DiscreteLaplaceCount(0.5, sensitivity=0)
    with pytest.raises(ParameterError):
        DiscreteLaplaceCount(0.5, sensitivity=1.5)
    with pytest.raises(ParameterError):
        ExponentialMechanism(0.5, 1, sampler="softmax")
    with pytest.raises(ParameterError):
        WeightedReservoir(0.5, 1, k=0)
    with pytest.raises(ParameterError):
        MetropolisHastings(-1, 1)


def test_parallel_release_is_one_ledger_entry():
    acc = seeded(1)
    picks = ExponentialMechanism(0.5, 1).release_parallel(acc, "level#2", [[0.0, 1.0]] * 8)
    assert picks.shape == (8,)
    assert len(acc.ledger) == 1 and acc.spent() == Fraction(1, 2)
    assert "8 disjoint" in acc.ledger[0].mechanism


def test_privacy_maps():
    assert DiscreteLaplaceCount(0.5).privacy_map(1) == Fraction(1, 2)
    assert DiscreteLaplaceHistogram(0.3, sensitivity=2).privacy_map(2) == Fraction(3, 10)
    assert ExponentialMechanism(1, 2).privacy_map(1) == Fraction(1, 2)
    assert MetropolisHastings(0.2, 1).guarantee == "pure-dp-on-mcmc-convergence"
    assert ExponentialMechanism(0.2, 1).guarantee == "pure-dp"


# --- the float scale never under-charges: pinned on both sides with OpenDP's maps --------

EPSILONS = ["0.1", "0.3", "1/3", "0.7", "1", "2.5", "0.001", "1/7", "10"]


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("sensitivity", [1, 2, 3])
def test_laplace_scale_boundary(epsilon, sensitivity):
    eps = Fraction(epsilon)
    mech = DiscreteLaplaceHistogram(eps, sensitivity=sensitivity)
    space = dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64")
    used = dp.m.make_laplace(*space, mech.scale)
    assert Fraction(used.map(sensitivity)) <= eps
    smaller = dp.m.make_laplace(*space, math.nextafter(mech.scale, 0.0))
    assert Fraction(smaller.map(sensitivity)) > eps


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("sensitivity", [1, 0.5, 3])
def test_exponential_scale_boundary(epsilon, sensitivity):
    eps = Fraction(epsilon)
    mech = ExponentialMechanism(eps, sensitivity, sampler="permute-and-flip")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
    used = dp.m.make_noisy_max(*space, dp.max_divergence(), scale=mech.scale)
    assert Fraction(used.map(float(sensitivity))) <= eps
    smaller = dp.m.make_noisy_max(
        *space, dp.max_divergence(), scale=math.nextafter(mech.scale, 0.0)
    )
    assert Fraction(smaller.map(float(sensitivity))) > eps
    # The Gumbel sampler uses the same scale; OpenDP reports its zCDP cost (2Δ/s)²/8.
    gumbel = dp.m.make_noisy_max(*space, dp.zero_concentrated_divergence(), scale=mech.scale)
    assert math.isclose(gumbel.map(float(sensitivity)), float(eps) ** 2 / 8, rel_tol=1e-9)


def test_noise_scale_rounds_up():
    for epsilon in EPSILONS:
        eps = Fraction(epsilon)
        scale = noise_scale(1, eps)
        assert Fraction(1) / Fraction(scale) <= eps
    assert noise_scale(2, 0.5) == 4.0
    assert ExponentialMechanism(0.5, 1).scale == WeightedReservoir(0.5, 1).scale
    assert WeightedReservoir(0.5, 1, k=3).scale == noise_scale(6, 0.5)
