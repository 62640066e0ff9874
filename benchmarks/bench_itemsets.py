"""Itemsets from a density estimate against FP-growth on the rows, as the stream grows (the paper's Figure 5).

For IBM-Quest-like synthetic streams (:func:`dprm.datasets.make_transactions`: 20
variables × 4 values, 20 planted patterns, 2 per row, 10 % corruption) of growing
length, prints

* the seconds to learn the estimate (:class:`~dprm.itemsets.DensityEstimator`, ``--chains``
  chains of 20 Hoeffding trees with the estimator's default parameters, the rows given
  as one DataFrame learned once, as a stream: ``passes=1``) and its throughput in
  rows/s, by the wall clock and by the process's CPU time (the machine may be shared;
  target ≥ 20,000 rows/s for 20 variables);
* the estimate's size (nodes per chain: the default budget is 200 per tree);
* the seconds ISON takes to extract the itemsets at ``--theta`` from that estimate,
  by the wall clock and in CPU time (it reads only the estimate: it should not grow
  with the rows once the trees have spent their size budget);
* the seconds of pyfim's FP-growth (Borgelt's C code, the paper's Apriori stand-in)
  on the same rows, encoded as ``column=value`` items, at the same θ;
* the slope of log(time) against log(rows) of each (1 = linear, 0 = constant), when
  ``--rows`` gives two or more sizes (with one, the last line says it was not computed).

The stream is generated before the clock starts. Each figure is the median of
``--repeats`` runs (the numba kernels are compiled by a warm-up first).

Usage::

    python benchmarks/bench_itemsets.py [--rows 10000,100000,1000000] [--chains 3] [--theta 0.1] [--repeats 1]
        [--max-depth D]

ISON reads only the estimate, but an unbounded Hoeffding tree keeps splitting as rows
arrive, so the estimate (and ISON's time) grows with the stream; ``--max-depth``
bounds the trees and with them the extraction time.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import fim
import numpy as np

from dprm.datasets import make_transactions
from dprm.itemsets import DensityEstimator
from dprm.itemsets.ison import run_ison


def _slope(xs: list[float], ys: list[float]) -> float | None:
    """The slope of log(ys) against log(xs); None when it cannot be computed (fewer than two sizes, a time of 0)."""
    if len(set(xs)) < 2 or min(ys) <= 0:
        return None
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def slopes_line(sizes: list[int], times: dict[str, list[float]]) -> str:
    """The line of slopes of log(time) against log(rows), each only where it can be computed, else said in words.

    Examples
    --------
    >>> slopes_line([10, 100], {"learn": [1.0, 10.0], "ISON": [0.5, 0.0]})
    'slope of log time vs log rows: learn 1.00, ISON not computed (a time of 0 s)'
    >>> slopes_line([10_000], {"learn": [1.0]})
    'slope of log time vs log rows: not computed: it needs two or more different --rows sizes (one given)'
    """
    given = len(set(sizes))
    if given < 2:
        return (f"slope of log time vs log rows: not computed: it needs two or more different --rows sizes "
                f"({'one' if given == 1 else 'none'} given)")
    parts = []
    for name, ys in times.items():
        slope = _slope(sizes, ys)
        parts.append(f"{name} {round(slope, 2) + 0.0:.2f}" if slope is not None  # (no "-0.00")
                     else f"{name} not computed (a time of 0 s)")
    return "slope of log time vs log rows: " + ", ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="10000,100000,1000000")
    parser.add_argument("--chains", type=int, default=3)
    parser.add_argument("--theta", type=float, default=0.1)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-depth", type=int, default=None, help="Depth bound of the estimate's trees.")
    args = parser.parse_args()
    sizes = [int(x) for x in args.rows.split(",")]

    warm = make_transactions(2000, rng=np.random.default_rng(args.seed))
    warm_estimate = DensityEstimator(n_chains=1, domains=warm.categories, passes=1, random_state=0).fit(warm.data)
    run_ison(warm_estimate, args.theta)

    print(f"IBM-like stream, 20 variables x 4 values; {args.chains} chains; θ = {args.theta:g}; "
          f"tree depth {args.max_depth or 'unbounded'}; median of {args.repeats}")
    print(f"{'rows':>10} {'learn s':>9} {'rows/s':>9} {'rows/cpu s':>10} {'nodes':>6} {'ISON s':>8} {'ISON cpu s':>10} "
          f"{'itemsets':>9} {'FP-growth s':>12} {'true':>6}")
    learn_times, ison_times, ison_cpu_times, fp_times = [], [], [], []
    for n in sizes:
        stream = make_transactions(n, rng=np.random.default_rng(args.seed))
        learned, learned_cpu, mined, mined_cpu, counted = [], [], [], [], []
        found = truth = 0
        for r in range(args.repeats):
            estimator = DensityEstimator(n_chains=args.chains, domains=stream.categories, max_depth=args.max_depth,
                                         passes=1, random_state=args.seed + r)
            started, cpu_started = time.perf_counter(), time.process_time()
            estimator.fit(stream.data)
            learned.append(time.perf_counter() - started)
            learned_cpu.append(time.process_time() - cpu_started)
            nodes = sum(t.n_nodes for c in estimator.chains_ for t in c.trees) / args.chains
            cpu_started = time.process_time()
            run = run_ison(estimator, args.theta)
            mined.append(run.seconds)
            mined_cpu.append(time.process_time() - cpu_started)
            found = len(run.itemsets)
            started = time.perf_counter()
            items = (np.asarray(stream.data.columns, dtype=object) + "=" + stream.data.to_numpy()).tolist()
            truth = len(fim.fpgrowth(items, target="s", supp=-math.ceil(args.theta * n), report="a"))
            counted.append(time.perf_counter() - started)
        learn, learn_cpu, ison, ison_cpu, fp = (statistics.median(x)
                                                for x in (learned, learned_cpu, mined, mined_cpu, counted))
        ison_cpu_times.append(ison_cpu)
        learn_times.append(learn)
        ison_times.append(ison)
        fp_times.append(fp)
        print(f"{n:>10,} {learn:>9.2f} {n / learn:>9,.0f} {n / learn_cpu:>10,.0f} {nodes:>6.0f} {ison:>8.2f} "
              f"{ison_cpu:>10.2f} {found:>9,} {fp:>12.2f} {truth:>6,}", flush=True)
    print(slopes_line(sizes, {"learn": learn_times, "ISON": ison_times, "ISON CPU": ison_cpu_times,
                              "FP-growth": fp_times}))


if __name__ == "__main__":
    main()
