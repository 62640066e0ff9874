"""Progress reports of long runs: data-independent totals, in order, ending at the total."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from dprm.data import load_two_view
from dprm.datasets import make_planted
from dprm.mining import ALGORITHMS, Progress, make_miner
from dprm.privacy import Accountant, SecureNoise, SeededNoise

FAST = {
    "cartwheels": {"depth": 2, "init_trials": 3, "alternations": 2},
    "alt-expm": {"depth": 2, "init_trials": 2, "alternations": 2},
    "alt-mcmc": {"depth": 2, "init_trials": 2, "mcmc_iterations": 3000},
    "mcmc-tree-pair": {"depth": 2, "init_trials": 3, "mcmc_iterations": 5000},
    "serenade-cs": {"initial_pairs": 3, "extensions": 2},
    "serenade-es": {"initial_pairs": 3, "extensions": 4},
    "serenade-es-nosens": {},  # auto: the totals are the rule's largest k and M
    "reremi": {"initial_pairs": 3, "extensions": 2},
}


@pytest.fixture(scope="module")
def datasets():
    out = []
    for rows, seed in ((400, 1), (1200, 2)):
        raw = make_planted(rows, n_planted=2, noise=0.05, random_state=seed)
        out.append(load_two_view(raw.left, raw.right, types=raw.types))
    return out


def record(algorithm: str, data, **options) -> tuple[list[tuple[int, int]], object]:
    calls: list[tuple[int, int]] = []
    miner = make_miner(algorithm, **{**FAST[algorithm], **options})
    accountant = None if algorithm in ("cartwheels", "reremi") else Accountant(1, SeededNoise(np.random.default_rng(0)))
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(0), progress=lambda d, t: calls.append((d, t)))
    return calls, miner


def check_calls(calls: list[tuple[int, int]], total: int) -> None:
    assert calls, "no progress reported"
    assert {t for _, t in calls} == {total}  # the total never changes
    done = [d for d, _ in calls]
    assert done == sorted(done) and done[0] >= 0  # monotone
    assert calls[-1] == (total, total)  # ends at the total
    assert len(calls) <= 102  # about every 1 %, not every step


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_progress_is_monotone_ends_at_its_total_and_the_total_ignores_the_data(datasets, algorithm) -> None:
    totals = []
    for data in datasets:
        calls, miner = record(algorithm, data)
        check_calls(calls, miner.work())
        totals.append(miner.work())
    assert totals[0] == totals[1]
    assert make_miner(algorithm, **FAST[algorithm]).work() == totals[0]  # known before any data


def test_the_totals_are_the_documented_units() -> None:
    assert make_miner("cartwheels", init_trials=5, alternations=3).work() == 20  # trees
    assert make_miner("alt-expm", init_trials=5, alternations=3).work() == 35  # releases: InTr (2 RMIter + 1)
    assert make_miner("alt-mcmc", init_trials=2, alternations=1, mcmc_iterations=100).work() == \
        2 * 2 * 100 + 2 * 10_000  # chain steps, an extraction as 10,000
    assert make_miner("mcmc-tree-pair", init_trials=4, mcmc_iterations=500).work() == 4 * (500 + 10_000)
    assert make_miner("serenade-cs", initial_pairs=5, extensions=3).work() == 5 + 5 * 3
    assert make_miner("serenade-es").work() == 20 + 80  # auto: the rule's largest k and M
    assert make_miner("reremi", initial_pairs=4, extensions=2).work() == 12


@pytest.mark.parametrize("algorithm", ["alt-mcmc", "mcmc-tree-pair"])
def test_a_chain_stopped_by_the_variance_rule_still_ends_at_the_total(datasets, algorithm) -> None:
    calls, miner = record(algorithm, datasets[0], mcmc_stop="variance", variance_window=20,
                          variance_threshold=1e9)  # stops after 20 steps
    check_calls(calls, miner.work())


def test_chains_report_during_the_run(datasets) -> None:
    calls, miner = record("mcmc-tree-pair", datasets[0], init_trials=2, mcmc_iterations=200_000, trial="trees")
    check_calls(calls, miner.work())
    inside = [d for d, _ in calls if 0 < d < 2 * 200_000]
    assert len(inside) >= 50  # many reports while the chains run, not one per chain


def test_secure_runs_report_too(datasets) -> None:
    calls: list[tuple[int, int]] = []
    miner = make_miner("alt-mcmc", **FAST["alt-mcmc"])
    miner.fit(datasets[0], accountant=Accountant(1, SecureNoise()), progress=lambda d, t: calls.append((d, t)))
    check_calls(calls, miner.work())


def test_progress_from_several_threads_stays_in_order() -> None:
    calls: list[tuple[int, int]] = []
    progress = Progress(lambda d, t: calls.append((d, t)), 8 * 5000)

    def work() -> None:
        for _ in range(5000):
            progress.advance(1)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    progress.finish()
    check_calls(calls, 40_000)


def test_parts_spread_units_over_steps_known_later() -> None:
    calls: list[tuple[int, int]] = []
    progress = Progress(lambda d, t: calls.append((d, t)), 100)
    part = progress.part(80, 3)  # 80 units reserved, the run chose 3 steps
    for _ in range(3):
        part.advance()
    assert progress.done == 80
    progress.part(20, 7).finish()
    assert calls[-1] == (100, 100)
    silent = Progress(None, 10)
    silent.advance(5)
    silent.finish()  # no callback: nothing happens
