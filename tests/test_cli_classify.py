"""``dprm classify`` and ``dprm classify-eval`` as a user runs them.

* ``classify`` with a types file declaring every domain is private: the status line
  says so, the tree and the cross-validated accuracy (marked as not private) are
  printed, ``--output`` holds the released tree and a ledger that adds up to ε;
  without declarations or with ``--seed`` it says NOT private and why;
* every bad input is one ``error:`` line, exit code 2, no traceback, nothing written;
* ``classify-eval --quick`` writes its table, figures and report; a refused run
  leaves no directory behind.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from test_cli import assert_one_error_line, run, write


@pytest.fixture
def learn(tmp_path: Path) -> tuple[Path, Path]:
    """A CSV (a numeric and two categorical features, class = a > 50) and its types file."""
    rng = np.random.default_rng(0)
    n = 240
    a = rng.uniform(0, 100, n).round(1)
    b = rng.choice(["x", "y"], n)
    c = rng.choice(["u", "v", "w"], n).astype(object)
    c[rng.random(n) < 0.1] = "?"
    y = np.where(a > 50, "hi", "lo")
    frame = pd.DataFrame({"a": a, "b": b, "c": c, "y": y})
    csv = tmp_path / "learn.csv"
    frame.to_csv(csv, index=False)
    types = write(tmp_path / "types.json", json.dumps({
        "na_values": ["?"],
        "columns": {"a": {"bounds": [0, 100]}, "b": {"categories": ["x", "y"]},
                    "c": {"categories": ["u", "v", "w"]}, "y": {"categories": ["hi", "lo"]}}}))
    return csv, types


def test_private_fit_prints_status_tree_and_cv(learn: tuple[Path, Path], tmp_path: Path) -> None:
    csv, types = learn
    out = tmp_path / "model.json"
    code, stdout, stderr = run(["classify", csv, "--target", "y", "--epsilon", "2", "--max-depth", "2",
                                "--types", types, "--cv", "3", "--output", out])
    assert code == 0, stderr
    lines = stdout.splitlines()
    assert lines[0].startswith("private: ε = 2 spent") and str(out) in lines[0]
    assert any(line.startswith("a <= ") for line in lines)  # the tree splits on the informative feature
    assert "cross-validated accuracy (3 folds)" in stdout
    accuracy = float(stdout.split("cross-validated accuracy (3 folds): ")[1].split()[0])
    assert 0.8 <= accuracy <= 1.0
    assert "NOT private: the cross-validation is an evaluation" in stdout
    document = json.loads(out.read_text())
    assert document["privacy"]["private"] is True
    assert document["privacy"]["guarantee"] != "none"
    assert list(document["privacy"]) == ["epsilon", "neighbouring", "guarantee", "private", "reasons", "ledger"]
    assert document["privacy"]["neighbouring"] == "add-remove-one-row"
    assert sum(entry["epsilon"] for entry in document["privacy"]["ledger"]) == pytest.approx(2.0)
    assert document["classes"] == ["hi", "lo"]
    assert [f["name"] for f in document["features"]] == ["a", "b", "c"]
    assert not any(f["from_data"] for f in document["features"])
    assert document["tree"]["text"].startswith("a <= ")
    assert "cross" not in json.dumps(document)  # the evaluation is not part of the release


def test_undeclared_domains_and_seed_say_not_private(learn: tuple[Path, Path]) -> None:
    csv, _ = learn
    code, stdout, stderr = run(["classify", csv, "--target", "y", "--epsilon", "1", "--max-depth", "2",
                                "--na-values", "?", "--cv", "0", "--seed", "4"])
    assert code == 0, stderr
    first = stdout.splitlines()[0]
    assert first.startswith("NOT private: ")
    assert "seeded" in first and "read off the data" in first
    assert "cross-validated" not in stdout  # --cv 0
    again = run(["classify", csv, "--target", "y", "--epsilon", "1", "--max-depth", "2", "--na-values", "?",
                 "--cv", "0", "--seed", "4"])
    assert again[1] == stdout  # seeded: reproducible


@pytest.mark.parametrize("change, fragments", [
    ({"file": "absent.csv"}, ["absent.csv", "no such file"]),
    ({"--target": "nope"}, ["no target column 'nope'"]),
    ({"--epsilon": "0"}, ["--epsilon must be between 0.0001 and 10000", "not 0"]),
    ({"--epsilon": "-1"}, ["--epsilon must be between 0.0001 and 10000", "not -1"]),
    ({"--epsilon": "inf"}, ["--epsilon must be between 0.0001 and 10000", "not inf"]),
    ({"--epsilon": "1e308"}, ["--epsilon must be between 0.0001 and 10000", "not 1e+308"]),  # ε · score overflowed
    ({"--epsilon": "1e-9"}, ["--epsilon must be between 0.0001 and 10000", "not 1e-09"]),
    ({"--embedding-depth": "4"}, ["--embedding-depth", "--max-depth (3)"]),
    ({"--search": "greedy"}, ["--search must be one of"]),
    ({"--variant": "other"}, ["--variant must be one of"]),
    ({"--cv": "1"}, ["--cv must be 0"]),
    ({"--seed": str(2**64 - 1)}, ["--seed must be an integer from 0 to 2^63 - 1", str(2**64 - 1)]),
    ({"--max-depth": "0"}, ["--max-depth must be between 1"]),
    ({"--types": "absent.json"}, ["absent.json", "no such file"]),
])
def test_bad_options_one_line_exit_2_nothing_written(learn: tuple[Path, Path], tmp_path: Path, change: dict,
                                                     fragments: list[str]) -> None:
    csv, types = learn
    options = {"--target": "y", "--epsilon": "1", "--max-depth": "3", "--types": str(types)}
    file = str(csv)
    for key, value in change.items():
        if key == "file":
            file = str(tmp_path / value)
        elif value.endswith(".json"):
            options[key] = str(tmp_path / value)
        else:
            options[key] = value
    out = tmp_path / "model.json"
    args = ["classify", file, *[x for pair in options.items() for x in pair], "--output", out]
    code, stdout, stderr = run(args)
    assert code == 2, (stdout, stderr)
    assert_one_error_line(stderr, *fragments)
    assert stdout == "" and not out.exists()


@pytest.mark.parametrize("content, types, fragments", [
    ("a,y\n1,p\n2,p\n3,p\n", None, ["only one class"]),
    ("a,y\n1,p\ninf,q\n3,p\n", None, ["'a'", "not a finite number"]),
    ("a,y\n1,p\n500,q\n3,p\n", {"columns": {"a": {"bounds": [0, 100]}}}, ["'a'", "outside the declared bounds"]),
    # a category the types file does not declare: one line naming the column, row and value
    ("b,y\nx,p\nz,q\nx,p\n", {"columns": {"b": {"categories": ["x", "y"]}}},
     ["d.csv", "column 'b', row 2", "value 'z'", "not one of the declared categories"]),
    ("a,y\n1,p\n2,\n3,q\n", None, ["target column 'y' has missing values"]),
    ("a,y\n1,p\n2,q\n3,q\n", None, ["--cv 3", "fewer folds"]),
    ("a,y\n1,p\n2,q\n3,p\n", {"columns": {"b": {"type": "numeric", "bounds": [0, 9]}}},
     ["t.json", "not in", "d.csv", "'b'"]),
    ("a,y\n1,p\n2,q\n3,p\n", {"columns": {"a": "numeric"}}, ["t.json", "column 'a'", "needs its public 'bounds'"]),
    ("a,y\n1,p\n2,q\n3,p\n", {"columns": {"y": "categorical"}},
     ["t.json", "column 'y'", "needs its public 'categories'"]),
    # a numeric target: declared (refused before any row is read) or a measurement in the rows
    ("a,y\n1,0.5\n2,1.5\n3,2.5\n", {"columns": {"y": {"type": "numeric", "bounds": [0, 3]}}},
     ["t.json", "target column 'y' is declared numeric", "declare it categorical"]),
    ("a,y\n1,1\n2,0.25\n3,2\n", None, ["d.csv", "target column 'y' holds numbers that are not whole",
                                         "(row 2: 0.25)", "declare its categories"]),
])
def test_bad_data_one_line_exit_2_nothing_written(tmp_path: Path, content: str, types: dict | None,
                                                  fragments: list[str]) -> None:
    csv = write(tmp_path / "d.csv", content)
    args = ["classify", csv, "--target", "y", "--epsilon", "1", "--cv", "3", "--output", tmp_path / "m.json"]
    if types is not None:
        args += ["--types", write(tmp_path / "t.json", json.dumps(types))]
    code, stdout, stderr = run(args)
    assert code == 2, (stdout, stderr)
    assert_one_error_line(stderr, *fragments)
    assert not (tmp_path / "m.json").exists()


def test_unwritable_output_is_refused_before_reading(tmp_path: Path) -> None:
    code, _, stderr = run(["classify", tmp_path / "absent.csv", "--target", "y", "--epsilon", "1",
                           "--output", tmp_path / "no" / "dir" / "m.json"])
    assert code == 2
    assert_one_error_line(stderr, "does not exist", "m.json")


# -- classify-eval ---------------------------------------------------------------------------------


def test_classify_eval_quick_writes_everything(learn: tuple[Path, Path], tmp_path: Path) -> None:
    csv, _ = learn
    data = write(tmp_path / "small.csv", pd.read_csv(csv).replace({"c": {"?": np.nan}}).to_csv(index=False))
    out = tmp_path / "out" / "eval"
    code, stdout, stderr = run(["classify-eval", out, "--quick", "--datasets", f"{data}:y", "--no-baselines",
                                "--seed", "3", "--timing-rows", "50,100"])
    assert code == 0, stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == ["accuracy_small.png", "classification.csv", "classification.json", "fit_time.png",
                     "report.html"]
    table = pd.read_csv(out / "classification.csv")
    accuracy = table[table["experiment"] == "accuracy"]
    assert sorted(accuracy["method"].unique()) == ["dprm d=1", "dprm d=whole"]
    assert (accuracy["status"] == "ok").all() and (accuracy["fits"] == 3).all()
    assert sorted(table.loc[table["experiment"] == "fit_time", "rows"].unique()) == [50, 100]
    assert "master seed 3" in stdout and "report.html" in stdout
    assert "not a private release" in stderr
    report = (out / "report.html").read_text()
    assert report.count("data:image/png;base64") == 2


def test_classify_eval_refused_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "new"
    code, stdout, stderr = run(["classify-eval", out, "--quick", "--datasets", tmp_path / "absent.csv"])
    assert code == 2
    assert_one_error_line(stderr, "absent.csv", "no such file")
    assert not out.exists()
    for args, fragment in ((["--epsilons", "0"], "--epsilons"), (["--depths", "x"], "--depths"),
                           (["--embedding-depths", "0"], "embedding depths"), (["--variants", "z"], "--variants"),
                           (["--folds", "1"], "--folds"), (["--datasets", "bogus"], "unknown dataset"),
                           (["--datasets", "vote", "--data-dir", tmp_path / "nowhere"], "--data-dir DIR")):
        code, _, stderr = run(["classify-eval", out, "--quick", *args])
        assert code == 2, (args, stderr)
        assert_one_error_line(stderr, fragment)
        assert not out.exists()


@pytest.mark.parametrize("content, fragment", [
    (b"", "is empty"),
    (b"y,a\nyes,x\nno,y\n\xe9,x\n", "column 'y', row 3: a value is not UTF-8 text"),  # not UTF-8
    (b"y,a,b\nyes,x,u\nno,y\nyes,x,v\nno,y,u\n", "row 2 has 2 fields"),      # a short row, not missing values
    (b"y\nyes\nno\nyes\nno\n", "no feature column"),                           # the target alone
])
def test_classify_eval_refuses_a_file_it_cannot_learn_from(tmp_path: Path, content: bytes, fragment: str) -> None:
    data = tmp_path / "d.csv"
    data.write_bytes(content)
    out = tmp_path / "new"
    code, _, stderr = run(["classify-eval", out, "--quick", "--no-timing", "--datasets", f"{data}:y"])
    assert code == 2, stderr
    assert_one_error_line(stderr, "d.csv", fragment)
    assert not out.exists()


def test_classify_eval_keeps_unrelated_files_and_every_asked_method(learn: tuple[Path, Path], tmp_path: Path) -> None:
    """A folder of other files is refused, not overwritten; an embedding depth no maximum depth reaches is
    an error where asked for (it would vanish from every table)."""
    csv, _ = learn
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "report.html").write_text("precious")
    code, _, stderr = run(["classify-eval", keep, "--quick", "--no-timing", "--datasets", f"{csv}:y"])
    assert code == 2
    assert_one_error_line(stderr, "not empty", "classification.json")
    assert (keep / "report.html").read_text() == "precious"
    out = tmp_path / "never"
    code, _, stderr = run(["classify-eval", out, "--quick", "--no-timing", "--embedding-depths", "5",
                           "--datasets", f"{csv}:y"])
    assert code == 2
    assert_one_error_line(stderr, "--embedding-depths", "d=5", "deeper than every --depths")
    assert not out.exists()


def test_the_largest_seed_also_seeds_the_cross_validation(learn: tuple[Path, Path], tmp_path: Path) -> None:
    csv, types = learn
    out = tmp_path / "model.json"
    code, stdout, stderr = run(["classify", csv, "--target", "y", "--epsilon", "1", "--max-depth", "2",
                                "--types", types, "--cv", "3", "--seed", str(2**63 - 1), "--output", out])
    assert code == 0, stderr  # the folds' seeds wrapped past 2^63 - 1 after the model was written
    assert "cross-validated accuracy (3 folds)" in stdout and out.exists()


def test_bounds_near_the_largest_float_give_finite_thresholds(tmp_path: Path) -> None:
    rows = "".join(f"{'-' if i % 2 else ''}1e308,{'a' if i % 2 else 'b'}\n" for i in range(40))
    csv = write(tmp_path / "d.csv", "num,cls\n" + rows)
    types = write(tmp_path / "t.json", json.dumps({"columns": {"num": {"bounds": [-1.7e308, 1.7e308]},
                                                               "cls": {"categories": ["a", "b"]}}}))
    out = tmp_path / "m.json"
    code, stdout, stderr = run(["classify", csv, "--target", "cls", "--epsilon", "10", "--max-depth", "2",
                                "--types", types, "--cv", "4", "--seed", "1", "--output", out])
    assert code == 0 and "Warning" not in stderr, stderr  # (high - low) overflowed to inf
    assert "cross-validated accuracy (4 folds): 1.000" in stdout

    def no_constant(name: str) -> None:
        raise AssertionError(f"{name} in the model")

    json.loads(out.read_text(), parse_constant=no_constant)


def test_whole_number_classes_are_shown_as_written(tmp_path: Path) -> None:
    csv = write(tmp_path / "d.csv", "a,label\n" + "".join(f"{i},{1 + i % 3}\n" for i in range(30)))
    out = tmp_path / "m.json"
    code, stdout, stderr = run(["classify", csv, "--target", "label", "--epsilon", "1", "--cv", "0", "--seed", "2",
                                "--output", out])
    assert code == 0, stderr
    assert json.loads(out.read_text())["classes"] == ["1", "2", "3"]  # were "1.0", "2.0", "3.0"
    assert ".0" not in stdout.split("variant dprm", 1)[1]


@pytest.mark.parametrize("spellings", [("0", "1"), ("no", "yes")])
def test_two_valued_classes_are_shown_as_written_not_as_booleans(tmp_path: Path, spellings: tuple) -> None:
    """A target the data layer would read as Boolean keeps its spellings as classes."""
    rows = "".join(f"{i},{spellings[i % 2]}\n" for i in range(30))
    csv = write(tmp_path / "d.csv", "a,label\n" + rows)
    out = tmp_path / "m.json"
    code, stdout, stderr = run(["classify", csv, "--target", "label", "--epsilon", "1", "--cv", "0", "--seed", "2",
                                "--output", out])
    assert code == 0, stderr
    assert json.loads(out.read_text())["classes"] == sorted(spellings)
    assert "class: true" not in stdout and "class: false" not in stdout


def test_an_undeclared_constant_column_is_kept_so_the_fit_says_it_is_not_private(tmp_path: Path) -> None:
    """Leaving the column out would be a choice made on the data (the features would say
    that it is constant): it stays a feature whose domain is read off the data."""
    rows = "".join(f"{i % 10},{'xy'[i % 2]},same,{'pq'[(i // 2) % 2]}\n" for i in range(40))
    csv = write(tmp_path / "d.csv", "a,b,k,y\n" + rows)
    types = write(tmp_path / "t.json", json.dumps({"columns": {"a": {"bounds": [0, 10]}, "b": {"categories": ["x", "y"]},
                                                               "y": {"categories": ["p", "q"]}}}))
    out = tmp_path / "m.json"
    code, _, stderr = run(["classify", csv, "--target", "y", "--epsilon", "1", "--cv", "0", "--types", types,
                           "--output", out])
    assert code == 0, stderr
    document = json.loads(out.read_text())
    assert [f["name"] for f in document["features"]] == ["a", "b", "k"]
    assert document["privacy"]["private"] is False and "'k'" in " ".join(document["privacy"]["reasons"])
    assert "column 'k' is constant (a single value) and kept" in stderr


def test_declared_classes_are_fitted_when_the_rows_hold_one(tmp_path: Path) -> None:
    """Refusing would depend on the rows; with the classes read off the data it is refused."""
    csv = write(tmp_path / "d.csv", "a,y\n" + "".join(f"{i},p\n" for i in range(12)))
    types = write(tmp_path / "t.json", json.dumps({"columns": {"a": {"bounds": [0, 20]},
                                                               "y": {"categories": ["p", "q"]}}}))
    out = tmp_path / "m.json"
    code, _, stderr = run(["classify", csv, "--target", "y", "--epsilon", "1", "--cv", "3", "--types", types,
                           "--output", out])
    assert code == 0, stderr
    document = json.loads(out.read_text())
    assert document["classes"] == ["p", "q"] and document["privacy"]["private"] is True
    code, _, stderr = run(["classify", csv, "--target", "y", "--epsilon", "1", "--cv", "0"])
    assert code == 2 and "has only one class" in stderr


def test_the_default_maximum_depth_is_auto_and_the_document_records_the_depth_used(learn, tmp_path: Path) -> None:
    csv, types = learn
    out = tmp_path / "model.json"
    code, stdout, stderr = run(["classify", csv, "--target", "y", "--epsilon", "2", "--types", types, "--cv", "0",
                                "--output", out])
    assert code == 0, stderr
    assert "tree: maximum depth 8," in stdout  # auto: 8 with --variant dprm
    assert json.loads(out.read_text())["parameters"]["max_depth"] == 8
    code, _, stderr = run(["classify", csv, "--target", "y", "--epsilon", "2", "--types", types, "--cv", "0",
                           "--max-depth", "deep"])
    assert code != 0 and "--max-depth must be between 1 and 30 or 'auto'" in stderr


# -- the id column ----------------------------------------------------------------------------------


@pytest.fixture
def with_ids(tmp_path: Path) -> Path:
    """A table whose first column, row_id, predicts the class perfectly (the rows are sorted by class)."""
    rng = np.random.default_rng(1)
    n = 200
    frame = pd.DataFrame({"row_id": np.arange(1, n + 1), "b": rng.choice(["x", "y"], n),
                          "y": np.where(np.arange(n) < n // 2, "lo", "hi")})
    csv = tmp_path / "ids.csv"
    frame.to_csv(csv, index=False)
    return csv


def _features(document_path: Path) -> list[str]:
    return [f["name"] for f in json.loads(document_path.read_text())["features"]]


@pytest.mark.parametrize("how", ["option", "id_column", "type id"])
def test_the_id_column_is_not_a_feature(with_ids: Path, tmp_path: Path, how: str) -> None:
    """--id-column, the types file's id_column or a column of type id: left out of the features, as in mine."""
    out = tmp_path / "m.json"
    args = ["classify", with_ids, "--target", "y", "--epsilon", "5", "--seed", "3", "--max-depth", "2", "--cv", "0",
            "--output", out]
    if how == "option":
        args += ["--id-column", "row_id"]
    else:
        declared = {"id_column": "row_id"} if how == "id_column" else {"columns": {"row_id": "id"}}
        args += ["--types", write(tmp_path / "t.json", json.dumps(declared))]
    code, stdout, stderr = run(args)
    assert code == 0, stderr
    assert _features(out) == ["b"]
    assert "row_id" not in stdout and "row_id" not in json.loads(out.read_text())["tree"]["text"]


