"""dprm.itemsets.private_items and private_method="frequent-items": sensitivity, privacy, ledger, compression."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from dprm.errors import ParameterError
from dprm.itemsets.ground_truth import frequent_itemsets, itemset_rates
from dprm.itemsets.ison import run_ison
from dprm.itemsets.private import fit_private_estimator
from dprm.itemsets.private_items import ITEM_SHARE, release_items
from dprm.privacy import Accountant, DiscreteLaplaceHistogram, SeededNoise

SIZES = [4, 2, 3, 1]


def _codes(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.choice(4, p=[0.55, 0.3, 0.1, 0.05], size=n)
    b = np.where(rng.random(n) < 0.8, (a == 0).astype(int), rng.integers(0, 2, size=n))
    c = rng.choice(3, p=[0.5, 0.45, 0.05], size=n)
    return np.column_stack([a, b, c, np.zeros(n, dtype=int)])


def _histograms(codes: np.ndarray) -> list[np.ndarray]:
    return [np.bincount(codes[:, j], minlength=size) for j, size in enumerate(SIZES) if size >= 2]


def test_each_histogram_changes_by_one_in_l1_when_a_row_is_removed_or_added() -> None:
    """The sensitivity of the module notes, on every neighbour (one row removed / one added) of small tables."""
    for seed in range(3):
        codes = _codes(30, seed)
        base = _histograms(codes)
        neighbours = [np.delete(codes, r, axis=0) for r in range(len(codes))]
        neighbours += [np.vstack([codes, np.array([[a, b, c, 0]])]) for a in range(4) for b in range(2) for c in range(3)]
        for neighbour in neighbours:
            for h, h2 in zip(base, _histograms(neighbour)):
                assert np.abs(h - h2).sum() == 1


def test_the_release_is_epsilon_dp_on_neighbouring_datasets() -> None:
    """For any output, log P(output | D) − log P(output | D') <= ε_items (discrete Laplace densities, exact)."""
    epsilon = Fraction(1, 2)
    codes = _codes(200, 0)
    acc = Accountant(epsilon, SeededNoise(np.random.default_rng(0)))
    releasing = sum(1 for s in SIZES if s >= 2)
    scale = DiscreteLaplaceHistogram(epsilon / releasing).scale
    outputs = [acc.noise.discrete_laplace(h, scale) for h in _histograms(codes)]

    def log_density(histograms: list[np.ndarray]) -> float:
        return -sum(float(np.abs(y - h).sum()) for y, h in zip(outputs, histograms)) / scale

    for r in range(0, 200, 7):
        ratio = log_density(_histograms(codes)) - log_density(_histograms(np.delete(codes, r, axis=0)))
        assert abs(ratio) <= float(epsilon) + 1e-12
        assert abs(ratio) > 0  # the bound is tight enough to be tested: the outputs do depend on the row


def test_release_items_charges_its_budget_once_per_column_and_keeps_what_can_be_frequent() -> None:
    codes = _codes(20_000, 1)
    acc = Accountant(100.0, SeededNoise(np.random.default_rng(2)))
    chosen = release_items(codes, SIZES, 100.0, 0.2, acc, ["a", "b", "c", "d"])
    assert acc.spent() == 100
    assert [e.step for e in acc.ledger] == ["items: a", "items: b", "items: c"]  # d has one category: no release
    assert [k.tolist() for k in chosen.kept] == [[0, 1], [0, 1], [0, 1], [0]]
    assert chosen.sizes == [3, 2, 3, 1]
    assert chosen.mapping[0].tolist() == [0, 1, 2, 2] and chosen.mapping[2].tolist() == [0, 1, 2]
    share = chosen.shares[0][2:]
    assert math.isclose(share.sum(), 1.0) and share[0] > share[1]  # a=2 (10 %) holds more of "other" than a=3 (5 %)
    assert abs(chosen.n_hat - 20_000) < 10
    with pytest.raises(ParameterError, match="min_support"):
        release_items(codes, SIZES, 1.0, 0.0, acc, ["a", "b", "c", "d"])


def test_expand_keeps_each_configurations_distribution_and_spreads_other_by_its_shares() -> None:
    codes = _codes(20_000, 3)
    acc = Accountant(100.0, SeededNoise(np.random.default_rng(4)))
    chosen = release_items(codes, SIZES, 100.0, 0.2, acc, ["a", "b", "c", "d"])
    counts = np.array([[60.0, 30.0, 10.0], [20.0, 20.0, 60.0], [50.0, 0.0, 50.0]])  # target a (3), parent c (3)
    tree = chosen.expand(0, [2], counts)
    query = np.full((3, 4), -1)
    query[:, 2] = [0, 1, 2]
    proba = tree.predict_proba(query)
    w = chosen.shares[0]
    for config in range(3):
        expected = np.concatenate([counts[config, :2], counts[config, 2] * w[2:]]) / counts[config].sum()
        np.testing.assert_allclose(proba[config], expected)
    assert math.isclose(tree.counts[0].sum(), counts.sum())  # the root's total: the table's


def _frame(n: int, seed: int) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    codes = _codes(n, seed)
    names = {"a": ["w", "x", "y", "z"], "b": ["no", "yes"], "c": ["p", "q", "r"], "d": ["k"]}
    frame = pd.DataFrame({c: np.asarray(v, dtype=object)[codes[:, j]] for j, (c, v) in enumerate(names.items())})
    return frame, names


def test_frequent_items_fit_keeps_every_declared_category_and_its_ledger_adds_up() -> None:
    frame, domains = _frame(5000, 5)
    fit = fit_private_estimator(frame, 1.0, domains=domains, min_support=0.2, private_method="frequent-items",
                                random_state=0)
    assert fit.parameters["private_method"] == "frequent-items" and fit.parameters["max_parents"] == 3
    steps = [e["step"] for e in fit.privacy["ledger"]]
    assert steps[:3] == ["items: a", "items: b", "items: c"]
    assert sum(Fraction(e["epsilon"]).limit_denominator(10**9) for e in fit.privacy["ledger"][:3]) == ITEM_SHARE
    assert math.isclose(sum(e["epsilon"] for e in fit.privacy["ledger"]), 1.0)
    assert fit.estimator.domains_ == {c: tuple(v) for c, v in domains.items()}
    assert 0 < fit.estimator.density({"a": "z"}) < 0.2  # merged into "other", still a possible category
    assert fit.parameters["noise"]["items"] > 0 and fit.parameters["noise"]["tables"] > 0
    assert fit.parameters["items"]["a"] == ["w", "x"]


def test_methods_resolve_and_refuse_what_they_cannot_do() -> None:
    frame, domains = _frame(500, 6)
    chain = fit_private_estimator(frame, 1.0, domains=domains, min_support=0.3, random_state=0)  # the default
    assert chain.parameters["private_method"] == "chain" and chain.parameters["max_parents"] == 2
    assert not any(e["step"].startswith("items") for e in chain.privacy["ledger"])
    with pytest.raises(ParameterError, match="needs min_support"):
        fit_private_estimator(frame, 1.0, domains=domains, private_method="frequent-items")
    with pytest.raises(ParameterError, match="needs min_support"):
        fit_private_estimator(frame, 1.0, domains=domains, min_support=0.3, private_method="frequent-items",
                              structure="dp-trees")
    with pytest.raises(ParameterError, match="min_support"):
        fit_private_estimator(frame, 1.0, domains=domains, min_support=1.5)
    with pytest.raises(ParameterError, match="private_method"):
        fit_private_estimator(frame, 1.0, domains=domains, private_method="auto")


def test_frequent_items_finds_more_itemsets_of_a_markov_table_than_the_chain() -> None:
    """Twelve columns of twelve categories, two frequent each, each following the one before; ε = 0.5, seeds 0-2.

    Measured when written: mean TPR 0.34 (frequent-items) against 0.21 (chain) at θ = 0.2.
    """
    rng = np.random.default_rng(7)
    n = 4000
    previous = rng.integers(0, 2, size=n)
    columns = {}
    for j in range(12):
        value = np.where(rng.random(n) < 0.9, previous, 1 - previous)
        previous = value
        columns[f"v{j}"] = np.where(rng.random(n) < 0.9, value, rng.integers(2, 12, size=n)).astype(str)
    frame = pd.DataFrame(columns)
    domains = {c: [str(k) for k in range(12)] for c in frame}
    truth = frequent_itemsets(frame, 0.2)
    rates = {}
    for method in ("frequent-items", "chain"):
        found = []
        for seed in range(3):
            fit = fit_private_estimator(frame, 0.5, domains=domains, min_support=0.2, private_method=method,
                                        random_state=seed)
            found.append(itemset_rates(run_ison(fit.estimator, 0.2).itemsets, truth).tpr)
        rates[method] = float(np.mean(found))
    assert rates["frequent-items"] > rates["chain"] + 0.05, rates


def test_no_item_can_reach_theta_leaves_the_rest_of_the_budget_unspent_and_listed() -> None:
    """θ = 0.9 on uniform columns: every column merged whole, no table released; the ledger still adds up to ε."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.choice(["x", "y", "z"], size=3000), "b": rng.choice(["u", "v"], size=3000)})
    fit = fit_private_estimator(frame, 1.0, domains={"a": ["x", "y", "z"], "b": ["u", "v"]}, min_support=0.9,
                                private_method="frequent-items", random_state=0)
    ledger = fit.privacy["ledger"]
    assert [e["step"] for e in ledger] == ["items: a", "items: b", "unspent (no column left to release)"]
    assert math.isclose(sum(e["epsilon"] for e in ledger), 1.0)
    assert fit.parameters["items"] == {"a": [], "b": []} and fit.parameters["noise"]["tables"] is None
    assert math.isclose(sum(fit.estimator.density({"a": v}) for v in "xyz"), 1.0)
    assert run_ison(fit.estimator, 0.9).itemsets == []
