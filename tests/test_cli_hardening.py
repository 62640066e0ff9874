"""The command line's promises under bad input, and what it says about privacy.

Each case is run through the CLI as a user would: exit code 2, exactly one
``error:`` line on stderr, no traceback and no file left behind; or, for a run
that succeeds, the privacy status line and a table title that agree with the
JSON's ``privacy`` block.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_cli import assert_one_error_line, run, write

ROWS = "300"


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    outdir = tmp_path_factory.mktemp("hardening") / "data"
    code, _, err = run(["datasets", "make-planted", outdir, "--rows", ROWS, "--seed", "3"])
    assert code == 0, err
    return outdir


def views(planted: Path) -> list:
    return [planted / "left.csv", planted / "right.csv", "--types", planted / "types.json"]


FAST_PRIVATE = ["--depth", "2", "--init-trials", "1", "--mcmc-iterations", "50"]


@pytest.fixture
def unwritable_dir(tmp_path: Path) -> Path:
    """A directory nobody may create files in (root ignores permission bits: then /proc)."""
    if os.geteuid() == 0:
        return Path("/proc")
    directory = tmp_path / "locked"
    directory.mkdir()
    directory.chmod(0o500)
    return directory


def expect_error(args: list, *fragments: str) -> str:
    code, out, err = run(args)
    assert code == 2, (code, out, err)
    return assert_one_error_line(err, *fragments)


def files_under(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*"))


# ----------------------------------------------------------------------------- help


def test_help_and_version_import_no_heavy_module() -> None:
    """``dprm --help`` and ``--version`` answer without importing numpy, pandas or the miners."""
    code = ("import sys; from dprm.cli import main\n"
            "for args in (['--help'], ['--version'], ['-h']):\n"
            "    try:\n        main(args)\n    except SystemExit as done:\n        assert not done.code, done.code\n"
            "heavy = [m for m in ('numpy', 'pandas', 'scipy', 'numba', 'dprm.mining', 'dprm.data') if m in sys.modules]\n"
            "print('HEAVY', heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stdout, done.stdout.splitlines()[-1]
    assert "dprm 0." in done.stdout


COMMANDS = [["mine"], ["inspect"], ["evaluate"], ["report"], ["datasets", "make-planted"], ["remote", "submit"], []]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "dprm")
def test_help_fits_80_columns_and_names_every_option_whole(command: list[str], monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run([*command, "--help"])
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "…" not in out
    from dprm.cli.app import app
    import typer

    click_command = typer.main.get_command(app)
    ctx = click_command.make_context("dprm", ["--help"], resilient_parsing=True)
    for name in command:
        click_command = click_command.get_command(ctx, name)
    for parameter in click_command.params:
        for flag in getattr(parameter, "opts", []):
            if flag.startswith("--"):
                assert flag in out, f"{flag} missing or cut in the help of {command}"


def test_mine_help_explains_the_papers_names(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(["mine", "--help"])
    text = " ".join(out.split())
    assert code == 0
    assert "initial targets" in text and "MCMC steps" in text
    assert "default 4" in text  # defaults are shown


def test_remote_submit_help_says_only_what_applies_to_a_server_s_private_miners(monkeypatch) -> None:
    """``remote submit`` runs only the private miners a server takes: its help once listed
    cartwheels' meanings and limits (``1 to 6 for cartwheels``) beside theirs."""
    from dprm.mining import ALGORITHMS
    from dprm.server.validation import private_algorithms

    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run(["remote", "submit", "--help"])
    assert code == 0, err
    text = " ".join(out.split()).replace("- ", "-")  # words the terminal broke at a hyphen, joined again
    others = sorted(set(ALGORITHMS) - set(private_algorithms()))
    assert others and "cartwheels" in others
    for name in others:
        assert name not in text, name
    assert "allowed: 1 to 7 or auto (default auto)" in text  # --depth: the private miners' limit only
    assert "quantiles of its values" not in text  # --max-splits: cartwheels' grid
    # the server's own limits (dprm.server.validation.SERVER_LIMITS), not the miners' wider ones
    def option(flag: str) -> str:
        return text.split(f" {flag} ", 1)[1].split(" --", 1)[0]

    assert "allowed: 1 to 200 or auto (default auto)" in option("--init-trials")  # the miners take 1,000
    assert "allowed: 1 to 2,000,000 (default" in option("--mcmc-iterations")  # the miners take 10,000,000
    assert "--rows" not in text  # never passed on by a server
    assert "allowed: noisy | engine" in text and "a server refuses 'public'" in text  # --data-size
    code, out, err = run(["mine", "--help"])  # mine runs every algorithm: cartwheels' limits stay there
    assert code == 0 and "1 to 6 for cartwheels" in " ".join(out.split())


