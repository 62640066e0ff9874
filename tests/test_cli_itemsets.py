"""``dprm itemsets`` as a user runs it.

* without ``--epsilon`` the status line says NOT private (exact counts; with
  ``--sensitive`` also that t-closeness is not DP); the JSON is ``dprm.itemsets/1``
  with the planted frequent itemsets and their supports near the truth;
* with ``--epsilon`` and a types file declaring every column it is private and the
  ledger adds up to ε; with ``--seed`` or undeclared columns it says NOT private;
* every bad input is one ``error:`` line, exit 2, nothing written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprm.itemsets.document import COUNTS_REASON, FORMAT, T_CLOSENESS_REASON, read_itemsets
from dprm.itemsets.estimator import ROWS_TO_LEARN, TIE_THRESHOLD, passes_for
from dprm.itemsets.ground_truth import frequent_itemsets, itemset_rates
from test_cli import assert_one_error_line, run, write

CATEGORIES = {"age": ["young", "old"], "job": ["student", "worker", "retired"], "likes": ["yes", "no"]}


@pytest.fixture
def stream(tmp_path: Path) -> tuple[Path, Path, pd.DataFrame]:
    """age -> job -> likes, 6,000 rows, and a types file declaring every column."""
    return write_table(tmp_path, "stream.csv")


def write_table(tmp_path: Path, name: str) -> tuple[Path, Path, pd.DataFrame]:
    """``name`` in ``tmp_path``: age -> job -> likes, 6,000 rows; and a types file declaring every column."""
    rng = np.random.default_rng(0)
    n = 6000
    age = rng.choice(CATEGORIES["age"], p=[0.6, 0.4], size=n)
    job = np.where(age == "young", rng.choice(["student", "worker"], p=[0.7, 0.3], size=n),
                   rng.choice(["worker", "retired"], p=[0.5, 0.5], size=n))
    likes = np.where(job == "student", "yes", rng.choice(["yes", "no"], size=n))
    frame = pd.DataFrame({"age": age, "job": job, "likes": likes})
    csv = tmp_path / name
    frame.to_csv(csv, index=False)
    types = write(tmp_path / "types.json", json.dumps({"columns": {c: {"categories": v} for c, v in CATEGORIES.items()}}))
    return csv, types, frame


def test_non_private_run_finds_the_frequent_itemsets(stream, tmp_path):
    csv, _, frame = stream
    out = tmp_path / "itemsets.json"
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.2", "--seed", "1", "--output", out])
    assert code == 0, stderr
    assert stdout.splitlines()[0] == f"NOT private: {COUNTS_REASON}"
    document = json.loads(out.read_text())
    assert document["format"] == FORMAT and document["privacy"]["private"] is False
    assert document["parameters"]["min_support"] == 0.2 and document["parameters"]["chains"] == 3
    assert "reference_rows" not in document["parameters"]  # the estimate's own samples (only --top-k sets them)
    found = read_itemsets(document)
    truth = frequent_itemsets(frame, 0.2)
    rates = itemset_rates(found, truth)
    assert rates.tpr >= 0.9 and rates.fpr <= 0.1
    for s in found:
        key = frozenset(s.items.items())
        if key in truth:
            assert s.support == pytest.approx(truth[key], abs=0.03)


def test_shuffled_passes_learn_a_longer_stream(stream, tmp_path):
    csv, _, frame = stream
    out = tmp_path / "passes.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.2", "--passes", "3", "--seed", "4", "--output", out])
    assert code == 0, stderr
    document = json.loads(out.read_text())
    assert document["parameters"]["passes"] == 3 and document["parameters"]["rows_learned"] == 3 * len(frame)
    rates = itemset_rates(read_itemsets(document), frequent_itemsets(frame, 0.2))
    assert rates.tpr >= 0.9 and rates.fpr <= 0.1


def test_by_default_a_small_table_is_grown_in_batch(stream, tmp_path):
    csv, _, frame = stream
    out = tmp_path / "batch.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.2", "--seed", "2", "--output", out])
    assert code == 0, stderr
    document = json.loads(out.read_text())
    parameters = document["parameters"]
    assert parameters["learner"] == "batch" and parameters["passes"] == 1 and parameters["rows_learned"] == len(frame)
    rates = itemset_rates(read_itemsets(document), frequent_itemsets(frame, 0.2))
    assert rates.tpr >= 0.9 and rates.fpr <= 0.1
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.2", "--learner", "magic"])
    assert code != 0 and "--learner" in stderr


def test_the_hoeffding_learner_learns_a_small_table_in_enough_shuffled_passes(stream, tmp_path):
    csv, _, frame = stream
    out = tmp_path / "auto.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.2", "--seed", "2", "--learner", "hoeffding",
                           "--output", out])
    assert code == 0, stderr
    parameters = json.loads(out.read_text())["parameters"]
    assert parameters["learner"] == "hoeffding"
    assert parameters["passes_rule"] == "auto" and parameters["passes"] == passes_for(len(frame))
    assert parameters["rows_learned"] == parameters["passes"] * len(frame) >= ROWS_TO_LEARN
    assert parameters["tie_threshold"] == TIE_THRESHOLD
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.2", "--passes", "1", "--tie-threshold", "0.3",
                           "--output", out])
    assert code == 0, stderr
    parameters = json.loads(out.read_text())["parameters"]
    assert parameters["passes"] == 1 and parameters["rows_learned"] == len(frame)
    assert parameters["tie_threshold"] == 0.3


@pytest.mark.parametrize("name", ["mushroom", "vote", "tic-tac-toe"])
def test_defaults_find_the_frequent_itemsets_of_uci_tables(shared_data, tmp_path, name):
    """The acceptance point: ``dprm itemsets FILE --min-support 0.3`` with nothing else, against FP-growth."""
    csv = shared_data / "uci" / f"{name}.csv"
    out = tmp_path / f"{name}.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.3", "--seed", "0", "--top", "0", "--output", out])
    assert code == 0, stderr
    frame = pd.read_csv(csv, dtype=str, keep_default_na=False)
    rates = itemset_rates(read_itemsets(json.loads(out.read_text())), frequent_itemsets(frame, 0.3))
    assert rates.tpr >= 0.9 and rates.fpr <= 0.1, rates


def test_t_closeness_run_says_not_dp_and_checks_every_node(stream, tmp_path):
    csv, _, _ = stream
    out = tmp_path / "t.json"
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.1", "--sensitive", "age", "--delta", "0",
                                "--seed", "2", "--output", out])
    assert code == 0, stderr
    assert T_CLOSENESS_REASON in stdout.splitlines()[0]
    assert "every node" in stdout and "NOT every" not in stdout
    document = json.loads(out.read_text())
    assert T_CLOSENESS_REASON in document["privacy"]["reasons"]
    assert document["parameters"]["t_closeness_check"]["ok"] is True


def test_private_run_with_declared_domains(stream, tmp_path):
    csv, types, _ = stream
    out = tmp_path / "dp.json"
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.2", "--epsilon", "2", "--types", types,
                                "--chains", "2", "--output", out])
    assert code == 0, stderr
    assert stdout.splitlines()[0].startswith("private: ε = 2 spent")
    document = json.loads(out.read_text())
    privacy = document["privacy"]
    assert privacy["private"] is True and privacy["guarantee"].startswith("pure-dp")
    assert sum(e["epsilon"] for e in privacy["ledger"]) == pytest.approx(2.0)
    assert "rows_learned" not in document["parameters"]  # the number of rows is private
    # no number 6000 anywhere (a noisy support such as 0.42056000000000004 may hold the digits)
    assert not re.search(r"(?<![\d.])6000(\.0*)?(?![\d.eE])", out.read_text())
    assert any(s.items == {"age": "young"} for s in read_itemsets(document))
    assert document["parameters"]["estimate"] == "dp-parents" and document["parameters"]["chains"] == 2


@pytest.mark.parametrize("structure", ["parents", "dp-trees"])
def test_private_run_defaults_to_one_chain_and_takes_either_structure(stream, tmp_path, structure):
    csv, types, _ = stream
    out = tmp_path / "dp1.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.2", "--epsilon", "3", "--types", types,
                           "--structure", structure, "--output", out])
    assert code == 0, stderr
    document = json.loads(out.read_text())
    assert document["parameters"]["chains"] == 1 and document["parameters"]["structure"] == structure
    steps = [e["step"] for e in document["privacy"]["ledger"]]
    assert all(step.startswith("chain 1,") for step in steps)
    assert sum(e["epsilon"] for e in document["privacy"]["ledger"]) == pytest.approx(3.0)


def test_a_private_run_without_a_method_runs_auto_unless_it_asks_for_the_chain(stream, tmp_path):
    csv, types, _ = stream
    base = ["itemsets", csv, "--min-support", "0.2", "--epsilon", "2", "--types", types]
    code, _, stderr = run(base + ["--output", tmp_path / "auto.json"])
    assert code == 0, stderr
    parameters = json.loads((tmp_path / "auto.json").read_text())["parameters"]
    assert parameters["private_method"] == "auto" and parameters["auto_choice"] in ("basis", "chain")
    # --top-k (and --sensitive, --chains, --structure) needs the chain's estimate: no refusal, the chain runs
    code, _, stderr = run(base + ["--top-k", "3", "--output", tmp_path / "chain.json"])
    assert code == 0, stderr
    document = json.loads((tmp_path / "chain.json").read_text())
    assert document["parameters"]["private_method"] == "chain"
    assert all(e["step"].startswith("chain 1,") for e in document["privacy"]["ledger"])


def test_private_method_frequent_items_releases_the_histograms_first_and_shows_the_noise(stream, tmp_path):
    csv, types, _ = stream
    out = tmp_path / "fi.json"
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.2", "--epsilon", "2", "--types", types,
                                "--private-method", "frequent-items", "--output", out])
    assert code == 0, stderr
    assert "noise (frequent-items; discrete Laplace scale): one-way histograms ±" in stdout
    assert "tables per cell ±" in stdout
    document = json.loads(out.read_text())
    parameters = document["parameters"]
    assert parameters["private_method"] == "frequent-items" and parameters["noise_scale"]["items"] > 0
    steps = [e["step"] for e in document["privacy"]["ledger"]]
    assert steps[0].startswith("items: ") and any(step.startswith("chain 1,") for step in steps)
    assert sum(e["epsilon"] for e in document["privacy"]["ledger"]) == pytest.approx(2.0)
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.2", "--epsilon", "2", "--types", types,
                           "--private-method", "frequent-items", "--structure", "dp-trees"])
    assert code == 2 and "--private-method must be one of chain, frequent-items" in stderr


@pytest.mark.parametrize("extra, reason", [(["--seed", "3"], "seeded noise"),
                                           ([], "read off the data")])
def test_private_run_says_why_not_private(stream, tmp_path, extra, reason):
    csv, types, _ = stream
    args = ["itemsets", csv, "--min-support", "0.3", "--epsilon", "1"] + (["--types", types] if extra else []) + extra
    code, stdout, stderr = run(args)
    assert code == 0, stderr
    assert stdout.startswith("NOT private:") and reason in stdout.splitlines()[0]


@pytest.mark.parametrize("args, fragments", [
    (["--min-support", "0"], ["--min-support"]),
    (["--min-support", "1.5"], ["--min-support"]),
    (["--min-support", "0.3", "--sensitive", "salary"], ["no column 'salary'"]),
    (["--min-support", "0.3", "--sensitive", "age", "--delta", "-0.1"], ["--delta"]),
    (["--min-support", "0.3", "--epsilon", "0"], ["--epsilon"]),
    (["--min-support", "0.3", "--epsilon", "-2"], ["--epsilon"]),
    (["--min-support", "0.3", "--epsilon", "1e9"], ["--epsilon must be between 0.0001 and 10000", "not 1e+09"]),
    (["--min-support", "0.3", "--chains", "0"], ["--chains"]),
    (["--min-support", "0.3", "--bins", "age=3,1"], ["--bins"]),
    (["--min-support", "0.3", "--passes", "0"], ["--passes"]),
    (["--min-support", "0.3", "--passes", "many"], ["--passes"]),
    (["--min-support", "0.3", "--epsilon", "1", "--structure", "forest"], ["--structure"]),
    (["--min-support", "0.3", "--tie-threshold", "-1"], ["--tie-threshold"]),
    (["--min-support", "0.3", "--passes", "3", "--epsilon", "1"], ["--passes"]),
    # an option its mode does not use is refused, not ignored or recorded as used (the fuzz round's case 10)
    (["--min-support", "0.3", "--private-method", "mst"], ["--private-method", "needs --epsilon"]),
    (["--min-support", "0.3", "--structure", "dp-trees"], ["--structure", "needs --epsilon"]),
    (["--min-support", "0.3", "--max-depth", "4"], ["--max-depth", "needs --epsilon"]),
    (["--min-support", "0.3", "--epsilon", "1", "--learner", "hoeffding"], ["--learner", "online estimate"]),
    (["--min-support", "0.3", "--epsilon", "1", "--grace-period", "10"], ["--grace-period", "online estimate"]),
    (["--min-support", "0.3", "--epsilon", "1", "--split-confidence", "0.01"], ["--split-confidence"]),
    (["--min-support", "0.3", "--epsilon", "1", "--tie-threshold", "0.2"], ["--tie-threshold", "online estimate"]),
    (["--min-support", "0.3", "--epsilon", "1", "--max-depth", "3"], ["--max-depth", "--structure dp-trees"]),
    (["--min-support", "0.3", "--epsilon", "1", "--private-method", "basis", "--chains", "2"],
     ["--chains", "basis builds no chain"]),
    (["--min-support", "0.3", "--epsilon", "1", "--private-method", "auto", "--chains", "2"],
     ["--chains", "auto builds one only when"]),
    (["--min-support", "0.3", "--learner", "batch", "--passes", "3"], ["--passes", "--learner batch", "one pass"]),
    (["--min-support", "0.3", "--learner", "batch", "--grace-period", "50"], ["--grace-period", "--learner batch"]),
    (["--min-support", "0.3", "--distance", "variational"], ["--distance", "--sensitive"]),
    (["--min-support", "0.3", "--step", "5"], ["--step", "--sensitive"]),
    # a step that changes no float ran for ever (the fuzz round of dprm.itemsets; its least step is named)
    (["--min-support", "0.3", "--sensitive", "age", "--delta", "0.01", "--step", "1e-300"],
     ["--step must be in [0.0047, 100] for --delta 0.01", "not 1e-300"]),
])
def test_bad_options_are_one_line_and_write_nothing(stream, tmp_path, args, fragments):
    csv, _, _ = stream
    out = tmp_path / "never.json"
    code, _, stderr = run(["itemsets", csv, *args, "--output", out])
    assert code == 2
    assert_one_error_line(stderr, *fragments)
    assert not out.exists()


def test_bad_data_is_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "never.json"
    numeric = write(tmp_path / "numeric.csv", "a,n\nx,1.5\ny,2.5\nx,3.25\n")
    code, _, stderr = run(["itemsets", numeric, "--min-support", "0.3", "--output", out])
    assert code == 2 and "'n'" in assert_one_error_line(stderr)
    code, _, stderr = run(["itemsets", numeric, "--min-support", "0.3", "--bins", "n=0,2,4", "--output", out])
    assert code == 0, stderr
    out.unlink()
    empty = write(tmp_path / "empty.csv", "a,b\n")
    for extra in ([], ["--epsilon", "1"]):
        code, _, stderr = run(["itemsets", empty, "--min-support", "0.3", *extra, "--output", out])
        assert code == 2
        assert_one_error_line(stderr, "no data rows")  # undeclared domains: nothing to read them off
    missing = tmp_path / "absent.csv"
    code, _, stderr = run(["itemsets", missing, "--min-support", "0.3", "--output", out])
    assert code == 2 and "no such file" in assert_one_error_line(stderr)
    outside = write(tmp_path / "outside.csv", "age,job,likes\nyoung,student,yes\nold,pilot,no\n")
    types = write(tmp_path / "types.json", json.dumps({"columns": {c: {"categories": v} for c, v in CATEGORIES.items()}}))
    code, _, stderr = run(["itemsets", outside, "--min-support", "0.3", "--epsilon", "1", "--types", types,
                           "--output", out])
    assert code == 2 and "'job'" in assert_one_error_line(stderr)
    assert not out.exists()


@pytest.mark.parametrize("header, fragments", [
    ("a,a", ["column name 'a' occurs more than once (columns 1 and 2)"]),
    ("a,a ", ["column name 'a' occurs more than once (columns 1 and 2)"]),  # the same name once stripped
    ("a,", ["column 2 has no name"]),
    # accepted as 'a' (pandas' reading of the header drops the NUL), as dprm mine accepted it
    ("a\x00,b", ["column 1's name 'a\\x00' holds a NUL character (\\0)"]),
])
@pytest.mark.parametrize("extra", [[], ["--epsilon", "1"]])
def test_header_names_are_checked_as_written(tmp_path, header, fragments, extra):
    csv = write(tmp_path / "d.csv", header + "\nx,y\nx,z\nw,y\n")
    out = tmp_path / "never.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.3", *extra, "--output", out])
    assert code == 2, stderr
    assert_one_error_line(stderr, "d.csv", *fragments)
    assert not out.exists()


def test_types_file_that_ignores_every_column_is_one_line(tmp_path):
    csv = write(tmp_path / "d.csv", "a,b\nx,y\nx,z\n")
    types = write(tmp_path / "t.json", json.dumps({"columns": {"a": "ignore", "b": "ignore"}}))
    out = tmp_path / "never.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.3", "--types", types, "--output", out])
    assert code == 2
    assert_one_error_line(stderr, "t.json", "every column of", "is ignored")
    assert not out.exists()


def test_files_are_read_by_the_data_layers_rules(tmp_path):
    import gzip

    import pyarrow as pa

    text = "a;b\n" + "x;u\nx;u\ny;v\n" * 10
    semicolons = write(tmp_path / "semi.csv", text)
    code, stdout, stderr = run(["itemsets", semicolons, "--min-support", "0.5", "--seed", "1"])
    assert code == 0, stderr
    assert "a=x, b=u" in stdout  # the delimiter is read off the header, as by dprm mine
    for suffix, compression in ((".gz", "gzip"), (".bz2", "bz2"), (".zst", "zstd")):
        path = tmp_path / f"semi.csv{suffix}"
        with pa.CompressedOutputStream(str(path), compression) as stream:
            stream.write(text.encode())
        code, stdout, stderr = run(["itemsets", path, "--min-support", "0.5", "--seed", "1"])
        assert code == 0, (suffix, stderr)
        assert "a=x, b=u" in stdout
    truncated = tmp_path / "cut.csv.gz"
    truncated.write_bytes(gzip.compress(text.encode() * 50)[:60])
    garbage = write(tmp_path / "bad.csv.gz", b"garbage")
    parquet = write(tmp_path / "t.parquet", b"PAR1")
    for path, fragments in ((truncated, ["cut.csv.gz", "cannot be read"]), (garbage, ["bad.csv.gz", "cannot be read"]),
                            (parquet, ["t.parquet", "is a Parquet file"])):
        out = tmp_path / "never.json"
        code, _, stderr = run(["itemsets", path, "--min-support", "0.5", "--output", out])
        assert code == 2, (path, stderr)  # a truncated .gz ended as "interrupted" (exit 130)
        assert_one_error_line(stderr, *fragments)
        assert not out.exists()


# -- missing values: the types file's na_values and out_of_bounds, --na-values, --out-of-bounds ----------


def vote_types(vote: Path, tmp_path: Path, **extra) -> Path:
    """The audit's declaration of vote.csv: every vote n / y, the class its two parties (and ``extra`` keys)."""
    header = vote.read_text().splitlines()[0].split(",")
    columns = {c: {"type": "categorical", "categories": ["n", "y"]} for c in header}
    columns["class"] = {"type": "categorical", "categories": ["democrat", "republican"]}
    return write(tmp_path / "vote_types.json", json.dumps({**extra, "columns": columns}))


