"""A repeated budget is refused, not overridden (dprm.cli.repeats, docs/cli.md "Exit codes and errors")."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from dprm.cli.app import COMMANDS, LazyCommands, app
from dprm.cli.repeats import ONCE_ONLY, given_values
from test_cli import run, write


def expect_refused(args: list, line: str) -> None:
    code, out, err = run(args)
    assert (code, out, err.splitlines()) == (2, "", [line]), (code, out, err)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {
        "left": write(tmp_path / "l.csv", "id,a\n" + "".join(f"{i},{i % 2}\n" for i in range(40))),
        "right": write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{(i // 2) % 2}\n" for i in range(40))),
        "token": write(tmp_path / "token", "dprm_1_secret\n"),
        "out": tmp_path / "out",
    }


# port 9 on loopback: nothing answers, so a request would say "cannot reach"
REMOTE = ["remote", "--url", "http://127.0.0.1:9", "--token-file", "TOKEN"]
COMMAND_LINES = {
    "mine": ["mine", "LEFT", "RIGHT", "--seed", "1", "--output", "OUT/r.json"],
    "mine-cartwheels": ["mine", "LEFT", "RIGHT", "-a", "cartwheels", "--output", "OUT/r.json"],
    "classify": ["classify", "LEFT", "--target", "a", "--output", "OUT/t.json"],
    "itemsets": ["itemsets", "LEFT", "--min-support", "0.3", "--output", "OUT/i.json"],
    "remote-submit": [*REMOTE, "submit", "ds", "-a", "alt-mcmc", "--wait", "--output", "OUT/j.json"],
    "remote-stats": [*REMOTE, "stats", "ds"],
    "remote-leaf-pairs": [*REMOTE, "leaf-pairs", "ds"],
}


@pytest.mark.parametrize("name", list(COMMAND_LINES))
@pytest.mark.parametrize("epsilons, quoted", [(["--epsilon", "1", "--epsilon", "2"], "('1', '2')"),
                                              (["--epsilon=0.5", "--epsilon", "0.5"], "('0.5', '0.5')"),
                                              (["--epsilon", "1", "--epsilon=2", "--epsilon", "3"], "('1', '2', '3')")],
                         ids=["two", "equal-forms", "three"])
def test_every_command_that_spends_a_budget_refuses_it_twice(files, name: str, epsilons: list, quoted: str) -> None:
    """`--epsilon 1 --epsilon 2` spent 2 without a word: refused in one line, nothing written, nothing asked."""
    args = [str({"LEFT": files["left"], "RIGHT": files["right"], "TOKEN": files["token"]}.get(a, a))
            .replace("OUT", str(files["out"])) for a in COMMAND_LINES[name]]
    files["out"].mkdir()
    count = epsilons.count("--epsilon") + sum(e.startswith("--epsilon=") for e in epsilons)
    expect_refused([*args, *epsilons], f"error: --epsilon is given {count} times {quoted}; give it once")
    assert list(files["out"].iterdir()) == []


def test_the_options_are_checked_before_any_file_is_read(tmp_path: Path) -> None:
    expect_refused(["mine", tmp_path / "absent.csv", tmp_path / "gone.csv", "--epsilon", "1", "--epsilon", "1"],
                   "error: --epsilon is given 2 times ('1', '1'); give it once")


def test_once_is_fine_and_repeatable_options_stay_repeatable(files) -> None:
    code, out, err = run(["mine", files["left"], files["right"], "-a", "cartwheels", "--top", "0",
                          "--na-values", "NA", "--na-values", "?"])
    assert code == 0, err
    code, out, err = run(["mine", files["left"], files["right"], "--epsilon", "1", "--seed", "1", "--top", "0",
                          "--depth", "1", "--init-trials", "1"])
    assert code == 0 and out.startswith("NOT private: seeded noise source"), err


def test_a_value_after_the_double_dash_is_no_option(files) -> None:
    code, out, err = run(["mine", files["left"], files["right"], "--epsilon", "1", "--", "--epsilon"])
    assert code == 2 and "unexpected extra argument" in err and "given 2 times" not in err


def test_given_values_reads_both_spellings_and_stops_at_the_double_dash() -> None:
    assert given_values(["--epsilon", "1", "x", "--epsilon=2", "--", "--epsilon", "3"], ["--epsilon"]) == ["1", "2"]
    assert given_values(["--epsilon"], ["--epsilon"]) == [""]  # a missing value is click's to refuse


def _commands(command, path):
    if hasattr(command, "commands") and command.commands:
        for name, sub in command.commands.items():
            yield from _commands(sub, [*path, name])
    else:
        yield path, command


def test_every_option_of_once_only_is_found_where_a_command_takes_it() -> None:
    """The rule holds for every command of the tree that takes --epsilon (a new one included)."""
    group = typer.main.get_command(app)
    assert isinstance(group, LazyCommands)
    taking = []
    for name in COMMANDS:
        for path, leaf in _commands(group.get_command(None, name), [name]):
            if any(opt in ONCE_ONLY for p in leaf.params for opt in getattr(p, "opts", ())):
                taking.append(" ".join(path))
                assert leaf.make_parser.__name__ == "checked_parser", path
    assert {"mine", "classify", "itemsets", "remote submit", "remote stats", "remote leaf-pairs"} <= set(taking)
