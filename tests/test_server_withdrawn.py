"""A budget set to 0 withdraws the dataset: every route and page answers as for a dataset never granted.

``dprm admin budget set ANALYST DATASET 0`` ("0 withdraws", docs/server.md) left the
analyst the schema, dummy rows and free dummy jobs and statistics: every grant check
counted any budget row. Now a total of 0 is no grant (``404 unknown_dataset``, the
same answer a never-granted analyst gets), and the analyst's own history of that
budget (jobs, results, ledger rows, ``/v1/ledger?dataset=``) stays readable.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from dprm.server import accounts  # noqa: E402
from dprm.server.app import create_app  # noqa: E402
from dprm.server.database import Database  # noqa: E402
from server_support import setup_server_db  # noqa: E402
from test_cli import run  # noqa: E402
from test_server_publish import books  # noqa: E402

STATS = {"dataset": "tiny", "epsilon": "0.5", "left": {"attr": "a", "eq": True}, "right": {"attr": "b", "eq": True}}
JOB = {"dataset": "tiny", "algorithm": "alt-expm", "epsilon": "0.5", "parameters": {"init_trials": 1, "depth": 2}}
TREE = {"split": {"attr": "a", "eq": True}, "yes": {"leaf": True}, "no": {"leaf": True}}
RIGHT_TREE = {"split": {"attr": "b", "eq": True}, "yes": {"leaf": True}, "no": {"leaf": True}}
LEAVES = {"dataset": "tiny", "epsilon": "0.5", "left_tree": TREE, "right_tree": RIGHT_TREE}
JOB_FORM = {"algorithm": "alt-expm", "epsilon": "1", "p_init_trials": "1", "p_depth": "2"}


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, dict[str, str]], str]]:
    """alice spent 0.5 on tiny and queued a job of 0.5, then her budget was set to 0; carol never had one."""
    url = str(tmp_path / "server.db")
    tokens = setup_server_db(url, tmp_path, budgets={"alice": "10"})
    db = Database(url)
    with db.write() as connection:
        tokens["carol"] = accounts.add_analyst(connection, "carol")
    db.dispose()
    headers = {name: {"Authorization": f"Bearer {token}"} for name, token in tokens.items()}
    with TestClient(create_app(url, workers=0, background=False, rate=1000.0, burst=1000)) as client:
        assert client.post("/v1/primitives/redescription-statistics", json=STATS,
                           headers=headers["alice"]).status_code == 200
        job = client.post("/v1/jobs", json=JOB, headers=headers["alice"]).json()["id"]
        code, out, err = run(["admin", "--db", url, "budget", "set", "alice", "tiny", "0"])
        assert code == 0 and "alice on tiny: total 0, spent 1" in out, err
        client.job_id = job  # type: ignore[attr-defined]
        yield client, headers, url


def _api_requests(job: str) -> list[tuple[str, str, Any]]:
    return [
        ("GET", "/v1/datasets/tiny", None),
        ("GET", "/v1/datasets/tiny/dummy?rows=5", None),
        ("GET", "/v1/budget?dataset=tiny", None),
        ("POST", "/v1/jobs", {**JOB, "dummy": True}),
        ("POST", "/v1/jobs", {**JOB, "dry_run": True}),
        ("POST", "/v1/jobs", JOB),
        ("POST", "/v1/primitives/redescription-statistics", {**STATS, "dummy": True}),
        ("POST", "/v1/primitives/redescription-statistics", {**STATS, "dry_run": True}),
        ("POST", "/v1/primitives/leaf-pair-counts", {**LEAVES, "dummy": True}),
        ("POST", "/v1/primitives/leaf-pair-counts", LEAVES),
    ]


def test_a_withdrawn_budget_is_answered_as_a_dataset_never_granted(
        site: tuple[TestClient, dict[str, dict[str, str]], str]) -> None:
    client, headers, url = site
    db = Database(url)
    before = books(db), _spent(db)
    for method, path, body in _api_requests(client.job_id):  # type: ignore[attr-defined]
        answers = [client.request(method, path, json=body, headers=headers[who]) for who in ("alice", "carol")]
        assert [a.status_code for a in answers] == [404, 404], (path, body, answers[0].text)
        assert answers[0].json() == answers[1].json(), path
        assert answers[0].json()["error"]["code"] == "unknown_dataset"
    for who in ("alice", "carol"):  # not listed
        assert client.get("/v1/datasets", headers=headers[who]).json() == {"datasets": []}
        assert client.get("/v1/budget", headers=headers[who]).json() == {"budgets": []}
    assert (books(db), _spent(db)) == before  # nothing charged, nothing refunded
    db.dispose()


def test_the_analysts_history_of_a_withdrawn_budget_stays_readable(
        site: tuple[TestClient, dict[str, dict[str, str]], str]) -> None:
    client, headers, _ = site
    job = client.job_id  # type: ignore[attr-defined]
    rows = client.get("/v1/ledger", headers=headers["alice"]).json()["ledger"]
    assert [(r["dataset"], r["epsilon_exact"]) for r in rows] == [("tiny", "0.5")]
    assert client.get("/v1/ledger?dataset=tiny", headers=headers["alice"]).json()["ledger"] == rows
    assert client.get("/v1/ledger?dataset=tiny", headers=headers["carol"]).status_code == 404
    assert client.get(f"/v1/jobs/{job}", headers=headers["alice"]).json()["status"] == "queued"
    assert client.post(f"/v1/jobs/{job}/cancel", headers=headers["alice"]).json()["status"] == "cancelled"


def _spent(db: Database) -> list[tuple[int, int]]:
    from sqlalchemy import select

    from dprm.server.tables import budgets

    with db.read() as connection:
        return [tuple(r) for r in connection.execute(select(budgets.c.total_units, budgets.c.spent_units)).all()]


def _signed_in(client: TestClient, token: str) -> str:
    """Sign ``client`` in with ``token``; the session's form token."""
    client.cookies.clear()
    form = re.search(r'name="csrf" value="([^"]+)"', client.get("/ui/signin").text).group(1)
    assert client.post("/ui/signin", data={"csrf": form, "token": token}, follow_redirects=False).status_code == 303
    return re.search(r'name="csrf" value="([^"]+)"', client.get("/ui/jobs").text).group(1)