@pytest.mark.parametrize("extra", [[], ["--epsilon", "1"]])
def test_the_types_files_na_values_make_vote_s_question_marks_missing(shared_data, tmp_path, extra):
    """The audit's reproduction: '?' declared missing is no item, not an unknown category (exit 2 before)."""
    csv = shared_data / "uci" / "vote.csv"
    out = tmp_path / "vote.json"
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.3", *extra, "--types",
                                vote_types(csv, tmp_path, na_values=["?"]), "--top", "0", "--output", out,
                                *([] if extra else ["--seed", "3"])])   # the exact estimate's chains: seeded
    assert code == 0, stderr
    assert stdout.splitlines()[0].startswith("private: ε = 1 spent" if extra else "NOT private")
    document = json.loads(out.read_text())
    found = read_itemsets(document)
    assert found and all(value in ("n", "y", "democrat", "republican") for s in found for value in s.items.values())
    parameters = document["parameters"]
    assert parameters["na_values"] == ["?"] and parameters["out_of_bounds"] == "error"
    assert len(parameters["missing"]) == 17  # no column declared complete: every one may be missing
    if extra:
        assert sum(e["epsilon"] for e in document["privacy"]["ledger"]) == pytest.approx(1.0)
    else:  # the exact estimate: its itemsets are those of the rows, a '?' no item
        truth = frequent_itemsets(pd.read_csv(csv, dtype=str, keep_default_na=False).replace("?", np.nan), 0.3)
        rates = itemset_rates(found, truth)
        assert rates.tpr >= 0.9 and rates.fpr <= 0.1, rates   # the defaults' bar (issue 30), as on mushroom


