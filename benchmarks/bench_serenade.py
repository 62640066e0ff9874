"""Time SerenadeES (k = 20, M = 80, and the auto defaults; ε = 1, d3) on MAMMAL and 40,000 planted rows.

Issue 5's targets: ≤ 30 s on MAMMAL (2,575 rows) and ≤ 5 minutes on 40,000 rows on
a 2-core machine. Uses the secure noise source (OpenDP / os.urandom), as a private
run does; ``--noise seeded`` times the reproducible path. Prints one line per
dataset: load time, mining time, candidate counts.

Usage::

    python benchmarks/bench_serenade.py [--rows 40000] [--noise secure|seeded] [--algorithm serenade-es]
        [--settings paper,auto]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from dprm.data import load_two_view
from dprm.datasets import make_planted
from dprm.mining import make_miner
from dprm.privacy import Accountant, SecureNoise, SeededNoise

MAMMALS = Path(__file__).resolve().parents[2] / "shared" / "data" / "mammals"


def timed_run(name: str, data, algorithm: str, noise: str, settings: str) -> None:
    if settings == "paper":
        sizes = {"initial_pairs": 20, "extensions": 80 if "es" in algorithm else 4, "score_range": "symmetric",
                 "damping": "none", "significance": "point", "grid": "fixed"}
    else:
        sizes = {}
    miner = make_miner(algorithm, epsilon=1.0, **sizes)
    source = SecureNoise() if noise == "secure" else SeededNoise(np.random.default_rng(0))
    accountant = Accountant(1.0, source)
    start = time.perf_counter()
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(0))
    elapsed = time.perf_counter() - start
    literals = [len(t) for t in miner.tables_]
    k, m = miner.chosen_["initial_pairs"], miner.chosen_["extensions"]
    print(f"{name}: {algorithm} {settings} k={k} m/M={m} {noise} noise: {elapsed:.1f} s; literals left/right {literals}; "
          f"{len(miner.redescriptions_)} redescriptions; ledger {len(accountant.ledger)} entries, "
          f"spent {float(accountant.spent()):g}; {'; '.join(miner.notes_[-1:])}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=40_000)
    parser.add_argument("--noise", choices=("secure", "seeded"), default="secure")
    parser.add_argument("--algorithm", default="serenade-es")
    parser.add_argument("--settings", default="paper,auto", help="paper (k = 20, M = 80 / m = 4, symmetric range, no damping, point "
                                                                  "significance, 19 thresholds) and/or auto")
    args = parser.parse_args()
    start = time.perf_counter()
    mammals = load_two_view(MAMMALS / "left.csv", MAMMALS / "right.csv", duplicate_names="rename")
    print(f"mammals: loaded in {time.perf_counter() - start:.1f} s", flush=True)
    for settings in args.settings.split(","):
        timed_run("mammals (2,575 rows, 194 Boolean vs 48 numeric)", mammals, args.algorithm, args.noise, settings)
    start = time.perf_counter()
    planted = make_planted(args.rows, n_planted=3, random_state=0)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    print(f"planted: generated and loaded in {time.perf_counter() - start:.1f} s", flush=True)
    for settings in args.settings.split(","):
        timed_run(f"make_planted ({args.rows:,} rows, 30 Boolean vs 20 numeric)", data, args.algorithm, args.noise,
                  settings)


if __name__ == "__main__":
    main()
