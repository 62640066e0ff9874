"""``dprm evaluate --engine ray --shards N``: the same experiment as in-process, counted on Ray shards.

One local Ray for the Ray modules (``ray_session`` of ``tests/conftest.py``, shared
with ``tests/test_engine_ray.py``); every sharded experiment opens its engine's shard
actors on it. The experiment is small: MAMMAL, two private miners (a greedy one and a
tree one: both engine paths) at one budget, two runs each.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pandas as pd
import pytest

from dprm.data import load_two_view
from dprm.engine.sharding import ShardSpec
from dprm.errors import DprmError
from dprm.evaluation.true_statistics import true_statistics

from test_cli import assert_one_error_line, run
from test_engine_ray import _mammals, planted_files, ray_engine  # noqa: F401 - fixtures

# One xdist worker runs the Ray modules (this, test_engine_ray.py and test_engine_ray_cluster.py; make test: --dist
# loadgroup), one after the other, on one local Ray started once for them (conftest's ray_session).
pytestmark = [pytest.mark.ray, pytest.mark.xdist_group("ray")]

#: The run block's entries that say how and where a run ran, not what it released.
MACHINE = ("seconds", "peak_mb", "engine")


#: Two private miners (a greedy one and a tree one: both ways of counting on the engine), small settings.
MINERS = ["--algorithms", "serenade-es,alt-expm", "-p", "serenade-es.initial_pairs=3",
          "-p", "serenade-es.extensions=4", "-p", "alt-expm.init_trials=2"]


def _experiment(out: Path, *extra: object, files: tuple | None = None, miners: list = MINERS,
                budgets: str = "1x2") -> list:
    if files is None:
        left, right, options = _mammals()
        files = (left, right, options["types"])
    left, right, types = files
    return ["evaluate", left, right, "--types", types, *miners, "--budgets", budgets, "--seed", "7", "--out", out,
            "--no-reports", *extra]


def _documents(out: Path) -> dict[str, dict]:
    """Every run's document, without the run block's machine entries."""
    documents = {}
    for path in sorted((out / "runs").rglob("*.json")):
        document = json.loads(path.read_text())
        document["run"] = {k: v for k, v in document["run"].items() if k not in MACHINE}
        documents[str(path.relative_to(out))] = document
    return documents


def _tables(out: Path) -> dict[str, pd.DataFrame]:
    """The tables, without their time and memory columns."""
    tables = {}
    for name in ("redescriptions", "runs", "summary", "mann_whitney"):
        frame = pd.read_csv(out / f"{name}.csv")
        tables[name] = frame.drop(columns=[c for c in frame.columns if c.startswith(("seconds", "peak_mb"))])
    return tables


@pytest.fixture(scope="module")
def in_process(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("evaluate") / "in-process"
    code, _, err = run(_experiment(out))
    assert code == 0, err
    return out


def _assert_same_experiment(sharded: Path, in_process: Path, algorithms: tuple = ("serenade-es", "alt-expm"),
                            runs: int = 2) -> None:
    local = _documents(in_process)
    assert len(local) == len(algorithms) * runs and not any(path.endswith(".failed.json") for path in local)
    assert _documents(sharded) == local
    ours, theirs = _tables(sharded), _tables(in_process)
    for name, frame in theirs.items():
        pd.testing.assert_frame_equal(ours[name], frame, obj=name)
    # the comparison is not between empty experiments: every algorithm released and was checked on the rows
    redescriptions = theirs["redescriptions"]
    assert set(redescriptions["algorithm"]) == set(algorithms)
    assert (redescriptions["true_intersection"] > 0).any() and redescriptions["true_pvalue"].notna().all()
    assert (sharded / "redescriptions.csv").read_bytes() == (in_process / "redescriptions.csv").read_bytes()


def test_a_sharded_experiment_equals_the_in_process_one(ray_session, in_process, tmp_path) -> None:
    out = tmp_path / "ray"
    code, stdout, err = run(_experiment(out, "--engine", "ray", "--shards", "2"))
    assert code == 0, err
    assert "4 runs now" in stdout
    _assert_same_experiment(out, in_process)
    engines = {json.loads(p.read_text())["run"]["engine"] for p in (out / "runs").rglob("*.json")}
    assert engines == {"ray, 2 shards"}
    assert {json.loads(p.read_text())["run"]["engine"] for p in (in_process / "runs").rglob("*.json")} == {
        "in-process"}


def test_a_sharded_experiment_on_planted_data_with_missing_values_equals_the_in_process_one(
        ray_session, planted_files, tmp_path) -> None:
    # chains of 100 steps (each a round trip to the shards): 300 repeated the same requests
    miners = ["--algorithms", "mcmc-tree-pair,serenade-cs", "-p", "mcmc-tree-pair.mcmc_iterations=100",
              "-p", "mcmc-tree-pair.init_trials=2", "-p", "serenade-cs.initial_pairs=3",
              "-p", "serenade-cs.extensions=2"]
    for out, extra in ((tmp_path / "in-process", ["--jobs", "1"]),
                       (tmp_path / "ray", ["--engine", "ray", "--shards", "3"])):
        code, _, err = run(_experiment(out, *extra, files=planted_files, miners=miners, budgets="0.5x1"))
        assert code == 0, err
    _assert_same_experiment(tmp_path / "ray", tmp_path / "in-process", ("mcmc-tree-pair", "serenade-cs"), runs=1)


def test_a_shard_lost_mid_experiment_fails_the_run_in_one_line_and_a_rerun_resumes(ray_session, in_process,
                                                                                   tmp_path, monkeypatch) -> None:
    """The second run loses a shard: it is recorded as failed, no table is written; the rerun finishes the rest."""
    original = ray_engine.RayEngine._all
    out = tmp_path / "ray"
    killed = []

    def kill_in_the_second_run(self, method, *args):  # a real actor is killed by Ray, then the run goes on
        if not killed and self._actors and len(list((out / "runs").rglob("*.json"))) == 1:
            ray_session.kill(self._actors[1])
            killed.append(method)
        return original(self, method, *args)

    monkeypatch.setattr(ray_engine.RayEngine, "_all", kill_in_the_second_run)
    code, _, err = run(_experiment(out, "--engine", "ray", "--shards", "2"))
    assert killed
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "shard" in errors[0] and "lost" in errors[0], err
    assert "Traceback" not in err
    finished = sorted(p.name for p in (out / "runs").rglob("*.json"))
    assert finished == ["0.json", "1.failed.json"]  # the first run kept, the second recorded as failed
    failure = json.loads(next((out / "runs").rglob("1.failed.json")).read_text())
    assert failure["status"] == "failed" and "lost" in failure["message"]
    assert not (out / "redescriptions.csv").exists() and not (out / "summary.csv").exists()

    monkeypatch.setattr(ray_engine.RayEngine, "_all", original)
    code, stdout, err = run(_experiment(out, "--engine", "ray", "--shards", "2"))
    assert code == 0, err
    assert "3 runs now, 1 finished before" in stdout
    assert not list((out / "runs").rglob("*.failed.json"))
    _assert_same_experiment(out, in_process)


def test_true_statistics_counted_on_the_shards_equal_those_on_the_rows(ray_session, in_process, capfd) -> None:
    left, right, options = _mammals()
    data = load_two_view(left, right, **options)
    documents = [json.loads(p.read_text()) for p in sorted((in_process / "runs").rglob("*.json"))]
    with ray_engine.RayEngine(ShardSpec.of(left, right, **options), shards=3) as engine:
        for document in documents:
            document.pop("run")
            pd.testing.assert_frame_equal(true_statistics(document, engine), true_statistics(document, data))
        wrong = documents[0]
        wrong["redescriptions"][0]["left"] = {"attr": "no such column", "eq": True}
        collected: list = []
        original = engine._collect

        def spy(answers: list) -> None:
            original(answers)
            collected.append(answers)

        engine._collect = spy  # type: ignore[method-assign]
        with pytest.raises(DprmError, match=r"redescriptions\[0\]\.left"):
            true_statistics(wrong, engine)
        # Ray reports an error nobody fetched when its reference is freed: every shard's answer
        # of the failed request was waited for before the error was raised (no sleep needed)
        assert len(collected) == 1 and len(collected[0]) == 3
        ready, pending = engine._ray.wait(collected[0], num_returns=3, timeout=0)
        assert len(ready) == 3 and not pending
        del collected
        gc.collect()
    assert "Unhandled error" not in capfd.readouterr().err


@pytest.mark.parametrize("extra, fragment", [
    (["--engine", "spark"], "--engine must be"),
    (["--engine", "ray", "--shards", "0"], "--shards must be"),
    (["--engine", "ray", "--jobs", "2"], "--jobs"),
])
def test_bad_engine_options_are_one_line_and_write_nothing(extra, fragment, tmp_path) -> None:
    out = tmp_path / "out"
    code, _, err = run(_experiment(out, *extra))
    assert code == 2
    assert_one_error_line(err, fragment)
    assert not out.exists()


def test_an_algorithm_that_cannot_run_sharded_is_refused_before_anything_is_read(tmp_path) -> None:
    left, right, options = _mammals()
    out = tmp_path / "out"
    code, _, err = run(["evaluate", left, right, "--types", options["types"], "--algorithms",
                        "serenade-es,clired-splitt", "--budgets", "1x1", "--out", out, "--engine", "ray"])
    assert code == 2
    assert_one_error_line(err, "clired-splitt does not run on --engine ray", "serenade-es")
    assert not out.exists()


def test_resuming_on_ray_refuses_unfinished_runs_of_an_algorithm_that_cannot_run_sharded(tmp_path) -> None:
    """An experiment extended in-process by a baseline whose run has not finished: its run would run on Ray."""
    left, right, options = _mammals()
    out = tmp_path / "out"
    small = ["evaluate", left, right, "--types", options["types"], "--budgets", "1x1", "--out", out, "--seed", "3",
             "--no-reports", "--jobs", "1", "-p", "initial_pairs=2", "-p", "extensions=2"]
    code, _, err = run([*small, "--algorithms", "serenade-es"])
    assert code == 0, err
    manifest = json.loads((out / "experiment.json").read_text())
    manifest["algorithms"].append("clired-splitt")  # as an extension interrupted before its run finished
    (out / "experiment.json").write_text(json.dumps(manifest))
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    code, _, err = run([*small, "--algorithms", "serenade-es", "--engine", "ray"])
    assert code == 2
    assert_one_error_line(err, "clired-splitt does not run on --engine ray")
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
