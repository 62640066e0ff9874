"""Faults of the secured server found by a fuzzing round, each pinned by a test.

- API processes of ``dprm serve --processes N`` end with their parent, even when it is
  killed by SIGKILL (they went on serving on the address for ever).
- Jobs still running in a previous server's workers hold ``--workers`` slots after a
  restart (``--workers 1`` ran the orphan and a new job at once).
- A dataset removed and registered again under its name: the analyst's ledger, job
  list and ledger page label the old registration's rows ``NAME (removed)``, so that
  each name's rows add up to one registration's spent budget.
- An ε sent as a JSON number is read exactly as written: ``0.10000000000000001`` is
  refused as the same string is (it was charged 0.1), ``1e-400`` quoted as sent.
- ``/v1/ledger`` and ``/v1/jobs`` page by a cursor (``?before=``, the answer's ``next``
  and ``truncated``): they cut the list at 1000 and 500 rows silently; the client
  reads every page.
- A ledger row's ``charge`` is the charge's place in the analyst's own list: it was the
  server's id, shared by all analysts, whose gaps counted the others' requests.
- An unknown query parameter of an API route is refused (``422 invalid_request``): it
  was ignored (``/v1/jobs?status=running`` answered every job).
- ``HEAD`` is answered as ``GET`` without a body, a 405 names the address's methods
  in ``Allow``, an API 401 says ``WWW-Authenticate: Bearer``.
- A web form's field sent twice is refused (``422 invalid_request``), never read as its
  last value.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

import re
import subprocess
from fractions import Fraction
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402
from sqlalchemy import select  # noqa: E402

from dprm.server import accounts, budget, jobs  # noqa: E402
from dprm.server.app import create_app  # noqa: E402
from dprm.server.database import Database  # noqa: E402
from dprm.server.datasets import register_dataset, remove_dataset  # noqa: E402
from dprm.server.supervisor import Supervisor  # noqa: E402
from dprm.server.tables import datasets as tables_datasets  # noqa: E402
from dprm.server.tables import jobs as jobs_table  # noqa: E402
from server_support import Served, alive, children, setup_server_db, submit_small_job, tiny_views  # noqa: E402

STATS = {"dataset": "tiny", "epsilon": "0.25", "left": {"attr": "a", "eq": True}, "right": {"attr": "b", "eq": True}}


def _wait_for(condition, seconds: float) -> bool:
    """Poll ``condition`` until it holds or ``seconds`` have passed (a bound, not a timing)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


# -- F1: API processes end with their parent -----------------------------------------------------


def test_api_processes_stop_when_their_parent_is_killed(tmp_path: Path) -> None:
    url = str(tmp_path / "server.db")
    setup_server_db(url, tmp_path)
    server = Served(url, workers=1, extra=["--processes", "2"]).start()
    apis: list[int] = []
    try:
        own = Path(f"/proc/{server.process.pid}/cmdline").read_bytes()
        apis = [pid for pid in children(server.process.pid) if Path(f"/proc/{pid}/cmdline").read_bytes() == own]
        assert len(apis) == 2
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=30)
        assert _wait_for(lambda: not any(alive(pid) for pid in apis), 60), "the API processes outlived their parent"
        with socket.socket() as probe:  # the address is free for the next server
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", server.port))
    finally:
        for pid in apis:  # the old code's orphans: never leave them serving
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        server.stop()


# -- F2: a previous server's running jobs hold worker slots ----------------------------------------


def _status(db: Database, job_id: int) -> str:
    with db.read() as connection:
        return connection.execute(select(jobs_table.c.status).where(jobs_table.c.id == job_id)).scalar_one()


