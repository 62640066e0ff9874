"""Malformed requests: none gets a 500 or a traceback, none changes the ledger or a budget.

Two parts: schemathesis generates requests from the server's own OpenAPI schema
(valid and invalid ones, with a valid token), and more than fifty hand-written
malformed requests cover what a schema cannot express (bad JSON, deep nesting,
huge bodies, tokens, queries and trees that do not fit the dataset, parameters out
of range, epsilons that are not multiples of 1e-9, ...). After every request that
was refused (4xx), the ledger and the budgets are exactly as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi")
schemathesis = pytest.importorskip("schemathesis")

from fastapi.testclient import TestClient  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from dprm.server.app import create_app  # noqa: E402
from dprm.server.database import Database  # noqa: E402
from dprm.server.tables import budgets, charges, ledger  # noqa: E402
from server_support import setup_server_db  # noqa: E402


class Fuzzed:
    def __init__(self, folder: Path) -> None:
        self.url = str(folder / "server.db")
        self.tokens = setup_server_db(self.url, folder)
        self.app = create_app(self.url, workers=0, rate=10_000.0, burst=10_000, background=False,
                              max_body=100_000)
        self.db = Database(self.url)
        self.headers = {"Authorization": f"Bearer {self.tokens['alice']}"}

    def books(self) -> tuple:
        """Everything that says what was spent."""
        with self.db.read() as c:
            return (c.execute(select(func.count()).select_from(ledger)).scalar(),
                    tuple(c.execute(select(budgets.c.spent_units).order_by(budgets.c.analyst_id,
                                                                            budgets.c.dataset_id)).scalars()),
                    c.execute(select(func.count()).select_from(charges)).scalar())


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    yield Fuzzed(tmp_path_factory.mktemp("fuzz"))


@pytest.fixture(scope="module")
def api_schema(fuzzed: Fuzzed) -> Any:
    schema = schemathesis.openapi.from_asgi("/openapi.json", fuzzed.app)
    schema.config.generation.update(modes=[schemathesis.GenerationMode.POSITIVE,
                                           schemathesis.GenerationMode.NEGATIVE], max_examples=25)
    return schema


schema = schemathesis.pytest.from_fixture("api_schema")


def _no_server_error(response: Any) -> None:
    text = response.text if hasattr(response, "text") else response.content.decode(errors="replace")
    assert response.status_code < 500, (response.status_code, text[:500])
    assert "Traceback" not in text and 'File "' not in text, text[:500]
    if response.status_code >= 400:
        body = json.loads(text)
        assert set(body) == {"error"} and isinstance(body["error"]["code"], str), body


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_schemathesis_finds_no_server_error(case: Any, fuzzed: Fuzzed) -> None:
    before = fuzzed.books()
    response = case.call(headers=fuzzed.headers)
    _no_server_error(response)
    if response.status_code >= 400:
        assert fuzzed.books() == before


# -- hand-written malformed requests ---------------------------------------------------------

STATS = {"dataset": "tiny", "epsilon": 0.5, "left": {"attr": "a", "eq": True}, "right": {"attr": "b", "eq": True}}
TREE = {"split": {"attr": "a", "eq": True}, "yes": {"leaf": True}, "no": {"leaf": True}}
RTREE = {"split": {"attr": "x", "le": 50}, "yes": {"leaf": True}, "no": {"leaf": True}}
PAIRS = {"dataset": "tiny", "epsilon": 0.5, "left_tree": TREE, "right_tree": RTREE}
JOB = {"dataset": "tiny", "algorithm": "alt-expm", "epsilon": 0.5, "parameters": {"init_trials": 1}}


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _tree_of_depth(depth: int) -> dict:
    node: dict = {"leaf": True}
    for _ in range(depth):
        node = {"split": {"attr": "a", "eq": True}, "yes": node, "no": {"leaf": True}}
    return node


def _wide_query(n: int) -> dict:
    return {"or": [{"attr": "a", "eq": True}] * n}


#: (name, method, path, body (dict: JSON; str/bytes: raw), headers or None for alice's, expected status)
MALFORMED: list[tuple[str, str, str, Any, Any, int]] = [
    ("not json", "POST", "/v1/jobs", b"{not json", None, 400),
    ("truncated json", "POST", "/v1/jobs", b'{"dataset": "tiny", ', None, 400),
    ("json with NaN", "POST", "/v1/primitives/redescription-statistics",
     json.dumps(STATS).replace("0.5", "NaN").encode(), None, 422),
    ("deep json", "POST", "/v1/jobs", _deep(5000).encode(), None, 400),
    ("deep json in a query", "POST", "/v1/primitives/redescription-statistics",
     json.dumps({**STATS, "left": {"not": 0}}).replace("0}", _deep(200) + "}").encode(), None, 400),
    ("too large", "POST", "/v1/jobs", b'{"x": "' + b"a" * 200_000 + b'"}', None, 413),
    ("wrong content type", "POST", "/v1/jobs", "dataset=tiny", {"Content-Type": "text/plain"}, 415),
    ("json sent as text/json", "POST", "/v1/jobs", json.dumps(JOB), {"Content-Type": "text/json"}, 415),
    ("json sent as application/notjson", "POST", "/v1/jobs", json.dumps(JOB), {"Content-Type": "application/notjson"},
     415),
    ("body is a list", "POST", "/v1/jobs", [1, 2], None, 422),
    ("body is a number", "POST", "/v1/jobs", 7, None, 422),
    ("empty object", "POST", "/v1/jobs", {}, None, 422),
    ("unknown key", "POST", "/v1/jobs", {**JOB, "seed": 1}, None, 422),
    ("unknown dataset", "POST", "/v1/jobs", {**JOB, "dataset": "nope"}, None, 404),
    ("dataset name with a slash", "POST", "/v1/jobs", {**JOB, "dataset": "../etc"}, None, 422),
    ("unknown algorithm", "POST", "/v1/jobs", {**JOB, "algorithm": "magic"}, None, 422),
    ("non-private algorithm", "POST", "/v1/jobs", {**JOB, "algorithm": "cartwheels"}, None, 422),
    ("unknown parameter", "POST", "/v1/jobs", {**JOB, "parameters": {"speed": 9}}, None, 422),
    ("epsilon among parameters", "POST", "/v1/jobs", {**JOB, "parameters": {"epsilon": 9}}, None, 422),
    ("depth out of range", "POST", "/v1/jobs", {**JOB, "parameters": {"depth": 99}}, None, 422),
    ("negative depth", "POST", "/v1/jobs", {**JOB, "parameters": {"depth": -1}}, None, 422),
    ("huge integer parameter", "POST", "/v1/jobs", {**JOB, "parameters": {"init_trials": 10**30}}, None, 422),
    ("parameter of a wrong type", "POST", "/v1/jobs", {**JOB, "parameters": {"depth": [1]}}, None, 422),
    ("parameter text too long", "POST", "/v1/jobs", {**JOB, "parameters": {"counts": "c" * 300}}, None, 422),
    ("zero epsilon", "POST", "/v1/jobs", {**JOB, "epsilon": 0}, None, 422),
    ("negative epsilon", "POST", "/v1/jobs", {**JOB, "epsilon": -1}, None, 422),
    ("epsilon below 1e-9", "POST", "/v1/jobs", {**JOB, "epsilon": 1e-10}, None, 422),
    ("epsilon with 10 decimals", "POST", "/v1/jobs", {**JOB, "epsilon": "0.0000000001"}, None, 422),
    ("epsilon a third", "POST", "/v1/jobs", {**JOB, "epsilon": "1/3"}, None, 422),
    ("epsilon infinite", "POST", "/v1/jobs", {**JOB, "epsilon": "inf"}, None, 422),
    ("epsilon text", "POST", "/v1/jobs", {**JOB, "epsilon": "lots"}, None, 422),
    ("epsilon boolean", "POST", "/v1/jobs", {**JOB, "epsilon": True}, None, 422),
    ("epsilon null", "POST", "/v1/jobs", {**JOB, "epsilon": None}, None, 422),
    ("epsilon huge", "POST", "/v1/jobs", {**JOB, "epsilon": 1e300}, None, 422),
    ("epsilon above the budget", "POST", "/v1/jobs", {**JOB, "epsilon": 10.5}, None, 403),
    ("idempotency key with spaces", "POST", "/v1/jobs", {**JOB, "idempotency_key": "a b"}, None, 422),
    ("dummy rows out of range", "POST", "/v1/jobs", {**JOB, "dummy": True, "dummy_rows": 10**9}, None, 422),
    ("query not an object", "POST", "/v1/primitives/redescription-statistics", {**STATS, "left": "a"}, None, 422),
    ("query unknown attribute", "POST", "/v1/primitives/redescription-statistics",
     {**STATS, "left": {"attr": "zz", "eq": True}}, None, 422),
    ("query attribute of the other view", "POST", "/v1/primitives/redescription-statistics",
     {**STATS, "left": {"attr": "b", "eq": True}}, None, 422),
    ("query wrong kind", "POST", "/v1/primitives/redescription-statistics",
     {**STATS, "right": {"attr": "x", "eq": True}}, None, 422),
    ("query undeclared category", "POST", "/v1/primitives/redescription-statistics",
     {**STATS, "left": {"attr": "state", "eq": "ZZ"}}, None, 422),
    ("query unknown key", "POST", "/v1/primitives/redescription-statistics",
     {**STATS, "left": {"attr": "a", "eq": True, "foo": 1}}, None, 422),
    ("query and with one operand", "POST", "/v1/primitives/redescription-statistics",
     {**STATS, "left": {"and": [{"attr": "a", "eq": True}]}}, None, 422),
    ("query bound not finite", "POST", "/v1/primitives/redescription-statistics",
     {**STATS, "right": {"attr": "x", "le": "inf"}}, None, 422),
    ("query too many nodes", "POST", "/v1/primitives/redescription-statistics",
     {**STATS, "left": _wide_query(400)}, None, 422),
    ("confidence out of range", "POST", "/v1/primitives/redescription-statistics",
     {**STATS, "confidence": 1.5}, None, 422),
    ("statistics without right", "POST", "/v1/primitives/redescription-statistics",
     {k: v for k, v in STATS.items() if k != "right"}, None, 422),
    ("tree not an object", "POST", "/v1/primitives/leaf-pair-counts", {**PAIRS, "left_tree": []}, None, 422),
    ("tree leaf with extra key", "POST", "/v1/primitives/leaf-pair-counts",
     {**PAIRS, "left_tree": {"leaf": True, "x": 1}}, None, 422),
    ("tree leaf of 1", "POST", "/v1/primitives/leaf-pair-counts", {**PAIRS, "left_tree": {"leaf": 1}}, None, 422),
    ("tree leaf of 1.0", "POST", "/v1/primitives/leaf-pair-counts", {**PAIRS, "left_tree": {"leaf": 1.0}}, None, 422),
    ("tree missing branch", "POST", "/v1/primitives/leaf-pair-counts",
     {**PAIRS, "left_tree": {"split": {"attr": "a", "eq": True}, "yes": {"leaf": True}}}, None, 422),
    ("tree split on an interval", "POST", "/v1/primitives/leaf-pair-counts",
     {**PAIRS, "right_tree": {**RTREE, "split": {"attr": "x", "gt": 1, "le": 5}}}, None, 422),
    ("tree split an operator", "POST", "/v1/primitives/leaf-pair-counts",
     {**PAIRS, "left_tree": {**TREE, "split": {"not": {"attr": "a", "eq": True}}}}, None, 422),
    ("tree too deep", "POST", "/v1/primitives/leaf-pair-counts", {**PAIRS, "left_tree": _tree_of_depth(12)}, None, 422),
    ("tree over the other view", "POST", "/v1/primitives/leaf-pair-counts",
     {**PAIRS, "left_tree": RTREE}, None, 422),
    ("no token", "GET", "/v1/budget", None, {}, 401),
    ("empty bearer", "GET", "/v1/budget", None, {"Authorization": "Bearer "}, 401),
    ("basic auth", "GET", "/v1/budget", None, {"Authorization": "Basic YTpi"}, 401),
    ("forged token", "GET", "/v1/budget", None, {"Authorization": "Bearer dprm_0123456789ab_" + "x" * 43}, 401),
    ("token of another format", "GET", "/v1/budget", None, {"Authorization": "Bearer " + "z" * 5000}, 401),
    ("unknown job", "GET", "/v1/jobs/job_0000", None, None, 404),
    ("unknown job result", "GET", "/v1/jobs/job_0000/result", None, None, 404),
    ("cancel an unknown job", "POST", "/v1/jobs/../../etc/cancel", None, None, 404),
    ("job id with quotes", "GET", "/v1/jobs/%27%20OR%201%3D1--", None, None, 404),
    ("unknown endpoint", "GET", "/v1/secrets", None, None, 404),
    ("wrong method", "DELETE", "/v1/jobs", None, None, 405),
    ("dummy rows too many", "GET", "/v1/datasets/tiny/dummy?rows=999999", None, None, 422),
    ("dummy rows not a number", "GET", "/v1/datasets/tiny/dummy?rows=many", None, None, 422),
    ("ledger limit negative", "GET", "/v1/ledger?limit=-5", None, None, 422),
    ("budget of an unknown dataset", "GET", "/v1/budget?dataset=nope", None, None, 404),
    ("dataset name very long", "GET", "/v1/datasets/" + "d" * 3000, None, None, 404),
    ("non-utf8 body", "POST", "/v1/jobs", b'{"dataset": "\xff\xfe"}', None, 400),
    # the fuzz round's case 1: the API kept the last of two keys, so a "dry run" was charged
    ("repeated key in a job", "POST", "/v1/jobs",
     json.dumps({**JOB, "dry_run": True})[:-1] + ', "dry_run": false}', None, 400),
    ("repeated key in a query", "POST", "/v1/primitives/redescription-statistics",
     json.dumps(STATS).replace('"eq": true}', '"eq": true, "attr": "a"}', 1), None, 400),
    ("integer of 5000 digits", "POST", "/v1/jobs",
     json.dumps(JOB).replace('"init_trials": 1', '"init_trials": ' + "9" * 5000), None, 400),
]


def test_at_least_fifty_kinds_of_malformed_requests() -> None:
    assert len({name for name, *_ in MALFORMED}) == len(MALFORMED) >= 50


@pytest.mark.parametrize("name, method, path, body, headers, status", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_request(fuzzed: Fuzzed, name: str, method: str, path: str, body: Any, headers: Any,
                           status: int) -> None:
    before = fuzzed.books()
    sent_headers = dict(fuzzed.headers if headers is None else headers)
    with TestClient(fuzzed.app, raise_server_exceptions=False) as client:
        if isinstance(body, (bytes, str)):
            sent_headers.setdefault("Content-Type", "application/json")
            response = client.request(method, path, content=body, headers=sent_headers)
        elif body is None:
            response = client.request(method, path, headers=sent_headers)
        else:
            response = client.request(method, path, json=body, headers=sent_headers)
    _no_server_error(response)
    assert response.status_code == status, (response.status_code, response.text[:300])
    assert fuzzed.books() == before


def test_a_repeated_key_or_two_tokens_are_refused_with_what_was_wrong(fuzzed: Fuzzed) -> None:
    """A body that repeats a key and a request with two Authorization headers are refused
    (neither is guessed), with a message about the request's form, nothing charged."""
    before = fuzzed.books()
    body = json.dumps({**JOB, "dry_run": True})[:-1] + ', "dry_run": false}'
    with TestClient(fuzzed.app, raise_server_exceptions=False) as client:
        response = client.post("/v1/jobs", content=body, headers={**fuzzed.headers, "Content-Type": "application/json"})
        assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_json"
        assert "repeats a key" in response.json()["error"]["message"]
        two = [("Authorization", fuzzed.headers["Authorization"]), ("Authorization", "Bearer forged")]
        for headers in (two, two[::-1]):
            response = client.get("/v1/budget", headers=headers)
            assert response.status_code == 401 and "one Authorization header" in response.json()["error"]["message"]
    assert fuzzed.books() == before
