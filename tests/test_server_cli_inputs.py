"""Bad input to ``dprm admin``, ``dprm serve`` and ``dprm remote``: one line, exit 2, nothing done.

Each case comes from a fuzzing session of the server's command lines. The rule is
the project's: one line ``error: ...`` naming the option, the file or the value,
exit code 2, no traceback, no file half-written (a mistyped ``--db`` included) and
no budget spent. The commands run in-process (:func:`test_cli.run`); the analyst's
cases talk to a real API served by uvicorn in a thread on loopback.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("sqlalchemy")
pytest.importorskip("httpx")

from dprm.errors import ParameterError  # noqa: E402
from server_support import free_port, serve_in_thread, setup_server_db, tiny_views  # noqa: E402
from test_cli import assert_one_error_line, run  # noqa: E402


def expect_refusal(args: list[Any], *fragments: str) -> str:
    """``dprm args`` exits 2 with one ``error:`` line holding every fragment and prints nothing."""
    code, out, err = run(args)
    assert code == 2, (code, out, err)
    assert out == ""
    return assert_one_error_line(err, *fragments)


@pytest.fixture
def admin_db(tmp_path: Path) -> str:
    """A migrated SQLite database with the dataset ``tiny`` and the analysts alice and bob."""
    url = str(tmp_path / "server.db")
    setup_server_db(url, tmp_path)
    return url


# -- 1. token expiry: finite, positive, at most MAX_EXPIRY_DAYS ------------------------------------------


@pytest.mark.parametrize("days", ["inf", "1e300", "nan", "-1", "0", "36501"])
def test_an_expiry_no_calendar_holds_is_refused_and_nothing_is_stored(admin_db: str, days: str) -> None:
    expect_refusal(["admin", "--db", admin_db, "analyst", "add", "carol", "--expires-in-days", days],
                   "--expires-in-days", "36,500")
    expect_refusal(["admin", "--db", admin_db, "analyst", "rotate", "alice", "--expires-in-days", days],
                   "--expires-in-days")
    code, out, err = run(["admin", "--db", admin_db, "analyst", "list"])
    assert code == 0, err
    assert "carol" not in out and "alice" in out
    code, out, err = run(["admin", "--db", admin_db, "analyst", "add", "dora", "--expires-in-days", "36500"])
    assert code == 0 and out.startswith("dprm_"), err


def test_accounts_refuse_an_expiry_beyond_the_maximum_on_every_path(admin_db: str) -> None:
    import time

    from dprm.server import accounts
    from dprm.server.database import Database

    db = Database(admin_db)
    try:
        with db.write() as connection:
            for bad in (float("inf"), float("nan"), 1e300, -1.0, 0.0,
                        time.time() + (accounts.MAX_EXPIRY_DAYS + 1) * 86400.0):
                with pytest.raises(ParameterError, match="expiry"):
                    accounts.add_analyst(connection, "carol", expires_at=bad)
                with pytest.raises(ParameterError, match="expiry"):
                    accounts.rotate_token(connection, "alice", expires_at=bad)
            assert accounts.rotate_token(connection, "alice", expires_at=time.time() - 1).startswith("dprm_")
    finally:
        db.dispose()


# -- 2. a --db that is not a usable database ------------------------------------------------------------------


def test_a_database_that_cannot_be_used_is_one_line_naming_it(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_text("hello\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    port = free_port()
    for db, fragment in [(garbage, "garbage.db"), (folder, "is a directory"),
                         ("postgresql+psycopg://u:secret@127.0.0.1:1/x", "u:***@127.0.0.1:1/x"),
                         ("postgresql+psycopg://u:secret@127.0.0.1:notaport/x", "notaport"),
                         ("sqlite://", "in-memory")]:
        for args in (["admin", "--db", db, "analyst", "list"],
                     ["serve", "--db", db, "--port", port]):
            line = expect_refusal(args, "--db", fragment)
            assert "secret" not in line
    assert garbage.read_text() == "hello\n" and list(folder.iterdir()) == []


def test_a_mistyped_sqlite_path_is_refused_not_created(admin_db: str, tmp_path: Path) -> None:
    typo = tmp_path / "sever.db"
    for args in (["analyst", "list"], ["ledger"], ["jobs"], ["budget", "set", "alice", "tiny", "1"],
                 ["analyst", "rotate", "alice"], ["dataset", "remove", "tiny"]):
        expect_refusal(["admin", "--db", typo, *args], str(typo), "no such SQLite file")
    expect_refusal(["serve", "--db", typo, "--port", free_port()], "no such SQLite file")
    # a command that adds something creates the file, but removes it again when it fails
    expect_refusal(["admin", "--db", typo, "analyst", "add", "bad name"], "analyst name")
    left, right, types = tiny_views(tmp_path)
    expect_refusal(["admin", "--db", typo, "dataset", "add", "tiny", left, tmp_path / "absent.csv", "--types", types],
                   "absent.csv")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("sever")) == []
    code, out, err = run(["admin", "--db", typo, "owner", "add", "olga"])
    assert code == 0 and out.startswith("dprm_"), err
    assert typo.is_file()


@pytest.mark.parametrize("epsilon", ["-1", "-0.5", "-1e-9"])
def test_a_negative_budget_is_refused_by_value_not_as_an_option(admin_db: str, epsilon: str) -> None:
    """``budget set alice tiny -1`` names EPSILON and the value (it once said "No such option: -1")."""
    before = run(["admin", "--db", admin_db, "budget", "list"])
    expect_refusal(["admin", "--db", admin_db, "budget", "set", "alice", "tiny", epsilon], "EPSILON", epsilon)
    assert run(["admin", "--db", admin_db, "budget", "list"]) == before


# -- 6. jobs --limit as ledger and audit ----------------------------------------------------------------------


@pytest.mark.parametrize("command", ["jobs", "ledger", "audit"])
@pytest.mark.parametrize("limit", ["-1", "0", "10000001"])
def test_every_limit_is_between_one_and_ten_million(admin_db: str, command: str, limit: str) -> None:
    expect_refusal(["admin", "--db", admin_db, command, "--limit", limit], "--limit", "10,000,000", limit)


def test_jobs_limit_one_is_accepted(admin_db: str) -> None:
    code, out, err = run(["admin", "--db", admin_db, "jobs", "--limit", "1"])
    assert code == 0 and out.startswith("job"), err


# -- 7. serve --host and --port ----------------------------------------------------------------------------


def test_serve_refuses_a_host_it_cannot_listen_on_before_touching_the_database(admin_db: str, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    for host in ("not a host", "", "no-such-host.invalid", "256.1.1.1"):
        expect_refusal(["serve", "--db", fresh / "x.db", "--host", host, "--port", free_port()], "--host")
    for port in ("0", "65536", "-1"):
        expect_refusal(["serve", "--db", admin_db, "--port", port], "--port")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        expect_refusal(["serve", "--db", admin_db, "--host", "127.0.0.1", "--port", port],
                       "--port", str(port), "cannot listen")
    assert list(fresh.iterdir()) == []


# -- the analyst's side: a served API -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("remote")
    url = str(folder / "server.db")
    tokens = setup_server_db(url, folder, budgets={"alice": "10"})
    token_file = folder / "alice.token"
    token_file.write_text(tokens["alice"] + "\n")
    with serve_in_thread(url, workers=0) as api:
        yield {"url": api, "token": tokens["alice"], "remote": ["remote", "--url", api, "--token-file", token_file],
               "folder": folder}


def spent(served: dict[str, Any]) -> str:
    from dprm.client import Client

    with Client(served["url"], served["token"]) as client:
        return client.budget("tiny")[0]["exact"]["spent"]


LEFT = '{"attr": "a", "eq": true}'


# -- 3. numbers JSON cannot carry, a URL that is not one -------------------------------------------------------


@pytest.mark.parametrize("args, fragment", [
    (["stats", "tiny", "--left", LEFT, "--right", '{"attr": "x", "le": NaN}', "--epsilon", "0.1"], "--right"),
    (["stats", "tiny", "--left", LEFT, "--right", '{"attr": "x", "le": 1e999}', "--epsilon", "0.1"], "--right"),
    (["stats", "tiny", "--left", '{"attr": "x", "ge": -Infinity}', "--right", LEFT, "--epsilon", "0.1"], "--left"),
    (["stats", "tiny", "--left", LEFT, "--right", '{"attr": "x", "le": 5}', "--epsilon", "0.1", "--confidence", "nan"],
     "--confidence"),
    (["stats", "tiny", "--left", LEFT, "--right", '{"attr": "x", "le": 5}', "--epsilon", "0.1", "--confidence", "inf"],
     "--confidence"),
    (["leaf-pairs", "tiny", "--left-tree", '{"leaf": NaN}', "--right-tree", '{"leaf": true}', "--epsilon", "0.1"],
     "--left-tree"),
    (["submit", "tiny", "--algorithm", "alt-expm", "--epsilon", "0.1", "--min-jaccard", "inf"], "--min-jaccard"),
    (["submit", "tiny", "--algorithm", "alt-expm", "--epsilon", "0.1", "--max-support", "1e999"], "--max-support"),
    (["submit", "tiny", "--algorithm", "alt-expm", "--epsilon", "0.1", "--wait", "--timeout", "nan"], "--timeout"),
])
def test_a_number_json_cannot_carry_names_its_option_and_spends_nothing(served: dict[str, Any], args: list[str],
                                                                        fragment: str) -> None:
    before = spent(served)
    expect_refusal(served["remote"] + args, fragment)
    expect_refusal(served["remote"] + args + ["--dry-run"], fragment)
    assert spent(served) == before


def test_the_client_refuses_a_body_json_cannot_carry_and_a_url_that_is_not_one(served: dict[str, Any]) -> None:
    from dprm.client import Client

    with Client(served["url"], served["token"]) as client:
        with pytest.raises(ParameterError, match="not finite"):
            client.redescription_statistics("tiny", {"attr": "a", "eq": True}, {"attr": "x", "le": float("nan")},
                                            0.1, dry_run=True)
    for url in ("http://[::1", "notaurl", "ftp://127.0.0.1:8000", ""):
        with pytest.raises(ParameterError, match="not a server URL"):
            Client(url, served["token"])
    expect_refusal(["remote", "--url", "http://[::1", "--token-file", served["remote"][-1], "budget"],
                   "--url", "http://[::1")


def test_the_client_sends_a_decimal_epsilon_exactly_and_refuses_what_json_cannot_carry() -> None:
    """Client.submit(epsilon=Decimal("0.1")) raised json's raw TypeError."""
    from decimal import Decimal
    from fractions import Fraction

    import httpx
    import numpy as np

    from dprm.client import Client

    sent: list[Any] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content)["epsilon"])
        return httpx.Response(201, json={"id": "job_1"})

    with Client("http://127.0.0.1:9", "t", transport=httpx.MockTransport(answer), retries=0) as client:
        for epsilon in (Decimal("0.1"), Decimal("2.5E-3"), Fraction(1, 4), np.int64(2), "0.1", 0.5):
            client.submit("tiny", "alt-expm", epsilon, dry_run=True)
        assert sent == ["0.1", "0.0025", "1/4", 2, "0.1", 0.5]
        for epsilon, fragment in ((Decimal("NaN"), "epsilon must be a finite number"),
                                  (Decimal("-Infinity"), "epsilon must be a finite number"),
                                  (object(), "cannot be sent as JSON")):
            with pytest.raises(ParameterError, match=fragment):
                client.submit("tiny", "alt-expm", epsilon, dry_run=True)
        with pytest.raises(ParameterError, match="cannot be sent as JSON: Object of type Decimal"):
            client.submit("tiny", "alt-expm", 0.1, {"min_jaccard": Decimal("0.2")}, dry_run=True)
    assert len(sent) == 6  # nothing sent for a refusal