def test_na_values_given_as_an_option_add_to_the_types_file_s(tmp_path):
    """--na-values and the types file's na_values read the same cells as missing: the same seeded itemsets."""
    rng = np.random.default_rng(5)
    n = 3000
    a = rng.choice(["x", "y"], p=[0.7, 0.3], size=n).astype(object)
    b = np.where(a == "x", "u", "v").astype(object)
    a[rng.random(n) < 0.2] = "?"
    b[rng.random(n) < 0.1] = "NA"
    csv = write(tmp_path / "d.csv", pd.DataFrame({"a": a, "b": b}).to_csv(index=False))
    columns = {"a": {"categories": ["x", "y"]}, "b": {"categories": ["u", "v"]}}
    runs = []
    for markers, options in ((["?", "NA"], []), (["?"], ["--na-values", "NA"]), ([], ["--na-values", "?,NA"]),
                             ([], ["--na-values", "?", "--na-values", "NA"])):
        types = write(tmp_path / "t.json", json.dumps({"na_values": markers, "columns": columns}))
        out = tmp_path / "o.json"
        code, _, stderr = run(["itemsets", csv, "--min-support", "0.2", "--types", types, *options, "--seed", "1",
                               "--output", out])
        assert code == 0, stderr
        document = json.loads(out.read_text())
        runs.append((document["itemsets"], sorted(document["parameters"]["na_values"])))
    assert all(run_ == runs[0] for run_ in runs[1:]) and runs[0][1] == ["?", "NA"]
    supports = {tuple(sorted(entry["items"].items())): entry["support"] for entry in runs[0][0]}
    truth = ((a == "x") & (b == "u")).mean()  # a row with a or b missing holds no such pair
    assert supports[(("a", "x"), ("b", "u"))] == pytest.approx(truth, abs=0.01)
    assert supports[(("a", "x"),)] == pytest.approx((a == "x").mean(), abs=0.01)