# ----------------------------------------------------------------------------- datasets


@pytest.mark.parametrize("args, fragment", [
    (["--seed", "-1"], "seed"),
    (["--rows", "0"], "rows"),
    (["--rows", "1000000000"], "at most"),
    (["--left-boolean", "-3"], "left-boolean"),
    (["--noise", "0.7"], "noise"),
])
def test_make_planted_bad_options(tmp_path: Path, args: list, fragment: str) -> None:
    expect_error(["datasets", "make-planted", tmp_path / "out", *args], fragment)
    assert not (tmp_path / "out").exists()


def test_make_planted_into_unwritable_directory(unwritable_dir: Path) -> None:
    expect_error(["datasets", "make-planted", unwritable_dir / "data", "--seed", "1"], str(unwritable_dir))
    assert not (unwritable_dir / "data").exists()


def test_make_planted_onto_a_file(tmp_path: Path) -> None:
    target = write(tmp_path / "file", "x")
    expect_error(["datasets", "make-planted", target], "not a directory")
    expect_error(["datasets", "make-planted", target / "below"], "not a directory")


# ----------------------------------------------------------------------------- outputs first


def test_unwritable_output_is_refused_before_the_data_is_read(tmp_path: Path, unwritable_dir: Path) -> None:
    """The inputs do not even exist: the output's error proves nothing was read first."""
    missing = tmp_path / "absent.csv"
    line = expect_error(["mine", missing, missing, "--output", unwritable_dir / "out.json"], "out.json")
    assert "absent.csv" not in line
    expect_error(["mine", missing, missing, "--output", tmp_path / "no" / "out.json"], "does not exist")
    expect_error(["mine", missing, missing, "--output", tmp_path], "is a directory")


def test_clired_error_names_the_users_path(planted: Path, unwritable_dir: Path, tmp_path: Path) -> None:
    line = expect_error(["mine", *views(planted), "--seed", "1", "--output", tmp_path / "out.json",
                         "--clired", unwritable_dir / "q.queries"], str(unwritable_dir / "q.queries"))
    assert ".partial" not in line
    assert files_under(tmp_path) == []


def test_same_file_for_two_outputs(planted: Path, tmp_path: Path) -> None:
    expect_error(["mine", *views(planted), "--output", tmp_path / "x", "--clired", tmp_path / "x"], "two outputs")


# ----------------------------------------------------------------------------- bounds


@pytest.mark.parametrize("args, fragment", [
    (["--depth", "30"], "depth"),
    (["--depth", "100"], "depth"),
    (["--depth", "0"], "depth"),
    (["--init-trials", "100000000000"], "init-trials"),
    (["--top", "-1"], "--top"),
    (["--top", "100000000000"], "--top"),
    (["--redundant", "maybe"], "--redundant"),
])
def test_size_options_are_bounded_before_any_work(planted: Path, tmp_path: Path, args: list, fragment: str) -> None:
    line = expect_error(["mine", tmp_path / "absent.csv", tmp_path / "absent.csv", *args], fragment)
    assert "absent" not in line


