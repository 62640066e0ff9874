"""Input faults found by a fuzzing round, each answered as the command-line promises say.

A data file whose name is not UTF-8 is read (CSV, compressed, Parquet; every command);
an option value that is not UTF-8 is refused in one line naming the option; reports
whose folder or data paths are not UTF-8 are written, the paths shown escaped; several
files written together are written all or none, an error naming the file; the itemset
miner checks declared numeric columns as ``dprm mine`` does.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from test_cli import assert_one_error_line, run, write

#: A name holding bytes that are not UTF-8 (Python holds them as surrogate escapes).
BAD = os.fsdecode(b"bad\xff\xfe")

LEFT = "id,a,b\n" + "".join(f"{i},{i % 2},{i * 1.5}\n" for i in range(1, 31))
RIGHT = "id,c,d\n" + "".join(f"{i},{(i + 1) % 2},{i * 2.5}\n" for i in range(1, 31))
TABLE = "age,sex,cls\n" + "".join(f"{18 + (7 * i) % 70},{'fm'[i % 2]},{'xy'[i % 3 == 0]}\n" for i in range(40))


def expect_error(args: list, *fragments: str) -> str:
    code, out, err = run(args)
    assert code == 2, (code, out, err)
    return assert_one_error_line(err, *fragments)


def expect_ok(args: list) -> str:
    code, out, err = run(args)
    assert code == 0, (code, out, err)
    assert "internal error" not in err
    return out


# --------------------------------------------------------------- 6: data file names that are not UTF-8


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".parquet"])
def test_mine_and_inspect_read_a_file_whose_name_is_not_utf8(tmp_path: Path, suffix: str) -> None:
    left = tmp_path / (BAD + suffix)
    frame = pd.read_csv(write(tmp_path / "l.csv", LEFT))
    if suffix == ".parquet":
        frame.to_parquet(tmp_path / "l.parquet")
        os.rename(tmp_path / "l.parquet", left)
    else:
        frame.to_csv(left, index=False)
    right = write(tmp_path / "r.csv", RIGHT)
    expect_ok(["inspect", left, right, "--id-column", "id"])
    expect_ok(["mine", left, right, "--id-column", "id", "-a", "cartwheels", "-o", tmp_path / "out.json"])


def test_classify_and_itemsets_read_a_file_whose_name_is_not_utf8(tmp_path: Path) -> None:
    table = write(tmp_path / (BAD + ".csv"), TABLE)
    expect_ok(["classify", table, "--target", "cls", "--epsilon", "1"])
    expect_ok(["itemsets", table, "--min-support", "0.2", "--bins", "age=0,50,100"])


def test_an_error_naming_a_file_whose_name_is_not_utf8_shows_its_bytes(tmp_path: Path) -> None:
    """The error line shows such a name as the reports do (``bad\\xff\\xfe.csv``), not as Python's
    surrogate escapes (``bad\\udcff\\udcfe.csv``)."""
    right = write(tmp_path / "r.csv", RIGHT)
    line = expect_error(["mine", tmp_path / (BAD + ".csv"), right, "-a", "cartwheels"], "bad\\xff\\xfe.csv",
                        "no such file")
    assert "udc" not in line


# --------------------------------------------------------------- 7: a --na-values that is not UTF-8


@pytest.mark.parametrize("command", ["inspect", "mine", "classify", "itemsets"])
def test_a_na_values_that_is_not_utf8_is_refused_naming_the_option(tmp_path: Path, command: str) -> None:
    left, right = write(tmp_path / "l.csv", LEFT), write(tmp_path / "r.csv", RIGHT)
    table = write(tmp_path / "t.csv", TABLE)
    args = {"inspect": [left, right], "mine": [left, right, "-o", tmp_path / "out.json"],
            "classify": [table, "--target", "cls", "--epsilon", "1"],
            "itemsets": [table, "--min-support", "0.2", "--bins", "age=0,50,100", "--epsilon", "1"]}[command]
    expect_error([command, *args, "--na-values", os.fsdecode(b"N\xff")], "--na-values", "'N\\xff'", "not UTF-8")
    assert not (tmp_path / "out.json").exists()


def test_a_types_file_na_values_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    left, right = write(tmp_path / "l.csv", LEFT), write(tmp_path / "r.csv", RIGHT)
    types = write(tmp_path / "t.json", '{"na_values": ["\\udcff"]}')
    expect_error(["inspect", left, right, "--types", types], "t.json", "'na_values'", "\\xff", "not UTF-8")


# --------------------------------------------------------------- 8: reports of paths that are not UTF-8


def test_evaluate_and_report_write_the_report_of_a_folder_whose_name_is_not_utf8(tmp_path: Path) -> None:
    left, right = write(tmp_path / "l.csv", LEFT), write(tmp_path / "r.csv", RIGHT)
    out = tmp_path / ("ev" + BAD)
    code, _, err = run(["evaluate", left, right, "--id-column", "id", "--algorithms", "cartwheels",
                        "--budgets", "1x1", "--out", out])
    assert code == 0, err
    assert "report failed" not in err
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "ev" + "bad\\xff\\xfe" in page
    (out / "report.html").unlink()
    code, _, err = run(["report", out])
    assert code == 0, err
    assert (out / "report.html").is_file()


def test_report_of_a_run_on_data_whose_name_is_not_utf8_is_written(tmp_path: Path) -> None:
    left, right = write(tmp_path / "l.csv", LEFT), write(tmp_path / (BAD + ".csv"), RIGHT)
    result = tmp_path / "run.json"
    code, _, err = run(["mine", left, right, "--id-column", "id", "-a", "cartwheels", "-o", result])
    assert code == 0, err
    code, _, err = run(["report", "--run", result, "--data", left, right, "--id-column", "id",
                        "-o", tmp_path / "run.html"])
    assert code == 0, err
    assert "bad\\xff\\xfe.csv" in (tmp_path / "run.html").read_text(encoding="utf-8")


def test_classify_and_itemsets_documents_name_a_file_whose_name_is_not_utf8(tmp_path: Path) -> None:
    table = write(tmp_path / (BAD + ".csv"), TABLE)
    expect_ok(["classify", table, "--target", "cls", "--epsilon", "1", "-o", tmp_path / "c.json"])
    expect_ok(["itemsets", table, "--min-support", "0.2", "--bins", "age=0,50,100", "-o", tmp_path / "i.json"])
    assert "bad\\\\xff\\\\xfe.csv" in (tmp_path / "c.json").read_text(encoding="utf-8")
    assert "bad\\\\xff\\\\xfe.csv" in (tmp_path / "i.json").read_text(encoding="utf-8")


# --------------------------------------------------------------- 4: several files on a full disk


def _full_disk_after(monkeypatch: pytest.MonkeyPatch, files: int) -> None:
    """Every file flushed after the first ``files`` fails as a full disk does (ENOSPC, naming no file)."""
    import errno

    real, calls = os.fsync, []

    def fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) > files:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize("made", [False, True])
def test_make_planted_on_a_full_disk_writes_none_and_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   made: bool) -> None:
    out = tmp_path / "pl"
    if made:
        out.mkdir()
    _full_disk_after(monkeypatch, 1)
    line = expect_error(["datasets", "make-planted", out, "--rows", "60", "--seed", "1"],
                        str(out / "right.csv"), "No space left on device")
    assert "pl/left.csv" not in line
    assert (sorted(p.name for p in out.iterdir()) == []) if made else not out.exists()


def test_several_files_follow_the_umask_keep_a_replaced_mode_and_take_long_names(tmp_path: Path) -> None:
    """write_all's files are modes as write_atomic's are (0o666 less the umask; a replaced file keeps its
    mode), and a name near the file system's limit is written (its staging name is short)."""
    from dprm.file_sets import write_all

    kept = tmp_path / "kept.csv"
    kept.write_text("old")
    kept.chmod(0o640)
    long = tmp_path / ("n" * 240 + ".csv")
    before = os.umask(0o077)
    try:
        written = write_all({tmp_path / "new.csv": b"new", kept: b"replaced", long: b"long"})
    finally:
        os.umask(before)
    modes = {path.name[:8]: oct(path.stat().st_mode & 0o777) for path in written}
    assert modes == {"new.csv": "0o600", "kept.csv": "0o640", "n" * 8: "0o600"}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["new.csv", "kept.csv", long.name])


