"""Speed of the private tree-based miners on make-planted data of CMS-2-16 size.

Issue 3's targets, on 115,200 rows × 604 attributes (452 Boolean + 152 numeric) on
this 2-core machine, each within 4 GB:

* ``mcmc-tree-pair`` with InTr = 20, 10,000 MCMC steps, d = 4: ≤ 60 s;
* ``alt-mcmc`` (defaults): ≤ 60 s;
* ``alt-expm`` with InTr = 1, RMIter = 20: ≤ 120 s.

Each run is a fresh child process (its own peak memory); loading is not timed.

Usage::

    python benchmarks/bench_tree_miners.py [--rows 115200] [--only mcmc-tree-pair]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = {
    "mcmc-tree-pair": ({"init_trials": 20, "mcmc_iterations": 10_000, "depth": 4}, 60),
    "alt-mcmc": ({}, 60),
    "alt-expm": ({"init_trials": 1, "alternations": 20}, 120),
}


def child(left: str, right: str, types: str, algorithm: str) -> dict:
    import numpy as np

    from dprm.data import load_two_view
    from dprm.mining import make_miner
    from dprm.privacy import Accountant, SeededNoise

    data = load_two_view(left, right, types=types)
    parameters, _ = RUNS[algorithm]
    miner = make_miner(algorithm, **parameters)
    accountant = Accountant(miner.epsilon, SeededNoise(np.random.default_rng(0)))
    start = time.perf_counter()
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(0))
    seconds = time.perf_counter() - start
    return {
        "algorithm": algorithm,
        "parameters": parameters,
        "seconds": round(seconds, 1),
        "redescriptions": len(miner.redescriptions_),
        "kept": sum(not r.pruned for r in miner.redescriptions_),
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=115_200)
    parser.add_argument("--only", choices=sorted(RUNS), action="append")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    from dprm.datasets import make_planted, write_planted

    with tempfile.TemporaryDirectory() as tmp:
        data = make_planted(args.rows, n_left_boolean=452, n_right_numeric=152, n_planted=5, random_state=0)
        write_planted(data, tmp)
        del data
        folder = Path(tmp)
        for algorithm in args.only or list(RUNS):
            command = [sys.executable, __file__, "--child", str(folder / "left.csv"), str(folder / "right.csv"),
                       str(folder / "types.json"), algorithm]
            result = subprocess.run(command, capture_output=True, text=True, check=True)
            figures = json.loads(result.stdout.strip().splitlines()[-1])
            target = RUNS[algorithm][1]
            verdict = "met" if figures["seconds"] <= target and figures["peak_mb"] <= 4096 else "MISSED"
            print(f"{args.rows:,} rows: {json.dumps(figures)}  target <= {target} s, <= 4096 MB: {verdict}",
                  flush=True)


if __name__ == "__main__":
    main()
