"""The Ray engine: loopback only, the same output as in-process, a lost shard is a clean error.

One local Ray for the Ray modules (``ray_session`` of ``tests/conftest.py``: started on
loopback by ``start_ray`` once, stopped after them); every engine starts its own shard
actors on it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprm.data import load_two_view
from dprm.datasets import make_planted
from dprm.engine.literal_table import LiteralTable
from dprm.engine.sharding import ShardSpec
from dprm.errors import DprmError, EngineError
from dprm.mining.alternation import AlternatingTrees
from dprm.mining.cartwheels import CartWheels
from dprm.mining.serenade.reremi import ReReMi
from dprm.mining.serenade import SerenadeCS, SerenadeES
from dprm.mining.tree_pair import MCMCTreePair
from dprm.privacy import Accountant, SeededNoise

from test_cli import run
from test_engine_sharding import REFUSED, TEXT_CASES, write_text_cases

# One xdist worker runs the Ray modules (this, test_engine_ray_cluster.py and test_evaluate_engine.py; make test: --dist
# loadgroup), one after the other, on one local Ray started once for them (conftest's ray_session).
pytestmark = [pytest.mark.ray, pytest.mark.xdist_group("ray")]

psutil = pytest.importorskip("psutil")
ray_engine = pytest.importorskip("dprm.engine.ray_engine")

ROOT = Path(__file__).resolve().parents[1]
MAMMALS = ROOT.parent / "shared" / "data" / "mammals"
MAMMALS_TYPES = ROOT / "tests" / "data" / "mammals-types.json"


@pytest.fixture(scope="module")
def planted_files(tmp_path_factory) -> tuple[Path, Path, Path]:
    """Planted data (Boolean left, numeric right with missing values) as CSV files and a types file."""
    folder = tmp_path_factory.mktemp("planted")
    planted = make_planted(3001, n_planted=3, missing=0.02, random_state=5)
    planted.left.to_csv(folder / "left.csv", index=False)
    planted.right.to_csv(folder / "right.csv", index=False)
    (folder / "types.json").write_text(json.dumps(planted.types))
    return folder / "left.csv", folder / "right.csv", folder / "types.json"


def _mammals() -> tuple[Path, Path, dict]:
    if not (MAMMALS / "left.csv").is_file():
        pytest.skip("the mammals data is not in ../shared/data")
    return MAMMALS / "left.csv", MAMMALS / "right.csv", {"types": MAMMALS_TYPES, "duplicate_names": "rename"}


def _document(miner_class, data, **parameters) -> str:
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(11)))
    miner = miner_class(**parameters).fit(data, accountant=accountant, rng=np.random.default_rng(3))
    document = miner.document()
    return json.dumps({"document": document, "ledger": [str(e) for e in accountant.ledger]}, sort_keys=True,
                      default=str)


@pytest.fixture(scope="module")
def in_process() -> dict:
    """The in-process documents of the module's runs, computed once for both shard counts."""
    return {}


def _once(cache: dict, key, compute) -> str:
    """``cache[key]``, computed by ``compute()`` the first time (seeded runs: the same every time)."""
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def _inet_sockets(process) -> list:
    try:
        return process.net_connections(kind="inet")
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return []