@pytest.mark.parametrize("algorithm, args, fragment", [
    ("alt-mcmc", ["--mcmc-iterations", "100000000000"], "mcmc-iterations"),
    ("alt-expm", ["--alternations", "1000000000"], "alternations"),
    ("mcmc-tree-pair", ["--depth", "40"], "depth"),
])
def test_private_size_options_are_bounded(tmp_path: Path, algorithm: str, args: list, fragment: str) -> None:
    expect_error(["mine", tmp_path / "absent.csv", tmp_path / "absent.csv", "--algorithm", algorithm,
                  "--epsilon", "1", *args], fragment)


def test_evaluate_parameters_are_bounded_before_any_run(planted: Path, tmp_path: Path) -> None:
    out = tmp_path / "experiment"
    expect_error(["evaluate", planted / "left.csv", planted / "right.csv", "--types", planted / "types.json",
                  "--algorithms", "alt-expm", "--budgets", "1x1", "--out", out, "-p", "depth=100"], "depth")
    assert not out.exists() or files_under(out) == []
    expect_error(["evaluate", planted / "left.csv", planted / "right.csv", "--algorithms", "alt-expm",
                  "--budgets", "1x1", "--out", out, "--jobs", "0"], "--jobs")
    for value in ("1e400", "-1e400"):  # the value no JSON can record: named with its parameter
        expect_error(["evaluate", planted / "left.csv", planted / "right.csv", "--types", planted / "types.json",
                      "--algorithms", "alt-expm", "--budgets", "1x1", "--out", out, "-p", f"omega={value}"],
                     "--parameters", "omega = ", "cannot be recorded")
    folder = tmp_path / "types_folder"
    folder.mkdir()
    expect_error(["evaluate", planted / "left.csv", planted / "right.csv", "--types", folder,
                  "--algorithms", "alt-expm", "--budgets", "1x1", "--out", out], "types_folder",
                 "is a directory, not a file (types)")
    assert not out.exists() or files_under(out) == []


# ----------------------------------------------------------------------------- privacy on the terminal


def test_private_run_prints_its_epsilon_guarantee_and_ledger(planted: Path, tmp_path: Path) -> None:
    output = tmp_path / "out.json"
    code, out, err = run(["mine", *views(planted), "--algorithm", "alt-mcmc", "--epsilon", "0.5", *FAST_PRIVATE,
                          "--output", output])
    assert code == 0, err
    first = out.splitlines()[0]
    assert first == f"private: ε = 0.5 spent (pure-dp on MCMC convergence), ledger in {output}"
    document = json.loads(output.read_text())
    assert document["privacy"]["private"] is True
    assert document["privacy"]["guarantee"] == "pure-dp-on-mcmc-convergence"
    assert "differentially private statistics" in " ".join(out.split()) and "NOT private" not in out


def test_seeded_private_run_says_not_private_above_its_table(planted: Path, tmp_path: Path) -> None:
    output = tmp_path / "out.json"
    code, out, err = run(["mine", *views(planted), "--algorithm", "alt-mcmc", "--epsilon", "1", "--seed", "4",
                          *FAST_PRIVATE, "--output", output])
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("NOT private: ") and "seed" in first
    assert "differentially private" not in " ".join(out.split())
    assert "noisy statistics (NOT private)" in " ".join(out.split())
    privacy = json.loads(output.read_text())["privacy"]
    assert privacy["guarantee"] == "none" and privacy["private"] is False and privacy["reasons"]


def test_non_private_miner_says_so(planted: Path) -> None:
    code, out, err = run(["mine", *views(planted), "--algorithm", "cartwheels", "--depth", "2", "--init-trials", "2"])
    assert code == 0, err
    assert out.splitlines()[0].startswith("NOT private: ")
    assert "exact statistics (not private)" in " ".join(out.split())


def test_undeclared_domains_make_a_run_not_private(planted: Path) -> None:
    code, out, err = run(["mine", planted / "left.csv", planted / "right.csv", "--algorithm", "alt-expm",
                          "--epsilon", "1", *FAST_PRIVATE])
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("NOT private: ") and "undeclared" in first