def test_without_declared_missing_values_an_empty_cell_is_missing_only_in_an_undeclared_column(tmp_path):
    """Undeclared: its domain is read off the data, missing value included. Declared: its public domain has none."""
    csv = write(tmp_path / "d.csv", "a,b\n" + "x,u\ny,\n" * 20)
    out = tmp_path / "o.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.3", "--seed", "1", "--output", out])
    assert code == 0, stderr
    assert {tuple(sorted(s.items.items())) for s in read_itemsets(json.loads(out.read_text()))} == {
        (("a", "x"),), (("a", "y"),), (("b", "u"),), (("a", "x"), ("b", "u"))}
    out.unlink()
    types = write(tmp_path / "t.json", json.dumps({"columns": {"b": {"categories": ["u", "v"]}}}))
    for extra in ([], ["--epsilon", "1"]):
        code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.3", "--types", types, *extra,
                                    "--output", out])
        assert code == 2 and stdout == ""
        assert_one_error_line(stderr, "d.csv", "column 'b', row 2: missing value", "na_values")
        assert not out.exists()


def test_a_column_declared_complete_keeps_no_missing_value(tmp_path):
    csv = write(tmp_path / "d.csv", "a,b\n" + "x,u\ny,?\n" * 20 + "?,u\n")
    columns = {"a": {"categories": ["x", "y"], "complete": True}, "b": {"categories": ["u", "v"]}}
    types = write(tmp_path / "t.json", json.dumps({"na_values": ["?"], "columns": columns}))
    out = tmp_path / "o.json"
    for extra in ([], ["--epsilon", "1"]):
        code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.3", "--types", types, *extra,
                                    "--output", out])
        assert code == 2 and stdout == ""
        assert_one_error_line(stderr, "d.csv", "column 'a', row 41", "t.json declares the column complete")
        assert not out.exists()
    complete = write(tmp_path / "c.csv", "a,b\n" + "x,u\ny,?\n" * 20)
    code, _, stderr = run(["itemsets", complete, "--min-support", "0.3", "--types", types, "--seed", "1",
                           "--output", out])
    assert code == 0, stderr
    assert json.loads(out.read_text())["parameters"]["missing"] == ["b"]