def test_every_socket_of_the_driver_and_of_all_ray_processes_is_on_loopback(engines) -> None:
    """While a job runs: each local and remote address of every inet socket is a loopback address.

    On the module's engine of the planted data on 3 shards (the module's first test in file
    order: the engine opens while the watch runs, which also sees its actors start).
    """
    seen: list = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            driver = psutil.Process()
            for process in [driver, *driver.children(recursive=True)]:
                seen.extend((process.pid, c) for c in _inet_sockets(process))
            stop.wait(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        engine = engines("planted", 3)
        SerenadeES(initial_pairs=3, extensions=6).fit(engine, accountant=Accountant(
            1.0, SeededNoise(np.random.default_rng(0))))
    finally:
        stop.set()
        watcher.join()
    shard_pids = {r["pid"] for r in engine.shard_resources()}
    assert shard_pids <= {pid for pid, _ in seen}  # the shard actors were among the processes checked
    assert len(seen) > 10  # the GCS, the raylet, the workers and the driver all hold sockets
    wrong = []
    for pid, connection in seen:
        for address in (connection.laddr, connection.raddr):
            if not address:
                continue  # a listening socket has no remote end
            ip = ipaddress.ip_address(address.ip.split("%")[0])
            mapped = getattr(ip, "ipv4_mapped", None)
            if not (mapped or ip).is_loopback:  # 0.0.0.0 and :: (every interface) are not loopback either
                wrong.append((pid, address, connection.status))
    assert wrong == []


def test_the_shard_actors_import_dprm_from_where_the_driver_does_and_hold_the_loopback_environment(engines) -> None:
    """A local Ray's workers inherit the environment ``start_ray`` sets while Ray starts (no runtime environment)."""
    import dprm

    def where(actor) -> tuple:  # runs in the shard actor's process (a nested function: sent by value)
        import os
        import sys
        return sys.modules["dprm"].__file__, {name: os.environ.get(name) for name in ray_engine.LOOPBACK_ENVIRONMENT}

    engine = engines("planted", 3)
    answers = engine._ray.get([actor.__ray_call__.remote(where) for actor in engine.actors])
    assert answers == [(dprm.__file__, ray_engine.LOOPBACK_ENVIRONMENT)] * 3


# The equal-output tests below cover each miner on each data set once: mammals on 2 shards, the planted data
# on 3 (an uneven deal of 3,001 rows), so each miner meets both shard counts. The shard count changes only
# how the rows are dealt, which every case checks: running every miner on both counts added time, not
# coverage, and so did each data set on both (two more engines, five more shard actors to start).
# The shard count is the indirect parameter of the ``mammals_engine`` and ``planted_engine`` fixtures.
MAMMALS_SHARDS, PLANTED_SHARDS = (2,), (3,)


def _sharded(cases: list, ids: list[str], fixture: str, shard_counts: tuple[int, ...]) -> dict:
    """``cases`` with the shard counts in turn as the ``fixture``'s indirect parameter (ids say which)."""
    counts = [shard_counts[i % len(shard_counts)] for i in range(len(cases))]
    return dict(argvalues=[(*case, n) for case, n in zip(cases, counts)],
                ids=[f"{n}-shards-{name}" for name, n in zip(ids, counts)], indirect=[fixture])


@pytest.fixture(scope="module")
def engines(ray_session, planted_files):
    """``engines(data set, shards)``: one engine per data set and number of shards, opened when first asked
    for and shared by the miners till the module ends (their runs must not disturb each other).

    Not module-scoped fixtures parametrised indirectly: pytest groups such cases by the parameter's
    index in each parametrisation, not by its value, and opened an engine for nearly every case.
    """
    opened: dict = {}
    with contextlib.ExitStack() as stack:
        def engine(dataset: str, shards: int):
            if (dataset, shards) not in opened:
                if dataset == "mammals":
                    left, right, options = _mammals()
                    spec = ShardSpec.of(left, right, **options)
                else:
                    left, right, types = planted_files
                    spec = ShardSpec.of(left, right, types=types)
                opened[dataset, shards] = stack.enter_context(ray_engine.RayEngine(spec, shards=shards))
            return opened[dataset, shards]

        yield engine


@pytest.fixture
def mammals_engine(request, engines):
    """The module's engine on mammals with ``request.param`` shards."""
    return engines("mammals", request.param)


@pytest.fixture
def planted_engine(request, engines):
    """The module's engine on the planted data with ``request.param`` shards."""
    return engines("planted", request.param)


@pytest.mark.parametrize("miner_class, parameters, mammals_engine", **_sharded([
    (SerenadeES, {"initial_pairs": 4, "extensions": 10}),
    (SerenadeES, {}),  # the auto rule (grid, k, M) after the noisy row count
    (SerenadeCS, {"initial_pairs": 3, "extensions": 2}),
], ["es", "es-auto", "cs"], "mammals_engine", MAMMALS_SHARDS))
def test_greedy_miners_give_the_same_output_on_ray_as_in_process_on_mammals(mammals_engine, miner_class,
                                                                            parameters, in_process) -> None:
    left, right, options = _mammals()
    local = _once(in_process, ("mammals", miner_class, repr(parameters)),
                  lambda: _document(miner_class, load_two_view(left, right, **options), **parameters))
    assert mammals_engine.n_rows == 2575
    assert _document(miner_class, mammals_engine, **parameters) == local


@pytest.mark.parametrize("miner_class, planted_engine", **_sharded([(SerenadeES,), (SerenadeCS,)], ["es", "cs"],
                                                                  "planted_engine", PLANTED_SHARDS))
def test_greedy_miners_give_the_same_output_on_ray_as_in_process_on_planted_data(planted_engine, planted_files,
                                                                                 miner_class, in_process) -> None:
    left, right, types = planted_files
    local = _once(in_process, ("planted", miner_class, "4-3"), lambda: _document(
        miner_class, load_two_view(left, right, types=types), initial_pairs=4, extensions=3))
    pids = [r["pid"] for r in planted_engine.shard_resources()]
    assert len(set(pids)) == planted_engine.n_shards  # one process per shard
    assert _document(miner_class, planted_engine, initial_pairs=4, extensions=3) == local
    assert json.loads(local)["document"]["redescriptions"]  # the comparison is not between two empty runs


# Chains of 100 steps, each step one round trip to the shards and compared draw for draw with the
# in-process run (every step's summed counts decide its acceptance: one wrong count changes the chain and
# the document); the step count per round trip is checked by the test after these. 100 steps leave 15 to
# 34 redescriptions per case (60 left none on the planted data for two of them); 200-300 steps repeated
# the same round trips at 3-6 ms each. Scored targets at depth 2: depth 3 on sharded counts is checked
# without Ray (test_tree_miners_sharded.py), and its selection band (seconds per extraction, in the
# driver) says nothing about the Ray engine.
TREE_MINERS = [
    (MCMCTreePair, {"init_trials": 3, "mcmc_iterations": 100}),
    (MCMCTreePair, {"init_trials": 2, "mcmc_iterations": 100, "targets": "scored", "target_binning": "fd",
                    "depth": 2}),
    (AlternatingTrees, {"trees": "exponential", "init_trials": 2, "alternations": 2}),
    (AlternatingTrees, {"trees": "mcmc", "init_trials": 2, "mcmc_iterations": 100}),
]


TREE_IDS = ["mcmc-tree-pair", "mcmc-tree-pair-scored", "alt-expm", "alt-mcmc"]


@pytest.mark.parametrize("miner_class, parameters, mammals_engine",
                         **_sharded(TREE_MINERS, TREE_IDS, "mammals_engine", MAMMALS_SHARDS))
def test_tree_miners_give_the_same_output_on_ray_as_in_process_on_mammals(mammals_engine, miner_class,
                                                                          parameters, in_process) -> None:
    left, right, options = _mammals()
    local = _once(in_process, ("mammals", miner_class, repr(parameters)),
                  lambda: _document(miner_class, load_two_view(left, right, **options), **parameters))
    assert _document(miner_class, mammals_engine, **parameters) == local
    assert json.loads(local)["document"]["redescriptions"]


@pytest.mark.parametrize("miner_class, parameters, planted_engine",
                         **_sharded(TREE_MINERS, TREE_IDS, "planted_engine", PLANTED_SHARDS))
def test_tree_miners_give_the_same_output_on_ray_as_in_process_on_planted_data(planted_engine, planted_files,
                                                                              miner_class, parameters,
                                                                              in_process) -> None:
    left, right, types = planted_files
    local = _once(in_process, ("planted", miner_class, repr(parameters)),
                  lambda: _document(miner_class, load_two_view(left, right, types=types), **parameters))
    assert _document(miner_class, planted_engine, **parameters) == local
    assert json.loads(local)["document"]["redescriptions"]


@pytest.mark.parametrize("planted_engine", PLANTED_SHARDS, indirect=True, ids=lambda n: f"{n}-shards")
def test_the_chains_of_mcmc_tree_pair_take_one_round_trip_per_step_of_all_chains(planted_engine) -> None:
    before = planted_engine.round_trips
    # uniform targets: the four chains are prepared at once (scored targets wait for the
    # earlier pairs); 150 steps of 4 chains in lock-step, plus a few requests for
    # targets, starts and extractions (a round trip per chain would be over 4 x 120)
    _document(MCMCTreePair, planted_engine, init_trials=4, mcmc_iterations=150, targets="uniform")
    assert 120 < planted_engine.round_trips - before <= 150 + 20


def test_a_shard_killed_during_the_chains_is_a_clean_engine_error(ray_session, planted_files) -> None:
    left, right, types = planted_files
    with ray_engine.RayEngine(ShardSpec.of(left, right, types=types), shards=2) as engine:
        original, steps, killed = engine._all, [], []

        def kill_in_the_chains(method, *args):  # a real actor is killed by Ray at the chains' 5th step
            if method == "call" and args[1] == "chain_step":
                steps.append(1)
                if len(steps) == 5:
                    ray_session.kill(engine.actors[1])
                    killed.append(len(steps))
            return original(method, *args)

        # (the progress callback comes every 1,000 steps: killing there took chains of thousands of steps)
        engine._all = kill_in_the_chains  # type: ignore[method-assign]
        accountant = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
        with pytest.raises(EngineError, match="lost"):
            MCMCTreePair(init_trials=2, mcmc_iterations=300).fit(engine, accountant=accountant)
        assert killed and len(steps) < 300  # the chains stopped at the loss, not at their end


def test_undeclared_domains_are_merged_from_the_shards_summaries(ray_session, planted_files, tmp_path) -> None:
    """Without a types file the bounds and categories are inferred per shard and merged: the same grid."""
    left, right, _ = planted_files
    frame = pd.read_csv(left)
    frame["colour"] = np.random.default_rng(0).choice(["red", "green", "blue", "cyan"], size=len(frame))
    frame.loc[:1400, "colour"] = np.where(frame.loc[:1400, "colour"] == "cyan", "red", frame.loc[:1400, "colour"])
    frame.to_csv(tmp_path / "left.csv", index=False)
    local_data = load_two_view(tmp_path / "left.csv", right)
    local = _document(SerenadeES, local_data, initial_pairs=4, extensions=4)
    with ray_engine.RayEngine(ShardSpec.of(tmp_path / "left.csv", right), shards=3) as engine:
        assert engine.schema.left["colour"].domain == local_data.left["colour"].domain
        assert engine.schema.right.attributes[0].domain == local_data.right.attributes[0].domain
        sharded = _document(SerenadeES, engine, initial_pairs=4, extensions=4)
        # numeric initial targets binned over bounds read off the data (the shards' merged bounds);
        # two pairs of trees of depth 2 (depth 3 took 40 times the CPU, in the extractions' selection
        # bands, which read no bounds)
        trees = _document(MCMCTreePair, engine, init_trials=2, mcmc_iterations=150, depth=2, targets="uniform")
    assert sharded == local
    assert trees == _document(MCMCTreePair, local_data, init_trials=2, mcmc_iterations=150, depth=2,
                              targets="uniform")
    assert json.loads(trees)["document"]["redescriptions"]  # not two empty runs
    assert "come from data, not declared bounds" in trees


def test_part_files_and_parquet_row_groups_are_read_by_their_shards(ray_session, planted_files, tmp_path) -> None:
    pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa
    import pyarrow.parquet as pq

    left, right, types = planted_files
    local = _document(SerenadeES, load_two_view(left, right, types=types), initial_pairs=3, extensions=3)
    frames = pd.read_csv(left), pd.read_csv(right)
    for side, frame in zip(("left", "right"), frames):
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / f"{side}.parquet",
                       row_group_size=500)
        for part, begin in enumerate(range(0, len(frame), 1000)):
            frame.iloc[begin:begin + 1000].to_csv(tmp_path / f"{side}-{part}.csv", index=False)
    parts = sorted(tmp_path.glob("left-*.csv")), sorted(tmp_path.glob("right-*.csv"))
    for spec in (ShardSpec.of(tmp_path / "left.parquet", tmp_path / "right.parquet", types=types),
                 ShardSpec.of(parts[0], parts[1], types=types)):
        with ray_engine.RayEngine(spec, shards=2) as engine:
            assert engine.n_rows == len(frames[0])
            assert _document(SerenadeES, engine, initial_pairs=3, extensions=3) == local


