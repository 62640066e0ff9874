"""ISON's TPR / FPR with the estimator's defaults on several categorical tables, against FP-growth.

The datasets: UCI mushroom (8,124 x 23), vote (435 x 17), tic-tac-toe (958 x 10) from
``../shared/data/uci``, and IBM-like synthetic transactions
(:func:`dprm.datasets.make_transactions`, 20 variables x 4 values) both as a small
table (20,000 rows, learned with the passes rule) and as a long stream (one pass,
``--stream-rows`` rows). The truth is pyfim's FP-growth on the same rows
(:func:`dprm.itemsets.ground_truth.frequent_itemsets`). Each table is learned by
``DensityEstimator(...).fit(table)`` with the given settings (default: the
estimator's defaults, nothing else), over ``--seeds`` seeds (chain orders and the
shuffles of the passes), and mined by ISON at each θ with ``--max-seconds``.

TPR = |found ∩ true| / |true|, FPR = |found \\ true| / |true| (the paper's rates).

Usage::

    python benchmarks/quality_itemsets_defaults.py [--datasets mushroom,vote,tic-tac-toe,ibm,ibm-stream]
        [--thetas 0.1,0.2,0.3] [--seeds 0,1,2] [--max-seconds 300] [--set grace_period=50 ...]
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dprm.itemsets import DensityEstimator
from dprm.itemsets.ground_truth import frequent_itemsets, itemset_rates
from dprm.itemsets.ison import run_ison

ROOT = Path(__file__).resolve().parents[1]
UCI = ROOT.parent / "shared" / "data" / "uci"
if not UCI.is_dir():  # a worktree beside /work/main
    UCI = Path("/work/shared/data/uci")


def load(name: str, stream_rows: int) -> pd.DataFrame:
    """A dataset as a text frame."""
    from dprm.datasets import make_transactions

    if name == "ibm":
        return make_transactions(20_000, rng=np.random.default_rng(12)).data
    if name == "ibm-stream":
        return make_transactions(stream_rows, rng=np.random.default_rng(13)).data
    return pd.read_csv(UCI / f"{name}.csv", dtype=str, keep_default_na=False)


def value(text: str) -> object:
    """An option value from the command line (``None``, int, float or text)."""
    if text == "None":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="mushroom,vote,tic-tac-toe,ibm,ibm-stream")
    parser.add_argument("--thetas", default="0.1,0.2,0.3")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--chains", type=int, default=3)
    parser.add_argument("--stream-rows", type=int, default=1_000_000)
    parser.add_argument("--max-seconds", type=float, default=300.0)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a DensityEstimator parameter (repeatable); default: its defaults")
    args = parser.parse_args()
    settings = {k: value(v) for k, _, v in (s.partition("=") for s in args.set)}
    thetas = [float(t) for t in args.thetas.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"settings: {settings or 'defaults'}; chains {args.chains}", flush=True)
    print(f"{'dataset':>12} {'seed':>4} {'rows':>8} {'learned':>9} {'nodes':>7} {'learn cpu':>9} {'theta':>5} "
          f"{'true':>7} {'found':>7} {'TPR':>6} {'FPR':>6} {'ison s':>7} {'stop':>5}", flush=True)
    for name in args.datasets.split(","):
        data = load(name, args.stream_rows)
        truths = {theta: frequent_itemsets(data, theta) for theta in thetas}
        for seed in seeds:
            started = cpu()
            estimator = DensityEstimator(n_chains=args.chains, random_state=seed, **settings).fit(data)
            learn = cpu() - started
            nodes = sum(t.n_nodes for c in estimator.chains_ for t in c.trees) / len(estimator.chains_)
            for theta in thetas:
                started = time.perf_counter()
                run = run_ison(estimator, theta, max_seconds=args.max_seconds)
                seconds = time.perf_counter() - started
                r = itemset_rates(run.itemsets, truths[theta])
                print(f"{name:>12} {seed:4d} {len(data):8d} {estimator.n_seen_:9d} {nodes:7.0f} {learn:9.2f} "
                      f"{theta:5.2f} {r.n_true:7d} {r.n_reported:7d} {r.tpr:6.3f} {r.fpr:6.3f} {seconds:7.1f} "
                      f"{str(run.stopped_early):>5}", flush=True)


if __name__ == "__main__":
    main()
