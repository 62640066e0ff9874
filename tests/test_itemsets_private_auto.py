"""``private_method="auto"``: the items first, then the basis release or the chain, chosen on the items' release."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd

from dprm.itemsets import private_basis
from dprm.itemsets.ground_truth import frequent_itemsets, itemset_rates
from dprm.itemsets.private import fit_private_estimator
from dprm.itemsets.private_basis import ITEM_SHARE, basis_noise, basis_table, item_share, release_bases
from dprm.itemsets.private_basis_graph import _cells, largest_basis
from dprm.itemsets.private_basis_pairs import (BASIS_MAX_NOISE, ONE_BASIS_CELLS, PAIR_SHARE, _undecided_pairs,
                                               frechet_joined, pair_noise)
from dprm.itemsets.private_basis_supports import discrete_laplace_variance
from dprm.itemsets.private_items import release_items
from dprm.privacy import Accountant, DiscreteLaplaceHistogram, SeededNoise

from test_itemsets_private_basis import SIZES, _codes, _neighbours, _wide

def _frame(codes: np.ndarray) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    columns = [f"c{j}" for j in range(codes.shape[1])]
    frame = pd.DataFrame({c: codes[:, j].astype(str) for j, c in enumerate(columns)})
    return frame, {c: [str(v) for v in range(SIZES[j])] for j, c in enumerate(columns)}


def test_pair_noise_is_the_noise_of_a_pair_table_cell_or_of_a_pair_sum_in_the_one_basis() -> None:
    codes = _wide(3000, 0)
    sizes = [3] * codes.shape[1]
    acc = Accountant(1, SeededNoise(np.random.default_rng(0)))
    selection = release_items(codes, sizes, ITEM_SHARE, 0.3, acc, [f"c{j}" for j in range(codes.shape[1])])
    items = {(j, v) for j in range(codes.shape[1]) for v in selection.kept_codes(j)}
    assert _cells(items, selection.sizes) > ONE_BASIS_CELLS  # pairs are released: P tables of eps*PAIR_SHARE/P
    pairs = len(_undecided_pairs(list(range(codes.shape[1])), selection, 0.3)[0])
    assert 0 < pairs <= math.comb(codes.shape[1], 2)
    expected = math.sqrt(discrete_laplace_variance(float(pairs / PAIR_SHARE))) / (0.3 * selection.n_hat)
    assert math.isclose(pair_noise(selection, sizes, 1, 0.3), expected)
    assert math.isclose(pair_noise(selection, sizes, 2, 0.3), expected / 2, rel_tol=0.01)  # scale ~ 1/eps
    small = _codes(500, 0)
    one = release_items(small, SIZES, ITEM_SHARE, 0.3, acc, ["a", "b", "c", "d"])
    widths = sorted(len(one.kept[j]) + (len(one.kept[j]) < one.sizes[j]) for j in range(3))
    cells = math.prod(widths)
    var = cells / (widths[0] * widths[1]) * discrete_laplace_variance(float(1 / (1 - ITEM_SHARE)))
    assert math.isclose(pair_noise(one, SIZES, 1, 0.3), math.sqrt(var) / (0.3 * one.n_hat))


def test_auto_releases_bases_on_a_large_table_and_its_ledger_adds_up_to_epsilon_exactly() -> None:
    frame, domains = _frame(_codes(4000, 1))
    acc = Accountant(Fraction(3, 4), SeededNoise(np.random.default_rng(2)))
    fit = fit_private_estimator(frame, Fraction(3, 4), domains=domains, private_method="auto", min_support=0.3,
                                accountant=acc)
    assert fit.parameters["auto_choice"] == "basis" and fit.parameters["pair_noise"] <= BASIS_MAX_NOISE
    assert fit.estimator is None and fit.bases is not None and fit.bases.bases
    assert acc.spent() == Fraction(3, 4)
    items = sum((e.epsilon for e in acc.ledger if e.step.startswith("items: ")), Fraction(0))
    assert items == Fraction(3, 4) * item_share()  # the items' share of the default rule (0.2 with "one")
    assert math.isclose(sum(e["epsilon"] for e in fit.privacy["ledger"]), 0.75)
    assert fit.privacy["private"] is False  # seeded noise
    listed = fit.bases.named_itemsets()
    assert listed and all(s["support_sd"] > 0 and s["interval"][0] < s["support"] < s["interval"][1]
                          for s in listed if s["items"].keys() - {"c3"})


def test_auto_releases_the_chain_when_the_pairs_would_drown_in_noise_and_its_ledger_adds_up() -> None:
    frame, domains = _frame(_codes(60, 3))
    acc = Accountant(Fraction(1, 10), SeededNoise(np.random.default_rng(4)))
    fit = fit_private_estimator(frame, Fraction(1, 10), domains=domains, private_method="auto", min_support=0.3,
                                accountant=acc, random_state=5)
    assert fit.parameters["auto_choice"] == "chain" and fit.parameters["pair_noise"] > BASIS_MAX_NOISE
    assert fit.estimator is not None and fit.bases is None
    assert acc.spent() == Fraction(1, 10)
    steps = [e["step"] for e in fit.privacy["ledger"]]
    n_items = sum(s.startswith("items: ") for s in steps)
    assert n_items == 3 and all(s.startswith("items: ") for s in steps[:n_items])  # the items first
    assert math.isclose(sum(e["epsilon"] for e in fit.privacy["ledger"][:n_items]), 0.1 * float(item_share()))
    assert math.isclose(sum(e["epsilon"] for e in fit.privacy["ledger"]), 0.1)


def test_the_auto_release_is_epsilon_dp_on_neighbouring_datasets() -> None:
    """Exact likelihood ratio of the whole output (items' histograms, then the bases the choice led to).

    The choice of branch and the bases are functions of the items' output, the same for both
    datasets given the output: the density of the output is the items' density times the
    bases' density given it; its log-ratio over every neighbour is at most ε (and reached).
    """
    epsilon = Fraction(1, 2)
    codes = _codes(400, 6)
    frame, domains = _frame(codes)
    acc = Accountant(epsilon, SeededNoise(np.random.default_rng(8)))
    fit = fit_private_estimator(frame, epsilon, domains=domains, private_method="auto", min_support=0.3,
                                accountant=acc)
    release = fit.bases
    assert fit.parameters["auto_choice"] == "basis" and release.pair_scale is None and release.bases
    selection = release.selection

    def log_density(data: np.ndarray) -> float:
        items = sum(float(np.abs(selection.counts[j] - np.bincount(data[:, j], minlength=SIZES[j])).sum())
                    for j in range(3)) / selection.scale
        compressed = selection.compress(data)
        bases = sum(float(np.abs(b.noisy - basis_table(compressed, b.columns, b.items, selection.sizes)).sum())
                    / b.scale for b in release.bases)
        return -items - bases

    ratios = [log_density(codes) - log_density(n) for n in _neighbours(codes)]
    assert max(abs(r) for r in ratios) <= float(epsilon) + 1e-9
    assert max(abs(r) for r in ratios) > 0.9 * float(epsilon)  # the bound is reached: no slack in the split


def test_frechet_joined_pairs_are_frequent_in_the_data_and_their_tables_are_not_released() -> None:
    """The bound ``count(p ∧ q) ≥ count(p) + count(q) − n`` holds on every table: with exact counts
    (no noise, z = 0) every joined pair is frequent; with noisy ones the tables of wholly joined
    column pairs are skipped, the pairs' share then split over the rest (ledger exact)."""
    rng = np.random.default_rng(8)
    n = 3000
    common = [np.where(rng.random(n) < p, 0, rng.integers(1, 3, size=n)) for p in (0.97, 0.95, 0.9)]
    blocks = _wide(n, 9, width=12)
    codes = np.column_stack(common + [blocks[:, j] for j in range(blocks.shape[1])])
    sizes = [3] * codes.shape[1]
    columns = [f"c{j}" for j in range(codes.shape[1])]

    huge = Fraction(10**6)  # noise scale ~1e-5 rows: the exact one-way counts
    exact = release_items(codes, sizes, huge, 0.3, Accountant(huge, SeededNoise(np.random.default_rng(0))), columns)
    assert all((exact.counts[j] == np.bincount(codes[:, j], minlength=3)).all() for j in range(codes.shape[1]))
    items = [(j, v) for j in range(codes.shape[1]) for v in exact.kept_codes(j)]
    joined = frechet_joined(items, exact, 0.3, 0.0)
    assert joined and any(p[0] >= 3 or q[0] >= 3 for p, q in joined)  # the common items join the blocks' items too
    for p, q in joined:
        both = np.mean((exact.compress(codes)[:, p[0]] == p[1]) & (exact.compress(codes)[:, q[0]] == q[1]))
        assert both >= 0.3
    acc = Accountant(Fraction(2), SeededNoise(np.random.default_rng(10)))
    release = release_bases(codes, sizes, 2, 0.3, acc, columns, rule="pairs")
    tables = [e for e in acc.ledger if e.step.startswith("pairs: ")]
    undecided = _undecided_pairs(list(range(codes.shape[1])), release.selection, 0.3)[0]
    assert 0 < len(tables) == len(undecided) < math.comb(codes.shape[1], 2)
    assert sum((e.epsilon for e in tables), Fraction(0)) == 2 * PAIR_SHARE and acc.spent() == 2
    assert release.pair_scale == float(DiscreteLaplaceHistogram(2 * PAIR_SHARE / len(tables)).scale)


def test_heavy_cell_sums_match_a_brute_force_over_the_cells() -> None:
    """Each sub-itemset's sum of the cells at or above the threshold, less z sd of their noise, over random bases."""
    from dprm.itemsets.private_basis_supports import Basis, heavy_cell_sums

    rng = np.random.default_rng(11)
    for _ in range(5):
        shape = (3, 2, 3)
        basis = Basis((0, 2, 5), ((0, 1), (0,), (0, 1)), rng.integers(-30, 200, size=shape), 10.0)
        sums = heavy_cell_sums([basis], 6.0, 1.5)
        sd2 = discrete_laplace_variance(10.0)
        for choice in itertools.product(*(list(range(len(its))) + [None] for its in basis.items)):
            key = frozenset((basis.columns[a], basis.items[a][i]) for a, i in enumerate(choice) if i is not None)
            if not key:
                continue
            cells = [c for c in itertools.product(*(range(w) for w in shape))
                     if all(i is None or c[a] == i for a, i in enumerate(choice))]
            heavy = [float(basis.noisy[c]) for c in cells if basis.noisy[c] >= 60]
            assert math.isclose(sums[key], sum(heavy) - 1.5 * math.sqrt(len(heavy) * sd2), abs_tol=1e-9)
        assert heavy_cell_sums([basis], 6.0, 1.5, widest=59.0) == {}  # a threshold beyond the resolution: skipped


def test_heavy_cell_sums_at_least_are_the_full_sums_reaching_it_in_some_basis() -> None:
    """``at_least`` finds from the arrays the keys reaching it in some basis, each the mean over every basis."""
    from dprm.itemsets.private_basis_supports import Basis, heavy_cell_sums

    rng = np.random.default_rng(12)
    for _ in range(5):
        bases = [Basis((0, 2, 5), ((0, 1), (0,), (0, 1)), rng.integers(-30, 200, size=(3, 2, 3)), 10.0),
                 Basis((0, 5), ((0,), (0, 1, 2)), rng.integers(-30, 300, size=(2, 3)), 8.0)]
        full = heavy_cell_sums(bases, 6.0, 1.0)
        for bar in (-math.inf, 100.0, 400.0):
            some = heavy_cell_sums(bases, 6.0, 1.0, at_least=bar)
            reach = set()
            for basis in bases:
                alone = heavy_cell_sums([basis], 6.0, 1.0)
                reach |= {key for key, value in alone.items() if value >= bar}
            assert set(some) == reach and all(math.isclose(some[k], full[k]) for k in some)


def _prototypes(n: int, width: int, seed: int) -> np.ndarray:
    """``n`` rows near four prototype rows of ``width`` three-category columns (10 % of the cells redrawn)."""
    rng = np.random.default_rng(seed)
    prototypes = rng.integers(0, 3, size=(4, width))
    codes = prototypes[rng.choice(4, size=n, p=[0.45, 0.3, 0.15, 0.1])]
    return np.where(rng.random((n, width)) < 0.1, rng.integers(0, 3, size=(n, width)), codes)


def test_the_heavy_cells_only_add_itemsets_each_reported_with_the_estimate_that_listed_it() -> None:
    """Listed on the plain sums or by closure: the unbiased sum and its sd; by the heavy cells alone: their sum and sd."""
    import dprm.itemsets.private_basis_supports as basis_module
    from dprm.itemsets.private_basis_supports import CONFIDENCE_Z, HEAVY_CELLS, RESOLUTION, heavy_cell_estimates

    codes = _prototypes(400, 10, 1)  # vote-like: few rows, one basis of 11,664 cells, ±1.25 rows each
    columns = [f"c{j}" for j in range(codes.shape[1])]
    release = release_bases(codes, [3] * codes.shape[1], 1, 0.3, Accountant(1, SeededNoise(np.random.default_rng(1))),
                            columns)
    with_heavy = {s.items: s for s in release.frequent_itemsets()}
    saved, basis_module.HEAVY_CELLS = basis_module.HEAVY_CELLS, None
    try:
        without = {s.items: s for s in release.frequent_itemsets()}
    finally:
        basis_module.HEAVY_CELLS = saved
    assert without.keys() <= with_heavy.keys()
    estimates, bar = release.estimates(), 0.3 * release.n_hat
    widest = RESOLUTION * bar
    on_own = {key for key, (count, var) in estimates.items()
              if count >= bar + CONFIDENCE_Z * math.sqrt(var) and math.sqrt(var) <= widest}
    heavy = [key for key, s in with_heavy.items() if s.by_heavy_cells]
    assert heavy and not any(with_heavy[key].by_closure for key in heavy)
    heavy_estimates = heavy_cell_estimates(release.bases, HEAVY_CELLS, heavy, widest)
    for key, s in with_heavy.items():
        count, var = heavy_estimates[key] if s.by_heavy_cells else estimates[key]
        assert math.isclose(s.count, count) and math.isclose(s.sd, math.sqrt(var))
        assert s.by_heavy_cells == (not s.by_closure and key not in on_own)
        if not s.by_closure:  # the format: every itemset not listed by closure has support >= θ
            assert s.support >= 0.3, (sorted(key), s)


def test_heavy_cell_estimates_match_a_brute_force_and_bound_the_heavy_sums() -> None:
    from dprm.itemsets.private_basis_supports import Basis, heavy_cell_estimates, heavy_cell_sums

    rng = np.random.default_rng(14)
    bases = [Basis((0, 2, 5), ((0, 1), (0,), (0, 1)), rng.integers(-30, 200, size=(3, 2, 3)), 10.0),
             Basis((0, 5), ((0,), (0, 1, 2)), rng.integers(-30, 300, size=(2, 3)), 8.0)]
    lowers = heavy_cell_sums(bases, 6.0, 1.0)
    found = heavy_cell_estimates(bases, 6.0, lowers)
    assert found.keys() == lowers.keys()
    for key, (count, var) in found.items():
        parts = []
        for basis in bases:
            axes = dict(zip(basis.columns, range(len(basis.columns))))
            if not all(c in axes and v in basis.items[axes[c]] for c, v in key):
                continue
            cells = [c for c in itertools.product(*(range(w) for w in basis.noisy.shape))
                     if all(c[axes[col]] == basis.items[axes[col]].index(v) for col, v in key)]
            heavy = [float(basis.noisy[c]) for c in cells if basis.noisy[c] >= 6.0 * basis.scale]
            parts.append((sum(heavy), len(heavy) * discrete_laplace_variance(basis.scale)))
        assert math.isclose(count, np.mean([p[0] for p in parts]))
        assert math.isclose(var, sum(p[1] for p in parts) / len(parts) ** 2)
        sd_bound = np.mean([math.sqrt(p[1]) for p in parts])
        assert math.isclose(lowers[key], count - sd_bound, abs_tol=1e-9)  # the bound the listing rule uses


def test_auto_releases_on_no_rows_as_on_one_with_declared_domains() -> None:
    """No rows is a dataset like any other: both branches run and the ledger adds up to ε."""
    domains = {"a": ["x", "y"], "b": ["u", "v"]}
    choices = set()
    for n in (0, 1):
        for seed in (0, 1, 21):  # seed 21: the items' noise makes n̂ large enough for the bases
            frame = pd.DataFrame({"a": ["x"] * n, "b": ["u"] * n}, dtype=object)
            fit = fit_private_estimator(frame, 1.0, domains=domains, private_method="auto", min_support=0.3,
                                        random_state=seed)
            assert math.isclose(sum(e["epsilon"] for e in fit.privacy["ledger"]), 1.0)
            assert (fit.bases is None) == (fit.parameters["auto_choice"] == "chain")
            choices.add(fit.parameters["auto_choice"])
    assert choices == {"basis", "chain"}


def _scores(n: int, seed: int) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """A biopsy-like table: 9 scores of 10 categories, each ``1`` in most rows of one class, and the class."""
    rng = np.random.default_rng(seed)
    benign = rng.random(n) < 0.65
    weights = np.array([10, 8, 6, 5, 4, 3, 2, 2, 2, 6]) / 48  # low scores common, 10 the mark of a malignant one
    frame = pd.DataFrame({f"v{j}": np.where(benign & (rng.random(n) < 0.9), 1,
                                            rng.choice(np.arange(1, 11), n, p=weights)).astype(str)
                          for j in range(9)})
    frame["class"] = np.where(benign, "benign", "malignant")
    domains = {c: [str(v) for v in range(1, 11)] for c in frame if c != "class"} | {"class": ["benign", "malignant"]}
    return frame, domains


def test_basis_noise_is_that_of_an_item_summed_in_the_one_basis_the_items_would_build() -> None:
    frame, domains = _scores(700, 0)
    columns = list(frame)
    sizes = [len(domains[c]) for c in columns]
    codes = np.column_stack([frame[c].map({v: k for k, v in enumerate(domains[c])}).to_numpy() for c in columns])
    acc = Accountant(1, SeededNoise(np.random.default_rng(1)))
    selection = release_items(codes, sizes, item_share(), 0.3, acc, columns)
    items = [(j, v) for j in range(len(columns)) for v in selection.kept_codes(j)]
    counts = {(j, v): float(selection.counts[j][selection.kept[j][v]]) for j, v in items}
    basis = largest_basis(items, counts, 0.3 * selection.n_hat, selection.sizes)
    width = {j: sum(1 for j2, _ in basis if j2 == j) for j, _ in basis}
    widths = sorted(w + (w < selection.sizes[j]) for j, w in width.items())
    var = math.prod(widths) / widths[0] * discrete_laplace_variance(float(1 / (1 - item_share())))  # an item's sum
    predicted = basis_noise(selection, sizes, 1, 0.3, prediction="basis")
    assert math.isclose(predicted, math.sqrt(var) / (0.3 * selection.n_hat))
    assert basis_noise(selection, sizes, 1, 0.3, prediction="pairs") == pair_noise(selection, sizes, 1, 0.3)
    # the pairs' prediction reads every item kept with its margin (scores of noisy counts near 0 among them) and
    # predicts noise the one basis, over the items reaching θ·n̂ only, does not have
    assert _cells(basis, selection.sizes) < _cells(set(items), selection.sizes)
    assert predicted <= BASIS_MAX_NOISE < pair_noise(selection, sizes, 1, 0.3)
    high = release_items(codes, sizes, item_share(), 0.7, acc, columns)  # items kept, too few reach θ·n̂ to pair
    in_reach = {j for j, k in enumerate(high.kept) for v in range(len(k)) if high.counts[j][k[v]] >= 0.7 * high.n_hat}
    assert sum(len(k) > 0 for k in high.kept) >= 2 and len(in_reach) < 2
    assert basis_noise(high, sizes, 1, 0.7, prediction="basis") == math.inf  # no basis to read from: the chain


def test_auto_chooses_on_the_basis_it_would_release_and_keeps_the_pairs_prediction_as_an_option(monkeypatch) -> None:
    frame, domains = _scores(700, 2)
    truth = frequent_itemsets(frame, 0.3)
    fits = {}
    for prediction in ("basis", "pairs"):
        monkeypatch.setattr(private_basis, "AUTO_NOISE", prediction)
        fits[prediction] = fit_private_estimator(frame, 1, domains=domains, private_method="auto", min_support=0.3,
                                                 random_state=1)
        assert math.isclose(sum(e["epsilon"] for e in fits[prediction].privacy["ledger"]), 1.0)
    assert fits["basis"].parameters["auto_choice"] == "basis" and fits["pairs"].parameters["auto_choice"] == "chain"
    assert fits["basis"].parameters["pair_noise"] <= BASIS_MAX_NOISE < fits["pairs"].parameters["pair_noise"]
    listed = itemset_rates([s["items"] for s in fits["basis"].bases.named_itemsets(0.3)], truth)
    assert listed.tpr >= 0.8 and listed.fpr <= 0.1


def test_basis_noise_falls_back_to_the_pairs_prediction_where_the_basis_leaves_frequent_items_out() -> None:
    """20 columns of three equally frequent values, θ = 0.3: 40 and more items reach θ·n̂, far more than fit."""
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 3, size=(4000, 20))
    sizes, columns = [3] * 20, [f"c{j}" for j in range(20)]
    selection = release_items(codes, sizes, item_share(), 0.3, Accountant(1, SeededNoise(rng)), columns)
    items = [(j, v) for j in range(20) for v in selection.kept_codes(j)]
    counts = {(j, v): float(selection.counts[j][selection.kept[j][v]]) for j, v in items}
    frequent = [item for item in items if counts[item] >= 0.3 * selection.n_hat]
    basis = largest_basis(items, counts, 0.3 * selection.n_hat, selection.sizes)
    assert len(frequent) > len(basis)   # the one basis cannot hold them all
    assert basis_noise(selection, sizes, 1, 0.3, prediction="basis") == pair_noise(selection, sizes, 1, 0.3)
