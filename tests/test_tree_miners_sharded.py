"""The private tree miners on a sharded counting engine give exactly the in-process output.

The rows are dealt into shards in this process (:class:`PartsEngine`: each part its
own :class:`~dprm.mining.tree_rows.TreeRows` worker; the driver holds a schema
without rows), so the whole sharded path (targets, lock-step chains, level-by-level
trees, extraction tables, scored targets) is checked without Ray; the Ray engine
itself is checked in ``tests/test_engine_ray.py``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from dprm.data import load_two_view
from dprm.data.attributes import TwoViewData
from dprm.datasets import make_planted
from dprm.engine import CountingEngine, GridCounts, InProcessEngine
from dprm.engine.literal_table import LiteralTable
from dprm.engine.table_counter import TableCounter
from dprm.engine.workers import LocalWorkers, ShardWorkers, add_answers
from dprm.mining.alternation import AlternatingTrees
from dprm.mining.cartwheels import CartWheels
from dprm.mining.serenade.reremi import ReReMi
from dprm.mining.tree_pair import MCMCTreePair
from dprm.privacy import Accountant, SeededNoise

ROOT = Path(__file__).resolve().parents[1]
MAMMALS = ROOT.parent / "shared" / "data" / "mammals"
MAMMALS_TYPES = ROOT / "tests" / "data" / "mammals-types.json"


def take(data: TwoViewData, rows: np.ndarray) -> TwoViewData:
    """The rows ``rows`` of ``data`` (same schema)."""
    views = [replace(view, attributes=[replace(a, values=a.values[rows]) for a in view.attributes])
             for view in data.views]
    return replace(data, left=views[0], right=views[1], ids=None)


class PartWorkers(ShardWorkers):
    def __init__(self, factory, parts) -> None:
        self.workers = [LocalWorkers(factory, part) for part in parts]
        self.n_shards = len(parts)
        self.calls: list[str] = []

    def call(self, method, *args):
        self.calls.append(method)
        return [w.call(method, *args)[0] for w in self.workers]


class PartsCounts(GridCounts):
    """The parts' :class:`TableCounter` answers, summed (what the Ray engine's driver does)."""

    def __init__(self, counters) -> None:
        self.counters = counters

    def _sum(self, method, *args):
        return add_answers([getattr(c, method)(*args) for c in self.counters])

    def literal_sizes(self, side):
        return self._sum("literal_sizes", side)

    def cells(self, left, right):
        return self._sum("cells", left, right)

    def extension_counts(self, left, right, sides):
        return self._sum("extension_counts", left, right, sides)

    def pair_intersections(self, side, requests):
        return self._sum("pair_intersections", side, requests)


class PartsEngine(CountingEngine):
    """The rows dealt at random into ``n`` parts, each counted on its own; the driver sees no row."""

    def __init__(self, data: TwoViewData, n: int, seed: int = 0) -> None:
        dealt = np.random.default_rng(seed).integers(n, size=data.n_rows)
        self.parts = [take(data, np.flatnonzero(dealt == k)) for k in range(n)]
        self.schema = take(data, np.array([], dtype=np.int64))
        self._rows = data.n_rows

    @property
    def n_rows(self) -> int:
        return self._rows

    def literal_tables(self, mode, max_splits):
        """The driver's tables (no rows); data-value thresholds merged from the parts, as on Ray."""
        given = self.data_thresholds(max_splits) if mode == "data" else (None, None)
        self.grid = (mode, max_splits, given)
        return tuple(LiteralTable(view, mode=mode, max_splits=max_splits, thresholds=t)
                     for view, t in zip(self.schema.views, given))

    def counts(self, mode, max_splits):
        """Every part counts on its own tables (on the merged thresholds); the answers are summed."""
        self.literal_tables(mode, max_splits)
        given = self.grid[2]
        return PartsCounts([TableCounter(tuple(LiteralTable(view, mode=mode, max_splits=max_splits, thresholds=t)
                                               for view, t in zip(part.views, given))) for part in self.parts])

    def workers(self, factory):
        self.opened = PartWorkers(factory, self.parts)
        return self.opened

    def use_transforms(self, transforms):
        self.parts = [part.with_transforms(transforms) for part in self.parts]
        self.schema = self.schema.with_transforms(transforms)


