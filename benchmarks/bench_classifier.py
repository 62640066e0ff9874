"""Speed of the DP decision-tree classifier: fit time against rows, and mushroom.

Prints, for planted categorical data (``make_planted_classification``: 20 features
× 3 categories, a planted tree of depth 3, 5 % label noise) of 1,000 … 1,000,000
rows, the wall time of one fit (ε = 1, maximum depth 5) and the peak memory of the
process, for one-step embedding and for the whole tree in one computation, with the
slope of log(time) against log(rows) (1 = linear); and the median of 5 fits of every
embedding depth on UCI mushroom (whole tree at depth 5: target ≤ 1 s). Each
measurement runs in a fresh child process, so its peak memory is its own. Fits use
seeded noise (a benchmark, not a release).

Usage::

    python benchmarks/bench_classifier.py [--rows 1000,10000,100000,1000000] [--skip-rows]
        [--skip-mushroom] [--repeats 5]
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
    times, accuracy = [], 0.0
    for seed in range(repeats):
        clf = DPDecisionTreeClassifier(epsilon=1.0, max_depth=5, embedding_depth=embedding_depth,
                                       categories=data.categories, classes=data.classes, random_state=seed)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            clf.fit(data.X, data.y)
        times.append(time.perf_counter() - start)
        accuracy = clf.score(data.X, data.y)
    return {"seconds": sorted(times)[len(times) // 2], "search": clf.search_, "accuracy": accuracy,
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
    times = []
    for seed in range(repeats):
        clf = DPDecisionTreeClassifier(epsilon=1.0, max_depth=5, embedding_depth=embedding_depth,
                                       categories=categories, classes=sorted(set(y)), random_state=seed)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            clf.fit(X, y)
        times.append(time.perf_counter() - start)
    return {"seconds": sorted(times)[len(times) // 2], "search": clf.search_,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000,10000,100000,1000000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-rows", action="store_true")
    parser.add_argument("--skip-mushroom", action="store_true")
    args = parser.parse_args()
    if not args.skip_rows:
        sizes = [int(r) for r in args.rows.split(",")]
        print("fit time against rows (planted, 20 features x 3 categories, eps 1, depth 5)")
        print(f"{'embedding':>10} {'rows':>10} {'search':>11} {'median s':>9} {'peak MB':>8} {'accuracy':>9} {'planted':>8}")
        for depth in (1, 5):
            times = []
            for rows in sizes:
                repeats = 1 if rows >= 1_000_000 else max(1, min(args.repeats, 3))
                result = in_child("child_planted", rows, depth, repeats)
                times.append(result["seconds"])
                print(f"{depth:>10} {rows:>10,} {result['search']:>11} {result['seconds']:>9.3f} "
                      f"{result['peak_mb']:>8.0f} {result['accuracy']:>9.3f} {result['planted']:>8.3f}", flush=True)
            print(f"{'':>10} slope of log(time) vs log(rows): {slope(sizes, times):.2f}", flush=True)
    if not args.skip_mushroom:
        print(f"mushroom (8,124 rows, 22 features), eps 1, depth 5, median of {args.repeats} fits")
        for depth in (1, 2, 3, 5):
            result = in_child("child_mushroom", depth, args.repeats)
            label = "whole" if depth == 5 else str(depth)
            print(f"  embedding {label:>5}: {result['seconds']:.3f} s ({result['search']}), "
                  f"peak {result['peak_mb']:.0f} MB", flush=True)


if __name__ == "__main__":
    main()
