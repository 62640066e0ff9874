"""``dprm itemsets`` end to end from the shell, against pyfim's FP-growth on the same file.

Two tables, written to a temporary folder:

* **small**: the IBM-like generator's table (:func:`dprm.datasets.make_transactions`),
  10,000 rows × 20 columns;
* **dense**: a soybean-like table, 683 rows × 35 columns of 2 – 7 letters: 16 columns
  nearly constant (one value with probability 0.93), 19 following a latent class of
  three (the class's value with probability 0.9); about 6.3 million frequent itemsets
  at θ = 0.3 (soybean, 683 × 35, has 3.5 million; not on this disk).

Each ``dprm itemsets`` run is a fresh process (``python -m dprm``, numba's cache warm:
one untimed run first) measured with ``os.wait4``: wall time, the child's CPU time
(user + system; compare these between runs made at the same moment on a shared
machine) and its peak memory. FP-growth is timed in-process (CPU seconds) on the
file's rows as items ``column=value``: all frequent itemsets (counted through pyfim's
pattern spectrum, not listed), and for ``--top-k K`` the K of largest support (the
threshold found by bisection on counts, then the itemsets listed). For the same
output mode as a whole process, FP-growth's top-K is also run as its own process from
the CSV file (this file with ``--fp-growth-process``: Python's csv module, the items,
pyfim; no numpy or pandas), measured like ``dprm itemsets``; the ratio of the two
processes' CPU seconds is printed.

Usage::

    python benchmarks/bench_itemsets_end_to_end.py [--repeat 3] [--top-k 100,1000] [--learners auto,hoeffding]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def dense_table(seed: int = 0, n: int = 683, constant: int = 16, columns: int = 35) -> Any:
    """The soybean-like dense table (see the module notes)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    latent = rng.integers(0, 3, n)
    letters = np.array(list("abcdefgh"))
    frame = {}
    for j in range(columns):
        k = int(rng.integers(2, 8))
        if j < constant:
            values = np.where(rng.random(n) < 0.93, 0, rng.integers(0, k, n))
        else:
            typical = rng.integers(0, k, 3)
            values = np.where(rng.random(n) < 0.9, typical[latent], rng.integers(0, k, n))
        frame[f"c{j:02d}"] = letters[values]
    return pd.DataFrame(frame)


