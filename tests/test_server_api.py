"""The analysts' API: authentication, isolation, budgets, jobs, primitives, dry runs, dummies.

One served app (SQLite, one worker process) for most tests; the analysts alice and
bob have 10 ε each on the dataset ``tiny`` (200 rows written by the tests).
"""

from __future__ import annotations

import json
import time
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402
from sqlalchemy import select, update  # noqa: E402

from dprm.server import accounts  # noqa: E402
from dprm.server.app import create_app  # noqa: E402
from dprm.server.database import Database  # noqa: E402
from dprm.server.tables import audit, charges, datasets, ledger  # noqa: E402
from dprm.server.units import fraction_text  # noqa: E402
from server_support import setup_server_db, tiny_views  # noqa: E402

STATS = {"dataset": "tiny", "epsilon": 0.5, "left": {"attr": "a", "eq": True}, "right": {"attr": "b", "eq": True}}
TREES = {"dataset": "tiny", "epsilon": 0.5,
         "left_tree": {"split": {"attr": "a", "eq": True}, "yes": {"leaf": True},
                       "no": {"split": {"attr": "state", "eq": "CA"}, "yes": {"leaf": True}, "no": {"leaf": True}}},
         "right_tree": {"split": {"attr": "x", "le": 50}, "yes": {"leaf": True}, "no": {"leaf": True}}}
JOB = {"dataset": "tiny", "algorithm": "alt-expm", "epsilon": 1, "parameters": {"init_trials": 1, "depth": 2}}


