"""Chain densities and reference-sample supports read only the columns a candidate assigns (session 57):
equal bit for bit to the loop over every tree and every column, on wide estimates of several seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dprm.itemsets.estimator import DensityEstimator
from dprm.itemsets.private import fit_private_estimator
from dprm.itemsets.reference_sample import ReferenceSample


def wide_frame(seed: int, rows: int = 400, columns: int = 40) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """Columns of 2 - 4 categories, each a noisy copy of an earlier one (so that trees split)."""
    rng = np.random.default_rng(seed)
    data, domains = {}, {}
    for j in range(columns):
        k = int(rng.integers(2, 5))
        values = rng.integers(0, k, rows)
        if j:
            parent = data[f"c{int(rng.integers(0, j)):02d}"]
            copy = rng.random(rows) < 0.7
            values = np.where(copy, np.array([int(v[1:]) for v in parent]) % k, values)
        data[f"c{j:02d}"] = np.array([f"v{v}" for v in values])
        domains[f"c{j:02d}"] = [f"v{v}" for v in range(k)]
    return pd.DataFrame(data), domains


def dense_chain_densities(estimator, codes: np.ndarray, method: str) -> np.ndarray:
    """The densities as computed before session 57: every tree of every chain over every row."""
    assigned = codes >= 0
    out = np.ones((len(codes), len(estimator.chains_)))
    for c, chain in enumerate(estimator.chains_):
        by_product = np.ones(len(codes), dtype=bool)
        if method == "exact-or-sample":
            for tree in chain.trees:
                tested = sorted(tree.split_columns())
                if tested:
                    by_product &= ~(assigned[:, tree.target] & ~assigned[:, tested].all(axis=1))
            sampled = np.flatnonzero(~by_product)
            if len(sampled):
                out[sampled, c] = brute_force_supports(estimator._reference_samples()[c], codes[sampled])
        for tree in chain.trees:
            rows = np.flatnonzero(assigned[:, tree.target] & by_product)
            if len(rows):
                out[rows, c] *= tree.target_proba(codes[rows])
    return out


def brute_force_supports(sample: ReferenceSample, codes: np.ndarray) -> np.ndarray:
    """Each code row's share of the sample's rows, counted from the bitsets item by item."""
    out = np.ones(len(codes))  # a row assigning nothing: every row of the sample
    for i, row in enumerate(codes):
        held = np.full(sample.bitsets.shape[1], np.iinfo(np.uint64).max, dtype=np.uint64)
        for j in np.flatnonzero(row >= 0):
            held &= sample.bitsets[sample.offsets[j] + row[j]]
            out[i] = int(np.bitwise_count(held).sum()) / sample.n_rows
    return out


def partial_rows(estimator, rng: np.random.Generator, n: int) -> np.ndarray:
    """Code rows assigning a few columns each (some none, some many, some of every column)."""
    sizes = np.array([d.size for d in estimator.variables_.values()])
    m = len(sizes)
    codes = np.full((n, m), -1, dtype=np.int64)
    for i in range(n):
        k = [0, 1, 2, 3, 5, 8, m][i % 7]
        at = rng.choice(m, size=k, replace=False)
        codes[i, at] = rng.integers(0, sizes[at])
    return codes


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("private", [False, True])
def test_chain_densities_equal_the_dense_loop(seed: int, private: bool) -> None:
    frame, domains = wide_frame(seed)
    if private:
        estimator = fit_private_estimator(frame, 1.0, domains=domains, random_state=seed, n_samples=5000).estimator
    else:
        estimator = DensityEstimator(n_chains=2, grace_period=50, split_confidence=0.01, n_samples=5000,
                                     random_state=seed).fit(frame)
    codes = partial_rows(estimator, np.random.default_rng(seed), 350)
    for method in ("exact-or-sample", "paths"):
        got = estimator.chain_densities(codes, method)
        assert np.array_equal(got, dense_chain_densities(estimator, codes, method)), method
    assert estimator.chain_densities(codes[:0]).shape == (0, len(estimator.chains_))
    # the rows hold both kinds: answered by a chain's product and by its sample
    chain, assigned = estimator.chains_[0], codes >= 0
    sampled = np.zeros(len(codes), dtype=bool)
    for tree in chain.trees:
        tested = sorted(tree.split_columns())
        if tested:
            sampled |= assigned[:, tree.target] & ~assigned[:, tested].all(axis=1)
    assert 0 < sampled.sum() < len(codes) - 100


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reference_sample_supports_count_the_assigned_columns_only(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sizes = list(rng.integers(1, 5, 30))
    rows = np.column_stack([rng.integers(0, s, 333) for s in sizes])
    sample = ReferenceSample(rows, sizes)
    codes = np.full((200, len(sizes)), -1, dtype=np.int64)
    for i in range(200):
        at = rng.choice(len(sizes), size=i % 6, replace=False)
        codes[i, at] = rng.integers(0, np.array(sizes)[at])
    codes[-1] = rows[0]  # a whole row
    expected = np.array([np.all((rows == row) | (row < 0), axis=1).mean() for row in codes])
    assert np.array_equal(sample.supports(codes), expected)
    assert sample.supports(codes[:0]).shape == (0,)
