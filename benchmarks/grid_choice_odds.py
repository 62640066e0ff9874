"""How often the private grid choice picks each grid, with the grids' own row count or the run's.

For a dataset of ``quality_weak_signal.py``, repeats the grid choice of a default tree
miner's run at ε (:func:`dprm.mining.private_grids.choose_grids`, the default ``grid_share``)
over many noise seeds, and prints how often each member of the grid family was the
most common choice over the columns: ``own`` with the grids' own count (a tenth of
their budget, what ``--size-share 0`` does), ``shared`` with the count the tree miners
release before the grids (that tenth plus ``size_share`` of the rest; the default miner's
shares and grid size, 5 % and 5 %, 32 thresholds). Then the
mean spread score of each grid at the true number of rows. For docs/mining.md ("One
count of the rows for the grids and the run").

    python benchmarks/grid_choice_odds.py --dataset planted --epsilon 0.1 --draws 200
"""

from __future__ import annotations

import argparse
import collections
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from quality_weak_signal import dataset  # noqa: E402

from dprm.data.grid import GRID_FAMILY  # noqa: E402
from dprm.engine import InProcessEngine  # noqa: E402
from dprm.mining import default_algorithm, default_parameters, make_miner  # noqa: E402
from dprm.mining.private_grids import (COUNT_SHARE, GridCells, choosable, choose_grids, grid_bounds,  # noqa: E402
                                      spread_scores)
from dprm.privacy import Accountant, SeededNoise  # noqa: E402
from dprm.privacy.laplace import DiscreteLaplaceCount  # noqa: E402

#: The default tree miner's shares and grid size (read from it, so the figures follow its defaults).
_DEFAULT = make_miner(default_algorithm(1.0), **default_parameters(1.0))
GRID_SHARE = Fraction(str(_DEFAULT.grid_share))
SIZE_SHARE = Fraction(str(_DEFAULT.size_share))
MAX_SPLITS = int(_DEFAULT.max_splits)


def most_common(chosen: dict) -> str:
    return collections.Counter(chosen.values()).most_common(1)[0][0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="planted")
    parser.add_argument("--epsilon", default="0.1")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--data-seed", type=int, default=0)
    args = parser.parse_args()
    epsilon = Fraction(args.epsilon)
    grid = epsilon * GRID_SHARE
    shared_count = grid * COUNT_SHARE + (epsilon - grid) * SIZE_SHARE
    engine = InProcessEngine(dataset(args.dataset, args.data_seed)[0])
    own, shared = collections.Counter(), collections.Counter()
    for seed in range(args.draws):
        accountant = Accountant(1, SeededNoise(np.random.default_rng(seed)))
        own[most_common(choose_grids(engine, grid, accountant, max_splits=MAX_SPLITS))] += 1
        accountant = Accountant(1, SeededNoise(np.random.default_rng(seed)))
        n_hat = DiscreteLaplaceCount(shared_count).release(accountant, "data size", engine.n_rows)
        shared[most_common(choose_grids(engine, grid * (1 - COUNT_SHARE), accountant, max_splits=MAX_SPLITS,
                                        n_hat=n_hat))] += 1
    print(f"{args.dataset} at epsilon {float(epsilon):g}, {args.draws} draws of the common grid")
    print(f"  own count    (epsilon {float(grid * COUNT_SHARE):.2g}):", dict(own.most_common()))
    print(f"  shared count (epsilon {float(shared_count):.2g}):", dict(shared.most_common()))
    requests = [[(a.name, *grid_bounds(a)) for a in view.attributes if choosable(a)] for view in engine.schema.views]
    workers = engine.workers(GridCells)
    try:
        counts = [workers.sum("cell_counts", side, requests[side], MAX_SPLITS) if requests[side] else []
                  for side in (0, 1)]
    finally:
        workers.close()
    scores = np.mean([spread_scores(cells, engine.n_rows / (MAX_SPLITS + 1)) for side in (0, 1)
                      for cells in counts[side]], axis=0)
    print("  mean spread score at the true n:", {g: round(float(s)) for g, s in zip(GRID_FAMILY, scores)})


if __name__ == "__main__":
    main()
