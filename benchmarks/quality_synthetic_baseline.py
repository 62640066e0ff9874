"""Quality of the DP synthetic-data baseline (MST or AIM from dpmm, then cartwheels), judged on the real rows.

For every dataset and ε, over seeded runs of :func:`dprm.evaluation.synthetic.run_synthetic`
(``mst-cartwheels`` by default), prints a JSON line per run as it ends, then one per
dataset and ε with the figures of
``benchmarks/quality_weak_signal.py``, computed the same way on the real rows
(:func:`dprm.evaluation.true_statistics`):

* ``runs_with_kept``, ``kept`` (not pruned by cartwheels on the synthetic table, all runs),
  ``significant`` (share of the kept ones with true p < 0.01);
* ``top10_true_jaccard``, ``top10_excess``: over the runs that keep something, the
  median of the top 10's median true Jaccard and true excess Jaccard (``J − J_ind``,
  ``J_ind = e/(a+b−e)``, ``e = ab/n``), the top 10 being the first ten kept and not
  redundant (Siren's filter at 0.9) in cartwheels' order;
* ``planted_found`` (planted data): planted relations with a kept redescription of true
  Jaccard ≥ 0.7 whose queries use an attribute of the planted queries on each side;
* ``dpmm_seconds``: median seconds of the synthesizer.

Datasets (``quality_weak_signal.dataset``): ``nmes1988-bounds`` (every numeric column
declared with its range as bounds), ``mammals-declared`` (``tests/data/mammals-types.json``),
``planted`` (2,500 rows, 150 Boolean vs 40 numeric attributes, the relations
``disjunction, interval, thresholds, threshold-or``, 5 % broken rows).

Needs dpmm's environment (``make synthetic``, or ``DPRM_DPMM_PYTHON``).

Usage::

    python benchmarks/quality_synthetic_baseline.py --datasets nmes1988-bounds,mammals-declared,planted \\
        --epsilons 0.3,1 --runs 5 --jobs 2
"""

from __future__ import annotations

import argparse
import json
import tempfile
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

from dprm.evaluation import true_statistics
from dprm.evaluation.synthetic import run_synthetic
from dprm.mining.redundancy import mark_redundant
from dprm.queries import document_redescriptions
from dprm.queries.normal_form import complete_attributes
from quality_weak_signal import FOUND_JACCARD, RELATIONS, dataset, relations_touched


def one_run(job: tuple) -> dict:
    name, data_seed, algorithm, epsilon, seed, parameters = job
    data, planted = dataset(name, data_seed)
    with tempfile.TemporaryDirectory() as work:
        document = run_synthetic(algorithm, data, epsilon=epsilon, seed=seed, work_dir=work, parameters=parameters)
    redescriptions = document_redescriptions(document)
    frame = true_statistics(document, data)
    shown = [i for i, r in enumerate(mark_redundant(redescriptions, max_overlap=0.9))
             if not r.pruned and not r.extra.get("redundant")]
    top = frame.set_index("index").loc[shown[:10]] if shown else frame.iloc[:0]
    top10 = (float(top.true_excess_jaccard.median()), float(top.true_jaccard.median())) if len(top) else None
    kept = frame[~frame.pruned.astype(bool)]
    found, complete = set(), complete_attributes(*data.views)
    for position, true_j in zip(kept["index"], kept.true_jaccard):
        if true_j >= FOUND_JACCARD:
            found |= relations_touched(redescriptions[int(position)], planted or [], complete)
    return {"kept": len(kept), "significant": int((kept.true_pvalue < 0.01).sum()), "top10": top10, "found": found,
            "seconds": document["parameters"]["dpmm_seconds"]}


def summary(results: list[dict], runs: int, planted: bool) -> dict:
    kept = sum(r["kept"] for r in results)
    tops = [r["top10"] for r in results if r["top10"] is not None]
    figures = {
        "runs_with_kept": f"{sum(r['kept'] > 0 for r in results)}/{runs}",
        "kept": kept,
        "significant": round(sum(r["significant"] for r in results) / kept, 3) if kept else None,
        "top10_true_jaccard": round(float(np.median([t[1] for t in tops])), 3) if tops else None,
        "top10_excess": round(float(np.median([t[0] for t in tops])), 3) if tops else None,
        "dpmm_seconds": round(float(np.median([r["seconds"] for r in results])), 1),
    }
    if planted:
        figures["planted_found"] = f"{len(set().union(*(r['found'] for r in results)))}/{len(RELATIONS)}"
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="nmes1988-bounds,mammals-declared,planted")
    parser.add_argument("--epsilons", default="0.3,1")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--algorithm", default="mst-cartwheels", choices=("mst-cartwheels", "aim-cartwheels"))
    parser.add_argument("--parameters", default="{}", help="JSON: the baseline's and cartwheels' parameters")
    parser.add_argument("--data-seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    parameters = json.loads(args.parameters)
    epsilons = [float(e) for e in args.epsilons.split(",")]
    for name in args.datasets.split(","):
        jobs = [(name, args.data_seed, args.algorithm, epsilon, seed, parameters)
                for seed in range(args.runs) for epsilon in epsilons]  # both ε early in a long run
        with ProcessPoolExecutor(args.jobs) as pool:
            futures = {pool.submit(one_run, job): k for k, job in enumerate(jobs)}
            results: list = [None] * len(jobs)
            for future in as_completed(futures):  # each run as it ends (a long benchmark shows progress)
                k = futures[future]
                results[k] = future.result()
                print(json.dumps({"run": {"dataset": name, "epsilon": jobs[k][3], "seed": jobs[k][4]},
                                  **{key: sorted(v) if isinstance(v, set) else v
                                     for key, v in results[k].items()}}), flush=True)
        planted = dataset(name, args.data_seed)[1] is not None
        for epsilon in epsilons:
            chosen = [r for job, r in zip(jobs, results) if job[3] == epsilon]
            print(json.dumps({"dataset": name, "algorithm": args.algorithm, "epsilon": epsilon, "runs": args.runs,
                              "parameters": parameters, **summary(chosen, args.runs, planted)},
                             ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
