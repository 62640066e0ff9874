"""Speed of the density estimate's learning (Hoeffding-tree chains) and of ISON's extraction.

Prints

* rows/s of one river ``HoeffdingTreeClassifier`` and of one compiled
  :class:`~dprm.itemsets.hoeffding.HoeffdingTreeLearner` on UCI mushroom (the same
  tree: nominal multiway splits, class-count leaves);
* rows/s of :class:`~dprm.itemsets.estimator.DensityEstimator` learning planted data
  of 20 discrete variables (5 categories each, every variable drawn from a random
  table given up to two earlier ones) for 1, 3 and 5 chains (20 trees per chain), at
  each stream length;
* the time ISON takes to extract the itemsets (θ = 0.1) from the estimate learned at
  each stream length: it reads only the estimate, so it should not grow with the
  number of rows once the trees have spent their size budget (``--max-nodes``, per
  tree; learning stays linear in the number of rows).

Each figure is the median of ``--repeats`` runs; compilation is warmed up first.

Usage::

    python benchmarks/bench_hoeffding.py [--rows 10000,100000,1000000] [--chains 1,3,5] [--repeats 3]
        [--skip-river] [--skip-ison] [--skip-mushroom] [--max-nodes 500,none]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dprm.itemsets.domains import encode_frame, infer_domains
from dprm.itemsets.estimator import MAX_NODES, DensityEstimator
from dprm.itemsets.hoeffding import HoeffdingTreeLearner
from dprm.itemsets.ison import run_ison

ROOT = Path(__file__).resolve().parents[1]
MUSHROOM = ROOT.parent / "shared" / "data" / "uci" / "mushroom.csv"


def planted_chain_data(n_rows: int, n_variables: int = 20, n_categories: int = 5, seed: int = 0) -> pd.DataFrame:
    """Rows of a random Bayesian network: each variable depends on up to two earlier ones.

    The network depends on ``seed`` only, so streams of different lengths share it.
    """
    structure = np.random.default_rng(seed)
    networks = []
    for j in range(n_variables):
        parents = sorted(structure.choice(j, size=min(j, int(structure.integers(0, 3))), replace=False)) if j else []
        networks.append((parents, structure.dirichlet(np.full(n_categories, 0.5), size=n_categories ** len(parents))))
    rng = np.random.default_rng([seed, n_rows])
    codes = np.zeros((n_rows, n_variables), dtype=np.int64)
    for j, (parents, table) in enumerate(networks):
        cell = np.zeros(n_rows, dtype=np.int64)
        for p in parents:
            cell = cell * n_categories + codes[:, p]
        u = rng.random(n_rows)[:, None]
        codes[:, j] = np.minimum((u > np.cumsum(table[cell], axis=1)).sum(axis=1), n_categories - 1)
    return pd.DataFrame({f"v{j:02d}": pd.Categorical.from_codes(codes[:, j], [f"c{k}" for k in range(n_categories)])
                         .astype(str) for j in range(n_variables)})


def median_time(work, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def bench_mushroom(repeats: int, skip_river: bool) -> None:
    frame = pd.read_csv(MUSHROOM, dtype=str, keep_default_na=False)
    frame = frame.loc[:, frame.nunique() > 1]
    domains = infer_domains(frame)
    codes = encode_frame(frame, domains)
    sizes = [d.size for d in domains.values()]
    attributes = list(range(1, len(sizes)))
    print(f"mushroom: {len(frame)} rows, {len(sizes)} columns; one tree for 'edibility' given the others")

    def ours() -> None:
        HoeffdingTreeLearner(0, attributes, sizes).learn(codes)

    ours()
    t = median_time(ours, repeats)
    print(f"  compiled HoeffdingTreeLearner  {len(frame) / t:12,.0f} rows/s")
    if not skip_river:
        from river.tree import HoeffdingTreeClassifier

        names = [f"x{j}" for j in range(len(sizes))]
        rows = [({names[a]: int(r[a]) for a in attributes}, int(r[0])) for r in codes]

        def river() -> None:
            model = HoeffdingTreeClassifier(leaf_prediction="mc", nominal_attributes=names[1:])
            for x, y in rows:
                model.learn_one(x, y)

        t = median_time(river, max(1, repeats // 3))
        print(f"  river HoeffdingTreeClassifier  {len(frame) / t:12,.0f} rows/s")


def bench_chains(rows_list: list[int], chains_list: list[int], repeats: int, skip_ison: bool,
                 max_nodes: int | None) -> None:
    print("planted data, 20 variables x 5 categories; learning (fit from a DataFrame) and ISON (theta = 0.1); "
          f"max_nodes = {max_nodes} per tree")
    print(f"  {'rows':>9} {'chains':>6} {'learn s':>8} {'rows/s':>10} {'nodes/chain':>12} {'ison s':>7} "
          f"{'itemsets':>8}")
    DensityEstimator(n_chains=1, passes=1, random_state=0).fit(planted_chain_data(2000))  # compile
    for n_rows in rows_list:
        frame = planted_chain_data(n_rows)
        for n_chains in chains_list:
            estimators = []

            def learn() -> None:
                estimators.append(DensityEstimator(n_chains=n_chains, max_nodes=max_nodes, passes=1,  # a stream
                                                   random_state=0).fit(frame))

            t = median_time(learn, repeats)
            estimator = estimators[-1]
            nodes = statistics.mean(sum(tree.n_nodes for tree in chain.trees) for chain in estimator.chains_)
            ison_text = ""
            if not skip_ison:
                runs = []
                ison_t = median_time(lambda: runs.append(run_ison(estimator, 0.1, max_seconds=600)), 1)
                ison_text = f"{ison_t:7.2f} {len(runs[-1].itemsets):8d}"
            print(f"  {n_rows:9,d} {n_chains:6d} {t:8.2f} {n_rows / t:10,.0f} {nodes:12,.0f} {ison_text}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="10000,100000,1000000")
    parser.add_argument("--chains", default="1,3,5")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-river", action="store_true")
    parser.add_argument("--skip-ison", action="store_true")
    parser.add_argument("--skip-mushroom", action="store_true")
    parser.add_argument("--max-nodes", default=str(MAX_NODES),
                        help="the trees' size budget(s), comma-separated; 'none' for no bound")
    args = parser.parse_args()
    if not args.skip_mushroom:
        bench_mushroom(args.repeats, args.skip_river)
    for budget in args.max_nodes.split(","):
        bench_chains([int(r) for r in args.rows.split(",")], [int(c) for c in args.chains.split(",")], args.repeats,
                     args.skip_ison, None if budget.strip().lower() == "none" else int(budget))


if __name__ == "__main__":
    main()
