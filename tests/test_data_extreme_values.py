"""Extreme finite numbers (±1e308) load, index and mine; infinite ones are an error."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from dprm.data import LiteralIndex, load_two_view
from dprm.data.grid import grid_points, grid_spacing, rounded_grid
from dprm.errors import DataError
from dprm.mining import make_miner
from dprm.privacy import Accountant, SeededNoise

BIG = 1.7976931348623157e308  # the largest float64


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def extreme(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A column holding -1e308 and 1e308 (and ordinary numbers) beside a Boolean one."""
    rng = np.random.default_rng(5)
    x = np.round(rng.normal(size=120) * 1e307, -300)
    x[3], x[7] = -1e308, 1e308
    lines = ["id,x,b"] + [f"{i},{float(v)!r},{int(v > 0)}" for i, v in enumerate(x)]
    left = write(tmp_path / "left.csv", "\n".join(lines) + "\n")
    right = write(tmp_path / "right.csv", "id,y,z\n" + "".join(
        f"{i},{int(v > 0) ^ (i % 17 == 0)},{i % 5}\n" for i, v in enumerate(x)))
    types = write(tmp_path / "types.json", json.dumps({"columns": {
        "x": {"bounds": [-1.7e308, 1.7e308]}, "b": "boolean", "y": "boolean", "z": {"bounds": [0, 4]}}}))
    return left, right, types


@pytest.mark.parametrize("low, high", [(-BIG, BIG), (-1e308, 1e308), (-BIG, 0.0), (0.0, 1e-320), (5.0, 5.0),
                                       (-1.0, 1.0), (1e300, 1.7e308)])