def test_more_shards_than_parts_leaves_some_shards_empty(ray_session, planted_files, tmp_path) -> None:
    left, right, types = planted_files
    pd.read_csv(left).iloc[:3].to_csv(tmp_path / "left.csv", index=False)
    pd.read_csv(right).iloc[:3].to_csv(tmp_path / "right.csv", index=False)
    with ray_engine.RayEngine(ShardSpec.of(tmp_path / "left.csv", tmp_path / "right.csv", types=types),
                              shards=4) as engine:
        assert engine.n_rows == 3
        tables = engine.literal_tables("private", 3)
        assert int(engine.counts("private", 3).literal_sizes(0).max()) <= 3 and len(tables[0]) > 0


def test_a_file_rewritten_between_two_shards_reads_is_refused_not_counted_in_parts(ray_session, tmp_path,
                                                                                   monkeypatch) -> None:
    """Shard 1 reads the files only after shard 0 has read them and they were rewritten longer: each counted its own
    version's rows, so the engine held rows 6 to 10 of the first version nowhere and others of the second twice."""
    left, right = tmp_path / "left.csv", tmp_path / "right.csv"
    left.write_text("a\n" + "".join(f"{i}\n" for i in range(10)))
    right.write_text("b\n" + "".join(f"{i % 3}\n" for i in range(10)))
    done = tmp_path / "shard-0-read"

    class RewrittenBetween(ray_engine.ShardActor):  # a local class: sent by value to the actors
        def __init__(self, spec, shard, n_shards, workdir=None) -> None:
            if shard == 1:  # waits for shard 0 to have read, then the files change
                for _ in range(600):
                    if os.path.exists(done):
                        break
                    time.sleep(0.05)
                for path in (left, right):
                    with open(path, "a") as out:
                        out.write("".join(f"{i % 3}\n" for i in range(10)))
            super().__init__(spec, shard, n_shards, workdir)
            if shard == 0:
                open(done, "w").close()

    monkeypatch.setattr(ray_engine, "ShardActor", RewrittenBetween)
    with pytest.raises(DprmError) as info:
        with ray_engine.RayEngine(ShardSpec.of(left, right), shards=2) as engine:
            engine.n_rows  # 15 rows before: neither the 10 of the first version nor the 20 of the second
    assert done.exists()
    assert info.value.code == "file_changed" and "changed while the shards" in str(info.value)


