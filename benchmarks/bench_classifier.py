"""Speed of the DP decision-tree classifier: fit time against rows, and mushroom.

Prints, for planted categorical data (``make_planted_classification``: 20 features
× 3 categories, a planted tree of depth 3, 5 % label noise) of 1,000 … 1,000,000
rows, the wall time of one fit (ε = 1, maximum depth 5) and the peak memory of the
process, for one-step embedding and for the whole tree in one computation, with the
slope of log(time) against log(rows) (1 = linear); and the median of 5 fits of every
embedding depth on UCI mushroom (whole tree at depth 5: target ≤ 1 s). Each
measurement runs in a fresh child process, so its peak memory is its own. Fits use
seeded noise (a benchmark, not a release). ``--targets`` prints the two figures of
issue 29 (a whole-tree fit at depth 5 on mushroom ≤ 1 s, on 10,000 rows × 20
attributes ≤ 2 s, on an idle 2-core machine): wall and CPU seconds of the median
fit, and of the process's first fit, which also starts numba and loads the chain's
compiled code from its cache (``dprm warm-cache`` fills it; without it, the first
fit compiles the chain, about 10 s). On a loaded machine, read the CPU seconds.

Usage::

    python benchmarks/bench_classifier.py [--rows 1000,10000,100000,1000000] [--skip-rows]
        [--skip-mushroom] [--repeats 5]
    python benchmarks/bench_classifier.py --targets [--repeats 5]   # the two whole-tree targets only
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUSHROOM = ROOT.parent / "shared" / "data" / "uci" / "mushroom.csv"


def child_planted(rows: int, embedding_depth: int, repeats: int) -> dict:
    """In the child: generate the data, fit ``repeats`` times, report times and memory."""
    import warnings

    import numpy as np

    from dprm.datasets import make_planted_classification
    from dprm.classifier import DPDecisionTreeClassifier

    data = make_planted_classification(rows, rng=np.random.default_rng(0))
    times, cpu, accuracy = [], [], 0.0
    for seed in range(repeats):
        clf = DPDecisionTreeClassifier(epsilon=1.0, max_depth=5, embedding_depth=embedding_depth,
                                       categories=data.categories, classes=data.classes, random_state=seed)
        start, start_cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            clf.fit(data.X, data.y)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        accuracy = clf.score(data.X, data.y)
    return {"seconds": sorted(times)[len(times) // 2], "cpu": sorted(cpu)[len(cpu) // 2], "search": clf.search_,
            "first_seconds": times[0], "first_cpu": cpu[0], "accuracy": accuracy,
            "planted": data.planted_accuracy, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def child_mushroom(embedding_depth: int, repeats: int) -> dict:
    """In the child: fit mushroom ``repeats`` times at depth 5; median time and memory."""
    import warnings

    import numpy as np
    import pandas as pd

    from dprm.classifier import DPDecisionTreeClassifier

    frame = pd.read_csv(MUSHROOM, dtype=str, keep_default_na=False)
    y = frame.pop("edibility").to_numpy()
    X = frame.replace("?", np.nan)
    categories = {c: sorted(X[c].dropna().unique()) for c in X.columns}
    times, cpu = [], []
    for seed in range(repeats):
        clf = DPDecisionTreeClassifier(epsilon=1.0, max_depth=5, embedding_depth=embedding_depth,
                                       categories=categories, classes=sorted(set(y)), random_state=seed)
        start, start_cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            clf.fit(X, y)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return {"seconds": sorted(times)[len(times) // 2], "cpu": sorted(cpu)[len(cpu) // 2], "search": clf.search_,
            "first_seconds": times[0], "first_cpu": cpu[0], "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def in_child(function: str, *args: int) -> dict:
    """Run ``function(*args)`` of this script in a fresh Python process."""
    code = (
        f"import sys, json; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); "
        f"import bench_classifier as b; print(json.dumps(b.{function}(*{args!r})))"
    )
    output = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def slope(rows: list[int], seconds: list[float]) -> float:
    """Least-squares slope of log(seconds) against log(rows)."""
    import numpy as np

    return float(np.polyfit(np.log(rows), np.log(seconds), 1)[0])


def targets(repeats: int) -> None:
    """The two whole-tree figures of issue 29, each the median of ``repeats`` fits in a fresh process."""
    import os

    mushroom = in_child("child_mushroom", 5, repeats)
    planted = in_child("child_planted", 10_000, 5, repeats)
    load = os.getloadavg()[0]
    print(f"whole-tree fits, eps 1, depth 5, median of {repeats} (load average {load:.1f} on {os.cpu_count()} cores):")
    for label, result, target in (("mushroom (8,124 x 22)", mushroom, 1.0),
                                  ("planted (10,000 x 20)", planted, 2.0)):
        print(f"  {label}: {result['seconds']:.3f} s wall, {result['cpu']:.3f} s CPU ({result['search']}; "
              f"target {target:g} s on an idle machine); the process's first fit {result['first_seconds']:.3f} s "
              f"wall, {result['first_cpu']:.3f} s CPU (with numba's start and its cache's load)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000,10000,100000,1000000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-rows", action="store_true")
    parser.add_argument("--skip-mushroom", action="store_true")
    parser.add_argument("--targets", action="store_true",
                        help="only the whole-tree fits of the targets (issue 29): mushroom <= 1 s, "
                             "planted 10,000 rows x 20 features <= 2 s")
    args = parser.parse_args()
    if args.targets:
        targets(args.repeats)
        return
    if not args.skip_rows:
        sizes = [int(r) for r in args.rows.split(",")]
        print("fit time against rows (planted, 20 features x 3 categories, eps 1, depth 5)")
        print(f"{'embedding':>10} {'rows':>10} {'search':>11} {'median s':>9} {'CPU s':>7} {'peak MB':>8} {'accuracy':>9} "
              f"{'planted':>8}")
        for depth in (1, 5):
            times = []
            for rows in sizes:
                repeats = 1 if rows >= 1_000_000 else max(1, min(args.repeats, 3))
                result = in_child("child_planted", rows, depth, repeats)
                times.append(result["seconds"])
                print(f"{depth:>10} {rows:>10,} {result['search']:>11} {result['seconds']:>9.3f} {result['cpu']:>7.3f} "
                      f"{result['peak_mb']:>8.0f} {result['accuracy']:>9.3f} {result['planted']:>8.3f}", flush=True)
            print(f"{'':>10} slope of log(time) vs log(rows): {slope(sizes, times):.2f}", flush=True)
    if not args.skip_mushroom:
        print(f"mushroom (8,124 rows, 22 features), eps 1, depth 5, median of {args.repeats} fits")
        for depth in (1, 2, 3, 5):
            result = in_child("child_mushroom", depth, args.repeats)
            label = "whole" if depth == 5 else str(depth)
            print(f"  embedding {label:>5}: {result['seconds']:.3f} s, CPU {result['cpu']:.3f} s ({result['search']}), "
                  f"peak {result['peak_mb']:.0f} MB", flush=True)


if __name__ == "__main__":
    main()