def test_counts_are_in_the_right_number() -> None:
    """"1 redescription", never "1 redescriptions", in every count the table prints."""
    from dprm.cli.display import print_redescriptions
    from dprm.queries import BooleanLiteral, Redescription, RedescriptionStats
    import contextlib
    import io

    one = Redescription(BooleanLiteral("a"), BooleanLiteral("b"),
                        RedescriptionStats(support_left=3, support_right=3, intersection=3, union=3, jaccard=1.0,
                                           p_value=0.01))
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        print_redescriptions([one], 5, noisy=False, private=False, hidden=0)
    text = " ".join(buffer.getvalue().split())
    assert "1 redescription," in text and "1 redescriptions" not in text


# ----------------------------------------------------------------------------- values and budgets


def test_tiny_epsilon_is_refused_with_its_minimum(planted: Path, tmp_path: Path) -> None:
    for epsilon in ("1e-30", "1e-300"):
        line = expect_error(["mine", *views(planted), "--algorithm", "alt-expm", "--epsilon", epsilon,
                             "--output", tmp_path / "out.json"], "epsilon", "0.0001")
        assert "Fraction" not in line and len(line) < 200
    assert files_under(tmp_path) == []


def test_smallest_epsilon_runs_and_says_so(planted: Path, tmp_path: Path) -> None:
    output = tmp_path / "out.json"
    code, out, err = run(["mine", *views(planted), "--algorithm", "alt-expm", "--epsilon", "0.0001",
                          "--depth", "2", "--init-trials", "1", "--output", output])
    assert code == 0, err
    assert out.splitlines()[0].startswith("private: ε = 0.0001 spent (pure-dp)")
    assert json.loads(output.read_text())["privacy"]["epsilon"] == pytest.approx(1e-4)


def test_extreme_finite_values_in_both_directions(tmp_path: Path) -> None:
    rows = 60
    left = write(tmp_path / "l.csv", "id,x,b\n" + "".join(
        f"{i},{'-1e308' if i % 3 == 0 else '1e308' if i % 3 == 1 else '0.5'},{i % 2}\n" for i in range(rows)))
    right = write(tmp_path / "r.csv", "id,c,d\n" + "".join(f"{i},{(i // 2) % 2},{i % 3 == 0:d}\n"
                                                           for i in range(rows)))
    types = write(tmp_path / "types.json", json.dumps({"columns": {
        "id": {"type": "id"}, "x": {"type": "numeric", "bounds": [-1.7e308, 1.7e308]},
        "b": {"type": "boolean"}, "c": {"type": "boolean"}, "d": {"type": "boolean"}}}))
    for algorithm in ("alt-expm", "alt-mcmc", "mcmc-tree-pair", "serenade-es"):
        code, out, err = run(["mine", left, right, "--types", types, "--algorithm", algorithm, "--epsilon", "1",
                              "--seed", "1", "--output", tmp_path / f"{algorithm}.json"]
                             + (["--depth", "2", "--init-trials", "1", "--mcmc-iterations", "50"]
                                if algorithm != "serenade-es" else []))
        assert code == 0, (algorithm, err)
        assert "Traceback" not in err and "inf" not in (tmp_path / f"{algorithm}.json").read_text().lower()


def test_none_is_a_category_unless_declared_missing(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,religion\n" + "".join(
        f"{i},{['none', 'catholic', 'NA'][i % 3]}\n" for i in range(30)))
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{i % 2}\n" for i in range(30)))
    code, out, err = run(["inspect", left, right])
    assert code == 0, err
    assert "3 categories" in out and "0.0%" in out
    code, out, err = run(["inspect", left, right, "--na-values", "NA"])
    assert code == 0, err
    assert "2 categories" in out and "33.3%" in out


def test_mine_notes_the_silent_changes_of_the_data_layer(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,age,empty,a\n" + "".join(
        f"{i},{'unknown' if i == 7 else i},,{i % 2}\n" for i in range(40)))
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{i % 2}\n" for i in range(40)))
    code, out, err = run(["mine", left, right, "--depth", "1", "--init-trials", "1"])
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("note: ")]
    assert any("'age' is categorical" in line and "row" in line for line in notes), notes
    assert any("'empty' is empty" in line for line in notes), notes
    assert all("unknown" not in line for line in notes)  # the value itself is not repeated