def test_an_undeclared_column_of_counts_gives_the_same_output_on_ray_as_in_process(ray_session, tmp_path) -> None:
    """A column of whole numbers over a short range, not declared, is cut at every whole number in-process; the
    shards' merged schema dropped that, so the grid, the ledger and the redescriptions differed on Ray."""
    rng = np.random.default_rng(4)
    counts = rng.integers(0, 9, size=240).astype(float)
    counts[:90] = np.nan  # missing in the first shard's rows
    pd.DataFrame({"visits": counts, "x": rng.random(240)}).to_csv(tmp_path / "left.csv", index=False)
    pd.DataFrame({"y": rng.random(240) + np.nan_to_num(counts) / 4}).to_csv(tmp_path / "right.csv", index=False)
    data = load_two_view(tmp_path / "left.csv", tmp_path / "right.csv")
    assert data.left["visits"].domain.transform == "integers"
    with ray_engine.RayEngine(ShardSpec.of(tmp_path / "left.csv", tmp_path / "right.csv"), shards=3) as engine:
        for miner_class, parameters in ((SerenadeES, dict(initial_pairs=3, extensions=3)),
                                        (MCMCTreePair, dict(init_trials=1, mcmc_iterations=40))):
            assert _document(miner_class, engine, **parameters) == _document(miner_class, data, **parameters)


def test_mine_on_ray_decides_on_first_columns_that_look_like_ids_on_all_the_rows_as_in_process(ray_session,
                                                                                                tmp_path) -> None:
    """Rows matched by position: first columns 1, 2, 1, 2, 1, 2 hold distinct values in each 2-row part of 3 shards,
    not in all the rows. Ray refused the files as one id column with two names (in-process mines them), and noted
    the left column as looking like an id (in-process does not); now the same notes and the same output."""
    pd.DataFrame({"a": [1, 2] * 3, "x": [0, 1, 1, 0, 1, 1]}).to_csv(tmp_path / "left.csv", index=False)
    for right, first in (("same.csv", [1, 2] * 3), ("ids.csv", [10, 20, 30, 40, 50, 60])):
        pd.DataFrame({"b": first, "y": [1, 1, 0, 0, 1, 0]}).to_csv(tmp_path / right, index=False)
        common = ["mine", tmp_path / "left.csv", tmp_path / right, "--seed", "2", "--mcmc-iterations", "20"]
        outputs = []
        for extra in ([], ["--engine", "ray", "--shards", "3"]):
            out = tmp_path / f"{right}-{len(extra)}.json"
            code, _, err = run([*common, *extra, "-o", out])
            assert code == 0, err
            outputs.append(([line for line in err.splitlines() if line.startswith("note: /")], out.read_bytes()))
        assert outputs[1] == outputs[0], right
    assert outputs[0][0] == [f"note: {tmp_path / 'ids.csv'}: column 'b' looks like an id (distinct values, none "
                             f"missing) but is mined as an attribute: the rows are matched by position, since the "
                             f"views' first columns have different names"]


@pytest.fixture(scope="module")
def text_files(tmp_path_factory) -> Path:
    """The files of ``TEXT_CASES`` (test_engine_sharding.py): 40 rows, blank lines, line ends, damaged files."""
    folder = tmp_path_factory.mktemp("text")
    write_text_cases(folder)
    return folder


def test_ray_reads_the_rows_loading_in_process_reads_or_refuses_a_file_in_its_words(ray_session,
                                                                                   text_files) -> None:
    """Files of ``TEXT_CASES`` on 2 or 3 shards: the output of loading them in-process, or its error line.

    A blank line inside or at the end had the shards refuse the views as "not the same entities in the same
    order", CR line ends and an empty file "the data has no rows" (naming no file), and a damaged gzip or a
    file named .parquet that is not Parquet "a shard of the Ray engine was lost (its actor died)". (Every case
    is read by the shards without Ray in test_engine_sharding.py; a local engine takes seconds to start.)"""
    options = dict(types=text_files / "types.json")
    cases = ("a blank line inside", "blank lines at the end", "CR line ends", "an empty file", "not Parquet")
    for number, case in enumerate(cases):
        left, right = (text_files / name for name in TEXT_CASES[case])
        try:
            expected = _document(SerenadeES, load_two_view(left, right, **options), initial_pairs=2, extensions=2)
        except DprmError as error:
            expected = f"error: {error}"
        try:
            with ray_engine.RayEngine(ShardSpec.of(left, right, **options), shards=2 + number % 2) as engine:
                got = _document(SerenadeES, engine, initial_pairs=2, extensions=2)
        except DprmError as error:
            got = f"error: {error}"
        assert got == expected, case
        assert got.startswith("error: ") == (case in REFUSED), got
    left, right = (text_files / name for name in TEXT_CASES["a truncated gzip"])  # the command line: one line, code 2
    code, stdout, err = run(["mine", left, right, "--types", text_files / "types.json", "-a", "serenade-es",
                             "--engine", "ray", "--shards", "2", "-o", text_files / "out.json"])
    assert (code, stdout, err) == (2, "", f"error: {left}: cannot be read: Truncated compressed stream\n")
    assert not (text_files / "out.json").exists()


