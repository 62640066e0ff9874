"""The analyst's client and ``dprm remote`` when the network or the server misbehaves.

Each case comes from a fuzzing round against fake servers: an answer lost after a
charged request was sent (a read timeout, a dropped connection, Ctrl-C, SIGTERM) was
reported as "cannot reach the server" though ε was charged; ``submit --wait`` hid the
job id and ended on the first hiccup of a restarting server; a repeated JSON key, a
``Retry-After`` date, an answer of the wrong shape and bad arguments of the client
crashed or were misread. The servers here are small fakes (:class:`Fake`) on
127.0.0.1 that stop with their test.
"""

from __future__ import annotations

import email.utils
import json
import math
import os
import signal
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

import pytest

httpx = pytest.importorskip("httpx")

from dprm.client import Client, RemoteError, retry_after  # noqa: E402
from dprm.errors import ParameterError  # noqa: E402
from server_support import DPRM, free_port  # noqa: E402
from test_cli import assert_one_error_line, run  # noqa: E402

LEFT, RIGHT = '{"attr": "a", "eq": true}', '{"attr": "x", "le": 50}'
JOB = {"id": "job_1", "status": "queued", "epsilon": 0.1, "epsilon_exact": "0.1", "dummy": False}
RESULT = {"format": "dprm.redescriptions/1", "redescriptions": []}


def error_body(code: str, message: str = "m") -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


class Fake:
    """A small HTTP server on 127.0.0.1: ``answer(method, path, hits)`` says what each request gets.

    An answer is ``(status, body, headers)`` (a body that is not bytes or text is sent as
    JSON), ``"hang"`` (no answer until the test ends) or ``"drop"`` (the connection is
    closed after the request was read). ``hits`` lists ``(method, path)`` of the requests
    so far; ``arrived`` is set by the first one.
    """

    def __init__(self, answer: Callable[[str, str, list], Any], port: int | None = None) -> None:
        self.answer = answer
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.hits: list[tuple[str, str]] = []
        self.arrived = threading.Event()
        self.release = threading.Event()
        self.connections: list[socket.socket] = []

    def __enter__(self) -> "Fake":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                fake.connections.append(self.connection)

            def handle_any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                fake.hits.append((self.command, self.path))
                fake.arrived.set()
                what = fake.answer(self.command, self.path, fake.hits)
                if what == "hang":
                    fake.release.wait(60)
                    self.close_connection = True
                    return
                if what == "drop":
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                status, body, headers = what
                data = body if isinstance(body, bytes) else (body if isinstance(body, str) else json.dumps(body)
                                                             ).encode()
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = handle_any

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
        for connection in self.connections:  # as a server that stops: kept-alive connections end too
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.thread.join(timeout=10)


def ok(body: Any, status: int = 200, **headers: str) -> tuple[int, Any, dict[str, str]]:
    return status, body, headers


@pytest.fixture
def token(tmp_path: Path) -> Path:
    path = tmp_path / "alice.token"
    path.write_text("dprm_1_secret\n")
    return path


def remote(url: str, token: Path, *args: Any) -> list[Any]:
    return ["remote", "--url", url, "--token-file", token, *args]


def stats_args(*extra: str) -> list[str]:
    return ["stats", "tiny", "--left", LEFT, "--right", RIGHT, "--epsilon", "0.1", *extra]


# -- F2: an answer lost after a charged request was sent ------------------------------------------------------


def test_a_lost_answer_is_told_from_an_unreachable_server_and_a_charged_one_names_the_ledger(token: Path) -> None:
    """Every transport error was "cannot reach the server (unreachable)", also a read timeout after ε was
    charged. Now: a connection refused says nothing was sent; an answer lost after sending says so, and for a
    charged request that it may have been charged and where to look."""
    port = free_port()  # nothing listens there
    with Client(f"http://127.0.0.1:{port}", "t", retries=0) as client:
        with pytest.raises(RemoteError, match="nothing was sent") as refused:
            client.redescription_statistics("tiny", {"attr": "a", "eq": True}, {"attr": "x", "le": 50}, 0.1)
    assert refused.value.code == "unreachable"

    def answer(method: str, path: str, hits: list) -> Any:
        return "drop" if path.startswith("/v1/jobs") else "hang"

    with Fake(answer) as fake, Client(fake.url, "t", timeout=0.5, retries=0) as client:
        query = ({"attr": "a", "eq": True}, {"attr": "x", "le": 50})
        with pytest.raises(RemoteError) as lost:
            client.redescription_statistics("tiny", *query, 0.1)
        assert lost.value.code == "no_answer"
        assert "was sent" in str(lost.value) and "0.5 s (ReadTimeout)" in str(lost.value)
        assert "may have been charged" in str(lost.value) and "dprm remote ledger" in str(lost.value)
        with pytest.raises(RemoteError) as dropped:  # the connection closed without an answer
            client.submit("tiny", "alt-expm", 0.1)
        assert dropped.value.code == "no_answer" and "may have been charged" in str(dropped.value)
        assert "dprm remote jobs" in str(dropped.value)
        for free in (lambda: client.budget(),
                     lambda: client.redescription_statistics("tiny", *query, 0.1, dry_run=True),
                     lambda: client.redescription_statistics("tiny", *query, 0.1, dummy=True)):
            with pytest.raises(RemoteError) as nothing_charged:
                free()
            assert nothing_charged.value.code == "no_answer" and "charged" not in str(nothing_charged.value)

    with Fake(lambda *a: "hang") as fake:
        code, out, err = run(remote(fake.url, token, "--request-timeout", "0.5", *stats_args()))
    assert code == 2 and out == ""
    assert_one_error_line(err, "was sent", "may have been charged", "dprm remote ledger", "(no_answer)")