def nmes_like_views(folder: Path, right_id: str, shuffle: bool) -> tuple[Path, Path]:
    """Forty entities with their ids first in both views; the right view's in another order when ``shuffle``."""
    order = [(7 * i) % 40 for i in range(40)] if shuffle else list(range(40))
    left = write(folder / "l.csv", "row_id,health,age\n" + "".join(
        f"{i + 1},{'good' if i % 3 else 'poor'},{20 + i % 17}\n" for i in range(40)))
    right = write(folder / "r.csv", f"{right_id},visits,hospital\n" + "".join(
        f"{k + 1},{k % 5},{k % 2}\n" for k in order))
    return left, right


def test_ids_under_two_names_stop_mine_before_anything_is_written(tmp_path: Path) -> None:
    """The audit: right's 'row_id' renamed 'id' and its rows shuffled; dprm mined the ids by position, exit 0."""
    left, right = nmes_like_views(tmp_path, "id", shuffle=True)
    out = tmp_path / "out"
    out.mkdir()
    line = expect_error(["mine", left, right, "-a", "cartwheels", "--seed", "1", "--top", "2",
                         "--output", out / "r.json", "--clired", out / "r.queries"],
                        f"{left}, {right}: first columns 'row_id' and 'id'", "(in another order)",
                        "give them one name", "declare both in the types file")
    assert len(line) < 400 and files_under(out) == []
    code, out_text, err = run(["inspect", left, right])
    assert code == 2 and err.count("\n") == 1 and out_text == ""
    types = write(tmp_path / "t.json", '{"columns": {"row_id": "ignore", "id": "ignore"}}')
    code, out_text, err = run(["inspect", left, right, "--types", types])  # the owner says: not the ids
    assert code == 0 and "row_id" not in out_text and "note:" not in err, err


def test_a_first_column_like_an_id_mined_by_position_is_a_note(tmp_path: Path) -> None:
    left, right = nmes_like_views(tmp_path, "visit_no", shuffle=False)
    right.write_text("".join(line.split(",", 1)[1] + "\n" for line in right.read_text().splitlines()))
    code, out, err = run(["mine", left, right, "-a", "cartwheels", "--seed", "1", "--top", "1"])
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: {left}: column 'row_id' looks like an id (distinct values, none missing) but is mined "
                     f"as an attribute: the rows are matched by position, since the views' first columns have "
                     f"different names"], err


