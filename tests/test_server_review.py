"""Review of the secured server: leaks to an analyst, budget integrity, robustness.

Each test pins a defect found in review (and fixed):

* a parameter that makes a job's result non-private by construction (Serenade's
  ``data_size="public"`` with ``rows``) turned the job into an exact oracle for the
  number of rows: a wrong guess failed at once with the generic message, the right
  one ran to the end and was withheld with another message;
* the JSON depth check of the request guard was quadratic in the body (a regex that
  rescans to the end from every unterminated string), so one unauthenticated request
  of ``[\\"\\"\\"...`` blocked the event loop for minutes;
* an epsilon given as a decimal text with a huge exponent (``"1e999999999"``) was
  expanded to an exact rational of a billion digits before being refused.
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from dprm.server.app import create_app  # noqa: E402
from dprm.server.database import Database  # noqa: E402
from server_support import setup_server_db  # noqa: E402

JOB = {"dataset": "tiny", "algorithm": "alt-expm", "epsilon": 1, "parameters": {"init_trials": 1, "depth": 2}}


def _error(response: Any) -> str:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    assert "Traceback" not in response.text
    return body["error"]["code"]


def _finishes(code: str) -> None:
    """Run ``code`` in a fresh interpreter; it must end (and not fail).

    A pathological input (quadratic scanning, an exponent expanded into a billion digits)
    would run for hours: the timeout of 300 s only keeps the suite from hanging, it
    measures nothing. The speed is measured by ``benchmarks/bench_server_guards.py``.
    """
    try:
        subprocess.run([sys.executable, "-c", code], check=True, timeout=300, capture_output=True)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after 300 s (a hang): {code}")


@pytest.fixture
def api(tmp_path: Path) -> Any:
    url = str(tmp_path / "s.db")
    tokens = setup_server_db(url, tmp_path)
    with TestClient(create_app(url, workers=0, background=False, rate=1000.0, burst=1000)) as client:
        client.headers.update({"Authorization": f"Bearer {tokens['alice']}"})
        client.db_url = url  # type: ignore[attr-defined]
        yield client


def _spent(client: TestClient) -> str:
    return client.get("/v1/budget?dataset=tiny").json()["budgets"][0]["exact"]["spent"]


# -- 1. a job that can only be withheld is an oracle for the number of rows -------------------


@pytest.mark.parametrize("algorithm", ["serenade-cs", "serenade-es"])
def test_a_public_data_size_is_refused_before_any_charge(api: TestClient, algorithm: str) -> None:
    for dry_run in (True, False):
        for parameters in ({"data_size": "public", "rows": 200}, {"data_size": "public", "rows": 199}):
            response = api.post("/v1/jobs", json={"dataset": "tiny", "algorithm": algorithm, "epsilon": "0.0001",
                                                  "parameters": parameters, "dry_run": dry_run})
            assert response.status_code == 422 and _error(response) == "invalid_parameter", response.text
            assert "200" not in response.json()["error"]["message"]
    assert _spent(api) == "0"
    # the private modes still go through
    ok = api.post("/v1/jobs", json={"dataset": "tiny", "algorithm": algorithm, "epsilon": 1,
                                    "parameters": {"data_size": "noisy"}, "dry_run": True})
    assert ok.status_code == 200, ok.text


def test_a_withheld_result_fails_like_any_other_computation(api: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever made a run non-private, the analyst sees the generic failure, not which one."""
    import dprm.mining as mining
    from dprm.server import jobs as queue
    from dprm.server.worker import run_job

    real = mining.make_miner

    def not_private(*args: Any, **kwargs: Any) -> Any:
        miner = real(*args, **kwargs)
        document = miner.document

        def withheld(*a: Any, **k: Any) -> Any:
            out = document(*a, **k)
            out["privacy"] = {**out["privacy"], "private": False, "reasons": ["something read off the rows"]}
            return out

        miner.document = withheld
        return miner

    monkeypatch.setattr(mining, "make_miner", not_private)
    job = api.post("/v1/jobs", json=JOB).json()
    db = Database(api.db_url)  # type: ignore[attr-defined]
    claimed = queue.claim_next(db, "token-1")
    assert run_job(db, claimed.id, "token-1") == "failed"
    state = api.get(f"/v1/jobs/{job['id']}").json()
    db.dispose()
    assert state["error"] == {"code": "computation_failed",
                              "message": "the computation failed on the server; the data owner can see why"}
    assert _spent(api) == "1"  # the rows were read: the charge is kept


