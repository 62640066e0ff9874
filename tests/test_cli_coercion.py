"""Plain option values converted without pydantic convert as typer's converter does (dprm.cli.coercion)."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import List

import pytest
import typer
from typer.models import OptionInfo

_coercion = pytest.importorskip("typer._coercion", reason="typer's converters are internal to typer 0.29")
build_runtime_param, resolve_type_descriptor = _coercion.build_runtime_param, _coercion.resolve_type_descriptor

from dprm.cli.app import main
from dprm.cli.coercion import UNHANDLED, number_problem, plain, plain_conversions

VALUES = ["0", "7", "-3", "+5", "007", " 5", "5 ", "1_000", "5.0", "1e3", "1E-3", ".5", "5.", "-.5e+2", "inf", "-inf",
          "nan", "0x10", "", "abc", "1e400", "٣", "3٣", "1.5", "--", "12345678901234567890"]


def typer_converts(annotation, value):
    """typer's own conversion of ``value`` (its pydantic adapter), or the exception it raises."""
    runtime = build_runtime_param(resolve_type_descriptor(annotation, OptionInfo()))

    class Param:
        multiple, nargs, name, opts, secondary_opts, human_readable_name = False, 1, "x", ["--x"], [], "--x"

        def get_error_hint(self, ctx):
            return "'--x'"

    try:
        return runtime._coerce_value(value, param=Param(), ctx=None)
    except Exception as error:  # noqa: BLE001 - compared by kind only
        return type(error)


@pytest.mark.parametrize("annotation", [int, float, str, Path])
def test_a_plain_conversion_is_typer_s(annotation) -> None:
    handled = 0
    for value in VALUES + [1, 2.5, True]:
        mine = plain(annotation, value)
        if mine is UNHANDLED:
            continue
        handled += 1
        theirs = typer_converts(annotation, value)
        assert type(mine) is type(theirs) and (mine == theirs or (isinstance(mine, float) and math.isnan(mine)
                                                                  and math.isnan(theirs))), (value, mine, theirs)
    assert handled >= 3


def test_lists_of_text_and_flags() -> None:
    assert plain(List[str], ("a", "b")) == ["a", "b"] == typer_converts(List[str], ("a", "b"))
    assert plain(List[str], ()) == [] == typer_converts(List[str], ())  # a repeatable option not given
    assert plain(bool, True) is True and plain(bool, None) is UNHANDLED and plain(List[int], ("1",)) is UNHANDLED


def test_other_values_go_to_typer_s_converter_and_read_as_before(capsys) -> None:
    """A value the plain conversion leaves (here: spaces, a bad number) is typer's to convert."""
    app = typer.Typer()

    @app.command()
    def command(n: int = typer.Option(1, "--n"), x: float = typer.Option(0.5, "--x"),
                p: Path = typer.Option(Path("."), "--p")) -> None:
        print(repr((n, x, p)))

    for args, out in ((["--n", " 10", "--x", "2"], "(10, 2.0, PosixPath('.'))"),
                      (["--n", "4", "--x", "1e-2", "--p", "a/b"], "(4, 0.01, PosixPath('a/b'))")):
        plain_conversions(typer.main.get_command(app))(args=args, standalone_mode=False)
        assert capsys.readouterr().out.strip() == out
    with pytest.raises(typer.BadParameter, match="^'x' is not a whole number$"):
        plain_conversions(typer.main.get_command(app))(args=["--n", "x"], standalone_mode=False)


@pytest.mark.parametrize("args, line", [
    (["itemsets", "t.csv", "--min-support", "abc"], "error: Invalid value for '--min-support': 'abc' is not a number"),
    (["mine", "l.csv", "r.csv", "-a", "cartwheels", "--epsilon", "abc"],
     "error: Invalid value for '--epsilon': 'abc' is not a number"),
    (["mine", "l.csv", "r.csv", "--seed", "abc"], "error: Invalid value for '--seed': 'abc' is not a whole number"),
    (["mine", "l.csv", "r.csv", "--seed", "1.5"], "error: Invalid value for '--seed': '1.5' is not a whole number"),
    (["classify", "t.csv", "--target", "c", "--epsilon", ""], "error: Invalid value for '--epsilon': '' is not a number"),
    (["mine", "l.csv", "r.csv", "--top", "x" * 60],
     "error: Invalid value for '--top': 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... is not a whole number"),
    (["datasets", "make-planted", "OUT", "--rows", "abc"], "error: Invalid value for '--rows': 'abc' is not a whole number"),
    (["datasets", "make-planted", "OUT", "--noise", "lots"], "error: Invalid value for '--noise': 'lots' is not a number"),
], ids=["min-support", "epsilon", "seed", "seed-decimal", "empty", "long", "group-rows", "group-noise"])
def test_a_value_that_is_no_number_is_one_line_naming_the_option_and_quoting_it(capsys, tmp_path, args, line) -> None:
    """Not pydantic's 'Input should be a valid number, unable to parse string as a number' (docs/cli.md)."""
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    with pytest.raises(SystemExit) as done:
        main(args)
    assert done.value.code == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [line] and captured.out == ""
    assert not (tmp_path / "out").exists()


