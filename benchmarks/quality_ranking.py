"""Top-10 of a miner's results under different rankings, judged by true excess over independence.

For seeded runs of a miner on the benchmark datasets of ``quality_weak_signal.py``,
keeps what ``dprm mine`` shows (not pruned, not redundant) and prints, per run and
ranking, the median true excess Jaccard (``J − J_ind``, ``J_ind = e/(a+b−e)``,
``e = ab/n``) and the median true Jaccard index of the top 10:

* ``J``: by the released Jaccard index (the ranking before the excess was known);
* ``J+x/2``: by ``J + ½·excess`` (:func:`dprm.mining.ranking.finding_key`, the default);
* ``excess``: by the released excess alone.

Usage::

    python benchmarks/quality_ranking.py --datasets mammals,planted --epsilon 1 --miner default --runs 5
    python benchmarks/quality_ranking.py --datasets mammals,planted --miner cartwheels --runs 1
"""

from __future__ import annotations

import argparse

import numpy as np

from quality_weak_signal import dataset

from dprm.evaluation import true_statistics
from dprm.mining import default_algorithm, default_parameters, make_miner
from dprm.mining.redundancy import mark_redundant
from dprm.privacy import Accountant, SeededNoise


def top10(name: str, miner_name: str, epsilon: float, seed: int) -> dict[str, tuple[float, float]]:
    data, _ = dataset(name, 0)
    choices, noise = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    if miner_name == "default":
        algorithm, parameters = default_algorithm(epsilon), default_parameters(epsilon)
    else:
        algorithm, parameters = miner_name, {}
    private = algorithm not in ("cartwheels", "reremi")
    miner = make_miner(algorithm, **parameters, **({"epsilon": epsilon} if private else {}))
    miner.fit(data, accountant=Accountant(miner.epsilon, SeededNoise(noise)) if private else None, rng=choices)
    shown = mark_redundant(miner.redescriptions_, max_overlap=0.9)
    frame = true_statistics(miner.document(), data)
    keep = [i for i, r in enumerate(shown) if not r.pruned and not r.extra.get("redundant")]
    frame = frame.iloc[keep].copy()
    frame["noisy_excess"] = [shown[i].extra["independence"]["excess"] for i in keep]
    orders = {"J": frame.noisy_jaccard, "J+x/2": frame.noisy_jaccard + 0.5 * frame.noisy_excess,
              "excess": frame.noisy_excess}
    result = {"kept": len(frame)}
    for label, score in orders.items():
        top = frame.loc[score.sort_values(ascending=False, kind="stable").index[:10]]
        result[label] = (round(float(top.true_excess_jaccard.median()), 3), round(float(top.true_jaccard.median()), 3))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="mammals,planted")
    parser.add_argument("--miner", default="default")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for name in args.datasets.split(","):
        rows = [top10(name, args.miner, args.epsilon, seed) for seed in range(args.runs)]
        print(f"{name} {args.miner} ε={args.epsilon:g}  (median true excess, median true J) of the top 10", flush=True)
        for row in rows:
            print("   ", row, flush=True)
        for label in ("J", "J+x/2", "excess"):
            pairs = [row[label] for row in rows if not np.isnan(row[label][0])]
            if pairs:
                print(f"    median over runs, {label:>6}: excess {np.median([p[0] for p in pairs]):.3f}, "
                      f"J {np.median([p[1] for p in pairs]):.3f}", flush=True)


if __name__ == "__main__":
    main()
