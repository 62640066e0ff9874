"""Quality of SerenadeES, SerenadeCS and NoSens on MAMMAL and RWAS, with true statistics.

Issue 5's acceptance: at ε = 1 (split d3), 10 runs each, on ../shared/data/mammals and
on ../shared/data/rwas with ``benchmarks/rwas-types.json`` (the 22 answers of the right
view categorical): ES and CS return redescriptions in every run; among them median
true Jaccard ≥ 0.4 and Spearman(noisy, true Jaccard) ≥ 0.8; NoSens clearly worse.

Runs use seeded noise (reproducible; the same distributions as the secure path).
Prints one line per (dataset, algorithm): runs with results, number returned, median
true Jaccard, Spearman(noisy, true Jaccard), share truly significant (p < 0.01), the
same figures among the redescriptions not marked pruned, and the median |noisy − true|
Jaccard.

Usage::

    python benchmarks/quality_serenade.py [--datasets mammals,rwas]
        [--algorithms serenade-es,serenade-cs,serenade-es-nosens] [--runs 10]
        [--parameters '{"initial_pairs": 5}'] [--jobs 2]
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

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data"
TYPES = {"mammals": None, "rwas": HERE / "rwas-types.json"}
_LOADED: dict[str, object] = {}


def _data(name: str):
    if name not in _LOADED:
        _LOADED[name] = load_two_view(DATA / name / "left.csv", DATA / name / "right.csv",
                                      types=TYPES[name], duplicate_names="rename")
    return _LOADED[name]


def one_run(job: tuple[str, str, int, dict]) -> pd.DataFrame:
    dataset, algorithm, seed, parameters = job
    choices, noise = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    miner = make_miner(algorithm, **parameters)
    miner.fit(_data(dataset), accountant=Accountant(miner.epsilon, SeededNoise(noise)), rng=choices)
    frame = true_statistics(miner.document(), _data(dataset))
    frame["dataset"], frame["algorithm"], frame["run"] = dataset, algorithm, seed
    return frame


def _figures(group: pd.DataFrame, runs: int) -> dict:
    rho = group[["noisy_jaccard", "true_jaccard"]].corr("spearman").iloc[0, 1] if len(group) > 1 else float("nan")
    return {
        "runs_with_results": f"{group.run.nunique()}/{runs}",
        "returned": len(group),
        "median_true_jaccard": round(float(group.true_jaccard.median()), 3) if len(group) else None,
        "spearman": round(float(rho), 3),
        "significant": round(float((group.true_pvalue < 0.01).mean()), 3) if len(group) else None,
        "median_abs_error_jaccard": round(float((group.noisy_jaccard - group.true_jaccard).abs().median()), 3)
        if len(group) else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="mammals,rwas")
    parser.add_argument("--algorithms", default="serenade-es,serenade-cs,serenade-es-nosens")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--parameters", default="{}", help="JSON object of miner parameters")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    parameters = {"epsilon": 1.0, "budget_split": "0.6,0.3,0.1", **json.loads(args.parameters)}
    datasets, algorithms = args.datasets.split(","), args.algorithms.split(",")
    jobs = [(d, a, seed, parameters) for d in datasets for a in algorithms for seed in range(args.runs)]
    with ProcessPoolExecutor(args.jobs) as pool:
        frame = pd.concat(list(pool.map(one_run, jobs)))
    for dataset in datasets:
        for algorithm in algorithms:
            group = frame[(frame.dataset == dataset) & (frame.algorithm == algorithm)]
            kept = group[~group.pruned.astype(bool)]
            print(dataset, algorithm, json.dumps(parameters),
                  "all:", json.dumps(_figures(group, args.runs)),
                  "kept:", json.dumps(_figures(kept, args.runs)), flush=True)


if __name__ == "__main__":
    main()
