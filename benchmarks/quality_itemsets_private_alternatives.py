"""Alternatives to the basis release measured and dropped (issue 30, seventh round of ``docs/itemsets.md``).

These are measurement prototypes, not releases: each reads the true rows and draws its noise
from a seeded ``numpy`` generator (the distribution of the mechanism's output, not a private
run). The truth is FP-growth on the same rows at ``--theta``; TPR / FPR as in
``quality_itemsets_private.py``.

``sparse``  the rows projected on the items released by ``release_items`` (10 % of ε) as one
            histogram over the whole compressed domain, discrete Laplace of scale
            ``1 / (0.9 ε)`` on every cell, cells kept at ``τ`` or above (Cormode, Procopiuc,
            Srivastava & Tran, ICDT 2012): the non-empty cells get their noise, the number of
            empty cells that pass is one binomial draw and their places uniform among the
            empty cells, their values ``τ`` plus a geometric excess (the exact distribution of
            thresholding every cell, without enumerating the domain). ``τ`` is set so that
            ``--false-cells`` empty cells pass in expectation. Supports: sums over the kept
            cells (``--rescale``: the kept cells scaled to ``n̂``), mined by Apriori.
``eb``      the basis release (``private_method="basis"``) with every basis's cells replaced
            by their posterior means under a discrete prior on the cell counts fitted by EM
            under the known discrete Laplace noise (empirical Bayes; post-processing).
``nnfit``   the basis release with every basis's cells replaced by a non-negative table of
            total ``n̂`` fitted to the basis, the items' one-way and the pairs' counts by
            entropic mirror descent with backtracking (the Private-PGM estimator on one
            basis's domain; post-processing).

Usage::

    python benchmarks/quality_itemsets_private_alternatives.py --methods sparse,eb,nnfit \\
        --datasets mushroom,nmes --epsilons 1,0.1 --seeds 0,1,2
"""

from __future__ import annotations

import argparse
import itertools
import math
import warnings
from fractions import Fraction

import numpy as np

from dprm.itemsets.domains import encode_frame, infer_domains
from dprm.itemsets.ground_truth import frequent_itemsets, itemset_rates
from dprm.itemsets.private import fit_private_estimator
from dprm.itemsets.private_basis import discrete_laplace_variance
from dprm.itemsets.private_items import ITEM_SHARE, release_items
from dprm.privacy import Accountant, SeededNoise

from quality_itemsets_private import load  # noqa: E402 - the benchmarks' own helpers (same folder)


def discrete_laplace(rng: np.random.Generator, scale: float, size: int) -> np.ndarray:
    a = math.exp(-1.0 / scale)
    return rng.geometric(1 - a, size) - rng.geometric(1 - a, size)