# -- 4. ids and names stay one path segment -------------------------------------------------------------------


@pytest.mark.parametrize("args, code", [
    (["status", "../budget"], "unknown_job"),
    (["status", "../../health"], "unknown_job"),
    (["status", ".."], "unknown_job"),
    (["status", "."], "unknown_job"),
    (["status", ""], "unknown_job"),
    (["status", "x?y=1"], "unknown_job"),
    (["status", "%2E%2E"], "unknown_job"),
    (["result", "../../v1/ledger?"], "unknown_job"),
    (["result", "..%2Fbudget"], "unknown_job"),
    (["cancel", "../jobs"], "unknown_job"),
    (["dummy", "../../v1/jobs?"], "unknown_dataset"),
    (["dummy", ".."], "unknown_dataset"),
    (["dummy", "tiny?rows=1"], "unknown_dataset"),
])
def test_a_job_id_or_dataset_name_reaches_no_other_endpoint(served: dict[str, Any], args: list[str], code: str
                                                            ) -> None:
    expect_refusal(served["remote"] + args, code)


def test_ids_are_sent_escaped(served: dict[str, Any]) -> None:
    import httpx

    from dprm.client import Client, RemoteError

    seen: list[bytes] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.raw_path)
        return httpx.Response(404, json={"error": {"code": "unknown_job", "message": "no such job"}})

    with Client("http://127.0.0.1:9", "t", transport=httpx.MockTransport(answer), retries=0) as client:
        for job in ("x?y=1#z", "%2E%2E", "a b"):
            with pytest.raises(RemoteError, match="unknown_job"):
                client.result(job)
    assert seen == [b"/v1/jobs/x%3Fy%3D1%23z/result", b"/v1/jobs/%252E%252E/result", b"/v1/jobs/a%20b/result"]