def test_an_exception_of_a_shard_without_a_message_is_one_line_naming_its_type(ray_session, planted_files) -> None:
    """A bare ``AssertionError()`` or ``MemoryError()`` raised in a shard: ``a shard failed: AssertionError`` (the
    first line of its empty text was an IndexError: "internal error ... please report it", exit code 1)."""
    left, right, types = planted_files

    def failing(rows):  # pickled by value (a local function): built in the shard actors
        class Failing:
            def fail(self, kind: str) -> None:
                raise {"AssertionError": AssertionError, "MemoryError": MemoryError}[kind]()
        return Failing()

    with ray_engine.RayEngine(ShardSpec.of(left, right, types=types), shards=2) as engine:
        workers = engine.workers(failing)
        for kind in ("AssertionError", "MemoryError"):
            with pytest.raises(EngineError) as raised:
                workers.call("fail", kind)
            assert str(raised.value) == f"a shard failed: {kind}"
        workers.close()


def test_a_local_ray_removes_the_folders_that_killed_runs_left_and_no_other(tmp_path) -> None:
    """A run killed with SIGKILL cannot remove its local Ray's folder (``dprm-ray-PID-*``): the next local Ray
    removes it, if its process is gone and no process holds its lock file; never a folder of a running
    process, one whose lock is held (a run in another pid namespace), one without a lock file, another
    user's, one named otherwise or a symbolic link."""
    import fcntl

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        def folder(name: str, lock: bool = True) -> Path:
            path = tmp_path / name
            path.mkdir()
            (path / "session_latest").mkdir()
            if lock:
                (path / ray_engine.LOCK_NAME).write_bytes(b"")
            return path

        stale = folder(f"dprm-ray-{gone.pid}-ab_cd123")
        kept = [folder(f"dprm-ray-{running.pid}-ab_cd123"), folder(f"dprm-ray-{gone.pid}-held0000"),
                folder(f"dprm-ray-{gone.pid}-nolock00", lock=False), folder(f"dprm-ray-{gone.pid}-x"),
                folder(f"other-{gone.pid}-ab_cd123")]
        (tmp_path / f"dprm-ray-{gone.pid}-link0000").symlink_to(stale)
        kept.append(tmp_path / f"dprm-ray-{gone.pid}-link0000")
        with open(kept[1] / ray_engine.LOCK_NAME, "rb") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            ray_engine._remove_stale_folders(str(tmp_path))
        assert not stale.exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in kept)
        assert all((p / "session_latest").is_dir() for p in kept[:-2])
    finally:
        running.kill()
        running.wait()


def test_a_local_rays_folder_is_locked_while_it_runs(ray_session) -> None:
    """The local Ray of this process (``ray_session``): its folder's lock file is held (another open file cannot
    lock it), so that no other run removes it."""
    import fcntl

    folder = Path(ray_engine._LOCAL_FOLDERS[-1])
    with open(folder / ray_engine.LOCK_NAME, "rb") as lock, pytest.raises(BlockingIOError):
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_a_temporary_directory_too_long_for_rays_sockets_is_one_line_asking_for_a_shorter_one(planted_files) -> None:
    """Ray's socket paths are in the local Ray's folder under ``TMPDIR``, and a Unix socket's path has at most 107
    bytes: the one line says to set a shorter ``TMPDIR`` (it gave Ray's ``validate_socket_filename failed``)."""
    left, right, types = planted_files
    base = Path(tempfile.mkdtemp(prefix="r", dir="/tmp"))
    temporary = base / ("t" * 80)
    temporary.mkdir()
    try:
        done = subprocess.run([sys.executable, "-m", "dprm", "mine", left, right, "--types", types, "-a",
                               "serenade-es", "--engine", "ray", "--shards", "2", "-o", base / "out.json"],
                              env={**os.environ, "TMPDIR": str(temporary), "PYTHONWARNINGS": "ignore"},
                              capture_output=True, text=True, timeout=300)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (f"error: Ray could not start: the paths of its sockets under the temporary directory "
                               f"{temporary} are too long (a socket's path has at most 107 bytes); set TMPDIR to a "
                               f"shorter directory, e.g. TMPDIR=/tmp\n")
        assert list(temporary.iterdir()) == [] and not (base / "out.json").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


# The command line on Ray: one run per path it adds. A private miner (the default one here: its
# redundancy marks are post-processing of released values, the same on Ray), a non-private one (marks
# from statistics only on Ray), a lost shard (below). Which miners give the same output on Ray is
# checked in-process above.
def test_mine_with_the_default_miner_on_ray_writes_what_it_writes_in_process(ray_session, planted_files,
                                                                             tmp_path) -> None:
    left, right, types = planted_files
    common = ["mine", left, right, "--types", types, "--seed", "2", "--mcmc-iterations", "100"]
    code, _, err = run([*common, "-o", tmp_path / "local.json"])
    assert code == 0, err
    code, _, err = run([*common, "--engine", "ray", "--shards", "2", "-o", tmp_path / "ray.json"])
    assert code == 0, err
    assert (tmp_path / "ray.json").read_bytes() == (tmp_path / "local.json").read_bytes()
    local = json.loads((tmp_path / "local.json").read_text())
    assert local["algorithm"] == "mcmc-tree-pair" and local["redescriptions"]


