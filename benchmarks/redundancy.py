"""How many redescriptions the miners return, and how many say something new (issue 9).

On ../shared/data/mammals, for CARTwheels (non-private) and each private miner (ε = 1,
one seeded run each: reproducible, so the output says it is not private; the
filter is the same code either way): the number of redescriptions

* ``returned``: in the miner's output (queries in normal form, sound on any data);
* ``dedup``: one per pair of normal forms, with the rules for complete attributes
  where the run may use them (CARTwheels: read off the data; private runs: none,
  nothing is declared public);
* ``shown``: after the redundancy filter (:func:`dprm.mining.redundancy.redundant`,
  ``max_overlap`` and ``support`` as given): exact overlaps of the true supports
  for CARTwheels, released values and provable containment only for the private
  miners;

and, computed on the true data, the share of distinct support pairs
``(supp(qL), supp(qR))`` and of distinct ``supp(qL) ∩ supp(qR)`` among the returned and
among the shown ones (``a -> b``), also among those not pruned. ``dedup_if_declared``
is what deduplication would give if the data owner declared the complete columns
(MAMMAL has no missing value; a private run may not read that off the data). The
filter's time is in the last column.

Usage::

    python benchmarks/redundancy.py [--algorithms cartwheels,alt-expm,alt-mcmc,mcmc-tree-pair,serenade-es]
        [--seed 0] [--epsilon 1] [--max-overlap 0.9] [--support intersection] [--jobs 1]
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from dprm.data import load_two_view
from dprm.mining import make_miner
from dprm.mining.redundancy import deduplicate, redundant
from dprm.privacy import Accountant, SeededNoise
from dprm.queries import complete_attributes

MAMMALS = Path(__file__).resolve().parents[2] / "shared" / "data" / "mammals"
_DATA = None


def _data():
    global _DATA
    if _DATA is None:
        _DATA = load_two_view(MAMMALS / "left.csv", MAMMALS / "right.csv", duplicate_names="rename")
    return _DATA


def mine(algorithm: str, seed: int, epsilon: float):
    data = _data()
    choices, noise = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    if algorithm == "cartwheels":
        return make_miner(algorithm).fit(data, rng=choices).redescriptions_
    miner = make_miner(algorithm, epsilon=epsilon)
    miner.fit(data, accountant=Accountant(miner.epsilon, SeededNoise(noise)), rng=choices)
    return miner.redescriptions_


def distinct(redescriptions, data) -> tuple[float, float]:
    """Shares of distinct true (supp(qL), supp(qR)) pairs and of distinct intersections."""
    if not redescriptions:
        return float("nan"), float("nan")
    cache: dict = {}

    def rows(side, q):
        if (side, q) not in cache:
            cache[(side, q)] = q.support(data.views[side])
        return cache[(side, q)]

    pairs, inters = set(), set()
    for r in redescriptions:
        left, right = rows(0, r.left), rows(1, r.right)
        pairs.add((np.packbits(left).tobytes(), np.packbits(right).tobytes()))
        inters.add(np.packbits(left & right).tobytes())
    return round(len(pairs) / len(redescriptions), 3), round(len(inters) / len(redescriptions), 3)


def one(job: tuple[str, int, float, list[float], str]) -> list[dict]:
    algorithm, seed, epsilon, overlaps, support = job
    data = _data()
    start = time.perf_counter()
    returned = mine(algorithm, seed, epsilon)
    mined = time.perf_counter() - start
    private = algorithm != "cartwheels"
    read_off = complete_attributes(*data.views)  # reads the rows: a non-private run only
    complete = frozenset() if private else read_off
    unique = deduplicate(returned, complete=complete)
    rows = []
    for max_overlap in overlaps:
        start = time.perf_counter()
        flags = redundant(unique, data=None if private else data, max_overlap=max_overlap, support=support,
                          complete=complete)
        seconds = time.perf_counter() - start
        shown = [r for r, f in zip(unique, flags) if f is None]
        kept = [r for r in returned if not r.pruned]
        kept_shown = [r for r in shown if not r.pruned]
        rows.append({
            "algorithm": algorithm, "max_overlap": max_overlap,
            "returned": len(returned), "dedup": len(unique),
            # what a public declaration of complete columns would add (hypothetical for private runs)
            "dedup_if_declared": len(deduplicate(returned, complete=read_off)),
            "shown": len(shown),
            "distinct_pairs": "{} -> {}".format(*(distinct(x, data)[0] for x in (returned, shown))),
            "distinct_inter": "{} -> {}".format(*(distinct(x, data)[1] for x in (returned, shown))),
            "unpruned": f"{len(kept)} -> {len(kept_shown)}",
            "unpruned_distinct_inter": "{} -> {}".format(*(distinct(x, data)[1] for x in (kept, kept_shown))),
            "mining_s": round(mined, 1), "filter_s": round(seconds, 2),
        })
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithms", default="cartwheels,alt-expm,alt-mcmc,mcmc-tree-pair,serenade-es")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--max-overlap", default="0.9", help="comma-separated thresholds")
    parser.add_argument("--support", default="intersection", choices=["intersection", "union"])
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    overlaps = [float(x) for x in args.max_overlap.split(",")]
    jobs = [(a, args.seed, args.epsilon, overlaps, args.support) for a in args.algorithms.split(",")]
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(one, jobs))
    else:
        results = [one(job) for job in jobs]
    columns = list(results[0][0])
    print("\t".join(columns))
    for rows in results:
        for row in rows:
            print("\t".join(str(row[c]) for c in columns), flush=True)


if __name__ == "__main__":
    main()
