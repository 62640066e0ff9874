"""ISON's true and false positive rates on UCI mushroom against FP-growth (pyfim).

The ground truth is pyfim's ``fpgrowth`` on the rows (constant columns dropped first:
pyfim leaves out an item present in every row). ISON mines the density estimate
learned from the same rows as a stream, in the file's order and in a seeded random
order (the paper's stationary stream), each learned ONCE (``passes=1``; the
estimator's own default, ``passes="auto"``, is measured by
``quality_itemsets_defaults.py``), with river's and MOA's Hoeffding parameters (grace
period 200, split confidence 1e-7, tie threshold 0.05) and with parameters for a short
stream (grace period 50, split confidence 0.01, tie threshold 0.2). TPR = |found ∩ true| / |true|, FPR = |found \\ true| / |true| (the
paper's definitions).

Usage::

    python benchmarks/quality_ison_mushroom.py [--thetas 0.3,0.2,0.1] [--chains 3] [--max-seconds 300]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from dprm.itemsets import DensityEstimator, run_ison

ROOT = Path(__file__).resolve().parents[1]
MUSHROOM = ROOT.parent / "shared" / "data" / "uci" / "mushroom.csv"
SETTINGS = {
    "defaults": dict(grace_period=200, split_confidence=1e-7, tie_threshold=0.05),
    "short-stream": dict(grace_period=50, split_confidence=0.01, tie_threshold=0.2),
}


def main() -> None:
    import fim  # pyfim: the ground truth

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--thetas", default="0.3,0.2,0.1")
    parser.add_argument("--chains", type=int, default=3)
    parser.add_argument("--max-seconds", type=float, default=300.0)
    args = parser.parse_args()
    thetas = [float(t) for t in args.thetas.split(",")]
    frame = pd.read_csv(MUSHROOM, dtype=str, keep_default_na=False)
    frame = frame.loc[:, frame.nunique() > 1]
    transactions = [[f"{c}={v}" for c, v in zip(frame.columns, row)] for row in frame.itertuples(index=False)]
    truth = {theta: {frozenset(items) for items, _ in fim.fpgrowth(transactions, target="s", supp=theta * 100,
                                                                    zmin=1, report="s")} for theta in thetas}
    print(f"mushroom: {len(frame)} rows, {frame.shape[1]} non-constant columns, {args.chains} chains")
    print(f"{'order':>8} {'setting':>13} {'theta':>5} {'true':>7} {'found':>7} {'TPR':>6} {'FPR':>6} {'ison s':>7} "
          f"{'stopped':>7}")
    for order in ("file", "shuffled"):
        rows = frame if order == "file" else frame.sample(frac=1.0, random_state=1)
        for name, setting in SETTINGS.items():
            estimator = DensityEstimator(n_chains=args.chains, passes=1, random_state=0, **setting).fit(rows)
            for theta in thetas:
                started = time.perf_counter()
                run = run_ison(estimator, theta, max_seconds=args.max_seconds)
                seconds = time.perf_counter() - started
                found = {frozenset(f"{c}={v}" for c, v in s.items.items()) for s in run.itemsets}
                true = truth[theta]
                print(f"{order:>8} {name:>13} {theta:5.2f} {len(true):7d} {len(found):7d} "
                      f"{len(found & true) / len(true):6.3f} {len(found - true) / len(true):6.3f} {seconds:7.1f} "
                      f"{str(run.stopped_early):>7}", flush=True)


if __name__ == "__main__":
    main()
