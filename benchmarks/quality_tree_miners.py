"""Quality of the private tree-based miners on MAMMAL, measured with true statistics.

Issue 3's acceptance: on ../shared/data/mammals with ε = 1 and the defaults, over 10
runs with different seeds, for each of alt-expm, alt-mcmc and mcmc-tree-pair: a kept
redescription in every run; among kept ones a median true Jaccard ≥ 0.5, ≥ 92 %
significant (true p < 0.01) and Spearman(noisy, true Jaccard) ≥ 0.9.

Runs use seeded noise (reproducible; the statistics of the noise are those of the
secure path). Prints one line per algorithm. ``--data LEFT RIGHT`` (and ``--types``)
measures on another two-view dataset, e.g. ../shared/data/spi or a make-planted one
(``python -m dprm make-planted``), to compare options across datasets.

Usage::

    python benchmarks/quality_tree_miners.py [--algorithms alt-expm,alt-mcmc,mcmc-tree-pair]
        [--runs 10] [--first-seed 0] [--parameters '{"pair_score": "paper"}'] [--jobs 2]
        [--data LEFT RIGHT] [--types TYPES]
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from dprm.data import load_two_view
from dprm.evaluation import true_statistics
from dprm.mining import make_miner
from dprm.privacy import Accountant, SeededNoise

MAMMALS = Path(__file__).resolve().parents[2] / "shared" / "data" / "mammals"
_DATA = None
_SOURCE = {"left": MAMMALS / "left.csv", "right": MAMMALS / "right.csv", "types": None}


def _data():
    global _DATA
    if _DATA is None:
        _DATA = load_two_view(_SOURCE["left"], _SOURCE["right"], types=_SOURCE["types"], duplicate_names="rename")
    return _DATA


def one_run(job: tuple[str, int, dict]) -> pd.DataFrame:
    algorithm, seed, parameters = job
    choices, noise = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    miner = make_miner(algorithm, **parameters)
    miner.fit(_data(), accountant=Accountant(miner.epsilon, SeededNoise(noise)), rng=choices)
    frame = true_statistics(miner.document(), _data())
    frame["algorithm"], frame["run"] = algorithm, seed
    return frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithms", default="alt-expm,alt-mcmc,mcmc-tree-pair")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + runs - 1")
    parser.add_argument("--parameters", default="{}", help="JSON object of miner parameters")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--data", nargs=2, metavar=("LEFT", "RIGHT"), help="another dataset (default: MAMMAL)")
    parser.add_argument("--types", help="its types file")
    args = parser.parse_args()
    if args.data:  # set before the pool forks its workers, which read it
        _SOURCE.update(left=Path(args.data[0]), right=Path(args.data[1]), types=args.types)
    parameters = json.loads(args.parameters)
    algorithms = args.algorithms.split(",")
    seeds = range(args.first_seed, args.first_seed + args.runs)
    jobs = [(a, seed, parameters) for a in algorithms for seed in seeds]
    with ProcessPoolExecutor(args.jobs) as pool:
        frame = pd.concat(list(pool.map(one_run, jobs)))
    for algorithm in algorithms:
        group = frame[frame.algorithm == algorithm]
        kept = group[~group.pruned.astype(bool)]
        runs_with_kept = kept.run.nunique()
        rho = kept[["noisy_jaccard", "true_jaccard"]].corr("spearman").iloc[0, 1] if len(kept) > 1 else float("nan")
        covered = kept["true_jaccard_in_interval"].astype(float).mean() if "true_jaccard_in_interval" in kept else None
        figures = {
            "runs_with_kept": f"{runs_with_kept}/{args.runs}",
            "kept": len(kept),
            "median_true_jaccard": round(float(kept.true_jaccard.median()), 3),
            "significant": round(float((kept.true_pvalue < 0.01).mean()), 3),
            "spearman": round(float(rho), 3),
            "interval_coverage": None if covered is None else round(float(covered), 3),
            "median_abs_error_jaccard": round(float((kept.noisy_jaccard - kept.true_jaccard).abs().median()), 3),
        }
        print(algorithm, json.dumps(parameters), json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