def test_a_previous_servers_running_job_holds_a_worker_slot_until_it_ends(tmp_path: Path) -> None:
    url = str(tmp_path / "server.db")
    setup_server_db(url, tmp_path)
    db = Database(url)
    orphan = subprocess.Popen(["sleep", "600"], start_new_session=True)  # the dead server's worker, still running
    supervisor = Supervisor(db, workers=1, warm=False)
    try:
        first, second = submit_small_job(db), submit_small_job(db)
        claimed = jobs.claim_next(db, "old-token")
        assert claimed.id == first
        jobs.set_pid(db, first, "old-token", orphan.pid)
        supervisor.recover()  # the new server starts: the orphan's job runs on
        supervisor.round()
        assert _status(db, first) == "running"
        assert _status(db, second) == "queued" and not supervisor.processes  # one slot, taken by the orphan
        orphan.kill()
        orphan.wait(timeout=10)
        supervisor.round()  # the orphan's job fails (its worker is gone): the slot is free
        assert _status(db, first) == "failed"
        assert _status(db, second) == "running" and list(supervisor.processes) == [second]
    finally:
        supervisor.stop(kill_workers=True)
        if orphan.poll() is None:
            orphan.kill()
            orphan.wait(timeout=10)
        db.dispose()


def test_another_machines_worker_is_judged_by_its_heartbeat_not_by_a_pid_here(tmp_path: Path) -> None:
    """Two `dprm serve` on two machines share a PostgreSQL database (docs/server.md). The
    supervisor of one looked up the pid of the other's worker on its own machine, found
    no such process, and failed the job `worker_died` at its start and in every round
    (0.2 s): the job read its rows, so its ε was kept and its result thrown away. Now a
    worker's token names its machine (:func:`~dprm.server.supervisor.worker_token`) and
    another machine's worker is judged by its heartbeat alone."""
    from sqlalchemy import update

    url = str(tmp_path / "server.db")
    setup_server_db(url, tmp_path)
    db = Database(url)
    gone = subprocess.Popen(["true"])
    gone.wait(timeout=10)  # a pid that names no process on this machine
    supervisor = Supervisor(db, workers=0, warm=False)
    try:
        remote, local = submit_small_job(db), submit_small_job(db)
        elsewhere = "0" * 32 + "@feedc0de"  # a token of the other machine's supervisor (worker_token("feedc0de"))
        for job, token in ((remote, elsewhere), (local, "local-token")):
            assert jobs.claim_next(db, token).id == job
            jobs.set_pid(db, job, token, gone.pid)
            assert jobs.touch(db, job, token)  # both have read rows: a failure keeps the charge
        supervisor.recover()  # this server starts
        assert _status(db, remote) == "running"
        assert _status(db, local) == "failed"  # its pid is this machine's: the worker is gone
        jobs.heartbeat(db, remote, elsewhere)
        supervisor.round()
        assert _status(db, remote) == "running"  # alive on its machine: it publishes its result there
        with db.write() as connection:  # then silent for longer than stale_after: dead
            connection.execute(update(jobs_table).where(jobs_table.c.id == remote).values(
                heartbeat_at=time.time() - 2 * supervisor.stale_after))
        supervisor.round()
        assert _status(db, remote) == "failed"
    finally:
        supervisor.stop(kill_workers=True)
        db.dispose()


