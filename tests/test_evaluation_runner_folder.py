"""``dprm evaluate``'s experiment folder: its lock, its manifest read strictly, the options that shape it.

The fuzz round's faults (two runners on one folder mixing experiments; a hand-edited
``experiment.json`` trusted, down to writing outside the folder; ``--timeout inf``;
a parameter given twice; extending by a subset of algorithms; an interruption's
message), each checked where the user sees it: the command's exit code, its one line
of error and the folder left as it was.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import shutil
from pathlib import Path

import pytest

from dprm.cli import main
from dprm.datasets import make_planted, write_planted
from dprm.errors import DprmError, ParameterError
from dprm.evaluation.manifest import _DirectoryLock, _run_path, read_manifest
from dprm.evaluation.runner import ExperimentConfig, parse_parameter_items

FAST = ["-p", "alt-expm.depth=2", "-p", "alt-expm.init_trials=2"]


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("planted")
    write_planted(make_planted(300, n_left_boolean=6, n_right_numeric=4, n_planted=2, random_state=11), directory)
    return directory


def _args(planted: Path, out: Path, *extra: str) -> list[str]:
    return ["evaluate", str(planted / "left.csv"), str(planted / "right.csv"), "--types", str(planted / "types.json"),
            "--budgets", "5x1", "--jobs", "1", "--no-reports", "--out", str(out), *extra]


def _run(args: list[str]) -> tuple[int, str, str]:
    """Exit code, standard output and standard error of ``dprm ARGS``."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
        except SystemExit as done:
            code = 0 if done.code is None else done.code
    return code, out.getvalue(), err.getvalue()


