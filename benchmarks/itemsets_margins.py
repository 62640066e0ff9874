"""How close to θ the frequent itemsets of each table lie, and what noise a private release could afford.

For issue 30's bar at ε = 0.1 (TPR ≥ 0.6 and FPR ≤ 0.2 at θ = 0.3; FPR = false itemsets
over true ones). For each table of ``quality_itemsets_private.py`` prints: the rows
``n``, the frequent itemsets at θ (FP-growth on the true rows), the share of them whose
support lies within 0.02 / 0.05 / 0.10 above θ, the infrequent ones within 0.10 below
θ, and the largest noise a release could add to *every* itemset's count and still meet
the bar: the standard deviation ``σ`` (in rows) of a Gaussian error on each count
(independent), listing an itemset when its noisy count reaches ``θ·n + z·σ``, with the
best margin ``z`` (TPR and FPR in expectation over the noise, the infrequent itemsets
down to θ − 0.15 counted). Beside it ``ε·n`` at ε = 0.1, the rows of budget a run has:
an ε-DP release of a single count has a standard deviation of ``√2/ε`` (14 rows at ε =
0.1); counts of many itemsets share that budget. An idealised bound, not a release:
non-private diagnostics for docs/itemsets.md.

    python benchmarks/itemsets_margins.py --datasets mushroom,nmes,rwas,ibm --theta 0.3
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.stats import norm

from dprm.itemsets.ground_truth import frequent_itemsets

from quality_itemsets_private import load  # noqa: E402 - the benchmarks' own helpers (same folder)


def rates(true: np.ndarray, false: np.ndarray, theta: float, n: int, sigma: float, z: float) -> tuple[float, float]:
    """Expected (TPR, FPR) when each count carries Gaussian error ``sigma`` and the bar is ``θ·n + z·σ``."""
    listed = [norm.sf((theta * n + z * sigma - supports * n) / sigma) for supports in (true, false)]
    return float(listed[0].mean()), float(listed[1].sum() / len(true))


def meets(true: np.ndarray, false: np.ndarray, theta: float, n: int, sigma: float, tpr: float, fpr: float) -> bool:
    """Whether some margin ``z`` in [-3, 3] gives TPR ≥ ``tpr`` and FPR ≤ ``fpr`` in expectation."""
    return any(t >= tpr and f <= fpr for t, f in (rates(true, false, theta, n, sigma, z)
                                                   for z in np.linspace(-3, 3, 121)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="mushroom,nmes,rwas,ibm")
    parser.add_argument("--theta", type=float, default=0.3)
    parser.add_argument("--tpr", type=float, default=0.6)
    parser.add_argument("--fpr", type=float, default=0.2)
    parser.add_argument("--epsilon", type=float, default=0.1)
    args = parser.parse_args()
    print(f"{'dataset':>11} {'rows':>6} {'frequent':>8} {'≤0.02':>6} {'≤0.05':>6} {'≤0.10':>6} "
          f"{'below':>7} {'sigma':>6} {'eps·n':>6}")
    for name in args.datasets.split(","):
        data = load(name, 0)
        n = len(data)
        frequent = frequent_itemsets(data, args.theta)
        near = frequent_itemsets(data, max(args.theta - 0.15, 1.0 / n))
        true = np.array(list(frequent.values()))
        false = np.array([s for key, s in near.items() if key not in frequent])
        shares = [float(np.mean(true - args.theta < d)) for d in (0.02, 0.05, 0.10)]
        below = int(np.sum(false >= args.theta - 0.10))
        sigmas = np.geomspace(1, 20 * n, 400)
        ok = [s for s in sigmas if meets(true, false, args.theta, n, s, args.tpr, args.fpr)]
        sigma = max(ok) if ok else float("nan")
        print(f"{name:>11} {n:>6} {len(true):>8} {shares[0]:>6.3f} {shares[1]:>6.3f} {shares[2]:>6.3f} "
              f"{below:>7} {sigma:>6.0f} {args.epsilon * n:>6.0f}", flush=True)


if __name__ == "__main__":
    main()
