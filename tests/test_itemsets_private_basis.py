"""dprm.itemsets.private_basis and private_method="basis": sensitivities, privacy, ledger, bases, supports' noise."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from dprm.errors import ParameterError
from dprm.itemsets.ground_truth import frequent_itemsets, itemset_rates
from dprm.itemsets import private_basis
from dprm.itemsets.private import fit_private_estimator
from dprm.itemsets.private_basis import ITEM_SHARE, ONE_ITEM_SHARE, basis_table, release_bases
from dprm.itemsets.private_basis_graph import (LARGE_BASIS_CELLS, MAX_BASIS_CELLS, _cells, grow_within,
                                               largest_basis, maximal_cliques, merge_bases)
from dprm.itemsets.private_basis_pairs import PAIR_SHARE
from dprm.itemsets.private_basis_supports import Basis, _basis_estimates, discrete_laplace_variance
from dprm.privacy import Accountant, DiscreteLaplaceHistogram, SeededNoise

SIZES = [3, 2, 3, 1]


def _codes(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.choice(3, p=[0.6, 0.3, 0.1], size=n)
    b = np.where(rng.random(n) < 0.85, (a == 0).astype(int), rng.integers(0, 2, size=n))
    c = np.where(rng.random(n) < 0.7, a, rng.integers(0, 3, size=n))
    return np.column_stack([a, b, c, np.zeros(n, dtype=int)])


def _neighbours(codes: np.ndarray) -> list[np.ndarray]:
    """Every table with one row removed, and with one row of every possible value added."""
    removed = [np.delete(codes, r, axis=0) for r in range(len(codes))]
    added = [np.vstack([codes, np.array([row])]) for row in itertools.product(*(range(s) for s in SIZES))]
    return removed + added


def _pair_tables(codes: np.ndarray) -> list[np.ndarray]:
    return [np.bincount(codes[:, a] * SIZES[c] + codes[:, c], minlength=SIZES[a] * SIZES[c])
            for a, c in itertools.combinations(range(3), 2)]


def test_each_pair_table_and_each_basis_table_changes_by_exactly_one_in_l1_on_neighbours() -> None:
    """The sensitivities of steps 2 and 3 of the module notes, on every neighbour of small tables."""
    bases = [([0, 1], [[0], [1]]), ([0, 1, 2], [[0, 1], [0, 1], [0]]), ([0, 2], [[0, 1, 2], [2]])]
    for seed in range(3):
        codes = _codes(25, seed)
        pairs = _pair_tables(codes)
        tables = [basis_table(codes, cols, its, SIZES) for cols, its in bases]
        assert all(t.sum() == len(codes) for t in tables)  # every row in exactly one cell
        for neighbour in _neighbours(codes):
            for h, h2 in zip(pairs, _pair_tables(neighbour)):
                assert np.abs(h - h2).sum() == 1
            for (cols, its), t in zip(bases, tables):
                assert np.abs(t - basis_table(neighbour, cols, its, SIZES)).sum() == 1


def test_the_basis_release_is_epsilon_dp_on_neighbouring_datasets() -> None:
    """k basis histograms at ε/k each: log P(output | D) − log P(output | D') <= ε, exactly (discrete Laplace)."""
    epsilon = Fraction(1, 2)
    codes = _codes(200, 0)
    bases = [([0, 1], [[0], [1]]), ([0, 2], [[0, 1], [0, 1]])]
    scale = DiscreteLaplaceHistogram(epsilon / len(bases)).scale
    noise = SeededNoise(np.random.default_rng(0))
    outputs = [noise.discrete_laplace(basis_table(codes, c, i, SIZES), scale) for c, i in bases]

    def log_density(data: np.ndarray) -> float:
        return -sum(float(np.abs(y - basis_table(data, c, i, SIZES)).sum())
                    for y, (c, i) in zip(outputs, bases)) / scale

    ratios = [log_density(codes) - log_density(n) for n in _neighbours(codes)[::9]]
    assert max(abs(r) for r in ratios) <= float(epsilon) + 1e-12
    assert max(abs(r) for r in ratios) > 0.9 * float(epsilon)  # the bound is reached: the noise is not too large


def test_the_pair_release_is_epsilon_dp_on_neighbouring_datasets() -> None:
    epsilon = Fraction(1, 3)
    codes = _codes(150, 1)
    scale = DiscreteLaplaceHistogram(epsilon / 3).scale  # three pairs of columns
    noise = SeededNoise(np.random.default_rng(1))
    outputs = [noise.discrete_laplace(h, scale) for h in _pair_tables(codes)]

    def log_density(data: np.ndarray) -> float:
        return -sum(float(np.abs(y - h).sum()) for y, h in zip(outputs, _pair_tables(data))) / scale

    ratios = [log_density(codes) - log_density(n) for n in _neighbours(codes)[::7]]
    assert max(abs(r) for r in ratios) <= float(epsilon) + 1e-12
    assert max(abs(r) for r in ratios) > 0.9 * float(epsilon)


def _wide(n: int, seed: int, width: int = 14) -> np.ndarray:
    """``width`` binary-ish columns of three categories in two correlated blocks (too many cells for one basis)."""
    rng = np.random.default_rng(seed)
    blocks = []
    for _ in range(2):
        z = rng.random(n) < 0.6
        for _ in range(width // 2):
            keep = rng.random(n) < 0.9
            blocks.append(np.where(keep, np.where(z, 0, 1), rng.integers(0, 3, size=n)))
    return np.column_stack(blocks)


def test_the_ledger_lists_items_pairs_and_bases_and_adds_up_to_epsilon_exactly() -> None:
    codes = _wide(3000, 0)
    columns = [f"c{j}" for j in range(codes.shape[1])]
    acc = Accountant(Fraction(3, 2), SeededNoise(np.random.default_rng(0)))
    release = release_bases(codes, [3] * codes.shape[1], Fraction(3, 2), 0.3, acc, columns, rule="pairs")
    assert acc.spent() == Fraction(3, 2)
    steps = [e.step for e in acc.ledger]
    kinds = [s.partition(":")[0] for s in steps]
    assert kinds == sorted(kinds, key=["items", "pairs", "bases"].index)  # every stage charged before the next
    spent = {k: sum((e.epsilon for e in acc.ledger if e.step.startswith(k)), Fraction(0))
             for k in ("items", "pairs", "bases")}
    assert spent == {"items": Fraction(3, 2) * ITEM_SHARE, "pairs": Fraction(3, 2) * PAIR_SHARE,
                     "bases": Fraction(3, 2) * (1 - ITEM_SHARE - PAIR_SHARE)}
    assert kinds.count("pairs") == math.comb(codes.shape[1], 2) and kinds.count("bases") == len(release.bases) >= 2
    assert all(b.noisy.size <= MAX_BASIS_CELLS for b in release.bases)
    assert release.bases[0].scale == pytest.approx(len(release.bases) / float(spent["bases"]))


def test_items_that_fit_in_one_basis_get_it_without_pairs() -> None:
    codes = _codes(4000, 2)
    acc = Accountant(1.0, SeededNoise(np.random.default_rng(3)))
    release = release_bases(codes, SIZES, 1.0, 0.2, acc, ["a", "b", "c", "d"])
    assert [e.step.partition(":")[0] for e in acc.ledger].count("pairs") == 0 and release.pair_scale is None
    assert len(release.bases) == 1 and release.bases[0].columns == (0, 1, 2)
    assert acc.spent() == 1 and acc.ledger[-1].epsilon == 1 - ONE_ITEM_SHARE
    assert release.constant_items == [(3, 0)]
    assert abs(release.n_hat - 4000) < 20


def test_an_accountant_that_cannot_afford_epsilon_is_refused_before_anything_is_spent() -> None:
    frame = pd.DataFrame({"a": ["x", "y"] * 50})
    acc = Accountant(0.5, SeededNoise(np.random.default_rng(0)))
    with pytest.raises(ParameterError, match="does not cover"):
        fit_private_estimator(frame, 1.0, domains={"a": ["x", "y"]}, accountant=acc, private_method="basis",
                              min_support=0.3)
    assert acc.spent() == 0 and not acc.ledger
    with pytest.raises(ParameterError, match="needs min_support"):
        fit_private_estimator(frame, 1.0, domains={"a": ["x", "y"]}, private_method="basis")


def test_maximal_cliques_match_brute_force_on_random_graphs() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(1, 9))
        adjacency: list[set[int]] = [set() for _ in range(n)]
        for u, v in itertools.combinations(range(n), 2):
            if rng.random() < 0.5:
                adjacency[u].add(v)
                adjacency[v].add(u)
        cliques = [frozenset(s) for r in range(1, n + 1) for s in itertools.combinations(range(n), r)
                   if all(v in adjacency[u] for u, v in itertools.combinations(s, 2))]
        maximal = {c for c in cliques if not any(c < o for o in cliques)}
        assert set(maximal_cliques(n, adjacency)) == maximal


def test_merged_bases_hold_every_clique_within_the_cell_limit() -> None:
    rng = np.random.default_rng(1)
    sizes = [3, 2, 4, 3, 2, 3]
    for _ in range(20):
        cliques = []
        for _ in range(int(rng.integers(1, 8))):
            cols = rng.choice(len(sizes), size=int(rng.integers(1, 4)), replace=False)
            cliques.append({(int(j), int(rng.integers(0, sizes[j] - 1))) for j in cols})
        merged = merge_bases(cliques, sizes, max_cells=24)
        assert all(any(c <= b for b in merged) for c in cliques)
        assert all(_cells(b, sizes) <= 24 or any(b == c for c in cliques) for b in merged)
        assert len(merged) <= len(cliques)


def test_supports_are_cell_sums_with_their_stated_variance_combined_over_bases() -> None:
    table = np.arange(12).reshape(3, 4)  # columns 0 (items 0, 1 + rest) and 1 (items 0, 1, 2 + rest)
    one = Basis((0, 1), ((0, 1), (0, 1, 2)), table, 2.0)
    est = _basis_estimates([one])
    var = discrete_laplace_variance(2.0)
    assert est[frozenset({(0, 1)})] == (float(table[1].sum()), 4 * var)
    assert est[frozenset({(1, 2)})] == (float(table[:, 2].sum()), 3 * var)
    assert est[frozenset({(0, 0), (1, 1)})] == (1.0, var)
    assert frozenset({(0, 2)}) not in est  # "rest" is not an item
    other = Basis((1,), ((2,),), np.array([5, 7]), 1.0)
    both = _basis_estimates([one, other])
    v1, v2 = 3 * var, discrete_laplace_variance(1.0)
    count, variance = both[frozenset({(1, 2)})]
    assert count == pytest.approx((table[:, 2].sum() / v1 + 5 / v2) / (1 / v1 + 1 / v2))
    assert variance == pytest.approx(1 / (1 / v1 + 1 / v2))


def test_the_stated_noise_matches_the_errors_over_many_releases() -> None:
    """(estimate − truth) / sd over 60 seeded releases: mean near 0, spread near 1 (the interval is honest)."""
    codes = _codes(3000, 4)
    truth = float(np.sum((codes[:, 0] == 0) & (codes[:, 2] == 0)))
    z = []
    for seed in range(60):
        acc = Accountant(0.5, SeededNoise(np.random.default_rng(seed)))
        release = release_bases(codes, SIZES, 0.5, 0.2, acc, ["a", "b", "c", "d"])
        count, var = release.estimates()[frozenset({(0, 0), (2, 0)})]
        z.append((count - truth) / math.sqrt(var))
    assert abs(np.mean(z)) < 0.5 and 0.7 < np.std(z) < 1.3


def _planted(n: int, seed: int) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """Ten columns of four categories; two blocks of five columns share a value in 55 % / 45 % of the rows."""
    rng = np.random.default_rng(seed)
    columns = {}
    for block in range(2):
        on = rng.random(n) < (0.55 if block == 0 else 0.45)
        for k in range(5):
            noise = rng.integers(0, 4, size=n)
            columns[f"b{block}c{k}"] = np.where(on & (rng.random(n) < 0.95), 0, np.where(noise == 0, 1, noise))
    domains = {c: ["v0", "v1", "v2", "v3"] for c in columns}
    return pd.DataFrame({c: np.asarray(domains[c], dtype=object)[v] for c, v in columns.items()}), domains


def test_a_generated_table_with_planted_itemsets_is_found_at_epsilon_one() -> None:
    """Measured when written: TPR 0.954 / 0.985 / 0.954, FPR 0.000 / 0.015 / 0.015 (θ = 0.3, seeds 0-2; 65 true)."""
    frame, domains = _planted(4000, 0)
    truth = frequent_itemsets(frame, 0.3)
    for seed in range(3):
        fit = fit_private_estimator(frame, 1.0, domains=domains, private_method="basis", min_support=0.3,
                                    random_state=seed)
        listed = fit.bases.named_itemsets()
        rates = itemset_rates([s["items"] for s in listed], truth)
        assert rates.tpr >= 0.9 and rates.fpr <= 0.1
        assert all(s["interval"][0] <= s["support"] <= s["interval"][1] and s["support_sd"] > 0 for s in listed)


def test_the_fit_reports_bases_noise_and_a_ledger_adding_up_and_is_not_private_when_seeded() -> None:
    frame, domains = _planted(2000, 1)
    fit = fit_private_estimator(frame, 0.7, domains=domains, private_method="basis", min_support=0.3,
                                random_state=0)
    assert fit.estimator is None and fit.bases is not None
    assert math.isclose(sum(e["epsilon"] for e in fit.privacy["ledger"]), 0.7)
    assert fit.privacy["private"] is False and fit.privacy["reasons"][0].startswith("seeded noise")
    assert fit.parameters["private_method"] == "basis" and fit.parameters["bases"]
    assert fit.parameters["noise"]["items"] > 0 and fit.parameters["noise"]["tables"] > 0
    unseeded = fit_private_estimator(frame, 0.7, domains=domains, private_method="basis", min_support=0.3)
    assert unseeded.privacy["private"] is True
    assert unseeded.privacy["guarantee"].startswith("pure-dp")


def test_supports_the_release_cannot_resolve_are_not_listed_on_their_own(monkeypatch) -> None:
    """300 rows at ε = 0.1: every count's sd is above 0.2·θ·n̂, so nothing is listed (without the limit, noise is)."""
    monkeypatch.setattr(private_basis, "BASES", "pairs")  # the seventh round's release, whose bases hold noise here
    frame, domains = _planted(300, 2)
    fit = fit_private_estimator(frame, 0.1, domains=domains, private_method="basis", min_support=0.3, random_state=0)
    theta_n = 0.3 * fit.bases.n_hat
    assert all(math.sqrt(v) > 0.2 * theta_n for _, v in fit.bases.estimates().values())
    assert fit.bases.named_itemsets() == []
    assert len(fit.bases.named_itemsets(resolution=None)) > 0


def test_without_a_joined_pair_no_basis_is_released_and_single_items_come_from_their_counts() -> None:
    """Fourteen independent columns: every item at 0.45, every pair near 0.2 < θ = 0.3, so no two items are joined."""
    rng = np.random.default_rng(5)
    codes = rng.choice(3, p=[0.45, 0.45, 0.1], size=(5000, 14))
    acc = Accountant(5.0, SeededNoise(np.random.default_rng(6)))
    release = release_bases(codes, [3] * 14, 5.0, 0.3, acc, [f"c{j}" for j in range(14)], rule="pairs")
    assert release.bases == [] and release.n_edges == 0
    assert acc.spent() == 5 and acc.ledger[-1].step == "bases: unspent (no basis of two items or more)"
    listed = {s.items for s in release.frequent_itemsets()}
    assert listed == {frozenset({(j, v)}) for j in range(14) for v in (0, 1)}


def test_the_one_basis_rule_releases_one_basis_of_the_likely_frequent_items_and_no_pairs() -> None:
    """``rule="one"``: items (ONE_ITEM_SHARE), then one basis over the items whose noisy count reaches θ·n̂,
    by decreasing count within LARGE_BASIS_CELLS, with the rest of ε (scale 1 / ε_bases: one cell per row)."""
    codes = _wide(3000, 0)
    columns = [f"c{j}" for j in range(codes.shape[1])]
    acc = Accountant(Fraction(3, 2), SeededNoise(np.random.default_rng(0)))
    release = release_bases(codes, [3] * codes.shape[1], Fraction(3, 2), 0.3, acc, columns, rule="one")
    assert acc.spent() == Fraction(3, 2) and release.pair_scale is None and not release.pair_counts
    assert [e.step.partition(":")[0] for e in acc.ledger] == ["items"] * codes.shape[1] + ["bases"]
    assert acc.ledger[-1].epsilon == Fraction(3, 2) * (1 - ONE_ITEM_SHARE)
    assert sum((e.epsilon for e in acc.ledger[:-1]), Fraction(0)) == Fraction(3, 2) * ONE_ITEM_SHARE
    (basis,) = release.bases
    assert basis.scale == pytest.approx(1 / float(Fraction(3, 2) * (1 - ONE_ITEM_SHARE)))
    selection = release.selection
    counts = {(j, v): float(selection.counts[j][selection.kept[j][v]]) for j in range(codes.shape[1])
              for v in selection.kept_codes(j)}
    chosen = {(j, v) for j, its in zip(basis.columns, basis.items) for v in its}
    assert chosen == largest_basis(list(counts), counts, 0.3 * selection.n_hat, selection.sizes)
    assert basis.noisy.size == _cells(chosen, selection.sizes) <= LARGE_BASIS_CELLS
    assert all(counts[it] >= 0.3 * selection.n_hat for it in chosen)
    with pytest.raises(ParameterError):
        release_bases(codes, [3] * codes.shape[1], 1, 0.3, acc, columns, rule="cliques")


def test_largest_basis_keeps_the_bar_and_the_cell_limit_and_leaves_out_only_what_does_not_fit() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        sizes = list(rng.integers(2, 5, size=8))
        items = [(j, v) for j in range(8) for v in range(int(rng.integers(1, sizes[j])))]
        counts = {it: float(rng.integers(0, 100)) for it in items}
        limit = int(rng.choice([8, 32, 128]))
        basis = largest_basis(items, counts, 40.0, sizes, max_cells=limit)
        assert _cells(basis, sizes) <= limit and all(counts[it] >= 40 for it in basis)
        for it in items:  # an item reaching the bar is left out only when it no longer fits
            if counts[it] >= 40 and it not in basis:
                assert _cells(basis | {it}, sizes) > limit


@pytest.mark.parametrize("seed", range(3))
def test_a_basis_grown_item_by_item_is_the_one_recounted_for_every_item(seed) -> None:
    """grow_within keeps the cells as a product updated per item: the same set, built in the same order, as
    recounting the basis with each item (the loop it replaced), also with repeated items."""
    rng = np.random.default_rng(seed)
    for _ in range(50):
        sizes = [int(s) for s in rng.integers(1, 7, size=6)]
        items = [(int(j), int(rng.integers(0, sizes[j]))) for j in rng.integers(0, 6, size=int(rng.integers(0, 30)))]
        limit = int(rng.choice([1, 4, 30, 500]))
        expected: set = set()
        for item in items:
            if _cells(expected | {item}, sizes) <= limit:
                expected.add(item)
        got = grow_within(items, sizes, limit)
        assert got == expected and list(got) == list(expected)


@pytest.mark.parametrize("seed", range(3))
def test_frechet_joined_finds_the_pairs_of_the_pairs_loop_and_builds_the_same_set(seed) -> None:
    """The pairs passing the Fréchet bound, found by a search over the sorted shares: the set of the loop over
    every pair, in the same iteration order (the bases' graph reads it in that order)."""
    from dprm.itemsets.private_basis_pairs import frechet_joined
    from dprm.itemsets.private_items import release_items

    rng = np.random.default_rng(seed)
    n = 300
    latent = rng.integers(0, 2, size=n)
    sizes = [2, 3, 5, 40, 2]
    codes = np.column_stack([np.where(rng.random(n) < 0.8, latent % s, rng.integers(0, s, size=n)) for s in sizes])
    acc = Accountant(5.0, SeededNoise(np.random.default_rng(seed)))
    selection = release_items(codes, sizes, 5.0, 0.05, acc, [f"c{j}" for j in range(len(sizes))])
    items = [(j, v) for j in range(len(sizes)) for v in selection.kept_codes(j)]
    for theta, z in ((0.05, 0.0), (0.2, 1.0), (0.3, 3.0), (-1.5, 0.0)):
        share = {(j, v): float(selection.counts[j][selection.kept[j][v]]) / selection.n_hat for j, v in items}
        margin = z * math.sqrt(2.0 * discrete_laplace_variance(selection.scale)) / selection.n_hat
        expected = {(p, q) for p, q in itertools.combinations(sorted(items), 2)
                    if p[0] != q[0] and share[p] + share[q] - 1.0 >= theta + margin}
        got = frechet_joined(items, selection, theta, z)
        assert got == expected and list(got) == list(expected)
    assert len(frechet_joined(items, selection, -1.5, 0.0)) > 0


def test_the_release_s_public_names_are_importable_from_private_basis_as_from_their_homes() -> None:
    """The pairs' route, the graph and the listing live in modules of their own; users import them from here."""
    from dprm.itemsets import private_basis_graph, private_basis_pairs, private_basis_supports

    homes = {name: module for module in (private_basis_graph, private_basis_pairs, private_basis_supports)
             for name in getattr(module, "__all__", dir(module)) if not name.startswith("_")}
    moved = [name for name in private_basis.__all__ if name in homes]
    assert {"BasisRelease", "heavy_cell_sums", "pair_noise", "frechet_joined", "discrete_laplace_variance"} <= set(moved)
    assert all(getattr(private_basis, name) is getattr(homes[name], name) for name in moved)
    assert all(hasattr(private_basis, name) for name in private_basis.__all__)