# -- 2. the request guard's JSON depth check is linear ------------------------------------------


def test_json_depth_of_many_escaped_quotes_is_linear() -> None:
    _finishes("from dprm.server.guard import json_depth\n"
              "assert json_depth(b'[' + b'\\\\\"' * 300000) == 1\n"
              "assert json_depth(b'[[\"' + b'a' * 300000) == 2\n"
              "assert json_depth(b'[\"\\\\' ) == 1\n")


def test_json_depth_still_skips_strings() -> None:
    from dprm.server.guard import json_depth

    assert json_depth(b'{"a": [1, {"b": "[[[["}]}') == 3
    assert json_depth(b'"\\"[[["') == 0
    assert json_depth(b'[["\\\\"]]') == 2
    assert json_depth(b'["\\"]", ["]"]]') == 2
    assert json_depth(b"[" * 70 + b"]" * 70) == 70


def test_an_unauthenticated_body_of_escaped_quotes_is_answered_at_once(api: TestClient) -> None:
    body = b"[" + b'\\"' * 200_000
    response = api.post("/v1/jobs", content=body, headers={"Content-Type": "application/json",
                                                           "Authorization": ""})
    # the token is checked before the body is read (issue 32, item 4): the body is never parsed
    assert response.status_code == 401 and _error(response) == "missing_token"


# -- 3. an epsilon text with a huge exponent is refused without expanding it -----------------------


def test_epsilon_texts_with_huge_exponents_are_refused_at_once() -> None:
    _finishes("from dprm.errors import ParameterError\n"
              "from dprm.server.units import epsilon_units\n"
              "for text in ('1e999999999', '1E+999999999', '0e999999999', '1e-999999999', '-1e999999999',\n"
              "             '0.5e-99999999', '1/1e999999999'):\n"
              "    try:\n"
              "        epsilon_units(text)\n"
              "    except ParameterError:\n"
              "        pass\n"
              "    else:\n"
              "        raise AssertionError(text)\n")


def test_epsilon_texts_keep_their_exact_meaning() -> None:
    from dprm.errors import ParameterError
    from dprm.server.units import epsilon_units

    assert epsilon_units("1e-3") == 1_000_000 and epsilon_units("2.5E2") == 250 * 10**9
    assert epsilon_units("1e6") == 10**15 and epsilon_units("0.000000001") == 1
    assert epsilon_units("1000e-12") == 1 and epsilon_units("1/2") == 500_000_000
    for text in ("1e7", "1e-10", "0e5", "1e40", "1e-40"):
        with pytest.raises(ParameterError):
            epsilon_units(text)


def test_a_huge_exponent_through_the_api_is_invalid_epsilon(api: TestClient) -> None:
    response = api.post("/v1/primitives/redescription-statistics", json={
        "dataset": "tiny", "epsilon": "1e99999999", "left": {"attr": "a", "eq": True},
        "right": {"attr": "b", "eq": True}, "dry_run": True})
    assert response.status_code == 422 and _error(response) == "invalid_epsilon"
    assert Fraction(_spent(api)) == 0


@pytest.mark.parametrize(("algorithm", "parameters"), [
    ("alt-expm", {"grid_share": 1e-320}), ("alt-expm", {"omega": 1e-320}),
    ("mcmc-tree-pair", {"reestimate_share": 1e-7}),
    ("serenade-cs", {"min_sharpness": 1e-320}), ("serenade-es", {"size_share": 1e-320}),
])
def test_a_share_too_small_to_release_anything_is_refused_before_its_charge(api: TestClient, algorithm: str,
                                                                            parameters: dict) -> None:
    """A denormal share passed the dry run and was charged; the job then always failed (an overflowing noise
    scale) and kept the ε. Refused as an invalid parameter now, dry run or not, with nothing spent."""
    for dry_run in (True, False):
        response = api.post("/v1/jobs", json={"dataset": "tiny", "algorithm": algorithm, "epsilon": "0.01",
                                              "parameters": parameters, "dry_run": dry_run})
        assert response.status_code == 422 and _error(response) == "invalid_parameter", response.text
    assert _spent(api) == "0"