def test_an_undeclared_row_id_is_a_feature_as_in_a_view_of_mine(with_ids: Path, tmp_path: Path) -> None:
    """No declaration and no name mine's rules of one view know: the column is data (the tree may split on it)."""
    out = tmp_path / "m.json"
    code, stdout, stderr = run(["classify", with_ids, "--target", "y", "--epsilon", "5", "--seed", "3",
                                "--max-depth", "2", "--cv", "0", "--output", out])
    assert code == 0, stderr
    assert _features(out) == ["row_id", "b"]


def test_a_first_column_named_ids_is_the_id_column(with_ids: Path, tmp_path: Path) -> None:
    """Siren's convention, which dprm mine follows in one view too."""
    siren = write(tmp_path / "siren.csv", with_ids.read_text().replace("row_id,", "ids,", 1))
    out = tmp_path / "m.json"
    code, _, stderr = run(["classify", siren, "--target", "y", "--epsilon", "5", "--seed", "3", "--max-depth", "2",
                           "--cv", "0", "--output", out])
    assert code == 0, stderr
    assert _features(out) == ["b"]
    code, stdout, stderr = run(["classify", siren, "--target", "ids", "--epsilon", "1", "--cv", "0"])
    assert code == 2 and stdout == ""
    assert_one_error_line(stderr, "no target column 'ids'", "is the id column")


