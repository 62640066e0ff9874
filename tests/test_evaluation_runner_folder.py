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
import shutil
from pathlib import Path

import pytest

from dprm.cli import main
from dprm.datasets import make_planted, write_planted
from dprm.errors import ParameterError
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


@pytest.fixture(scope="module")
def finished(planted, tmp_path_factory) -> Path:
    """A finished experiment: alt-expm (depth 2 of its own) and serenade-es, one run each at ε 5, master seed 5."""
    out = tmp_path_factory.mktemp("finished") / "exp"
    code, _, err = _run(_args(planted, out, "--seed", "5", "--algorithms", "alt-expm,serenade-es", *FAST))
    assert code == 0, err
    assert json.loads((out / "runs" / "serenade-es" / "5" / "0.json").read_text())["redescriptions"]
    return out


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