def _files(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``folder`` (the lock too): its bytes and modification time."""
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def finished(planted, tmp_path_factory) -> Path:
    """A finished experiment: alt-expm (depth 2 of its own) and serenade-es, one run each at ε 5, master seed 5."""
    out = tmp_path_factory.mktemp("finished") / "exp"
    code, _, err = _run(_args(planted, out, "--seed", "5", "--algorithms", "alt-expm,serenade-es", *FAST))
    assert code == 0, err
    assert json.loads((out / "runs" / "serenade-es" / "5" / "0.json").read_text())["redescriptions"]
    return out


# -- F1: the lock first, then the folder -------------------------------------------------------


def _another_runner_finishes_first(monkeypatch, experiment: Path) -> None:
    """Between this runner's first look at the folder and its lock, another runner writes ``experiment`` there."""
    take = _DirectoryLock.__enter__

    def enter(lock):
        shutil.copytree(experiment, lock.path.parent, dirs_exist_ok=True)
        return take(lock)

    monkeypatch.setattr(_DirectoryLock, "__enter__", enter)


def test_a_runner_locking_after_another_finished_extends_that_experiment(finished, planted, tmp_path, monkeypatch):
    """Its manifest, computed before the lock, replaced the other's: alt-expm was dropped from experiment.json."""
    out = tmp_path / "exp"
    _another_runner_finishes_first(monkeypatch, finished)
    code, printed, err = _run(_args(planted, out, "--seed", "5", "--algorithms", "serenade-es"))
    assert code == 0, err
    assert "0 runs now, 2 finished before" in printed  # the other's runs, read under the lock
    manifest = read_manifest(out)
    assert manifest["algorithms"] == ["alt-expm", "serenade-es"]
    assert manifest["parameters"] == read_manifest(finished)["parameters"]


def test_a_runner_locking_after_another_experiment_was_written_refuses_it(finished, planted, tmp_path, monkeypatch):
    """Its manifest (master seed 6) was written over the other's and the other's runs were taken as its own."""
    out = tmp_path / "exp"
    _another_runner_finishes_first(monkeypatch, finished)
    code, _, err = _run(_args(planted, out, "--seed", "6", "--algorithms", "alt-expm,serenade-es", *FAST))
    assert code == 2
    assert err == f"error: {out}: holds another experiment (master seed 5, not 6); choose another --out\n"
    assert {k: v[0] for k, v in _files(out).items()} == {k: v[0] for k, v in _files(finished).items()}


# -- F2: the manifest read strictly, every path inside the folder -------------------------------


def _set(**values):
    def edit(text: str, where: Path) -> str:
        manifest = json.loads(text)
        manifest.update(values)
        return json.dumps(manifest, indent=2)
    return edit


def _add_algorithm(name: str):
    def edit(text: str, where: Path) -> str:
        manifest = json.loads(text)
        manifest["algorithms"].append(name.format(where=where))
        return json.dumps(manifest, indent=2)
    return edit


def _replace(old: str, new: str):
    def edit(text: str, where: Path) -> str:
        assert old in text
        return text.replace(old, new, 1)
    return edit


MANIFEST_REFUSED = [
    # iterated as characters: runs/s/, runs/e/, ... were made
    ("algorithms-text", _set(algorithms="serenade-es"),
     "algorithms must be a non-empty list of algorithm names, not 'serenade-es'"),
    # every run counted twice in the tables
    ("algorithm-twice", _set(algorithms=["alt-expm", "serenade-es", "alt-expm"]), "algorithms[2]: alt-expm is listed twice"),
    # .failed.json files were written outside the folder
    ("escaping-name", _add_algorithm("../../../ESCAPED"), "algorithms[2] must be one of cartwheels, "),
    ("absolute-name", _add_algorithm("{where}/ABSOLUTE"), "algorithms[2] must be one of cartwheels, "),
    ("repeated-key", _replace('"seed": 5', '"seed": 5, "seed": 6'), "not valid JSON: duplicate key 'seed'"),
    ("nan", _replace('"alpha": 0.01', '"alpha": NaN'), "not valid JSON: NaN is not allowed"),
    ("seed-text", _set(seed="5"), "seed must be a whole number >= 0 (the master seed), not '5'"),
    ("parameters-list", _set(parameters=[]), "parameters must be a JSON object, not []"),
    ("timeout-text", _set(timeout="abc"), "timeout must be a positive finite number of seconds or null, not 'abc'"),
    ("alpha-7", _set(alpha=7), "alpha must be a number in (0, 1), not 7"),
]


@pytest.mark.parametrize("name, edit, fragment", MANIFEST_REFUSED, ids=[r[0] for r in MANIFEST_REFUSED])
def test_a_hand_edited_manifest_is_one_line_of_error_and_nothing_is_written(finished, planted, tmp_path,
                                                                          name, edit, fragment):
    where = tmp_path / "a" / "b"  # runs/../../../ESCAPED of where/exp is tmp_path/a/ESCAPED
    out = where / "exp"
    shutil.copytree(finished, out)
    manifest = out / "experiment.json"
    manifest.write_text(edit(manifest.read_text(encoding="utf-8"), where), encoding="utf-8")
    before = _files(out)
    code, printed, err = _run(_args(planted, out, "--seed", "5", "--algorithms", "alt-expm,serenade-es", *FAST))
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: {manifest}: ") and fragment in err, err
    assert printed == ""  # refused before the progress bar
    assert _files(out) == before
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["b"] and [p.name for p in where.iterdir()] == ["exp"]


def test_a_run_path_stays_inside_the_experiment_folder(tmp_path):
    assert _run_path(tmp_path, "alt-expm", "0.1", 3) == tmp_path / "runs" / "alt-expm" / "0.1" / "3.json"
    for algorithm, label in (("../../x", "1"), (str(tmp_path / "x"), "1"), ("alt-expm", ".."), ("", "1")):
        with pytest.raises(DprmError, match="is not a folder name under runs/"):
            _run_path(tmp_path, algorithm, label, 0)


# -- F11: extending by a subset of the algorithms -----------------------------------------------


def test_an_experiment_with_parameters_of_its_own_extends_by_a_subset(finished, planted, tmp_path):
    """Its parameters for alt-expm were refused (not among the algorithms), and left out another experiment."""
    out = tmp_path / "exp"
    shutil.copytree(finished, out)
    recorded = read_manifest(finished)
    for extra in (FAST, []):  # the same parameters, or none: the recorded ones (as the master seed)
        code, printed, err = _run(_args(planted, out, "--seed", "5", "--algorithms", "serenade-es", *extra))
        assert code == 0, err
        assert "0 runs now, 2 finished before" in printed
        manifest = read_manifest(out)
        assert (manifest["algorithms"], manifest["parameters"]) == (recorded["algorithms"], recorded["parameters"])
    code, _, err = _run(_args(planted, out, "--algorithms", "serenade-es", "-p", "alt-expm.depth=3"))
    assert code == 2 and err == (f"error: {out}: holds another experiment (parameters "
                                 '{"alt-expm": {"depth": 2, "init_trials": 2}}, not {"alt-expm": {"depth": 3}}); '
                                 "choose another --out\n")
    new = tmp_path / "new"  # a new experiment has no alt-expm to give parameters to
    code, _, err = _run(_args(planted, new, "--algorithms", "serenade-es", *FAST))
    assert code == 2 and err == "error: --parameters: alt-expm is not among the experiment's algorithms\n"
    assert not new.exists()


# -- F6, F10: options -------------------------------------------------------------------------


@pytest.mark.parametrize("timeout, words", [
    ("inf", "--timeout must be a positive finite number of seconds, not inf"),  # the manifest got Infinity
    ("nan", "--timeout must be a positive finite number of seconds, not nan"),
    ("0", "--timeout must be a positive finite number of seconds, not 0.0"),
    ("1e400", "'1e400' is beyond the largest number"),
])
def test_timeout_is_a_positive_finite_number(planted, tmp_path, timeout, words):
    out = tmp_path / "exp"
    code, printed, err = _run(_args(planted, out, "--algorithms", "clired-splitt", "--timeout", timeout))
    assert code == 2 and err.count("\n") == 1 and words in err, err
    assert printed == "" and not out.exists()
    with pytest.raises(ParameterError, match="--timeout must be a positive finite number"):
        ExperimentConfig(planted / "left.csv", planted / "right.csv", ["clired-splitt"], "1x1",
                         timeout=math.inf).checked()


@pytest.mark.parametrize("items, words", [
    (["depth=3", "depth=4"], "--parameters: depth is given twice ('depth=4')"),
    (['{"depth": 3, "depth": 4}'], "--parameters: not valid JSON: duplicate key 'depth'"),
    (["mcmc-iterations=30", '{"mcmc_iterations": 40}'], "--parameters: mcmc_iterations is given twice"),
    (["alt-expm.depth=3", '{"alt-expm": {"depth": 4}}'], "--parameters: alt-expm.depth is given twice"),
    (['{"alt-expm": {"depth": 3, "depth": 4}}'], "--parameters: not valid JSON: duplicate key 'depth'"),
])
def test_a_parameter_given_twice_is_refused(planted, tmp_path, items, words):
    """The last value won, silently."""
    with pytest.raises(ParameterError) as caught:
        parse_parameter_items(items)
    assert words in str(caught.value)
    assert parse_parameter_items(["depth=3", "alt-expm.depth=2"]) == {"depth": 3, "alt-expm": {"depth": 2}}
    out = tmp_path / "exp"
    code, printed, err = _run(_args(planted, out, "--algorithms", "alt-expm",
                                    *(a for item in items for a in ("-p", item))))
    assert code == 2 and err.count("\n") == 1 and words in err, err
    assert printed == "" and not out.exists()


# -- F12: an interruption's message, a literal the data's types do not take ----------------------


def test_an_interruption_before_the_folder_is_written_says_nothing_was_written(finished, planted, tmp_path,
                                                                             monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("dprm.data.load_two_view", interrupted)
    out = tmp_path / "exp"
    code, _, err = _run(_args(planted, out, "--algorithms", "serenade-es"))
    assert (code, err) == (130, "interrupted: nothing was written\n")  # was "finished runs are kept in exp"
    assert not out.exists()
    kept = tmp_path / "kept"
    shutil.copytree(finished, kept)
    code, _, err = _run(_args(planted, kept, "--algorithms", "serenade-es"))
    assert (code, err) == (130, f"interrupted: finished runs are kept in {kept}; run the same command again to "
                                "resume\n")


@pytest.mark.parametrize("query, words", [
    ({"attr": "r_num_0", "eq": "abc"}, "the category 'abc' (not a number) on attribute 'r_num_0' of the right view, "
                                       "which is numeric"),
    ({"attr": "r_num_0", "eq": True}, "a Boolean literal on attribute 'r_num_0' of the right view, which is numeric"),
])
def test_a_finished_runs_literal_of_another_kind_is_refused_before_the_progress_bar(finished, planted, tmp_path,
                                                                                    query, words):
    """It was refused by the true statistics, after the progress bar was drawn."""
    out = tmp_path / "exp"
    shutil.copytree(finished, out)
    path = out / "runs" / "serenade-es" / "5" / "0.json"
    document = json.loads(path.read_text())
    document["redescriptions"][0]["right"] = query
    path.write_text(json.dumps(document, indent=2))
    before = _files(out)
    code, printed, err = _run(_args(planted, out, "--seed", "5", "--algorithms", "serenade-es"))
    assert code == 2 and err == f"error: {path}: redescriptions[0].right: {words}; delete the file to have the run " \
                                "redone\n", err
    assert printed == "" and _files(out) == before


# -- each finished run's document read once ----------------------------------------------------


def test_each_run_document_is_read_once_and_the_tables_stay_the_same(finished, planted, tmp_path, monkeypatch):
    """A finished run's document was read three times (a look before the lock, one under it, the tables)."""
    from collections import Counter

    import dprm.evaluation.run_documents as run_documents

    out = tmp_path / "exp"
    shutil.copytree(finished, out)
    reads: Counter = Counter()
    read = run_documents.read_run_document

    def counting(path, *args, **kwargs):
        reads[Path(path)] += 1
        return read(path, *args, **kwargs)

    monkeypatch.setattr(run_documents, "read_run_document", counting)
    code, _, err = _run(_args(planted, out, "--seed", "5", "--algorithms", "alt-expm,serenade-es", *FAST))
    assert code == 0, err
    documents = sorted(out.glob("runs/*/*/*.json"))
    assert len(documents) == 2 and reads == {path: 1 for path in documents}
    for table in ("runs.csv", "redescriptions.csv", "summary.csv"):  # the outputs of a resume are the same
        assert (out / table).read_bytes() == (finished / table).read_bytes(), table
    # extended by a second run of each: the new documents are read once too (by the tables)
    reads.clear()
    code, _, err = _run([a if a != "5x1" else "5x2" for a in _args(planted, out, "--seed", "5", "--algorithms",
                                                                 "alt-expm,serenade-es", *FAST)])
    assert code == 0, err
    documents = sorted(out.glob("runs/*/*/*.json"))
    assert len(documents) == 4 and reads == {path: 1 for path in documents}


def test_a_document_changed_after_its_check_does_not_reach_the_tables(finished, planted, tmp_path, monkeypatch):
    """The tables read the documents again after the runs: a file changed meanwhile went into runs.csv (its
    statistics unchecked against the data's types), disagreeing with the records the console printed."""
    import dprm.evaluation.runner as runner

    out = tmp_path / "exp"
    shutil.copytree(finished, out)
    path = out / "runs" / "serenade-es" / "5" / "0.json"
    run_all = runner._run_all

    def changing(*args, **kwargs):
        records = run_all(*args, **kwargs)
        document = json.loads(path.read_text())
        document["run"]["seconds"] = 1234.5
        document["redescriptions"][0]["right"] = {"attr": "r_num_0", "eq": True}  # a literal the type does not take
        path.write_text(json.dumps(document, indent=2))
        return records

    monkeypatch.setattr(runner, "_run_all", changing)
    code, _, err = _run(_args(planted, out, "--seed", "5", "--algorithms", "alt-expm,serenade-es", *FAST))
    assert code == 0, err
    for table in ("runs.csv", "redescriptions.csv", "summary.csv"):  # the documents as they were checked
        assert (out / table).read_bytes() == (finished / table).read_bytes(), table


def test_a_refused_document_in_a_folder_without_a_lock_file_leaves_none(finished, planted, tmp_path):
    """Documents are read under the lock only: the lock file a refused run created there is removed again."""
    out = tmp_path / "exp"
    shutil.copytree(finished, out, ignore=shutil.ignore_patterns(".lock"))
    path = out / "runs" / "serenade-es" / "5" / "0.json"
    path.write_text(path.read_text().replace('"redescriptions"', '"redescriptions": [], "x"', 1))
    before = _files(out)
    code, printed, err = _run(_args(planted, out, "--seed", "5", "--algorithms", "alt-expm,serenade-es", *FAST))
    assert code == 2 and err.startswith(f"error: {path}: ") and err.count("\n") == 1, err
    assert printed == "" and _files(out) == before and not (out / ".lock").exists()


def test_a_lock_file_removed_while_held_is_taken_again(tmp_path, monkeypatch):
    """A runner that opened the lock file before its holder removed it (a failed run) locks the file the name
    leads to now, not the removed one: two runners never hold two locks of one folder."""
    import fcntl

    import dprm.evaluation.manifest as manifest

    (tmp_path / ".lock").write_text("")
    flock, removed = fcntl.flock, []

    def holder_removes_it_first(handle, operation):
        if not removed and operation & fcntl.LOCK_EX:  # between this runner's open and its lock
            removed.append(os.fstat(handle.fileno()).st_ino)
            (tmp_path / ".lock").unlink()
        return flock(handle, operation)

    monkeypatch.setattr(manifest.fcntl, "flock", holder_removes_it_first)
    with _DirectoryLock(tmp_path) as lock:
        assert removed and os.path.samestat(os.fstat(lock.handle.fileno()), os.stat(lock.path))
        assert lock.created  # the new file is this runner's: removed again if it fails before claiming
        with pytest.raises(DprmError, match="another dprm evaluate is running"):
            with _DirectoryLock(tmp_path):
                pass
