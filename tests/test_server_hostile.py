"""Hostile inputs and faults at the server's edge (issue 32): NUL bytes, slow and token-less
requests, the API docs, a database the server cannot write.

The NUL walk runs on SQLite and on a throw-away PostgreSQL cluster
(:func:`server_support.postgres_cluster`) and compares the two answer for answer.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi")

from fastapi.routing import APIRoute  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from dprm.server.app import create_app  # noqa: E402
from dprm.server.database import Database  # noqa: E402
from dprm.server.owners import add_owner  # noqa: E402
from server_support import postgres_server, postgres_url, setup_server_db  # noqa: E402,F401


def _csrf(text: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', text)
    assert match, text[:500]
    return match.group(1)


def _clients(app: Any, tokens: dict[str, str]) -> dict[str, tuple[TestClient, dict[str, str]]]:
    """Who asks: nobody, an analyst's token, an analyst's web session, an owner's web session."""
    who: dict[str, tuple[TestClient, dict[str, str]]] = {
        "anonymous": (TestClient(app, base_url="http://127.0.0.1"), {}),
        "token": (TestClient(app, base_url="http://127.0.0.1"), {"Authorization": f"Bearer {tokens['alice']}"}),
    }
    for name, token in (("analyst-session", tokens["alice"]), ("owner-session", tokens["olga"])):
        client = TestClient(app, base_url="http://127.0.0.1")
        form = _csrf(client.get("/ui/signin").text)
        signed = client.post("/ui/signin", data={"csrf": form, "token": token}, follow_redirects=False)
        assert signed.status_code == 303, signed.text
        who[name] = (client, {})
    return who