@pytest.mark.parametrize("how", ["types file", "option"])
def test_out_of_bounds_clamp_makes_an_undeclared_category_missing_and_clamps_binned_numbers(tmp_path, how):
    csv = write(tmp_path / "d.csv", "a,n\n" + "x,1\ny,7\n" * 20 + "z,12\nx,-3\n")
    declared = {"columns": {"a": {"categories": ["x", "y"]}}}
    options = ["--bins", "n=0,5,10"]
    if how == "types file":
        declared["out_of_bounds"] = "clamp"
    else:
        options += ["--out-of-bounds", "clamp"]
    types = write(tmp_path / "t.json", json.dumps(declared))
    out = tmp_path / "o.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.3", "--types", types, *options, "--seed", "1",
                           "--output", out])
    assert code == 0, stderr
    assert stderr.splitlines() == [
        f"note: {csv}: column 'a': values that are not declared categories read as missing",
        f"note: {csv}: column 'n': values outside the bin edges [0, 10] clamped into them"]
    document = json.loads(out.read_text())
    assert document["parameters"]["out_of_bounds"] == "clamp" and document["parameters"]["missing"] == ["a", "n"]
    supports = {tuple(sorted(entry["items"].items())): entry["support"] for entry in document["itemsets"]}
    assert supports[(("a", "x"),)] == pytest.approx(21 / 42, abs=0.01)  # z is missing, not an item
    assert supports[(("n", "[5, 10]"),)] == pytest.approx(21 / 42, abs=0.01)  # 12 clamped to 10


def test_clamping_refuses_to_make_a_complete_column_missing_and_error_wins_over_the_file(tmp_path):
    csv = write(tmp_path / "d.csv", "a,b\n" + "x,u\ny,v\n" * 20 + "z,u\n")
    out = tmp_path / "o.json"
    complete = write(tmp_path / "c.json", json.dumps({"out_of_bounds": "clamp", "columns": {
        "a": {"categories": ["x", "y"], "complete": True}}}))
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.3", "--types", complete, "--output", out])
    assert code == 2 and stdout == ""
    assert_one_error_line(stderr, "column 'a', row 41: value 'z' is not one of the declared categories",
                          "clamping would make it missing, but the types file declares the column complete")
    clamp = write(tmp_path / "t.json", json.dumps({"out_of_bounds": "clamp",
                                                   "columns": {"a": {"categories": ["x", "y"]}}}))
    for extra in ([], ["--epsilon", "1"]):
        code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.3", "--types", clamp, *extra,
                                    "--out-of-bounds", "error", "--output", out])
        assert code == 2 and stdout == ""
        assert_one_error_line(stderr, "column 'a', row 41: value 'z' is not one of the categories")
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.3", "--out-of-bounds", "lenient",
                                "--output", out])
    assert code == 2 and stdout == ""
    assert_one_error_line(stderr, "--out-of-bounds must be 'error' or 'clamp', not 'lenient'")
    assert not out.exists()


@pytest.mark.parametrize("rows, fragment", [
    ("x,y,z\nx,y\nx,y,w\n", "row 2 has 2 fields but the header has 3"),  # was read as a missing value
    ("x,y,z\nx,y,z,w\n", "row 2 has 4 fields but the header has 3"),
])
@pytest.mark.parametrize("extra", [[], ["--epsilon", "1"]])
def test_a_row_with_the_wrong_number_of_fields_is_named(tmp_path, rows, fragment, extra):
    csv = write(tmp_path / "d.csv", "a,b,c\n" + rows)
    out = tmp_path / "never.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.3", *extra, "--output", out])
    assert code == 2, stderr
    assert_one_error_line(stderr, "d.csv", fragment)
    assert not out.exists()


@pytest.mark.parametrize("rows, fragment", [
    # the quote took the two lines after it into the last cell of row 2: 2 rows, not 4, silently
    ('x,y,z\nx,y,"z\nx,y,w\nw,y,z\n', "row 2: a quoted cell opens and never closes (a '\"' is missing), so it would "
                                       "take in the rest of the file"),
    ('x,y,z\nx,y,"z', "row 2: a quoted cell opens and never closes (a '\"' is missing before the end of the file)"),
])
@pytest.mark.parametrize("extra", [[], ["--epsilon", "1"], ["--na-values", "?"]])
def test_a_quote_that_never_closes_is_named_as_dprm_mine_names_it(tmp_path, rows, fragment, extra):
    """The itemsets' reader merged the rest of the file into one cell, where the data reader (dprm mine,
    inspect, classify) names the row: the same line now, from the same functions (dprm.data.reading)."""
    from dprm.data.reading import read_table
    from dprm.errors import DataError

    csv = write(tmp_path / "d.csv", "a,b,c\n" + rows)
    with pytest.raises(DataError) as mine:
        read_table(csv)
    out = tmp_path / "never.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.3", *extra, "--output", out])
    assert code == 2, stderr
    assert assert_one_error_line(stderr, "d.csv", fragment) == f"error: {mine.value}"
    assert not out.exists()


def test_a_quote_that_never_closes_in_a_later_block_names_its_row(tmp_path):
    """Rows are counted across pyarrow's 4 MiB blocks (and the chunks given before the error are the file's
    rows before it); a file whose quotes close is read as before."""
    from dprm.errors import DataError
    from dprm.itemsets.text_table import read_text_chunks

    good = "".join(f"{i},{i % 2},v\n" for i in range(1, 450_001))
    csv = write(tmp_path / "d.csv", "id,a,c\n" + good + '450001,1,"oops\n450002,0,v\n')
    assert Path(csv).stat().st_size > 4 << 20
    with pytest.raises(DataError, match=r"^d\.csv: row 450001: a quoted cell opens and never closes") as error:
        list(read_text_chunks(Path(csv), "d.csv", 100_000))
    assert error.value.row == 450001 and error.value.column == "c" and error.value.code == "bad_csv"
    closed = write(tmp_path / "e.csv", "id,a,c\n" + good + '450001,1,"two\nlines"\n450002,0,v\n')
    rows = pd.concat(list(read_text_chunks(Path(closed), "e.csv", 100_000)), ignore_index=True)
    assert len(rows) == 450_002 and rows["c"].iloc[-2] == "two\nlines"