def test_the_subcommands_of_a_group_refuse_numbers_a_user_would_not_mean(capsys, tmp_path) -> None:
    """`dprm datasets make-planted --rows 1_0` wrote a dataset of 10 rows: a group's commands had typer's converter."""
    with pytest.raises(SystemExit) as done:
        main(["datasets", "make-planted", str(tmp_path / "out"), "--rows", "1_0"])
    assert done.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: Invalid value for '--rows': '1_0' is not a number: write it without '_' separators"]
    assert not (tmp_path / "out").exists()


def test_another_typer_release_keeps_typers_own_converters(monkeypatch) -> None:
    """Written against typer 0.29's private converter classes: with another release nothing is installed."""
    app = typer.Typer()

    @app.command()
    def command(count: int = typer.Option(1, "--count")) -> None:
        pass

    monkeypatch.setattr(typer, "__version__", "0.30.0")
    click_command = plain_conversions(typer.main.get_command(app))
    assert all(getattr(param, "_runtime_param", None) is None for param in click_command.params)
    monkeypatch.undo()
    click_command = plain_conversions(typer.main.get_command(app))
    installed = [param for param in click_command.params if param.name == "count"]
    assert installed and installed[0]._runtime_param is not None


@pytest.mark.parametrize("value, fragment", [("1_0", "'_' separators"), (" 1_0", "'_' separators"),
                                             ("\uff15", "ASCII digits"), ("\u0663", "ASCII digits"),
                                             ("9" * 51, "51 digits"), ("9" * 5000, "5000 digits")],
                         ids=["underscore", "space-underscore", "full-width", "arabic-indic", "51-digits",
                              "5000-digits"])
def test_numbers_a_user_would_not_mean_are_refused(value: str, fragment: str) -> None:
    """typer (pydantic) reads '1_0' as 10 and full-width digits as digits; more than 4300 digits failed inside."""
    app = typer.Typer()

    @app.command()
    def command(n: int = typer.Option(1, "--n"), x: float = typer.Option(0.5, "--x")) -> None:
        pass

    for option in ("--n", "--x"):
        if option == "--x" and "digits" in fragment and "ASCII" not in fragment:
            continue  # a long float is read (as inf, refused by the command's range)
        with pytest.raises(typer.BadParameter, match=re.escape(fragment)):
            plain_conversions(typer.main.get_command(app))(args=[option, value], standalone_mode=False)


@pytest.mark.parametrize("value, fragment", [
    ("1e400", "beyond the largest number"), ("-1.5E+400", "beyond the largest"), ("9" * 400, "beyond the largest"),
    ("1e-400", "too close to 0"), ("-0.5e-999", "too close to 0")], ids=["1e400", "-1.5E+400", "400-nines", "1e-400",
                                                                          "-0.5e-999"])
def test_a_float_beyond_the_floats_range_is_refused_as_written(value: str, fragment: str) -> None:
    """typer read '1e400' as inf (and '1e-400' as 0): a later refusal said 'not inf', not what was typed."""
    app = typer.Typer()

    @app.command()
    def command(x: float = typer.Option(0.5, "--x")) -> None:
        pass

    with pytest.raises(typer.BadParameter, match=re.escape(fragment)) as refused:
        plain_conversions(typer.main.get_command(app))(args=["--x", value], standalone_mode=False)
    assert str(refused.value).startswith(repr(value)[:37])


@pytest.mark.parametrize("value", ["0e400", "0.000e-999", "1e308", "4.9e-324", "inf", "nan"])
def test_floats_in_range_zeros_and_words_are_left_to_the_options(value: str) -> None:
    assert number_problem(float, value) is None