def document(miner, data) -> str:
    accountant = Accountant(miner.epsilon, SeededNoise(np.random.default_rng(11)))
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(3))
    return json.dumps({"document": miner.document(), "ledger": [str(e) for e in accountant.ledger]},
                      sort_keys=True, default=str)


@pytest.fixture(scope="module")
def planted() -> TwoViewData:
    p = make_planted(3001, n_planted=3, missing=0.02, random_state=5)
    return load_two_view(p.left, p.right, types=p.types)


@pytest.fixture(scope="module")
def mammals() -> TwoViewData:
    if not (MAMMALS / "left.csv").is_file():
        pytest.skip("the mammals data is not in ../shared/data")
    return load_two_view(MAMMALS / "left.csv", MAMMALS / "right.csv", types=MAMMALS_TYPES,
                         duplicate_names="rename")


# Chains of a few hundred steps: each step is checked (the sharded run must end where the in-process one
# ends, draw for draw), so longer chains repeat the same paths; the lock-step and variance-stop tests
# below count the steps of longer ones.
MINERS = {
    "mcmc-tree-pair": lambda: MCMCTreePair(init_trials=3, mcmc_iterations=500),
    # the first trees' chains on the shards, the second trees from the summed counts (dprm.mining.target_refinement)
    "mcmc-tree-pair-refined-target": lambda: MCMCTreePair(init_trials=3, mcmc_iterations=500,
                                                          second_tree="refined-target"),
    "mcmc-tree-pair-scored-fd": lambda: MCMCTreePair(init_trials=2, mcmc_iterations=300, targets="scored",
                                                     depth=3, target_binning="fd", counts="paper"),
    "mcmc-tree-pair-auto": lambda: MCMCTreePair(init_trials="auto", depth="auto", mcmc_iterations=300,
                                                targets="scored", target_share="auto", units="subtrees"),
    "alt-expm": lambda: AlternatingTrees(trees="exponential", init_trials=3, alternations=2),
    "alt-mcmc": lambda: AlternatingTrees(trees="mcmc", init_trials=2, mcmc_iterations=300,
                                         target_binning="fd"),
    "mcmc-tree-pair-by-depth": lambda: MCMCTreePair(init_trials=3, mcmc_iterations=400, mcmc_nodes="by-depth"),
    "alt-mcmc-by-depth": lambda: AlternatingTrees(trees="mcmc", init_trials=2, mcmc_iterations=250,
                                                  mcmc_nodes="by-depth"),
    "mcmc-tree-pair-anchored": lambda: MCMCTreePair(init_trials=3, mcmc_iterations=300, anchor="literal",
                                                    anchor_from=2),
    "mcmc-tree-pair-anchored-window": lambda: MCMCTreePair(init_trials=2, mcmc_iterations=300, anchor="attribute",
                                                           anchor_from=1, anchor_window=2),
    "literal-pairs": lambda: MCMCTreePair(trial="pair", init_trials=2),  # the pairs' scores summed over shards
    "refined-pairs": lambda: MCMCTreePair(trial="refined-pair", init_trials=2),  # and the refinements' counts
    # and the pairs' thresholds chosen again from the gain counts
    "refined-pairs-thresholds": lambda: MCMCTreePair(trial="refined-pair", init_trials=2, pair_thresholds="on"),
}


@pytest.fixture(scope="module")
def in_process() -> dict:
    """The in-process documents of a module's runs, by (dataset, miner): computed once for every shard count."""
    return {}


def once(cache: dict, key, compute):
    """``cache[key]``, computed by ``compute()`` the first time (the runs are seeded: the same each time)."""
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def covering(datasets: list[str], names: list[str], shard_counts: list[int], omit: frozenset = frozenset()) -> list:
    """Every (data set, miner) once but those in ``omit``, the shard counts in turn: each data set and each
    miner meets every count.

    A shard count changes only how the rows are dealt (each case checks the sum over its
    parts); running every miner at every count multiplied the sharded runs, not the paths.
    """
    cases = []
    for d, dataset in enumerate(datasets):
        for i, name in enumerate(names):  # the next data set shifts the counts by one: each miner meets another
            n = shard_counts[(i + d) % len(shard_counts)]
            if (dataset, name) not in omit:
                cases.append(pytest.param(dataset, name, n, id=f"{dataset}-{name}-{n}"))
    return cases


