"""Every reported interval holds its estimate, for every private miner on planted data (issue 9).

The printed Jaccard interval sometimes excluded the point estimate
(``J = 0.983 [0.00, 0.70]``): with seeds 1–3 on planted data, 7/67, 3/73 and 6/96
intervals did. The cause and the fix are in
:func:`dprm.mining.interval_estimates.credible_interval`. Coverage of the *true*
statistics is measured here as well and asserted only loosely: extraction returns
what the noise favoured among many candidates (the winner's curse), so the coverage
of what is returned is below the nominal 95 % for the tree-based miners; the nominal
coverage of a fixed redescription is tested in ``test_private_extraction.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from dprm.data import load_two_view
from dprm.datasets import make_planted
from dprm.evaluation.true_statistics import true_statistics
from dprm.mining import make_miner
from dprm.mining.interval_estimates import INTERVAL_KEY
from dprm.privacy import Accountant, SeededNoise

PRIVATE = ["alt-expm", "alt-mcmc", "mcmc-tree-pair", "serenade-cs", "serenade-es"]
FAST = {"alt-expm": {"init_trials": 3}, "alt-mcmc": {"init_trials": 3, "mcmc_iterations": 300},
        "mcmc-tree-pair": {"init_trials": 3, "mcmc_iterations": 300},
        # three pairs: the auto rule picks one on 800 rows, too few results to measure a coverage
        "serenade-cs": {"initial_pairs": 3}, "serenade-es": {}}
STATISTICS = ("jaccard", "intersection", "support_left", "support_right", "p_value")
SEEDS = (1, 2, 3)


@pytest.fixture(scope="module")
def planted():
    out = {}
    for seed in SEEDS:
        raw = make_planted(800, n_planted=2, noise=0.02, missing=0.02, random_state=seed)
        out[seed] = load_two_view(raw.left, raw.right, types=raw.types)
    return out


@pytest.mark.parametrize("algorithm", PRIVATE)
@pytest.mark.parametrize("counts", ["cells", "paper"])
def test_every_interval_holds_its_estimate_and_coverage_is_measured(planted, algorithm, counts) -> None:
    if counts == "paper" and algorithm.startswith("serenade"):
        pytest.skip("the Serenade miners release 2x2 tables, not tree pairs")
    options = {**FAST[algorithm], **({"counts": counts} if not algorithm.startswith("serenade") else {})}
    n_intervals, covered = 0, []
    for seed in SEEDS:
        data = planted[seed]
        accountant = Accountant(1.0, SeededNoise(np.random.default_rng(seed)))
        miner = make_miner(algorithm, epsilon=1.0, **options).fit(data, accountant=accountant,
                                                                  rng=np.random.default_rng(seed))
        for r in miner.redescriptions_:
            interval = r.extra[INTERVAL_KEY]
            n_intervals += 1
            for key in STATISTICS:
                low, high = interval[key]
                assert low <= getattr(r.stats, key) <= high, (seed, key, getattr(r.stats, key), interval[key])
        truth = true_statistics(miner.document(), data)
        if len(truth):
            covered += truth["true_jaccard_in_interval"].astype(bool).tolist()
    assert n_intervals > 0
    # Loose, honest floor: measured 0.67-1.0 over these runs (0.75 for MCMCTreePair; selection lowers it).
    assert np.mean(covered) >= 0.4, np.mean(covered)