def test_mine_on_ray_says_what_loading_in_process_says_a_bad_value_and_the_notes(ray_session, planted_files,
                                                                                  tmp_path) -> None:
    """A shard that cannot load its part fails with the loader's error, naming the user's file and row (Ray
    had answered "a shard ... was lost (its actor died)"); the shards' notes are printed as in-process."""
    left, right, types = planted_files
    frame = pd.read_csv(right)
    frame.loc[2499, "r_num_0"] = 250.0  # row 2500, in the third shard; declared bounds [0, 100]
    frame.to_csv(tmp_path / "right.csv", index=False)
    common = ["mine", left, tmp_path / "right.csv", "--types", types, "-a", "serenade-es", "--epsilon", "1",
              "--seed", "1", "--initial-pairs", "2", "--extensions", "2"]
    errors = []
    for extra in ([], ["--engine", "ray", "--shards", "3"]):
        code, _, err = run([*common, *extra, "-o", tmp_path / "out.json"])
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        errors.append(err.strip())
    assert errors[0] == f"error: {tmp_path / 'right.csv'}: column 'r_num_0', row 2500: value 250 is outside the " \
                        f"declared bounds [0, 100]"
    assert errors[1] == errors[0] and not (tmp_path / "out.json").exists()
    notes = []
    for extra in (["--out-of-bounds", "clamp"], ["--out-of-bounds", "clamp", "--engine", "ray", "--shards", "3"]):
        code, _, err = run([*common, *extra])
        assert code == 0, err
        notes.append([line for line in err.splitlines() if line.startswith("note:")])
    assert notes[0] == [f"note: {tmp_path / 'right.csv'}: column 'r_num_0': values outside the declared bounds "
                        f"[0, 100] clamped into them"]
    assert notes[1] == notes[0]


def test_mine_on_ray_refuses_an_id_in_two_shards_as_loading_in_process_refuses_it(ray_session, planted_files,
                                                                                 tmp_path) -> None:
    """Row 2,500's id repeats row 11's (id 11), in both files (row-aligned): every shard's part loads (the run used to
    go on and write its output), and the shards together refuse it in the loader's one line, before any
    release: exit code 2, no output."""
    left, right, types = planted_files
    for source in (left, right):
        frame = pd.read_csv(source)
        frame.loc[2499, "row_id"] = frame.loc[10, "row_id"]
        frame.to_csv(tmp_path / source.name, index=False)
    common = ["mine", tmp_path / left.name, tmp_path / right.name, "--types", types, "-a", "serenade-es",
              "--epsilon", "1", "--seed", "1", "--initial-pairs", "2", "--extensions", "2", "-o", tmp_path / "out.json"]
    errors = []
    for extra in ([], ["--engine", "ray", "--shards", "3"]):
        code, stdout, err = run([*common, *extra])
        assert code == 2 and len(err.strip().splitlines()) == 1 and not stdout.strip(), err
        errors.append(err.strip())
    assert errors[0] == f"error: {tmp_path / left.name}: 1 id(s) occur more than once in column 'row_id': 11"
    assert errors[1] == errors[0] and not (tmp_path / "out.json").exists()


def test_mine_on_ray_checks_ids_and_first_columns_before_a_shards_bad_value_as_loading_in_process(ray_session,
                                                                                                  tmp_path) -> None:
    """Loading all the rows checks the ids (repeated) and the first columns (one id column under two names) before it
    builds any column (a value outside its bounds). On Ray the last shard's bad value was said first, as its part's
    loading failed before the shards' ids and first columns were checked together; now the error of in-process."""
    (tmp_path / "types.json").write_text(json.dumps({"columns": {"v": {"type": "numeric", "bounds": [0, 10]}}}))
    cases = {"two-names": ([5, 6, 7, 8, 9, 10], "a", [5, 6, 7, 8, 9, 10], "b"),
             "repeated-id": ([1, 2, 3, 4, 1, 6], "id", [1, 2, 3, 4, 1, 6], "id")}
    for case, (left_first, left_name, right_first, right_name) in cases.items():
        pd.DataFrame({left_name: left_first, "x": [0, 1, 1, 0, 1, 1], "v": [1, 2, 3, 4, 5, 500]}).to_csv(
            tmp_path / "left.csv", index=False)
        pd.DataFrame({right_name: right_first, "y": [1, 1, 0, 0, 1, 0]}).to_csv(tmp_path / "right.csv", index=False)
        common = ["mine", tmp_path / "left.csv", tmp_path / "right.csv", "--types", tmp_path / "types.json",
                  "-a", "serenade-es", "--seed", "1", "-o", tmp_path / "out.json"]
        errors = []
        for extra in ([], ["--engine", "ray", "--shards", "3"]):
            code, stdout, err = run([*common, *extra])
            assert code == 2 and len(err.strip().splitlines()) == 1 and not stdout.strip(), err
            errors.append(err.strip())
        assert "value 500" not in errors[0], case
        assert errors[1] == errors[0], case
        assert not (tmp_path / "out.json").exists()


def test_mine_on_ray_says_every_repeated_id_when_one_repeats_within_a_shard_and_one_across(ray_session,
                                                                                           tmp_path) -> None:
    """Id 1 twice in the first shard's rows, id 2 in both shards: loading all the rows names both ("2 id(s) ...:
    1, 2"); the first shard's loader refused its part with its own repeat only ("1 id(s) ...: 1"). Now the part's
    ids join the shards' check of all the ids, which names both."""
    ids = [1, 2, 1, 4, 5, 6, 2, 8]
    pd.DataFrame({"id": ids, "x": [0, 1, 1, 0, 1, 1, 0, 1]}).to_csv(tmp_path / "left.csv", index=False)
    pd.DataFrame({"id": ids, "y": [1, 1, 0, 0, 1, 0, 1, 0]}).to_csv(tmp_path / "right.csv", index=False)
    common = ["mine", tmp_path / "left.csv", tmp_path / "right.csv", "-a", "serenade-es", "--seed", "1",
              "-o", tmp_path / "out.json"]
    errors = []
    for extra in ([], ["--engine", "ray", "--shards", "2"]):
        code, stdout, err = run([*common, *extra])
        assert code == 2 and len(err.strip().splitlines()) == 1 and not stdout.strip(), err
        errors.append(err.strip())
    assert errors[0] == f"error: {tmp_path / 'left.csv'}: 2 id(s) occur more than once in column 'id': 1, 2"
    assert errors[1] == errors[0] and not (tmp_path / "out.json").exists()


