"""How long the default miner's shown queries print: literal occurrences and characters per query.

The top ``--top`` of each run (kept, not redundant, in the order ``dprm mine`` shows them),
both queries of each, on the tables of ``quality_weak_signal.py`` (their types files as
there, no attribute declared complete unless a table's types declare it). A readability
figure (docs/mining.md, "Normal forms"): run it before and after a change of the normal
form with ``PYTHONPATH`` pointing at each source tree.

Usage::

    python benchmarks/query_lengths.py --datasets mammals,planted-heavy,latent-heavy --epsilon 1 --seeds 0,1,2
"""

from __future__ import annotations

import argparse

import numpy as np
from quality_weak_signal import dataset

from dprm.mining import default_algorithm, default_parameters, make_miner
from dprm.mining.redundancy import mark_redundant
from dprm.privacy import Accountant, SeededNoise


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="mammals,planted-heavy,latent-heavy,nmes1988-bounds")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    epsilon = args.epsilon
    for name in args.datasets.split(","):
        data, _ = dataset(name, 0)
        literals = characters = queries = 0
        for seed in (int(s) for s in args.seeds.split(",")):
            choices, noise = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
            miner = make_miner(default_algorithm(epsilon), **{**default_parameters(epsilon), "epsilon": epsilon})
            miner.fit(data, accountant=Accountant(miner.epsilon, SeededNoise(noise)), rng=choices)
            shown = [r for r in mark_redundant(miner.redescriptions_, max_overlap=0.9)
                     if not r.pruned and not r.extra.get("redundant")][:args.top]
            for query in (side for r in shown for side in (r.left, r.right)):
                literals += len(list(query.literals()))
                characters += len(str(query))
                queries += 1
        per = max(queries, 1)
        print(f"{name}: epsilon {epsilon:g}, {queries} queries, {literals / per:.2f} literals and "
              f"{characters / per:.1f} characters per query", flush=True)


if __name__ == "__main__":
    main()
