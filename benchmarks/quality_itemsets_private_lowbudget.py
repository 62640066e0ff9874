"""Low-budget variants of the basis release measured and dropped (issue 30, eighth round of ``docs/itemsets.md``).

Each variant is run with seeded noise (reproducible; the distribution of the mechanism's
output, not a private run) and scored against FP-growth on the same rows at ``--theta``,
TPR / FPR as in ``quality_itemsets_private.py``; a summary line per table and ε gives the
TPR mean ± its standard error (range), the mean (max) FPR and how many seeds meet issue
30's bar (TPR ≥ 0.8 and FPR ≤ 0.1 at ε ≥ 1; TPR ≥ 0.6 and FPR ≤ 0.2 below).

``one-basis``   no pairs: the items (``--item-share`` of ε, ``release_items``), the number of
                rows as one count (``--rows-share``; sensitivity 1: a row added or removed
                changes it by 1), then **one** basis over the kept items whose noisy count
                reaches ``θ·n̂`` (``n̂`` the noisy count), taken by decreasing noisy count while
                the basis has at most ``--cells`` cells, released with the rest of ε (one cell
                per row: sensitivity 1). Listing as ``BasisRelease.named_itemsets`` (margin,
                resolution limit, heavy cells, closure), ``n̂`` the inverse-variance mean of every
                release's total. The ledger adds up to ε (checked on every run).
``oracle``      the same basis built from the true rows (not a release, a ceiling): the truly
                frequent items by decreasing true count, ``n̂`` the true number of rows; only
                the basis's cells are noisy (``ε · (1 − --item-share − --rows-share)``).
``thresholded`` ``private_method="auto"`` with a third listing rule (post-processing): per
                basis, the sum of its cells of at least ``--tau`` noise scales less the
                expected contribution of empty cells (``c·E[Z·1{Z ≥ τ}]`` over the ``c`` cells
                summed, ``Z`` the discrete Laplace noise), minus one sd.

Usage::

    python benchmarks/quality_itemsets_private_lowbudget.py --methods one-basis,oracle \\
        --datasets mushroom,nmes,rwas,ibm,tic-tac-toe,vote --epsilons 0.1 --seeds 0,1,2,3,4,5,6,7,8,9,10,11
"""

from __future__ import annotations

import argparse
import itertools
import math
import warnings
from fractions import Fraction

import numpy as np

from dprm.itemsets import private_basis as pb
from dprm.itemsets import private_basis_supports
from dprm.itemsets.domains import encode_frame, infer_domains
from dprm.itemsets.ground_truth import frequent_itemsets, itemset_rates
from dprm.itemsets.private import fit_private_estimator
from dprm.itemsets.private_basis_graph import _cells
from dprm.itemsets.private_items import release_items
from dprm.privacy import Accountant, DiscreteLaplaceHistogram, SeededNoise

from quality_itemsets_private import load  # noqa: E402 - the benchmarks' own helpers (same folder)


def one_basis(data, domains, eps: Fraction, seed: int, theta: float, args, oracle: bool) -> pb.BasisRelease:
    """The ``one-basis`` (or ``oracle``) release of the module notes."""
    variables = infer_domains(data, domains)
    codes = encode_frame(data, variables)
    columns = list(variables)
    sizes = [variables[c].size for c in columns]
    acc = Accountant(eps, SeededNoise(np.random.default_rng(seed)))
    selection = release_items(codes, sizes, eps * args.item_share, theta, acc, columns)
    totals = [(float(selection.counts[j].sum()), s, selection.scale) for j, s in enumerate(sizes) if s >= 2]
    if args.rows_share:
        counter = DiscreteLaplaceHistogram(eps * args.rows_share)
        rows = float(counter.release(acc, "rows", np.array([len(codes)]))[0])  # sensitivity 1
        totals.append((rows, 1, float(counter.scale)))
    n_first = pb._combined_total(totals)
    items = [(j, v) for j, s in enumerate(sizes) if s >= 2 for v in selection.kept_codes(j)]
    true = {(j, v): int(np.sum(codes[:, j] == selection.kept[j][v])) for j, v in items}
    noisy = {(j, v): float(selection.counts[j][selection.kept[j][v]]) for j, v in items}
    count = true.__getitem__ if oracle else noisy.__getitem__
    bar = theta * (len(codes) if oracle else n_first)
    chosen: set[tuple[int, int]] = set()
    for item in sorted((it for it in items if count(it) >= bar), key=lambda it: -count(it)):
        if _cells(chosen | {item}, selection.sizes) <= args.cells:
            chosen.add(item)
    rest = eps - acc.spent()
    bases = pb._release_basis_histograms(selection.compress(codes), [chosen], selection.sizes, columns, rest, acc) \
        if chosen else []
    assert acc.spent() == eps or not chosen
    totals += [(float(b.noisy.sum()), int(b.noisy.size), b.scale) for b in bases]
    n_hat = float(len(codes)) if oracle else pb._combined_total(totals)
    names = [(str(c), list(variables[c].categories)) for c in columns]
    constant = [(j, 0) for j, s in enumerate(sizes) if s == 1]
    return pb.BasisRelease(selection, bases, constant, theta, None, 0, 0, names, {}, n_hat)