@pytest.mark.parametrize("count", [1, 3, 32])
def test_grid_is_finite_ordered_and_inside_for_any_finite_bounds(low: float, high: float, count: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        points = grid_points(low, high, count)
        rounded = rounded_grid(low, high, count)
        spacing = grid_spacing(low, high, count)
    for grid in (points, rounded):
        assert np.isfinite(grid).all() and (grid >= low).all() and (grid <= high).all()
        assert (np.diff(grid) >= 0).all()
    assert np.isfinite(spacing) and spacing >= 0
    assert len(points) == count


def test_grid_agrees_with_the_textbook_formula_where_it_does_not_overflow() -> None:
    for low, high in [(0.0, 100.0), (-3.5, 7.25), (1e10, 1e12)]:
        expected = low + np.arange(1, 8) / 8 * (high - low)
        assert grid_points(low, high, 7).tolist() == expected.tolist()
    halved = grid_points(-1e308, 1e308, 3)
    assert halved.tolist() == (2 * grid_points(-0.5e308, 0.5e308, 3)).tolist()


@pytest.mark.parametrize("declared", [False, True])
@pytest.mark.parametrize("mode", ["data", "private"])
def test_extreme_values_load_and_index(extreme, declared: bool, mode: str) -> None:
    left, right, types = extreme
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = load_two_view(left, right, types=types if declared else None)
        x = data.left["x"]
        assert x.values[3] == -1e308 and x.values[7] == 1e308
        assert x.domain.bounds == ((-1.7e308, 1.7e308) if declared else (-1e308, 1e308))
        index = LiteralIndex(data.left, mode=mode)
        thresholds = index.thresholds[0]
        assert thresholds.size > 1 and np.isfinite(thresholds).all()
        assert (np.diff(thresholds) > 0).all()
        for number, (position, operator, code) in enumerate(index.literals):
            if position != 0:
                continue
            t = thresholds[code]
            expected = x.values <= t if operator == "le" else x.values > t
            assert np.array_equal(index.literal_support((position, operator, code)), expected)
    assert index.private_domains is declared


@pytest.mark.parametrize("algorithm", ["alt-expm", "alt-mcmc", "mcmc-tree-pair"])
@pytest.mark.parametrize("declared", [False, True])
def test_private_miners_run_on_extreme_values(extreme, algorithm: str, declared: bool) -> None:
    left, right, types = extreme
    data = load_two_view(left, right, types=types if declared else None)
    options = {"init_trials": 1, "alternations": 1} if algorithm.startswith("alt") else {"mcmc_iterations": 200}
    rng = np.random.default_rng(2)
    miner = make_miner(algorithm, epsilon=1, **options).fit(data, accountant=Accountant(1, SeededNoise(rng)),
                                                           rng=rng)
    document = json.dumps(miner.document(), allow_nan=False)  # every number in the output is finite
    assert "Infinity" not in document


def test_private_target_bins_do_not_overflow(extreme) -> None:
    left, right, types = extreme
    data = load_two_view(left, right, types=types)
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seed in range(4):
            make_miner("alt-expm", epsilon=1, init_trials=2, alternations=1, target_binning="fd").fit(
                data, accountant=Accountant(1, SeededNoise(rng)), rng=np.random.default_rng(seed))


@pytest.mark.parametrize("text, shown", [
    ("inf", "value inf is not a finite number"),
    ("-Infinity", "value -Infinity is not a finite number"),
    ("1e309", "value 1e309 is too large for a number (beyond ±1.8e308)"),
    ("-2e400", "value -2e400 is too large for a number"),
])
@pytest.mark.parametrize("declared", [False, True])
def test_infinite_values_are_an_error_naming_the_value_as_written(tmp_path: Path, text: str, shown: str,
                                                                  declared: bool) -> None:
    left = write(tmp_path / "left.csv", f"id,x\n1,0.5\n2, {text}\n3,1.5\n")
    right = write(tmp_path / "right.csv", "id,b\n1,0\n2,1\n3,0\n")
    types = {"columns": {"x": {"bounds": [-1e308, 1e308]}}} if declared else None
    with pytest.raises(DataError) as info:
        load_two_view(left, right, types=types, out_of_bounds="clamp")  # clamping does not hide them
    assert f"{left}: column 'x', row 2: {shown}" in str(info.value)
    assert info.value.code == "not_finite" and info.value.row == 2 and info.value.column == "x"


def test_nan_text_in_a_declared_numeric_column_is_missing(tmp_path: Path) -> None:
    left = write(tmp_path / "left.csv", "id,x\n1,0.5\n2,nan\n3,-0\n4,  3 \n")
    right = write(tmp_path / "right.csv", "id,b\n1,0\n2,1\n3,0\n4,1\n")
    data = load_two_view(left, right, types={"columns": {"x": {"bounds": [-1, 5]}}})
    np.testing.assert_array_equal(data.left["x"].values, [0.5, np.nan, 0.0, 3.0])


@pytest.mark.parametrize("cell, shown", [
    ("1e-400", "1e-400"), ("-2.5E-330", "-2.5E-330"), (" 1e-400", "1e-400"),
    ("0." + "0" * 330 + "7", "0.0000000"), ("0." + "0" * 200 + "1e-200", "0.0000000"),
])
@pytest.mark.parametrize("declared", [False, True])
@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_a_number_too_close_to_0_is_an_error_not_0(tmp_path: Path, cell: str, shown: str, declared: bool,
                                                    suffix: str) -> None:
    """``1e-400`` (nearer 0 than a float64 holds) was read as 0 without a word, as pandas and pyarrow read it:
    ``[x > 0]`` left out a positive value. Now an error naming the file, column, row and value, as ``1e309``
    (read as infinity) is."""
    import gzip

    text = f"id,x\n1,0.5\n2,{cell}\n3,1.5\n".encode()
    left = tmp_path / f"left{suffix}"
    left.write_bytes(gzip.compress(text) if suffix.endswith(".gz") else text)
    right = write(tmp_path / "right.csv", "id,b\n1,0\n2,1\n3,0\n")
    types = {"columns": {"x": {"bounds": [-1, 1]}}} if declared else None
    with pytest.raises(DataError) as info:
        load_two_view(left, right, types=types)
    message = str(info.value)
    assert message.startswith(f"{left}: column 'x', row 2: value {shown}") and "\n" not in message
    assert "is too close to 0 for a number (nearer than ±4.9e-324, it would read as 0)" in message
    assert info.value.code == "number_underflow" and info.value.row == 2 and info.value.column == "x"


def test_zeros_and_the_smallest_floats_written_in_many_ways_still_read(tmp_path: Path) -> None:
    """0 written with a large exponent or many zeros is 0; a subnormal number (1e-320) is itself."""
    cells = ["0e-400", "-0.0E-999", "0." + "0" * 400, "1e-320", "4.9e-324", "0.5"]
    left = write(tmp_path / "left.csv", "id,x\n" + "".join(f"{i},{c}\n" for i, c in enumerate(cells)))
    right = write(tmp_path / "right.csv", "id,b\n" + "".join(f"{i},{i % 2}\n" for i in range(len(cells))))
    values = load_two_view(left, right).left["x"].values
    assert values.tolist() == [0.0, -0.0, 0.0, 1e-320, 5e-324, 0.5]


def test_a_category_too_close_to_0_is_its_text_not_0(tmp_path: Path) -> None:
    """In a column of text, ``1e-400`` was the category ``0`` (merged with the cells written ``0``) and
    ``1e400``, ``1e401`` both ``inf``: each is now the category the file writes."""
    left = write(tmp_path / "left.csv", "id,c\n1,1e-400\n2,0\n3,1e400\n4,1e401\n5,word\n")
    right = write(tmp_path / "right.csv", "id,b\n1,0\n2,1\n3,0\n4,1\n5,0\n")
    domain = load_two_view(left, right).left["c"].domain
    assert set(domain.categories) == {"1e-400", "0", "1e400", "1e401", "word"}


def test_a_declared_bound_too_close_to_0_is_refused(tmp_path: Path) -> None:
    """A types file's ``"bounds": [1e-400, 1]`` was the bound 0 without a word."""
    from dprm.data.types_file import read_types_file

    types = write(tmp_path / "types.json", '{"columns": {"x": {"bounds": [1e-400, 1]}}}')
    with pytest.raises(DataError) as info:
        read_types_file(types)
    assert str(info.value) == (f"{types}: column 'x': 'bounds': value 1e-400 is too close to 0 for a number "
                               f"(nearer than ±4.9e-324, it would read as 0)")
    categories = write(tmp_path / "categories.json", '{"columns": {"c": {"categories": [1e-400, 0]}}}')
    assert read_types_file(categories).columns["c"].categories == ("1e-400", "0")


def test_a_column_declared_categorical_holds_1e_400_as_written_and_ids_stay_apart(tmp_path: Path) -> None:
    """A column of numbers declared categorical had the category ``0`` for ``1e-400`` (pyarrow's number), and
    the ids ``1e-400`` and ``0`` were one id repeated (``duplicate_id``): each is now the text the file writes."""
    left = write(tmp_path / "left.csv", "id,c\n1e-400,1e-400\n0,0\n3,3\n")
    right = write(tmp_path / "right.csv", "id,b\n0,1\n1e-400,0\n3,0\n")
    data = load_two_view(left, right, types={"columns": {"c": {"type": "categorical"}}})
    assert data.left["c"].domain.categories == ("0", "1e-400", "3")
    assert data.right["b"].values.tolist() == [0, 1, 0]  # the right view's rows matched to the left's ids


def test_classify_reads_a_class_written_1e_400_as_written(tmp_path: Path) -> None:
    """``dprm classify`` reads an undeclared target of numbers one of which reads as 0 as classes, as written
    (it printed the class ``0`` for ``1e-400``), as it reads classes beyond 2^53."""
    from test_cli import run

    table = write(tmp_path / "t.csv", "age,cls\n" + "".join(f"{3 * i},{'1e-400' if i % 2 else 1}\n"
                                                          for i in range(1, 31)))
    code, out, err = run(["classify", table, "--target", "cls", "--epsilon", "1", "--seed", "1"])
    assert code == 0, err
    assert "class: 1e-400" in out and "class: 0" not in out


def test_mine_refuses_1e_400_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    from test_cli import assert_one_error_line, run

    left = write(tmp_path / "left.csv", "id,x\n" + "".join(f"{i},{'1e-400' if i == 7 else i / 3}\n"
                                                          for i in range(40)))
    right = write(tmp_path / "right.csv", "id,b\n" + "".join(f"{i},{i % 2}\n" for i in range(40)))
    out = tmp_path / "out.json"
    code, stdout, err = run(["mine", left, right, "--epsilon", "1", "-o", out])
    assert code == 2 and stdout == "" and not out.exists()
    assert_one_error_line(err, f"{left}: column 'x', row 8: value 1e-400 is too close to 0 for a number")