def test_the_command_line_waits_longer_for_an_answer_than_a_server_lets_a_primitive_run(
        token: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI gave up after 120 s while a server lets a primitive run 300 s: a slow, charged answer was lost."""
    import dprm.client
    from dprm.client import DEFAULT_TIMEOUT, SERVER_PRIMITIVE_LIMIT
    from dprm.server.app import ServerSettings

    assert SERVER_PRIMITIVE_LIMIT == ServerSettings().primitive_timeout
    assert DEFAULT_TIMEOUT > SERVER_PRIMITIVE_LIMIT
    made: list[float] = []

    class Recording(Client):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self.timeout)

    monkeypatch.setattr(dprm.client, "Client", Recording)
    with Fake(lambda *a: ok({"budgets": []})) as fake:
        for extra, expected in (([], DEFAULT_TIMEOUT), (["--request-timeout", "900"], 900.0)):
            code, _, err = run(["remote", "--url", fake.url, "--token-file", token, *extra, "budget"])
            assert code == 0, err
            assert made[-1] == expected
        for bad in ("0", "-1", "nan", "inf"):
            code, out, err = run(["remote", "--url", fake.url, "--token-file", token, "--request-timeout", bad,
                                  "budget"])
            assert code == 2 and out == ""
            assert_one_error_line(err, "--request-timeout")
        assert len(fake.hits) == 2


def _start(args: list[Any]) -> subprocess.Popen:
    # SIGINT as a terminal gives it: a test run started in the background (nohup, CI) ignores
    # SIGINT, and a child inherits that, so Ctrl-C would never reach the command
    return subprocess.Popen(DPRM + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _signalled(process: subprocess.Popen, sig: int, ready: Callable[[], bool]) -> tuple[str, str]:
    """Send ``sig`` to ``process`` once ``ready()`` says it waits where the test wants it; its output.
    The process is killed if it has not ended by then."""
    try:
        assert ready(), process.communicate(timeout=10)
        process.send_signal(sig)
        return process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupt_while_a_charged_request_waits_for_its_answer_says_it_may_have_been_charged(
        token: Path, sig: int) -> None:
    """Ctrl-C said only "interrupted"; SIGTERM ended the process silently (143). Both end as an interrupt
    (130) and say that the request was sent and may have been charged."""
    with Fake(lambda *a: "hang") as fake:
        process = _start(remote(fake.url, token, *stats_args()))
        out, err = _signalled(process, sig, lambda: fake.arrived.wait(60))
    assert process.returncode == 130, err
    assert out == "" and "Traceback" not in err
    assert "was sent" in err and "may have been charged" in err and "dprm remote ledger" in err
    assert err.splitlines()[-1] == "interrupted"


# -- F3: submit --wait ------------------------------------------------------------------------------------------


def job_server(statuses: list[Any], result: Any = None) -> Callable[[str, str, list], Any]:
    """Answers of a server with one job: POST /v1/jobs makes it; each status read takes the next of
    ``statuses`` (a status text, or an answer); the result is ``result`` (RESULT by default)."""
    reads = iter(statuses)

    def answer(method: str, path: str, hits: list) -> Any:
        if method == "POST" and path == "/v1/jobs":
            return ok(JOB, 201)
        if path == "/v1/jobs/job_1":
            step = next(reads, statuses[-1])
            return ok({**JOB, "status": step}) if isinstance(step, str) else step
        if path == "/v1/jobs/job_1/result":
            return ok(result or RESULT)
        return ok(error_body("not_found"), 404)

    return answer


def test_submit_wait_says_the_job_id_and_polls_through_a_busy_or_rate_limited_server(token: Path) -> None:
    """A 503 database_unavailable (whose message says to retry) ended the wait with exit 2 and no job id; a
    429 with a Retry-After that is no number crashed it."""
    statuses = [ok(error_body("database_unavailable", "the database is unavailable; retry later"), 503,
                   **{"Retry-After": "0"}),
                ok(error_body("rate_limited"), 429, **{"Retry-After": "abc"}),
                ok(error_body("rate_limited"), 429, **{"Retry-After": "-5"}),
                ok(error_body("rate_limited"), 429, **{"Retry-After": "0"}),
                ok(error_body("rate_limited"), 429, **{"Retry-After": "0"}),
                "running", "done"]
    with Fake(job_server(statuses)) as fake:
        code, out, err = run(remote(fake.url, token, "submit", "tiny", "-a", "alt-expm", "--epsilon", "0.1", "--wait",
                                    "--timeout", "60"))
    assert code == 0, err
    assert json.loads(out) == RESULT
    lines = err.splitlines()
    assert "job job_1 submitted" in lines[0] and "0.1" in lines[0]
    assert any("database_unavailable" in line and "still waiting for job job_1" in line for line in lines)
    assert "error" not in err


def test_wait_polls_through_a_server_restart_and_backs_off() -> None:
    """A server restart mid-wait (connection refused) ended the wait as "cannot reach the server"."""
    with Fake(job_server(["running"])) as first:
        port = first.url.rsplit(":", 1)[1]
        client = Client(first.url, "t", retries=0)
        job = client.submit("tiny", "alt-expm", 0.1)
    troubles: list[str] = []
    restarted: dict[str, Fake] = {}

    def restart() -> None:
        time.sleep(1.0)
        restarted["fake"] = Fake(job_server(["running", "done"]), port=int(port)).__enter__()

    thread = threading.Thread(target=restart)
    thread.start()
    try:
        with client:
            document = client.wait(job["id"], timeout=60, poll=0.1, trouble=lambda e: troubles.append(e.code))
        assert document == RESULT
        assert "unreachable" in troubles
    finally:
        thread.join()
        if "fake" in restarted:
            restarted["fake"].__exit__(None, None, None)


def test_wait_backs_off_to_a_few_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """It polled every 0.5 s however long the job ran."""
    import dprm.client

    pauses: list[float] = []
    monkeypatch.setattr(dprm.client.time, "sleep", pauses.append)
    reads = iter(["running"] * 12 + ["done"])

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/result"):
            return httpx.Response(200, json=RESULT)
        return httpx.Response(200, json={**JOB, "status": next(reads)})

    with Client("http://127.0.0.1:9", "t", transport=httpx.MockTransport(answer)) as client:
        assert client.wait("job_1") == RESULT
    assert pauses[0] == 0.5 and pauses == sorted(pauses) and pauses[-1] == 5.0 and len(pauses) == 12


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_wait_names_the_charged_job_that_still_runs(token: Path, sig: int) -> None:
    """Ctrl-C said "interrupted" and SIGTERM nothing (143): the charged job still ran, its id never shown."""
    with Fake(job_server(["running"])) as fake:
        process = _start(remote(fake.url, token, "submit", "tiny", "-a", "alt-expm", "--epsilon", "0.1", "--wait"))

        def polled_twice() -> bool:
            deadline = time.monotonic() + 60
            while sum(1 for hit in fake.hits if hit[1] == "/v1/jobs/job_1") < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            return time.monotonic() < deadline

        out, err = _signalled(process, sig, polled_twice)
    assert process.returncode == 130, err
    assert out == "" and "Traceback" not in err
    lines = err.splitlines()
    assert "job job_1 submitted" in lines[0]
    assert "job job_1 is still running (ε 0.1 charged): dprm remote status job_1 / dprm remote cancel job_1" in err
    assert lines[-1] == "interrupted"


def test_every_early_end_of_a_wait_says_what_became_of_the_job(token: Path, tmp_path: Path) -> None:
    """--timeout, an error of the server and an --output that could no longer be written all ended without
    the job id (the result of a finished job then looked lost)."""
    submit = ["submit", "tiny", "-a", "alt-expm", "--epsilon", "0.1", "--wait"]
    with Fake(job_server(["running"])) as fake:
        code, out, err = run(remote(fake.url, token, *submit, "--timeout", "1"))
    assert code == 2 and out == ""
    assert "job job_1 submitted" in err.splitlines()[0]
    assert_one_error_line(err.splitlines()[-1] + "\n", "job job_1 is still running after 1 s (wait_timeout)",
                          "ε 0.1 charged", "dprm remote status job_1", "dprm remote cancel job_1")

    with Fake(job_server(["running", ok(error_body("token_disabled", "the account is disabled"), 401)])) as fake:
        code, out, err = run(remote(fake.url, token, *submit))
    assert code == 2 and out == ""
    assert_one_error_line(err.splitlines()[-1] + "\n", "token_disabled",
                          "job job_1 is still running (ε 0.1 charged)", "dprm remote cancel job_1")

    folder = tmp_path / "results"
    folder.mkdir()
    output = folder / "trees.json"

    def done_but_folder_gone(method: str, path: str, hits: list) -> Any:
        if path.endswith("/result"):
            folder.rmdir()
        return job_server(["done"])(method, path, hits)

    with Fake(done_but_folder_gone) as fake:
        code, out, err = run(remote(fake.url, token, *submit, "--output", output))
    assert code == 2 and out == "" and not folder.exists()
    assert_one_error_line(err.splitlines()[-1] + "\n", "--output", "job job_1 is done",
                          "dprm remote result job_1 --output FILE")


def test_submit_refuses_output_and_timeout_without_wait_before_sending(token: Path, tmp_path: Path) -> None:
    """Without --wait, --output and --timeout were silently ignored (the result was never written)."""
    with Fake(lambda *a: ok(JOB, 201)) as fake:
        submit = ["submit", "tiny", "-a", "alt-expm", "--epsilon", "0.1"]
        for extra, fragment in ((["--output", tmp_path / "r.json"], "--output needs --wait"),
                                (["--timeout", "5"], "--timeout limits --wait")):
            code, out, err = run(remote(fake.url, token, *submit, *extra))
            assert code == 2 and out == ""
            assert_one_error_line(err, fragment)
        assert fake.hits == []
        code, out, err = run(remote(fake.url, token, *submit, "--dry-run", "--output", tmp_path / "r.json"))
        assert code == 0, err
        assert json.loads((tmp_path / "r.json").read_text()) == JOB


# -- F7, F9, F10, F14 and the messages --------------------------------------------------------------------------


@pytest.mark.parametrize("option, text", [
    ("--left", '{"attr": "a", "eq": true, "eq": false}'),
    ("--right", '{"or": [{"attr": "x", "le": 5, "le": 9}]}'),
])
def test_a_repeated_json_key_is_refused_before_sending(token: Path, option: str, text: str) -> None:
    """{"attr":"a","eq":true,"eq":false} was sent as [a = false] (the last value won); the server refuses it."""
    args = {"--left": LEFT, "--right": RIGHT, option: text}
    code, out, err = run(remote("http://127.0.0.1:9", token, "stats", "tiny", "--left", args["--left"], "--right",
                                args["--right"], "--epsilon", "0.1"))
    assert code == 2 and out == ""
    line = assert_one_error_line(err, option, "given twice")
    assert "reach" not in line
    code, out, err = run(remote("http://127.0.0.1:9", token, "leaf-pairs", "tiny", "--left-tree",
                                '{"leaf": true, "leaf": true}', "--right-tree", '{"leaf": true}', "--epsilon", "0.1"))
    assert code == 2
    assert_one_error_line(err, "--left-tree", "'leaf' is given twice")


def test_a_query_in_clired_syntax_gets_a_hint_to_the_json_form(token: Path) -> None:
    code, out, err = run(remote("http://127.0.0.1:9", token, "stats", "tiny", "--left", "[a]", "--right", RIGHT,
                                "--epsilon", "0.1"))
    assert code == 2
    assert_one_error_line(err, "--left", "not valid JSON", "JSON form", "clired")


@pytest.mark.parametrize("header, expected", [
    ("2", 2.0), ("0.5", 0.5), ("600", 10.0),
    ("abc", None), ("-5", None), ("nan", None), ("inf", None), ("1e3", None), ("", None), ("٣", None),
    ("Sun, 06 Nov 1994 08:49:42 GMT", 0.0),  # a date past: no wait
])
def test_retry_after_reads_both_forms_and_ignores_what_is_neither(header: str, expected: float | None) -> None:
    assert retry_after(header) == expected


def test_a_429_with_any_retry_after_is_retried_without_crashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """float(Retry-After) crashed the client on an HTTP-date (valid, RFC 9110), abc, -5 or nan."""
    import dprm.client

    pauses: list[float] = []
    monkeypatch.setattr(dprm.client.time, "sleep", pauses.append)
    soon = email.utils.formatdate(time.time() + 4, usegmt=True)
    headers = iter([soon, "abc", "-5", "nan", "1e999"])

    def answer(request: httpx.Request) -> httpx.Response:
        header = next(headers, None)
        if header is None:
            return httpx.Response(200, json={"budgets": []})
        return httpx.Response(429, json=error_body("rate_limited"), headers={"Retry-After": header})

    with Client("http://127.0.0.1:9", "t", transport=httpx.MockTransport(answer), retries=5) as client:
        assert client.budget() == []
    assert 2.0 <= pauses[0] <= 4.0 and pauses[1:] == [1.0, 1.0, 1.0, 1.0]


@pytest.mark.parametrize("call, body, fragment", [
    (lambda c: c.budget(), [1, 2, 3], "an array where an object was expected"),
    (lambda c: c.budget(), {"budgets": [{"dataset": "x"}]}, "a budget without 'exact'"),
    (lambda c: c.datasets(), {"datasets": "x"}, "without 'datasets'"),
    (lambda c: c.submit("tiny", "alt-expm", 0.1), {"status": "queued"}, "a job without 'id'"),
    (lambda c: c.status("job_1"), {"id": "job_1"}, "a job without 'status'"),
    (lambda c: c.cancel("job_1"), {"status": "cancelled"}, "a job without 'id'"),
    (lambda c: c.ledger(), {"ledger": [], "next": [1]}, "'next'"),
    (lambda c: c.redescription_statistics("tiny", {"attr": "a", "eq": True}, {"attr": "x", "le": 5}, 0.1), "null",
     "null where an object was expected; it may have been charged"),
])
def test_an_answer_of_the_wrong_shape_is_a_bad_response(call: Callable[[Client], Any], body: Any,
                                                        fragment: str) -> None:
    """A list where an object was expected, or a missing id or status, crashed with TypeError or KeyError."""
    content = body.encode() if isinstance(body, str) else json.dumps(body).encode()

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=content, headers={"Content-Type": "application/json"})

    with Client("http://127.0.0.1:9", "t", transport=httpx.MockTransport(answer), retries=0) as client:
        with pytest.raises(RemoteError, match="not of the expected form") as bad:
            call(client)
    assert bad.value.code == "bad_response" and fragment in str(bad.value)


def test_the_command_line_says_bad_response_in_one_line(token: Path) -> None:
    with Fake(lambda *a: ok({"status": "queued"}, 201)) as fake:
        code, out, err = run(remote(fake.url, token, "submit", "tiny", "-a", "alt-expm", "--epsilon", "0.1"))
    assert code == 2 and out == ""
    assert_one_error_line(err, "(bad_response)", "a job without 'id'", "may have been charged", "dprm remote jobs")


def test_the_client_checks_its_arguments_before_sending() -> None:
    """retries=-1 raised UnboundLocalError, timeout=0 said "unreachable", poll=-1 or nan slept or failed."""
    sent: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.path)
        return httpx.Response(200, json={**JOB, "status": "running"})

    transport = httpx.MockTransport(answer)
    for kwargs, fragment in (({"retries": -1}, "retries"), ({"retries": 1.5}, "retries"),
                             ({"retries": True}, "retries"), ({"timeout": 0}, "timeout"),
                             ({"timeout": -1}, "timeout"), ({"timeout": math.nan}, "timeout"),
                             ({"timeout": math.inf}, "timeout"), ({"timeout": "10"}, "timeout")):
        with pytest.raises(ParameterError, match=fragment):
            Client("http://127.0.0.1:9", "t", transport=transport, **kwargs)
    with Client("http://127.0.0.1:9", "t", transport=transport) as client:
        for kwargs, fragment in (({"poll": -1}, "poll"), ({"poll": math.nan}, "poll"), ({"poll": 0}, "poll"),
                                 ({"max_poll": math.inf}, "max_poll"), ({"timeout": math.nan}, "timeout"),
                                 ({"timeout": -1}, "timeout")):
            with pytest.raises(ParameterError, match=fragment):
                client.wait("job_1", **kwargs)
        with pytest.raises(RemoteError, match="still running after 0 s"):
            client.wait("job_1", timeout=0)
    assert sent == ["/v1/jobs/job_1"]


def test_a_url_with_a_path_or_a_port_out_of_range_is_named(token: Path) -> None:
    """http://h:p/v1 answered "no such endpoint"; a port above 65535 was "cannot reach the server"."""
    with Fake(lambda *a: ok(error_body("not_found", "no such endpoint"), 404)) as fake:
        code, out, err = run(remote(fake.url + "/v1", token, "budget"))
    assert code == 2
    assert_one_error_line(err, "no such endpoint", "the URL must be the server's root", "'/v1'")
    for port in ("70000", "0"):
        code, out, err = run(remote(f"http://127.0.0.1:{port}", token, "budget"))
        assert code == 2
        line = assert_one_error_line(err, "--url", "not a server URL", "65535")
        assert "reach" not in line


# -- answers that are not the server's: a gateway's error, a redirect, a body too deep or of the wrong kind ----------

GATEWAY_PAGE = "<html><body><h1>504 Gateway Time-out</h1></body></html>"


@pytest.mark.parametrize("status, body", [
    (504, GATEWAY_PAGE), (502, "<html>Bad Gateway</html>"),
    (500, error_body("internal_error", "internal error; the data owner can see the log")),
], ids=["gateway-timeout", "bad-gateway", "internal-error"])
def test_a_server_error_answering_a_charged_request_says_it_may_have_been_charged(token: Path, status: int,
                                                                                   body: Any) -> None:
    """A proxy's 504 after the server took a long primitive (or the server's own 500 after the charge) was
    "the server answered HTTP 504 (bad_response)", with no word of the ε the request may have cost; a free
    request's answer does not talk of a charge."""
    with Fake(lambda *a: ok(body, status)) as fake:
        code, out, err = run(remote(fake.url, token, *stats_args()))
        assert code == 2 and out == ""
        assert_one_error_line(err, f"HTTP {status}" if status != 500 else "(internal_error)",
                              "may have been charged", "dprm remote ledger")
        code, out, err = run(remote(fake.url, token, "submit", "tiny", "-a", "alt-expm", "--epsilon", "0.1",
                                    "--wait"))
        assert code == 2 and out == ""
        assert_one_error_line(err, "may have been charged", "dprm remote jobs")
        code, out, err = run(remote(fake.url, token, "budget"))
        assert code == 2 and out == ""
        assert "charged" not in assert_one_error_line(err)


@pytest.mark.parametrize("status", [200, 201, 403])
def test_an_answer_nested_too_deeply_is_a_bad_response_not_an_internal_error(token: Path, status: int) -> None:
    """JSON nested deeper than Python's reader goes raised RecursionError: 'internal error', exit 1."""
    deep = "[" * 100_000 + "]" * 100_000
    with Fake(lambda *a: ok(deep, status)) as fake:
        for args in (["budget"], stats_args()):
            code, out, err = run(remote(fake.url, token, *args))
            assert code == 2 and out == ""
            line = assert_one_error_line(err, "(bad_response)")
            assert "internal error" not in line


def test_an_error_whose_code_or_message_is_not_text_is_a_bad_response() -> None:
    """``{"error": {"code": ["x"], "message": {...}}}`` became the code "['x']" and the message "{'a': 1}"."""
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(403, json={"error": {"code": ["x"], "message": {"a": 1}}})

    with Client("http://127.0.0.1:9", "t", transport=httpx.MockTransport(answer), retries=0) as client:
        with pytest.raises(RemoteError) as refused:
            client.budget()
    assert refused.value.code == "bad_response" and str(refused.value) == "the server answered HTTP 403 (bad_response)"


def test_a_redirect_names_where_it_points_and_says_the_url_is_not_the_servers(token: Path) -> None:
    """A proxy sending http:// to https:// (or to a login page) was "the server's answer is not JSON"; a
    password in the target is masked."""
    target = "https://user:s3cret@127.0.0.1:9/v1/budget"
    with Fake(lambda *a: ok("<html>Moved</html>", 301, Location=target)) as fake:
        code, out, err = run(remote(fake.url, token, "budget"))
    assert code == 2 and out == ""
    line = assert_one_error_line(err, "HTTP 301", "a redirect to 'https://user:***@127.0.0.1:9/v1/budget'",
                                 "give the server's own address", "(bad_response)")
    assert "s3cret" not in line and "charged" not in line


def test_the_client_refuses_arguments_of_the_wrong_kind_before_sending() -> None:
    """A confidence that is no number raised ValueError or TypeError, parameters that are no mapping a
    ValueError, ``ledger(limit=-1)`` answered an empty list as if nothing were spent, and a URL with a
    query sent every request to the server's root ("no such endpoint")."""
    sent: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.path)
        return httpx.Response(200, json={"ledger": [{"step": "s"}], "jobs": [JOB], "next": None})

    transport = httpx.MockTransport(answer)
    for url in ("http://127.0.0.1:9?x=1", "http://127.0.0.1:9/?"):
        with pytest.raises(ParameterError, match="no query"):
            Client(url, "t", transport=transport)
    with Client("http://127.0.0.1:9", "t", transport=transport) as client:
        for confidence in ("high", None, True, [0.9]):
            with pytest.raises(ParameterError, match="confidence must be a number"):
                client.redescription_statistics("tiny", json.loads(LEFT), json.loads(RIGHT), 0.1,
                                                confidence=confidence)
        with pytest.raises(ParameterError, match="parameters must be a mapping"):
            client.submit("tiny", "alt-expm", 0.1, "depth=3")
        for call in (lambda: client.ledger(limit=-1), lambda: client.jobs(-1), lambda: client.jobs(2.5),
                     lambda: client.ledger(limit=True)):
            with pytest.raises(ParameterError, match="limit must be None"):
                call()
        assert sent == []
        assert client.ledger(limit=None) == [{"step": "s"}] and client.jobs(0) == []