# Depth 3 (scored targets, Freedman-Diaconis bins) on the planted data only, where the targets have missing
# values: its runs take 3-4 CPU-seconds each whatever the data (the extractions' selection bands, the same
# code on any engine), and mammals added two of them for the same path.
@pytest.mark.parametrize("dataset, name, n_shards", covering(["planted", "mammals"], list(MINERS), [2, 3],
                                                           omit=frozenset({("mammals", "mcmc-tree-pair-scored-fd")})))
def test_sharded_tree_miners_give_the_in_process_output(name, n_shards, dataset, request, in_process) -> None:
    data = request.getfixturevalue(dataset)
    local = once(in_process, (dataset, name), lambda: document(MINERS[name](), data))
    if dataset == "planted" and name != "mcmc-tree-pair-scored-fd":
        # the in-process engine is the data itself (each miner once: on one data set; MCMCTreePair's
        # other three variants check it for the depth-3 one, whose runs cost 3-4 CPU-seconds each)
        assert document(MINERS[name](), InProcessEngine(data)) == local
    sharded = document(MINERS[name](), PartsEngine(data, n_shards))
    assert sharded == local
    assert json.loads(local)["document"]["redescriptions"] or name == "alt-expm"  # not two empty runs
    if name == "refined-pairs-thresholds":  # the step ran (a pair with one numeric literal)
        assert "pair thresholds 1" in local or "pair thresholds 2" in local


# cartwheels-deep: one trial of two alternations (three trees of depth 4, 75-260 redescriptions); three of
# three (twelve trees) took five times the CPU for the same level-by-level requests.
BASELINES = {
    "reremi": lambda: ReReMi(initial_pairs=6, extensions=4, max_splits=12),
    "reremi-defaults": lambda: ReReMi(initial_pairs=3),
    "cartwheels": lambda: CartWheels(init_trials=6, alternations=2, depth=3, max_splits=10),
    "cartwheels-deep": lambda: CartWheels(init_trials=1, alternations=2, depth=4, min_leaf=2),
}


def baseline_document(miner, data) -> str:
    miner.fit(data, rng=np.random.default_rng(7))
    return json.dumps(miner.document(), sort_keys=True, default=str)


@pytest.fixture(scope="module")
def planted_numeric() -> TwoViewData:
    """Planted data with numeric attributes on both sides, missing values, ties (values rounded) and
    attributes with few distinct values (the distinct-value thresholds) as well as many (the quantile ones)."""
    p = make_planted(2501, n_left_boolean=6, n_left_numeric=8, n_right_boolean=3, n_right_numeric=8, n_planted=3,
                     missing=0.03, random_state=8)
    left, right = p.left.copy(), p.right.copy()
    numeric_left = [c for c in left.columns if c.startswith("l_num")]
    numeric_right = [c for c in right.columns if c.startswith("r_num")]
    left[numeric_left[-1]] = left[numeric_left[-1]].round(0)  # few distinct values
    right[numeric_right[-2:]] = right[numeric_right[-2:]].round(1)  # many ties
    return load_two_view(left, right, types=p.types)


# ReReMi at its defaults on the planted and mammals data: on planted_numeric (16 numeric attributes at 40 cut
# points) its initial pairs took 3 CPU-seconds per run; its merged cut points there are compared below.
@pytest.mark.parametrize("dataset, name, n_shards",
                         covering(["planted", "planted_numeric", "mammals"], list(BASELINES), [2, 3, 4],
                                  omit=frozenset({("planted_numeric", "reremi-defaults")})))
def test_sharded_baselines_give_the_in_process_output(name, n_shards, dataset, request, in_process) -> None:
    """ReReMi and CARTwheels: thresholds at data values merged from the parts, counts summed: the same output."""
    data = request.getfixturevalue(dataset)
    local = once(in_process, ("baseline", dataset, name), lambda: baseline_document(BASELINES[name](), data))
    engine = PartsEngine(data, n_shards, seed=n_shards)
    assert baseline_document(BASELINES[name](), engine) == local
    assert json.loads(local)["redescriptions"]  # not two empty runs
    if name.startswith("cartwheels"):
        assert {"start_tree", "level_counts", "route", "finish_tree", "cell_table"} <= set(engine.opened.calls)