def test_a_heartbeat_the_database_could_not_take_is_not_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker's last heartbeat is older than ``stale_after`` because the database was down
    (a PostgreSQL restart that took two minutes): the supervisor, whose own rounds failed
    meanwhile, judged it stale in its first round after the outage, before the worker's
    next heartbeat could land, and failed the job ``worker_died``: its ε kept, its result
    (perhaps being published right then) thrown away. Now no heartbeat is stale until
    ``stale_after`` seconds after the supervisor last found the database unavailable."""
    import threading

    from sqlalchemy import update
    from sqlalchemy.exc import OperationalError

    url = str(tmp_path / "server.db")
    setup_server_db(url, tmp_path)
    db = Database(url)
    job = submit_small_job(db)
    token = "0" * 32 + "@feedc0de"  # another machine's worker (or a previous server's): judged by its heartbeat
    assert jobs.claim_next(db, token).id == job
    jobs.set_pid(db, job, token, 4242)
    assert jobs.touch(db, job, token)
    with db.write() as connection:  # its last heartbeat landed just before a two-minute outage
        connection.execute(update(jobs_table).where(jobs_table.c.id == job).values(heartbeat_at=time.time() - 120))
    real = jobs.running_jobs
    rounds: list[int] = []

    def through_an_outage(connection: Any) -> Any:
        rounds.append(1)
        if len(rounds) <= 2:
            raise OperationalError("SELECT jobs ...", {}, Exception("server closed the connection unexpectedly"))
        return real(connection)

    monkeypatch.setattr(jobs, "running_jobs", through_an_outage)
    supervisor = Supervisor(db, workers=0, warm=False, poll=0.01, stale_after=30.0)
    loop = threading.Thread(target=supervisor._loop, daemon=True)
    loop.start()
    try:
        deadline = time.monotonic() + 30
        while len(rounds) < 6:  # two failed rounds, then four that reached the database
            assert time.monotonic() < deadline, "the supervisor did not go round"
            time.sleep(0.01)
    finally:
        supervisor._stop.set()
        loop.join(timeout=30)
    assert _status(db, job) == "running"
    Supervisor(db, workers=0, warm=False, stale_after=30.0).round()  # one that saw no outage: stale, dead
    assert _status(db, job) == "failed"
    db.dispose()


# -- in-process apps ---------------------------------------------------------------------------------


@pytest.fixture
def app_client(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str], str]]:
    """An app without supervisor on a fresh SQLite database: (client, alice's headers, url)."""
    url = str(tmp_path / "server.db")
    tokens = setup_server_db(url, tmp_path)
    with TestClient(create_app(url, background=False, rate=1000.0, burst=1000)) as client:
        yield client, {"Authorization": f"Bearer {tokens['alice']}"}, url


def _sign_in(client: TestClient, token: str) -> None:
    form = re.search(r'name="csrf" value="([^"]+)"', client.get("/ui/signin").text).group(1)
    signed = client.post("/ui/signin", data={"csrf": form, "token": token}, follow_redirects=False)
    assert signed.status_code == 303, signed.text


# -- F3: a removed registration's rows are labelled apart ---------------------------------------------


def test_a_removed_registrations_rows_are_labelled_apart_and_each_name_adds_up(
        app_client: tuple[TestClient, dict[str, str], str], tmp_path: Path) -> None:
    client, alice, url = app_client
    assert client.post("/v1/primitives/redescription-statistics", json=STATS, headers=alice).status_code == 200
    job = client.post("/v1/jobs", headers=alice, json={"dataset": "tiny", "algorithm": "alt-expm", "epsilon": "0.5",
                                                       "parameters": {"init_trials": 1, "depth": 2}})
    assert job.status_code == 201, job.text
    db = Database(url)
    try:
        with db.write() as connection:
            remove_dataset(connection, "tiny", force=True)  # the queued job ends failed, refunded
        (tmp_path / "again").mkdir()
        register_dataset(db, "tiny", *tiny_views(tmp_path / "again"))
        with db.write() as connection:
            new_id = connection.execute(select(tables_datasets.c.id).where(
                tables_datasets.c.active_name == "tiny")).scalar_one()
            budget.set_budget(connection, accounts.find_analyst(connection, "alice").id, new_id, 10**9)
    finally:
        db.dispose()
    assert client.post("/v1/primitives/redescription-statistics", json=dict(STATS, epsilon="0.125"),
                       headers=alice).status_code == 200
    rows = client.get("/v1/ledger", headers=alice).json()["ledger"]
    sums: dict[str, Fraction] = {}
    for row in rows:
        sums[row["dataset"]] = sums.get(row["dataset"], Fraction(0)) + Fraction(row["epsilon_exact"])
    spent = client.get("/v1/budget?dataset=tiny", headers=alice).json()["budgets"][0]["exact"]["spent"]
    assert sums == {"tiny": Fraction(1, 8), "tiny (removed)": Fraction(1, 4)}
    assert sums["tiny"] == Fraction(spent)
    assert {r["dataset"] for r in client.get("/v1/ledger?dataset=tiny", headers=alice).json()["ledger"]} == {"tiny"}
    listed = client.get("/v1/jobs", headers=alice).json()["jobs"]
    assert [j["dataset"] for j in listed] == ["tiny (removed)"]
    assert client.get(f"/v1/jobs/{job.json()['id']}", headers=alice).json()["dataset"] == "tiny (removed)"
    _sign_in(client, alice["Authorization"].split()[1])
    page = client.get("/ui/ledger")
    assert page.status_code == 200
    totals = re.search(r"<caption>Per dataset</caption>(.*?)</table>", page.text, re.S).group(1)
    # each name's charges (not given back) beside its registration's spent budget: equal
    found = {re.sub(r"<[^>]+>", "", name): (charged, spent)
             for name, charged, spent in re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td>", totals, re.S)}
    assert found == {"tiny": ("0.125", "0.125"), "tiny (removed)": ("0.25", "0.25")}, found


# -- F5: an epsilon sent as a JSON number is read exactly as written ------------------------------------


def test_an_epsilon_sent_as_a_json_number_is_read_as_written(app_client: tuple[TestClient, dict[str, str], str]
                                                             ) -> None:
    client, alice, _ = app_client
    headers = dict(alice, **{"Content-Type": "application/json"})

    def dry_run(epsilon: bytes) -> Any:
        body = (b'{"dataset": "tiny", "epsilon": ' + epsilon + b', "left": {"attr": "a", "eq": true}, '
                b'"right": {"attr": "b", "eq": true}, "dry_run": true, "confidence": 0.9}')
        return client.post("/v1/primitives/redescription-statistics", content=body, headers=headers)

    as_number, as_text = dry_run(b"0.10000000000000001"), dry_run(b'"0.10000000000000001"')
    assert as_number.status_code == as_text.status_code == 422
    assert as_number.json() == as_text.json()
    assert as_number.json()["error"]["code"] == "invalid_epsilon"
    assert "0.10000000000000001" in as_number.json()["error"]["message"]
    tiny = dry_run(b"1e-400")
    assert tiny.status_code == 422 and tiny.json()["error"]["code"] == "invalid_epsilon"
    assert "1e-400" in tiny.json()["error"]["message"] and "0.0" not in tiny.json()["error"]["message"]
    for written in (b"0.25", b"2.5e-1", b"0.250"):  # numbers that are a multiple of 1e-9: exact, as before
        answer = dry_run(written)
        assert answer.status_code == 200 and answer.json()["cost_exact"] == "0.25", answer.text
    job = client.post("/v1/jobs", headers=headers, content=b'{"dataset": "tiny", "algorithm": "alt-expm", '
                      b'"epsilon": 0.30000000000000004, "parameters": {"init_trials": 1}, "dry_run": true}')
    assert job.status_code == 422 and job.json()["error"]["code"] == "invalid_epsilon"


# -- F7: a web form's repeated field is refused ----------------------------------------------------------


def test_a_repeated_field_of_a_web_form_is_refused_and_nothing_is_done(
        app_client: tuple[TestClient, dict[str, str], str]) -> None:
    client, alice, url = app_client
    _sign_in(client, alice["Authorization"].split()[1])
    form = re.search(r'name="csrf" value="([^"]+)"', client.get("/ui/datasets/tiny").text).group(1)
    remaining = client.get("/v1/budget?dataset=tiny", headers=alice).json()["budgets"][0]["exact"]["remaining"]
    posts = [
        ("/ui/datasets/tiny/jobs", "algorithm=alt-expm&epsilon=0.01&epsilon=0.03&action=run"),
        ("/ui/datasets/tiny/cost", "algorithm=alt-expm&epsilon=0.01&epsilon=0.03"),
        ("/ui/datasets/tiny/statistics", "left=[a]&left=[state = CA]&right=[b]&epsilon=0.01&action=run"),
        ("/ui/datasets/tiny/jobs", "algorithm=alt-expm&algorithm=alt-mcmc&epsilon=0.01&action=run"),
    ]
    for path, body in posts:
        answer = client.post(path, content=f"csrf={form}&{body}".encode(), follow_redirects=False,
                             headers={"Content-Type": "application/x-www-form-urlencoded",
                                      "Sec-Fetch-Site": "same-origin"})
        assert answer.status_code == 422, (path, body, answer.status_code, answer.text[:300])
        assert "more than once" in answer.text
    assert client.get("/v1/jobs", headers=alice).json()["jobs"] == []
    assert client.get("/v1/budget?dataset=tiny", headers=alice).json()["budgets"][0]["exact"]["remaining"] \
        == remaining
    signin = TestClient(client.app)
    token = re.search(r'name="csrf" value="([^"]+)"', signin.get("/ui/signin").text).group(1)
    twice = signin.post("/ui/signin", data={"csrf": token, "token": [alice["Authorization"].split()[1], "x"]},
                        follow_redirects=False)
    assert twice.status_code == 422 and "more than once" in twice.text


# -- F4: the ledger and the job list page by a cursor ----------------------------------------------------


def test_the_ledger_and_the_jobs_are_read_page_by_page_and_the_client_reads_them_all(
        app_client: tuple[TestClient, dict[str, str], str]) -> None:
    from dprm.client import Client

    client, alice, _ = app_client
    for index in range(5):
        epsilon = f"0.00{index + 1}"
        assert client.post("/v1/primitives/redescription-statistics", json=dict(STATS, epsilon=epsilon),
                           headers=alice).status_code == 200
        job = dict(dataset="tiny", algorithm="alt-expm", epsilon=epsilon, parameters={"init_trials": 1})
        assert client.post("/v1/jobs", json=job, headers=alice).status_code == 201
    whole = client.get("/v1/ledger", headers=alice).json()
    assert len(whole["ledger"]) == 5 and whole["next"] is None and whole["truncated"] is False
    first = client.get("/v1/ledger?limit=2", headers=alice).json()
    assert first["ledger"] == whole["ledger"][:2] and first["truncated"] is True
    # a release made meanwhile is newer than every row shown: the cursor still reads on from there
    assert client.post("/v1/primitives/redescription-statistics", json=dict(STATS, epsilon="0.5"),
                       headers=alice).status_code == 200
    rows, cursor = list(first["ledger"]), first["next"]
    while cursor is not None:
        page = client.get(f"/v1/ledger?limit=2&before={cursor}", headers=alice).json()
        assert page["truncated"] is (page["next"] is not None)
        rows += page["ledger"]
        cursor = page["next"]
    assert rows == whole["ledger"]
    listed = client.get("/v1/jobs", headers=alice).json()
    assert len(listed["jobs"]) == 5 and listed["next"] is None
    page = client.get("/v1/jobs?limit=3", headers=alice).json()
    rest = client.get(f"/v1/jobs?limit=3&before={page['next']}", headers=alice).json()
    assert page["jobs"] + rest["jobs"] == listed["jobs"] and rest["next"] is None and page["truncated"] is True
    with Client("http://testserver", alice["Authorization"].split()[1], transport=client._transport,
                retries=0) as remote:
        ledger = remote.ledger(page_size=2)
        assert [r["epsilon_exact"] for r in ledger] == ["0.5", "0.005", "0.004", "0.003", "0.002", "0.001"]
        assert remote.jobs(None, page_size=2) == listed["jobs"]
        assert remote.jobs(4, page_size=3) == listed["jobs"][:4]


def test_a_ledger_row_names_its_charge_by_its_place_in_the_analysts_own_list(tmp_path: Path) -> None:
    # The charges' ids are shared by every analyst: shown as they were, the gaps between
    # alice's ids counted bob's requests made between hers.
    url = str(tmp_path / "server.db")
    tokens = setup_server_db(url, tmp_path)
    alice, bob = ({"Authorization": f"Bearer {tokens[name]}"} for name in ("alice", "bob"))
    with TestClient(create_app(url, background=False, rate=1000.0, burst=1000)) as client:
        def ledger_of(who: dict[str, str], bob_requests: int) -> list[Any]:
            for _ in range(bob_requests):
                assert client.post("/v1/primitives/redescription-statistics", json=dict(STATS, epsilon="0.01"),
                                   headers=bob).status_code == 200
            for _ in range(3):
                assert client.post("/v1/primitives/redescription-statistics", json=dict(STATS, epsilon="0.01"),
                                   headers=who).status_code == 200
                for _ in range(bob_requests):
                    assert client.post("/v1/primitives/redescription-statistics",
                                       json=dict(STATS, epsilon="0.01"), headers=bob).status_code == 200
            rows = client.get("/v1/ledger", headers=who).json()["ledger"]
            return [row["charge"] for row in rows]

        assert ledger_of(alice, 0) == [3, 2, 1]
        # three more of alice's, each after four of bob's: her list reads on, 4 to 6, as it would alone
        assert ledger_of(alice, 4) == [6, 5, 4, 3, 2, 1]
        assert [row["charge"] for row in client.get("/v1/ledger?limit=2&before=3", headers=alice).json()["ledger"]] \
            == [2, 1]
        assert client.get("/v1/ledger", headers=bob).json()["ledger"][0]["charge"] == 16


# -- F8: an unknown query parameter of the API is refused -----------------------------------------------


def test_an_unknown_query_parameter_of_the_api_is_refused(app_client: tuple[TestClient, dict[str, str], str]
                                                          ) -> None:
    client, alice, _ = app_client
    for path, name in (("/v1/jobs?status=running", "status"), ("/v1/budget?datset=tiny", "datset"),
                       ("/v1/datasets/tiny/dummy?rows=20&format=csv", "format"), ("/v1/algorithms?x=1", "x"),
                       ("/v1/ledger?dataset=tiny&limits=5", "limits")):
        answer = client.get(path, headers=alice)
        assert answer.status_code == 422, (path, answer.text)
        assert answer.json()["error"]["code"] == "invalid_request"
        assert f"unknown query parameter '{name}'" in answer.json()["error"]["message"]
    assert client.post("/v1/jobs?dry=1", headers=alice, json={}).status_code == 422
    for path in ("/v1/budget?dataset=tiny", "/v1/datasets/tiny/dummy?rows=20&seed=1", "/v1/jobs?limit=2",
                 "/v1/ledger?dataset=tiny&limit=5"):
        assert client.get(path, headers=alice).status_code == 200, path


# -- F6: HEAD, Allow, WWW-Authenticate -------------------------------------------------------------------


def test_head_is_a_get_without_body_405_says_allow_and_401_says_bearer(
        app_client: tuple[TestClient, dict[str, str], str]) -> None:
    client, alice, _ = app_client
    for path in ("/health", "/v1/budget", "/v1/jobs", "/openapi.json"):
        got, head = client.get(path, headers=alice), client.head(path, headers=alice)
        assert head.status_code == got.status_code == 200, path
        assert head.content == b"" and head.headers["content-length"] == str(len(got.content))
    assert client.put("/v1/budget", headers=alice).headers["allow"] == "GET, HEAD"
    refused = client.delete("/v1/jobs", headers=alice)
    assert refused.status_code == 405 and refused.json()["error"]["code"] == "method_not_allowed"
    assert refused.headers["allow"] == "GET, HEAD, POST"
    for answer in (client.get("/v1/budget"), client.get("/v1/budget", headers={"Authorization": "Bearer nope"}),
                   client.post("/v1/jobs", json={})):
        assert answer.status_code == 401 and answer.headers["www-authenticate"] == "Bearer", answer.text
