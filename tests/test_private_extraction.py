"""Private extraction (Algorithm 6): ledger, exactness of cells, privacy, intervals, pruning."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from conftest import random_view

from dprm.data.attributes import Attribute, AttributeKind, Domain, View
from dprm.data.literal_index import LiteralIndex
from dprm.errors import BudgetExceededError, ParameterError
from dprm.mining.extraction import Constraints
from dprm.mining.interval_estimates import INTERVAL_KEY, combination_intervals, simulate_tables
from dprm.mining.private_extraction import private_extract
from dprm.mining.pruning import prune
from dprm.mining.selection_bands import unique_rows
from dprm.privacy import Accountant, DiscreteLaplaceHistogram, SeededNoise
from dprm.queries import BooleanLiteral, Not, Redescription, RedescriptionStats, p_value
from dprm.trees.tree import Tree

LOOSE = Constraints(min_support=1, max_support=1.0, min_jaccard=0.0, max_pvalue=1.0, max_clauses=2)
NOTHING = Constraints(min_support=10**9)


def random_tree(rng: np.random.Generator, index: LiteralIndex, depth: int) -> Tree:
    return Tree(depth=depth, splits=[index.splits[int(rng.integers(len(index.splits)))] for _ in range(2**depth - 1)])


def setup(seed: int, n_rows: int = 400, depth: int = 2, missing: float = 0.15):
    rng = np.random.default_rng(seed)
    views = [random_view(rng, n_rows, side, missing=missing) for side in ("left", "right")]
    indexes = [LiteralIndex(v, mode="private", max_splits=4) for v in views]
    trees = [random_tree(rng, i, depth) for i in indexes]
    cells = [t.apply_cells(i) for t, i in zip(trees, indexes)]
    return views, indexes, trees, cells


def run(cells, trees, indexes, epsilon, accountant, constraints=LOOSE, **kw):
    kw.setdefault("rng", np.random.default_rng(0))
    return private_extract(cells[0], trees[0], indexes[0], cells[1], trees[1], indexes[1],
                           epsilon, accountant, "extractReds#1", constraints, **kw)


class Recorder(SeededNoise):
    """A seeded noise source that records what each release was asked to noise."""

    def __init__(self, rng):
        super().__init__(rng)
        self.calls = []

    def discrete_laplace(self, values, scale):
        self.calls.append((np.array(values, copy=True), scale))
        return super().discrete_laplace(values, scale)


# -- ledger and budget ------------------------------------------------------------------


@pytest.mark.parametrize("counts, steps", [
    ("cells", ["extractReds#1: cell counts"]),
    ("paper", ["extractReds#1: leaf intersections", "extractReds#1: left leaf counts"]),
])
def test_ledger_adds_up_to_epsilon_exactly(counts, steps):
    _, indexes, trees, cells = setup(0)
    acc = Accountant(1, SeededNoise(np.random.default_rng(0)))
    run(cells, trees, indexes, 0.3, acc, counts=counts)
    run(cells, trees, indexes, Fraction(7, 10), acc, counts=counts)
    assert acc.spent() == 1 and acc.remaining() == 0
    assert [e.step for e in acc.ledger[: len(steps)]] == steps
    first = acc.ledger[: len(steps)]
    assert sum(e.epsilon for e in first) == Fraction(3, 10)
    if counts == "paper":
        assert first[0].epsilon == first[1].epsilon == Fraction(3, 20)


@pytest.mark.parametrize("counts", ["cells", "paper"])
def test_budget_refused_before_anything_is_drawn(counts):
    _, indexes, trees, cells = setup(1)
    rng = np.random.default_rng(5)
    acc = Accountant(0.75, SeededNoise(rng))  # affords ε/2 but not ε = 1
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceededError):
        run(cells, trees, indexes, 1.0, acc, counts=counts)
    assert acc.ledger == [] and acc.spent() == 0
    assert rng.bit_generator.state == state


def test_bad_parameters():
    _, indexes, trees, cells = setup(2)
    acc = Accountant(1, SeededNoise(np.random.default_rng(0)))
    for kw in ({"counts": "leaves"}, {"confidence": 1.0}, {"n_simulations": -1}):
        with pytest.raises(ParameterError):
            run(cells, trees, indexes, 0.5, acc, **kw)
    with pytest.raises(ParameterError):
        run([cells[0], cells[1][:-1]], trees, indexes, 0.5, acc)
    assert acc.spent() == 0


# -- exactness: cells and queries agree, with missing values ----------------------------


@pytest.mark.parametrize("seed", range(4))
def test_huge_epsilon_gives_the_exact_statistics_of_the_returned_queries(seed):
    views, indexes, trees, cells = setup(seed, depth=2 + seed % 2, missing=0.2)
    acc = Accountant(10**6, SeededNoise(np.random.default_rng(seed)))
    found = run(cells, trees, indexes, 10**6, acc, n_simulations=20)
    assert len(found) > 5
    n_negated = 0
    for r in found:
        exact = RedescriptionStats.from_supports(r.left.support(views[0]), r.right.support(views[1]))
        n_negated += isinstance(r.left, Not) or isinstance(r.right, Not)
        assert (r.stats.support_left, r.stats.support_right, r.stats.intersection) == (
            exact.support_left, exact.support_right, exact.intersection)
        assert r.stats.jaccard == pytest.approx(exact.jaccard)
        assert r.stats.p_value == pytest.approx(exact.p_value, rel=1e-9, abs=1e-300)
        interval = r.extra[INTERVAL_KEY]
        assert interval["jaccard"][0] == pytest.approx(exact.jaccard) == interval["jaccard"][1]
    assert n_negated > 0  # negations are exact complements, residual included


def test_returned_statistics_come_from_the_noisy_table():
    views, indexes, trees, cells = setup(3, n_rows=300)
    acc = Accountant(1, SeededNoise(np.random.default_rng(3)))
    found = run(cells, trees, indexes, 0.05, acc)  # scale 20: noisy stats differ from the truth
    differ = 0
    for r in found:
        exact = RedescriptionStats.from_supports(r.left.support(views[0]), r.right.support(views[1]))
        differ += r.stats.intersection != exact.intersection
        lo, hi = r.extra[INTERVAL_KEY]["jaccard"]
        assert 0 <= lo <= hi <= 1 and r.extra[INTERVAL_KEY]["confidence"] == 0.95
    assert found and differ > len(found) // 2


# -- empirical privacy on neighbouring datasets ------------------------------------------


@pytest.mark.parametrize("counts", ["cells", "paper"])
def test_neighbouring_datasets_change_each_histogram_by_at_most_one(counts):
    _, indexes, trees, cells = setup(4, n_rows=120, missing=0.2)
    eps = 0.5
    base = Recorder(np.random.default_rng(0))
    run(cells, trees, indexes, eps, Accountant(eps, base), NOTHING, counts=counts, n_simulations=0)
    for row in range(0, 120, 7):  # D' = D without one row
        keep = np.arange(120) != row
        rec = Recorder(np.random.default_rng(0))
        run([cells[0][keep], cells[1][keep]], trees, indexes, eps, Accountant(eps, rec), NOTHING,
            counts=counts, n_simulations=0)
        assert len(rec.calls) == len(base.calls) == (1 if counts == "cells" else 2)
        for (d, scale_d), (d1, scale_d1) in zip(base.calls, rec.calls):
            assert d.shape == d1.shape and scale_d == scale_d1
            assert np.abs(d - d1).sum() <= 1  # L1 sensitivity 1 per histogram
            assert scale_d >= len(base.calls) / eps  # ε per histogram = eps / (number of histograms)


def test_released_cell_distribution_ratio_is_bounded_by_exp_epsilon():
    """P[noisy cell = k | D] / P[noisy cell = k | D'] <= e^ε, D' = D minus one row."""
    _, indexes, trees, cells = setup(5, n_rows=150)
    eps = 0.5
    row = 0
    keep = np.arange(150) != row
    recs = []
    for data in ([cells[0], cells[1]], [cells[0][keep], cells[1][keep]]):
        rec = Recorder(np.random.default_rng(0))
        run(data, trees, indexes, eps, Accountant(eps, rec), NOTHING, n_simulations=0)
        recs.append(rec.calls[0])
    (exact_d, scale), (exact_d1, _) = recs
    changed = np.argwhere(exact_d != exact_d1)
    assert len(changed) == 1
    cell = tuple(changed[0])
    c, c1 = int(exact_d[cell]), int(exact_d1[cell])
    assert c == c1 + 1
    noise = SeededNoise(np.random.default_rng(9))
    n = 200_000
    out_d = DiscreteLaplaceHistogram(eps).release(Accountant(1, noise), "D", np.full(n, c))
    out_d1 = DiscreteLaplaceHistogram(eps).release(Accountant(1, noise), "D'", np.full(n, c1))
    assert DiscreteLaplaceHistogram(eps).scale == scale
    support = np.arange(c - 12, c + 13)
    hist_d = np.array([(out_d == k).sum() for k in support])
    hist_d1 = np.array([(out_d1 == k).sum() for k in support])
    enough = (hist_d >= 1000) & (hist_d1 >= 1000)
    assert enough.sum() >= 8
    log_ratio = np.log(hist_d[enough] / hist_d1[enough])
    sigma = np.sqrt(1 / hist_d[enough] + 1 / hist_d1[enough])
    assert np.all(np.abs(log_ratio) <= eps + 4.5 * sigma)


# -- confidence intervals ------------------------------------------------------------------


TRUE_TABLE = np.array([[160, 15, 0, 8], [12, 240, 30, 0], [0, 18, 90, 6], [6, 0, 3, 0]])
LEFT = np.array([[1, 0, 0, 0], [0, 1, 1, 0]], dtype=bool)
RIGHT = np.array([[1, 0, 0, 0], [0, 1, 1, 0]], dtype=bool)


def true_jaccard(table, left, right):
    sl, sr = table.sum(axis=1) @ left.T, table.sum(axis=0) @ right.T
    inter = np.einsum("ka,ab,kb->k", left, table, right)
    return inter / (sl + sr - inter), inter


def coverage(sim_scale_factor: float, repetitions: int = 300) -> np.ndarray:
    rng = np.random.default_rng(11)
    acc = Accountant(10**6, SeededNoise(np.random.default_rng(12)))
    mech = DiscreteLaplaceHistogram(0.25)  # scale 4
    jac, inter = true_jaccard(TRUE_TABLE, LEFT, RIGHT)
    hits = np.zeros((2, 2))
    for _ in range(repetitions):
        released = mech.release(acc, "table", TRUE_TABLE)
        draws = simulate_tables(released, mech.scale * sim_scale_factor, 400, rng)
        for c, interval in enumerate(combination_intervals(draws, LEFT, RIGHT, 0.95)):
            hits[0, c] += interval["jaccard"][0] <= jac[c] <= interval["jaccard"][1]
            hits[1, c] += interval["intersection"][0] <= inter[c] <= interval["intersection"][1]
    return hits / repetitions


def test_intervals_cover_the_true_jaccard():
    rates = coverage(1.0)
    assert np.all((rates >= 0.90) & (rates <= 0.99)), rates
    # power: intervals simulated with a fifth of the noise are too narrow and fail
    narrow = coverage(0.2)
    assert np.all(narrow[0] < 0.85), narrow


def test_simulation_is_post_processing_of_released_values_only():
    released = np.array([[5, -2], [0, 40]])
    a = simulate_tables(released, 3.0, 50, np.random.default_rng(1))
    b = simulate_tables(released, 3.0, 50, np.random.default_rng(1))
    assert np.array_equal(a, b) and a.shape == (50, 2, 2)
    huge = simulate_tables(released, 1e-9, 10, np.random.default_rng(1))
    assert np.all(huge == released)


# -- pruning ---------------------------------------------------------------------------------


def make(inter, width=None, pruned=False):
    extra = {} if width is None else {INTERVAL_KEY: {"confidence": 0.95, "jaccard": [0.5, 0.5 + width]}}
    return Redescription(BooleanLiteral("a"), BooleanLiteral("b"),
                         RedescriptionStats.from_counts(inter + 50, inter + 60, inter, 5000),
                         pruned=pruned, extra=extra)


def test_prune_flags_low_support_and_wide_intervals_and_keeps_everything():
    reds = [make(800, 0.1), make(300, 0.1), make(800, 0.4), make(800), make(900, 0.1, pruned=True)]
    out = prune(reds, min_noisy_support=500, max_interval_width=0.25)
    assert [r.pruned for r in out] == [False, True, True, False, True]
    assert [r.stats for r in out] == [r.stats for r in reds]
    assert [r.pruned for r in prune(reds, min_noisy_support=None, max_interval_width=None)] == [
        False, False, False, False, True]
    assert [r.pruned for r in prune(reds, min_noisy_support=500, max_interval_width=None)] == [
        False, True, False, False, True]
    with pytest.raises(ParameterError):
        prune(reds, min_noisy_support=-1)


def make_interval(low: float, high: float, p_high: float = 1e-9) -> Redescription:
    extra = {INTERVAL_KEY: {"confidence": 0.95, "jaccard": [low, high], "p_value": [0.0, p_high]}}
    return Redescription(BooleanLiteral("a"), BooleanLiteral("b"), RedescriptionStats.from_counts(300, 310, 290, 600),
                         extra=extra)


def test_a_wide_interval_whose_lower_end_reaches_the_floor_is_kept() -> None:
    """The width rule's exception: J ∈ [0.61, 0.99] is surely high, only imprecise."""
    reds = [make_interval(0.61, 0.99), make_interval(0.49, 0.99), make_interval(0.80, 0.95),
            make_interval(0.61, 0.99, p_high=0.02)]
    assert [r.pruned for r in prune(reds, max_interval_width=0.22)] == [True, True, False, True]
    assert [r.pruned for r in prune(reds, max_interval_width=0.22, interval_floor=0.5)] == [False, True, False, False]
    # the p-value rule still applies to what the floor keeps
    assert [r.pruned for r in prune(reds, max_interval_width=0.22, interval_floor=0.5, max_pvalue=0.01)] == [
        False, True, False, True]
    with pytest.raises(ParameterError, match="prune-interval-floor"):
        prune(reds, interval_floor=1.5)


def test_a_wide_interval_surely_above_independence_is_kept():
    """The width rule's second exception: J ∈ [0.43, 0.88] against J_ind = 0.34 is surely a dependence."""
    def above(low: float, baseline: float | None, p_high: float = 1e-9) -> Redescription:
        r = make_interval(low, 0.88, p_high)
        return r if baseline is None else replace(r, extra={**r.extra, "independence": {"jaccard": baseline}})

    reds = [above(0.43, 0.34), above(0.43, 0.40), above(0.43, None), above(0.43, 0.34, p_high=0.02)]
    assert [r.pruned for r in prune(reds, max_interval_width=0.22)] == [True, True, True, True]
    assert [r.pruned for r in prune(reds, max_interval_width=0.22, excess_floor=0.05)] == [False, True, True, False]
    assert [r.pruned for r in prune(reds, max_interval_width=0.22, excess_floor=0.1)] == [True, True, True, True]
    # the p-value rule still applies to what the exception keeps
    assert [r.pruned for r in prune(reds, max_interval_width=0.22, excess_floor=0.05, max_pvalue=0.01)] == [
        False, True, True, True]
    with pytest.raises(ParameterError, match="prune-excess-floor"):
        prune(reds, excess_floor=-0.1)


def _two_by_two(n: int, left: int, right: int, both: int) -> np.ndarray:
    """The 2 × 2 table of a literal pair: rows left holds / not, columns right holds / not."""
    return np.array([[both, left - both], [right - both, n - left - right + both]], dtype=np.int64)


def _significance_kept(table: np.ndarray, scale: float, probability: float | None, reps: int, seed: int) -> float:
    """The share of ``reps`` noisy releases of ``table`` whose pair :func:`prune`'s p-value rule keeps."""
    rng = np.random.default_rng(seed)
    mask = np.array([[True, False]])
    kept = 0
    for _ in range(reps):
        released = SeededNoise(rng).discrete_laplace(table, scale)
        draws = simulate_tables(released, scale, 400, rng)
        estimate = RedescriptionStats.from_counts(released[0].sum(), released[:, 0].sum(), released[0, 0],
                                                  released.sum())   # clipped into the consistent range
        interval = combination_intervals(draws, mask, mask, 0.95, estimates=[estimate], max_pvalue=0.01)[0]
        r = Redescription(BooleanLiteral("a"), BooleanLiteral("b"), estimate, extra={INTERVAL_KEY: interval})
        kept += not prune([r], max_interval_width=None, max_pvalue=0.01,
                          significance_probability=probability)[0].pruned
    return kept / reps


def test_the_significance_rule_keeps_a_pair_by_its_posterior_probability_of_significance():
    """The probability rule (0.95, the literal-pair trials' default) keeps a truly insignificant pair rarely and a
    significant one often.

    A 2 × 2 table of 3,000 rows released with noise of scale 37 (a literal pair's extraction at ε ≈ 0.027):
    one not significant (true p ≈ 0.036 against max-pvalue 0.01), one of a weak real relation (126
    rows above independence, p ≈ 6e-7). Neither rule keeps the first in more than one release of ten;
    the old rule (the upper end of the 95 % p-value interval, one-sided 0.975) keeps the second in
    about 60 % of the releases, the probability rule in about 75 % (the same releases).
    """
    weak = _two_by_two(3000, 1300, 2200, 1000)
    real = _two_by_two(3000, 1340, 2180, 1100)
    assert 0.01 < float(p_value(1000, 1300, 2200, 3000)) < 0.05
    assert float(p_value(1100, 1340, 2180, 3000)) < 1e-6
    for probability in (None, 0.95):
        assert _significance_kept(weak, 37.0, probability, 200, 1) <= 0.1
    kept_upper_end = _significance_kept(real, 37.0, None, 200, 2)
    kept_probability = _significance_kept(real, 37.0, 0.95, 200, 2)
    assert kept_probability >= 0.65
    assert kept_probability >= kept_upper_end + 0.1
    with pytest.raises(ParameterError, match="significance-probability"):
        prune([], max_pvalue=0.01, significance_probability=1.0)


def _band_with_and_without(noise: float, epsilon: float, reps: int, seed: int, option: str, value: float,
                           rule: dict) -> tuple[list[bool], int, int]:
    """Seeded releases of :func:`_weak_relation_pair` with extraction's ``option`` off and at ``value``.

    Asserts that the band's multiplier is never smaller with the option. Returns, over the
    releases with it, whether each kept redescription's band covers its true Jaccard index
    (kept by :func:`prune` with ``rule``, the width rule and the p-value rule), how many of
    them ``rule`` keeps that the width rule alone prunes, and how many bands it widened.
    """
    data, indexes, trees, cells = _weak_relation_pair(noise=noise)
    hits, kept_by_rule, widened = [], 0, 0
    basic = dict(max_interval_width=0.22, max_pvalue=0.01)
    for rep in range(reps):
        found = {}
        for setting in (None, value):
            acc = Accountant(10, SeededNoise(np.random.default_rng(seed + rep)))
            found[setting] = run(cells, trees, indexes, epsilon, acc, constraints=Constraints(),
                                 data_size=(2000.0, 800.0), rng=np.random.default_rng(rep), **{option: setting})
        for plain, with_option in zip(found[None], found[value]):
            q = [r.extra[INTERVAL_KEY]["selection"]["critical_value"] for r in (plain, with_option)]
            assert q[1] >= q[0] - 1e-12
            widened += q[1] > q[0] + 1e-9
        without = [r.pruned for r in prune(found[value], **basic)]
        for r, pruned_without in zip(prune(found[value], **basic, **rule), without):
            if r.pruned:
                continue
            kept_by_rule += pruned_without
            truth = RedescriptionStats.from_supports(r.left.support(data.views[0]),
                                                     r.right.support(data.views[1])).jaccard
            low, high = r.extra[INTERVAL_KEY]["jaccard"]
            hits.append(low <= truth <= high)
    return hits, kept_by_rule, widened


def test_the_band_covers_what_the_excess_floor_keeps():
    """With the excess floor, the candidates whose wide interval starts above independence join
    the band's set (never a smaller ``q``), and what the floor keeps is covered like the rest."""
    hits, kept_by_floor, widened = _band_with_and_without(0.15, 0.05, 40, 3000, "prune_excess_floor", 0.05,
                                                          {"excess_floor": 0.05})
    assert kept_by_floor >= 10 and widened >= 10, (kept_by_floor, widened)
    assert len(hits) >= 50 and np.mean(hits) >= 0.90, (len(hits), np.mean(hits))


def test_the_band_covers_what_the_floor_keeps_too():
    """The band is simultaneous over every candidate that could be kept: with the floor, the
    candidates whose wide interval starts high join its set (never a smaller ``q``), and what
    the floor keeps is covered like the rest (a strong relation, J about 0.9)."""
    hits, floor_kept, widened = _band_with_and_without(0.05, 0.03, 60, 2000, "prune_floor", 0.5,
                                                       {"interval_floor": 0.5})
    assert floor_kept >= 5 and widened >= 1, (floor_kept, widened)
    assert len(hits) >= 15 and np.mean(hits) >= 0.90, (len(hits), np.mean(hits))


# -- the paper's counts on a hand-made example --------------------------------------------------


def leaf_set(query, leaves):
    """The leaves a side query covers (for ¬n_m: all leaves but m) and whether it is a negation."""
    negated = isinstance(query, Not)
    inner = query.query if negated else query
    parts = list(inner.queries) if hasattr(inner, "queries") else [inner]
    chosen = sorted(leaves.index(q) for q in parts)
    return ([k for k in range(len(leaves)) if k not in chosen] if negated else chosen), negated


def test_paper_mode_reproduces_the_papers_formulas():
    # Left: Boolean a (depth 1: leaf 0 = a, leaf 1 = ¬a, missing = out of the tree);
    # right: Boolean b likewise. Rows (a, b), -1 = missing.
    rows = [(1, 1)] * 30 + [(1, 0)] * 5 + [(0, 1)] * 4 + [(0, 0)] * 25 + [(1, -1)] * 6 + [(0, -1)] * 3 \
        + [(-1, 1)] * 7 + [(-1, 0)] * 2
    a = np.array([r[0] for r in rows], dtype=np.int8)
    b = np.array([r[1] for r in rows], dtype=np.int8)
    views = [View("left", [Attribute("a", "left", AttributeKind.BOOLEAN, a, Domain(declared=True))]),
             View("right", [Attribute("b", "right", AttributeKind.BOOLEAN, b, Domain(declared=True))])]
    indexes = [LiteralIndex(v, mode="private") for v in views]
    trees = [Tree(1, [i.splits[0]]) for i in indexes]
    cells = [t.apply_cells(i) for t, i in zip(trees, indexes)]
    acc = Accountant(10**6, SeededNoise(np.random.default_rng(0)))
    found = run(cells, trees, indexes, 10**6, acc, LOOSE, counts="paper", n_simulations=0)
    cnt_int = np.array([[30, 5], [4, 25]])       # CntInt: rows in both trees
    cnt_l = np.array([30 + 5 + 6, 4 + 25 + 3])  # CntL: rows in the left tree
    cnt_r = cnt_int.sum(axis=0)                  # CntR = column sums of CntInt
    n_hat = cnt_l.sum()                          # dSize = Σ CntL (= 73, not the 82 rows)
    leaf = {"left": [BooleanLiteral("a", True), BooleanLiteral("a", False)],
            "right": [BooleanLiteral("b", True), BooleanLiteral("b", False)]}
    assert found
    seen = set()
    for r in found:
        assert r.stats.p_value == pytest.approx(
            RedescriptionStats.from_counts(r.stats.support_left, r.stats.support_right,
                                           r.stats.intersection, n_hat).p_value)
        (left_set, ln), (right_set, rn) = leaf_set(r.left, leaf["left"]), leaf_set(r.right, leaf["right"])
        # left supports: Σ CntL over the leaves; ¬n_m: the other leaves (Appendix C)
        assert r.stats.support_left == cnt_l[left_set].sum()
        if not rn:
            assert r.stats.support_right == cnt_r[right_set].sum()
            assert r.stats.intersection == cnt_int[np.ix_(left_set, right_set)].sum()
        else:  # documented deviation: ¬n_m on the right also holds on the residual column
            (m,) = [k for k in range(2) if k not in right_set]
            assert r.stats.support_right == n_hat - cnt_r[m]
            assert r.stats.intersection == cnt_l[left_set].sum() - cnt_int[left_set, m].sum()
        seen.add((ln, rn))
    assert {(False, False), (True, False), (False, True)} <= seen


def test_consistent_cells_make_large_supports_accurate_and_stay_unbiased() -> None:
    """With a separately released total, the least-squares cells estimate the support
    of a negation (all cells but one row of the table) far better, without bias."""
    from dprm.mining.noisy_estimates import combine_estimates, consistent_cells, discrete_laplace_variance

    rng = np.random.default_rng(0)
    truth = rng.integers(0, 40, size=(17, 17)).astype(float)
    free = np.ones(truth.shape, dtype=bool)
    free[3, :] = False  # a known-empty leaf
    truth[~free] = 0.0
    cell_scale, total_scale = 12.0, 28.0
    negation = np.ones(truth.shape, dtype=bool)
    negation[5, :] = False  # ¬ leaf 5
    raw_errors, consistent_errors = [], []
    for _ in range(2000):
        noisy = truth + rng.laplace(0, cell_scale, truth.shape)
        noisy[~free] = 0.0
        total = truth.sum() + rng.laplace(0, total_scale)
        n_hat, _ = combine_estimates(noisy.sum(), free.sum() * discrete_laplace_variance(cell_scale),
                                     (total, discrete_laplace_variance(total_scale)))
        adjusted = consistent_cells(noisy, free, n_hat)
        assert adjusted.sum() == pytest.approx(n_hat) and (adjusted[~free] == 0).all()
        raw_errors.append(noisy[negation].sum() - truth[negation].sum())
        consistent_errors.append(adjusted[negation].sum() - truth[negation].sum())
    raw_errors, consistent_errors = np.array(raw_errors), np.array(consistent_errors)
    assert consistent_errors.std() < 0.5 * raw_errors.std()
    assert abs(consistent_errors.mean()) < 4 * consistent_errors.std() / np.sqrt(len(consistent_errors))


# -- every interval contains its estimate (issue 9) ----------------------------------------

STATISTICS = ("jaccard", "intersection", "support_left", "support_right", "p_value")


def clipped_case():
    """A released table whose noisy intersection exceeds both noisy supports.

    The estimate clips the intersection to the smaller support: J = min/max ≈ 0.93,
    while draws scatter the many near-empty cells of both supports and give much
    lower Jaccard values (the equal-tailed interval was [0.00, 0.73]).
    """
    released = np.zeros((22, 22), dtype=np.int64)
    released[0, 0], released[0, 1], released[1, 0] = 110, -3, 5
    released[1:, 1:] += 40
    mask = np.zeros((1, 22), dtype=bool)
    mask[0, 0] = True
    estimate = RedescriptionStats.from_counts(released[0].sum(), released[:, 0].sum(), released[0, 0],
                                              released.sum())
    return released, mask, estimate


def test_jaccard_interval_holds_the_estimate_when_clipping_binds():
    released, mask, estimate = clipped_case()
    draws = simulate_tables(released, 30.0, 500, np.random.default_rng(0))
    equal_tailed = combination_intervals(draws, mask, mask, 0.95)[0]["jaccard"]
    assert not equal_tailed[0] <= estimate.jaccard <= equal_tailed[1]  # the defect
    interval = combination_intervals(draws, mask, mask, 0.95, estimates=[estimate])[0]
    for key in STATISTICS:
        low, high = interval[key]
        assert low <= getattr(estimate, key) <= high, key
    # still an interval of 95 % of the simulated posterior, only with shifted tails
    values = []
    for table in draws:
        sl, sr = table[0].sum(), table[:, 0].sum()
        values.append(RedescriptionStats.from_counts(sl, sr, table[0, 0], table.sum()).jaccard)
    values = np.array(values)
    low, high = interval["jaccard"]
    assert np.mean((values >= low) & (values <= high)) >= 0.95 - 1e-9
    assert high - low < 1.0


def test_credible_interval_is_equal_tailed_when_it_already_holds_the_estimate():
    from dprm.mining.interval_estimates import credible_interval

    draws = np.random.default_rng(1).normal(0.5, 0.1, (2000, 3))
    estimates = np.array([0.5, 0.45, 0.6])
    assert np.array_equal(credible_interval(draws, estimates, 0.9), credible_interval(draws, None, 0.9))
    shifted = credible_interval(draws, np.array([0.9, 0.1, 0.5]), 0.9)
    assert shifted[0, 0] <= 0.9 <= shifted[1, 0] and shifted[0, 1] <= 0.1 <= shifted[1, 1]
    assert shifted[1, 0] == 0.9 or shifted[1, 0] >= 0.9  # outside every draw: the estimate closes it


@pytest.mark.parametrize("counts", ["cells", "paper"])
@pytest.mark.parametrize("seed", range(6))
def test_every_interval_of_a_noisy_extraction_holds_its_estimate(counts, seed):
    """Noisy extractions (scale 10 against supports of ~100) on random data, with and
    without a separate row count: every interval contains the reported statistic."""
    _, indexes, trees, cells = setup(seed, depth=3)
    acc = Accountant(10, SeededNoise(np.random.default_rng(seed)))
    data_size = (400.0 + seed, 200.0) if seed % 2 else None
    found = run(cells, trees, indexes, 0.1, acc, counts=counts, data_size=data_size, n_simulations=200)
    assert found
    for r in found:
        interval = r.extra[INTERVAL_KEY]
        for key in STATISTICS:
            low, high = interval[key]
            assert low <= getattr(r.stats, key) <= high, (key, getattr(r.stats, key), interval[key])


def test_paper_counts_intervals_hold_their_clipped_estimates():
    """In "paper" mode the estimates come from the clipped table, the draws from the
    unclipped one: formerly almost every support interval missed its estimate."""
    _, indexes, trees, cells = setup(3, depth=3)
    acc = Accountant(10, SeededNoise(np.random.default_rng(3)))
    found = run(cells, trees, indexes, 0.05, acc, counts="paper", n_simulations=300)
    inside = [r.extra[INTERVAL_KEY]["support_left"][0] <= r.stats.support_left
              <= r.extra[INTERVAL_KEY]["support_left"][1] for r in found]
    assert found and all(inside)


# -- selection-aware Jaccard intervals ------------------------------------------------------


def _weak_relation_pair(noise: float = 0.3):
    """Generated data with a weak planted relation (``a ∨ b`` vs ``x > 60`` on 30 % broken
    rows; ``noise``: another share) and a fixed tree pair over its attributes and unrelated ones."""
    from dprm.data import load_two_view
    from dprm.datasets import make_planted

    planted = make_planted(2000, n_left_boolean=6, n_right_numeric=4, relations=["threshold-or"], noise=noise,
                           random_state=0)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    indexes = [LiteralIndex(v, mode="private", max_splits=8) for v in data.views]

    def split(side, name, code):
        position = indexes[side].view.names.index(name)
        return [s for s in indexes[side].splits if s.attribute == position][code]

    trees = [Tree(depth=2, splits=[split(0, "l_bool_0", 0), split(0, "l_bool_1", 0), split(0, "l_bool_5", 0)]),
             Tree(depth=2, splits=[split(1, "r_num_0", 4), split(1, "r_num_3", 4), split(1, "r_num_1", 2)])]
    cells = [t.apply_cells(i) for t, i in zip(trees, indexes)]
    return data, indexes, trees, cells


def test_kept_jaccard_intervals_cover_despite_selection_and_marginal_ones_do_not():
    """60 seeded releases of one weak tree pair (scale 10 against supports of hundreds):
    the redescriptions that survive pruning were chosen by the same noise that states
    them, and their marginal 95 % intervals under-cover; the selection-aware band covers."""
    data, indexes, trees, cells = _weak_relation_pair()
    hits = {"jaccard": [], "jaccard_marginal": []}
    for rep in range(60):
        acc = Accountant(10, SeededNoise(np.random.default_rng(1000 + rep)))
        found = run(cells, trees, indexes, 0.1, acc, constraints=Constraints(), data_size=(2000.0, 800.0),
                    rng=np.random.default_rng(rep))
        for r in prune(found, max_interval_width=0.22, max_pvalue=0.01):
            if r.pruned:
                continue
            truth = RedescriptionStats.from_supports(r.left.support(data.views[0]),
                                                     r.right.support(data.views[1])).jaccard
            interval = r.extra[INTERVAL_KEY]
            assert interval["selection"]["critical_value"] > 1.96
            for key in hits:
                low, high = interval[key]
                hits[key].append(low <= truth <= high)
    assert len(hits["jaccard"]) >= 30
    assert np.mean(hits["jaccard"]) >= 0.90, np.mean(hits["jaccard"])          # nominal 0.95 minus slack
    assert np.mean(hits["jaccard_marginal"]) <= 0.88, np.mean(hits["jaccard_marginal"])  # the curse is real here


def test_band_is_never_narrower_than_the_marginal_interval_and_holds_the_estimate():
    _, indexes, trees, cells = setup(4, n_rows=800)
    acc = Accountant(10, SeededNoise(np.random.default_rng(4)))
    found = run(cells, trees, indexes, 0.2, acc, constraints=Constraints(min_jaccard=0.0, max_pvalue=1.0))
    assert found
    for r in found:
        interval = r.extra[INTERVAL_KEY]
        (low, high), (m_low, m_high) = interval["jaccard"], interval["jaccard_marginal"]
        assert 0 <= low <= m_low <= m_high <= high <= 1
        assert low <= r.stats.jaccard <= high


def test_held_back_share_writes_marginal_intervals():
    """With re-estimation the statement's noise is independent of the choice: no band."""
    _, indexes, trees, cells = setup(5, n_rows=800)
    acc = Accountant(10, SeededNoise(np.random.default_rng(5)))
    found = run(cells, trees, indexes, 0.5, acc, constraints=Constraints(min_jaccard=0.0, max_pvalue=1.0),
                reestimate_share=0.5)
    assert found and all("selection" not in r.extra[INTERVAL_KEY] for r in found)


@pytest.mark.parametrize("seed", range(6))
def test_every_returned_side_is_a_reachable_set(seed):
    """The band is simultaneous over reachable_sets: extraction must never return anything else."""
    from dprm.mining.extraction import extract_combinations
    from dprm.mining.selection_bands import reachable_sets
    from dprm.trees.leaf_queries import node_cells

    rng = np.random.default_rng(seed)
    _, indexes, trees, cells = setup(seed, depth=2 + seed % 2)
    table = rng.integers(-3, 60, size=(trees[0].n_leaves + 1, trees[1].n_leaves + 1)).astype(float)
    gamma = Constraints(min_support=1, max_support=1.0, min_jaccard=0.0, max_pvalue=1.0, max_clauses=1 + seed % 3)
    units = []
    for tree in trees:
        masks = np.eye(tree.n_leaves, dtype=bool) if seed % 2 else node_cells(tree)[1][:, : tree.n_leaves]
        units.append(np.column_stack([masks[masks.any(axis=1)], np.zeros(int(masks.any(axis=1).sum()), bool)]))
    found = extract_combinations(table, gamma, units[0], units[1])
    assert found
    reachable = [{tuple(row) for row in reachable_sets(u, gamma.max_clauses).tolist()} for u in units]
    for c in found:
        assert tuple(c.left) in reachable[0] and tuple(c.right) in reachable[1]


def test_too_many_candidates_fall_back_to_the_bonferroni_bound():
    from statistics import NormalDist

    from dprm.mining.selection_bands import reachable_sets, selection_critical_value

    assert reachable_sets(np.eye(128, dtype=bool), 3, limit=60_000) is None
    q, k = selection_critical_value(np.zeros((5, 2, 2)), np.full(5, 10.0), np.zeros((2, 2)), 10.0, None, None,
                                    Constraints(), 0.95, 1.0, n_candidates=10**6)
    assert k == 10**6 and q == pytest.approx(NormalDist().inv_cdf(1 - 0.05 / 2e6))


def test_band_of_noise_beyond_the_float_range_is_the_whole_range_and_plain_json():
    """A tiny ε gives an infinite cell variance: the band says nothing is known, in plain JSON."""
    import json
    import math

    from dprm.mining.selection_bands import selection_aware_intervals, selection_critical_value

    q, _ = selection_critical_value(np.zeros((5, 2, 2)), np.full(5, 10.0), np.zeros((2, 2)), 10.0, None, None,
                                    Constraints(), 0.95, math.inf, n_candidates=4)
    assert q == math.inf
    out = selection_aware_intervals([{"confidence": 0.95, "jaccard": [0.2, 0.7]}],
                                    [RedescriptionStats.from_counts(60, 80, 50, 1000)],
                                    np.array([[True, False]]), np.array([[True, False]]), math.inf, q, 4)
    assert out[0]["jaccard"] == [0.0, 1.0] and out[0]["selection"]["critical_value"] is None
    json.dumps(out, allow_nan=False)


@pytest.mark.parametrize("width", [1, 3, 8, 9, 64, 65, 130])
def test_unique_rows_are_numpys_unique_rows_in_the_same_order(width):
    rng = np.random.default_rng(width)
    for n_rows in (0, 1, 2, 50, 400):
        rows = rng.random((n_rows, width)) < rng.uniform(0.05, 0.95)
        rows = np.concatenate([rows, rows[: n_rows // 3]])  # duplicates
        assert np.array_equal(unique_rows(rows), np.unique(rows, axis=0))


def test_the_independence_baseline_takes_at_least_the_union_as_the_row_count():
    """A fuzzing round: a Serenade result on 200 rows at ε 0.05 showed excess −0.84 with
    J_ind 1.0, its released row count (apart from the supports 106 and 164) being below
    both supports, which clipped them to it. The rows hold the union."""
    from dprm.mining.independence import independence_entry
    from dprm.queries import RedescriptionStats

    stats = RedescriptionStats.from_counts(106, 164, 80)
    below = independence_entry(stats, 100, (0.2, 0.6))
    assert below == independence_entry(stats, stats.union, (0.2, 0.6))
    assert 0.4 < below["jaccard"] < 0.6 and -0.2 < below["excess"] < 0
    assert independence_entry(stats, 1000)["jaccard"] < below["jaccard"]  # above the union, n̂ as given