@pytest.mark.parametrize("max_splits", [12, ReReMi().max_splits, CartWheels().max_splits])
def test_the_data_cut_points_merged_from_the_parts_are_those_of_all_rows(planted_numeric, max_splits) -> None:
    """The baselines' grids (ReReMi's and CARTwheels' defaults among them): every attribute's cut points."""
    merged = PartsEngine(planted_numeric, 4, seed=4).data_thresholds(max_splits)
    for side, view in enumerate(planted_numeric.views):
        expected = LiteralTable(view, mode="data", max_splits=max_splits).index.thresholds
        assert len(merged[side]) == len(expected) == len(view.attributes)
        assert all(np.array_equal(m, e) for m, e in zip(merged[side], expected)), (side, max_splits)
    assert sum(len(t) > 0 for t in merged[0] + merged[1]) == 16  # every numeric attribute has cut points


def test_sharded_baselines_with_an_empty_shard_give_the_in_process_output(planted_numeric, in_process) -> None:
    """A shard without rows (more shards than row groups) summarises no values and counts nothing."""
    for name in ("reremi", "cartwheels"):
        local = once(in_process, ("baseline", "planted_numeric", name),
                     lambda: baseline_document(BASELINES[name](), planted_numeric))
        engine = PartsEngine(planted_numeric, 2)
        engine.parts.insert(1, take(planted_numeric, np.array([], dtype=np.int64)))
        assert baseline_document(BASELINES[name](), engine) == local


@pytest.mark.parametrize("miner, most_steps", [
    (MCMCTreePair(init_trials=3, mcmc_iterations=4000, mcmc_stop="variance", variance_window=50,
                  variance_threshold=0.3, pair_score="gini", trial="trees"), 4000),
    (AlternatingTrees(trees="mcmc", init_trials=2, mcmc_iterations=3000, mcmc_stop="variance", variance_window=40,
                      variance_threshold=1.0), 4 * 3000),
], ids=["mcmc-tree-pair", "alt-mcmc"])
def test_the_variance_stop_stops_the_sharded_chains_where_it_stops_the_in_process_ones(planted, miner,
                                                                                      most_steps) -> None:
    steps = {}
    engine = PartsEngine(planted, 3)
    for name, data in (("local", planted), ("sharded", engine)):
        seen = []
        accountant = Accountant(1.0, SeededNoise(np.random.default_rng(11)))
        miner.fit(data, accountant=accountant, rng=np.random.default_rng(3), progress=lambda d, t: seen.append(d))
        steps[name] = (json.dumps(miner.document(), sort_keys=True, default=str),
                       [str(e) for e in accountant.ledger], seen[-1])
    assert steps["sharded"] == steps["local"]
    assert "data-dependent stop" in " ".join(steps["local"][1])
    assert 100 < engine.opened.calls.count("chain_step") < most_steps * 0.9  # the chains stopped early


def test_every_miner_counts_through_the_engine_and_is_listed_as_sharded() -> None:
    from dprm.mining import ALGORITHMS, make_miner, sharded_algorithms

    assert sharded_algorithms() == list(ALGORITHMS)
    assert all(make_miner(n).counts_through_engine for n in ALGORITHMS)  # the instances, as the refusals ask


def test_the_chains_run_in_lock_step_and_an_extraction_is_one_request(planted) -> None:
    """Three chains of 700 steps: at most 700 step requests (one carries a step of every chain).

    The paper's variant: its initial targets are drawn before the data are read, so the
    chains can run together (scored targets are chosen one after the other's release).
    """
    engine = PartsEngine(planted, 2)
    document(MCMCTreePair(variant="paper", init_trials=3, mcmc_iterations=700), engine)
    calls = engine.opened.calls
    assert calls.count("start_chains") == 1
    assert 600 < calls.count("chain_step") <= 700  # a step whose proposals change nothing sends none
    assert calls.count("cell_table") == 3
    assert set(calls) == {"attribute_classes", "start_chains", "chain_step", "end_chains", "forget", "cell_table"}