@pytest.mark.parametrize("split", ["1e400,1,1", "1e999999999,1,1", "0.6,0.3,1e-99999999"])
def test_number_texts_in_parameters_are_refused_not_a_500(api: TestClient, split: str) -> None:
    response = api.post("/v1/jobs", json={"dataset": "tiny", "algorithm": "serenade-cs", "epsilon": 1,
                                          "parameters": {"budget_split": split}, "dry_run": True})
    assert response.status_code == 422 and _error(response) == "invalid_parameter", response.text


@pytest.mark.parametrize("epsilon, says", [
    ("", "finite number"),                     # the web form's empty field, or an empty text
    ("9" * 4301, "at most 64 characters"),     # longer than any epsilon: not a generic invalid_request
    ("0." + "0" * 70 + "1", "at most 64 characters"),
    ("20000", "between 0.0001 and 10000"),     # a primitive's range, beyond the miners'
    ("0.00001", "between 0.0001 and 10000"),
])
def test_a_jobs_bad_epsilon_is_invalid_epsilon_and_says_why(api: TestClient, epsilon: str, says: str) -> None:
    response = api.post("/v1/jobs", json={"dataset": "tiny", "algorithm": "alt-expm", "epsilon": epsilon,
                                          "dry_run": True})
    assert response.status_code == 422 and _error(response) == "invalid_epsilon", response.text
    assert says in response.json()["error"]["message"]
    assert Fraction(_spent(api)) == 0


@pytest.mark.parametrize("change, message", [
    ({"parameters": {"budget_split": [0.7, 0.1, 0.2]}},
     "parameters.budget_split: Input should be a valid boolean, integer, number or string"),
    ({"parameters": {"bool": {"x": 1}}}, "parameters.bool: Input should be a valid boolean, integer, number or string"),
    ({"epsilon": True}, "epsilon: Input should be a valid integer, number or string"),
    ({"epsilon": [1]}, "epsilon: Input should be a valid integer, number or string"),
    ({"dry_run": "x"}, "dry_run: Input should be a valid boolean"),
    ({"algorithm": None}, "algorithm: Input should be a valid string"),
    ({"dataset": None}, "dataset: Field required"),
], ids=["list-parameter", "parameter-named-bool", "epsilon-true", "epsilon-list", "dry-run", "algorithm", "missing"])
def test_a_refusal_by_the_schema_names_the_place_in_the_request(api: TestClient, change: dict, message: str) -> None:
    """The location showed pydantic's union members: 'parameters.budget_split.bool', 'epsilon.int'."""
    body = {"dataset": "tiny", "algorithm": "serenade-es", "epsilon": 0.1, "dry_run": True, **change}
    sent = {k: v for k, v in body.items() if v is not None or k != "dataset"}  # a dataset of None: left out
    response = api.post("/v1/jobs", json=sent)
    assert response.status_code == 422 and _error(response) == "invalid_request", response.text
    assert response.json()["error"]["message"] == message
    assert Fraction(_spent(api)) == 0


@pytest.mark.parametrize("number", [b"1e999", b"-1e999", b"Infinity", b"NaN"])
def test_a_json_number_beyond_the_floats_is_said_to_be_so(api: TestClient, number: bytes) -> None:
    """JSON's 1e999 reads as inf: the message said "got inf", a value the request did not hold."""
    response = api.post("/v1/jobs", content=b'{"dataset": "tiny", "algorithm": "alt-expm", "epsilon": ' + number +
                        b', "dry_run": true}', headers={"Content-Type": "application/json"})
    assert response.status_code == 422 and _error(response) == "invalid_epsilon", response.text
    message = response.json()["error"]["message"]
    assert message.startswith("epsilon must be a finite number") and "inf" not in message.replace("infinite", "")
    assert ("NaN" in message) == (number == b"NaN")
    assert Fraction(_spent(api)) == 0