def test_cells_are_read_as_written_across_chunks(tmp_path):
    """Quoted line breaks, ``1.0`` kept as text, the empty cell missing, chunks of any size."""
    from dprm.itemsets.text_table import read_text_chunks

    csv = write(tmp_path / "d.csv", 'a,b\n1.0,"p\nq"\n' + "".join(f"{i % 3}.0,{'' if i == 5 else 'v'}\n"
                                                                     for i in range(9)))
    chunks = list(read_text_chunks(Path(csv), "d.csv", 4))
    assert [len(c) for c in chunks] == [4, 4, 2]
    frame = pd.concat(chunks, ignore_index=True)
    assert frame["a"].tolist()[:3] == ["1.0", "0.0", "1.0"] and frame["b"][0] == "p\nq"
    assert frame["b"].isna().tolist() == [i == 6 for i in range(10)]


def test_quoted_line_breaks_read_in_a_file_of_several_blocks_and_compressed_names_in_capitals(tmp_path):
    """A quoted line break at the end of one of pyarrow's 4 MiB blocks made a row of one field ('row 143515 has
    1 fields but the header has 3'); a file named D.CSV.GZ was read as its compressed bytes."""
    import gzip

    from dprm.itemsets.text_table import read_text_frame

    csv = write(tmp_path / "d.csv", "id,a,c\n" + "".join(f'{i},{i % 2},"note {i % 7}\nsecond line"\n'
                                                         for i in range(1, 200_001)))
    assert Path(csv).stat().st_size > 4 << 20
    frame = read_text_frame(Path(csv), "d.csv")
    assert len(frame) == 200_000 and frame["c"][5] == "note 6\nsecond line"
    upper = tmp_path / "D.CSV.GZ"
    upper.write_bytes(gzip.compress(b"a,b\nx,1\ny,0\n"))
    assert read_text_frame(upper, "D.CSV.GZ")["a"].tolist() == ["x", "y"]


@pytest.mark.parametrize("extra", [[], ["--epsilon", "1"]])
def test_a_column_declared_boolean_is_read_as_boolean(tmp_path, extra):
    """Its spellings (Yes / no / 1 / 0) are the categories false / true, declared, so the
    private release needs no domain read off the data; another value is an error.

    1,000 rows: at ε = 1 on 40 rows the unseeded private run kept no ``flag`` itemset in
    about one run of twenty (measured), so the table is large enough for the noise."""
    csv = write(tmp_path / "d.csv", "a,flag\n" + "".join(f"{'xy'[i % 2]},{['Yes', 'no'][i % 2]}\n"
                                                         for i in range(1000)))
    types = write(tmp_path / "t.json", json.dumps({"columns": {"a": {"categories": ["x", "y"]}, "flag": "boolean"}}))
    out = tmp_path / "o.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.3", "--types", types, *extra, "--output", out])
    assert code == 0, stderr
    document = json.loads(out.read_text())
    values = {itemset["items"]["flag"] for itemset in document["itemsets"] if "flag" in itemset["items"]}
    assert values and values <= {"false", "true"}
    if extra:
        assert document["privacy"]["private"] is True, document["privacy"]
    bad = write(tmp_path / "bad.csv", "a,flag\nx,Yes\ny,maybe\n")
    code, _, stderr = run(["itemsets", bad, "--min-support", "0.3", "--types", types, *extra, "--output",
                           tmp_path / "never.json"])
    assert code == 2
    assert_one_error_line(stderr, "bad.csv: column 'flag', row 2: 'maybe' is not Boolean")
    assert not (tmp_path / "never.json").exists()


def test_integer_coded_columns_are_offered_as_categories(tmp_path):
    rng = np.random.default_rng(3)
    q2 = rng.choice([1, 2, 3], p=[0.6, 0.3, 0.1], size=400)
    frame = pd.DataFrame({"q1": rng.integers(1, 11, 400), "q2": q2,
                          "g": np.where(q2 == 1, "m", rng.choice(["m", "f"], 400))})
    csv = tmp_path / "codes.csv"
    frame.to_csv(csv, index=False)
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.2"])
    assert code != 0 and "'q1', 'q2'" in stderr and "--categorical-integers" in stderr
    out = tmp_path / "codes.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.2", "--categorical-integers", "--seed", "0",
                           "--output", out])
    assert code == 0, stderr
    found = read_itemsets(json.loads(out.read_text()))
    rates = itemset_rates(found, frequent_itemsets(frame.astype(str), 0.2))
    assert rates.tpr == 1.0 and rates.fpr <= 0.1 and {"q2": "1", "g": "m"} in [s.items for s in found]


def test_columns_the_types_file_declares_categorical_are_read_as_categories_whatever_numbers_they_hold(tmp_path):
    rng = np.random.default_rng(4)
    q1 = rng.choice([1, 2, 10], p=[0.6, 0.3, 0.1], size=500)
    frame = pd.DataFrame({"q1": q1, "q2": np.where(q1 == 1, 1.5, rng.choice([1.5, 2.5], 500)),  # not whole numbers
                          "g": rng.choice(["m", "f"], 500), "n": rng.integers(1, 4, 500)})
    csv = tmp_path / "codes.csv"
    frame.to_csv(csv, index=False)
    types = write(tmp_path / "types.json", json.dumps({"columns": {c: {"type": "categorical"} for c in frame}}))
    out = tmp_path / "codes.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.2", "--types", types, "--seed", "0", "--output", out])
    assert code == 0, stderr
    found = read_itemsets(json.loads(out.read_text()))
    truth = frequent_itemsets(pd.read_csv(csv, dtype=str), 0.2)  # the values as written: 1.5, 10
    rates = itemset_rates(found, truth)
    assert rates.tpr >= 0.9 and rates.fpr <= 0.1 and {"q1": "1", "q2": "1.5"} in [s.items for s in found]
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.2", "--types", types, "--epsilon", "1",
                                "--output", tmp_path / "dp.json"])  # categories read off the data: not private
    assert code == 0, stderr
    assert json.loads((tmp_path / "dp.json").read_text())["privacy"]["private"] is False
    assert "NOT private" in stdout + stderr
    partly = write(tmp_path / "partly.json", json.dumps({"columns": {"q1": {"type": "categorical"}},
                                                         "na_values": ["?"]}))
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.2", "--types", partly, "--output",
                           tmp_path / "never.json"])  # undeclared number columns are refused, naming the file
    assert code == 2 and not (tmp_path / "never.json").exists()
    assert_one_error_line(stderr, "codes.csv: column 'q2' is numeric")
    assert "'n' is numeric with at most 20 distinct whole numbers" in stderr and "'q1'" not in stderr


