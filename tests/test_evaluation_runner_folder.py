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
from pathlib import Path

import pytest

from dprm.cli import main
from dprm.datasets import make_planted, write_planted
from dprm.errors import ParameterError
from dprm.evaluation.runner import parse_parameter_items


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


# -- F10: options -----------------------------------------------------------------------------


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