def api_routes(routes: list[Any], prefix: str = "") -> Iterator[tuple[str, APIRoute]]:
    """(full path, route) of every endpoint, also those of included routers."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield prefix + route.path, route
        elif hasattr(route, "original_router"):  # an included router (FastAPI >= 0.16x)
            yield from api_routes(route.original_router.routes, prefix + route.include_context.prefix)
        elif hasattr(route, "routes") and hasattr(route, "path"):  # a mount
            yield from api_routes(route.routes or [], prefix + route.path)


def _nul_requests(app: Any) -> list[tuple[str, str, str]]:
    """(method, url, what) for every route: a NUL in each path parameter and each query parameter."""
    requests = []
    for path, route in api_routes(app.routes):
        names = re.findall(r"{(\w+)(?::\w+)?}", path)
        base = {name: ("1" if name.endswith("id") else "tiny") for name in names}
        for method in sorted(route.methods):
            for name in names:
                url = path
                for other, value in base.items():
                    url = re.sub(r"{%s(?::\w+)?}" % other, value + ("%00" if other == name else ""), url)
                requests.append((method, url, f"path {name}"))
            url = path
            for other, value in base.items():
                url = re.sub(r"{%s(?::\w+)?}" % other, value, url)
            query = [p.name for p in route.dependant.query_params]
            if path == "/ui/owner/audit":
                query += ["analyst", "action", "outcome"]
            if path == "/ui/owner/jobs":
                query += ["status"]
            for name in sorted(set(query)):
                requests.append((method, f"{url}?{name}=x%00", f"query {name}"))
            requests.append((method, f"{url}?x%00=1", "query name"))
    requests.append(("GET", "/v1/x%00", "unknown path"))
    requests.append(("GET", "/ui/x%00", "unknown page"))
    requests.append(("GET", "/ui/static/x%00", "static file"))
    return requests


def _walk(url: str, folder: Path) -> dict[tuple[str, str, str, str], int]:
    tokens = setup_server_db(url, folder)
    db = Database(url)
    with db.write() as connection:
        tokens["olga"] = add_owner(connection, "olga")
    db.dispose()
    app = create_app(url, background=False)
    answers = {}
    with TestClient(app):
        clients = _clients(app, tokens)
        for method, path, what in _nul_requests(app):
            for who, (client, headers) in clients.items():
                answer = client.request(method, path, headers=headers, follow_redirects=False)
                answers[(who, method, path, what)] = answer.status_code
    return answers


@pytest.fixture
def sqlite_answers(tmp_path: Path) -> dict[tuple[str, str, str, str], int]:
    (tmp_path / "s").mkdir()
    return _walk(str(tmp_path / "s" / "server.db"), tmp_path / "s")


def test_a_nul_byte_in_any_path_or_query_parameter_is_404_or_422_on_both_databases(
        sqlite_answers: dict, postgres_url: str, tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    postgres_answers = _walk(postgres_url, tmp_path / "p")
    assert len(sqlite_answers) > 100
    errors = {key: status for key, status in postgres_answers.items() if status >= 500}
    assert not errors, errors
    assert {k: v for k, v in sqlite_answers.items() if v >= 500} == {}
    differing = {key: (sqlite_answers[key], status) for key, status in postgres_answers.items()
                 if sqlite_answers[key] != status}
    assert not differing, differing
    # A NUL names nothing: 404, or 422 where it makes a parameter malformed (an API POST
    # without a token, sessions' too, is 401 before anything else is looked at).
    unexpected = {k: v for k, v in postgres_answers.items() if v not in (404, 422) and not (
        v == 401 and k[0] != "token" and k[1] == "POST" and k[2].startswith("/v1/"))}
    assert not unexpected, unexpected


# -- the API's documentation pages (item 5) --------------------------------------------------


def test_docs_pages_are_off_by_default_and_the_api_is_never_framed(tmp_path: Path) -> None:
    url = str(tmp_path / "server.db")
    setup_server_db(url, tmp_path)
    with TestClient(create_app(url, background=False)) as client:
        assert client.get("/docs").status_code == 404
        assert client.get("/redoc").status_code == 404
        schema = client.get("/openapi.json")
        assert schema.status_code == 200 and "/v1/jobs" in schema.json()["paths"]
        for answer in (schema, client.get("/health"), client.get("/v1/datasets")):
            assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
            assert answer.headers["x-frame-options"] == "DENY"
            assert answer.headers["x-content-type-options"] == "nosniff"
        page = client.get("/ui/signin")  # the pages keep their own policy
        assert "script-src 'self'" in page.headers["content-security-policy"]


def test_docs_pages_when_asked_load_pinned_scripts_under_a_strict_policy(tmp_path: Path) -> None:
    import base64
    import hashlib

    url = str(tmp_path / "server.db")
    setup_server_db(url, tmp_path)
    with TestClient(create_app(url, background=False, docs=True)) as client:
        for path in ("/docs", "/redoc"):
            page = client.get(path)
            assert page.status_code == 200
            policy = page.headers["content-security-policy"]
            assert "frame-ancestors 'none'" in policy and page.headers["x-frame-options"] == "DENY"
            scripts = re.findall(r'<script[^>]*src="([^"]+)"', page.text)
            assert scripts and all(re.match(r"https://cdn\.jsdelivr\.net/npm/[\w-]+@\d+\.\d+\.\d+/", s)
                                   for s in scripts), scripts
            assert "fastapi.tiangolo.com" not in page.text and "fonts.googleapis" not in page.text
            script_src = re.search(r"script-src ([^;]+)", policy).group(1)
            assert "'unsafe-inline'" not in script_src and "*" not in script_src
            for inline in re.findall(r"<script>(.*?)</script>", page.text, re.DOTALL):
                digest = base64.b64encode(hashlib.sha256(inline.encode()).digest()).decode()
                assert f"'sha256-{digest}'" in script_src


# -- a database the server cannot write (item 7) -------------------------------------------------

JOB = {"dataset": "tiny", "algorithm": "alt-expm", "epsilon": 1, "parameters": {"init_trials": 1, "depth": 2}}


def _read_only(url: str, folder: Path, *, queued_job: bool = False, check: bool = False) -> str:
    """Set ``url`` up (analysts alice and bob, a queued job if asked), then a URL of it that
    cannot be written: SQLite opened read-only, a PostgreSQL database whose transactions are."""
    tokens = setup_server_db(url, folder)
    with TestClient(create_app(url, background=False)) as client:
        if check:
            assert client.get("/health").status_code == 200
        if queued_job:
            answer = client.post("/v1/jobs", json=JOB, headers={"Authorization": f"Bearer {tokens['alice']}"})
            assert answer.status_code == 201, answer.text
    if url.startswith("postgresql"):
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://").rsplit("/", 1)[0] + "/postgres",
                             autocommit=True) as connection:
            connection.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
        return url
    return f"sqlite:///file:{url}?mode=ro&uri=true"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "server.db")
    return request.getfixturevalue("postgres_url")


def test_serve_refuses_a_database_it_cannot_write_with_one_line(db_url: str, tmp_path: Path) -> None:
    import subprocess

    from server_support import DPRM, free_port

    url = _read_only(db_url, tmp_path)
    run = subprocess.run(DPRM + ["serve", "--db", url, "--port", str(free_port()), "--workers", "0"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, (run.stdout, run.stderr)
    lines = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot be written" in lines[0], lines
    assert "Traceback" not in run.stderr


def test_health_reports_a_database_it_cannot_write(db_url: str, tmp_path: Path) -> None:
    url = _read_only(db_url, tmp_path, check=True)  # 200 while it can be written
    with TestClient(create_app(url, background=False)) as client:
        answer = client.get("/health")
        assert answer.status_code == 503, answer.text
        assert answer.json()["error"]["code"] == "database_unwritable"
        assert client.get("/health").status_code == 503  # the probe's answer, reused or probed again


def test_the_supervisor_logs_one_line_per_distinct_failure_with_back_off(
        db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import logging
    import threading

    from dprm.server.supervisor import Supervisor

    url = _read_only(db_url, tmp_path, queued_job=True)
    db = Database(url)
    supervisor = Supervisor(db, 1, poll=0.05, warm=False)
    caplog.set_level(logging.INFO, logger="dprm.server")
    thread = threading.Thread(target=supervisor._loop, daemon=True)
    thread.start()
    try:
        import time

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any("round failed" in r.getMessage() for r in caplog.records):
            time.sleep(0.05)
        time.sleep(2.0)  # 40 more rounds at the normal pace; with back-off at most 5
    finally:
        supervisor._stop.set()
        thread.join(timeout=30)
        db.dispose()
    failures = [r for r in caplog.records if "supervisor round failed" in r.getMessage()]
    assert len(failures) == 1, [r.getMessage() for r in failures]
    assert failures[0].exc_info is None and "\n" not in failures[0].getMessage()


# -- slow, token-less and huge requests (item 4) --------------------------------------------------


#: The body's deadline of :func:`served`: twice keep-alive's 1 s and more, so that a hang-up at keep-alive's
#: end is told apart from one at the body's deadline on a loaded machine too.
BODY_DEADLINE = 3.0


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """The API under uvicorn with dprm serve's limits, short deadlines: (port, tokens)."""
    import threading
    import time

    import uvicorn

    from dprm.server.limits import ConnectionLimits, uvicorn_config
    from server_support import free_port

    url = str(tmp_path / "server.db")
    tokens = setup_server_db(url, tmp_path)
    port = free_port()
    app = create_app(url, background=False, body_timeout=BODY_DEADLINE)
    server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", port, ConnectionLimits(header_timeout=1.5, keep_alive=1),
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield port, tokens
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _exchange(port: int, data: bytes, wait: float = 10.0) -> tuple[bytes, float]:
    """Send ``data`` and read until the server closes (or ``wait`` seconds): (answer, seconds)."""
    import socket
    import time

    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port)) as connection:
        connection.settimeout(wait)
        connection.sendall(data)
        received = b""
        try:
            while True:
                chunk = connection.recv(65536)
                if not chunk:
                    break
                received += chunk
        except (socket.timeout, ConnectionResetError):
            pass
    return received, time.monotonic() - start