def test_top_k_reports_the_most_frequent_itemsets_of_a_dense_table(tmp_path):
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({f"c{j}": np.where(rng.random(600) < 0.93, "a", rng.choice(["b", "c"], 600))
                          for j in range(14)})  # 2^14 - 1 itemsets of 'a' reach 0.3
    csv = tmp_path / "dense.csv"
    frame.to_csv(csv, index=False)
    out = tmp_path / "top.json"
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.3", "--top-k", "50", "--seed", "0",
                                "--output", out])
    assert code == 0, stderr
    document = json.loads(out.read_text())
    found = read_itemsets(document)
    assert len(found) == 50 and "--top-k 50" in stdout
    threshold = document["parameters"]["top_k_threshold"]
    assert 0.3 < threshold <= min(s.support for s in found)
    assert document["parameters"]["reference_rows"] == 47620  # reference_rows(0.3): 0.7 % of θ at θ
    truth = frequent_itemsets(frame, threshold)
    assert itemset_rates(found, truth).tpr >= 0.8 * len(found) / len(truth)
    kth = sorted(truth.values(), reverse=True)[49]
    assert abs(min(s.support for s in found) - kth) < 0.05


def test_top_k_writes_the_json_by_length_then_support_and_lists_by_support(tmp_path):
    """Pairs of near-constant columns outrank single items of the others: the JSON keeps the format's order."""
    rng = np.random.default_rng(6)
    shares = [0.97] * 3 + [0.6] * 5
    frame = pd.DataFrame({f"c{j}": np.where(rng.random(800) < p, "a", "b") for j, p in enumerate(shares)})
    csv, out = tmp_path / "mixed.csv", tmp_path / "top.json"
    frame.to_csv(csv, index=False)
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.3", "--top-k", "20", "--seed", "1",
                                "--output", out])
    assert code == 0, stderr
    found = read_itemsets(json.loads(out.read_text()))
    keys = [(len(s.items), -s.support) for s in found]
    assert len(found) == 20 and keys == sorted(keys)  # by number of items, then by decreasing support
    assert max(s.support for s in found if len(s.items) == 2) > min(s.support for s in found if len(s.items) == 1)
    listed = [float(line.split()[0]) for line in stdout.splitlines() if line[:1].isdigit() and "  " in line]
    assert len(listed) > 5 and listed == sorted(listed, reverse=True)  # the terminal: by support
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.3", "--top-k", "0"])
    assert code != 0 and "--top-k" in stderr


def test_a_value_that_is_not_utf8_is_named_by_column_and_row(tmp_path):
    """It was pyarrow's "In CSV column #0: Row #2: CSV conversion error to string: invalid UTF8 data", its row
    counting the header; now as dprm mine and classify say it."""
    path = tmp_path / "latin1.csv"
    path.write_bytes("a,b\nx,u\ny,v\n".encode() + "x\u00e9,v\n".encode("latin-1"))
    out = tmp_path / "never.json"
    code, _, stderr = run(["itemsets", path, "--min-support", "0.3", "--output", out])
    assert code == 2 and not out.exists()
    assert_one_error_line(stderr, "latin1.csv: column 'a', row 3: a value is not UTF-8 text")


@pytest.mark.parametrize("rows, fragment", [
    ("x\x00y,u\nx,v\ny,u\n", "column 'a', row 1"),          # a column of categories: the fast reading's
    ("x,u\ny,v\nx,1\x00\n", "column 'b', row 3"),            # a value at the end: numpy's text drops it
    ("x,1\ny,2\nx,3\x002\n", "column 'b', row 3"),            # a column of numbers: the chunked reading's
])
@pytest.mark.parametrize("extra", [[], ["--epsilon", "1"]])
def test_a_value_holding_a_nul_character_is_named_by_column_and_row(tmp_path, rows, fragment, extra):
    """It was read as a category ("x\0y" printed as "xy"), whereas dprm mine and classify refuse it."""
    csv = write(tmp_path / "d.csv", "a,b\n" + rows)
    out = tmp_path / "never.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.3", *extra, "--output", out])
    assert code == 2, stderr
    assert_one_error_line(stderr, f"d.csv: {fragment}: a value holds a NUL character (\\0)")
    assert not out.exists()


@pytest.mark.parametrize("text", [
    # a first row of 140 kB: pyarrow's "straddling object straddles two block boundaries"
    "a,b\n" + "x" * 140_000 + ",u\n" + "x,u\ny,v\n" * 20,
    # a header over 64 KiB: "Empty CSV file or block: cannot infer number of columns"
    "a,b," + "c" * 70_000 + "\n" + "".join(f"x,u,{'pqrs'[i % 4]}\ny,v,{'srqp'[i % 4]}\n" for i in range(20)),
], ids=["long-cell", "long-header"])
@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_a_long_cell_or_a_long_header_is_read(tmp_path, text, suffix):
    """Both were refused with pyarrow's words (the header was read in blocks of 64 KiB); dprm mine reads them."""
    import gzip

    csv = write(tmp_path / f"d{suffix}", gzip.compress(text.encode()) if suffix.endswith(".gz") else text)
    out = tmp_path / "itemsets.json"
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.4", "--seed", "0", "--output", out])
    assert code == 0, stderr
    assert "a=x" in stdout and "b=u" in stdout
    assert json.loads(out.read_text())["format"] == FORMAT


def test_an_unknown_file_type_is_not_told_to_be_parquet(tmp_path):
    """Parquet, which the message offered, is then refused: this command reads text."""
    path = write(tmp_path / "table.xls", "a,b\nx,y\n")
    code, _, stderr = run(["itemsets", path, "--min-support", "0.3"])
    assert code == 2
    line = assert_one_error_line(stderr, "unknown file type '.xls': use .csv (or .tsv, optionally .gz-compressed)")
    assert "parquet" not in line


def test_the_batch_learner_records_no_hoeffding_setting(stream, tmp_path):
    """``--learner auto`` chose the batch learner on a small file, and the JSON still wrote the Hoeffding settings
    it never used."""
    csv, _, _ = stream
    out = tmp_path / "batch.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.3", "--seed", "1", "--output", out])
    assert code == 0, stderr
    parameters = json.loads(out.read_text())["parameters"]
    assert parameters["learner"] == "batch"
    assert [parameters[k] for k in ("grace_period", "split_confidence", "tie_threshold")] == [None, None, None]


