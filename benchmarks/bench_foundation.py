"""Speed of the foundation: loading, indexing and the cartwheels miner.

Prints, for ../shared/data/mammals and for make-planted data of 115,200 rows × 604
attributes (452 Boolean left + 152 numeric right: the size of the largest dataset
of the tree-based paper), the wall time to load both views, to build the literal
index (codes and packed bitsets), and to run cartwheels, with the peak memory of
each measured process. Each dataset is measured in a fresh child process, so the
peak memory is that of loading + indexing (+ mining) alone.

Target (issue 2): load and index the large data in ≤ 15 s using ≤ 2 GB.

Usage::

    python benchmarks/bench_foundation.py [--rows 115200] [--skip-mammals] [--mine-large]
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

ROOT = Path(__file__).resolve().parents[1]
MAMMALS = ROOT.parent / "shared" / "data" / "mammals"


def measure(left: str, right: str, types: str | None, mine: bool, init_trials: int) -> dict:
    """Run in the child: load, index, optionally mine; report times and peak memory."""
    import numpy as np

    from dprm.data import LiteralIndex, load_two_view
    from dprm.mining import CartWheels

    start = time.perf_counter()
    data = load_two_view(left, right, types=types, duplicate_names="rename")
    loaded = time.perf_counter()
    indexes = [LiteralIndex(view, mode="data") for view in data.views]
    n_literals = sum(len(index.literals) for index in indexes)
    for index in indexes:
        index.bitsets  # noqa: B018  (computing the packed supports is part of indexing)
    indexed = time.perf_counter()
    out = {
        "rows": data.n_rows,
        "attributes": len(data.left) + len(data.right),
        "literals": n_literals,
        "load_s": round(loaded - start, 2),
        "index_s": round(indexed - loaded, 2),
        "load_and_index_s": round(indexed - start, 2),
    }
    if mine:
        miner = CartWheels(init_trials=init_trials).fit(data, rng=np.random.default_rng(0))
        out["cartwheels_s"] = round(time.perf_counter() - indexed, 2)
        out["init_trials"] = init_trials
        out["redescriptions"] = len(miner.redescriptions_)
        out["best_jaccard"] = round(miner.redescriptions_[0].stats.jaccard, 3) if miner.redescriptions_ else None
    out["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def run_child(left: Path, right: Path, types: Path | None, mine: bool, init_trials: int) -> dict:
    command = [sys.executable, __file__, "--child", str(left), str(right), str(types or ""), str(int(mine)),
               str(init_trials)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=115_200)
    parser.add_argument("--skip-mammals", action="store_true")
    parser.add_argument("--mine-large", action="store_true", help="also run cartwheels on the large data")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        left, right, types, mine, trials = args.child
        print(json.dumps(measure(left, right, types or None, mine == "1", int(trials))))
        return

    if not args.skip_mammals and MAMMALS.exists():
        figures = run_child(MAMMALS / "left.csv", MAMMALS / "right.csv", None, True, 20)
        print("mammals (2,575 rows, 194 Boolean + 48 numeric):", json.dumps(figures))

    from dprm.datasets import make_planted, write_planted

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        data = make_planted(
            args.rows, n_left_boolean=452, n_right_numeric=152, n_planted=5, random_state=0
        )
        write_planted(data, tmp)
        del data
        size_mb = sum(p.stat().st_size for p in Path(tmp).glob("*.csv")) / 2**20
        print(f"generated planted data in {time.perf_counter() - start:.1f} s ({size_mb:.0f} MB of CSV)")
        tmp_path = Path(tmp)
        files = (tmp_path / "left.csv", tmp_path / "right.csv", tmp_path / "types.json")
        figures = run_child(*files, False, 0)
        print(f"planted ({args.rows:,} rows, 452 Boolean + 152 numeric), load + index:", json.dumps(figures))
        target = "met" if figures["load_and_index_s"] <= 15 and figures["peak_mb"] <= 2048 else "MISSED"
        print(f"target load+index <= 15 s and <= 2048 MB: {target}")
        if args.mine_large:
            figures = run_child(*files, True, 4)
            print(f"planted ({args.rows:,} rows), load + index + cartwheels:", json.dumps(figures))


if __name__ == "__main__":
    main()