# "-defaults": the grid, depth and leaf sizes at their defaults. CARTwheels' one trial of two alternations
# (three trees, 300-580 redescriptions) takes a fifth of the three trials of three (twelve trees) it had.
BASELINES = [
    (ReReMi, {"initial_pairs": 5, "extensions": 4, "max_splits": 12}),
    (ReReMi, {"initial_pairs": 3}),
    (CartWheels, {"init_trials": 5, "alternations": 2, "depth": 3, "max_splits": 10}),
    (CartWheels, {"init_trials": 1, "alternations": 2}),
]
BASELINE_IDS = ["reremi", "reremi-defaults", "cartwheels", "cartwheels-defaults"]


def _baseline_document(miner_class, data, **parameters) -> str:
    miner = miner_class(**parameters).fit(data, rng=np.random.default_rng(3))
    return json.dumps(miner.document(), sort_keys=True, default=str)


@pytest.mark.parametrize("miner_class, parameters, mammals_engine",
                         **_sharded(BASELINES, BASELINE_IDS, "mammals_engine", MAMMALS_SHARDS))
def test_non_private_baselines_give_the_same_output_on_ray_as_in_process_on_mammals(mammals_engine, miner_class,
                                                                                   parameters, in_process) -> None:
    left, right, options = _mammals()
    local = _once(in_process, ("baseline", "mammals", miner_class, repr(parameters)),
                  lambda: _baseline_document(miner_class, load_two_view(left, right, **options), **parameters))
    assert _baseline_document(miner_class, mammals_engine, **parameters) == local
    assert json.loads(local)["redescriptions"]


@pytest.mark.parametrize("miner_class, parameters, planted_engine",
                         **_sharded(BASELINES, BASELINE_IDS, "planted_engine", PLANTED_SHARDS))
def test_non_private_baselines_give_the_same_output_on_ray_as_in_process_on_planted_data(
        planted_engine, planted_files, miner_class, parameters, in_process) -> None:
    left, right, types = planted_files
    local = _once(in_process, ("baseline", "planted", miner_class, repr(parameters)),
                  lambda: _baseline_document(miner_class, load_two_view(left, right, types=types), **parameters))
    assert _baseline_document(miner_class, planted_engine, **parameters) == local
    assert json.loads(local)["redescriptions"]


@pytest.fixture(scope="module")
def numeric_files(tmp_path_factory) -> tuple[Path, Path]:
    """Planted data with numeric attributes on both sides, missing values and ties, types inferred."""
    folder = tmp_path_factory.mktemp("numeric")
    planted = make_planted(2401, n_left_boolean=5, n_left_numeric=6, n_right_numeric=6, n_planted=3, missing=0.03,
                           random_state=9)
    left, right = planted.left.copy(), planted.right.copy()
    left["l_num_5"] = left["l_num_5"].round(0)  # few distinct values: thresholds at the distinct values
    right[["r_num_4", "r_num_5"]] = right[["r_num_4", "r_num_5"]].round(1)  # ties
    left.to_csv(folder / "left.csv", index=False)
    right.to_csv(folder / "right.csv", index=False)
    return folder / "left.csv", folder / "right.csv"


# 3 shards (an uneven deal of 2,401 rows): the baselines on 2 shards are checked on mammals above.
# ReReMi at its default grid (40 cut points) is mined on mammals and planted data above; here its merged cut
# points are compared (mining on them took 2.7 s in-process alone: every extension over 12 numeric attributes).
@pytest.mark.parametrize("n_shards", [3])
def test_non_private_baselines_give_the_same_output_on_ray_on_numeric_views_on_both_sides(
        ray_session, numeric_files, n_shards, in_process) -> None:
    left, right = numeric_files
    data = load_two_view(left, right)
    with ray_engine.RayEngine(ShardSpec.of(left, right), shards=n_shards) as engine:
        for miner_class, parameters in (BASELINES[0], BASELINES[2]):
            local = _once(in_process, ("baseline", "numeric", miner_class, repr(parameters)),
                          lambda: _baseline_document(miner_class, data, **parameters))
            assert _baseline_document(miner_class, engine, **parameters) == local, miner_class.__name__
            assert json.loads(local)["redescriptions"]
        for max_splits in (12, ReReMi().max_splits):
            expected = [LiteralTable(view, mode="data", max_splits=max_splits).index.thresholds for view in data.views]
            merged = engine.data_thresholds(max_splits)
            for side in (0, 1):
                assert len(merged[side]) == len(expected[side])
                assert all(np.array_equal(m, e) for m, e in zip(merged[side], expected[side])), (max_splits, side)


def test_mine_runs_a_non_private_baseline_on_ray_and_writes_what_it_writes_in_process(
        ray_session, planted_files, tmp_path) -> None:
    left, right, types = planted_files
    common = ["mine", left, right, "--types", types, "-a", "reremi", "--seed", "4", "--initial-pairs", "4"]
    code, _, err = run([*common, "--no-mark-redundant", "-o", tmp_path / "local.json"])
    assert code == 0, err
    # the redundancy filter says what it judged from: in-process the rows' supports, on Ray the
    # statistics only (the rows stay in the shards), so the marks may differ; all else is the same
    code, _, err = run([*common, "--engine", "ray", "--shards", "3", "--mark-redundant", "-o", tmp_path / "ray.json"])
    assert code == 0 and "judged from their statistics only" in err, err
    local, on_ray = (json.loads((tmp_path / name).read_text()) for name in ("local.json", "ray.json"))
    assert on_ray["parameters"].pop("redundancy") == "statistics only (the rows stay in the shards)"
    assert on_ray["parameters"].pop("max_overlap") == 0.9
    for redescription in on_ray["redescriptions"]:
        redescription.pop("redundant", None)
    assert json.dumps(on_ray) == json.dumps(local)  # the same document, in the same order
    assert local["redescriptions"]


def test_mine_refuses_a_bad_engine(planted_files, tmp_path) -> None:
    left, right, types = planted_files
    out = tmp_path / "out.json"
    for extra, message in ((["--engine", "spark"], "--engine must be"),
                           (["--engine", "ray", "--shards", "0"], "--shards must be"),
                           (["--engine", "ray", "--shards", "4000"], "a local Ray on this machine runs at most"),
                           (["--engine", "ray://256.1.1.1:10001"], "'256.1.1.1' is not an IP address"),
                           (["--engine", "ray://head:99999"], "not a Ray address"),
                           (["--engine", "ray://head"], "not a Ray address")):
        code, _, err = run(["mine", left, right, "--types", types, "-o", out, *extra])
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
        assert not out.exists()


