"""Quality of SerenadeES, SerenadeCS and NoSens on real and planted data, with true statistics.

Datasets (``../shared/data``): ``mammals`` (Boolean vs numeric), ``rwas`` (with
``benchmarks/rwas-types.json``), ``spi`` and ``nmes1988`` (numeric attributes on both
sides), and ``planted-numeric``: numeric-vs-numeric data generated here with known
answers (``make_planted(2500, n_left_boolean=0, n_left_numeric=20, n_right_numeric=20,
n_planted=4)``: four threshold-vs-threshold relations, 5 % noise). The real data's
types and bounds are read off the data (the runs are seeded anyway, so not private).

Runs use seeded noise (reproducible; the same distributions as the secure path).
Prints one line per (dataset, algorithm, ε) with, among the redescriptions *kept*
(not marked pruned): runs with anything kept, kept, distinct kept (after the exact
redundancy filter on the true intersections, overlap ≤ 0.5, pooled over each run),
median true Jaccard, share truly significant (p < 0.01), Spearman(noisy, true
Jaccard), coverage of the true Jaccard by the kept intervals, median |noisy − true|
Jaccard; the same for all returned redescriptions with ``--all``; and, on planted
data, how many planted relations some kept redescription recovers (true J ≥ 0.7 with
the planted attributes on both sides), pooled over the runs.

Usage::

    python benchmarks/quality_serenade.py [--datasets mammals,spi,nmes1988,planted-numeric]
        [--algorithms serenade-es,serenade-cs] [--epsilons 0.1,0.3,1] [--runs 5]
        [--parameters '{"budget_split": "0.6,0.3,0.1"}'] [--jobs 2] [--all] [--chosen]
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from dprm.data import load_two_view
from dprm.datasets import make_planted
from dprm.evaluation import true_statistics
from dprm.mining import make_miner
from dprm.mining.redundancy import filter_redundant
from dprm.privacy import Accountant, SeededNoise
from dprm.queries import document_redescriptions

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data"
TYPES = {"rwas": HERE / "rwas-types.json"}
PLANTED = {"planted-numeric": dict(n_rows=2500, n_left_boolean=0, n_left_numeric=20, n_right_numeric=20,
                                   n_planted=4, noise=0.05, random_state=11)}
_LOADED: dict[str, object] = {}


def _data(name: str):
    """``(data, planted relations or None)``, loaded once per process."""
    if name not in _LOADED:
        if name in PLANTED:
            planted = make_planted(**PLANTED[name])
            _LOADED[name] = (load_two_view(planted.left, planted.right, types=planted.types), planted.planted)
        else:
            _LOADED[name] = (load_two_view(DATA / name / "left.csv", DATA / name / "right.csv",
                                           types=TYPES.get(name), duplicate_names="rename"), None)
    return _LOADED[name]


def one_run(job: tuple[str, str, float, int, dict]) -> tuple[pd.DataFrame, int, list[int], dict]:
    """One seeded run: the true statistics, the distinct kept count, the planted relations found, the choices."""
    dataset, algorithm, epsilon, seed, parameters = job
    data, planted = _data(dataset)
    choices, noise = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    miner = make_miner(algorithm, **{**parameters, "epsilon": epsilon})
    miner.fit(data, accountant=Accountant(miner.epsilon, SeededNoise(noise)), rng=choices)
    document = miner.document()
    frame = true_statistics(document, data)
    frame["dataset"], frame["algorithm"], frame["epsilon"], frame["run"] = dataset, algorithm, epsilon, seed
    kept = [r for r in document_redescriptions(document, source="run") if not r.pruned]
    distinct = len(filter_redundant(kept, data=data, max_overlap=0.5)) if kept else 0
    found = []
    if planted is not None:
        for number, (left, right) in enumerate(planted):
            for r in kept:
                if left["attr"] in str(r.left) and right["attr"] in str(r.right):
                    truth = r.left.support(data.left), r.right.support(data.right)
                    union = np.count_nonzero(truth[0] | truth[1])
                    if union and np.count_nonzero(truth[0] & truth[1]) / union >= 0.7:
                        found.append(number)
                        break
    chosen = {key: round(value, 1) if isinstance(value, float) else value
              for key, value in getattr(miner, "chosen_", {}).items() if key != "score_range"}
    return frame, distinct, found, chosen


def _figures(group: pd.DataFrame, runs: int) -> dict:
    rho = group[["noisy_jaccard", "true_jaccard"]].corr("spearman").iloc[0, 1] if len(group) > 1 else float("nan")
    covered = group["true_jaccard_in_interval"].astype(float).mean() if "true_jaccard_in_interval" in group else None
    some = len(group) > 0
    return {
        "runs_with_any": f"{group.run.nunique()}/{runs}",
        "count": len(group),
        "median_true_jaccard": round(float(group.true_jaccard.median()), 3) if some else None,
        "significant": round(float((group.true_pvalue < 0.01).mean()), 3) if some else None,
        "spearman": None if np.isnan(rho) else round(float(rho), 3),
        "interval_coverage": None if covered is None or not some else round(float(covered), 3),
        "median_abs_error_jaccard": round(float((group.noisy_jaccard - group.true_jaccard).abs().median()), 3)
        if some else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="mammals,spi,nmes1988,planted-numeric")
    parser.add_argument("--algorithms", default="serenade-es,serenade-cs")
    parser.add_argument("--epsilons", default="0.1,0.3,1")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--parameters", default="{}", help="JSON object of miner parameters")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--all", action="store_true", help="also the figures of all returned redescriptions")
    parser.add_argument("--chosen", action="store_true",
                        help="also the first run's public choices (k, M or m, grid, split, sharpness)")
    args = parser.parse_args()
    parameters = json.loads(args.parameters)
    datasets, algorithms = args.datasets.split(","), args.algorithms.split(",")
    epsilons = [float(e) for e in args.epsilons.split(",")]
    jobs = [(d, a, e, seed, parameters) for d in datasets for a in algorithms for e in epsilons
            for seed in range(args.runs)]
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(one_run, jobs))
    frame = pd.concat([r[0] for r in results])
    tallies = {job[:3]: [] for job in jobs}
    first_choices = {}
    for job, (_, distinct, found, chosen) in zip(jobs, results):
        tallies[job[:3]].append((distinct, found))
        first_choices.setdefault(job[:3], chosen)
    for dataset in datasets:
        for algorithm in algorithms:
            for epsilon in epsilons:
                group = frame[(frame.dataset == dataset) & (frame.algorithm == algorithm) & (frame.epsilon == epsilon)]
                kept = group[~group.pruned.astype(bool)]
                figures = _figures(kept, args.runs)
                runs = tallies[(dataset, algorithm, epsilon)]
                figures["distinct_kept"] = sum(d for d, _ in runs)
                if PLANTED.get(dataset):
                    figures["planted_found"] = f"{len(set().union(*(set(f) for _, f in runs)))}/" \
                                               f"{PLANTED[dataset]['n_planted']}"
                line = [dataset, algorithm, f"eps={epsilon:g}", json.dumps(parameters), "kept:", json.dumps(figures)]
                if args.all:
                    line += ["all:", json.dumps(_figures(group, args.runs))]
                if args.chosen:
                    line += ["chosen (first run):", json.dumps(first_choices[(dataset, algorithm, epsilon)])]
                print(*line, flush=True)


if __name__ == "__main__":
    main()