@pytest.mark.parametrize("extra, types, fragments", [
    (["--id-column", "y"], None, ["--target 'y' is the id column (--id-column)"]),
    ([], {"id_column": "y"}, ["--target 'y' is the id column", "t.json"]),
    (["--id-column", "nope"], None, ["ids.csv", "has no id column 'nope'"]),
    (["--id-column", "b"], {"id_column": "row_id"}, ["id column 'b' given", "t.json", "'row_id'"]),
    (["--id-column", "row_id"], {"columns": {"row_id": {"bounds": [0, 1000]}}},
     ["t.json", "column 'row_id' is the id column", "declared numeric"]),
])
def test_a_bad_id_column_is_one_line_exit_2_nothing_written(with_ids: Path, tmp_path: Path, extra: list,
                                                            types: dict | None, fragments: list[str]) -> None:
    out = tmp_path / "m.json"
    args = ["classify", with_ids, "--target", "y", "--epsilon", "1", "--cv", "0", "--output", out, *extra]
    if types is not None:
        args += ["--types", write(tmp_path / "t.json", json.dumps(types))]
    code, stdout, stderr = run(args)
    assert code == 2 and stdout == ""
    assert_one_error_line(stderr, *fragments)
    assert not out.exists()


def test_without_output_the_status_line_says_the_ledger_is_not_written(learn: tuple[Path, Path],
                                                                       tmp_path: Path) -> None:
    """No --output: no JSON holds the ledger, and the status line does not claim one does."""
    csv, types = learn
    before = sorted(tmp_path.iterdir())
    code, stdout, stderr = run(["classify", csv, "--target", "y", "--epsilon", "1", "--max-depth", "2",
                                "--types", types, "--cv", "0"])
    assert code == 0, stderr
    first = stdout.splitlines()[0]
    assert first.startswith("private: ε = 1 spent")
    assert first.endswith("not written (pass --output FILE to keep it)") and "in the JSON" not in first
    assert sorted(tmp_path.iterdir()) == before


