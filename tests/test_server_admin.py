"""The data owner's side: registration refusals, ``dprm admin`` and ``dprm serve`` options.

A private dataset needs a complete types file; ``dprm admin`` answers a refused
command with one line ``error: ...`` and exit code 2, prints a new token alone on one
line, and never shows a token again.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from dprm.errors import DataError, ParameterError  # noqa: E402
from dprm.server.database import Database  # noqa: E402
from dprm.server.datasets import list_datasets, register_dataset  # noqa: E402
from server_support import DPRM, tiny_views  # noqa: E402
from test_cli import run  # noqa: E402


def dprm(*args: str) -> subprocess.CompletedProcess:
    """``dprm args`` in this process (test_cli's ``run``: exit code, stdout, stderr), as a completed process.

    In-process: each of the admin commands below would otherwise pay a Python start-up with
    dprm's imports; the real processes' exit codes are checked by :func:`dprm_process`.
    """
    code, out, err = run(list(args))
    return subprocess.CompletedProcess(["dprm", *args], code, out, err)


def dprm_process(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(DPRM + list(args), capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("columns, reason", [
    ({"a": "boolean", "b": "boolean", "state": {"type": "categorical", "categories": ["CA", "NY", "TX"]}},
     "'x' (right) is not declared"),
    ({"a": "boolean", "b": "boolean", "state": "categorical", "x": {"type": "numeric", "bounds": [0, 100]}},
     "'state' (left) is categorical without categories"),
    ({"a": "boolean", "b": "boolean", "state": {"type": "categorical", "categories": ["CA", "NY", "TX"]},
      "x": "numeric"}, "'x' (right) is numeric without bounds"),
])
def test_an_incomplete_types_file_is_refused_with_the_reason(tmp_path: Path, columns: dict, reason: str) -> None:
    left, right, _ = tiny_views(tmp_path)
    types = tmp_path / "partial.json"
    types.write_text(json.dumps({"id_column": "id", "columns": columns}))
    db = Database(str(tmp_path / "s.db"))
    db.migrate()
    with pytest.raises(DataError, match="complete types file") as refused:
        register_dataset(db, "tiny", left, right, types)
    assert reason in str(refused.value)
    assert refused.value.data_dependent is False
    db.dispose()


def test_registration_checks_names_files_and_duplicates(tmp_path: Path) -> None:
    left, right, types = tiny_views(tmp_path)
    db = Database(str(tmp_path / "s.db"))
    db.migrate()
    for bad in ("bad name!", "tiny\n", "\ntiny"):  # a name ending in a newline passed '$' (two 'eve' rows)
        with pytest.raises(ParameterError):
            register_dataset(db, bad, left, right, types)
    with pytest.raises(DataError, match="no such file"):
        register_dataset(db, "tiny", tmp_path / "missing.csv", right, types)
    for bad in (str(tmp_path / ("a" * 5000)), "/proc/self/mem"):  # too long a name; a file that fails to read
        with pytest.raises(DataError, match="cannot be read") as refused:
            register_dataset(db, "tiny", bad, right, types)
        assert refused.value.data_dependent is False and len(str(refused.value)) < 300
    schema = register_dataset(db, "tiny", left, right, types)
    assert schema["views"]["left"][0] == {"name": "a", "type": "boolean"}
    with pytest.raises(ParameterError, match="registered already"):
        register_dataset(db, "tiny", left, right, types)
    db.dispose()


def test_registration_refuses_one_id_column_under_two_names(tmp_path: Path) -> None:
    """The loader's rule holds for a registered dataset too: ids named 'pid' and 'id', the right's rows in
    another order, would have been paired by position. Refused with the stable code; nothing registered."""
    left, right, types = tiny_views(tmp_path, rows=50)
    lines = left.read_text().splitlines()
    left.write_text("\n".join(["pid," + lines[0].split(",", 1)[1], *lines[1:]]) + "\n")
    header, *rows = right.read_text().splitlines()
    right.write_text("\n".join([header, *rows[::-1]]) + "\n")
    mapping = json.loads(types.read_text())
    del mapping["id_column"]
    types.write_text(json.dumps(mapping))
    db = Database(str(tmp_path / "s.db"))
    db.migrate()
    with pytest.raises(DataError) as refused:
        register_dataset(db, "tiny", left, right, types)
    assert refused.value.code == "id_names_differ" and refused.value.data_dependent
    assert refused.value.public_message() == (f"{left}: column 'pid': the views' first columns look like one id "
                                              f"column with two names (id_names_differ)")
    with db.read() as connection:
        assert list_datasets(connection) == []
    db.dispose()
    added = dprm("admin", "--db", str(tmp_path / "s.db"), "dataset", "add", "tiny", str(left), str(right),
                 "--types", str(types))
    assert added.returncode == 2 and added.stdout == ""
    assert added.stderr.startswith("error: ") and added.stderr.count("\n") == 1 and "'pid' and 'id'" in added.stderr


def test_a_dataset_removed_and_added_again_keeps_its_history_apart(tmp_path: Path) -> None:
    """The owner's tables say which registration a budget or a charge belongs to, and adding the
    same files again says that budgets start afresh on rows analysts may have spent on."""
    left, right, types = tiny_views(tmp_path)
    db = str(tmp_path / "server.db")
    add = ("admin", "--db", db, "dataset", "add", "tiny", str(left), str(right), "--types", str(types))
    first = dprm(*add)
    assert first.returncode == 0 and "note:" not in first.stdout + first.stderr
    assert dprm("admin", "--db", db, "analyst", "add", "alice").returncode == 0
    assert dprm("admin", "--db", db, "budget", "set", "alice", "tiny", "1").returncode == 0
    assert dprm("admin", "--db", db, "dataset", "remove", "tiny").returncode == 0
    again = dprm(*add)
    assert again.returncode == 0
    assert "note: the same files were registered before as tiny (removed); budgets on tiny start afresh" \
        in again.stderr
    assert dprm("admin", "--db", db, "budget", "set", "alice", "tiny", "2").returncode == 0
    listed = dprm("admin", "--db", db, "budget", "list", "--dataset", "tiny").stdout
    rows = [line for line in listed.splitlines() if "alice" in line]
    assert len(rows) == 2 and sum("tiny (removed)" in line for line in rows) == 1, listed


def test_admin_command_line(tmp_path: Path) -> None:
    left, right, types = tiny_views(tmp_path)
    db = str(tmp_path / "server.db")
    assert dprm("admin", "--db", db, "dataset", "add", "tiny", str(left), str(right), "--types", str(types)).returncode == 0
    added = dprm("admin", "--db", db, "analyst", "add", "alice")
    token = added.stdout.strip()
    assert added.returncode == 0 and added.stdout.count("\n") == 1 and token.startswith("dprm_")
    for args, message in [
        (("budget", "set", "alice", "tiny", "1e-10"), "multiple of 1e-9"),
        (("budget", "set", "alice", "tiny", "-1"), "EPSILON must be 0 or more, got '-1'"),
        (("budget", "set", "nobody", "tiny", "1"), "no analyst named 'nobody'"),
        (("budget", "set", "alice", "nope", "1"), "no dataset named 'nope'"),
        (("analyst", "add", "alice"), "exists already"),
        (("dataset", "remove", "nope"), "no dataset named 'nope'"),
    ]:
        refused = dprm("admin", "--db", db, *args)
        assert refused.returncode == 2 and refused.stderr.startswith("error: ") and message in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1 and refused.stdout == ""
    assert "remaining 0" in dprm("admin", "--db", db, "budget", "set", "alice", "tiny", "0.0").stdout  # withdrawn
    assert "remaining 1.5" in dprm("admin", "--db", db, "budget", "set", "alice", "tiny", "1.5").stdout
    rotated = dprm("admin", "--db", db, "analyst", "rotate", "alice").stdout.strip()
    assert rotated != token and rotated.startswith("dprm_")
    listed = dprm("admin", "--db", db, "analyst", "list").stdout
    assert "alice" in listed and token not in listed and rotated not in listed
    assert "disabled alice" in dprm("admin", "--db", db, "analyst", "disable", "alice").stdout
    assert "yes" in dprm("admin", "--db", db, "analyst", "list").stdout
    assert "tiny" in dprm("admin", "--db", db, "dataset", "list").stdout
    # serve in a real process (a refusal that did not happen would serve, not hang the tests)
    bad = dprm_process("serve", "--db", str(tmp_path / "no" / "such" / "folder.db"))
    assert bad.returncode == 2 and "does not exist" in bad.stderr
    assert dprm_process("serve", "--db", db, "--port", "0").returncode == 2


def test_names_and_tokens_are_matched_whole() -> None:
    """A name followed by a newline (or a space) is not the name: refused."""
    from dprm.server.accounts import check_name

    assert check_name("eve", "analyst") == "eve"
    for bad in ("eve\n", "eve\r\n", "eve "):
        with pytest.raises(ParameterError, match="analyst name"):
            check_name(bad, "analyst")