def test_a_post_without_a_valid_token_is_401_before_its_body_is_read(served: tuple[int, dict]) -> None:
    port, _ = served
    # the first also stays connected: the server hangs up by itself within the time (at keep-alive's end,
    # 1 s); the others ask it to hang up once it has answered (Connection: close), 1 s sooner each
    for authorization in (b"", b"Authorization: Bearer not-a-token\r\nConnection: close\r\n",
                          b"Authorization: Basic eA==\r\nConnection: close\r\n"):
        head = (b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + authorization
                + b"Content-Length: 900000\r\n\r\n")
        answer, seconds = _exchange(port, head + b"[" * 10)  # the body never comes
        assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
        assert seconds < BODY_DEADLINE - 0.5, seconds  # at keep-alive's end, not at the body's deadline


def test_a_body_that_does_not_arrive_in_time_is_408(served: tuple[int, dict]) -> None:
    port, tokens = served
    head = (b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Authorization: Bearer " + tokens["alice"].encode() + b"\r\nContent-Length: 100\r\n\r\n")
    answer, seconds = _exchange(port, head + b'{"dataset": ')
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"request_timeout" in answer and seconds < BODY_DEADLINE + 3


def test_headers_that_do_not_arrive_in_time_close_the_connection(served: tuple[int, dict]) -> None:
    port, _ = served
    answer, seconds = _exchange(port, b"GET /health HTTP/1.1\r\nHost: x\r\n")  # never ends its headers
    assert answer == b"" and seconds < 5, (answer, seconds)
    answer, seconds = _exchange(port, b"")  # says nothing at all
    assert answer == b"" and seconds < 5, (answer, seconds)
    answer, _ = _exchange(port, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")  # a prompt one is answered
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]


def _walk_bodies(url: str, folder: Path) -> dict[tuple[str, str], int]:
    """A NUL in each text field of the API's JSON bodies and of the pages' forms."""
    tokens = setup_server_db(url, folder)
    db = Database(url)
    with db.write() as connection:
        tokens["olga"] = add_owner(connection, "olga")
    db.dispose()
    app = create_app(url, background=False)
    nul = "x\x00"
    answers = {}
    with TestClient(app):
        clients = _clients(app, tokens)
        api, headers = clients["token"]
        for path, body in (
                ("/v1/jobs", {**JOB, "dataset": nul}), ("/v1/jobs", {**JOB, "algorithm": nul}),
                ("/v1/jobs", {**JOB, "idempotency_key": nul}), ("/v1/jobs", {**JOB, "epsilon": nul}),
                ("/v1/jobs", {**JOB, "parameters": {nul: 1}}),
                ("/v1/primitives/redescription-statistics",
                 {"dataset": nul, "epsilon": "0.1", "left": {"attr": "a", "eq": True}, "right": {"attr": "b", "eq": True}}),
                ("/v1/primitives/redescription-statistics",
                 {"dataset": "tiny", "epsilon": "0.1", "left": {"attr": nul, "eq": True}, "right": {"attr": "b", "eq": True}}),
                ("/v1/primitives/redescription-statistics",
                 {"dataset": "tiny", "epsilon": "0.1", "left": "a = " + nul, "right": "b"})):
            answers[(path, repr(body))] = api.post(path, json=body, headers=headers).status_code
        for who, path, form in (
                ("anonymous", "/ui/signin", {"token": nul}),
                ("analyst-session", "/ui/datasets/tiny/jobs", {**JOB, "dataset": "tiny", "algorithm": nul}),
                ("analyst-session", "/ui/datasets/tiny/statistics", {"left": nul, "right": "b", "epsilon": "0.1"}),
                ("owner-session", "/ui/owner/analysts", {"name": nul}),
                ("owner-session", "/ui/owner/budgets", {"analyst": nul, "dataset": "tiny", "epsilon": "1"}),
                ("owner-session", "/ui/owner/budgets", {"analyst": "alice", "dataset": nul, "epsilon": "1"}),
                ("owner-session", "/ui/owner/datasets", {"name": nul, "left": nul, "right": "r", "types": "t"})):
            client, _ = clients[who]
            page = client.get("/ui/owner" if who == "owner-session" else "/ui/datasets/tiny"
                              if who == "analyst-session" else "/ui/signin")
            fields = {k: str(v) for k, v in form.items()}
            answers[(path, repr(fields))] = client.post(path, data=fields | {"csrf": _csrf(page.text)},
                                                        follow_redirects=False).status_code
    return answers


def test_a_nul_character_in_a_body_field_is_answered_alike_on_both_databases(
        postgres_url: str, tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "p").mkdir()
    sqlite = _walk_bodies(str(tmp_path / "s" / "server.db"), tmp_path / "s")
    postgres = _walk_bodies(postgres_url, tmp_path / "p")
    assert not {k: v for k, v in postgres.items() if v >= 500}, postgres
    assert postgres == sqlite
    assert set(postgres.values()) == {422}, postgres  # refused before anything is read


# -- several API processes on one database (beyond the list) ------------------------------------


def test_several_api_processes_share_the_address_the_jobs_and_one_rate_limit(db_url: str, tmp_path: Path) -> None:
    import time

    import httpx

    from server_support import Served, alive, children

    tokens = setup_server_db(db_url, tmp_path)
    with Served(db_url, workers=1, extra=["--processes", "2", "--rate", "2", "--burst", "4"]) as server:
        own = Path(f"/proc/{server.process.pid}/cmdline").read_bytes()
        apis = [pid for pid in children(server.process.pid) if Path(f"/proc/{pid}/cmdline").read_bytes() == own]
        assert len(apis) == 2
        headers = {"Authorization": f"Bearer {tokens['alice']}"}
        start = time.monotonic()
        statuses = []
        for _ in range(30):  # a new connection each: the kernel spreads them over both processes
            with httpx.Client(base_url=server.url, headers=headers, timeout=30) as client:
                statuses.append(client.get("/v1/budget").status_code)
        elapsed = time.monotonic() - start
        allowed = statuses.count(200)
        assert set(statuses) <= {200, 429}
        # one bucket for both processes: its burst of 4, never more than the whole server's 4 + 2/s
        assert 4 <= allowed <= 4 + 2 * elapsed, (allowed, elapsed)
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {tokens['bob']}"}) as client:
            # one connection stays on one process and still gets the whole burst (not half of it)
            assert [client.get("/v1/budget").status_code for _ in range(4)] == [200] * 4
            time.sleep(2.0)  # the bucket refills for the job's submission
            job = client.post("/v1/jobs", json=JOB)
            assert job.status_code == 201, job.text
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                answer = client.get(f"/v1/jobs/{job.json()['id']}")
                if answer.status_code == 200 and answer.json()["status"] in ("done", "failed"):
                    break
                time.sleep(1.0)
            assert answer.json()["status"] == "done", answer.text
        server.stop()
        assert not any(alive(pid) for pid in apis)


def test_a_database_error_while_the_token_of_a_post_is_checked_is_503(tmp_path: Path) -> None:
    from sqlalchemy.exc import OperationalError

    url = str(tmp_path / "server.db")
    tokens = setup_server_db(url, tmp_path)
    app = create_app(url, background=False)

    async def down(work: Any) -> Any:
        raise OperationalError("SELECT", {}, Exception("the server is gone"))

    with TestClient(app) as client:
        app.state.db.aread = down
        answer = client.post("/v1/jobs", json=JOB, headers={"Authorization": f"Bearer {tokens['alice']}"})
        assert answer.status_code == 503 and answer.json()["error"]["code"] == "database_unavailable"


def test_pipelined_requests_are_all_answered_within_the_header_deadline(served: tuple[int, dict]) -> None:
    port, _ = served
    one = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    answer, _ = _exchange(port, one * 3)
    assert answer.count(b"HTTP/1.1 200") == 3, answer[:500]