# -- 5. --output: checked first, written all or nothing -------------------------------------------------------


def test_an_output_that_is_a_directory_leaves_nothing_and_spends_nothing(served: dict[str, Any],
                                                                         tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    expect_refusal(served["remote"] + ["dummy", "tiny", "--rows", "2", "--output", tmp_path / "sub"],
                   "--output", "is a directory")
    before = spent(served)
    expect_refusal(served["remote"] + ["stats", "tiny", "--left", LEFT, "--right", '{"attr": "x", "le": 50}',
                                       "--epsilon", "0.1", "--output", tmp_path / "sub"], "--output")
    assert spent(served) == before
    assert [p.name for p in tmp_path.iterdir()] == ["sub"] and list((tmp_path / "sub").iterdir()) == []


def test_a_failed_write_of_the_answer_leaves_no_part(tmp_path: Path) -> None:
    from dprm.cli.remote import _emit

    (tmp_path / "sub").mkdir()
    with pytest.raises(ParameterError, match="--output"):
        _emit({"rows": []}, tmp_path / "sub")
    assert [p.name for p in tmp_path.iterdir()] == ["sub"] and list((tmp_path / "sub").iterdir()) == []
    _emit({"rows": []}, tmp_path / "out.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "sub"]


def test_budget_of_an_analyst_without_any_says_so(served: dict[str, Any]) -> None:
    """An analyst the owner has granted nothing yet got no output at all from ``dprm remote budget``."""
    db = str(served["folder"] / "server.db")
    code, token, err = run(["admin", "--db", db, "analyst", "add", "carol"])
    assert code == 0, err
    (served["folder"] / "carol.token").write_text(token)
    remote = ["remote", "--url", served["url"], "--token-file", served["folder"] / "carol.token"]
    code, out, err = run([*remote, "budget"])
    assert code == 0 and out == ""
    assert err == "note: no budget on any dataset yet: the data owner grants them (dprm admin budget set)\n"
    code, out, _ = run([*remote, "budget", "--json"])
    assert code == 0 and json.loads(out) == []


def test_remote_jobs_lists_the_analysts_jobs_newest_first_and_checks_its_limit(served: dict[str, Any]) -> None:
    """``dprm remote jobs``: the analyst's jobs as the API lists them (a job id of a timed-out wait is no
    longer the only way back to a job)."""
    import json

    code, out, err = run([*served["remote"], "submit", "tiny", "--algorithm", "alt-expm", "--epsilon", "0.01"])
    assert code == 0, err
    job = out.split()[0]
    code, out, err = run([*served["remote"], "jobs", "--limit", "1"])
    assert code == 0, err
    listed = json.loads(out)
    assert [j["id"] for j in listed] == [job] and listed[0]["dataset"] == "tiny"
    for limit in ("0", "501", "-3"):
        expect_refusal([*served["remote"], "jobs", "--limit", limit], "--limit", "500", limit)
