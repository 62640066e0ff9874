"""The experiment runner (``dprm evaluate``): tables, independent recomputation, resuming, errors, CLI.

The figures are checked against a recomputation that uses only the run JSONs, the
CSV files of the data, pandas and scipy (queries evaluated here, not with dprm).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dprm.cli import main
from dprm.datasets import make_planted, write_planted
from dprm.errors import DataError, DprmError, ParameterError
from dprm.evaluation.runner import (
    REDESCRIPTION_COLUMNS,
    RUN_COLUMNS,
    ExperimentConfig,
    parameters_for,
    parse_parameter_items,
    read_manifest,
    run_experiment,
    run_seed,
)
from dprm.evaluation.budgets import parse_budgets
from dprm.evaluation.tables import MANN_WHITNEY_TABLE_COLUMNS, SUMMARY_TABLE_COLUMNS

FAST = {"mcmc_iterations": 30, "init_trials": 2, "alternations": 1}
PRIVATE = ("alt-expm", "mcmc-tree-pair")


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("planted")
    data = make_planted(300, n_left_boolean=6, n_right_numeric=4, n_planted=2, random_state=11)
    write_planted(data, directory)
    return directory


def _config(planted: Path, **changes) -> ExperimentConfig:
    values = dict(left=planted / "left.csv", right=planted / "right.csv", algorithms=[*PRIVATE, "cartwheels"],
                  budgets="20x2,1x1", parameters=dict(FAST), seed=5, types=planted / "types.json")
    values.update(changes)
    return ExperimentConfig(**values)


@pytest.fixture(scope="module")
def experiment(planted, tmp_path_factory):
    out = tmp_path_factory.mktemp("experiment") / "out"
    events = []
    result = run_experiment(_config(planted), out, jobs=2, progress=lambda d, t, r: events.append((d, t, r)),
                            reports=False)
    return result, events


# -- an independent evaluator of the spec's queries ------------------------------------


def _support(query: dict, frame: pd.DataFrame) -> np.ndarray:
    if "not" in query:
        return ~_support(query["not"], frame)
    if "and" in query:
        return np.logical_and.reduce([_support(q, frame) for q in query["and"]])
    if "or" in query:
        return np.logical_or.reduce([_support(q, frame) for q in query["or"]])
    column = frame[query["attr"]]
    known = column.notna().to_numpy()
    if "eq" in query:
        value = query["eq"]
        if isinstance(value, bool):
            return known & (column.fillna(-1).astype(float).to_numpy() == float(value))
        return known & (column.astype(str).to_numpy() == str(value))
    values = column.to_numpy(dtype=float)
    mask = known.copy()
    for key, test in (("gt", np.greater), ("ge", np.greater_equal), ("lt", np.less), ("le", np.less_equal)):
        if key in query:
            mask &= test(np.nan_to_num(values, nan=0.0), query[key])
    return mask


def _recompute(out: Path, planted: Path) -> pd.DataFrame:
    left = pd.read_csv(planted / "left.csv")
    right = pd.read_csv(planted / "right.csv").set_index("row_id").loc[left["row_id"]].reset_index()
    n = len(left)
    rows = []
    for path in sorted((out / "runs").glob("*/*/*.json")):
        if path.name.endswith(".failed.json"):
            continue
        document = json.loads(path.read_text())
        algorithm, label, run = path.parts[-3], path.parts[-2], int(path.stem)
        for index, red in enumerate(document["redescriptions"]):
            sl, sr = _support(red["left"], left), _support(red["right"], right)
            inter, union = int((sl & sr).sum()), int((sl | sr).sum())
            a, b = int(sl.sum()), int(sr.sum())
            rows.append({
                "algorithm": algorithm, "epsilon": math.nan if label == "none" else float(label), "run": run,
                "index": index, "pruned": bool(red["pruned"]),
                "noisy_jaccard": red["noisy"]["jaccard"], "true_support_left": a, "true_support_right": b,
                "true_intersection": inter, "true_union": union,
                "true_jaccard": inter / union if union else 0.0,
                "true_pvalue": float(stats.binom.sf(inter - 1, n, (a / n) * (b / n))),
                "interval": (red.get("interval") or {}).get("jaccard"),
            })
    frame = pd.DataFrame(rows)
    frame["abs_error_jaccard"] = (frame["noisy_jaccard"] - frame["true_jaccard"]).abs()
    return frame


def _key(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame["epsilon"] = frame["epsilon"].fillna(-1.0)
    return frame.sort_values(["algorithm", "epsilon", "run", "index"]).reset_index(drop=True)


# -- tables ------------------------------------------------------------------------------


def test_tables_have_the_columns_and_one_row_per_run_and_redescription(experiment):
    result, events = experiment
    runs = pd.read_csv(result.runs)
    assert list(runs.columns) == list(RUN_COLUMNS)
    # 2 private algorithms × (2 + 1) runs, cartwheels once
    assert len(runs) == 7
    assert sorted(runs.loc[runs.algorithm == "cartwheels", "epsilon"].isna()) == [True]
    assert (runs.status == "ok").all()
    assert (runs.rows == 300).all() and (runs.seconds > 0).all() and (runs.peak_mb > 10).all()
    reds = pd.read_csv(result.redescriptions)
    assert list(reds.columns) == list(REDESCRIPTION_COLUMNS)
    assert len(reds) == runs.returned.sum()
    for _, run in runs.iterrows():
        label = "none" if pd.isna(run.epsilon) else ("20" if run.epsilon == 20 else "1")
        document = json.loads((result.out_dir / "runs" / run.algorithm / label / f"{run.run}.json").read_text())
        assert document["format"] == "dprm.redescriptions/1" and document["algorithm"] == run.algorithm
        assert document["run"]["seed"] == run.seed
        same = reds[(reds.algorithm == run.algorithm) & (reds.run == run.run)
                    & ((reds.epsilon == run.epsilon) | (reds.epsilon.isna() & pd.isna(run.epsilon)))]
        assert same["index"].tolist() == list(range(len(document["redescriptions"])))
        assert run.returned == len(document["redescriptions"])
        assert run.kept == sum(not r["pruned"] for r in document["redescriptions"])
    summary = pd.read_csv(result.tables["summary"])
    assert list(summary.columns) == list(SUMMARY_TABLE_COLUMNS)
    assert len(summary) == 5  # (alt-expm, mcmc-tree-pair) × (20, 1) + cartwheels
    assert list(pd.read_csv(result.tables["mann_whitney"]).columns) == list(MANN_WHITNEY_TABLE_COLUMNS)
    # progress: a start event, then one per run, counting up to the total
    assert events[0] == (0, 7, None)
    assert [d for d, _, _ in events[1:]] == list(range(1, 8))
    manifest = read_manifest(result.out_dir)
    assert manifest["seed"] == 5 and manifest["budgets"] == "20x2,1x1"


def test_seeds_are_derived_from_the_master_seed_and_reproduce_a_mine_run(experiment, planted):
    from dprm.data import load_two_view
    from dprm.mining import make_miner
    from dprm.privacy import Accountant, SeededNoise

    result, _ = experiment
    runs = pd.read_csv(result.runs)
    for _, run in runs.iterrows():
        label = "none" if pd.isna(run.epsilon) else f"{run.epsilon:g}"
        assert run.seed == run_seed(5, run.algorithm, label, run.run)
    assert runs.seed.nunique() == len(runs)
    # the run's seed used as `dprm mine --seed` uses it gives the same redescriptions
    run = runs[(runs.algorithm == "mcmc-tree-pair") & (runs.epsilon == 20)].iloc[1]
    data = load_two_view(planted / "left.csv", planted / "right.csv", types=planted / "types.json")
    miner = make_miner("mcmc-tree-pair", epsilon=20.0, **parameters_for("mcmc-tree-pair", FAST))
    choices, noise = (np.random.default_rng(s) for s in np.random.SeedSequence(int(run.seed)).spawn(2))
    miner.fit(data, accountant=Accountant(20.0, SeededNoise(noise)), rng=choices)
    document = json.loads((result.out_dir / "runs" / "mcmc-tree-pair" / "20" / "1.json").read_text())
    assert document["redescriptions"] == miner.document()["redescriptions"]


def test_true_statistics_agree_with_an_independent_recomputation(experiment, planted):
    result, _ = experiment
    reds = _key(pd.read_csv(result.redescriptions))
    mine = _key(_recompute(result.out_dir, planted))
    assert len(reds) == len(mine) > 0
    for column in ("algorithm", "run", "index", "pruned", "true_support_left", "true_support_right",
                   "true_intersection", "true_union"):
        assert reds[column].tolist() == mine[column].tolist(), column
    for column in ("epsilon", "noisy_jaccard", "true_jaccard", "true_pvalue", "abs_error_jaccard"):
        np.testing.assert_allclose(reds[column], mine[column], rtol=1e-9, atol=1e-12, err_msg=column)
    assert (reds.significant == (mine.true_pvalue < 0.01)).all()
    # a non-private run's reported statistics are exact
    exact = reds[reds.algorithm == "cartwheels"]
    np.testing.assert_allclose(exact.noisy_jaccard, exact.true_jaccard, atol=1e-12)


def test_summary_figures_agree_with_an_independent_recomputation(experiment, planted):
    result, _ = experiment
    summary = pd.read_csv(result.tables["summary"])
    mine = _recompute(result.out_dir, planted)
    runs = pd.read_csv(result.runs)
    compared = covered = 0
    for _, row in summary.iterrows():
        same_eps = (lambda f: f.epsilon.isna()) if pd.isna(row.epsilon) else (lambda f: f.epsilon == row.epsilon)
        group = mine[(mine.algorithm == row.algorithm) & same_eps(mine)]
        kept = group[~group.pruned]
        group_runs = runs[(runs.algorithm == row.algorithm) & same_eps(runs)]
        assert row.runs == len(group_runs)
        assert row.runs_with_results == pytest.approx((group_runs.kept >= 1).mean())
        assert row.returned == len(group) and row.kept == len(kept)
        if len(kept):
            assert row.share_significant == pytest.approx((kept.true_pvalue < 0.01).mean())
            assert row.true_jaccard_median == pytest.approx(kept.true_jaccard.median())
            assert row.true_jaccard_q1 == pytest.approx(kept.true_jaccard.quantile(0.25))
            assert row.abs_error_jaccard_median == pytest.approx(kept.abs_error_jaccard.median(), abs=1e-12)
        else:
            assert pd.isna(row.share_significant) and pd.isna(row.true_jaccard_median)
        with_interval = kept[kept.interval.notna()]
        if len(with_interval):
            inside = [low <= j <= high for (low, high), j in zip(with_interval.interval, with_interval.true_jaccard)]
            assert row.interval_coverage == pytest.approx(np.mean(inside))
            covered += 1
        else:
            assert pd.isna(row.interval_coverage)
        if len(kept) >= 3 and kept.noisy_jaccard.nunique() > 1 and kept.true_jaccard.nunique() > 1:
            rho, p = stats.spearmanr(kept.noisy_jaccard, kept.true_jaccard)
            assert row.spearman_rho == pytest.approx(rho) and row.spearman_p == pytest.approx(p)
            compared += 1
    assert compared >= 1 and covered >= 1  # some group had enough kept redescriptions for ρ, with intervals
    # Mann–Whitney: best median true Jaccard among the algorithms at ε = 20, vs each other
    table = pd.read_csv(result.tables["mann_whitney"])
    at20 = mine[(mine.epsilon == 20) & ~mine.pruned]
    medians = at20.groupby("algorithm").true_jaccard.median()
    if len(medians) == 2:
        best, other = medians.idxmax(), medians.idxmin()
        row = table[(table.epsilon == 20) & (table.value == "true_jaccard")].iloc[0]
        assert (row.best, row.other) == (best, other)
        expected = stats.mannwhitneyu(at20[at20.algorithm == best].true_jaccard,
                                      at20[at20.algorithm == other].true_jaccard, alternative="greater")
        assert row.statistic == pytest.approx(expected.statistic) and row.pvalue == pytest.approx(expected.pvalue)


# -- resuming and extending ----------------------------------------------------------------


def _small(planted: Path, **changes) -> ExperimentConfig:
    return _config(planted, **{"algorithms": ["alt-expm"], "budgets": "5x3", **changes})


def test_a_deleted_run_is_redone_and_the_others_are_skipped(planted, tmp_path):
    out = tmp_path / "exp"
    first = run_experiment(_small(planted), out, jobs=2, reports=False)
    assert (first.ran, first.skipped) == (3, 0)
    runs_dir = out / "runs" / "alt-expm" / "5"
    before = {p.name: p.stat().st_mtime_ns for p in runs_dir.glob("*.json")}
    original = json.loads((runs_dir / "1.json").read_text())
    (runs_dir / "1.json").unlink()
    second = run_experiment(_small(planted, seed=None), out, jobs=2, reports=False)  # the seed is the manifest's
    assert (second.ran, second.skipped) == (1, 2)
    after = {p.name: p.stat().st_mtime_ns for p in runs_dir.glob("*.json")}
    assert after["0.json"] == before["0.json"] and after["2.json"] == before["2.json"]
    redone = json.loads((runs_dir / "1.json").read_text())
    assert redone["redescriptions"] == original["redescriptions"]  # the same seed reproduces the run
    assert len(pd.read_csv(out / "runs.csv")) == 3


def test_an_interrupted_experiment_resumes_with_the_missing_runs_only(planted, tmp_path):
    out = tmp_path / "exp"

    def interrupt(done, total, record):
        if record is not None:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_experiment(_small(planted, budgets="5x5"), out, jobs=1, progress=interrupt, reports=False)
    finished = {int(p.stem) for p in (out / "runs" / "alt-expm" / "5").glob("*.json")}
    # interrupted after the first run; the one under way may have finished meanwhile,
    # the rest was stopped; nothing is half-written
    assert 0 in finished and len(finished) < 5
    assert not list(out.rglob("*.tmp"))
    seen = []
    resumed = run_experiment(_small(planted, budgets="5x5"), out, jobs=2, reports=False,
                             progress=lambda d, t, r: seen.append(r))
    assert (resumed.ran, resumed.skipped) == (5 - len(finished), len(finished))
    assert sorted(r.run for r in seen if r is not None) == sorted(set(range(5)) - finished)
    assert (pd.read_csv(out / "runs.csv").status == "ok").all()


def test_extending_an_experiment_runs_only_the_new_runs(planted, tmp_path):
    out = tmp_path / "exp"
    run_experiment(_small(planted, budgets="5x1"), out, jobs=1, reports=False)
    more = run_experiment(_small(planted, budgets="5x2,2x1", algorithms=["alt-expm", "cartwheels"]), out,
                          jobs=2, reports=False)
    assert (more.ran, more.skipped) == (3, 1)
    manifest = read_manifest(out)
    assert manifest["budgets"] == "5x2,2x1" and manifest["algorithms"] == ["alt-expm", "cartwheels"]
    # asking for less later keeps the union (the experiment is everything asked so far)
    again = run_experiment(_small(planted, budgets="5x1"), out, jobs=1, reports=False)
    assert (again.ran, again.skipped) == (0, 4)
    assert len(pd.read_csv(out / "runs.csv")) == 4


def test_a_directory_with_another_experiment_is_refused_and_left_alone(planted, tmp_path):
    out = tmp_path / "exp"
    run_experiment(_small(planted, budgets="5x1"), out, jobs=1, reports=False)
    manifest = (out / "experiment.json").read_text()
    for changes, words in (({"seed": 6}, "master seed 5, not 6"),
                           ({"parameters": {"mcmc_iterations": 31, "init_trials": 2, "alternations": 1}},
                            "parameters"),
                           ({"types": None}, "types file")):
        with pytest.raises(DprmError, match="holds another experiment") as caught:
            run_experiment(_small(planted, budgets="5x1", **changes), out, jobs=1, reports=False)
        assert words in str(caught.value) and "\n" not in str(caught.value)
    other = tmp_path / "other.csv"
    changed = pd.read_csv(planted / "left.csv")
    changed.loc[0, "l_bool_0"] = 1 - changed.loc[0, "l_bool_0"]
    changed.to_csv(other, index=False)
    with pytest.raises(DprmError, match="other left data"):
        run_experiment(_small(planted, budgets="5x1", left=other), out, jobs=1, reports=False)
    assert (out / "experiment.json").read_text() == manifest
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine")
    with pytest.raises(DprmError, match="holds no experiment"):
        run_experiment(_small(planted), stranger, jobs=1, reports=False)
    assert sorted(p.name for p in stranger.iterdir()) == ["notes.txt"]


# -- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize("changes, error, words", [
    ({"algorithms": ["alt-expm", "nope"]}, ParameterError, "unknown algorithm 'nope'"),
    ({"algorithms": []}, ParameterError, "at least one algorithm"),
    ({"budgets": "1x"}, ParameterError, "not EPSxRUNS"),
    ({"budgets": "1x10,"}, ParameterError, "empty item"),
    ({"parameters": {"epsilon": 1}}, ParameterError, "set by the experiment"),
    ({"parameters": {"pair_score": "gini"}, "algorithms": ["alt-expm"]}, ParameterError, "applies to none"),
    ({"parameters": {"alt-expm": {"pair_score": "gini"}}}, ParameterError, "pair_score does not apply to alt-expm"),
    ({"parameters": {"depth": 0}}, ParameterError, "depth must be at least 1"),
    ({"seed": -1}, ParameterError, "--seed"),
    ({"left": "/nonexistent/left.csv"}, DataError, "no such file"),
    # it bounds the baselines' runs only: asked of the miners alone, it was recorded and bounded nothing
    ({"timeout": 3.0}, ParameterError, "--timeout bounds the runs of the baselines"),
])
def test_bad_input_is_one_line_and_writes_nothing(planted, tmp_path, changes, error, words):
    out = tmp_path / "exp"
    with pytest.raises(error, match=words) as caught:
        run_experiment(_config(planted, **changes), out, jobs=1, reports=False)
    assert "\n" not in str(caught.value)
    assert not out.exists()


def test_parameter_items():
    assert parse_parameter_items(['{"mcmc-tree-pair": {"omega": 0.2}}', "depth=3", "alt-mcmc.units=leaves"]) == {
        "mcmc-tree-pair": {"omega": 0.2}, "depth": 3, "alt-mcmc": {"units": "leaves"}}
    for bad, words in (("depth", "NAME=VALUE"), ("{nope", "not valid JSON"), ("what.depth=3", "unknown algorithm"),
                       ('{"alt-expm": 3}', "JSON object")):
        with pytest.raises(ParameterError, match=words):
            parse_parameter_items([bad])
    assert parameters_for("mcmc-tree-pair", {"alternations": 2, "depth": 3}) == {"depth": 3}


def test_a_baseline_that_cannot_run_is_a_clear_note_not_a_crash(planted, tmp_path):
    out = tmp_path / "exp"
    result = run_experiment(_config(planted, algorithms=["clired-reremi"], budgets="1x1", parameters={},
                                    timeout=60), out, jobs=1, reports=False)
    (record,) = result.records
    assert record.epsilon is None and record.run == 0
    if record.status != "ok":  # python-clired or the baselines module is missing here
        assert record.status in ("unavailable", "failed") and record.message and "\n" not in record.message
        assert any(note.startswith("clired-reremi:") for note in result.notes)
        runs = pd.read_csv(out / "runs.csv")
        assert runs.status.tolist() == [record.status]


def test_baselines_run_once_through_run_clired_and_their_absence_is_unavailable(planted, tmp_path, monkeypatch):
    """The baseline path of a run, in this process with a stand-in for dprm.evaluation.baselines."""
    import sys
    import types

    from dprm.data import load_two_view
    from dprm.evaluation.runner import write_tables
    from dprm.evaluation.workers import _execute
    from dprm.mining import make_miner

    out = tmp_path / "exp"
    run_experiment(_config(planted, algorithms=["clired-splitt"], budgets="1x3", parameters={}), out, jobs=1,
                   reports=False)
    data = load_two_view(planted / "left.csv", planted / "right.csv", types=planted / "types.json")
    exact = make_miner("cartwheels", init_trials=2).fit(data, rng=np.random.default_rng(0)).document()
    calls = []

    def run_clired(algorithm, left, right, *, work_dir, **options):
        calls.append((algorithm, Path(work_dir).is_dir(), options))
        return {**exact, "algorithm": algorithm}

    monkeypatch.setitem(sys.modules, "dprm.evaluation.baselines", types.SimpleNamespace(run_clired=run_clired))
    path = out / "runs" / "clired-splitt" / "none" / "0.json"
    task = {"algorithm": "clired-splitt", "epsilon": None, "run": 0, "seed": run_seed(5, "clired-splitt", "none", 0),
            "master_seed": 5,  # the experiment's run: write_tables refuses a document of another seed
            "path": str(path), "rows": 300, "baseline": True, "left": str(planted / "left.csv"),
            "right": str(planted / "right.csv"), "types": None, "id_column": None, "timeout": 30,
            "parameters": {"min_support": 5}}
    record = _execute(task)
    assert record["status"] == "ok" and record["returned"] == len(exact["redescriptions"])
    assert calls == [("clired-splitt", True, {"types": None, "id_column": None, "min_support": 5, "timeout": 30})]
    assert not path.with_name("0.work").exists() and not path.with_name("0.failed.json").exists()
    written = write_tables(out)
    runs = pd.read_csv(written.runs)
    assert len(runs) == 1 and runs.status.tolist() == ["ok"] and runs.epsilon.isna().all()  # once, no budget
    reds = pd.read_csv(written.redescriptions)
    assert len(reds) == len(exact["redescriptions"]) and reds.epsilon.isna().all()
    np.testing.assert_allclose(reds.noisy_jaccard, reds.true_jaccard, atol=1e-12)  # exact statistics

    def missing(*args, **kwargs):
        raise ImportError("No module named 'clired'")

    monkeypatch.setitem(sys.modules, "dprm.evaluation.baselines", types.SimpleNamespace(run_clired=missing))
    path.unlink()
    record = _execute(task)
    assert record["status"] == "unavailable" and "clired" in record["message"]
    assert json.loads(path.with_name("0.failed.json").read_text())["status"] == "unavailable"


# -- the command line -----------------------------------------------------------------------


def test_cli_evaluate_writes_the_tables_and_resumes(planted, tmp_path, capsys):
    out = tmp_path / "exp"
    args = ["evaluate", str(planted / "left.csv"), str(planted / "right.csv"), "--algorithms", "alt-mcmc",
            "--budgets", "5x2", "--jobs", "2", "--out", str(out), "--types", str(planted / "types.json"),
            "-p", "mcmc-iterations=30", "-p", '{"init_trials": 2, "alternations": 1}', "--no-reports"]
    main(args)
    printed = capsys.readouterr()
    assert "master seed" in printed.out and "not private releases" in printed.out
    assert "2 runs now, 0 finished before" in printed.out
    assert len(pd.read_csv(out / "runs.csv")) == 2
    seed = read_manifest(out)["seed"]
    assert isinstance(seed, int) and seed >= 0
    main(args)
    assert "0 runs now, 2 finished before" in capsys.readouterr().out


def test_cli_evaluate_refuses_a_directory_at_a_run_documents_path_before_running(planted, tmp_path, capsys):
    """The run was mined, failed to write, and was reported as refusing its input ("use other parameters")."""
    out = tmp_path / "exp"
    args = ["evaluate", str(planted / "left.csv"), str(planted / "right.csv"), "--algorithms", "alt-mcmc",
            "--budgets", "5x1", "--jobs", "1", "--out", str(out), "--types", str(planted / "types.json"),
            "-p", "mcmc-iterations=30", "-p", '{"init_trials": 2, "alternations": 1}', "--no-reports"]
    main(args)
    capsys.readouterr()
    taken = out / "runs" / "alt-mcmc" / "5" / "1.json"
    taken.mkdir()
    before = sorted((p.relative_to(out), p.stat().st_mtime_ns) for p in out.rglob("*"))
    with pytest.raises(SystemExit) as done:
        main([*args[:6], "5x2", *args[7:]])
    assert done.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {taken}: is a directory, where the run's document is written; move it away and run "
                   "the same dprm evaluate command again"]
    assert sorted((p.relative_to(out), p.stat().st_mtime_ns) for p in out.rglob("*")) == before  # nothing written


@pytest.mark.parametrize("budgets", ["1x", "x10", "0x10", "-1x5", "1x0", "1x10,", "abc", "1x1000000000000",
                                     "０.５x2", "1_0x2", pytest.param("1x" + "9" * 5000, id="5000-digits")])
def test_cli_malformed_budgets(planted, tmp_path, capsys, budgets):
    out = tmp_path / "exp"
    with pytest.raises(SystemExit) as done:
        main(["evaluate", str(planted / "left.csv"), str(planted / "right.csv"), "--algorithms", "alt-expm",
              f"--budgets={budgets}", "--out", str(out)])
    assert done.value.code == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --budgets")
    assert captured.out == ""  # no progress bar before the error
    assert not out.exists()


@pytest.mark.parametrize("budgets, words", [
    ("０.５x2", "in '０.５x2': '０.５' is not a number: write it in ASCII digits (0-9)"),  # was run at 0.5
    ("1x2,1_0x2", "in '1_0x2': '1_0' is not a number: write it without '_' separators"),  # was run at 10
    ("1x" + "9" * 5000, "has 5000 digits; an integer option takes at most 50"),  # was Python's digit limit
], ids=["full-width", "underscore", "5000-digits"])
def test_budgets_follow_the_options_number_rule(budgets, words):
    with pytest.raises(ParameterError) as info:
        parse_budgets(budgets)
    assert str(info.value).startswith("--budgets: ") and words in str(info.value) and len(str(info.value)) < 160


@pytest.mark.parametrize("extra, words", [
    (["--algorithms", "alt-expm,bogus"], "unknown algorithm 'bogus'"),
    (["--algorithms", "alt-expm,"], "empty name"),
])
def test_cli_bad_algorithms_and_missing_files(planted, tmp_path, capsys, extra, words):
    out = tmp_path / "exp"
    with pytest.raises(SystemExit) as done:
        main(["evaluate", str(planted / "left.csv"), str(planted / "right.csv"), *extra, "--budgets", "1x1",
              "--out", str(out)])
    assert done.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0]
    with pytest.raises(SystemExit) as done:
        main(["evaluate", str(tmp_path / "missing.csv"), str(planted / "right.csv"), "--algorithms", "alt-expm",
              "--budgets", "1x1", "--out", str(out)])
    assert done.value.code == 2 and "no such file" in capsys.readouterr().err
    assert not out.exists()


def test_cli_data_every_run_would_refuse_is_one_line_before_the_directory(tmp_path, capsys):
    left = tmp_path / "left.csv"
    right = tmp_path / "right.csv"
    left.write_text("row_id,x\n1,5\n2,5\n")  # one constant column: no usable attribute
    right.write_text("row_id,y\n1,7\n2,8\n")
    out = tmp_path / "exp"
    with pytest.raises(SystemExit) as done:
        main(["evaluate", str(left), str(right), "--algorithms", "alt-expm", "--budgets=1x1", "--seed", "1",
              "--out", str(out)])
    assert done.value.code == 2  # was exit 1, with a whole directory of refused runs
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the left view" in err[0] and "no usable attribute" in err[0]
    assert not out.exists()


def test_cli_summary_prints_its_legend_whole(capsys, monkeypatch):
    """The legend under the summary table was cut at the table's width ("|ΔJ| med: media")."""
    from dprm.cli.console import console
    from dprm.cli.evaluate import _print_summary

    monkeypatch.setattr(console, "width", 80)  # a terminal's, or a pipe's

    rows = [("alt-expm", 1.0, 1.0, 55, 0.96, 0.956, 0.585, 0.0829, 1.52, 218.4),
            ("serenade-es", 1.0, 1.0, 8, 0.5, -0.19, 0.388, 0.16, 4.6, 333.0),  # ρ < 0: the table is 80 wide
            ("serenade-es", 0.1, 0.0, 0, math.nan, math.nan, math.nan, math.nan, 5.09, 332.8),
            ("cartwheels", math.nan, 1.0, 10633, 1.0, 1.0, 0.677, 0.0, 20.4, 343.6)]
    columns = ["algorithm", "epsilon", "runs_with_results", "kept", "share_significant", "spearman_rho",
               "true_jaccard_median", "abs_error_jaccard_median", "seconds_median", "peak_mb_median"]
    _print_summary(pd.DataFrame(rows, columns=columns))
    printed = " ".join(capsys.readouterr().out.split())
    assert ("runs ≥1: share of runs with a kept redescription; sig.: share with true p < alpha; ρ: Spearman "
            "noisy vs true J; J med: median true Jaccard; |ΔJ| med: median |noisy − true| J") in printed
