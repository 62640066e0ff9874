"""Guesses of tokens are bounded per address; a query parameter given twice is refused.

The app runs in-process (FastAPI's TestClient: every request comes from one address)
on a SQLite database with the dataset ``tiny`` and the analysts alice and bob.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from dprm.server import accounts  # noqa: E402
from dprm.server.app import create_app  # noqa: E402
from dprm.server.database import Database  # noqa: E402
from dprm.server.ratelimit import RateLimiter, SharedRateLimiter  # noqa: E402
from server_support import setup_server_db  # noqa: E402


def _code(response: Any) -> str:
    return response.json()["error"]["code"]


def _client(tmp_path: Path, **settings: Any) -> tuple[TestClient, dict[str, str], str]:
    url = str(tmp_path / "s.db")
    tokens = setup_server_db(url, tmp_path)
    app = create_app(url, workers=0, background=False, **settings)
    return TestClient(app, base_url="http://127.0.0.1"), tokens, url


@pytest.mark.parametrize("kind", [RateLimiter, SharedRateLimiter])
def test_wait_reads_a_bucket_without_taking_from_it(kind: type) -> None:
    limiter = kind(rate=1.0, burst=2)
    assert limiter.wait("a", now=0.0) == 0.0  # an unknown key: a full bucket
    assert [limiter.allow("a", now=0.0) for _ in range(2)] == [0.0, 0.0]
    assert [limiter.wait("a", now=0.0) for _ in range(3)] == [1.0, 1.0, 1.0]  # nothing taken
    assert limiter.wait("a", now=0.5) == 0.5 and limiter.wait("a", now=1.0) == 0.0
    assert limiter.allow("a", now=1.0) == 0.0 and limiter.wait("a", now=1.0) > 0


def test_an_address_out_of_guesses_is_refused_even_with_a_valid_token(tmp_path: Path) -> None:
    client, tokens, _ = _client(tmp_path, guess_rate=0.001, guess_burst=3)
    with client:
        alice = {"Authorization": f"Bearer {tokens['alice']}"}
        for _ in range(10):  # valid tokens take nothing from the address's guesses
            assert client.get("/v1/budget", headers=alice).status_code == 200
        wrong = {"Authorization": "Bearer " + tokens["alice"][:-2] + "xx"}
        assert [_code(client.get("/v1/budget", headers=wrong)) for _ in range(3)] == ["invalid_token"] * 3
        for headers in (alice, wrong):  # a hit would otherwise be told from a miss
            refused = client.get("/v1/budget", headers=headers)
            assert refused.status_code == 429 and _code(refused) == "rate_limited"
            assert int(refused.headers["Retry-After"]) >= 1
        posted = client.post("/v1/datasets/tiny/jobs", headers=alice, json={"algorithm": "alt-expm", "epsilon": 1})
        assert posted.status_code == 429 and _code(posted) == "rate_limited"  # answered before the body
        assert int(posted.headers["Retry-After"]) >= 1
        assert _code(client.get("/v1/budget")) == "missing_token"  # no token, no guess: told what is missing


def test_posted_guesses_count_and_expired_or_disabled_tokens_do_not(tmp_path: Path) -> None:
    client, tokens, url = _client(tmp_path, guess_rate=0.001, guess_burst=2)
    with Database(url).write() as connection:
        accounts.set_disabled(connection, "bob", True)
    with client:
        bob = {"Authorization": f"Bearer {tokens['bob']}"}
        for _ in range(5):  # a real token refused for its state is no guess
            assert _code(client.get("/v1/budget", headers=bob)) == "token_disabled"
        alice = {"Authorization": f"Bearer {tokens['alice']}"}
        assert client.get("/v1/budget", headers=alice).status_code == 200
        wrong = {"Authorization": "Bearer dprm_000000000000_" + "A" * 43}
        for _ in range(2):  # POSTs are answered by the guard, before their body
            assert _code(client.post("/v1/datasets/tiny/jobs", headers=wrong, json={})) == "invalid_token"
        assert _code(client.get("/v1/budget", headers=alice)) == "rate_limited"


def test_an_owners_token_sent_to_the_api_is_refused_but_no_guess(tmp_path: Path) -> None:
    from dprm.server.owners import add_owner

    client, tokens, url = _client(tmp_path, guess_rate=0.001, guess_burst=2)
    with Database(url).write() as connection:
        owner = add_owner(connection, "olga")
    with client:
        olga = {"Authorization": f"Bearer {owner}"}
        assert [_code(client.get("/v1/budget", headers=olga)) for _ in range(5)] == ["invalid_token"] * 5
        assert _code(client.post("/v1/datasets/tiny/jobs", headers=olga, json={})) == "invalid_token"
        assert client.get("/v1/budget", headers={"Authorization": f"Bearer {tokens['alice']}"}).status_code == 200


def test_the_sign_in_page_counts_guesses_too(tmp_path: Path) -> None:
    client, tokens, _ = _client(tmp_path, guess_rate=0.001, guess_burst=2)

    def sign_in(token: str) -> Any:
        page = client.get("/ui/signin")
        form_token = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        return client.post("/ui/signin", data={"csrf": form_token, "token": token}, follow_redirects=False)

    with client:
        assert sign_in(tokens["alice"]).status_code == 303
        assert [sign_in("not-a-token").status_code for _ in range(2)] == [401, 401]
        refused = sign_in(tokens["alice"])
        assert refused.status_code == 429 and "Too many invalid tokens" in refused.text
        assert int(refused.headers["Retry-After"]) >= 1


def test_a_query_parameter_given_twice_is_refused(tmp_path: Path) -> None:
    client, tokens, _ = _client(tmp_path)
    with client:
        alice = {"Authorization": f"Bearer {tokens['alice']}"}
        assert client.get("/v1/jobs?limit=5", headers=alice).status_code == 200
        twice = client.get("/v1/jobs?limit=5&limit=500", headers=alice)
        assert twice.status_code == 422 and _code(twice) == "invalid_request"
        assert "'limit' is given more than once" in twice.json()["error"]["message"]
        page = client.get("/ui/signin?next=/ui/datasets&next=/ui/jobs")
        assert page.status_code == 422