def run_cli(arguments: list[str], command: list[str] | None = None) -> tuple[float, float, float, str]:
    """Wall s, CPU s (user + system) and peak MB of one ``python -m dprm`` process (or ``command``); its stdout."""
    started = time.perf_counter()
    process = subprocess.Popen((command or [sys.executable, "-m", "dprm"]) + arguments, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    out = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"dprm {' '.join(arguments)} failed:\n{out}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def fp_growth_process(path: str, k: int, theta: float) -> None:
    """FP-growth's top ``k`` from the CSV file as a whole process: read, items, bisection, listing (printed)."""
    import csv

    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        rows = [[f"{c}={v}" for c, v in zip(header, row)] for row in reader]
    threshold, _, listed = fp_growth_top(rows, k, theta)
    listed.sort(key=lambda found: -found[1])
    print(f"{len(listed[:k])} itemsets of largest support; k-th support {threshold:.4f}")


def transactions(frame: Any) -> list[list[str]]:
    return [[f"{c}={v}" for c, v in zip(frame.columns, row)] for row in frame.itertuples(index=False)]


def cpu() -> float:
    return time.process_time()


def fp_growth_all(rows: list[list[str]], theta: float) -> tuple[int, float]:
    """How many itemsets reach θ (pyfim's pattern spectrum) and the CPU seconds."""
    from fim import fpgrowth

    started = cpu()
    spectrum = fpgrowth(rows, target="s", supp=100 * theta, report="#")
    return int(sum(spectrum.values())), cpu() - started


def fp_growth_top(rows: list[list[str]], k: int, theta: float) -> tuple[float, float, list]:
    """The K-th largest support (bisection on FP-growth's counts), the CPU seconds, the itemsets listed there."""
    from fim import fpgrowth

    started = cpu()
    low, high = theta, 1.0
    for _ in range(25):
        middle = (low + high) / 2
        if sum(fpgrowth(rows, target="s", supp=100 * middle, report="#").values()) >= k:
            low = middle
        else:
            high = middle
    listed = fpgrowth(rows, target="s", supp=100 * low, report="a")
    return low, cpu() - started, listed


def run_benchmark(args: argparse.Namespace, folder: Path) -> None:
    """Write the two tables into ``folder`` and time the runs ``args`` name.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (``--repeat``, ``--top-k``, ``--learners``, ``--theta``,
        ``--tables``).
    folder : pathlib.Path
        A temporary folder for the tables and the top-k document; the caller removes it.
    """
    import numpy as np

    from dprm.datasets import make_transactions

    small = make_transactions(10_000, rng=np.random.default_rng(1)).data
    small.to_csv(folder / "small.csv", index=False)
    dense = dense_table()
    dense.to_csv(folder / "dense.csv", index=False)
    theta = f"{args.theta:g}"
    print(f"{'table':>6} {'run':>34} {'wall s':>7} {'cpu s':>6} {'MB':>5}  result", flush=True)
    tables = args.tables.split(",")
    for learner in (args.learners.split(",") if "small" in tables else []):
        command = ["itemsets", str(folder / "small.csv"), "--min-support", theta, "--seed", "0", "--top", "0",
                   "--learner", learner]
        run_cli(command)  # warm numba's cache for this path
        for _ in range(args.repeat):
            wall, seconds, mb, out = run_cli(command)
            print(f"{'small':>6} {'dprm itemsets --learner ' + learner:>34} {wall:7.2f} {seconds:6.2f} {mb:5.0f}  "
                  f"{out.splitlines()[1][:60]}", flush=True)
    if "small" in tables:
        count, seconds = fp_growth_all(transactions(small), args.theta)
        print(f"{'small':>6} {'FP-growth (all, counted)':>34} {'':>7} {seconds:6.2f} {'':>5}  {count:,} itemsets")
    if "dense" not in tables:
        return
    from dprm.itemsets.document import read_itemsets
    from dprm.itemsets.ground_truth import itemset_rates

    rows = transactions(dense)
    count, seconds = fp_growth_all(rows, args.theta)
    print(f"{'dense':>6} {'FP-growth (all, counted)':>34} {'':>7} {seconds:6.2f} {'':>5}  {count:,} itemsets")
    for k in (int(v) for v in args.top_k.split(",")):
        command = ["itemsets", str(folder / "dense.csv"), "--min-support", theta, "--seed", "0", "--top", "0",
                   "--top-k", str(k), "--output", str(folder / "top.json")]
        run_cli(command)
        for _ in range(args.repeat):
            wall, seconds, mb, out = run_cli(command)
            print(f"{'dense':>6} {'dprm itemsets --top-k ' + str(k):>34} {wall:7.2f} {seconds:6.2f} {mb:5.0f}  "
                  f"{out.splitlines()[1][:60]}", flush=True)
        fp_command = [sys.executable, __file__, "--fp-growth-process"]
        fp_arguments = [str(folder / "dense.csv"), str(k), theta]
        run_cli(fp_arguments, fp_command)
        dprm_cpu = []
        for _ in range(args.repeat):
            dprm_cpu.append(run_cli(command)[1])
            wall, fp_seconds, mb, out = run_cli(fp_arguments, fp_command)
            print(f"{'dense':>6} {'FP-growth top ' + str(k) + ' (process)':>34} {wall:7.2f} {fp_seconds:6.2f} "
                  f"{mb:5.0f}  {out.strip()[:40]}; dprm / FP-growth CPU: {dprm_cpu[-1] / fp_seconds:.1f}x",
                  flush=True)
        kth, seconds, listed = fp_growth_top(rows, k, args.theta)
        truth = {frozenset(tuple(item.split("=", 1)) for item in items): support / len(dense)
                 for items, support in listed}
        import json

        document = json.loads((folder / "top.json").read_text())
        rates = itemset_rates(read_itemsets(document), truth)
        print(f"{'dense':>6} {'FP-growth top ' + str(k) + ' (bisection)':>34} {'':>7} {seconds:6.2f} {'':>5}  "
              f"k-th support {kth:.4f} ({len(truth):,} itemsets); dprm's threshold "
              f"{document['parameters']['top_k_threshold']:.4f}, TPR {rates.tpr:.3f} FPR {rates.fpr:.3f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--top-k", default="100,1000")
    parser.add_argument("--learners", default="auto,hoeffding")
    parser.add_argument("--theta", type=float, default=0.3)
    parser.add_argument("--tables", default="small,dense")
    parser.add_argument("--fp-growth-process", nargs=3, metavar=("CSV", "K", "THETA"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fp_growth_process:
        path, k, theta = args.fp_growth_process
        fp_growth_process(path, int(k), float(theta))
        return
    with tempfile.TemporaryDirectory(prefix="bench_itemsets_") as name:
        run_benchmark(args, Path(name))


if __name__ == "__main__":
    main()
