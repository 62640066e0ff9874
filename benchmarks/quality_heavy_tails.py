"""Heavy-tailed numeric data: the default miner with and without a declared log transform.

Loads ../shared/data/nmes1988 (health-care use: counts of visits, heavy-tailed) with
a types file that declares every numeric column's bounds (its range, a stand-in for
what the owner would declare) and, in the second setting, ``"transform": "log"`` for
the non-negative ones. For seeded runs of the default private miner it prints: runs
that keep something, kept, share significant (true p < 0.01), and over runs the
median of the top 10's median true excess Jaccard (``J − J_ind``) and true Jaccard,
beside non-private cartwheels on the same data (its top 10, by the same ranking).

Usage::

    python benchmarks/quality_heavy_tails.py --epsilons 1,0.3 --runs 5
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from dprm.data import load_two_view
from dprm.evaluation import true_statistics
from dprm.mining import default_algorithm, default_parameters, make_miner
from dprm.mining.redundancy import mark_redundant
from dprm.privacy import Accountant, SeededNoise

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "nmes1988"


def types(transform: bool) -> dict:
    columns: dict = {"row_id": "id"}
    for side in ("left", "right"):
        frame = pd.read_csv(DATA / f"{side}.csv")
        for name in frame.columns:
            if name != "row_id" and frame[name].dtype.kind in "if":
                low, high = float(frame[name].min()), float(frame[name].max())
                entry = {"type": "numeric", "bounds": [min(0.0, low), high]}
                if transform and low >= 0:
                    entry["transform"] = "log"
                columns[name] = entry
    return {"id_column": "row_id", "columns": columns}


def top10(miner, data) -> tuple[int, float, float, float]:
    shown = [r for r in mark_redundant(miner.redescriptions_, max_overlap=0.9)
             if not r.pruned and not r.extra.get("redundant")]
    if not shown:
        return 0, float("nan"), float("nan"), float("nan")
    document = {**miner.document(), "redescriptions": [r.to_json() for r in shown]}
    frame = true_statistics(document, data)
    top = frame.head(10)
    return (len(frame), float(top.true_excess_jaccard.median()), float(top.true_jaccard.median()),
            float((frame.true_pvalue < 0.01).mean()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", default="1,0.3")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for transform in (False, True):
        data = load_two_view(DATA / "left.csv", DATA / "right.csv", types=types(transform))
        label = "log transform declared" if transform else "bounds only"
        if not transform:
            cart = make_miner("cartwheels").fit(data, rng=np.random.default_rng(0))
            kept, excess, jaccard, significant = top10(cart, data)
            print(f"cartwheels (non-private): kept {kept}, significant {significant:.2f}, "
                  f"top-10 excess {excess:.3f}, J {jaccard:.3f}", flush=True)
        for epsilon in (float(e) for e in args.epsilons.split(",")):
            rows = []
            for seed in range(args.runs):
                choices, noise = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
                miner = make_miner(default_algorithm(epsilon), **default_parameters(epsilon), epsilon=epsilon)
                miner.fit(data, accountant=Accountant(epsilon, SeededNoise(noise)), rng=choices)
                rows.append(top10(miner, data))
            keeping = [r for r in rows if r[0]]
            print(f"default, ε={epsilon:g}, {label}: keeps in {len(keeping)}/{args.runs} runs, kept "
                  f"{sum(r[0] for r in rows)}, significant "
                  f"{np.mean([r[3] for r in keeping]) if keeping else float('nan'):.2f}, top-10 excess "
                  f"{np.median([r[1] for r in keeping]) if keeping else float('nan'):.3f}, J "
                  f"{np.median([r[2] for r in keeping]) if keeping else float('nan'):.3f}", flush=True)


if __name__ == "__main__":
    main()