def test_the_pages_answer_a_withdrawn_budget_as_one_never_granted(
        site: tuple[TestClient, dict[str, dict[str, str]], str]) -> None:
    client, headers, url = site
    tokens = {who: h["Authorization"].split(" ", 1)[1] for who, h in headers.items()}
    db = Database(url)
    before = books(db), _spent(db)
    statuses = {}
    for who in ("alice", "carol"):
        csrf = _signed_in(client, tokens[who])
        listed = client.get("/ui/datasets")
        assert listed.status_code == 200 and "/ui/datasets/tiny" not in listed.text
        answers = [
            client.get("/ui/datasets/tiny"),
            client.post("/ui/datasets/tiny/cost", data={**JOB_FORM, "csrf": csrf, "dummy": "on"}),
            client.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": csrf, "dummy": "on", "action": "run"}),
            client.post("/ui/datasets/tiny/statistics", data={"left": "[a]", "right": "[b]", "epsilon": "0.5",
                                                              "dummy": "on", "csrf": csrf, "action": "run"}),
        ]
        statuses[who] = [a.status_code for a in answers]
        assert all("no such dataset for this analyst" in a.text for a in answers), [a.text[-300:] for a in answers]
        if who == "alice":  # her history: the ledger page lists the spent charge, not linked to the dataset
            ledger = client.get("/ui/ledger")
            assert ledger.status_code == 200 and "0.5" in ledger.text
            assert 'href="/ui/datasets/tiny"' not in ledger.text
            job = client.get(f"/ui/jobs/{client.job_id}")  # type: ignore[attr-defined]
            assert job.status_code == 200 and 'href="/ui/datasets/tiny"' not in job.text
    assert statuses["alice"] == statuses["carol"] and set(statuses["alice"]) == {404}
    assert (books(db), _spent(db)) == before
    db.dispose()


def test_a_budget_granted_again_opens_the_dataset_again(
        site: tuple[TestClient, dict[str, dict[str, str]], str]) -> None:
    client, headers, url = site
    code, out, _ = run(["admin", "--db", url, "budget", "set", "alice", "tiny", "2"])
    assert code == 0 and "alice on tiny: total 2, spent 1, remaining 1" in out
    assert client.get("/v1/datasets/tiny", headers=headers["alice"]).status_code == 200
    assert [b["dataset"] for b in client.get("/v1/budget", headers=headers["alice"]).json()["budgets"]] == ["tiny"]