def test_a_level_whose_candidates_cannot_fit_in_memory_is_refused_before_it_is_made(tmp_path, monkeypatch):
    """A few rows of thousands of columns (every itemset of a row frequent) asked ISON for terabytes of
    candidates: 12,000 columns were killed at 24 GB. The level is bounded before it is made; here the bound
    is lowered so that 60 columns of four rows reach it (3,000 reach the real one: 89 GiB)."""
    from dprm.itemsets import ison

    monkeypatch.setattr(ison, "MAX_CANDIDATE_BYTES", 1 << 10)
    monkeypatch.setattr(ison, "MAX_ITEMSETS", 1 << 62)  # else the listing's bound refuses first (test below)
    monkeypatch.setattr(ison, "MAX_LISTING_BYTES", 1 << 80)  # and its bound in bytes
    rng = np.random.default_rng(0)
    header = ",".join(f"c{j}" for j in range(60))
    rows = "".join(",".join(rng.choice(["a", "b"], size=60)) + "\n" for _ in range(4))
    csv = write(tmp_path / "wide.csv", header + "\n" + rows)
    out = tmp_path / "never.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.2", "--seed", "0", "--output", out])
    assert code == 2, stderr
    assert_one_error_line(stderr, "itemsets of 2 items could take", "GiB as candidates", "raise --min-support")
    assert not out.exists()
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.2", "--seed", "0", "--max-length", "1"])
    assert code == 0, stderr  # one item at a time: no second level


def bounded_estimates(monkeypatch, most: int) -> None:
    """Fail a run that estimates more than ``most`` supports (ISON's, the refusal's probe included)."""
    from dprm.itemsets import ison

    estimated = [0]
    estimate = ison._Miner._estimate

    def counted(self, items):
        estimated[0] += len(items)
        assert estimated[0] <= most, f"{estimated[0]:,} supports estimated: the listing went on"
        return estimate(self, items)

    monkeypatch.setattr(ison._Miner, "_estimate", counted)


def nearly_constant_table(tmp_path: Path, columns: int = 30, rows: int = 400) -> tuple[Path, Path]:
    """``columns`` columns each "a" in 99 % of the rows: every itemset of "a"s (2^30 - 1) reaches θ = 0.5."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"c{j}": np.where(rng.random(rows) < 0.99, "a", "b") for j in range(columns)})
    csv = tmp_path / "constant.csv"
    frame.to_csv(csv, index=False)
    types = write(tmp_path / "constant-types.json",
                  json.dumps({"columns": {c: {"categories": ["a", "b"]} for c in frame.columns}}))
    return csv, types


def test_a_listing_larger_than_any_run_lists_is_refused_after_the_single_items(tmp_path, monkeypatch):
    """Four rows of 500 columns (2^250 frequent itemsets) ran 12 minutes and more before a bound refused them;
    here 30 nearly constant columns (2^30 - 1 frequent itemsets, more than MAX_ITEMSETS = 2^25): one line,
    exit 2, nothing written, after the single items and a probe of at most 26 x 30 supports (the old run went
    on merging levels of millions of candidates). What it proposes runs: --top-k, --max-length."""
    bounded_estimates(monkeypatch, 20_000)
    csv, _ = nearly_constant_table(tmp_path)
    out = tmp_path / "never.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.5", "--seed", "0", "--output", out])
    assert code == 2, stderr
    assert_one_error_line(stderr, "an itemset of 26 items reaches support 0.5 in the estimate",
                          "67,108,863 subsets are frequent too", "33,554,432", "--top-k K", "--max-length L")
    assert "spent" not in stderr and not out.exists()
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.5", "--seed", "0", "--top-k", "10", "--output", out])
    assert code == 0, stderr
    assert len(json.loads(out.read_text())["itemsets"]) == 10
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.5", "--seed", "0", "--max-length", "2"])
    assert code == 0, stderr
    assert "465 itemsets" in stdout  # 30 single items and 435 pairs


def test_a_private_run_refused_for_its_listing_says_that_its_budget_is_spent(tmp_path, monkeypatch):
    """The refusal reads the released estimate (post-processing), so in a private run it comes after the
    release: the line says ε is spent; nothing is written."""
    bounded_estimates(monkeypatch, 20_000)
    csv, types = nearly_constant_table(tmp_path, rows=4000)  # enough rows that the noisy estimate keeps them
    out = tmp_path / "never.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.5", "--seed", "0", "--epsilon", "1", "--types", types,
                           "--private-method", "chain", "--output", out])
    assert code == 2, stderr
    assert_one_error_line(stderr, "an itemset of 26 items reaches support 0.5 in the estimate",
                          "the refusal reads only the released estimate, which was released first: ε = 1 is spent")
    assert not out.exists()


@pytest.mark.parametrize("private", [False, True])
def test_a_listing_of_many_short_itemsets_of_nearly_certain_items_is_refused_after_the_single_items(
        tmp_path, monkeypatch, private):
    """The wide table of 500 columns at --min-support 0.9 ran for more than 9 minutes and 6 GB: about 10^7
    itemsets reach θ, none of more than 16 items, so the greedy probe (26 items) let it through. Here 60
    columns "a" in 99 % of the rows at θ = 0.9: no frequent itemset has more than about 10 items, but every
    set of up to some 8 "a"s reaches θ by a union bound, hundreds of millions: one line, exit 2, nothing
    written, after the single items (a private run says ε is spent); --max-length 2 runs."""
    bounded_estimates(monkeypatch, 20_000)
    rows = 4000 if private else 2000
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({f"c{j}": np.where(rng.random(rows) < 0.99, "a", "b") for j in range(60)})
    csv = tmp_path / "certain.csv"
    frame.to_csv(csv, index=False)
    types = write(tmp_path / "certain-types.json",
                  json.dumps({"columns": {c: {"categories": ["a", "b"]} for c in frame.columns}}))
    extra = ["--epsilon", "1", "--types", types, "--private-method", "chain"] if private else []
    out = tmp_path / "never.json"
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.9", "--seed", "0", "--output", out, *extra])
    assert code == 2, stderr
    if private:  # the released estimate's noise, projected, makes some 25 "a"s frequent together: either probe
        assert_one_error_line(stderr, "reach", "support 0.9 in the estimate", "a run lists", "--max-length L",
                              "ε = 1 is spent")
    else:
        assert_one_error_line(stderr, "more than 29,826,161 itemsets reach support 0.9 in the estimate",
                              "(at least 144 bytes an itemset of 60 columns: at most 4 GiB)",
                              "nearly certain items", "(a union bound)", "--max-length L")
    assert ("spent" in stderr) == private and not out.exists()
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.9", "--seed", "0", "--max-length", "2", *extra])
    assert code == 0, stderr