# A greedy miner losing a shard mid-run: through the command line, which raises the library's EngineError
# ("... lost ...") as its one error line (a test of the library call alone checked the same on its own
# engine); a tree miner losing one during its chains: test_a_shard_killed_during_the_chains_... above.
def test_mine_with_a_shard_killed_mid_run_fails_in_one_line_and_writes_nothing(ray_session, planted_files,
                                                                               tmp_path, monkeypatch) -> None:
    left, right, types = planted_files
    original = ray_engine.ShardedCounts.cells_and_extensions
    calls = []

    def kill_then_count(self, *args):  # a real actor is killed by Ray, then the run goes on
        if not calls:
            ray_session.kill(self._engine.actors[0])
        calls.append(1)
        return original(self, *args)

    monkeypatch.setattr(ray_engine.ShardedCounts, "cells_and_extensions", kill_then_count)
    out, queries = tmp_path / "out.json", tmp_path / "out.queries"
    code, stdout, err = run(["mine", left, right, "--types", types, "-a", "serenade-es", "--initial-pairs", "3",
                              "--extensions", "5", "--engine", "ray", "--shards", "2", "-o", out,
                              "--clired", queries])
    assert calls
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "shard" in errors[0] and "lost" in errors[0], err
    assert "Traceback" not in err
    assert not out.exists() and not queries.exists()


def test_a_local_ray_started_for_a_run_leaves_no_session_directory_behind(planted_files) -> None:
    """``dprm mine --engine ray`` starts a local Ray for the run and stops it: its processes, and its session
    directory (logs, sockets; Ray leaves ``$TMPDIR/ray/session_*`` of every run behind: 200 KB a run, one
    per job on a server with ``--engine ray``)."""
    import os
    import subprocess
    import sys
    import tempfile

    left, right, types = planted_files
    temporary = Path(tempfile.mkdtemp(prefix="r", dir="/tmp"))  # short: Ray's socket paths live under it
    try:
        environment = {**os.environ, "TMPDIR": str(temporary), "PYTHONWARNINGS": "ignore"}
        done = subprocess.run([sys.executable, "-m", "dprm", "mine", left, right, "--types", types, "-a",
                               "serenade-es", "--epsilon", "1", "--seed", "1", "--initial-pairs", "2",
                               "--extensions", "2", "--engine", "ray", "--shards", "2",
                               "-o", temporary / "out.json"], env=environment, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        assert sorted(p.name for p in temporary.iterdir()) == ["out.json"]
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def _interrupted_run(files: tuple[Path, Path, Path], act: str) -> tuple[subprocess.CompletedProcess, list, Path]:
    """``dprm mine --engine ray`` in a process of its own (a session and a ``TMPDIR`` of its own, Ctrl-C not
    ignored), long enough to be stopped: once both shard actors run, ``act`` is done to it ("SIGTERM" or
    "SIGINT" to the command, or "kill-shard": SIGKILL to a shard actor's process from outside). Returns the
    ended command, the processes that descended from it just before, and its ``TMPDIR`` (to remove)."""
    left, right, types = files
    temporary = Path(tempfile.mkdtemp(prefix="r", dir="/tmp"))  # short: Ray's socket paths live under it
    environment = {**os.environ, "TMPDIR": str(temporary), "PYTHONWARNINGS": "ignore"}
    command = [sys.executable, "-m", "dprm", "mine", left, right, "--types", types, "-a", "mcmc-tree-pair",
               "--epsilon", "1", "--seed", "1", "--mcmc-iterations", "200000", "--engine", "ray", "--shards", "2",
               "-o", temporary / "out.json"]
    process = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        driver, deadline, shards = psutil.Process(process.pid), time.monotonic() + 120, []
        while len(shards) < 2 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
            shards = [p for p in driver.children(recursive=True) if "ShardActor" in " ".join(_cmdline(p))]
        assert len(shards) == 2, process.communicate()[1]
        time.sleep(1.0)  # the shards read their parts; then the chains run
        descendants = driver.children(recursive=True)
        if act == "kill-shard":
            shards[1].kill()
        else:
            process.send_signal(getattr(signal, act))
        stdout, stderr = process.communicate(timeout=120)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr), descendants, temporary


def _cmdline(process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def _alive(processes: list) -> list:
    alive = []
    for process in processes:
        with contextlib.suppress(psutil.Error):
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append((process.pid, process.name()))
    return alive


@pytest.mark.parametrize("act, code, message", [
    ("SIGTERM", 130, "interrupted"),
    ("SIGINT", 130, "interrupted"),
    ("kill-shard", 2, "error: a shard of the Ray engine was lost (its actor died) during the run; nothing more "
                      "was released"),
])
def test_mine_on_ray_stopped_or_losing_a_shard_ends_in_one_line_and_leaves_nothing_behind(planted_files, act, code,
                                                                                          message) -> None:
    """SIGTERM printed Ray's stack dump ("*** SIGTERM received ...") and exited with code 15, Ctrl-C exited with
    130 and no word: now both end as Ctrl-C does in this command line (``interrupted``, 130). A shard actor
    killed from outside ends the run in one line (exit 2) and nothing on standard output (Ray printed a paragraph
    there, ``(raylet) A worker died or was killed ...``). Each time no output is written, no process the
    command started outlives it (Ray's processes are waited for before it exits) and its ``TMPDIR`` is empty."""
    done, descendants, temporary = _interrupted_run(planted_files, act)
    try:
        assert len(descendants) >= 4  # the GCS, the raylet, its agents and the two shard actors at least
        # nothing on standard output: a shard killed printed Ray's "(raylet) A worker died or was killed ..." there
        assert (done.returncode, done.stderr, done.stdout) == (code, message + "\n", "")
        assert _alive(descendants) == []
        assert list(temporary.iterdir()) == []
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
