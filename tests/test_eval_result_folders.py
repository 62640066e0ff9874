"""``dprm classify-eval`` and ``dprm itemsets-eval`` write their folder all or none.

The fuzz round's faults: the folder was made when the run started, so a run killed
while it computed left an empty folder (and the folders above it); a failure while
writing left the folders the run made above it; a rerun into an earlier result's
folder left the earlier result's files the new one lacks (``fit_time.png`` beside a
report without timing). Now a new folder is written beside its place and renamed
into place (:func:`dprm.file_sets.write_folder`). Each is checked where the user sees
it: exit code, one line of error, and the folders left behind, here in-process with a
writer that fails, and in a child process interrupted (SIGINT, SIGTERM) or killed
where the test wants it.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from test_cli import assert_one_error_line, run, write

from dprm.evaluation.classification import output_names as classification_names
from dprm.evaluation.itemsets import output_names as itemsets_names

LEARN = "a,b,y\n" + "".join(f"{i % 3},{i % 2},{'p' if i % 3 else 'q'}\n" for i in range(30))


def _args(command: str, out: Path, learn: Path, *extra: str) -> list[str]:
    if command == "classify-eval":
        return ["classify-eval", str(out), "--quick", "--no-baselines", "--no-timing", "--datasets", f"{learn}:y",
                *extra]
    return ["itemsets-eval", str(out), "--datasets", str(learn), "--thetas", "0.3", "--epsilons", "1",
            "--experiments", "discovery", "--passes", "1", *extra]


def _tree(path: Path) -> dict[str, tuple[int, bytes]]:
    """Every entry under ``path`` (hidden ones too): a file's inode and bytes, a folder's inode."""
    return {str(p.relative_to(path)): (p.stat().st_ino, p.read_bytes() if p.is_file() else b"")
            for p in sorted(path.rglob("*"))}


def _fail_second_flush(monkeypatch) -> None:
    """The second file's flush to disk fails as a full disk does: the first file is written, the rest not."""
    fsync, calls = os.fsync, []

    def failing(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return fsync(fd)

    monkeypatch.setattr(os, "fsync", failing)


@pytest.mark.parametrize("command", ["classify-eval", "itemsets-eval"])
def test_a_failure_after_the_first_file_leaves_nothing_new(tmp_path: Path, monkeypatch, command: str) -> None:
    """The folder (and the folder above it) was made when the run started and left behind by a failed write."""
    learn = write(tmp_path / "learn.csv", LEARN)
    out = tmp_path / "new" / "eval"
    _fail_second_flush(monkeypatch)
    code, _, stderr = run(_args(command, out, learn))
    assert code == 2
    line = assert_one_error_line(stderr, "cannot be written (No space left on device)")
    assert line.startswith(f"error: {out}/")  # names a file of the folder, not a temporary one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["learn.csv"]


@pytest.mark.parametrize("command", ["classify-eval", "itemsets-eval"])
def test_a_failed_rerun_leaves_the_earlier_result_as_it_was(tmp_path: Path, monkeypatch, command: str) -> None:
    learn = write(tmp_path / "learn.csv", LEARN)
    out = tmp_path / "eval"
    code, _, stderr = run(_args(command, out, learn, "--seed", "1"))
    assert code == 0, stderr
    before, around = _tree(out), sorted(p.name for p in tmp_path.iterdir())
    _fail_second_flush(monkeypatch)
    code, _, stderr = run(_args(command, out, learn, "--seed", "2"))
    assert code == 2
    assert_one_error_line(stderr, f"error: {out}/", "cannot be written (No space left on device)")
    assert _tree(out) == before and sorted(p.name for p in tmp_path.iterdir()) == around


def test_a_rerun_holds_the_new_result_only(tmp_path: Path) -> None:
    """A rerun without timing, on one dataset of two, left fit_time.png and the other dataset's figure."""
    learn = write(tmp_path / "learn.csv", LEARN)
    other = write(tmp_path / "other.csv", LEARN)
    out = tmp_path / "eval"
    code, _, stderr = run(["classify-eval", out, "--quick", "--no-baselines", "--datasets", f"{learn}:y,{other}:y",
                           "--timing-rows", "20,30", "--seed", "1"])
    assert code == 0, stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(classification_names(["learn", "other"], True))
    (out / "notes.txt").write_text("mine")  # not a file of the command: stays
    code, _, stderr = run(_args("classify-eval", out, learn, "--seed", "2"))
    assert code == 0, stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(classification_names(["learn"], False) + ["notes.txt"])
    assert (out / "notes.txt").read_text() == "mine"


# -- a child process interrupted or killed where the test wants it ------------------------------

#: Run in the child before dprm: the function named waits (after saying READY) where the test signals it.
_HOOK = textwrap.dedent("""
    import os, sys, time
    import dprm.evaluation.classification as classification, dprm.evaluation.itemsets as itemsets
    where = sys.argv.pop(1)

    def wait():
        print("READY", flush=True)
        time.sleep(120)

    if where == "computing":
        for module, name in ((classification, "run_comparison"), (itemsets, "run_evaluation")):
            def waiting(*args, _run=getattr(module, name), **kwargs):
                wait()
                return _run(*args, **kwargs)
            setattr(module, name, waiting)
    else:  # "writing": the first output file is written, its flush to disk waits
        fsync = os.fsync
        def waiting_fsync(fd):
            if os.readlink(f"/proc/self/fd/{fd}").startswith(os.environ["WAIT_UNDER"]):
                wait()
            return fsync(fd)
        os.fsync = waiting_fsync
    from dprm.cli import main
    sys.argv[0] = "dprm"
    main(sys.argv[1:])
""")


def _start(where: str, args: list[str], under: Path) -> subprocess.Popen:
    # SIGINT as a terminal gives it: a test run started in the background ignores SIGINT, and a
    # child inherits that, so Ctrl-C would never reach the command
    return subprocess.Popen([sys.executable, "-c", _HOOK, where, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1", WAIT_UNDER=str(under)),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _signalled(process: subprocess.Popen, sig: int) -> tuple[int, str]:
    """Send ``sig`` once the child says READY; its exit code and standard error."""
    try:
        line = process.stdout.readline()
        assert line == "READY\n", (line, process.communicate(timeout=30))
        process.send_signal(sig)
        _, err = process.communicate(timeout=60)
        return process.returncode, err
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


@pytest.mark.parametrize("command", ["classify-eval", "itemsets-eval"])
@pytest.mark.parametrize("where, sig", [("computing", signal.SIGKILL), ("writing", signal.SIGINT),
                                        ("writing", signal.SIGTERM)], ids=["killed-computing", "ctrl-c-writing",
                                                                           "sigterm-writing"])
def test_an_interrupted_or_killed_run_leaves_no_folder(tmp_path: Path, command: str, where: str, sig: int) -> None:
    """Killed while it computed, the run left its folder (and the one above), made when it started."""
    learn = write(tmp_path / "learn.csv", LEARN)
    out = tmp_path / "new" / "eval"
    code, err = _signalled(_start(where, _args(command, out, learn), tmp_path), sig)
    if sig == signal.SIGKILL:
        assert code == -signal.SIGKILL
    else:
        assert code == 130 and err.strip().splitlines()[-1].startswith("interrupted"), err
        assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["learn.csv"]


@pytest.mark.parametrize("command", ["classify-eval", "itemsets-eval"])
def test_ctrl_c_while_a_rerun_writes_leaves_the_earlier_result_as_it_was(tmp_path: Path, command: str) -> None:
    learn = write(tmp_path / "learn.csv", LEARN)
    out = tmp_path / "eval"
    code, _, stderr = run(_args(command, out, learn, "--seed", "1"))
    assert code == 0, stderr
    before, around = _tree(out), sorted(p.name for p in tmp_path.iterdir())
    code, err = _signalled(_start("writing", _args(command, out, learn, "--seed", "2"), tmp_path), signal.SIGINT)
    assert code == 130 and "Traceback" not in err, err
    assert _tree(out) == before and sorted(p.name for p in tmp_path.iterdir()) == around
    assert sorted(p.name for p in out.iterdir()) == sorted(
        classification_names(["learn"], False) if command == "classify-eval" else itemsets_names())