def test_evaluate_on_a_full_disk_names_the_file_and_leaves_no_lock(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    left, right = write(tmp_path / "l.csv", LEFT), write(tmp_path / "r.csv", RIGHT)
    out = tmp_path / "ev"
    _full_disk_after(monkeypatch, 0)
    expect_error(["evaluate", left, right, "--id-column", "id", "--algorithms", "cartwheels", "--budgets", "1x1",
                  "--out", out], str(out / "experiment.json"), "No space left on device")
    assert not (out / ".lock").exists()
    assert not out.exists()


# --------------------------------------------------------------- 11: itemsets checks declared numeric columns


def test_itemsets_refuses_text_in_a_column_declared_numeric_as_mine_does(tmp_path: Path) -> None:
    table = write(tmp_path / "t.csv", TABLE)
    types = write(tmp_path / "types.json", '{"columns": {"sex": {"type": "numeric", "bounds": [0, 1]}, '
                                           '"age": "ignore"}}')
    said = expect_error(["classify", table, "--target", "cls", "--epsilon", "1", "--types", types],
                        "column 'sex'", "is not a number")
    assert expect_error(["itemsets", table, "--min-support", "0.2", "--types", types]) == said


@pytest.mark.parametrize("epsilon", [[], ["--epsilon", "1"]])
def test_itemsets_refuses_a_value_outside_the_declared_bounds_as_classify_does(tmp_path: Path,
                                                                              epsilon: list) -> None:
    table = write(tmp_path / "t.csv", TABLE)
    types = write(tmp_path / "types.json", '{"columns": {"age": {"type": "numeric", "bounds": [30, 40]}, '
                                           '"sex": {"categories": ["f", "m"]}, "cls": {"categories": ["x", "y"]}}}')
    said = expect_error(["classify", table, "--target", "cls", "--epsilon", "1", "--types", types],
                        "column 'age'", "outside the declared bounds [30, 40]")
    out = tmp_path / "items.json"
    line = expect_error(["itemsets", table, "--min-support", "0.2", "--types", types, "--bins", "age=0,30,60,120",
                         "-o", out, *epsilon])
    assert line == said
    assert not out.exists()


def test_itemsets_clamps_into_the_declared_bounds_when_the_types_file_says_so(tmp_path: Path) -> None:
    table = write(tmp_path / "t.csv", TABLE)
    types = write(tmp_path / "types.json", '{"columns": {"age": {"type": "numeric", "bounds": [30, 40]}, '
                                           '"sex": {"categories": ["f", "m"]}, "cls": {"categories": ["x", "y"]}}, '
                                           '"out_of_bounds": "clamp"}')
    code, out, err = run(["itemsets", table, "--min-support", "0.2", "--types", types, "--bins", "age=0,30,60,120"])
    assert code == 0, err
    assert "column 'age': values outside the declared bounds [30, 40] clamped into them" in err
    assert "age=[30, 60)" in out and "age=[60" not in out and "age=[0" not in out  # every age is in [30, 40]


def test_the_itemsets_error_of_a_bound_is_data_dependent(tmp_path: Path) -> None:
    import pandas as pd

    from dprm.errors import DataError
    from dprm.itemsets.declarations import check_numbers

    with pytest.raises(DataError) as raised:
        check_numbers(pd.DataFrame({"age": ["49"]}), {"age": (30.0, 40.0)}, clamp=False, source="t.csv")
    assert raised.value.data_dependent
    assert "49" not in raised.value.public_message() and "age" in raised.value.public_message()


# --------------------------------------------------------------- 12: the id column, huge bounds, control characters


@pytest.mark.parametrize("option", [["--bins", "age=0,50,100"], ["--sensitive", "age", "--epsilon", "1"]])
def test_itemsets_says_a_column_is_declared_the_id_column_not_that_it_is_missing(tmp_path: Path,
                                                                                 option: list) -> None:
    table = write(tmp_path / "t.csv", TABLE)
    types = write(tmp_path / "types.json", '{"columns": {"age": "id"}}')
    line = expect_error(["itemsets", table, "--min-support", "0.2", "--types", types, *option],
                        "'age'", "declared the id column", "types.json")
    assert "no column" not in line


@pytest.mark.parametrize("name, text, written", [
    ("t.json", '{"columns": {"age": {"type": "numeric", "bounds": [0, 1e400]}}}', "[0, 1e400]"),
    ("t.toml", '[columns]\nage = {type = "numeric", bounds = [-1e400, 5]}\n', "[-1e400, 5]"),
])
def test_a_bound_beyond_the_floats_range_is_quoted_as_written(tmp_path: Path, name: str, text: str,
                                                               written: str) -> None:
    left, right = write(tmp_path / "l.csv", LEFT.replace(",a,", ",age,")), write(tmp_path / "r.csv", RIGHT)
    types = write(tmp_path / name, text)
    expect_error(["inspect", left, right, "--types", types], "'age'", f"got {written}")


@pytest.mark.parametrize("category, shown", [("\\u001b[31mred", "control character"), ("\\udcff", "not UTF-8")])
def test_a_declared_category_holding_a_control_character_is_refused(tmp_path: Path, category: str,
                                                                     shown: str) -> None:
    table = write(tmp_path / "t.csv", TABLE)
    types = write(tmp_path / "types.json", '{"columns": {"sex": {"categories": ["f", "m", "%s"]}}}' % category)
    for command in (["itemsets", table, "--min-support", "0.2", "--bins", "age=0,50,100"],
                    ["classify", table, "--target", "cls", "--epsilon", "1"]):
        line = expect_error([*command, "--types", types], "types.json", "column 'sex'", shown)
        assert "\x1b" not in line


def test_the_evaluations_name_a_dataset_file_whose_name_is_not_utf8_escaped(tmp_path: Path) -> None:
    from dprm.evaluation.classification.data import dataset_name, resolve_dataset
    from dprm.evaluation.classification.protocol import _seed

    table = write(tmp_path / (BAD + ".csv"), TABLE)
    dataset = resolve_dataset(f"{table}:cls", tmp_path)
    assert dataset.name == dataset_name(f"{table}:cls") == "bad\\xff\\xfe"
    _seed(1, dataset.name)  # the folds' seed: was UnicodeEncodeError
    out = tmp_path / "ie"
    expect_ok(["itemsets-eval", out, "--datasets", table, "--thetas", "0.3", "--epsilons", "1",
               "--experiments", "discovery"])
    assert "bad\\\\xff\\\\xfe" in (out / "itemsets_eval.json").read_text(encoding="utf-8")