def test_numpy_values_are_sent_as_json_numbers_and_a_closed_client_is_refused() -> None:
    """``np.int64`` in the parameters and an ``np.float32`` epsilon were refused as 'not JSON
    serializable' (the values numpy code holds); now sent as JSON's numbers. A call after
    ``close()`` raised httpx's RuntimeError, naming no dprm call; now a ParameterError, nothing sent."""
    np = pytest.importorskip("numpy")
    bodies: list[Any] = []

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=JOB)

    client = Client("http://127.0.0.1:9", "t", transport=httpx.MockTransport(answer))
    with client:
        client.submit("tiny", "alt-expm", np.float32(0.5), {"depth": np.int64(3), "omega": np.float64(0.25),
                                                            "trees": np.array([1, 2])})
    assert bodies[0]["epsilon"] == 0.5 and bodies[0]["parameters"] == {"depth": 3, "omega": 0.25, "trees": [1, 2]}
    with pytest.raises(ParameterError, match="this Client was closed"):
        client.budget()
    assert len(bodies) == 1


def _limited_memory() -> None:  # in the child: a read without bound ends in MemoryError, not in the machine's memory
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))


def test_a_query_or_tree_file_is_read_up_to_a_bound(token: Path, tmp_path: Path) -> None:
    """``--left @/dev/zero`` (or a data file named by mistake) was read whole: until memory ran out
    ('out of memory', exit 1, after taking the machine's memory); now one line naming the option and
    the file, before anything is sent (port 9 on loopback answers nothing). A pipe is still read."""
    done = subprocess.run(DPRM + remote("http://127.0.0.1:9", token, "stats", "tiny", "--left", "@/dev/zero",
                                        "--right", RIGHT, "--epsilon", "0.1"),
                          capture_output=True, text=True, timeout=120, preexec_fn=_limited_memory)
    assert done.returncode == 2 and done.stdout == ""
    line = assert_one_error_line(done.stderr, "--left", "/dev/zero", "more than 16 MiB")
    assert "reach" not in line
    big = tmp_path / "trees.json"
    with big.open("wb") as stream:  # sparse: 17 MiB of zeros without writing them
        stream.truncate(17 << 20)
    code, out, err = run(remote("http://127.0.0.1:9", token, "leaf-pairs", "tiny", "--left-tree", f"@{big}",
                                "--right-tree", '{"leaf": true}', "--epsilon", "0.1"))
    assert code == 2 and out == ""
    assert_one_error_line(err, "--left-tree", "trees.json", "more than 16 MiB")
    with Fake(lambda *a: ok({"dry_run": True})) as fake:
        done = subprocess.run(DPRM + remote(fake.url, token, "stats", "tiny", "--left", "@/dev/stdin", "--right",
                                            RIGHT, "--epsilon", "0.1", "--dry-run"),
                              input=LEFT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"dry_run": True}


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"], ids=["utf8-bom", "powershell-utf16"])
def test_a_token_file_saved_with_a_byte_order_mark_is_read(tmp_path: Path, encoding: str) -> None:
    """A token file saved by Notepad (a UTF-8 byte-order mark) or written by Windows PowerShell's ``>``
    (UTF-16) was refused: "a token is one word of printable ASCII", though the file shows just the token."""
    path = tmp_path / "alice.token"
    path.write_bytes("dprm_1_secret\r\n".encode(encoding))
    seen: list[str] = []

    def answer(method: str, path: str, hits: list) -> Any:
        return ok({"budgets": [{"dataset": "tiny", "exact": {"total": "1", "spent": "0", "remaining": "1"}}]})

    with Fake(answer) as fake:
        code, out, err = run(remote(fake.url, path, "budget"))
    assert (code, out, err) == (0, "tiny: remaining 1 of 1 (spent 0)\n", "")

    def headers(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["Authorization"])
        return httpx.Response(200, json={"budgets": []})

    text = path.read_text(encoding="utf-8" if encoding == "utf-8-sig" else "utf-16")  # open(...).read() keeps a BOM
    with Client("http://127.0.0.1:9", text, transport=httpx.MockTransport(headers)) as client:
        assert client.budget() == []
    assert seen == ["Bearer dprm_1_secret"]
    with pytest.raises(ParameterError, match="a token is a text"):
        Client("http://127.0.0.1:9", None)