class Server:
    def __init__(self, client: TestClient, tokens: dict[str, str], url: str, folder: Path) -> None:
        self.client = client
        self.tokens = tokens
        self.url = url
        self.folder = folder
        self.db = Database(url)

    def headers(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def get(self, path: str, who: str = "alice", **kwargs: Any) -> Any:
        return self.client.get(path, headers=self.headers(who), **kwargs)

    def post(self, path: str, body: Any = None, who: str = "alice", **kwargs: Any) -> Any:
        return self.client.post(path, json=body, headers=self.headers(who), **kwargs)

    def remaining(self, who: str = "alice", dataset: str = "tiny") -> Fraction:
        body = self.get(f"/v1/budget?dataset={dataset}", who).json()
        return Fraction(body["budgets"][0]["exact"]["remaining"])

    def wait(self, job_id: str, who: str = "alice", timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.get(f"/v1/jobs/{job_id}", who).json()
            if state["status"] not in ("queued", "running"):
                return state
            time.sleep(0.2)
        raise AssertionError(f"job {job_id} did not finish")

    def ledger_total(self) -> Fraction:
        with self.db.read() as c:
            return sum((Fraction(t) for t in c.execute(select(ledger.c.epsilon_exact)).scalars()), Fraction(0))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("api")
    url = str(folder / "server.db")
    tokens = setup_server_db(url, folder)
    app = create_app(url, workers=1, rate=1000.0, burst=1000)
    with TestClient(app) as client:
        yield Server(client, tokens, url, folder)


def _error(response: Any) -> str:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    assert "Traceback" not in response.text
    return body["error"]["code"]


# -- who may ask -----------------------------------------------------------------------------


def test_health_and_docs_need_no_token(server: Server) -> None:
    assert server.client.get("/health").json()["status"] == "ok"
    assert server.client.get("/docs").status_code == 404  # no third-party scripts unless served with --docs
    schema = server.client.get("/openapi.json").json()
    assert "/v1/primitives/redescription-statistics" in schema["paths"]


def test_every_other_endpoint_needs_a_valid_token(server: Server) -> None:
    assert _error(server.client.get("/v1/datasets")) == "missing_token"
    assert server.client.get("/v1/datasets").status_code == 401
    for header in ("Bearer nonsense", "Bearer dprm_000000000000_" + "A" * 43, "Basic abc",
                   "Bearer " + server.tokens["alice"][:-1] + ("B" if server.tokens["alice"][-1] != "B" else "C")):
        response = server.client.get("/v1/budget", headers={"Authorization": header})
        assert response.status_code == 401 and _error(response) == "invalid_token"


def test_disabled_expired_and_rotated_tokens_are_refused(server: Server) -> None:
    with server.db.write() as c:
        token = accounts.add_analyst(c, "carol")
    headers = {"Authorization": f"Bearer {token}"}
    assert server.client.get("/v1/budget", headers=headers).status_code == 200
    with server.db.write() as c:
        accounts.set_disabled(c, "carol", True)
    assert _error(server.client.get("/v1/budget", headers=headers)) == "token_disabled"
    with server.db.write() as c:
        accounts.set_disabled(c, "carol", False)
        new = accounts.rotate_token(c, "carol", expires_at=time.time() - 1)
    assert _error(server.client.get("/v1/budget", headers=headers)) == "invalid_token"
    assert _error(server.client.get("/v1/budget", headers={"Authorization": f"Bearer {new}"})) == "token_expired"


def test_rate_limit_per_token(tmp_path: Path) -> None:
    url = str(tmp_path / "s.db")
    tokens = setup_server_db(url, tmp_path)
    with TestClient(create_app(url, workers=0, rate=0.5, burst=3, background=False)) as client:
        alice = {"Authorization": f"Bearer {tokens['alice']}"}
        codes = [client.get("/v1/budget", headers=alice).status_code for _ in range(5)]
        assert codes == [200, 200, 200, 429, 429]
        limited = client.get("/v1/budget", headers=alice)
        assert _error(limited) == "rate_limited" and int(limited.headers["Retry-After"]) >= 1
        assert client.get("/v1/budget", headers={"Authorization": f"Bearer {tokens['bob']}"}).status_code == 200


# -- what may be seen ------------------------------------------------------------------------


def test_datasets_show_the_public_schema_and_nothing_computed_from_rows(server: Server) -> None:
    body = server.get("/v1/datasets").json()
    [tiny] = body["datasets"]
    assert tiny["name"] == "tiny" and tiny["id_column"] == "id"
    assert tiny["views"]["left"] == [{"name": "a", "type": "boolean"},
                                     {"name": "state", "type": "categorical", "categories": ["CA", "NY", "TX"]}]
    assert tiny["views"]["right"][1] == {"name": "x", "type": "numeric", "bounds": [0, 100]}
    text = json.dumps(body)
    for word in ("rows", "missing", "count", "n_rows", "200", "path", "sha256"):
        assert word not in text, word
    assert server.get("/v1/datasets/tiny").json()["name"] == "tiny"
    assert _error(server.get("/v1/datasets/nope")) == "unknown_dataset"


def test_a_dataset_without_a_grant_is_unknown(server: Server) -> None:
    with server.db.write() as c:
        token = accounts.add_analyst(c, "dave")
    headers = {"Authorization": f"Bearer {token}"}
    assert server.client.get("/v1/datasets", headers=headers).json() == {"datasets": []}
    response = server.client.post("/v1/primitives/redescription-statistics", json=STATS, headers=headers)
    assert response.status_code == 404 and _error(response) == "unknown_dataset"


def test_dummy_rows_come_from_the_schema(server: Server) -> None:
    body = server.get("/v1/datasets/tiny/dummy?rows=50&seed=3").json()
    left = body["views"]["left"]
    assert left["columns"] == ["id", "a", "state"] and len(left["rows"]) == 50
    assert {row[2] for row in left["rows"]} <= {"CA", "NY", "TX"}
    assert all(0 <= row[2] <= 100 for row in body["views"]["right"]["rows"])
    assert body == server.get("/v1/datasets/tiny/dummy?rows=50&seed=3").json()


# -- primitives ---------------------------------------------------------------------------------


def test_redescription_statistics_are_charged_and_in_the_ledger(server: Server) -> None:
    before, ledger_before = server.remaining(), server.ledger_total()
    response = server.post("/v1/primitives/redescription-statistics", STATS)
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body["noisy"]) == {"support_left", "support_right", "intersection", "union", "jaccard", "p_value"}
    assert body["noisy"]["jaccard"] > 0.6  # b copies a on ~90 % of rows
    lo, hi = body["interval"]["jaccard"]
    assert lo <= body["noisy"]["jaccard"] <= hi
    assert body["privacy"]["guarantee"] == "pure-dp" and body["privacy"]["private"] is True
    assert body["privacy"]["ledger"] == [{"step": "redescription statistics: cell counts",
                                          "mechanism": "discrete-laplace histogram", "epsilon": 0.5}]
    assert server.remaining() == before - Fraction(1, 2)
    assert server.ledger_total() == ledger_before + Fraction(1, 2)
    mine = server.get("/v1/ledger?dataset=tiny").json()["ledger"]
    assert mine[0]["step"] == "redescription statistics: cell counts" and mine[0]["epsilon_exact"] == "0.5"


def test_leaf_pair_counts_of_two_trees(server: Server) -> None:
    before = server.remaining()
    body = server.post("/v1/primitives/leaf-pair-counts", TREES).json()
    assert [leaf["text"] for leaf in body["left_leaves"]] == ["a", "[a = false] ∧ [state = CA]",
                                                              "[a = false] ∧ ([state = NY] ∨ [state = TX])"]
    assert [leaf["query"] for leaf in body["right_leaves"]] == [{"attr": "x", "le": 50}, {"attr": "x", "gt": 50}]
    counts = body["counts"]
    assert len(counts) == 4 and all(len(row) == 3 for row in counts)  # leaves + residual
    assert abs(sum(map(sum, counts)) - 200) < 60
    assert server.remaining() == before - Fraction(1, 2)


def test_dry_runs_cost_nothing_and_say_the_exact_cost(server: Server) -> None:
    before, ledger_before = server.remaining(), server.ledger_total()
    for path, body in (("/v1/primitives/redescription-statistics", STATS), ("/v1/primitives/leaf-pair-counts", TREES),
                       ("/v1/jobs", JOB)):
        answer = server.post(path, {**body, "epsilon": "0.123456789", "dry_run": True})
        assert answer.status_code == 200, answer.text
        answer = answer.json()
        assert answer["cost_exact"] == "0.123456789" and answer["remaining_exact"] == fraction_text(before)
        assert answer["affordable"] is True and answer["dry_run"] is True
    too_much = server.post("/v1/jobs", {**JOB, "epsilon": 1000, "dry_run": True}).json()
    assert too_much["affordable"] is False
    assert server.remaining() == before and server.ledger_total() == ledger_before


def test_the_advertised_limits_are_accepted(server: Server) -> None:
    """Each algorithm's parameter limits in /v1/algorithms pass the job check at both ends."""
    algorithms = server.get("/v1/algorithms").json()["algorithms"]
    for name, entry in algorithms.items():
        for parameter, (low, high) in entry["limits"].items():
            for value in (low, high):
                answer = server.post("/v1/jobs", {**JOB, "algorithm": name, "parameters": {parameter: value},
                                                  "dry_run": True})
                assert answer.status_code == 200, (name, parameter, value, answer.text)


def test_dummy_primitives_and_jobs_cost_nothing(server: Server) -> None:
    before = server.remaining()
    body = server.post("/v1/primitives/redescription-statistics", {**STATS, "dummy": True, "dummy_rows": 500}).json()
    assert body["dummy"] is True and "budget" not in body
    job = server.post("/v1/jobs", {**JOB, "dummy": True}).json()
    assert server.wait(job["id"])["status"] == "done"
    document = server.get(f"/v1/jobs/{job['id']}/result").json()
    assert document["parameters"]["dummy"] is True
    assert server.remaining() == before


def test_answers_on_dummy_data_are_not_labelled_private(server: Server) -> None:
    """Dummy answers said ``"guarantee": "pure-dp"``, as if the real rows had been released under
    DP. They touch no private row: the spec's label for a result that is not a DP release of the
    data is ``none``, with the reason; the rest of the privacy block is what the run did."""
    from dprm.privacy.accountant import is_guarantee
    from dprm.server.dummy import DUMMY_REASON

    stats = server.post("/v1/primitives/redescription-statistics", {**STATS, "dummy": True, "dummy_rows": 500}).json()
    pairs = server.post("/v1/primitives/leaf-pair-counts", {**TREES, "dummy": True, "dummy_rows": 500}).json()
    job = server.post("/v1/jobs", {**JOB, "dummy": True}).json()
    assert server.wait(job["id"])["status"] == "done"
    document = server.get(f"/v1/jobs/{job['id']}/result").json()
    for privacy in (stats["privacy"], pairs["privacy"], document["privacy"]):
        assert privacy["guarantee"] == "none" and privacy["private"] is False and is_guarantee(privacy["guarantee"])
        assert privacy["reasons"] == [DUMMY_REASON]
        assert list(privacy)[:6] == ["epsilon", "neighbouring", "guarantee", "private", "reasons", "ledger"]
    assert stats["privacy"]["epsilon"] == 0.5 and stats["privacy"]["ledger"][0]["epsilon"] == 0.5
    assert sum(entry["epsilon"] for entry in document["privacy"]["ledger"]) == pytest.approx(1)
    assert "pure-dp" not in json.dumps([stats, pairs, document])
    real = server.post("/v1/primitives/redescription-statistics", STATS).json()["privacy"]
    assert (real["guarantee"], real["private"], real["reasons"]) == ("pure-dp", True, [])


def test_over_budget_is_refused_and_charges_nothing(server: Server) -> None:
    before, ledger_before = server.remaining(), server.ledger_total()
    for path, body in (("/v1/primitives/redescription-statistics", STATS), ("/v1/jobs", JOB)):
        response = server.post(path, {**body, "epsilon": float(before) + 0.5})
        assert response.status_code == 403 and _error(response) == "budget_exceeded"
        assert f"remaining budget {fraction_text(before)} on" in response.json()["error"]["message"]
    assert server.remaining() == before and server.ledger_total() == ledger_before


# -- literals the public schema decides ----------------------------------------------------------

#: Literals no value of tiny's declared domains satisfies (x in [0, 100], state in CA, NY, TX),
#: inside the queries an analyst may send, with the literal as the refusal names it.
OUTSIDE = [
    ("right", {"attr": "x", "gt": 1000}, "[x > 1000]", "x"),
    ("right", {"attr": "x", "gt": 100}, "[x > 100]", "x"),  # the bounds are closed: 100 is the largest value
    ("right", {"attr": "x", "lt": 0}, "[x < 0]", "x"),
    ("right", {"attr": "x", "ge": 60, "le": 40}, "[60 ≤ x ≤ 40]", "x"),
    ("right", {"or": [{"attr": "b", "eq": True}, {"attr": "x", "le": -5}]}, "[x ≤ -5]", "x"),
    ("left", {"and": [{"attr": "a", "eq": True}, {"not": {"attr": "state", "eq": "ZZ"}}]}, "[state = ZZ]", "state"),
]


def _books(server: Server) -> tuple[Fraction, Fraction, int]:
    with server.db.read() as c:
        count = len(c.execute(select(charges.c.id)).all())
    return server.remaining(), server.ledger_total(), count


@pytest.mark.parametrize("side, literal, text, attribute", OUTSIDE)
def test_a_literal_outside_the_public_domain_is_refused_before_any_charge(
        server: Server, side: str, literal: dict, text: str, attribute: str) -> None:
    """``[x > 1000]`` on bounds [0, 100] was answered and charged: its support is empty whatever
    the rows, known from the public schema. Refused, real, dry run and dummy alike, nothing charged."""
    before = _books(server)
    messages = set()
    for extra in ({}, {"dry_run": True}, {"dummy": True}):
        answer = server.post("/v1/primitives/redescription-statistics", {**STATS, side: literal, **extra})
        assert answer.status_code == 422 and _error(answer) == "outside_domain", (extra, answer.text)
        messages.add(answer.json()["error"]["message"])
    [message] = messages  # the same words whatever the request's mode: nothing from the rows
    assert message.startswith(f"{side}: ") and text in message and "declared domain" in message
    assert f"'{attribute}'" in message
    assert _books(server) == before


@pytest.mark.parametrize("seed", range(5))
def test_what_the_domain_decides_matches_a_brute_force_over_its_values(seed: int) -> None:
    """Oracle: a numeric literal's truth is constant between its bounds and the domain's ends, so
    trying those points and the midpoints between them decides "no value" and "every value"."""
    import numpy as np

    from dprm.queries import NumericLiteral
    from dprm.server.public_domain import satisfied_by

    rng = np.random.default_rng(seed)
    ops = {"gt": np.greater, "ge": np.greater_equal, "lt": np.less, "le": np.less_equal}
    for _ in range(400):
        low, high = sorted(rng.integers(-5, 6, 2).astype(float))
        keys = rng.choice(list(ops), size=rng.integers(1, 4), replace=False)
        bounds = {str(k): float(rng.integers(-8, 9)) / 2 for k in keys}
        points = sorted({low, high, *(b for b in bounds.values() if low <= b <= high)})
        candidates = np.array(points + [(a + b) / 2 for a, b in zip(points, points[1:])])
        holds = np.ones(candidates.size, dtype=bool)
        for key, bound in bounds.items():
            holds &= ops[key](candidates, bound)
        expected = "none" if not holds.any() else "every" if holds.all() else None
        entry = {"name": "x", "type": "numeric", "bounds": [low, high]}
        assert satisfied_by(NumericLiteral("x", **bounds), entry) == expected, (low, high, bounds)


def test_literals_inside_the_domain_or_deciding_on_missing_values_are_accepted(server: Server) -> None:
    """Only literals that hold for no declared value, or for every one where no value can be
    missing, are decided by the schema: a bound reached by the domain's end is inside it, and
    [x ≥ 0] holds exactly where x has a value, which the rows decide (x is not declared complete)."""
    for literal in ({"attr": "x", "ge": 100}, {"attr": "x", "le": 0}, {"attr": "x", "ge": 0},
                    {"attr": "x", "gt": 99.5}, {"attr": "x", "ge": -50, "le": 150}):
        answer = server.post("/v1/primitives/redescription-statistics", {**STATS, "right": literal, "dry_run": True})
        assert answer.status_code == 200, (literal, answer.text)


def test_a_tree_split_the_public_domain_decides_is_refused(server: Server) -> None:
    """A split every declared value passes leaves its 'no' branch empty (missing values drop out of
    the tree), one no value passes its 'yes' branch: known from the schema, refused."""
    before = _books(server)
    right = TREES["right_tree"]
    for split, words in (({"attr": "x", "le": 100}, "for every value"), ({"attr": "x", "gt": 100}, "for no value"),
                         ({"attr": "x", "ge": 0}, "for every value")):
        tree = {**right, "split": split}
        for extra in ({}, {"dry_run": True}):
            answer = server.post("/v1/primitives/leaf-pair-counts", {**TREES, "right_tree": tree, **extra})
            assert answer.status_code == 422 and _error(answer) == "outside_domain", answer.text
            message = answer.json()["error"]["message"]
            assert message.startswith("right_tree.split: ") and words in message and "'x'" in message
    nested = {**TREES["left_tree"], "no": {"split": {"attr": "state", "eq": "FL"}, "yes": {"leaf": True},
                                           "no": {"leaf": True}}}
    answer = server.post("/v1/primitives/leaf-pair-counts", {**TREES, "left_tree": nested})
    assert _error(answer) == "outside_domain"
    assert answer.json()["error"]["message"].startswith("left_tree.no.split: [state = FL] holds for no value")
    assert _books(server) == before


def test_a_tree_split_the_splits_above_it_decide_is_refused(server: Server) -> None:
    """A split repeated below itself, or one its path already decides ([x ≤ 60] under [x ≤ 50], another
    category under [state = CA]), leaves a branch empty whatever the rows: the ε would buy nothing."""
    before = _books(server)
    leaf = {"leaf": True}
    a = {"attr": "a", "eq": True}
    repeated = {"split": a, "yes": {"split": a, "yes": leaf, "no": leaf}, "no": leaf}
    wider = {"split": {"attr": "x", "le": 50}, "yes": {"split": {"attr": "x", "le": 60}, "yes": leaf, "no": leaf},
             "no": leaf}
    other = {"split": {"attr": "state", "eq": "CA"}, "no": leaf,
             "yes": {"split": {"attr": "state", "eq": "NY"}, "yes": leaf, "no": leaf}}
    cases = (("left_tree", repeated, "left_tree.yes.split"), ("right_tree", wider, "right_tree.yes.split"),
             ("left_tree", other, "left_tree.yes.split"))
    for side, tree, where in cases:
        for extra in ({}, {"dry_run": True}):
            answer = server.post("/v1/primitives/leaf-pair-counts", {**TREES, side: tree, **extra})
            assert answer.status_code == 422 and _error(answer) == "outside_domain", answer.text
            assert answer.json()["error"]["message"] == (f"{where}: the splits above it leave one of its branches "
                                                         f"empty whatever the rows")
    narrower = {"split": {"attr": "x", "le": 50}, "yes": {"split": {"attr": "x", "le": 20}, "yes": leaf, "no": leaf},
                "no": leaf}
    answer = server.post("/v1/primitives/leaf-pair-counts", {**TREES, "right_tree": narrower, "dry_run": True})
    assert answer.status_code == 200, answer.text  # a split inside the path's interval splits it
    assert _books(server) == before


def _with_x_complete(tmp_path: Path) -> tuple[str, Database, dict[str, str]]:
    """A server database with ``tiny`` and ``whole`` (the same views, x declared complete) and alice's
    headers, with a budget of 10 on ``whole``."""
    from dprm.server import budget as budgets
    from dprm.server.datasets import register_dataset
    from dprm.server.units import epsilon_units

    url = str(tmp_path / "s.db")
    tokens = setup_server_db(url, tmp_path)
    whole = tmp_path / "whole"
    whole.mkdir()
    left, right, types = tiny_views(whole)
    declared = json.loads(types.read_text())
    declared["columns"]["x"]["complete"] = True
    types.write_text(json.dumps(declared))
    db = Database(url)
    register_dataset(db, "whole", left, right, types, same_files_ok=True)  # tiny's rows, another types file
    with db.write() as c:
        budgets.set_budget(c, accounts.find_analyst(c, "alice").id, 2, epsilon_units("10"))
    return url, db, {"Authorization": f"Bearer {tokens['alice']}"}


def test_a_literal_every_value_satisfies_on_a_complete_column_is_refused(tmp_path: Path) -> None:
    """Where the types file declares a column complete (no missing value, public), a literal
    every declared value satisfies holds on every row: its answer is known, refused."""
    url, db, headers = _with_x_complete(tmp_path)
    path = "/v1/primitives/redescription-statistics"
    with TestClient(create_app(url, workers=0, background=False)) as client:
        schema = client.get("/v1/datasets/whole", headers=headers).json()
        assert schema["views"]["right"][1] == {"name": "x", "type": "numeric", "bounds": [0, 100], "complete": True}
        for dataset, code in (("whole", "outside_domain"), ("tiny", None)):
            answer = client.post(path, json={**STATS, "dataset": dataset, "right": {"attr": "x", "ge": 0},
                                             "dry_run": True}, headers=headers)
            assert (answer.status_code == 200) if code is None else _error(answer) == code, answer.text
        message = client.post(path, json={**STATS, "dataset": "whole", "right": {"attr": "x", "le": 100}},
                              headers=headers).json()["error"]["message"]
        assert "[x ≤ 100]" in message and "for every value" in message and "complete" in message
        assert client.get("/v1/budget", headers=headers).json()["budgets"][0]["exact"]["spent"] == "0"
    db.dispose()


def test_a_compound_query_the_schema_decides_is_refused_and_one_the_rows_decide_is_not(tmp_path: Path) -> None:
    """`a ∧ ¬a` holds on no row and `a ∨ ¬a` on every row whatever the data; `[x ≤ 50] ∨ [x > 50]` on every
    row only where x is declared complete (elsewhere it asks how many rows have x): the first ones, and
    the last on the complete column, are refused before anything is charged; the others are accepted."""
    url, db, headers = _with_x_complete(tmp_path)
    path = "/v1/primitives/redescription-statistics"
    a, b = {"attr": "a", "eq": True}, {"attr": "b", "eq": True}
    low, high = {"attr": "x", "le": 50}, {"attr": "x", "gt": 50}
    refused = [("whole", "left", {"and": [a, {"not": a}]}, "holds on no row"),
               ("tiny", "left", {"or": [{"not": a}, a]}, "holds on every row"),
               ("tiny", "right", {"and": [b, {"attr": "x", "gt": 60}, {"attr": "x", "lt": 40}]}, "holds on no row"),
               ("whole", "right", {"or": [low, high]}, "holds on every row")]
    not_ca = {"not": {"attr": "state", "eq": "CA"}}
    accepted = [("tiny", "right", {"or": [low, high]}), ("whole", "left", {"and": [a, not_ca]}),
                ("whole", "right", {"or": [b, high]})]
    with TestClient(create_app(url, workers=0, background=False)) as client:
        for dataset, side, query, words in refused:
            for extra in ({"dry_run": True}, {}):
                answer = client.post(path, json={**STATS, "dataset": dataset, side: query, **extra}, headers=headers)
                assert answer.status_code == 422 and _error(answer) == "outside_domain", answer.text
                message = answer.json()["error"]["message"]
                assert message.startswith(f"{side}: ") and words in message and "nothing was charged" in message
        for dataset, side, query in accepted:
            answer = client.post(path, json={**STATS, "dataset": dataset, side: query, "dry_run": True},
                                 headers=headers)
            assert answer.status_code == 200, (query, answer.text)
        budget = client.get("/v1/budget", headers=headers).json()["budgets"]
        assert [entry["exact"]["spent"] for entry in budget] == ["0"] * len(budget)
    db.dispose()


# -- one name and one range for the intervals' level ---------------------------------------------


def test_the_confidence_of_intervals_has_one_range_for_jobs_and_statistics(server: Server) -> None:
    """The statistics' ``confidence`` took [0.5, 0.999] and the miners' (0, 1): one name, one range."""
    for value in (0.3, 0.5, 0.95, 0.9995):
        stats = server.post("/v1/primitives/redescription-statistics", {**STATS, "confidence": value, "dry_run": True})
        job = server.post("/v1/jobs", {**JOB, "parameters": {"confidence": value}, "dry_run": True})
        assert (stats.status_code, job.status_code) == (200, 200), (value, stats.text, job.text)
    for value in (0.0, 1.0, -0.5, 1.5):
        stats = server.post("/v1/primitives/redescription-statistics", {**STATS, "confidence": value, "dry_run": True})
        job = server.post("/v1/jobs", {**JOB, "parameters": {"confidence": value}, "dry_run": True})
        assert (stats.status_code, job.status_code) == (422, 422), (value, stats.text, job.text)
        assert "confidence" in stats.json()["error"]["message"] and "confidence" in job.json()["error"]["message"]
    body = server.post("/v1/primitives/redescription-statistics", {**STATS, "confidence": 0.3, "dummy": True}).json()
    assert body["interval"]["confidence"] == 0.3
    schema = server.client.get("/openapi.json").json()["components"]["schemas"]["StatisticsRequest"]
    level = schema["properties"]["confidence"]
    assert (level.get("exclusiveMinimum"), level.get("exclusiveMaximum")) == (0, 1)


# -- jobs ------------------------------------------------------------------------------------------


def test_a_job_runs_in_a_worker_and_its_ledger_adds_up(server: Server) -> None:
    before = server.remaining()
    response = server.post("/v1/jobs", JOB)
    assert response.status_code == 201, response.text
    job = response.json()
    assert job["status"] == "queued" and job["epsilon_exact"] == "1"
    assert server.remaining() == before - 1  # reserved at submission
    state = server.wait(job["id"])
    assert state["status"] == "done" and state["progress"] == 1.0, state
    document = server.get(f"/v1/jobs/{job['id']}/result").json()
    assert document["format"] == "dprm.redescriptions/1" and document["algorithm"] == "alt-expm"
    assert document["privacy"]["private"] is True
    rows = [r for r in server.get("/v1/ledger").json()["ledger"] if r["job"] == job["id"]]
    assert sum(Fraction(r["epsilon_exact"]) for r in rows) == 1
    assert sum(Fraction(r["epsilon"]).limit_denominator(10**6) for r in rows) == 1
    listed = server.get("/v1/jobs").json()["jobs"]
    assert job["id"] in [j["id"] for j in listed]
    assert "worker_pid" not in json.dumps(listed) and "owner_error" not in json.dumps(listed)


def test_another_analysts_job_is_not_found(server: Server) -> None:
    job = server.post("/v1/jobs", JOB).json()
    for path in (f"/v1/jobs/{job['id']}", f"/v1/jobs/{job['id']}/result"):
        response = server.get(path, who="bob")
        assert response.status_code == 404 and _error(response) == "unknown_job"
    response = server.post(f"/v1/jobs/{job['id']}/cancel", who="bob")
    assert response.status_code == 404 and _error(response) == "unknown_job"
    assert job["id"] not in json.dumps(server.get("/v1/jobs", who="bob").json())
    assert job["id"] not in json.dumps(server.get("/v1/ledger", who="bob").json())
    assert server.wait(job["id"])["status"] == "done"


def test_an_idempotency_key_charges_once(server: Server) -> None:
    before = server.remaining()
    body = {**JOB, "epsilon": 0.25, "idempotency_key": "run-7"}
    first = server.post("/v1/jobs", body)
    second = server.post("/v1/jobs", body)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["id"] == second.json()["id"]
    assert server.remaining() == before - Fraction(1, 4)
    other = server.post("/v1/jobs", {**body, "epsilon": 0.5})
    assert other.status_code == 409 and _error(other) == "idempotency_key_reused"
    as_text = server.post("/v1/jobs", {**body, "epsilon": "0.25"})
    assert as_text.status_code == 200 and as_text.json()["id"] == first.json()["id"]  # the same request, spelt otherwise
    assert server.post("/v1/jobs", body, who="bob").status_code == 201  # keys are per analyst
    server.wait(first.json()["id"])


def test_an_analyst_may_hold_only_so_many_jobs_and_workers_take_turns(tmp_path: Path) -> None:
    """Free dummy jobs count too (they hold workers); a refusal writes nothing; once
    alice has a job running, bob's newer job is claimed before alice's older ones."""
    from dprm.server import jobs as job_queue
    from dprm.server.tables import jobs as jobs_table

    url = str(tmp_path / "s.db")
    tokens = setup_server_db(url, tmp_path)
    alice, bob = ({"Authorization": f"Bearer {tokens[who]}"} for who in ("alice", "bob"))
    dummy = {**JOB, "dummy": True, "dummy_rows": 50}
    with TestClient(create_app(url, workers=0, background=False, max_active_jobs=3)) as client:
        ids = [client.post("/v1/jobs", json=dummy, headers=alice).json()["id"] for _ in range(3)]
        refused = client.post("/v1/jobs", json=JOB, headers=alice)
        assert refused.status_code == 429 and _error(refused) == "too_many_jobs"
        assert client.get("/v1/budget", headers=alice).json()["budgets"][0]["exact"]["spent"] == "0"
        assert len(client.get("/v1/jobs", headers=alice).json()["jobs"]) == 3
        assert client.post("/v1/jobs", json={**dummy, "dry_run": True}, headers=alice).status_code == 200
        theirs = client.post("/v1/jobs", json=dummy, headers=bob).json()["id"]
        db = Database(url)
        first = job_queue.claim_next(db, "w1")
        assert first.public_id == ids[0]  # the oldest job when nobody runs one
        second = job_queue.claim_next(db, "w2")
        assert second.public_id == theirs  # bob runs nothing yet: his turn before alice's second job
        assert job_queue.claim_next(db, "w3").public_id == ids[1]
        client.post(f"/v1/jobs/{ids[2]}/cancel", headers=alice)
        assert client.post("/v1/jobs", json=dummy, headers=alice).status_code == 201  # two running, one queued
        assert client.post("/v1/jobs", json=dummy, headers=alice).status_code == 429
        with db.write() as connection:
            connection.execute(update(jobs_table).where(jobs_table.c.public_id == ids[0]).values(status="done"))
        assert client.post("/v1/jobs", json=dummy, headers=alice).status_code == 201


def test_results_of_unfinished_jobs_are_refused_and_cancel_refunds_a_queued_job(tmp_path: Path) -> None:
    url = str(tmp_path / "s.db")
    tokens = setup_server_db(url, tmp_path)
    headers = {"Authorization": f"Bearer {tokens['alice']}"}
    with TestClient(create_app(url, workers=0, background=False)) as client:
        job = client.post("/v1/jobs", json=JOB, headers=headers).json()
        assert _error(client.get(f"/v1/jobs/{job['id']}/result", headers=headers)) == "job_not_done"
        assert client.get("/v1/budget", headers=headers).json()["budgets"][0]["exact"]["spent"] == "1"
        cancelled = client.post(f"/v1/jobs/{job['id']}/cancel", headers=headers).json()
        assert cancelled["status"] == "cancelled"
        assert client.get("/v1/budget", headers=headers).json()["budgets"][0]["exact"]["spent"] == "0"
        assert _error(client.get(f"/v1/jobs/{job['id']}/result", headers=headers)) == "job_cancelled"
        again = client.post(f"/v1/jobs/{job['id']}/cancel", headers=headers)  # idempotent: refunded once
        assert again.status_code == 200 and again.json()["status"] == "cancelled"
        assert client.get("/v1/budget", headers=headers).json()["budgets"][0]["exact"]["spent"] == "0"
        db = Database(url)
        with db.read() as c:
            assert c.execute(select(charges.c.status)).scalars().all() == ["refunded"]
            assert c.execute(select(ledger)).first() is None
        db.dispose()


# -- the data's files and errors that depend on the rows ------------------------------------


def test_a_changed_dataset_file_is_refused_and_refunded(tmp_path: Path) -> None:
    url = str(tmp_path / "s.db")
    tokens = setup_server_db(url, tmp_path)
    headers = {"Authorization": f"Bearer {tokens['alice']}"}
    with TestClient(create_app(url, workers=1)) as client:
        with open(tmp_path / "left.csv", "a") as handle:
            handle.write("999,1,CA\n")
        response = client.post("/v1/primitives/redescription-statistics", json=STATS, headers=headers)
        assert response.status_code == 503 and _error(response) == "dataset_changed"
        job = client.post("/v1/jobs", json=JOB, headers=headers).json()
        deadline = time.monotonic() + 120
        while (state := client.get(f"/v1/jobs/{job['id']}", headers=headers).json())["status"] in ("queued", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert state["status"] == "failed" and state["error"]["code"] == "dataset_changed"
        (tmp_path / "left.csv").unlink()
        response = client.post("/v1/primitives/leaf-pair-counts", json=TREES, headers=headers)
        assert response.status_code == 503 and _error(response) == "dataset_missing"
        budget = client.get("/v1/budget", headers=headers).json()["budgets"][0]["exact"]
        assert budget["spent"] == "0"  # no row was read: everything refunded
        assert client.get("/v1/ledger", headers=headers).json()["ledger"] == []


def test_an_error_that_depends_on_the_rows_reaches_only_the_owner(tmp_path: Path) -> None:
    url = str(tmp_path / "s.db")
    tokens = setup_server_db(url, tmp_path)
    db = Database(url)
    with db.write() as c:  # the owner narrows a domain after registration: loading now fails on a value
        types = json.loads(c.execute(select(datasets.c.types_json)).scalar_one())
        types["columns"]["x"]["bounds"] = [0, 10]
        c.execute(update(datasets).values(types_json=json.dumps(types)))
    headers = {"Authorization": f"Bearer {tokens['alice']}"}
    with TestClient(create_app(url, workers=1)) as client:
        response = client.post("/v1/primitives/redescription-statistics", json=STATS, headers=headers)
        assert response.status_code == 500 and _error(response) == "computation_failed"
        job = client.post("/v1/jobs", json=JOB, headers=headers).json()
        deadline = time.monotonic() + 120
        while (state := client.get(f"/v1/jobs/{job['id']}", headers=headers).json())["status"] in ("queued", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        seen = response.text + json.dumps(state["error"])
        assert state["error"]["code"] == "computation_failed"
        for leak in ("row", "value", "bounds", "'x'", "10", "outside"):
            assert leak not in seen, leak
        budget = client.get("/v1/budget", headers=headers).json()["budgets"][0]["exact"]
        assert budget["spent"] == "1.5"  # the rows were read: both charges kept
    with db.read() as c:
        details = [d for d in c.execute(select(audit.c.detail)).scalars() if d]
        from dprm.server.tables import jobs

        owner = c.execute(select(jobs.c.owner_error)).scalar_one()
    assert any("outside" in d or "bounds" in d for d in details), details
    assert "bounds" in owner or "outside" in owner
    db.dispose()


def test_every_request_is_audited(tmp_path: Path) -> None:
    """On a server of its own, so that what it counts does not depend on other tests' order."""
    url = str(tmp_path / "s.db")
    tokens = setup_server_db(url, tmp_path)
    headers = {"Authorization": f"Bearer {tokens['alice']}"}
    with TestClient(create_app(url, workers=0, background=False)) as client:
        assert client.get("/v1/budget", headers=headers).status_code == 200
        assert client.get("/v1/budget").status_code == 401
        path = "/v1/primitives/redescription-statistics"
        assert client.post(path, json=STATS, headers=headers).status_code == 200
        assert client.post(path, json={**STATS, "dummy": True, "dummy_rows": 500}, headers=headers).status_code == 200
        client.app.state.audit.flush()
        db = Database(url)
        with db.read() as c:
            rows = c.execute(select(audit).order_by(audit.c.id.desc())).all()
        db.dispose()
    assert any(r.action == "budget" and r.status == 200 and r.analyst_id == 1 for r in rows)
    assert any(r.outcome == "missing_token" and r.status == 401 and r.analyst_id is None for r in rows)
    charged = [r for r in rows if r.action == "redescription-statistics" and r.status == 200]
    assert sorted(r.epsilon_units for r in charged) == [0, 500_000_000]  # dummy: nothing charged; then paid


def test_a_queued_job_of_a_removed_dataset_fails_and_is_refunded(tmp_path: Path) -> None:
    """A job that reaches a worker after its dataset was removed (submitted in the instant of the
    removal) fails with the code the owner's forced removal gives, refunded: no row was read."""
    from dprm.server import jobs as queue
    from dprm.server.worker import run_job

    url = str(tmp_path / "s.db")
    tokens = setup_server_db(url, tmp_path)
    headers = {"Authorization": f"Bearer {tokens['alice']}"}
    with TestClient(create_app(url, workers=0, background=False)) as client:
        job = client.post("/v1/jobs", json=JOB, headers=headers).json()
        db = Database(url)
        with db.write() as c:  # the removal's update alone: the job slipped in after its count of active jobs
            c.execute(update(datasets).where(datasets.c.name == "tiny").values(active_name=None))
        claimed = queue.claim_next(db, "token-1")
        assert run_job(db, claimed.id, "token-1") == "failed"
        state = client.get(f"/v1/jobs/{job['id']}", headers=headers).json()
        assert state["status"] == "failed" and state["error"]["code"] == "dataset_removed"
        with db.read() as c:
            assert c.execute(select(charges.c.status)).scalars().all() == ["refunded"]
        db.dispose()


def test_a_post_without_a_body_says_so(server: Server) -> None:
    """It said "Field required", naming no field."""
    before = _books(server)
    for path in ("/v1/jobs", "/v1/primitives/redescription-statistics", "/v1/primitives/leaf-pair-counts"):
        answer = server.client.post(path, content=b"", headers={**server.headers("alice"),
                                                                "Content-Type": "application/json"})
        assert answer.status_code == 422 and _error(answer) == "invalid_request", answer.text
        assert answer.json()["error"]["message"] == "the request has no body: send a JSON object"
    assert _books(server) == before
