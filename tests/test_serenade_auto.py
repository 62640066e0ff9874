"""The "auto" numbers of initial pairs and extensions: the rule against brute force, public inputs only."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dprm.data import load_two_view
from dprm.data.attributes import Attribute, TwoViewData, View
from dprm.datasets import make_planted
from dprm.errors import ParameterError
from dprm.mining.serenade import SerenadeCS, SerenadeES
from dprm.mining.serenade.auto import (
    DEFAULT_MIN_SHARPNESS,
    DEFAULT_MIN_SHARPNESS_ES,
    DEFAULT_QUALITY_NOISE,
    DEFAULT_QUALITY_NOISE_CS,
    LATER_DRAW_SHARPNESS,
    MAX_PAIRS,
    MIN_EXTENDED_PAIRS,
    MAX_ROUNDS_CS,
    MAX_ROUNDS_ES,
    auto_split,
    cs_sizes,
    es_sizes,
    initial_shares,
)
from dprm.mining.serenade.parameters import SERENADE_SIZE_SHARE
from dprm.mining.serenade.union_cap import UnionCap
from dprm.mining.serenade.quality import choose_steepness
from dprm.privacy import Accountant, SeededNoise


def _inputs(rng):
    eps = rng.uniform(0.05, 20)
    shares = rng.dirichlet([2, 2, 2])
    return (*(eps * shares), float(np.exp(rng.uniform(np.log(1e-4), np.log(0.5)))),
            float(rng.uniform(0, 5000)), float(rng.uniform(1, 16)), float(rng.uniform(0.05, 1)))


@pytest.mark.parametrize("seed", range(4))
def test_es_rule_is_the_largest_feasible_choice(seed) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(200):
        init, ext, qual, r, c, eta, alpha = _inputs(rng)
        k, rounds = es_sizes(init, ext, qual, r, c, min_sharpness=eta, quality_noise=alpha)
        feasible_m = [m for m in range(1, MAX_ROUNDS_ES + 1) if ext / m / r >= eta]
        assert rounds == max(feasible_m, default=0)
        quality = qual if rounds else qual + ext  # M = 0: the extension budget goes to the qualities
        feasible_k = [j for j in range(1, MAX_PAIRS + 1)
                      if init / j / r >= eta and quality / j >= math.sqrt(2) / (alpha * c)]
        assert k == max(feasible_k, default=1)


@pytest.mark.parametrize("seed", range(4))
def test_cs_rule_is_the_largest_feasible_choice(seed) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(200):
        init, ext, qual, r, c, eta, alpha = _inputs(rng)
        k, m = cs_sizes(init, ext, qual, r, c, min_sharpness=eta, quality_noise=alpha)

        def ok(j, mm):
            sharp = init / j / r >= eta and (mm == 0 or ext / (mm * j) / r >= eta)
            quality = qual if mm else qual + ext  # m = 0: the extension budget goes to the qualities
            return sharp and quality / ((mm + 1) * j) >= math.sqrt(2) / (alpha * c)

        extending = [(j, mm) for j in range(1, MAX_PAIRS + 1) for mm in range(1, MAX_ROUNDS_CS + 1) if ok(j, mm)]

        # no extension: the extension budget goes to the qualities; the first draw keeps half of ε_init,
        # the other k - 1 draws share the other half, each LATER_DRAW_SHARPNESS · η₀-sharp, and every
        # pair is measured
        def measuring(j):
            shares = initial_shares(j, sharp_first=True)
            return (all(init * float(share) / r >= LATER_DRAW_SHARPNESS * eta for share in shares[1:])
                    and (qual + ext) / j >= math.sqrt(2) / (alpha * c))
        unextended = max([j for j in range(1, MAX_PAIRS + 1) if measuring(j)], default=1)
        # extension rounds when they extend at least MIN_EXTENDED_PAIRS pairs, or as many as go unextended
        if extending and max(extending)[0] >= min(MIN_EXTENDED_PAIRS, unextended):
            assert (k, m) == max(extending)  # largest k, then largest m
        else:
            assert (k, m) == (unextended, 0)


def test_rule_values_as_derived_on_mammal_like_sizes() -> None:
    # MAMMAL: n̂ = 2,575, c = 257.5, R = 1.5 Δ ≈ 0.0077; ε = 1 minus 1 % for the size (the paper
    # variant's count), split d3.
    r = choose_steepness(257.5, objective="range").score_range()
    assert r == pytest.approx(0.0077, rel=1e-3)
    init, ext, qual = 0.99 * 0.6, 0.99 * 0.3, 0.99 * 0.1
    # k ≤ 0.594 / (8 R) = 9.6 and ≤ 0.099 · 0.25 · 257.5 / √2 = 4.5; M ≤ 0.297 / (8 R) = 4.8
    assert es_sizes(init, ext, qual, r, 257.5) == (4, 4)
    # CS at a centre of 10 % with α = 1/4: k m ≤ 4.8 and k (m + 1) ≤ 4.5, largest k with m ≥ 1: 2,
    # but without extensions 1 + 1 pairs (below): extending two is as many, so (2, 1);
    # with its default α = 1/10: k (m + 1) ≤ 1.8 allows no extension; without extensions the
    # qualities have 0.396: k ≤ 0.396 · 0.1 · 257.5 / √2 = 7.2; the first draw keeps 0.297 and the
    # others share 0.297, each 3 η₀-sharp: k - 1 ≤ 0.297 / (24 R) = 1.6, so 1 + 1 pairs
    assert cs_sizes(init, ext, qual, r, 257.5, quality_noise=0.25) == (2, 1)
    assert cs_sizes(init, ext, qual, r, 257.5) == (2, 0)
    # CS's own centre, 20 % (c = 515, R ≈ 0.0043): k (m + 1) ≤ 0.099 · 0.1 · 515 / √2 = 3.6 extends
    # one pair only (k = 1, m = 2); without extensions k - 1 ≤ 0.297 / (24 R) = 2.9: three pairs
    r_cs = choose_steepness(515.0, objective="range").score_range()
    assert r_cs == pytest.approx(0.00427, rel=1e-3)
    assert cs_sizes(init, ext, qual, r_cs, 515.0) == (3, 0)
    assert [str(s) for s in initial_shares(3, sharp_first=True)] == ["1/2", "1/4", "1/4"]
    # ES without extension rounds (an extension share too small for one sharp round): the qualities
    # get it too; with 0.396 for them the draws bind (9.6)
    assert es_sizes(init, 0.001, qual, r, 257.5) == (4, 0)
    assert es_sizes(init, 0.001, qual + ext, r, 257.5) == (9, 0)
    # large data: the paper's values
    r_big = choose_steepness(40_000.0, objective="range").score_range()
    assert es_sizes(init, ext, qual, r_big, 40_000.0) == (20, 80)


def test_bad_rule_inputs() -> None:
    with pytest.raises(ParameterError, match="min-sharpness"):
        es_sizes(0.5, 0.3, 0.1, 0.01, 100.0, min_sharpness=0)
    with pytest.raises(ParameterError, match="quality-noise"):
        cs_sizes(0.5, 0.3, 0.1, 0.01, 100.0, quality_noise=-1)
    with pytest.raises(ParameterError, match="initial-pairs"):
        SerenadeES(initial_pairs="many").fit(_planted()[0])
    with pytest.raises(ParameterError, match="extensions"):
        SerenadeCS(extensions="auto-ish").fit(_planted()[0])


class FixedCount(SeededNoise):
    """Seeded noise whose first release (the row count) is forced to ``count``."""

    def __init__(self, rng, count: int) -> None:
        super().__init__(rng)
        self.count = count
        self.first = True

    def discrete_laplace(self, values, scale):
        if self.first:
            self.first = False
            return np.full(np.shape(values), self.count, dtype=np.int64)
        return super().discrete_laplace(values, scale)


def _planted(n: int = 900):
    planted = make_planted(n, n_planted=2, noise=0.03, random_state=4)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    keep = np.arange(data.n_rows) != 17

    def subset(view):
        return View(view.name, [Attribute(a.name, a.view, a.kind, a.values[keep], a.domain) for a in view])

    return data, TwoViewData(subset(data.left), subset(data.right))


@pytest.mark.parametrize("miner_class", [SerenadeES, SerenadeCS])
@pytest.mark.parametrize("released", [900, 4000, 40_000])
@pytest.mark.parametrize("max_union", [0.8, None])
@pytest.mark.parametrize("split", ["0.6,0.3,0.1", "auto"])
def test_auto_choice_uses_only_public_values(miner_class, released, max_union, split) -> None:
    """Neighbouring datasets with the same released row count get the same k, m/M, as derived."""
    chosen = []
    for data in _planted():
        damping = {"damping": "none"} if max_union is None else {"max_union": max_union}
        miner = miner_class(epsilon=1.0, budget_split=split, **damping).fit(
            data, accountant=Accountant(1.0, FixedCount(np.random.default_rng(0), released)))
        chosen.append(miner.chosen_)
    assert chosen[0] == chosen[1]
    center = float(miner_class.default_min_support_share) * released  # 20 %
    logistic = choose_steepness(center, objective="range")
    r = logistic.score_range()
    if max_union is not None:  # the damped score's range: the cap is a share of the released count
        r = UnionCap(logistic, max_union * released, logistic.steepness / 2).score_range()
    rule = es_sizes if miner_class is SerenadeES else cs_sizes
    eps = 1.0 - SERENADE_SIZE_SHARE  # what the row count leaves
    # the auto split (auto.auto_split) from the same public values, then the auto sizes with it
    noise = DEFAULT_QUALITY_NOISE if miner_class is SerenadeES else DEFAULT_QUALITY_NOISE_CS
    sharpness = DEFAULT_MIN_SHARPNESS_ES if miner_class is SerenadeES else DEFAULT_MIN_SHARPNESS  # 24, 8
    shares = (auto_split(r, center, min_sharpness=sharpness, quality_noise=noise) if split == "auto"
              else (0.6, 0.3, 0.1))
    init, ext, qual = (float(share) for share in shares)
    assert chosen[0]["budget_split"] == f"{init},{ext},{qual}"
    assert (chosen[0]["initial_pairs"], chosen[0]["extensions"]) == rule(eps * init, eps * ext, eps * qual, r,
                                                                         center, min_sharpness=sharpness)
    assert chosen[0]["score_range"] == pytest.approx(r)
    assert chosen[0]["initial_pair_sharpness"] >= sharpness or chosen[0]["initial_pairs"] == 1


def test_auto_choice_is_in_the_document_and_the_ledger_adds_up() -> None:
    data = _planted()[0]
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(1)))
    miner = SerenadeES(epsilon=1.0).fit(data, accountant=accountant)
    k, rounds = miner.chosen_["initial_pairs"], miner.chosen_["extensions"]
    steps = [e.step for e in accountant.ledger]
    assert sum(s.startswith("initial pair") for s in steps) == k
    assert sum(s.startswith("extension") for s in steps) == rounds
    assert sum((e.epsilon for e in accountant.ledger), Fraction(0)) == 1
    document = miner.document()
    assert document["parameters"]["initial_pairs"] == "auto"
    assert document["parameters"]["chosen"]["initial_pairs"] == k


@pytest.mark.parametrize("miner_class, k, m", [(SerenadeES, 7, 9), (SerenadeCS, 3, 2)])
def test_explicit_integers_are_kept(miner_class, k, m) -> None:
    data = _planted()[0]
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(2)))
    miner = miner_class(epsilon=1.0, initial_pairs=k, extensions=m, score_range="symmetric").fit(
        data, accountant=accountant)
    assert (miner.chosen_["initial_pairs"], miner.chosen_["extensions"]) == (k, m)
    assert sum(e.step.startswith("initial pair") for e in accountant.ledger) == k
    # symmetric: the mechanisms get the quality's sensitivity itself (R = 2Δ)
    assert miner.chosen_["score_range"] == pytest.approx(2 * miner._quality.sensitivity())


# -- the grid of numeric attributes (auto.grid_splits) ---------------------------------------


def test_grid_rule_is_the_finest_affordable_nested_grid() -> None:
    from dprm.mining.serenade.auto import GRID_COST, grid_splits, interval_literals

    nested = [19, 9, 4, 1]
    for sharpness in np.linspace(0, 40, 401):
        chosen = grid_splits(float(sharpness), 19)
        affordable = [s for s in nested if GRID_COST * math.log(interval_literals(s)) <= sharpness]
        assert chosen == (affordable[0] if affordable else 1)
    assert [grid_splits(1e9, s) for s in (19, 9, 1)] == [19, 9, 1]
    with pytest.raises(ParameterError, match="sharpness"):
        grid_splits(float("nan"), 19)


@pytest.mark.parametrize("miner_class, epsilon", [(SerenadeES, 1.0), (SerenadeCS, 0.3)])
def test_auto_grid_is_public_and_used(miner_class, epsilon) -> None:
    """Neighbours with the same released count get the same grid; every numeric literal lies on it.

    At ε where the draws cannot resolve the finest grid (CS's draws are sharper: ε = 0.3)."""
    from dprm.mining.serenade.auto import grid_splits
    from dprm.queries import NumericLiteral

    chosen, literals = [], []
    for data in _planted():
        miner = miner_class(epsilon=epsilon).fit(data, accountant=Accountant(
            epsilon, FixedCount(np.random.default_rng(0), 900)))
        chosen.append(miner.chosen_)
        literals.append([str(miner.tables_[1].query(i)) for i in range(len(miner.tables_[1]))])
    assert chosen[0] == chosen[1] and literals[0] == literals[1]
    splits = chosen[0]["max_splits"]
    assert splits == grid_splits(chosen[0]["initial_pair_sharpness"], 19) and splits < 19
    step = 100 / (splits + 1)  # the planted numeric attributes' bounds are [0, 100]
    for number in range(len(miner.tables_[1])):
        query = miner.tables_[1].query(number)
        assert isinstance(query, NumericLiteral)
        for bound in (query.gt, query.le):
            assert bound is None or abs(bound / step - round(bound / step)) < 1e-9
    fixed = miner_class(epsilon=1.0, grid="fixed").fit(_planted()[0], accountant=Accountant(
        1.0, FixedCount(np.random.default_rng(0), 900)))
    assert "max_splits" not in fixed.chosen_ and len(fixed.tables_[1]) > len(miner.tables_[1])


def test_auto_split_makes_the_two_bounds_on_k_meet() -> None:
    """Draws afforded by the initial share equal the releases afforded by the quality share (before rounding)."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        score_range, center = float(rng.uniform(1e-4, 0.05)), float(rng.uniform(10, 5000))
        sharpness, noise = float(rng.uniform(2, 16)), float(rng.uniform(0.05, 0.5))
        init, ext, qual = auto_split(score_range, center, min_sharpness=sharpness, quality_noise=noise)
        assert init + ext + qual == 1 and min(init, ext, qual) > 0 and ext == Fraction(3, 10)
        per_draw, per_release = 1 / (sharpness * score_range), noise * center / math.sqrt(2)
        draws, releases = float(init) * per_draw, float(qual) * per_release
        balanced = 0.7 * per_release / (per_draw + per_release)  # the share before clipping and rounding
        if 0.1 <= balanced <= 0.65:  # the bounds meet up to the rounding to hundredths
            assert abs(draws - releases) <= 0.01 * (per_draw + per_release)
        elif balanced < 0.1:  # the releases bind even with the least initial share
            assert init == Fraction(1, 10) and releases <= draws
        else:  # the draws bind even with the largest initial share
            assert init == Fraction(13, 20) and draws <= releases


def test_cs_without_extensions_draws_one_sharp_pair_first_and_the_ledger_adds_up() -> None:
    """Released 2,500 rows at ε = 1: extension rounds would extend one pair, so three pairs; the first
    draw keeps half of ε_init = 0.97 · 0.6 (3 % for the row count), the other two share the rest, and
    the extension budget pays the quality releases: every share exact, the total exactly ε."""
    data = _planted()[0]
    accountant = Accountant(1.0, FixedCount(np.random.default_rng(0), 2500))
    miner = SerenadeCS(epsilon=1.0).fit(data, accountant=accountant)
    assert (miner.chosen_["initial_pairs"], miner.chosen_["extensions"]) == (3, 0)
    pairs = [e.epsilon for e in accountant.ledger if e.step.startswith("initial pair")]
    rest = 1 - Fraction(str(SERENADE_SIZE_SHARE))
    eps_init = rest * Fraction(3, 5)
    assert pairs == [eps_init / 2] + [eps_init / 4] * 2
    qualities = [e.epsilon for e in accountant.ledger if e.step.startswith("quality")]
    assert sum(qualities, Fraction(0)) == rest * Fraction(2, 5)  # quality + extension shares
    assert not any(e.step.startswith("extension") for e in accountant.ledger)
    assert sum((e.epsilon for e in accountant.ledger), Fraction(0)) == 1
    assert miner.chosen_["first_pair_sharpness"] == pytest.approx(2 * miner.chosen_["initial_pair_sharpness"])
    assert miner.chosen_["initial_pair_sharpness"] >= 3 * 8  # LATER_DRAW_SHARPNESS · η₀
    # an explicit k keeps equal shares (the user's numbers, the paper's scheme)
    accountant = Accountant(1.0, FixedCount(np.random.default_rng(0), 2500))
    SerenadeCS(epsilon=1.0, initial_pairs=4).fit(data, accountant=accountant)
    assert len({e.epsilon for e in accountant.ledger if e.step.startswith("initial pair")}) == 1