def tail_moments(scale: float, tau: int) -> tuple[float, float]:
    """``E[Z·1{Z ≥ τ}]`` and its variance for discrete Laplace ``Z`` of ``scale`` (summed numerically)."""
    a = math.exp(-1.0 / scale)
    k = np.arange(tau, tau + int(80 * scale) + 50, dtype=np.float64)
    p = (1 - a) / (1 + a) * a ** k
    m1 = float((k * p).sum())
    return m1, float((k * k * p).sum()) - m1 * m1


def thresholded_sums(bases, tau_scales: float, z: float, widest: float) -> dict:
    """Per sub-itemset of a basis: kept cells' sum less the empty cells' expected share, less ``z`` sd."""
    found: dict = {}
    for basis in bases:
        tau = math.ceil(tau_scales * basis.scale)
        if tau > widest:
            continue
        mu, v = tail_moments(basis.scale, tau)
        s2 = pb.discrete_laplace_variance(basis.scale)
        kept = basis.noisy >= tau
        sums, heavy, cells = np.where(kept, basis.noisy, 0).astype(np.float64), kept.astype(np.float64), \
            np.ones(basis.noisy.shape)
        for axis in range(sums.ndim):  # append the axis's sum: index -1 = "column absent"
            sums, heavy, cells = (np.concatenate([x, x.sum(axis=axis, keepdims=True)], axis=axis)
                                  for x in (sums, heavy, cells))
        lower = sums - cells * mu - z * np.sqrt(heavy * s2 + (cells - heavy) * v)
        options = [list(range(len(items))) + [lower.shape[a] - 1] for a, items in enumerate(basis.items)]
        for index in itertools.product(*options):
            key = frozenset((basis.columns[a], basis.items[a][i]) for a, i in enumerate(index)
                            if i < len(basis.items[a]))
            if key:
                found.setdefault(key, []).append(float(lower[index]))
    return {key: float(np.mean(values)) for key, values in found.items()}


def with_thresholded_rule(tau_scales: float):
    """``heavy_cell_sums`` with the thresholded sums as a further listing rule (the larger lower bound)."""
    original = private_basis_supports.heavy_cell_sums

    def rule(bases, threshold, z, widest=math.inf):
        out = original(bases, threshold, z, widest)
        for key, lower in thresholded_sums(bases, tau_scales, z, widest).items():
            out[key] = max(out.get(key, -math.inf), lower)
        return out
    return rule


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--methods", default="one-basis,oracle")
    parser.add_argument("--datasets", default="mushroom,nmes,rwas,ibm,tic-tac-toe,vote")
    parser.add_argument("--epsilons", default="0.1")
    parser.add_argument("--seeds", default="0,1,2,3,4,5,6,7,8,9,10,11")
    parser.add_argument("--theta", type=float, default=0.3)
    parser.add_argument("--item-share", type=Fraction, default=Fraction(1, 5))
    parser.add_argument("--rows-share", type=Fraction, default=Fraction(1, 20))
    parser.add_argument("--cells", type=int, default=16384)
    parser.add_argument("--tau", type=float, default=3.0)
    args = parser.parse_args()
    for name in args.datasets.split(","):
        data = load(name, 0)
        domains = {c: sorted(data[c].unique()) for c in data.columns}
        truth = frequent_itemsets(data, args.theta)
        for method, eps in itertools.product(args.methods.split(","), (Fraction(e) for e in args.epsilons.split(","))):
            scores = []
            for seed in (int(s) for s in args.seeds.split(",")):
                if method == "thresholded":
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", UserWarning)
                        fit = fit_private_estimator(data, eps, domains=domains, random_state=seed,
                                                    private_method="auto", min_support=args.theta)
                    if fit.bases is None:
                        print(f"{name} {method} eps={float(eps):g} seed {seed}: auto chose the chain", flush=True)
                        continue
                    release, original = fit.bases, private_basis_supports.heavy_cell_sums
                    private_basis_supports.heavy_cell_sums = with_thresholded_rule(args.tau)  # where the listing reads it
                    try:
                        listed = release.named_itemsets(args.theta)
                    finally:
                        private_basis_supports.heavy_cell_sums = original
                else:
                    listed = one_basis(data, domains, eps, seed, args.theta, args, method == "oracle").named_itemsets()
                r = itemset_rates([s["items"] for s in listed], truth)
                scores.append((r.tpr, r.fpr))
                print(f"{name} {method} eps={float(eps):g} seed {seed}: TPR {r.tpr:.3f} FPR {r.fpr:.3f}", flush=True)
            if not scores:
                continue
            s = np.array(scores)
            low = float(eps) < 1
            ok = int(np.sum((s[:, 0] >= (0.6 if low else 0.8)) & (s[:, 1] <= (0.2 if low else 0.1))))
            print(f"SUMMARY {name} {method} eps={float(eps):g}: TPR {s[:, 0].mean():.3f} ± "
                  f"{s[:, 0].std(ddof=1) / math.sqrt(len(s)) if len(s) > 1 else 0:.3f} "
                  f"({s[:, 0].min():.2f} – {s[:, 0].max():.2f}) / FPR {s[:, 1].mean():.3f} ({s[:, 1].max():.3f}); "
                  f"{ok} of {len(s)} seeds meet the bar", flush=True)


if __name__ == "__main__":
    main()