def sparse_histogram(cells: np.ndarray, domain: int, scale: float, tau: int, rng: np.random.Generator
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Kept cells (indices in the mixed-radix domain) and their noisy counts (module notes, ``sparse``)."""
    index, counts = np.unique(cells, return_counts=True)
    noisy = counts + discrete_laplace(rng, scale, len(index))
    keep = noisy >= tau
    a = math.exp(-1.0 / scale)
    passing = rng.binomial(domain - len(index), a**tau / (1 + a))  # P(Z >= tau) for each empty cell
    occupied, false = set(index.tolist()), set()
    while len(false) < passing:
        cell = int(rng.integers(domain))
        if cell not in occupied:
            false.add(cell)
    values = tau + rng.geometric(1 - a, passing) - 1  # Z | Z >= tau
    return (np.concatenate([index[keep], np.array(sorted(false), dtype=np.int64)]),
            np.concatenate([noisy[keep], values]).astype(np.float64))


def apriori(rows: np.ndarray, weights: np.ndarray, items: list[tuple[int, int]], threshold: float
            ) -> list[tuple[tuple[int, int], ...]]:
    """Itemsets (column, code) whose weighted count over ``rows`` reaches ``threshold``."""
    level = [((it,), rows[:, it[0]] == it[1]) for it in items]
    level = [(k, m) for k, m in level if weights[m].sum() >= threshold]
    found = [k for k, _ in level]
    while level:
        following = []
        for (a, ma), (b, mb) in itertools.combinations(level, 2):
            if a[:-1] == b[:-1] and a[-1][0] < b[-1][0]:
                mask = ma & mb
                if weights[mask].sum() >= threshold:
                    following.append((a + (b[-1],), mask))
        found += [k for k, _ in following]
        level = following
    return found


def run_sparse(data, domains, eps: float, seed: int, theta: float, false_cells: float, rescale: bool):
    variables = infer_domains(data, domains, None)
    codes = encode_frame(data, variables)
    columns = list(variables)
    sizes = [variables[c].size for c in columns]
    acc = Accountant(Fraction(eps), SeededNoise(np.random.default_rng(seed + 100)))
    selection = release_items(codes, sizes, Fraction(eps) * ITEM_SHARE, theta, acc, columns)
    compressed = selection.compress(codes)
    item_columns = [j for j in range(len(sizes)) if sizes[j] >= 2 and len(selection.kept[j])]
    radix = [selection.sizes[j] for j in item_columns]
    cells = np.zeros(len(codes), dtype=np.int64)
    for j, r in zip(item_columns, radix):
        cells = cells * r + compressed[:, j]
    scale = 1.0 / (eps * (1 - float(ITEM_SHARE)))
    a = math.exp(-1.0 / scale)
    domain = math.prod(radix)
    tau = max(1, math.ceil(math.log(false_cells * (1 + a) / domain) / math.log(a)))
    kept, weights = sparse_histogram(cells, domain, scale, tau, np.random.default_rng(seed))
    rows = np.zeros((len(kept), len(sizes)), dtype=np.int64)
    rest = kept.copy()
    for j, r in reversed(list(zip(item_columns, radix))):
        rows[:, j], rest = rest % r, rest // r
    if rescale and weights.sum() > 0:
        weights = weights * selection.n_hat / weights.sum()
    items = [(j, v) for j in item_columns for v in selection.kept_codes(j)]
    found = apriori(rows, weights, items, theta * selection.n_hat)
    named = [{columns[j]: variables[columns[j]].categories[int(selection.kept[j][v])] for j, v in k} for k in found]
    return named, f"tau {tau} kept mass {weights.sum() / selection.n_hat:.2f}"


def eb_means(noisy: np.ndarray, scale: float, iterations: int = 300) -> np.ndarray:
    """Posterior means of the cells under a discrete prior fitted by EM (module notes, ``eb``)."""
    values, multiplicity = np.unique(noisy.ravel(), return_counts=True)
    top = max(int(values.max() + 3 * scale), 2)
    grid = np.unique(np.concatenate([np.arange(min(top, 50) + 1), np.geomspace(1, top, 150).round()]))
    loglik = -np.abs(values[:, None] - grid[None, :]) / scale
    likelihood = np.exp(loglik - loglik.max(axis=1, keepdims=True))
    prior = np.full(len(grid), 1.0 / len(grid))
    for _ in range(iterations):
        posterior = likelihood * prior
        posterior /= posterior.sum(axis=1, keepdims=True)
        prior = (multiplicity[:, None] * posterior).sum(axis=0) / multiplicity.sum()
    posterior = likelihood * prior
    posterior /= posterior.sum(axis=1, keepdims=True)
    return (posterior @ grid)[np.searchsorted(values, noisy)]


def nonnegative_fit(basis, release, iterations: int = 100) -> np.ndarray:
    """A non-negative table of total ``n̂`` fitted to the basis, one-way and pair counts (``nnfit``)."""
    selection, shape = release.selection, basis.noisy.shape
    targets = [(np.ones(shape, dtype=bool), None, basis.noisy.astype(float), discrete_laplace_variance(basis.scale))]
    for axis, (j, its) in enumerate(zip(basis.columns, basis.items)):
        full = np.zeros(selection.sizes[j])
        np.add.at(full, selection.mapping[j], selection.counts[j])
        for position, v in enumerate(its):
            mask = np.zeros(shape, dtype=bool)
            mask[(slice(None),) * axis + (position,)] = True
            targets.append((mask, "sum", np.array(full[v]), discrete_laplace_variance(selection.scale)))
    for (p, q), count in release.pair_counts.items():
        if p[0] in basis.columns and q[0] in basis.columns:
            ap, aq = basis.columns.index(p[0]), basis.columns.index(q[0])
            if p[1] in basis.items[ap] and q[1] in basis.items[aq]:
                index = [slice(None)] * len(shape)
                index[ap], index[aq] = basis.items[ap].index(p[1]), basis.items[aq].index(q[1])
                mask = np.zeros(shape, dtype=bool)
                mask[tuple(index)] = True
                targets.append((mask, "sum", np.array(float(count)), discrete_laplace_variance(release.pair_scale)))

    def loss(table: np.ndarray, gradient: bool = True):
        total, grad = 0.0, np.zeros(shape) if gradient else None
        for mask, kind, y, var in targets:
            residual = (table[mask].sum() if kind else table) - y
            total += 0.5 * float((residual**2).sum()) / var
            if gradient:
                grad = grad + (mask * residual / var if kind else residual / var)
        return total, grad

    table = np.full(shape, release.n_hat / basis.noisy.size)
    value, grad = loss(table)
    step = 1.0 / max(1e-12, float(np.abs(grad).max()))
    for _ in range(iterations):
        while True:
            trial = table * np.exp(np.clip(-step * grad, -50, 50))
            trial *= release.n_hat / trial.sum()
            if loss(trial, False)[0] <= value - 0.5 * float((grad * (table - trial)).sum()) or step < 1e-15:
                break
            step /= 2
        table, (value, grad), step = trial, loss(trial), step * 2
    return table


def run_basis_variant(data, domains, eps: float, seed: int, theta: float, method: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fit = fit_private_estimator(data, eps, domains=domains, random_state=seed, private_method="basis",
                                    min_support=theta)
    release = fit.bases
    estimates: dict[frozenset, list[float]] = {}
    for basis in release.bases:
        table = (eb_means(basis.noisy, basis.scale) if method == "eb" else nonnegative_fit(basis, release))
        for axis in range(table.ndim):  # the axis's sum appended: index -1 = "column absent"
            table = np.concatenate([table, table.sum(axis=axis, keepdims=True)], axis=axis)
        options = [list(range(len(its))) + [table.shape[a] - 1] for a, its in enumerate(basis.items)]
        for index in itertools.product(*options):
            key = frozenset((basis.columns[a], basis.items[a][i]) for a, i in enumerate(index) if i < len(basis.items[a]))
            if key:
                estimates.setdefault(key, []).append(float(table[index]))
    selection = release.selection
    for j in range(len(selection.sizes)):
        for v in selection.kept_codes(j) if len(selection.counts[j]) >= 2 else ():
            estimates.setdefault(frozenset([(j, v)]), [float(selection.counts[j][selection.kept[j][v]])])
    found = [k for k, v in estimates.items() if np.mean(v) >= theta * release.n_hat]
    names = release.names
    return [{names[j][0]: names[j][1][int(selection.kept[j][v])] for j, v in k} for k in found], f"bases {len(release.bases)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="mushroom,nmes")
    parser.add_argument("--methods", default="sparse,eb,nnfit")
    parser.add_argument("--epsilons", default="1,0.1")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--theta", type=float, default=0.3)
    parser.add_argument("--false-cells", type=float, default=30.0, help="sparse: expected empty cells kept")
    parser.add_argument("--rescale", action="store_true", help="sparse: kept cells scaled to the noisy row count")
    args = parser.parse_args()
    print(f"{'dataset':>12} {'method':>7} {'eps':>5} {'seed':>4} {'TPR':>6} {'FPR':>7}  notes", flush=True)
    for name in args.datasets.split(","):
        data = load(name, 0)
        domains = {c: sorted(data[c].unique()) for c in data.columns}
        truth = frequent_itemsets(data, args.theta)
        for method in args.methods.split(","):
            for eps in (float(e) for e in args.epsilons.split(",")):
                for seed in (int(s) for s in args.seeds.split(",")):
                    if method == "sparse":
                        found, note = run_sparse(data, domains, eps, seed, args.theta, args.false_cells, args.rescale)
                    else:
                        found, note = run_basis_variant(data, domains, eps, seed, args.theta, method)
                    r = itemset_rates(found, truth)
                    print(f"{name:>12} {method:>7} {eps:5g} {seed:4d} {r.tpr:6.3f} {r.fpr:7.3f}  {note}", flush=True)


if __name__ == "__main__":
    main()