# -- cross-validation on the file's schema, exact class labels, types-file messages ----------------


def test_a_column_without_a_value_in_a_folds_training_rows_keeps_its_kind(tmp_path: Path) -> None:
    """A text column with one value: a fold's training rows may hold none of it. The folds reuse the
    whole file's schema (the column stays categorical), never read a kind off a fold's rows."""
    csv = write(tmp_path / "d.csv", "f1,f2,cls\n0,yes,p\n" + "1,,q\n0,,p\n" * 3 + "1,,q\n")
    out = tmp_path / "out.json"
    code, stdout, stderr = run(["classify", csv, "--target", "cls", "--epsilon", "1", "--cv", "2", "-o", out])
    assert code == 0, stderr
    assert "error" not in stderr
    assert "cross-validated accuracy (2 folds)" in stdout
    assert [f["kind"] for f in json.loads(out.read_text())["features"]] == ["categorical", "categorical"]


def test_an_error_in_the_cross_validation_prints_and_writes_nothing(learn: tuple[Path, Path], tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The cross-validation runs before the release is written or printed: its failure leaves nothing."""
    from dprm.classifier import DPDecisionTreeClassifier
    from dprm.errors import ParameterError

    def fail(self, X):
        raise ParameterError("column 'a': a fold could not be predicted")

    monkeypatch.setattr(DPDecisionTreeClassifier, "predict", fail)  # only the folds predict
    csv, types = learn
    out = tmp_path / "model.json"
    code, stdout, stderr = run(["classify", csv, "--target", "y", "--epsilon", "1", "--max-depth", "2",
                                "--types", types, "--cv", "3", "--output", out])
    assert code == 2
    assert_one_error_line(stderr, "a fold could not be predicted")
    assert stdout == "" and not out.exists()


@pytest.mark.parametrize("labels", [("1e20", "2e20"), ("1e300", "0"), ("9007199254740993", "9007199254740992"),
                                    ("100000000000000000001", "100000000000000000000")])
def test_huge_whole_number_classes_are_kept_exactly_as_written(tmp_path: Path, labels: tuple[str, str]) -> None:
    """Never through float and int64: 1e20 and 2e20 are two classes, 1e300 is not -2**63, 2**53 + 1 is not 2**53."""
    rows = "".join(f"{i % 2},{labels[i % 2]}\n" for i in range(20))
    csv = write(tmp_path / "d.csv", "f1,cls\n" + rows)
    out = tmp_path / "m.json"
    code, stdout, stderr = run(["classify", csv, "--target", "cls", "--epsilon", "5", "--cv", "2", "--seed", "1",
                                "--output", out])
    assert code == 0, stderr
    assert "Warning" not in stderr and "constant" not in stderr  # 2**53 + 1 and 2**53: one float, not the classes
    assert json.loads(out.read_text())["classes"] == sorted(labels)
    tree = stdout.split("variant dprm", 1)[1]
    assert "-9223372036854775808" not in tree
    assert any(f"class: {label}" in tree for label in labels)


def test_one_number_written_two_ways_is_one_class(tmp_path: Path) -> None:
    """1, 1.0 and 1e0 are one class (the data layer's canonical "1"), 2e20 and 2E+20 another (as first written)."""
    rows = "".join(f"{i % 2},{('1', '1.0', '1e0')[i % 3] if i % 2 == 0 else ('2e20', '2E+20')[i % 4 // 2]}\n"
                   for i in range(24))
    csv = write(tmp_path / "d.csv", "f1,cls\n" + rows)
    out = tmp_path / "m.json"
    code, _, stderr = run(["classify", csv, "--target", "cls", "--epsilon", "5", "--cv", "0", "--seed", "1",
                           "--output", out])
    assert code == 0, stderr
    assert json.loads(out.read_text())["classes"] == ["1", "2e20"]


def test_equal_declared_bounds_are_accepted_as_in_mine(tmp_path: Path) -> None:
    """docs/data.md: bounds are finite with low <= high; a column declared [2, 2] is a (constant) feature."""
    rows = "".join(f"{i % 2},2,{'pq'[i % 2]}\n" for i in range(20))
    csv = write(tmp_path / "d.csv", "f1,f2,y\n" + rows)
    types = write(tmp_path / "t.json", json.dumps({"columns": {"f1": {"bounds": [0, 1]}, "f2": {"bounds": [2, 2]},
                                                               "y": {"categories": ["p", "q"]}}}))
    out = tmp_path / "m.json"
    code, stdout, stderr = run(["classify", csv, "--target", "y", "--epsilon", "5", "--cv", "2", "--types", types,
                                "--output", out])
    assert code == 0, stderr
    features = json.loads(out.read_text())["features"]
    assert [(f["name"], f["low"], f["high"]) for f in features] == [("f1", 0, 1), ("f2", 2, 2)]
    assert "f2" not in stdout.split("variant dprm", 1)[1]  # no split on a single value


def test_a_target_declared_with_one_category_names_the_types_file_and_column(tmp_path: Path) -> None:
    csv = write(tmp_path / "d.csv", "a,y\n" + "".join(f"{i},p\n" for i in range(12)))
    types = write(tmp_path / "t.json", json.dumps({"columns": {"a": {"bounds": [0, 20]}, "y": {"categories": ["p"]}}}))
    out = tmp_path / "m.json"
    code, stdout, stderr = run(["classify", csv, "--target", "y", "--epsilon", "1", "--cv", "0", "--types", types,
                                "--output", out])
    assert code == 2 and stdout == ""
    assert_one_error_line(stderr, "t.json", "column 'y'", "at least two")
    assert not out.exists()