def test_out_of_bounds_error_or_clamp(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,x\n" + "".join(f"{i},{150 if i == 5 else i}\n" for i in range(30)))
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{i % 2}\n" for i in range(30)))
    types = write(tmp_path / "t.json", json.dumps({"columns": {
        "id": {"type": "id"}, "x": {"type": "numeric", "bounds": [0, 100]}, "b": {"type": "boolean"}}}))
    expect_error(["inspect", left, right, "--types", types], "x", "bounds")
    code, out, err = run(["inspect", left, right, "--types", types, "--out-of-bounds", "clamp"])
    assert code == 0, err
    assert "clamped" in err
    expect_error(["inspect", left, right, "--types", types, "--out-of-bounds", "wrap"], "--out-of-bounds")


def test_internal_errors_are_one_line_too(monkeypatch, planted: Path) -> None:
    """A bug is not a traceback either: one line naming it, exit 1 (not a user error)."""
    import dprm.cli.datasets as module

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("dprm.datasets.make_planted", broken)
    code, out, err = run(["datasets", "make-planted", planted.parent / "other"])
    assert code == 1 and "Traceback" not in err
    assert err.splitlines() == ["error: internal error (RuntimeError: boom); please report it, with "
                                "DPRM_TRACEBACK=1 for the traceback"]
    assert module is not None


# ----------------------------------------------------------------------------- docs/data.md's error table

GOOD_R = "id,c\n1,1\n2,0\n3,1\n"
BAD_INPUTS = {
    # code of docs/data.md's "Errors at a glance": (left file name, left content, right content, extra args)
    "file_not_found": ("absent.csv", None, GOOD_R, []),
    "not_a_file": ("dir.csv", "DIR", GOOD_R, []),
    "unknown_file_type": ("l.xlsx", "id,a\n1,1\n", GOOD_R, []),
    "unreadable_file": ("l.csv.gz", b"not gzip at all", GOOD_R, []),
    "empty_file": ("l.csv", "", GOOD_R, []),
    "no_rows": ("l.csv", "id,a\n", GOOD_R, []),
    "bad_csv": ("l.csv", "id,a\n1,1\n2,0,7\n3,1\n", GOOD_R, []),
    "not_utf8": ("l.csv", b"id,a\n1,\xff\xfe\n2,0\n3,1\n", GOOD_R, []),
    "bad_parquet": ("l.parquet", "id,a\n1,1\n", GOOD_R, []),
    "duplicate_column": ("l.csv", "id,a,a\n1,1,0\n2,0,1\n3,1,1\n", GOOD_R, ["--duplicate-columns", "error"]),
    "shared_column": ("l.csv", "id,c\n1,1\n2,0\n3,1\n", GOOD_R, []),
    "row_count_mismatch": ("l.csv", "a\n1\n0\n", "c\n1\n0\n1\n", []),
    "missing_id_column": ("l.csv", "id,a\n1,1\n2,0\n3,1\n", GOOD_R, ["--id-column", "key"]),
    "duplicate_id": ("l.csv", "id,a\n1,1\n1,0\n3,1\n", GOOD_R, []),
    "unmatched_id": ("l.csv", "id,a\n1,1\n2,0\n9,1\n", GOOD_R, []),
    "id_names_differ": ("l.csv", "row_id,a\n3,1\n1,0\n2,1\n", GOOD_R, []),
    "not_finite": ("l.csv", "id,a\n1,1.5\n2,inf\n3,2.5\n", GOOD_R, []),
    "bad_types_file": ("l.csv", "id,a\n1,1\n2,0\n3,1\n", GOOD_R, ["--types", "TYPES:{\"columns\": {\"a\": "
                                                                 "{\"type\": \"integer\"}}}"]),
    "value_out_of_bounds": ("l.csv", "id,a\n1,1\n2,500\n3,1\n", GOOD_R, [
        "--types", "TYPES:{\"columns\": {\"a\": {\"type\": \"numeric\", \"bounds\": [0, 10]}}}"]),
}


@pytest.mark.parametrize("command", [["mine", "LEFT", "DIR", "-a", "cartwheels"], ["inspect", "LEFT", "DIR"],
                                     ["itemsets", "DIR", "--min-support", "0.3"],
                                     ["classify", "DIR", "--target", "a", "--epsilon", "1"]],
                         ids=["mine", "inspect", "itemsets", "classify"])
def test_a_directory_without_extension_is_said_to_be_a_directory(tmp_path: Path, command: list) -> None:
    """docs/data.md: a directory gives 'is a directory, not a data file', not an unknown file type."""
    folder = tmp_path / "somedir"
    folder.mkdir()
    left = write(tmp_path / "l.csv", "id,a\n1,1\n2,0\n3,1\n")
    args = [{"LEFT": left, "DIR": folder}.get(a, a) for a in command]
    line = expect_error(args, f"{folder}: is a directory, not a data file")
    assert "unknown file type" not in line
    assert files_under(folder) == []


@pytest.mark.parametrize("code", list(BAD_INPUTS))
def test_each_documented_data_error_is_one_line_and_writes_nothing(tmp_path: Path, code: str) -> None:
    name, left_content, right_content, extra = BAD_INPUTS[code]
    inputs = tmp_path / "in"
    inputs.mkdir()
    left = inputs / name
    if left_content == "DIR":
        left.mkdir()
    elif left_content is not None:
        write(left, left_content)
    right = write(inputs / "r.csv", right_content)
    args = []
    for item in extra:
        if item.startswith("TYPES:"):
            item = write(inputs / "types.json", item[len("TYPES:"):])
        args.append(item)
    out = tmp_path / "out"
    out.mkdir()
    line = expect_error(["mine", left, right, *args, "--output", out / "r.json", "--clired", out / "r.queries"])
    from dprm.errors import ERROR_CODES

    assert code in ERROR_CODES
    assert files_under(out) == []
    assert len(line) < 400


def test_evaluate_does_not_promise_a_retry_for_runs_that_will_be_refused_again(tmp_path: Path) -> None:
    """200 thresholds on 6 x 6 numeric attributes make 1.5e10 candidate pairs: serenade-es refuses its
    input in every run (more than its 1e9 pairs); a rerun cannot help."""
    data = tmp_path / "data"
    code, _, err = run(["datasets", "make-planted", data, "--rows", "200", "--seed", "2", "--left-boolean", "0",
                        "--left-numeric", "6", "--right-numeric", "6", "--planted", "2"])
    assert code == 0, err
    code, out, err = run(["evaluate", data / "left.csv", data / "right.csv", "--types", data / "types.json",
                          "--algorithms", "serenade-es", "--budgets", "1x2", "--seed", "1", "--jobs", "1",
                          "-p", "max_splits=200", "--no-reports", "--out", tmp_path / "experiment"])
    assert code == 1
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: 2 runs refused their input and would be refused again"), last
    assert "run the same command again" not in last


def test_server_command_help_needs_no_database_or_url() -> None:
    """Click checks a group's options before a subcommand's -h: they are checked when a command runs."""
    for command in (["admin", "dataset", "add", "-h"], ["remote", "submit", "-h"]):
        code, out, err = run(command)
        assert code == 0 and "Usage:" in out, err
    expect_error(["admin", "dataset", "list"], "--db")
    expect_error(["remote", "datasets"], "--url", "--token-file")


@pytest.mark.parametrize("algorithm", ["serenade-es", "reremi"])
def test_clired_is_refused_before_mining_when_a_category_has_no_clired_spelling(tmp_path: Path, algorithm) -> None:
    """It failed after the whole run, and for a private run only when the noise had
    picked that category (4 runs in 5)."""
    cells = ["a", '"c, d"']
    left = write(tmp_path / "l.csv", "id,txt,n\n" + "".join(f"{i},{cells[i % 2]},{i % 7}\n" for i in range(60)))
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{['p', 'q'][i % 2]}\n" for i in range(60)))
    out = tmp_path / "out"
    out.mkdir()
    expect_error(["mine", left, right, "-a", algorithm, "--seed", "1", "--output", out / "r.json",
                  "--clired", out / "r.queries"],
                 f"--clired {out / 'r.queries'}: category 'c, d' of 'txt' cannot be written in clired syntax")
    assert files_under(out) == []


def test_messages_name_the_option_or_file_at_fault(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,a\n" + "".join(f"{i},0\n" for i in range(6)))
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{'xy'[i % 2]}\n" for i in range(6)))
    types = write(tmp_path / "t.json", '{"id_column": "id", "columns": {"a": {"bounds": [0, 0]}, '
                                       '"b": {"categories": ["x", "y"]}}}')
    expect_error(["mine", left, right, "--types", types, "-a", "reremi"], "the left view (", "l.csv) has no candidate")
    expect_error(["mine", left, right, "--seed", str(10**30)], "--seed must be an integer from 0 to 2^63 - 1")
    expect_error(["evaluate", left, right, "--algorithms", "alt-expm", "--budgets", "1e5x1", "--out",
                  tmp_path / "ev"], "--budgets: epsilon in '1e5x1' must be between 0.0001 and 10000")
    assert not (tmp_path / "ev").exists()
    small = write(tmp_path / "c.csv", "a,b,y\n1,x,p\n2,y,q\n3,x,p\n")
    expect_error(["classify-eval", tmp_path / "ce", "--quick", "--no-timing", "--datasets", f"{small}:y"],
                 f"{small}: a class has fewer rows (1) than folds")