def test_a_wait_gives_up_at_its_timeout_though_the_server_holds_a_request(token: Path) -> None:
    """A server (or a proxy) that took a status read and never answered held ``wait(timeout=1)`` (and
    ``submit --wait --timeout 1``) for the client's whole request timeout (330 s by default) before it gave
    up; each read now waits no longer than the wait has left."""
    import re

    within_the_wait = re.compile(r"no answer came within (1|0\.[0-9]+) s \(ReadTimeout\)")
    with Fake(lambda method, path, hits: ok(JOB, 201) if method == "POST" else "hang") as fake:
        with Client(fake.url, "t", timeout=30) as client:
            with pytest.raises(RemoteError) as late:
                client.wait("job_1", timeout=1)
        assert late.value.code == "wait_timeout" and "was not read after 1 s" in str(late.value)
        assert within_the_wait.search(str(late.value)), str(late.value)
        code, out, err = run(remote(fake.url, token, "--request-timeout", "30", "submit", "tiny", "-a", "alt-expm",
                                    "--epsilon", "0.1", "--wait", "--timeout", "1"))
    assert code == 2 and out == ""
    line = err.splitlines()[-1]
    assert "(wait_timeout)" in line and within_the_wait.search(line) and "dprm remote cancel job_1" in line


def test_a_page_pointing_back_to_a_page_read_before_is_a_bad_response() -> None:
    """A ledger whose next page is one read before (a proxy answering every page with the first) was read
    without end, its rows repeated until memory ran out; the fake stops after 50 pages to end the old loop."""
    asked: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.params.get("before"))
        if len(asked) > 50:
            return httpx.Response(500, json=error_body("internal_error"))
        return httpx.Response(200, json={"ledger": [{"step": "s"}], "next": 7 if len(asked) % 2 else 3})

    with Client("http://127.0.0.1:9", "t", transport=httpx.MockTransport(answer), retries=0) as client:
        with pytest.raises(RemoteError) as endless:
            client.ledger()
    assert endless.value.code == "bad_response" and "names a page read before" in str(endless.value)
    assert asked == [None, "7", "3"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (a device that is always full)")
def test_a_charged_answer_that_standard_output_cannot_take_says_what_was_charged(token: Path) -> None:
    """``dprm remote submit ... > job.txt`` on a full disk said only "standard output: No space left on
    device" though the job was charged (its id lost: submitting again pays twice), and a primitive's
    answer the same though its ε was spent; a free answer still says only why."""
    stats = {"noisy": {"jaccard": 0.5}, "dummy": False, "epsilon": 0.1, "epsilon_exact": "0.1"}

    def answer(method: str, path: str, hits: list) -> Any:
        return ok(JOB, 201) if path == "/v1/jobs" else ok(stats)

    def lines(*args: str) -> str:
        with open("/dev/full", "w") as full:
            done = subprocess.run(DPRM + remote(fake.url, token, *args), stdout=full, stderr=subprocess.PIPE,
                                  text=True, timeout=120)
        assert done.returncode == 2
        return assert_one_error_line(done.stderr, "standard output: No space left on device")

    with Fake(answer) as fake:
        line = lines("submit", "tiny", "-a", "alt-expm", "--epsilon", "0.1")
        assert "job job_1 was submitted (ε 0.1 charged): dprm remote status job_1" in line
        assert "charged (ε 0.1) and is lost: see your ledger" in lines(*stats_args())
        assert "charged" not in lines(*stats_args("--dry-run"))


def test_a_connection_that_fails_says_why_a_tls_certificate_not_trusted_above_all(token: Path,
                                                                                  tmp_path: Path) -> None:
    """A server whose TLS certificate is not trusted here (self-signed, an owner's own authority) was only
    "cannot reach the server at https://...: ConnectError", as a server that is down; ``https://`` to a
    server speaking HTTP the same. Now the reason, and how to trust the certificate (SSL_CERT_FILE)."""
    import shutil
    import ssl

    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    with Fake(lambda *a: ok({"budgets": []})) as fake:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        fake.server.socket = context.wrap_socket(fake.server.socket, server_side=True)
        code, out, err = run(remote(fake.url.replace("http://", "https://"), token, "budget"))
        assert code == 2 and out == ""
        assert_one_error_line(err, "cannot reach", "its TLS certificate is not trusted here", "self-signed",
                              "SSL_CERT_FILE", "nothing was sent")
    with Fake(lambda *a: ok({"budgets": []})) as plain:
        code, out, err = run(remote(plain.url.replace("http://", "https://"), token, "budget"))
    assert code == 2
    assert_one_error_line(err, "TLS failed", "the server may speak plain HTTP", "nothing was sent")
    code, out, err = run(remote(f"http://127.0.0.1:{free_port()}", token, "budget"))
    assert code == 2
    assert_one_error_line(err, "(Connection refused); nothing was sent (unreachable)")


def test_a_job_id_a_closed_pipe_cannot_take_is_said_on_standard_error(token: Path) -> None:
    """``dprm remote submit ... | head -0``: the reader gone, the command ends quietly (exit 141) as every
    command does, but the charged job's id went nowhere; now a note names it."""
    reader, writer = os.pipe()
    os.close(reader)  # a reader that is gone before the id is written
    try:
        with Fake(lambda *a: ok(JOB, 201)) as fake:
            done = subprocess.run(DPRM + remote(fake.url, token, "submit", "tiny", "-a", "alt-expm", "--epsilon",
                                                "0.1"), stdout=writer, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(writer)
    assert done.returncode == 141
    assert done.stderr.splitlines() == ["note: job job_1 was submitted (ε 0.1 charged): dprm remote status job_1"]


def test_a_primitive_answer_a_closed_pipe_cannot_take_says_its_charge(token: Path) -> None:
    """``dprm remote stats ... | head -0``: the answer was charged and went nowhere, without a word."""
    stats = {"noisy": {"jaccard": 0.5}, "dummy": False, "epsilon": 0.1, "epsilon_exact": "0.1"}
    reader, writer = os.pipe()
    os.close(reader)
    try:
        with Fake(lambda *a: ok(stats)) as fake:
            done = subprocess.run(DPRM + remote(fake.url, token, *stats_args()), stdout=writer,
                                  stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(writer)
    assert done.returncode == 141
    assert done.stderr.splitlines() == ["note: the answer was charged (ε 0.1) and is lost: see your ledger "
                                        "(dprm remote ledger)"]


def _certificate(tmp_path: Path) -> tuple[Path, Path]:
    import shutil

    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return key, cert


class TlsProxy:
    """A TLS port on 127.0.0.1 as nginx keeps one: a TLS handshake completes; plain HTTP is answered by the
    proxy itself, ``400`` and an HTML page (``answer=True``), or the connection is closed (``answer=False``)."""

    def __init__(self, key: Path, cert: Path, answer: bool) -> None:
        import ssl

        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.answer = answer
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.plain_requests = 0

    def __enter__(self) -> "TlsProxy":
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.listener.close()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with connection:
                try:
                    connection.settimeout(10)
                    if connection.recv(1, socket.MSG_PEEK) == b"\x16":  # a TLS ClientHello
                        with self.context.wrap_socket(connection, server_side=True):
                            pass
                        continue
                    connection.recv(65536)
                    self.plain_requests += 1
                    if self.answer:
                        page = b"<html><center>The plain HTTP request was sent to HTTPS port</center></html>"
                        connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\nContent-Length: "
                                           + str(len(page)).encode() + b"\r\nConnection: close\r\n\r\n" + page)
                except OSError:
                    pass


@pytest.mark.parametrize("answer", [True, False], ids=["proxy page", "connection closed"])
def test_http_to_a_server_that_speaks_tls_says_so_and_that_nothing_was_charged(token: Path, tmp_path: Path,
                                                                                answer: bool) -> None:
    """``http://`` to a TLS port was ``no_answer`` (the connection closed) or ``HTTP 400`` (a TLS proxy's own
    page), and a charged request then "may have been charged" though nothing reached dprm. Now one line: the
    server speaks TLS, give https://..., nothing was charged (code ``speaks_tls``, not a temporary error)."""
    key, cert = _certificate(tmp_path)
    with TlsProxy(key, cert, answer) as proxy:
        https = proxy.url.replace("http://", "https://")
        code, out, err = run(remote(proxy.url, token, *stats_args()))
        assert code == 2 and out == ""
        line = assert_one_error_line(err, f"the server at {proxy.url} speaks TLS: give {https}",
                                     "nothing was charged", "(speaks_tls)")
        assert "may have been charged" not in line
        with Client(proxy.url + "/", "dprm_1_secret") as client:
            with pytest.raises(RemoteError) as info:
                client.budget()
        assert info.value.code == "speaks_tls" and not info.value.temporary
        assert proxy.plain_requests == 2


def test_a_server_that_drops_plain_http_is_still_no_answer_when_it_does_not_speak_tls(token: Path) -> None:
    """The question asked of the server (a TLS handshake) does not turn a lost answer into ``speaks_tls``."""
    with Fake(lambda *a: "drop") as fake:
        code, out, err = run(remote(fake.url, token, *stats_args()))
    assert code == 2
    assert_one_error_line(err, "the connection ended without an answer", "it may have been charged", "(no_answer)")
