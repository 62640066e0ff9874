"""The standard streams of a command: a closed pipe, a full disk, a narrow terminal, an ASCII locale.

- a standard output closed by its reader (``dprm mine ... | head -1``) ends the command
  quietly with exit code 141, as a shell reports ``yes | head -1``, and the files it
  wrote stay;
- another error writing standard output (``> /dev/full``) names ``standard output``;
- a closed standard error (``2>&-``) never sends the error to standard output;
- ``COLUMNS=0`` (or any width below 20) is taken as no width: the status line shows;
- an encoding without ``∩``, ``≤`` or ``±`` (``PYTHONIOENCODING=ascii``) prints ASCII.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dprm.cli import main
from dprm.cli.console import DEFAULT_WIDTH, STDOUT_CLOSED, _Console
from test_cli import run, write

SOURCE = str(Path(__file__).resolve().parents[1] / "src")
LEFT = "id,a,b\n" + "".join(f"{i},{i % 2},{i % 3}\n" for i in range(40))
RIGHT = "id,c,d\n" + "".join(f"{i},{(i + 1) % 2},{i % 5}\n" for i in range(40))
LEARN = "a,b,y\n" + "".join(f"{i % 3},{i % 2},{'p' if i % 3 else 'q'}\n" for i in range(30))


def mine_args(tmp_path: Path) -> list:
    left, right = write(tmp_path / "left.csv", LEFT), write(tmp_path / "right.csv", RIGHT)
    return ["mine", left, right, "--algorithm", "cartwheels"]


def process(args: list, **options) -> subprocess.CompletedProcess:
    """``python -m dprm.cli args`` in a real process (the streams are the process's own)."""
    env = {**os.environ, "PYTHONPATH": SOURCE, **options.pop("env", {})}
    return subprocess.run([sys.executable, "-m", "dprm.cli", *map(str, args)], env=env, timeout=600, **options)


def run_on(stream: io.TextIOBase, args: list) -> tuple[int, str]:
    """Run ``dprm args`` in-process with ``stream`` as standard output; (exit code, stderr)."""
    err = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(err):  # type: ignore[type-var]
        try:
            main([str(a) for a in args])
        except SystemExit as done:
            code = 0 if done.code is None else done.code
    return code, err.getvalue()


class _Failing(io.TextIOBase):
    """A standard output whose every write fails with ``error``."""

    def __init__(self, error: OSError) -> None:
        self.error = error

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise self.error


def test_a_closed_standard_output_ends_quietly_with_141(tmp_path: Path) -> None:
    code, stderr = run_on(_Failing(BrokenPipeError(errno.EPIPE, "Broken pipe")), mine_args(tmp_path))
    assert (code, stderr) == (STDOUT_CLOSED, "")


def test_a_closed_pipe_in_a_real_process_ends_quietly_and_keeps_the_files(tmp_path: Path) -> None:
    for args in (["--version"], ["--help"], ["datasets", "make-planted", tmp_path / "planted", "--rows", "60",
                                             "--seed", "1"]):
        read, written = os.pipe()
        os.close(read)
        try:
            done = process(args, stdout=written, stderr=subprocess.PIPE)
        finally:
            os.close(written)
        assert done.returncode == STDOUT_CLOSED, (args, done.stderr)
        assert done.stderr == b"", (args, done.stderr)  # no "Exception ignored ... BrokenPipeError"
    assert sorted(p.name for p in (tmp_path / "planted").iterdir()) == ["left.csv", "planted.json", "right.csv",
                                                                        "types.json"]


def test_a_full_standard_output_is_named(tmp_path: Path) -> None:
    code, stderr = run_on(_Failing(OSError(errno.ENOSPC, "No space left on device")), mine_args(tmp_path))
    assert code == 2
    assert stderr == "error: standard output: No space left on device\n"


def test_a_closed_standard_error_keeps_the_error_off_standard_output(tmp_path: Path) -> None:
    done = process(["mine", tmp_path / "absent.csv", tmp_path / "absent2.csv"], capture_output=True,
                   preexec_fn=lambda: os.close(2))
    assert done.returncode == 2
    assert b"error" not in done.stdout and done.stdout == b""


@pytest.mark.parametrize("columns", ["0", "5"])
def test_a_tiny_width_never_hides_the_status_line(tmp_path: Path, columns: str) -> None:
    done = process(mine_args(tmp_path) + ["-o", tmp_path / "out.json"], capture_output=True, text=True,
                   env={"COLUMNS": columns})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines and lines[0].startswith("NOT private: cartwheels is not a private algorithm"), done.stdout
    assert lines[-1] == f"wrote 2 redescriptions to {tmp_path / 'out.json'}"


def test_the_console_width_falls_back_below_the_minimum() -> None:
    assert _Console(file=io.StringIO(), width=0).width == DEFAULT_WIDTH
    assert _Console(file=io.StringIO(), width=19).width == DEFAULT_WIDTH
    assert _Console(file=io.StringIO(), width=20).width == 20


def test_an_ascii_standard_output_gets_ascii_symbols(tmp_path: Path) -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", write_through=True)
    code, stderr = run_on(stream, mine_args(tmp_path))
    assert code == 0, stderr
    text = raw.getvalue().decode("ascii")
    assert "|L&R|" in text
    learn = write(tmp_path / "learn.csv", LEARN)
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", write_through=True)
    code, stderr = run_on(stream, ["classify", learn, "--target", "y", "--epsilon", "1", "--cv", "3", "--seed", "1"])
    assert code == 0, stderr
    text = raw.getvalue().decode("ascii")
    assert "+/-" in text and "eps = 1" in text


def test_a_utf8_standard_output_keeps_the_symbols(tmp_path: Path) -> None:
    code, stdout, stderr = run(mine_args(tmp_path))
    assert code == 0, stderr
    assert "|L∩R|" in stdout
