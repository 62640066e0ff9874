"""Output files of the commands: never an input, never a device or a pipe; a link's target is written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from test_cli import assert_one_error_line, run, write

from dprm.cli.outputs import Outputs
from dprm.errors import DprmError

LEARN = "a,b,y\n" + "".join(f"{i % 3},{i % 2},{'p' if i % 3 else 'q'}\n" for i in range(30))
LEFT = "id,a,b\n" + "".join(f"{i},{i % 2},{i % 3}\n" for i in range(30))
RIGHT = "id,c,d\n" + "".join(f"{i},{(i + 1) % 2},{i % 5}\n" for i in range(30))


def commands(tmp_path: Path, output: Path) -> dict[str, list]:
    learn, left, right = (write(tmp_path / name, text) for name, text in
                          (("learn.csv", LEARN), ("left.csv", LEFT), ("right.csv", RIGHT)))
    return {
        "classify": ["classify", learn, "--target", "y", "--epsilon", "1", "--cv", "0", "-o", output],
        "mine": ["mine", left, right, "--algorithm", "cartwheels", "-o", output],
        "itemsets": ["itemsets", learn, "--min-support", "0.3", "-o", output],
    }


@pytest.mark.parametrize("command", ["classify", "mine", "itemsets"])
def test_an_input_is_never_an_output(tmp_path: Path, command: str) -> None:
    inputs = {"classify": "learn.csv", "mine": "right.csv", "itemsets": "learn.csv"}
    target = tmp_path / inputs[command]
    args = commands(tmp_path, target)[command]
    before = target.read_bytes()
    code, stdout, stderr = run(args)
    assert code == 2, stderr
    assert_one_error_line(stderr, inputs[command], "is an input of this command")
    assert target.read_bytes() == before and stdout == ""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_is_refused_and_a_link_is_followed(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe.json"
    os.mkfifo(pipe)
    code, _, stderr = run(commands(tmp_path, pipe)["classify"])
    assert code == 2
    assert_one_error_line(stderr, "pipe.json", "is not a regular file")
    assert pipe.is_fifo()
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text("old")
    link.symlink_to(real.name)
    code, _, stderr = run(commands(tmp_path, link)["classify"])
    assert code == 0, stderr
    assert link.is_symlink() and json.loads(real.read_text())["model"].endswith("DPDecisionTreeClassifier")


def test_outputs_plan_checks_inputs_before_any_work(tmp_path: Path) -> None:
    data = write(tmp_path / "data.csv", "a\n1\n")
    plan = Outputs(inputs=[data, None])
    plan.add(tmp_path / "sub" / ".." / "data.csv", lambda path: path.write_text("x"))
    with pytest.raises(DprmError, match="is an input of this command"):
        plan.check()
    assert Path(data).read_text() == "a\n1\n"


def test_make_planted_refuses_an_empty_directory_name(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, stderr = run(["datasets", "make-planted", "", "--rows", "50"])
    assert code == 2
    assert_one_error_line(stderr, "OUTDIR is empty")
    assert list(tmp_path.iterdir()) == []  # it wrote into the current directory


@pytest.mark.parametrize("command", ["classify", "mine", "itemsets"])
def test_a_file_option_ending_in_a_separator_is_refused(tmp_path: Path, command: str, monkeypatch) -> None:
    # Path("out.json/") is Path("out.json"): the command wrote a file the user did not name
    monkeypatch.chdir(tmp_path)
    args = commands(tmp_path, Path("placeholder"))[command]
    args[args.index(Path("placeholder"))] = "out.json/"
    before = sorted(tmp_path.iterdir())
    code, stdout, stderr = run(args)
    assert code == 2 and stdout == ""
    assert_one_error_line(stderr, "'out.json/' ends with '/', so it names a directory")
    assert sorted(tmp_path.iterdir()) == before


def test_report_and_clired_refuse_a_directory_name_too(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = commands(tmp_path, Path("run.json"))["mine"]
    code, _, stderr = run(args + ["--clired", "queries/"])
    assert code == 2
    assert_one_error_line(stderr, "'--clired'", "'queries/' ends with '/'")
    assert not (tmp_path / "run.json").exists() and not (tmp_path / "queries").exists()
    assert run(args)[0] == 0
    code, _, stderr = run(["report", "--run", "run.json", "-o", "run.html/"])
    assert code == 2
    assert_one_error_line(stderr, "'run.html/' ends with '/'")
    assert not (tmp_path / "run.html").exists()


def test_a_dash_and_a_link_to_a_pipe_are_refused_by_the_names_given(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = commands(tmp_path, Path("placeholder"))["mine"]
    where = args.index(Path("placeholder"))
    code, _, stderr = run(args[:where] + ["-"] + args[where + 1:])
    assert code == 2
    assert_one_error_line(stderr, "'-' (standard output) is not an output file here")
    assert not (tmp_path / "-").exists()
    if hasattr(os, "mkfifo"):  # /dev/stdout on a pipe: a link to "pipe:[N]", named in /proc
        os.mkfifo(tmp_path / "fifo")
        (tmp_path / "to-fifo.json").symlink_to("fifo")
        code, _, stderr = run(args[:where] + ["to-fifo.json"] + args[where + 1:])
        assert code == 2
        assert_one_error_line(stderr, "to-fifo.json: is not a regular file")


@pytest.fixture
def umask_027():
    before = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(before)


def test_new_outputs_follow_the_umask_and_replaced_ones_keep_their_mode(tmp_path: Path, umask_027) -> None:
    for command, args in commands(tmp_path, tmp_path / "out.json").items():
        args = args + {"mine": ["--clired", tmp_path / "out.queries"], "classify": [],
                       "itemsets": ["--categorical-integers"]}[command]
        (tmp_path / "out.json").unlink(missing_ok=True)
        code, _, stderr = run(args)
        assert code == 0, stderr
        assert oct((tmp_path / "out.json").stat().st_mode & 0o777) == "0o640", command
        (tmp_path / "out.json").chmod(0o600)  # results kept private: replacing them keeps them so
        code, _, stderr = run(args)
        assert code == 0, stderr
        assert oct((tmp_path / "out.json").stat().st_mode & 0o777) == "0o600", command
    assert oct((tmp_path / "out.queries").stat().st_mode & 0o777) == "0o640"
    code, _, stderr = run(["datasets", "make-planted", tmp_path / "planted", "--rows", "50", "--seed", "1"])
    assert code == 0, stderr
    assert {oct(p.stat().st_mode & 0o777) for p in (tmp_path / "planted").iterdir()} == {"0o640"}


def test_a_long_output_name_is_written_or_refused_before_any_work(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    long = "r" * 245 + ".json"  # fits the file system, but not with a prefix and a suffix around it
    code, stdout, stderr = run(commands(tmp_path, Path(long))["mine"] + ["--clired", "q" * 255])
    assert code == 0, stderr
    assert (tmp_path / long).is_file() and (tmp_path / ("q" * 255)).is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    args = commands(tmp_path, Path("x" * 256))["mine"]
    args[1] = tmp_path / "absent.csv"  # the name is refused first: no row is read
    code, stdout, stderr = run(args)
    assert code == 2
    assert_one_error_line(stderr, "the file name is too long (256 bytes; at most 255 here)")


def test_a_full_disk_names_the_output_given_not_the_temporary_file(tmp_path: Path, monkeypatch) -> None:
    import errno

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.chdir(tmp_path)
    args = commands(tmp_path, Path("placeholder"))["mine"]
    where = args.index(Path("placeholder"))
    monkeypatch.setattr(os, "fsync", full)
    for option, name in (("-o", "out.json"), ("--clired", "out.queries")):
        code, stdout, stderr = run(args[:where - 1] + args[where + 1:] + [option, name])
        assert code == 2
        line = assert_one_error_line(stderr, f"error: {name}: ", "No space left on device")
        assert ".partial" not in line and ".tmp" not in line
        assert sorted(p.name for p in tmp_path.iterdir()) == ["learn.csv", "left.csv", "right.csv"]


def test_a_link_to_an_input_is_refused_by_the_name_given(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = commands(tmp_path, Path("placeholder"))["mine"]
    Path("to-left.csv").symlink_to("left.csv")
    args[args.index(Path("placeholder"))] = "to-left.csv"
    code, _, stderr = run(args)
    assert code == 2
    line = assert_one_error_line(stderr, "error: to-left.csv: is an input of this command (a link to ")
    assert line.count("left.csv") == 2


def test_evaluate_refuses_an_empty_directory_name(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    left, right = write(tmp_path / "left.csv", LEFT), write(tmp_path / "right.csv", RIGHT)
    code, _, stderr = run(["evaluate", left, right, "--algorithms", "cartwheels", "--budgets", "1x1", "--out", ""])
    assert code == 2
    assert_one_error_line(stderr, "'--out'", "the value is empty: give a directory ('.' for the current one)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["left.csv", "right.csv"]  # no experiment here


def _failing_replace(monkeypatch, name: str) -> None:
    """Make a rename onto a file called ``name`` fail as a full disk does (the last file of a folder)."""
    import errno

    replace = os.replace

    def failing(source, target, *args, **kwargs):
        if Path(target).name == name:
            raise OSError(errno.ENOSPC, "No space left on device")
        return replace(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "replace", failing)


def _folder(path: Path) -> dict[str, tuple[int, bytes]]:
    """Every file of ``path`` (hidden ones too): its inode and its bytes."""
    return {p.name: (p.stat().st_ino, p.read_bytes()) for p in path.iterdir()}


@pytest.mark.parametrize("command", ["classify-eval", "itemsets-eval"])
def test_an_evaluation_whose_last_file_fails_leaves_no_folder(tmp_path: Path, monkeypatch, command: str) -> None:
    """The files went into place one by one: a failure at the last left the others (half a folder)."""
    learn = write(tmp_path / "learn.csv", LEARN)
    out = tmp_path / "new" / "eval"
    args = {"classify-eval": ["classify-eval", out, "--quick", "--no-baselines", "--no-timing",
                              "--datasets", f"{learn}:y"],
            "itemsets-eval": ["itemsets-eval", out, "--datasets", learn, "--thetas", "0.3", "--epsilons", "1",
                              "--experiments", "discovery", "--passes", "1"]}[command]
    _failing_replace(monkeypatch, "report.html")
    code, _, stderr = run(args)
    assert code == 2
    assert_one_error_line(stderr, f"error: {out / 'report.html'}: cannot be written (No space left on device)")
    # nothing new: no folder, no hidden one beside it, not even the folder above it (the run made it)
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["learn.csv"]


def test_a_failed_rerun_leaves_the_earlier_result_whole(tmp_path: Path, monkeypatch) -> None:
    """A rerun into an earlier result's folder replaced its files one by one: a failure left old and new mixed."""
    learn = write(tmp_path / "learn.csv", LEARN)
    out = tmp_path / "eval"
    args = ["classify-eval", out, "--quick", "--no-baselines", "--no-timing", "--datasets", f"{learn}:y"]
    code, _, stderr = run(args + ["--seed", "1"])
    assert code == 0, stderr
    before = _folder(out)
    _failing_replace(monkeypatch, "report.html")
    code, _, stderr = run(args + ["--seed", "2"])  # other results: every file but the report differs
    assert code == 2
    assert_one_error_line(stderr, f"error: {out / 'report.html'}: cannot be written")
    assert _folder(out) == before  # the same files (no staged or kept one beside them), untouched
    # make-planted's four files (dprm.file_sets.write_all) as well
    planted = tmp_path / "planted"
    code, _, stderr = run(["datasets", "make-planted", planted, "--rows", "50", "--seed", "1"])
    assert code == 0, stderr
    before = _folder(planted)
    _failing_replace(monkeypatch, "planted.json")
    code, _, stderr = run(["datasets", "make-planted", planted, "--rows", "60", "--seed", "2"])
    assert code == 2
    assert_one_error_line(stderr, f"error: {planted / 'planted.json'}: No space left on device")
    assert _folder(planted) == before
