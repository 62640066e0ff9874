"""End-to-end tests of the ``dprm`` command line.

Most tests run the command in-process through :func:`dprm.cli.main` (exit codes
via :class:`SystemExit`, output via ``capsys``); a few run the real process
(``python -m dprm.cli`` and the installed ``dprm`` script) to prove that a user
error is one ``error: ...`` line on stderr with exit code 2 and no traceback.

The contract (``src/dprm/cli/``): every user error ends as exactly one line
``error: <message>`` on stderr, exit code 2, no traceback, and no output file is
created (an existing one is left untouched).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from dprm.cli import main
from dprm.data import load_two_view
from dprm.queries import FORMAT, RedescriptionStats, query_from_json, read_document

ROWS = "300"
SEED = "1"
#: Small, fast settings for the runs that only need the command to get going.
FAST = ["--algorithm", "cartwheels", "--depth", "1", "--init-trials", "1", "--alternations", "1"]  # cartwheels: no longer the default


# ----------------------------------------------------------------------------- helpers


def run(args: list[str]) -> tuple[int, str, str]:
    """Run ``dprm args`` in-process; return (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
        except SystemExit as done:
            code = 0 if done.code is None else done.code
    return code, out.getvalue(), err.getvalue()


def assert_one_error_line(stderr: str, *fragments: str) -> str:
    """stderr is exactly one line ``error: ...`` (no traceback) holding every fragment."""
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {lines!r}"
    line = lines[0]
    assert line.startswith("error: "), line
    assert len(line) > len("error: "), line
    for fragment in fragments:
        assert fragment in line, f"{fragment!r} not in {line!r}"
    return line


def expect_user_error(capsys: pytest.CaptureFixture[str], args: list, *fragments: str) -> str:
    """``main(args)`` exits 2 with one ``error:`` line on stderr; returns that line."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main([str(a) for a in args])
    assert done.value.code == 2
    captured = capsys.readouterr()
    return assert_one_error_line(captured.err, *fragments)


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def dprm_script() -> Path:
    return Path(sys.executable).parent / "dprm"


def run_process(args: list, cwd: Path, module: bool = True) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "dprm.cli"] if module else [str(dprm_script())]
    return subprocess.run(
        command + [str(a) for a in args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


GOOD_LEFT = "id,a,b\n1,0,1.5\n2,1,2.5\n3,0,3.5\n4,1,4.5\n5,1,5.5\n6,0,6.5\n"
GOOD_RIGHT = "id,c,d\n1,1,x\n2,0,y\n3,1,x\n4,0,y\n5,1,x\n6,0,z\n"


@pytest.fixture
def good(tmp_path: Path) -> tuple[Path, Path]:
    """Two small, valid views with an ``id`` column."""
    return write(tmp_path / "left.csv", GOOD_LEFT), write(tmp_path / "right.csv", GOOD_RIGHT)


# ------------------------------------------------------------------- planted data, mined


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    outdir = tmp_path_factory.mktemp("planted") / "data"
    code, out, err = run(["datasets", "make-planted", outdir, "--rows", ROWS, "--seed", SEED])
    assert code == 0, err
    assert err == ""
    return outdir


def mine_args(planted: Path, output: Path, clired: Path | None = None) -> list:
    args = [
        "mine", planted / "left.csv", planted / "right.csv",
        "--algorithm", "cartwheels", "--seed", SEED, "--output", output,
        "--types", planted / "types.json", "--init-trials", "3",  # 3 of the default 20: 2 of the 3 planted found, as with 6
    ]
    if clired is not None:
        args += ["--clired", clired]
    return args


@pytest.fixture(scope="module")
def mined(planted: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    where = tmp_path_factory.mktemp("mined")
    output, clired = where / "out.json", where / "out.queries"
    code, out, err = run(mine_args(planted, output, clired))
    return {"code": code, "stdout": out, "stderr": err, "output": output, "clired": clired, "dir": where}


@pytest.fixture(scope="module")
def loaded(planted: Path):
    return load_two_view(planted / "left.csv", planted / "right.csv", types=planted / "types.json")


# ------------------------------------------------------------------------- happy paths


def test_make_planted_writes_the_four_files(planted: Path) -> None:
    assert sorted(p.name for p in planted.iterdir()) == ["left.csv", "planted.json", "right.csv", "types.json"]
    left = (planted / "left.csv").read_text(encoding="utf-8").splitlines()
    right = (planted / "right.csv").read_text(encoding="utf-8").splitlines()
    assert len(left) == len(right) == int(ROWS) + 1  # header + rows
    assert left[0].split(",")[0] == right[0].split(",")[0] == "row_id"
    types = json.loads((planted / "types.json").read_text(encoding="utf-8"))
    columns = set(left[0].split(",")) | set(right[0].split(","))
    assert set(types["columns"]) == columns
    relations = json.loads((planted / "planted.json").read_text(encoding="utf-8"))["planted"]
    assert len(relations) == 3
    for relation in relations:
        query_from_json(relation["left"])
        query_from_json(relation["right"])


def test_make_planted_is_reproducible(planted: Path, tmp_path: Path) -> None:
    code, _, err = run(["datasets", "make-planted", tmp_path / "again", "--rows", ROWS, "--seed", SEED])
    assert code == 0, err
    for name in ("left.csv", "right.csv", "types.json", "planted.json"):
        assert (tmp_path / "again" / name).read_bytes() == (planted / name).read_bytes()


def test_inspect_lists_every_attribute_with_its_type(planted: Path, capsys) -> None:
    code, out, err = run(["inspect", planted / "left.csv", planted / "right.csv", "--types", planted / "types.json"])
    assert code == 0, err
    assert err == ""
    assert f"{ROWS} rows" in out
    types = json.loads((planted / "types.json").read_text(encoding="utf-8"))["columns"]
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 6:
            rows[cells[0]] = cells
    attributes = {name: t["type"] for name, t in types.items() if t["type"] != "id"}
    assert "row_id" not in rows
    assert set(rows) == set(attributes)
    for name, kind in attributes.items():
        assert rows[name][1] == ("left" if name.startswith("l_") else "right")
        assert rows[name][2] == kind
        assert rows[name][5].endswith("declared")


def test_inspect_small_files_infers_types(good, capsys) -> None:
    left, right = good
    code, out, err = run(["inspect", left, right])
    assert code == 0, err
    assert "6 rows" in out
    kinds = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 6:
            kinds[cells[0]] = cells[2]
    assert kinds == {"a": "boolean", "b": "numeric", "c": "boolean", "d": "categorical"}


def test_mine_exits_zero_and_writes_both_files(mined: dict) -> None:
    assert mined["code"] == 0, mined["stderr"]
    assert "Traceback" not in mined["stderr"]
    assert mined["output"].is_file()
    assert mined["clired"].is_file()
    assert "redescriptions" in mined["stdout"]
    assert str(mined["output"]) in mined["stdout"].replace("\n", "")
    # the atomic writer leaves no temporary file behind
    assert sorted(p.name for p in mined["dir"].iterdir()) == ["out.json", "out.queries"]


def test_mine_document_header(mined: dict) -> None:
    doc = json.loads(mined["output"].read_text(encoding="utf-8"))
    assert doc["format"] == FORMAT == "dprm.redescriptions/1"
    assert doc["algorithm"] == "cartwheels"
    assert doc["privacy"]["guarantee"] == "none"
    assert doc["privacy"]["ledger"] == []
    parameters = doc["parameters"]
    for name in ("depth", "init_trials", "alternations", "max_clauses", "min_support",
                 "max_support", "min_jaccard", "max_pvalue", "max_splits", "min_leaf"):
        assert name in parameters, name
    assert parameters["seed"] == int(SEED)
    assert len(doc["redescriptions"]) >= 1
    # the file passes the project's own strict reader
    _, redescriptions = read_document(mined["output"])
    assert len(redescriptions) == len(doc["redescriptions"])


def test_mine_clired_file_has_one_line_per_redescription(mined: dict) -> None:
    doc = json.loads(mined["output"].read_text(encoding="utf-8"))
    lines = mined["clired"].read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t")[:3] == ["rid", "query_LHS", "query_RHS"]
    assert len(lines) == 1 + len(doc["redescriptions"])


def test_mine_statistics_equal_reevaluation(mined: dict, loaded) -> None:
    doc = json.loads(mined["output"].read_text(encoding="utf-8"))
    for i, r in enumerate(doc["redescriptions"]):
        left = query_from_json(r["left"]).support(loaded.left)
        right = query_from_json(r["right"]).support(loaded.right)
        expected = RedescriptionStats.from_supports(left, right).to_json()
        got = r["noisy"]
        for key in ("support_left", "support_right", "intersection", "union"):
            assert got[key] == expected[key], (i, key)
        assert got["jaccard"] == pytest.approx(expected["jaccard"], rel=1e-12, abs=0), i
        assert got["p_value"] == pytest.approx(expected["p_value"], rel=1e-9, abs=1e-300), i


def test_mine_finds_a_planted_relation(mined: dict, loaded, planted: Path) -> None:
    doc = json.loads(mined["output"].read_text(encoding="utf-8"))
    relations = json.loads((planted / "planted.json").read_text(encoding="utf-8"))["planted"]

    def jaccard(a: np.ndarray, b: np.ndarray) -> float:
        union = np.count_nonzero(a | b)
        return np.count_nonzero(a & b) / union if union else 0.0

    found = 0
    supports = [
        (query_from_json(r["left"]).support(loaded.left), query_from_json(r["right"]).support(loaded.right))
        for r in doc["redescriptions"]
        if r["noisy"]["jaccard"] >= 0.6
    ]
    assert supports, "no redescription with Jaccard >= 0.6"
    for relation in relations:
        planted_left = query_from_json(relation["left"]).support(loaded.left)
        planted_right = query_from_json(relation["right"]).support(loaded.right)
        if any(
            jaccard(left, planted_left) >= 0.8 and jaccard(right, planted_right) >= 0.8
            for left, right in supports
        ):
            found += 1
    assert found >= 1


def test_mine_same_seed_same_file(mined: dict, planted: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.json"
    code, _, err = run(mine_args(planted, again))
    assert code == 0, err
    assert again.read_bytes() == mined["output"].read_bytes()


def test_mine_small_files_without_output(good, capsys) -> None:
    left, right = good
    code, out, err = run(["mine", left, right, "--seed", "3"])
    assert code == 0, err
    assert "Traceback" not in err
    assert "redescriptions" in out


# ---------------------------------------------------------------------- user errors

# Each case: (id, files to write {name: content}, extra args, fragments of the message).
# LEFT and RIGHT in the args are replaced by the paths of the written files.
CASES = [
    ("missing-file", {"right.csv": GOOD_RIGHT}, ["nope.csv", "right.csv"], ["nope.csv", "no such file"]),
    ("empty-file", {"left.csv": "", "right.csv": GOOD_RIGHT}, ["left.csv", "right.csv"],
     ["left.csv", "empty"]),
    ("header-only", {"left.csv": "id,a,b\n", "right.csv": GOOD_RIGHT}, ["left.csv", "right.csv"],
     ["left.csv", "no data rows"]),
    ("duplicate-columns-error",
     {"left.csv": "id,a,a\n1,0,1\n2,1,0\n3,0,1\n4,1,1\n", "right.csv": "id,c\n1,1\n2,0\n3,1\n4,0\n"},
     ["left.csv", "right.csv", "--duplicate-columns", "error"], ["left.csv", "'a'", "more than once"]),
    ("duplicate-columns-bad-choice", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT},
     ["left.csv", "right.csv", "--duplicate-columns", "bogus"], ["--duplicate-columns", "bogus"]),
    ("name-in-both-views", {"left.csv": GOOD_LEFT, "right.csv": "id,b,c\n1,1,0\n2,0,1\n3,1,0\n4,0,1\n5,1,1\n6,0,0\n"},
     ["left.csv", "right.csv"], ["'b'", "both"]),
    ("row-counts-differ", {"left.csv": "a,b\n0,1\n1,2\n0,3\n", "right.csv": "c,d\n0,1\n1,2\n"},
     ["left.csv", "right.csv"], ["3 rows", "2"]),
    ("wrong-number-of-fields", {"left.csv": "id,a,b\n1,0,1\n2,1,2\n3,0,1,9\n4,1,1\n", "right.csv": GOOD_RIGHT},
     ["left.csv", "right.csv"], ["left.csv", "row 3", "4 fields", "header has 3"]),
    ("not-utf8-value", {"left.csv": b"id,a,b\n1,0,x\n2,1,caf\xe9\n3,0,y\n4,1,z\n", "right.csv": GOOD_RIGHT},
     ["left.csv", "right.csv"], ["left.csv", "UTF-8", "row 2"]),
    ("not-utf8-header", {"left.csv": b"id,\xe9t\xe9,b\n1,0,1\n2,1,2\n", "right.csv": GOOD_RIGHT},
     ["left.csv", "right.csv"], ["left.csv", "UTF-8", "line 1"]),
    ("nul-in-a-column-name", {"left.csv": b"id,a\x00,b\n1,0,x\n2,1,y\n3,0,y\n4,1,z\n", "right.csv": GOOD_RIGHT},
     ["left.csv", "right.csv"], ["left.csv", "column 2's name 'a\\x00' holds a NUL character"]),
    ("not-a-number-for-declared-numeric",
     {"left.csv": GOOD_LEFT, "right.csv": "id,c,s\n1,1,1.5\n2,0,2\n3,1,lots\n4,0,4\n5,1,5\n6,0,6\n",
      "types.json": '{"columns": {"s": {"type": "numeric", "bounds": [0, 10]}}}'},
     ["left.csv", "right.csv", "--types", "types.json"], ["right.csv", "column 's'", "row 3", "'lots'", "number"]),
    ("ids-in-one-view-only", {"left.csv": GOOD_LEFT, "right.csv": "id,c\n1,1\n2,0\n3,1\n4,0\n5,1\n77,0\n"},
     ["left.csv", "right.csv"], ["6"]),
    ("ids-duplicated", {"left.csv": "id,a\n1,0\n2,1\n2,0\n4,1\n5,0\n6,1\n", "right.csv": GOOD_RIGHT},
     ["left.csv", "right.csv"], ["left.csv", "more than once", "'id'", "2"]),
    ("unknown-extension", {"left.xlsx": "id,a\n1,0\n", "right.csv": GOOD_RIGHT}, ["left.xlsx", "right.csv"],
     ["left.xlsx", "unknown file type", ".xlsx"]),
    ("types-bad-json", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT, "types.json": '{"columns": '},
     ["left.csv", "right.csv", "--types", "types.json"], ["types.json", "JSON"]),
    ("types-unknown-column", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT,
                              "types.json": '{"columns": {"zzz": {"type": "numeric", "bounds": [0, 1]}}}'},
     ["left.csv", "right.csv", "--types", "types.json"], ["types.json", "'zzz'"]),
    ("types-unknown-type", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT,
                            "types.json": '{"columns": {"b": "integer"}}'},
     ["left.csv", "right.csv", "--types", "types.json"], ["types.json", "'integer'"]),
    ("types-missing", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT},
     ["left.csv", "right.csv", "--types", "nope.json"], ["nope.json"]),
    ("value-outside-declared-bounds", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT,
                                       "types.json": '{"columns": {"b": {"bounds": [0, 3]}}}'},
     ["left.csv", "right.csv", "--types", "types.json"], ["column 'b'", "row 3", "3.5", "bounds"]),
    ("id-column-absent", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT},
     ["left.csv", "right.csv", "--id-column", "nope"], ["'nope'"]),
    ("input-is-a-directory", {"right.csv": GOOD_RIGHT, "dir.csv/keep": "x"}, ["dir.csv", "right.csv"],
     ["dir.csv", "directory"]),
    ("no-usable-attribute", {"left.csv": "id,k\n1,5\n2,5\n3,5\n", "right.csv": "id,z\n1,1\n2,0\n3,1\n"},
     ["left.csv", "right.csv"], ["left"]),
    ("unknown-algorithm", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT},
     ["left.csv", "right.csv", "--algorithm", "nope"], ["'nope'", "cartwheels"]),
    ("depth-zero", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT}, ["left.csv", "right.csv", "--depth", "0"],
     ["depth", "0"]),
    ("max-support-above-one", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT},
     ["left.csv", "right.csv", "--max-support", "1.5"], ["max-support", "1.5"]),
    ("epsilon-zero", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT}, ["left.csv", "right.csv", "--epsilon", "0"],
     ["epsilon"]),
    ("epsilon-negative", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT},
     ["left.csv", "right.csv", "--epsilon", "-1"], ["epsilon"]),
    ("min-jaccard-above-one", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT},
     ["left.csv", "right.csv", "--min-jaccard", "2"], ["min-jaccard"]),
    ("init-trials-zero", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT},
     ["left.csv", "right.csv", "--init-trials", "0"], ["init-trials"]),
    ("depth-not-an-integer", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT},
     ["left.csv", "right.csv", "--depth", "deep"], ["--depth"]),
    ("unknown-option", {"left.csv": GOOD_LEFT, "right.csv": GOOD_RIGHT}, ["left.csv", "right.csv", "--bogus"],
     ["--bogus"]),
    ("missing-argument", {}, [], ["left"]),
]


def _materialise(tmp_path: Path, files: dict, args: list) -> list:
    for name, content in files.items():
        write(tmp_path / name, content)
    return [tmp_path / a if (tmp_path / a).exists() or a.endswith((".csv", ".json", ".xlsx")) else a for a in args]


@pytest.mark.parametrize("files, args, fragments", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_mine_user_error_creates_no_output(tmp_path: Path, capsys, files, args, fragments) -> None:
    argv = _materialise(tmp_path, files, args)
    output, clired = tmp_path / "out" / "result.json", tmp_path / "out" / "result.queries"
    output.parent.mkdir()
    expect_user_error(capsys, ["mine", *argv, "--output", output, "--clired", clired], *fragments)
    assert list(output.parent.iterdir()) == []


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c[0] in ("missing-file", "not-a-number-for-declared-numeric", "ids-duplicated",
                                   "depth-zero", "unknown-option", "types-bad-json")],
    ids=lambda c: c[0],
)
def test_mine_user_error_leaves_existing_output_untouched(tmp_path: Path, capsys, case) -> None:
    _, files, args, fragments = case
    argv = _materialise(tmp_path, files, args)
    output = write(tmp_path / "out" / "result.json", '{"previous": "run"}\n')
    before = output.stat()
    expect_user_error(capsys, ["mine", *argv, "--output", output], *fragments)
    assert output.read_text(encoding="utf-8") == '{"previous": "run"}\n'
    assert output.stat().st_mtime_ns == before.st_mtime_ns
    assert [p.name for p in output.parent.iterdir()] == ["result.json"]


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c[0] in ("missing-file", "empty-file", "header-only", "duplicate-columns-error",
                                   "wrong-number-of-fields", "not-utf8-value", "not-a-number-for-declared-numeric",
                                   "ids-in-one-view-only", "unknown-extension", "types-unknown-column")],
    ids=lambda c: c[0],
)
def test_inspect_user_error(tmp_path: Path, capsys, case) -> None:
    _, files, args, fragments = case
    expect_user_error(capsys, ["inspect", *_materialise(tmp_path, files, args)], *fragments)


def test_messages_name_row_and_value_exactly(tmp_path: Path, capsys) -> None:
    left = write(tmp_path / "left.csv", GOOD_LEFT)
    right = write(tmp_path / "right.csv", "id,c,s\n1,1,1.5\n2,0,2\n3,1,lots\n4,0,4\n5,1,5\n6,0,6\n")
    types = write(tmp_path / "types.json", '{"columns": {"s": {"type": "numeric", "bounds": [0, 10]}}}')
    line = expect_user_error(capsys, ["mine", left, right, "--types", types])
    assert line == f"error: {right}: column 's', row 3: value 'lots' is not a number (the column is numeric)"


@pytest.mark.parametrize(("declaration", "key"), [('"numeric"', "bounds"), ('"categorical"', "categories")])
def test_a_private_run_refuses_a_declared_column_without_its_public_domain(tmp_path: Path, capsys, declaration,
                                                                           key) -> None:
    left = write(tmp_path / "left.csv", GOOD_LEFT)
    right = write(tmp_path / "right.csv", GOOD_RIGHT)
    column = "b" if key == "bounds" else "d"
    types = write(tmp_path / "types.json", '{"columns": {"a": "boolean", "%s": %s}}' % (column, declaration))
    output = tmp_path / "out.json"
    line = expect_user_error(capsys, ["mine", left, right, "--types", types, "--epsilon", "1", "--output", output])
    assert line == (f"error: {types}: column '{column}': a private run needs its public '{key}' (declare "
                    + ('"bounds": [low, high]' if key == "bounds" else '"categories": [...]')
                    + "; a non-private algorithm reads them off the data)")
    assert not output.exists()
    # A non-private algorithm reads the domain off the rows, as before; so does a private
    # run whose types file does not name the column (it says it is not private).
    code, out, err = run(["mine", left, right, "--types", types, "-a", "cartwheels", "--output", output])
    assert code == 0, err
    assert output.is_file()
    other = write(tmp_path / "other.json", '{"columns": {"a": "boolean"}}')
    code, out, err = run(["mine", left, right, "--types", other, "--epsilon", "1"])
    assert code == 0, err
    assert "NOT private" in out and "undeclared types or domains" in out


def test_ids_in_one_view_only_lists_the_ids(tmp_path: Path, capsys) -> None:
    left = write(tmp_path / "left.csv", GOOD_LEFT)
    right = write(tmp_path / "right.csv", "id,c\n1,1\n2,0\n3,1\n4,0\n5,1\n77,0\n")
    line = expect_user_error(capsys, ["mine", left, right])
    assert line == f"error: {left}: 1 id(s) are not in {right}: 6"
    # left has every id of right, right has one more: reported from the right's side
    more = write(tmp_path / "more.csv", "id,c\n1,1\n2,0\n3,1\n4,0\n5,1\n6,0\n77,1\n")
    line = expect_user_error(capsys, ["mine", left, more])
    assert line == f"error: {more}: 1 id(s) are not in {left}: 77"


def test_duplicate_columns_renamed_by_default(tmp_path: Path, capsys) -> None:
    left = write(tmp_path / "left.csv", "id,a,a,b\n1,0,1,1.5\n2,1,0,2.5\n3,0,1,3.5\n4,1,1,4.5\n5,0,0,5.5\n")
    right = write(tmp_path / "right.csv", "id,c\n1,1\n2,0\n3,1\n4,0\n5,1\n")
    output = tmp_path / "out.json"
    code, out, err = run(["mine", left, right, "--seed", "1", "--output", output])
    assert code == 0, err
    assert err.splitlines() == [f"note: {left}: duplicate column 'a' renamed 'a.1'"]
    assert output.is_file()
    code, out, err = run(["inspect", left, right])
    assert code == 0, err
    assert err.startswith("note: ") and "'a.1'" in err
    names = [line.strip("│ ").split("│")[0].strip() for line in out.splitlines() if line.count("│") == 7]
    assert "a" in names and "a.1" in names


def test_output_directory_missing_fails_before_mining(good, tmp_path: Path, capsys) -> None:
    left, right = good
    output = tmp_path / "no" / "such" / "dir" / "out.json"
    line = expect_user_error(capsys, ["mine", left, right, "--output", output], str(output.parent), "does not exist")
    assert not output.parent.exists()
    assert line


def test_clired_directory_missing_fails_before_mining(good, tmp_path: Path, capsys) -> None:
    left, right = good
    output, clired = tmp_path / "out.json", tmp_path / "nodir" / "q.queries"
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main([str(a) for a in ["mine", left, right, "--output", output, "--clired", clired]])
    assert done.value.code == 2
    captured = capsys.readouterr()
    assert_one_error_line(captured.err, "does not exist")
    assert captured.out == ""  # nothing mined, nothing printed
    assert not output.exists()


def test_output_is_an_existing_directory(good, tmp_path: Path, capsys) -> None:
    left, right = good
    target = tmp_path / "adir"
    target.mkdir()
    expect_user_error(capsys, ["mine", left, right, "--seed", "1", "--output", target], str(target))
    assert target.is_dir() and list(target.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "left.csv", "right.csv"]


def test_failing_clired_write_leaves_no_output(good, tmp_path: Path, capsys) -> None:
    left, right = good
    target = tmp_path / "adir"
    target.mkdir()
    output = tmp_path / "out.json"
    expect_user_error(capsys, ["mine", left, right, "--seed", "1", "--output", output, "--clired", target])
    assert not output.exists()


def test_negative_seed_is_a_user_error(good, capsys) -> None:
    left, right = good
    expect_user_error(capsys, ["mine", left, right, "--seed", "-1"], "seed")


def test_epsilon_nan_is_a_user_error(good, capsys) -> None:
    left, right = good
    expect_user_error(capsys, ["mine", left, right, "--epsilon", "nan"], "epsilon")


@pytest.mark.parametrize("value, shown", [("inf", "inf"), ("-Infinity", "-inf"), ("nan", "nan"), ("0", "0.0"),
                                          ("-2", "-2.0")])
@pytest.mark.parametrize("algorithm", [[], ["-a", "cartwheels"]], ids=["default", "cartwheels"])
def test_an_epsilon_that_is_not_finite_and_positive_says_so(good, capsys, tmp_path, value, shown, algorithm) -> None:
    """'--epsilon inf' was refused as 'must be a positive number, not inf', which it is."""
    left, right = good
    output = tmp_path / "out.json"
    line = expect_user_error(capsys, ["mine", left, right, *algorithm, "--epsilon", value, "--output", output])
    assert line == f"error: --epsilon must be finite and positive, not {shown}"
    assert not output.exists()


@pytest.mark.parametrize("value, says", [("1e400", "beyond the largest number"), ("-1e400", "beyond the largest"),
                                         ("1e-400", "too close to 0")])
def test_an_epsilon_beyond_the_floats_is_quoted_as_written(good, capsys, value: str, says: str) -> None:
    """'1e400' read as inf, and the refusal said 'not inf'."""
    left, right = good
    line = expect_user_error(capsys, ["mine", left, right, "--epsilon", value], "--epsilon", f"'{value}'", says)
    assert "inf" not in line.replace(value, "")


def test_inspect_max_splits_zero_is_a_user_error(good, capsys) -> None:
    left, right = good
    expect_user_error(capsys, ["inspect", left, right, "--max-splits", "0"], "max-splits")


def test_make_planted_into_a_file_is_a_user_error(tmp_path: Path, capsys) -> None:
    target = write(tmp_path / "taken", "x")
    expect_user_error(capsys, ["datasets", "make-planted", target, "--rows", "30"], str(target))
    assert target.read_text() == "x"


@pytest.mark.parametrize("taken", ["left.csv", "types.json", "planted.json"])
def test_make_planted_with_an_output_taken_by_a_directory_writes_nothing(tmp_path: Path, capsys, taken) -> None:
    """The other files were written first, then the error named an internal temporary file."""
    outdir = tmp_path / "out"
    (outdir / taken).mkdir(parents=True)
    line = expect_user_error(capsys, ["datasets", "make-planted", outdir, "--rows", "30"],
                             f"{outdir / taken}: is a directory")
    assert ".tmp" not in line
    assert [p.name for p in outdir.iterdir()] == [taken] and not any((outdir / taken).iterdir())


def test_write_planted_refuses_a_directory_in_the_way_before_writing(tmp_path: Path) -> None:
    from dprm.datasets import make_planted, write_planted
    from dprm.files import write_atomic

    (tmp_path / "planted.json").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        write_planted(make_planted(30, random_state=0), tmp_path)
    assert info.value.filename == str(tmp_path / "planted.json")
    assert [p.name for p in tmp_path.iterdir()] == ["planted.json"]
    with pytest.raises(IsADirectoryError) as info:  # named by its path, not the temporary file's
        write_atomic(tmp_path / "planted.json", "{}")
    assert info.value.filename == str(tmp_path / "planted.json")
    assert [p.name for p in tmp_path.iterdir()] == ["planted.json"]


def test_make_planted_bad_parameter(tmp_path: Path, capsys) -> None:
    expect_user_error(capsys, ["datasets", "make-planted", tmp_path / "d", "--rows", "30", "--noise", "0.7"], "noise")
    expect_user_error(capsys, ["datasets", "make-planted", tmp_path / "d", "--rows", "0"], "0")
    assert not (tmp_path / "d" / "left.csv").exists()


@pytest.mark.parametrize("rows", ["0", "-5"])
def test_make_planted_says_one_rule_for_too_few_rows(tmp_path: Path, capsys, rows: str) -> None:
    """'--rows -5' said 'must be non-negative' (0 is not allowed either), '--rows 0' 'must be at least 1'."""
    line = expect_user_error(capsys, ["datasets", "make-planted", tmp_path / "d", "--rows", rows])
    assert line == f"error: rows must be at least 1, not {rows}"
    assert not (tmp_path / "d").exists()
    line = expect_user_error(capsys, ["datasets", "make-planted", tmp_path / "d", "--planted", "-1"])
    assert line == "error: planted must be non-negative, not -1"


def test_unknown_command(capsys) -> None:
    expect_user_error(capsys, ["frobnicate"], "frobnicate")


# ------------------------------------------------------------------------------ help


def test_no_arguments_prints_help(capsys) -> None:
    code, out, err = run([])
    assert code == 0
    assert "Usage" in out
    for command in ("mine", "inspect", "datasets"):
        assert command in out
    assert "error" not in err


def test_help_option(capsys) -> None:
    code, out, _ = run(["--help"])
    assert code == 0 and "Usage" in out


def test_mine_help_lists_the_options(capsys) -> None:
    code, out, err = run(["mine", "--help"])
    assert code == 0, err
    for option in ("--algorithm", "--epsilon", "--seed", "--output", "--clired", "--types", "--id-column",
                   "--duplicate-columns", "--depth", "--init-trials", "--max-support", "--min-jaccard"):
        assert option in out, option


def test_inspect_and_make_planted_help(capsys) -> None:
    code, out, _ = run(["inspect", "--help"])
    assert code == 0 and "--types" in out
    code, out, _ = run(["datasets", "make-planted", "--help"])
    assert code == 0 and "--rows" in out and "--seed" in out


def test_group_without_subcommand_prints_help(capsys) -> None:
    code, out, err = run(["datasets"])
    assert "make-planted" in out
    assert "unknown error" not in err
    assert code == 0


# -------------------------------------------------------------------- real processes


def test_process_missing_file_one_line_exit_2(good, tmp_path: Path) -> None:
    _, right = good
    output = tmp_path / "out.json"
    done = run_process(["mine", tmp_path / "nope.csv", right, "--output", output], cwd=tmp_path)
    assert done.returncode == 2
    assert_one_error_line(done.stderr, "nope.csv", "no such file")
    assert done.stdout == ""
    assert not output.exists()


def test_process_bad_data_one_line_exit_2(tmp_path: Path) -> None:
    left = write(tmp_path / "left.csv", "id,a,b\n1,0,1\n2,1,2\n3,0,1,9\n")
    right = write(tmp_path / "right.csv", GOOD_RIGHT)
    done = run_process(["mine", left.name, right.name, "-o", "out.json"], cwd=tmp_path)
    assert done.returncode == 2
    assert_one_error_line(done.stderr, "left.csv: row 3 has 4 fields but the header has 3")
    assert not (tmp_path / "out.json").exists()


@pytest.mark.skipif(not dprm_script().exists(), reason="the dprm script is not installed next to python")
def test_script_unknown_option_one_line_exit_2(good, tmp_path: Path) -> None:
    left, right = good
    done = run_process(["mine", left, right, "--bogus"], cwd=tmp_path, module=False)
    assert done.returncode == 2
    assert_one_error_line(done.stderr, "--bogus")


@pytest.mark.skipif(not dprm_script().exists(), reason="the dprm script is not installed next to python")
def test_script_no_arguments_prints_help(tmp_path: Path) -> None:
    done = run_process([], cwd=tmp_path, module=False)
    assert done.returncode == 0
    assert "Usage" in done.stdout
    assert done.stderr == ""


def test_process_negative_seed_one_line_exit_2(good, tmp_path: Path) -> None:
    left, right = good
    done = run_process(["mine", left, right, "--seed", "-1", *FAST], cwd=tmp_path)
    assert "Traceback" not in done.stderr
    assert done.returncode == 2
    assert_one_error_line(done.stderr, "seed")


# ------------------------------------------------------------ private algorithms


@pytest.mark.parametrize("algorithm", ["alt-expm", "alt-mcmc", "mcmc-tree-pair"])
def test_private_mine_writes_a_ledger_that_adds_up(planted: Path, tmp_path: Path, algorithm: str) -> None:
    output = tmp_path / "out.json"
    code, out, err = run([
        "mine", planted / "left.csv", planted / "right.csv", "--types", planted / "types.json",
        "--algorithm", algorithm, "--epsilon", "0.5", "--seed", "3", "--init-trials", "2",
        "--mcmc-iterations", "200", "--prune-support", "5", "--output", output,
    ])
    assert code == 0, err
    document = json.loads(output.read_text())
    privacy = document["privacy"]
    assert sum(entry["epsilon"] for entry in privacy["ledger"]) == pytest.approx(0.5, abs=1e-12)
    assert privacy["epsilon"] == pytest.approx(0.5)
    assert privacy["private"] is False and "seeded" in privacy["reasons"][0]  # --seed: reproducible
    assert privacy["guarantee"] == "none"  # the spec: a run that is not private guarantees nothing
    parameters = document["parameters"]
    for name in ("epsilon", "depth", "init_trials", "mcmc_iterations", "min_support", "max_support",
                 "min_jaccard", "max_pvalue", "max_clauses", "mcmc_stop", "prune_support", "seed"):
        assert name in parameters, name
    assert parameters["prune_support"] == 5 and parameters["init_trials"] == 2
    assert out.startswith("NOT private: seeded noise") and "noisy statistics (NOT private)" in " ".join(out.split())
    for r in document["redescriptions"]:
        assert set(r["interval"]) >= {"confidence", "jaccard", "p_value"}


def test_an_option_of_another_algorithm_is_an_error(planted: Path, capsys) -> None:
    expect_user_error(capsys, ["mine", planted / "left.csv", planted / "right.csv", "--algorithm", "alt-expm",
                               "--pair-score", "gini"], "--pair-score", "alt-expm")  # MCMCTreePair's only
    expect_user_error(capsys, ["mine", planted / "left.csv", planted / "right.csv", "--algorithm",
                               "mcmc-tree-pair", "--omega", "1.5"], "omega")


def _terminated(command: list, ready) -> tuple[subprocess.CompletedProcess, list]:
    """Run ``command`` in a process of its own, send it SIGTERM once ``ready(process)`` (a psutil process)
    is true, and wait for it; returns the ended command and its descendants seen last before the signal."""
    psutil = pytest.importorskip("psutil")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONWARNINGS": "ignore"})
    descendants: list = []
    try:
        watched, deadline = psutil.Process(process.pid), time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            descendants = watched.children(recursive=True)
            if ready(watched):
                break
            time.sleep(0.1)
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr), descendants


def _cpu_seconds(process) -> float:
    """User and system CPU seconds of a psutil process, 0 once it has ended."""
    try:
        return sum(process.cpu_times()[:2])
    except Exception:  # psutil.Error: the process ended meanwhile
        return 0.0


def _running(processes: list) -> list[int]:
    """The pids of ``processes`` (psutil) still running, zombies left out."""
    import psutil

    alive = []
    for process in psutil.wait_procs(processes, timeout=20)[1]:
        with contextlib.suppress(psutil.Error):
            if process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process.pid)
    return alive


def test_sigterm_ends_an_in_process_run_as_ctrl_c_does(planted: Path, tmp_path: Path) -> None:
    """SIGTERM stopped an in-process ``dprm mine`` at once (exit -15, no word); now it ends as Ctrl-C does:
    one line ``interrupted``, exit code 130, no output written. The signal is sent once the process has
    used 4 CPU-s (its imports take about 1.5), well inside four chains of 4 million steps (about 14 CPU-s)."""
    output = tmp_path / "out.json"
    done, _ = _terminated([sys.executable, "-m", "dprm", "mine", planted / "left.csv", planted / "right.csv",
                           "--types", planted / "types.json", "-a", "mcmc-tree-pair", "--epsilon", "1", "--seed",
                           "1", "--trial", "trees", "--init-trials", "4", "--mcmc-iterations", "4000000",
                           "-o", output], lambda process: _cpu_seconds(process) >= 4)
    assert (done.returncode, done.stderr) == (130, "interrupted\n"), done.stdout
    assert not output.exists()


@pytest.mark.parametrize("stop", ["ctrl-c", "sigterm"])
def test_a_stop_while_the_fork_server_loads_leaves_one_line_and_no_run(planted: Path, tmp_path: Path,
                                                                        stop: str) -> None:
    """A stop while ``dprm evaluate``'s fork server imported its preload (about 2 CPU-s; sent once it has used
    0.5). Ctrl-C (SIGINT to the terminal's whole process group) also reached the fork server, which printed its
    KeyboardInterrupt traceback under ``interrupted``; SIGTERM (to the command) stopped the command inside its
    first run's start, and that run's process, forked once the preload was done, ran to its end after the
    command had said ``interrupted``: its document written behind a restart's back and a BrokenPipeError
    traceback printed. Now the one line ``interrupted: ...``, exit code 130, no run document, and the fork
    server ends silently by itself."""
    psutil = pytest.importorskip("psutil")
    out, err_path = tmp_path / "experiment", tmp_path / "stderr.txt"
    command = [sys.executable, "-m", "dprm", "evaluate", planted / "left.csv", planted / "right.csv", "--types",
               planted / "types.json", "--algorithms", "alt-expm", "--budgets", "1x2", "--jobs", "2", "--out", out,
               "--seed", "1", "-p", "init_trials=2"]
    with open(err_path, "w") as err:
        # a session of its own, as a terminal's job; SIGINT as a terminal gives it (a test run in the
        # background ignores SIGINT, and a child inherits that)
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
                                   env={**os.environ, "PYTHONWARNINGS": "ignore"},
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        watched, deadline, server = psutil.Process(process.pid), time.monotonic() + 120, None
        while process.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(psutil.Error):
                servers = [p for p in watched.children(recursive=True)
                           if "multiprocessing.forkserver" in " ".join(p.cmdline())]
                if servers and _cpu_seconds(servers[0]) >= 0.5:
                    server = servers[0]
                    break
            time.sleep(0.02)
        assert server is not None and process.poll() is None, err_path.read_text()
        if stop == "ctrl-c":
            os.killpg(process.pid, signal.SIGINT)
        else:
            process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=120) == 130, err_path.read_text()
        psutil.wait_procs([server], timeout=120)  # it ends once every process it forked has
        assert not server.is_running() or server.status() == psutil.STATUS_ZOMBIE
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    lines = err_path.read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("interrupted: finished runs are kept in"), lines
    assert [p.relative_to(out).as_posix() for p in out.rglob("*.json")] == ["experiment.json"]  # no run's document


def test_sigterm_ends_an_experiment_and_stops_its_runs(planted: Path, tmp_path: Path) -> None:
    """SIGTERM stopped an in-process ``dprm evaluate`` at once (exit -15, no word) and left its runs' processes
    to finish and write behind a restart's back; now it ends as Ctrl-C does: the runs under way are stopped,
    the one line ``interrupted: ...``, exit code 130, and no process the command started outlives it. The
    signal is sent once two of its descendants (the fork server, the runs forked from it) have used 2 CPU-s."""
    out = tmp_path / "experiment"
    done, descendants = _terminated(
        [sys.executable, "-m", "dprm", "evaluate", planted / "left.csv", planted / "right.csv", "--types",
         planted / "types.json", "--algorithms", "mcmc-tree-pair", "--budgets", "1x4", "--jobs", "2", "--out", out,
         "--seed", "1", "-p", "trial=trees", "-p", "init_trials=4", "-p", "mcmc_iterations=4000000"],
        lambda process: sum(_cpu_seconds(p) >= 2 for p in process.children(recursive=True)) >= 2)
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines()[-1].startswith("interrupted: finished runs are kept in"), done.stderr
    assert _running(descendants) == []  # the runs are reaped by the command; the fork server follows its parent
    assert not list(out.rglob("*.tmp"))
