"""The web pages (/ui) without a browser: sessions, form tokens, escaping, access control, budgets.

The app runs in-process (FastAPI's TestClient, no background workers: jobs stay
queued) on a SQLite database with the dataset ``tiny`` (200 rows) and the analysts
alice and bob (10 ε each); the owner olga signs in with an owner token.
"""

from __future__ import annotations

import html
import re
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")

from fastapi.testclient import TestClient  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from dprm.server import accounts, budget  # noqa: E402
from dprm.server.app import create_app  # noqa: E402
from dprm.server.database import Database  # noqa: E402
from dprm.server.owners import add_owner  # noqa: E402
from dprm.server.tables import charges, datasets, jobs, web_sessions  # noqa: E402
from dprm.server.web.sessions import COOKIE, cookie_hash  # noqa: E402
from server_support import setup_server_db, tiny_views  # noqa: E402

JOB_FORM = {"algorithm": "alt-expm", "epsilon": "1", "p_init_trials": "1", "p_depth": "2"}


class Site:
    """The app, its database and the tokens of alice, bob and the owner olga."""

    def __init__(self, app: Any, url: str, tokens: dict[str, str], folder: Path) -> None:
        self.app = app
        self.url = url
        self.tokens = tokens
        self.folder = folder

    def client(self) -> TestClient:
        return TestClient(self.app, base_url="http://127.0.0.1")

    def signed_in(self, who: str) -> tuple[TestClient, str]:
        """A client signed in as ``who``, and its form token."""
        client = self.client()
        client.__enter__()
        page = client.get("/ui/signin")
        token = _csrf(page.text)
        answer = client.post("/ui/signin", data={"csrf": token, "token": self.tokens[who]}, follow_redirects=False)
        assert answer.status_code == 303, answer.text
        landing = client.get(answer.headers["location"])
        return client, _csrf(landing.text)

    def remaining(self, analyst: str, dataset: str = "tiny") -> tuple[int, int]:
        db = Database(self.url)
        with db.read() as connection:
            who = accounts.find_analyst(connection, analyst)
            dataset_id = connection.execute(select(datasets.c.id).where(datasets.c.active_name == dataset)).scalar()
            state = budget.remaining(connection, who.id, dataset_id)
            count = connection.execute(select(func.count()).select_from(charges)
                                       .where(charges.c.analyst_id == who.id)).scalar()
        db.dispose()
        return state[1], count


def _csrf(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match, html[:2000]
    return match.group(1)


@pytest.fixture()
def site(tmp_path: Path) -> Iterator[Site]:
    url = str(tmp_path / "web.db")
    tokens = setup_server_db(url, tmp_path)
    db = Database(url)
    with db.write() as connection:
        tokens["olga"] = add_owner(connection, "olga")
    db.dispose()
    app = create_app(url, background=False)
    with TestClient(app):
        yield Site(app, url, tokens, tmp_path)


def test_sign_in_sets_a_session_cookie_that_is_not_the_token(site: Site) -> None:
    client = site.client()
    page = client.get("/ui/signin")
    assert page.status_code == 200 and 'type="password"' in page.text
    answer = client.post("/ui/signin", data={"csrf": _csrf(page.text), "token": site.tokens["alice"]},
                         follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/ui/datasets"
    cookie = next(c for c in answer.headers.get_list("set-cookie") if c.startswith(COOKIE + "="))
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie
    value = cookie.split(";")[0].split("=", 1)[1]
    secret = site.tokens["alice"].split("_", 2)[2]  # dprm_<id>_<secret>; the secret may hold "_" itself
    assert value != site.tokens["alice"] and secret not in value
    db = Database(site.url)
    with db.read() as connection:
        stored = connection.execute(select(web_sessions.c.cookie_hash)).scalars().all()
    db.dispose()
    assert stored == [cookie_hash(value)] and value not in stored
    assert "alice" in client.get("/ui/datasets").text


def test_sign_in_refuses_wrong_tokens_and_forged_forms(site: Site) -> None:
    client = site.client()
    page = client.get("/ui/signin")
    wrong = client.post("/ui/signin", data={"csrf": _csrf(page.text), "token": site.tokens["alice"][:-2] + "xx"},
                        follow_redirects=False)
    assert wrong.status_code == 401 and "not valid" in wrong.text and COOKIE not in str(wrong.headers)
    forged = site.client().post("/ui/signin", data={"csrf": "guess", "token": site.tokens["alice"]},
                                follow_redirects=False)
    assert forged.status_code == 403 and COOKIE not in str(forged.headers)


def test_posts_the_browser_says_come_from_another_origin_are_refused(site: Site) -> None:
    """A page of the same site on another origin (another port, a sibling subdomain) can set
    the sign-in cookie itself and post the matching form token: the fuzz round signed a browser
    in as another analyst so. The browser's Sec-Fetch-Site says where a post comes from."""
    client = site.client()
    page = client.get("/ui/signin")
    form = {"csrf": _csrf(page.text), "token": site.tokens["bob"]}
    for where in ("same-site", "cross-site"):
        tossed = client.post("/ui/signin", data=form, headers={"Sec-Fetch-Site": where}, follow_redirects=False)
        assert tossed.status_code == 403 and COOKIE not in str(tossed.headers), where
    form = {"csrf": _csrf(client.get("/ui/signin").text), "token": site.tokens["bob"]}  # a refusal renews the form
    answer = client.post("/ui/signin", data=form, headers={"Sec-Fetch-Site": "same-origin"}, follow_redirects=False)
    assert answer.status_code == 303
    client, token = site.signed_in("alice")
    refused = client.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "action": "run", "csrf": token},
                          headers={"Sec-Fetch-Site": "same-site"})
    assert refused.status_code == 403 and site.remaining("alice") == (0, 0)


def test_pages_need_a_session(site: Site) -> None:
    from urllib.parse import quote

    client = site.client()
    for path in ("/ui/datasets", "/ui/jobs", "/ui/datasets/tiny", "/ui/owner", "/ui/owner/audit"):
        answer = client.get(path, follow_redirects=False)
        assert answer.status_code == 303, path
        assert answer.headers["location"] == "/ui/signin?next=" + quote(path, safe=""), path
    assert client.get("/ui", follow_redirects=False).headers["location"] == "/ui/signin"  # home: nothing to return to


def _sign_in_from(client: TestClient, location: str, token: str) -> Any:
    """Follow a sign-in redirect's page and post its form (with what it carries) with ``token``."""
    page = client.get(location)
    assert page.status_code == 200
    form = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page.text))
    form = {name: html.unescape(value) for name, value in form.items()}
    return client.post("/ui/signin", data={**form, "token": token}, follow_redirects=False), form


def test_a_deep_link_opened_signed_out_is_shown_after_sign_in(site: Site) -> None:
    """An analyst who opened /ui/jobs/<id> signed out landed on /ui/datasets after signing in."""
    from urllib.parse import quote

    alice, token = site.signed_in("alice")
    job = alice.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"},
                     follow_redirects=False).headers["location"]
    for asked in (job, job + "?sort=jaccard&order=desc", "/ui/datasets/tiny?algorithm=serenade-cs", "/ui/ledger"):
        client = site.client()
        answer = client.get(asked, follow_redirects=False)
        assert answer.status_code == 303 and answer.headers["location"] == "/ui/signin?next=" + quote(asked, safe="")
        wrong, form = _sign_in_from(client, answer.headers["location"], site.tokens["alice"][:-2] + "xx")
        assert wrong.status_code == 401 and form["next"] == asked
        assert f'name="next" value="{html.escape(asked)}"' in wrong.text  # a failed try keeps where to go
        signed, _ = _sign_in_from(client, answer.headers["location"], site.tokens["alice"])
        assert signed.status_code == 303 and signed.headers["location"] == asked
        assert client.get(asked).status_code == 200
    # the part of a page that refreshes itself (HTMX) asks for the whole page's sign-in, back to the page
    refreshed = site.client().get(job + "?partial=1", headers={"HX-Request": "true",
                                                                "HX-Current-URL": f"http://127.0.0.1{job}"})
    assert refreshed.headers["HX-Redirect"] == "/ui/signin?next=" + quote(job, safe="")
    # a page of the other role is not where a sign-in leads: the role's own home instead
    client = site.client()
    signed, _ = _sign_in_from(client, client.get("/ui/owner/audit", follow_redirects=False).headers["location"],
                              site.tokens["alice"])
    assert signed.headers["location"] == "/ui/datasets"
    signed, _ = _sign_in_from(site.client(), "/ui/signin?next=" + quote(job, safe=""), site.tokens["olga"])
    assert signed.headers["location"] == "/ui/owner"


#: Where a sign-in must never lead: other sites, schemes, the API, dot segments, header tricks.
OFF_SITE = ["//evil.example", "//evil.example/ui/jobs", "https://evil.example/ui/jobs", "http:/ui/jobs",
            "/\\evil.example", "\\evil.example", "/ui\\evil.example", "/ui/..//evil.example", "/ui/../v1/budget",
            "/ui/%2e%2e/v1/budget", "/ui/%2F%2Fevil.example", "/ui/%5Cevil.example", "javascript:alert(1)",
            "ui/jobs", " /ui/jobs", "/ui/jobs\r\nLocation: https://evil.example", "/ui/jobs\t", "/v1/budget",
            "/ui/signout", "/ui/signin?next=/ui/jobs", "", "/ui/" + "a" * 3000]


@pytest.mark.parametrize("target", OFF_SITE)
def test_sign_in_never_leads_off_the_site(site: Site, target: str) -> None:
    """Only a same-site path of the pages is a place to return to; anything else leads home."""
    client = site.client()
    page = client.get("/ui/signin", params={"next": target})
    assert page.status_code == 200 and 'name="next"' not in page.text and "evil" not in page.text
    signed = client.post("/ui/signin", data={"csrf": _csrf(page.text), "token": site.tokens["alice"], "next": target},
                         follow_redirects=False)
    assert signed.status_code == 303 and signed.headers["location"] == "/ui/datasets", target


def test_posts_without_session_or_form_token_are_refused_and_charge_nothing(site: Site) -> None:
    anonymous = site.client()
    answer = anonymous.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "action": "run"})
    assert answer.status_code == 401
    client, token = site.signed_in("alice")
    for form in ({**JOB_FORM, "action": "run"}, {**JOB_FORM, "action": "run", "csrf": "x" * 43}):
        refused = client.post("/ui/datasets/tiny/jobs", data=form)
        assert refused.status_code == 403 and "security token" in refused.text
    stats = client.post("/ui/datasets/tiny/statistics", data={"left": "[a]", "right": "[b]", "epsilon": "0.5",
                                                              "action": "run"})
    assert stats.status_code == 403
    assert site.remaining("alice") == (0, 0)
    # the same form with its token goes through and charges exactly its epsilon
    done = client.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "action": "run", "csrf": token},
                       follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"].startswith("/ui/jobs/job_")
    assert site.remaining("alice") == (10**9, 1)


def test_dry_run_shows_the_cost_and_charges_nothing(site: Site) -> None:
    client, token = site.signed_in("alice")
    page = client.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "dry-run"})
    assert page.status_code == 200 and "Cost <strong>ε = 1</strong>" in page.text and "affordable" in page.text
    live = client.post("/ui/datasets/tiny/cost", data={**JOB_FORM, "csrf": token, "epsilon": "2.5"},
                       headers={"HX-Request": "true"})
    assert live.status_code == 200 and "ε = 2.5" in live.text and "<html" not in live.text
    dummy = client.post("/ui/datasets/tiny/cost", data={**JOB_FORM, "csrf": token, "dummy": "on"})
    assert "ε = 0" in dummy.text and "free" in dummy.text
    assert site.remaining("alice") == (0, 0)


def test_over_budget_form_shows_a_clear_message_and_charges_nothing(site: Site) -> None:
    client, token = site.signed_in("alice")
    page = client.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "epsilon": "11", "action": "run"})
    assert page.status_code == 403
    assert "epsilon 11 exceeds the remaining budget 10 on this dataset" in page.text
    cost = client.post("/ui/datasets/tiny/cost", data={**JOB_FORM, "csrf": token, "epsilon": "11"})
    assert "more than the remaining budget" in cost.text
    assert site.remaining("alice") == (0, 0)
    db = Database(site.url)
    with db.read() as connection:
        assert connection.execute(select(func.count()).select_from(jobs)).scalar() == 0
    db.dispose()


def test_invalid_parameters_are_named_and_charge_nothing(site: Site) -> None:
    client, token = site.signed_in("alice")
    page = client.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "p_depth": "99", "action": "run"})
    assert page.status_code == 422 and "depth" in page.text
    page = client.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "epsilon": "abc", "action": "run"})
    assert page.status_code == 422 and "epsilon" in page.text
    assert site.remaining("alice") == (0, 0)


def test_another_analysts_job_is_not_found(site: Site) -> None:
    alice, token = site.signed_in("alice")
    done = alice.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"},
                      follow_redirects=False)
    path = done.headers["location"]
    assert alice.get(path).status_code == 200
    bob, bob_token = site.signed_in("bob")
    for suffix in ("", "/result.json", "/queries.txt"):
        answer = bob.get(path + suffix)
        assert answer.status_code == 404 and "no such job" in answer.text, suffix
    cancel = bob.post(path + "/cancel", data={"csrf": bob_token})
    assert cancel.status_code == 404
    assert alice.get(path).text.count("queued") >= 1  # bob's cancel did nothing
    # alice cancels her queued job: refunded
    assert alice.post(path + "/cancel", data={"csrf": token}, follow_redirects=False).status_code == 303
    assert site.remaining("alice") == (0, 1)


def test_an_unknown_or_ungranted_dataset_is_not_found(site: Site) -> None:
    db = Database(site.url)
    from dprm.server.datasets import register_dataset

    folder = site.folder / "other"
    folder.mkdir()
    register_dataset(db, "secret", *tiny_views(folder), same_files_ok=True)  # tiny's rows under a second name
    db.dispose()
    client, token = site.signed_in("alice")
    assert client.get("/ui/datasets/secret").status_code == 404
    assert "secret" not in client.get("/ui/datasets").text
    answer = client.post("/ui/datasets/secret/jobs", data={**JOB_FORM, "csrf": token, "action": "run"})
    assert answer.status_code == 404


def test_statistics_form_parses_clired_and_escapes_what_it_echoes(site: Site) -> None:
    client, token = site.signed_in("alice")
    free = client.post("/ui/datasets/tiny/statistics", data={
        "csrf": token, "left": "[a] & [state = CA]", "right": "[x < 50]", "epsilon": "0.5", "dummy": "on",
        "action": "run"})
    assert free.status_code == 200 and "Jaccard" in free.text and "dummy data" in free.text
    assert site.remaining("alice") == (0, 0)
    # the free cost check says how the queries are read: clired's < and > include their bound
    check = client.post("/ui/datasets/tiny/statistics", data={
        "csrf": token, "left": "[a]", "right": "[x > 50]", "epsilon": "0.5", "action": "dry-run"},
        headers={"HX-Request": "true"})
    assert check.status_code == 200 and "Read as <strong>a</strong> ⇔ <strong>[x ≥ 50]</strong>" in check.text
    assert site.remaining("alice") == (0, 0)
    paid = client.post("/ui/datasets/tiny/statistics", data={
        "csrf": token, "left": "[a]", "right": "[b]", "epsilon": "0.5", "action": "run"},
        headers={"HX-Request": "true"})
    assert paid.status_code == 200 and "Remaining budget: 9.5" in paid.text
    # the page's budget bar is replaced too (it still showed the budget before the charge)
    assert 'id="budget-bar" hx-swap-oob="true"' in paid.text and "remaining <strong>9.5</strong>" in paid.text
    # and the job form's cost, computed on the budget before, is no longer said to be affordable
    assert re.search(r'<div id="cost"[^>]*hx-swap-oob="true"><p class="help">The remaining budget changed', paid.text)
    assert site.remaining("alice") == (5 * 10**8, 1)
    hostile = client.post("/ui/datasets/tiny/statistics", data={
        "csrf": token, "left": "<script>alert(1)</script>", "right": "[b]", "epsilon": "0.5", "action": "run"})
    assert hostile.status_code == 422
    assert "<script>alert(1)</script>" not in hostile.text and "&lt;script&gt;" in hostile.text
    assert site.remaining("alice") == (5 * 10**8, 1)


def test_pages_carry_a_strict_content_security_policy(site: Site) -> None:
    client, _ = site.signed_in("alice")
    page = client.get("/ui/datasets/tiny")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "<script>" not in page.text  # no inline script: the policy would block it
    assert client.get("/ui/static/htmx.min.js").status_code == 200


def test_analysts_cannot_open_owner_pages_nor_owners_act_as_analysts(site: Site) -> None:
    alice, token = site.signed_in("alice")
    assert alice.get("/ui/owner").status_code == 403
    refused = alice.post("/ui/owner/analysts", data={"csrf": token, "name": "mallory"})
    assert refused.status_code == 403
    olga, owner_token = site.signed_in("olga")
    assert "mallory" not in olga.get("/ui/owner").text
    assert olga.get("/ui/datasets").status_code == 403
    assert olga.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": owner_token, "action": "run"}
                     ).status_code == 403
    # an owner token is no API token
    assert site.client().get("/v1/datasets", headers={"Authorization": f"Bearer {site.tokens['olga']}"}
                             ).status_code == 401


def test_owner_adds_an_analyst_grants_budget_and_disabling_ends_sessions(site: Site) -> None:
    olga, token = site.signed_in("olga")
    page = olga.post("/ui/owner/analysts", data={"csrf": token, "name": "carol"})
    assert page.status_code == 200
    new_token = re.search(r'id="new-token">(dprm_[0-9a-f]{12}_[A-Za-z0-9_-]{43})<', page.text).group(1)
    assert "carol" in olga.get("/ui/owner").text and new_token not in olga.get("/ui/owner").text
    granted = olga.post("/ui/owner/budgets", data={"csrf": token, "analyst": "carol", "dataset": "tiny",
                                                   "epsilon": "2"})
    assert "carol on tiny: total 2, spent 0, remaining 2" in granted.text
    assert "<option selected>carol</option>" in granted.text  # not reset to the first analyst
    assert "<option selected>tiny</option>" in granted.text
    api = site.client().get("/v1/budget", headers={"Authorization": f"Bearer {new_token}"})
    assert api.json()["budgets"][0]["exact"]["total"] == "2"
    site.tokens["carol"] = new_token
    carol, _ = site.signed_in("carol")
    assert "tiny" in carol.get("/ui/datasets").text
    olga.post("/ui/owner/analysts/carol/disable", data={"csrf": token})
    assert carol.get("/ui/datasets", follow_redirects=False).status_code == 303  # the session ended
    olga.post("/ui/owner/analysts/carol/enable", data={"csrf": token})
    rotated = olga.post("/ui/owner/analysts/carol/rotate", data={"csrf": token})
    fresh = re.search(r'id="new-token">(dprm_[0-9a-f]{12}_[A-Za-z0-9_-]{43})<', rotated.text).group(1)
    for old_or_new, status in ((new_token, 401), (fresh, 200)):
        answer = site.client().get("/v1/budget", headers={"Authorization": f"Bearer {old_or_new}"})
        assert answer.status_code == status
    bad = olga.post("/ui/owner/budgets", data={"csrf": token, "analyst": "nobody", "dataset": "tiny",
                                               "epsilon": "2"})
    assert bad.status_code == 422 and "no analyst named 'nobody'" in html.unescape(bad.text)


def test_owner_registers_a_dataset_or_sees_one_line_naming_the_problem(site: Site) -> None:
    olga, token = site.signed_in("olga")
    folder = site.folder / "second"
    folder.mkdir()
    left, right, types = tiny_views(folder, rows=150)  # (tiny's own files are refused under a second name)
    missing = olga.post("/ui/owner/datasets", data={"csrf": token, "name": "second", "left": str(left),
                                                    "right": str(folder / "nope.csv"), "types": str(types)})
    assert missing.status_code == 422 and "nope.csv: no such file" in missing.text
    for bad, says in ((str(folder) + "/" + "a" * 5000, "cannot be read"),     # a name too long for the system
                      ("/proc/self/mem", "cannot be read")):                    # a file that fails to read
        refused = olga.post("/ui/owner/datasets", data={"csrf": token, "name": "second", "left": bad,
                                                        "right": str(right), "types": str(types)})
        assert refused.status_code == 422 and says in refused.text, refused.text[:300]
        assert len(html.unescape(refused.text).split("cannot be read")[0].splitlines()[-1]) < 400
    done = olga.post("/ui/owner/datasets", data={"csrf": token, "name": "second", "left": str(left),
                                                 "right": str(right), "types": str(types)})
    assert done.status_code == 200 and "registered second: 2 left and 2 right attributes" in done.text


def test_owner_audit_log_filters_and_shows_web_actions(site: Site) -> None:
    alice, token = site.signed_in("alice")
    alice.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "epsilon": "11", "action": "run"})
    site.app.state.audit.flush()
    olga, _ = site.signed_in("olga")
    page = olga.get("/ui/owner/audit", params={"outcome": "budget_exceeded"})
    assert page.status_code == 200
    rows = re.findall(r"<tr class=\"refused\">", page.text)
    assert len(rows) == 1 and "alice" in page.text and "submit-job" in page.text
    none = olga.get("/ui/owner/audit", params={"analyst": "bob", "outcome": "budget_exceeded"})
    assert "<tr class=\"refused\">" not in none.text


def test_owner_jobs_page_lists_every_analysts_jobs_and_filters_by_status(site: Site) -> None:
    alice, token = site.signed_in("alice")
    alice.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"})
    olga, _ = site.signed_in("olga")
    page = olga.get("/ui/owner/jobs")
    assert page.status_code == 200 and page.text.count("<td>alice</td>") == 1
    assert olga.get("/ui/owner/jobs", params={"status": "done"}).text.count("<td>alice</td>") == 0
    assert olga.get("/ui/owner/jobs", params={"status": "queued"}).text.count("<td>alice</td>") == 1
    assert "alice" in olga.get("/ui/owner").text  # the queued job among the running and queued ones


def test_sign_out_ends_the_session(site: Site) -> None:
    client, token = site.signed_in("alice")
    cookie = client.cookies.get(COOKIE)
    assert client.post("/ui/signout", data={"csrf": token}, follow_redirects=False).status_code == 303
    replay = site.client()
    replay.cookies.set(COOKIE, cookie, domain="127.0.0.1", path="/ui")
    assert replay.get("/ui/datasets", follow_redirects=False).status_code == 303
    # a live list refreshing itself (HTMX) is sent to the sign-in page as a whole
    refresh = replay.get("/ui/jobs", params={"partial": 1}, headers={"HX-Request": "true"})
    assert refresh.status_code == 204 and refresh.headers["hx-redirect"] == "/ui/signin"


def test_forms_are_accepted_by_the_pages_only_not_by_the_api(site: Site) -> None:
    client = site.client()
    answer = client.post("/v1/jobs", data={"dataset": "tiny", "algorithm": "alt-expm", "epsilon": "1"},
                         headers={"Authorization": f"Bearer {site.tokens['alice']}"})
    assert answer.status_code == 415 and answer.json()["error"]["code"] == "unsupported_media_type"
    assert site.remaining("alice") == (0, 0)


def test_dprm_admin_owner_commands_make_a_token_that_signs_in(site: Site) -> None:
    import subprocess

    from server_support import DPRM

    def admin(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(DPRM + ["admin", "--db", site.url, "owner", *args], capture_output=True, text=True,
                              timeout=120)

    made = admin("add", "oscar")
    assert made.returncode == 0, made.stderr
    site.tokens["oscar"] = made.stdout.strip()
    client, _ = site.signed_in("oscar")
    assert client.get("/ui/owner").status_code == 200
    again = admin("add", "oscar")
    assert again.returncode == 2 and again.stderr.strip() == "error: an owner named 'oscar' exists already"
    assert admin("disable", "oscar").returncode == 0
    assert client.get("/ui/owner", follow_redirects=False).status_code == 303  # the session ended
    listed = admin("list")
    assert "oscar" in listed.stdout and "yes" in listed.stdout and site.tokens["oscar"] not in listed.stdout
    rotated = admin("rotate", "oscar")
    assert rotated.returncode == 0 and rotated.stdout.strip() != site.tokens["oscar"]


def _finish_with(site: Site, job_path: str, redescriptions: list[Any], parameters: dict | None = None) -> None:
    """Mark a queued job done with a result document (test set-up: the worker's part)."""
    import json

    from sqlalchemy import update

    from dprm.queries import make_document

    document = make_document("alt-expm", parameters or {"epsilon": 1.0},
                             {"epsilon": 1.0, "guarantee": "pure-dp", "private": True,
                                                            "neighbouring": "add-remove-one-row",
                                                            "reasons": [], "ledger": [
                                                                {"step": "everything", "epsilon": 1.0,
                                                                 "mechanism": "discrete-laplace histogram"}]},
                             redescriptions)
    db = Database(site.url)
    with db.write() as connection:
        connection.execute(update(jobs).where(jobs.c.public_id == job_path.rsplit("/", 1)[1])
                           .values(status="done", result=json.dumps(document), progress=1.0))
    db.dispose()


def test_a_dummy_jobs_result_page_does_not_claim_differential_privacy(site: Site) -> None:
    """A dummy job's page said "Guarantee: pure-dp" and "Every figure below is a noisy, differentially
    private estimate", of values computed on rows made up from the schema."""
    import json

    from dprm.server import jobs as queue
    from dprm.server.dummy import DUMMY_REASON
    from dprm.server.worker import run_job

    client, token = site.signed_in("alice")
    done = client.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "dummy": "on", "dummy_rows": "300",
                                                       "action": "run"}, follow_redirects=False)
    path = done.headers["location"]
    db = Database(site.url)
    claimed = queue.claim_next(db, "worker-1")
    assert run_job(db, claimed.id, "worker-1") == "done"
    db.dispose()
    page = html.unescape(client.get(path).text)
    assert "Guarantee: <strong>none</strong> (computed on dummy data" in page
    assert "none is needed: the job ran on rows synthesised from the public schema" in page
    assert "pure-dp" not in page and "differentially private estimate" not in page
    assert "computed on dummy data, not on the real rows" in page
    privacy = json.loads(client.get(path + "/result.json").text)["privacy"]
    assert (privacy["guarantee"], privacy["private"], privacy["reasons"]) == ("none", False, [DUMMY_REASON])
    assert site.remaining("alice") == (0, 0)


def test_result_page_sorts_escapes_and_offers_both_downloads(site: Site) -> None:
    from dprm.queries import BooleanLiteral, Redescription, RedescriptionStats

    client, token = site.signed_in("alice")
    job = client.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"},
                      follow_redirects=False).headers["location"]
    figures = [(30.0, 40.0, 20.0), (50.0, 52.0, 49.0), (10.0, 80.0, 5.0)]
    _finish_with(site, job, [
        Redescription(BooleanLiteral(name), BooleanLiteral("b"), RedescriptionStats.from_counts(*counts, 200.0),
                      extra={"interval": {"confidence": 0.95, "jaccard": [0.1, 0.9], "support_left": [1, 99],
                                          "support_right": [2, 98], "intersection": [3, 97],
                                          "p_value": [0.0001, 0.25]}})
        for name, counts in zip(["a", "<script>alert(1)</script>", "state"], figures)])
    page = client.get(job)
    assert page.status_code == 200 and "Redescriptions (3, 3 kept after pruning)" in page.text
    assert "differentially private" in page.text.split("Guarantee:")[1][:600]  # the label explained
    assert "<script>alert(1)</script>" not in page.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert "[0.1, 0.9]" in page.text  # the Jaccard interval beside its estimate
    assert re.search(r'data-label="p-value"><span>[^<]+<br><span class="ci">\[[^,]+, 0\.25\]', page.text)
    jaccards = [c[2] / (c[0] + c[1] - c[2]) for c in figures]
    shown = [float(x) for x in re.findall(r'<td data-label="Jaccard"><span>([0-9.e-]+)', client.get(
        job, params={"sort": "jaccard", "order": "desc"}).text)]
    assert shown == pytest.approx(sorted(jaccards, reverse=True), rel=1e-2)
    ranks = re.findall(r'<td data-label="#">(\d+)</td>', client.get(job, params={"sort": "support_left"}).text)
    assert ranks == ["3", "1", "2"]  # |L| 10, 30, 50
    document = client.get(job + "/result.json")
    assert document.headers["content-disposition"].startswith("attachment")
    assert [r["left"]["attr"] for r in document.json()["redescriptions"]][0] == "a"
    clired = client.get(job + "/queries.txt")  # '<' cannot be written in clired's syntax: one line says so
    assert clired.status_code == 422 and "cannot be written in clired syntax" in clired.text


def test_result_page_shows_the_parameters_as_run_and_which_had_no_effect(site: Site) -> None:
    client, token = site.signed_in("alice")
    job = client.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"},
                      follow_redirects=False).headers["location"]
    assert "Parameters sent" in client.get(job).text  # before the result: what was sent, said as such
    ran = {"epsilon": 1.0, "init_trials": 1, "depth": "auto", "mcmc_iterations": 2000000,
           "auto": {"depth": 2, "trial": "pair", "target_share": None}, "unused": ["mcmc_iterations"]}
    _finish_with(site, job, [], parameters=ran)
    page = client.get(job).text
    assert "Parameters as run (1 had no effect)" in page
    assert "No effect in this run: <code>mcmc_iterations</code>" in page
    assert "Chosen by the <code>auto</code> settings: <code>depth</code> = 2, <code>trial</code> = pair." in page
    assert "<code>init_trials</code> = 1 <span class=\"tag\">sent</span>" in page


def test_result_page_ranks_the_kept_before_the_pruned(site: Site) -> None:
    from dprm.queries import BooleanLiteral, Redescription, RedescriptionStats

    client, token = site.signed_in("alice")
    job = client.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"},
                      follow_redirects=False).headers["location"]
    _finish_with(site, job, [
        Redescription(BooleanLiteral(name), BooleanLiteral("b"), RedescriptionStats.from_counts(30.0, 40.0, 20.0, 200.0),
                      pruned=pruned)
        for name, pruned in [("first_pruned", True), ("a", False), ("state", False)]])
    page = client.get(job).text
    assert "Redescriptions (3, 2 kept after pruning)" in page
    statuses = re.findall(r'<td data-label="Pruned">(kept|pruned)</td>', page)
    assert statuses == ["kept", "kept", "pruned"]


def test_every_algorithms_form_round_trips_its_defaults_to_an_affordable_dry_run(site: Site) -> None:
    from dprm.server.validation import private_algorithms

    client, token = site.signed_in("alice")
    for algorithm in private_algorithms():
        page = client.get("/ui/datasets/tiny", params={"algorithm": algorithm})
        assert page.status_code == 200 and f"Parameters of {algorithm}" in page.text
        form = {"csrf": token, "algorithm": algorithm, "epsilon": "0.5"}
        form.update(re.findall(r'<input id="p_\w+" name="(p_\w+)" value="([^"]*)"', page.text))
        for name, options in re.findall(r'<select id="p_\w+" name="(p_\w+)"[^>]*>(.*?)</select>', page.text, re.S):
            chosen = re.search(r"<option selected>([^<]*)</option>", options) or re.search(r"<option>([^<]*)", options)
            form[name] = html.unescape(chosen.group(1))
        assert len(form) > 3, algorithm
        cost = client.post("/ui/datasets/tiny/cost", data={k: html.unescape(v) for k, v in form.items()})
        assert "Cost <strong>ε = 0.5</strong>" in cost.text and "affordable" in cost.text, (algorithm, cost.text)
        assert "public" not in re.findall(r"<option[^>]*>([^<]*)</option>", page.text)
    assert site.remaining("alice") == (0, 0)


def test_a_default_typed_back_reads_as_the_default() -> None:
    from dprm.server.validation import private_algorithms
    from dprm.server.web.forms import job_fields, parameter_value

    checked = 0
    for algorithm in private_algorithms():
        for field in job_fields(algorithm):
            value = parameter_value(field.default_text, field.kind)
            assert value == field.default and type(value) is type(field.default), (algorithm, field)
            checked += 1
    assert checked > 50


def test_an_unknown_page_is_an_html_404(site: Site) -> None:
    client, _ = site.signed_in("alice")
    answer = client.get("/ui/nothing/here")
    assert answer.status_code == 404 and "No such page" in answer.text
    assert answer.headers["content-type"].startswith("text/html")
    assert client.get("/ui/static/dprm.css").status_code == 200  # the static files are not shadowed


def test_a_job_form_posted_twice_makes_one_job_and_one_charge(site: Site) -> None:
    """A double click on a slow network sent the form twice: two jobs, ε charged twice."""
    import re

    client, token = site.signed_in("bob")
    page = client.get("/ui/datasets/tiny")
    key = re.search(r'name="submission" value="([0-9a-f]{24})"', page.text).group(1)
    assert key not in client.get("/ui/datasets/tiny").text  # a new key per rendered form
    before = site.remaining("bob")
    form = {**JOB_FORM, "csrf": token, "action": "run", "submission": key}
    first = client.post("/ui/datasets/tiny/jobs", data=form, follow_redirects=False)
    second = client.post("/ui/datasets/tiny/jobs", data=form, follow_redirects=False)
    assert first.status_code == second.status_code == 303
    assert second.headers["location"] == first.headers["location"] + "?again=1"  # the first job, said so
    after = site.remaining("bob")
    assert (after[0] - before[0], after[1] - before[1]) == (10**9, 1)  # ε = 1 once


def test_errors_under_ui_are_pages_not_the_apis_json(site: Site) -> None:
    """A malformed query string or a wrong method under /ui answered the API's JSON."""
    client, _ = site.signed_in("alice")
    for answer in (client.get("/ui/jobs", params={"partial": "x"}),
                   client.post("/ui/owner/analysts/a/b/disable")):
        assert answer.status_code in (405, 422), answer.status_code
        assert answer.headers["content-type"].startswith("text/html") and "<h1>" in answer.text
    api = client.get("/v1/jobs", params={"limit": "x"}, headers={"Authorization": f"Bearer {site.tokens['alice']}"})
    assert api.headers["content-type"] == "application/json"


def test_a_live_form_part_whose_session_ended_goes_to_sign_in(site: Site) -> None:
    """The whole 'Sign in first' page was put inside the cost box."""
    client = site.client()
    answer = client.post("/ui/datasets/tiny/cost", data={**JOB_FORM, "csrf": "x"}, headers={"HX-Request": "true"})
    assert answer.status_code == 204 and answer.headers["HX-Redirect"] == "/ui/signin"
    assert client.post("/ui/datasets/tiny/cost", data={**JOB_FORM, "csrf": "x"}).status_code == 401


def test_a_session_ended_by_disabling_stays_ended_when_enabled_again(site: Site) -> None:
    """A disabled analyst's session was only refused: enabled again, its old cookie spent ε."""
    from dprm.server.owners import set_owner_disabled

    olga, token = site.signed_in("olga")
    alice, alice_token = site.signed_in("alice")
    olga.post("/ui/owner/analysts/alice/disable", data={"csrf": token})
    assert alice.get("/ui/datasets", follow_redirects=False).status_code == 303
    olga.post("/ui/owner/analysts/alice/enable", data={"csrf": token})
    assert alice.get("/ui/datasets", follow_redirects=False).status_code == 303
    stats = alice.post("/ui/datasets/tiny/statistics", data={
        "csrf": alice_token, "left": "[a]", "right": "[b]", "epsilon": "0.5", "action": "run"})
    assert stats.status_code == 401 and site.remaining("alice") == (0, 0)
    # an owner's sessions alike (disabled with dprm admin, on the database)
    db = Database(site.url)
    for disabled in (True, False):
        with db.write() as connection:
            set_owner_disabled(connection, "olga", disabled)
    db.dispose()
    assert olga.get("/ui/owner", follow_redirects=False).status_code == 303
    db = Database(site.url)
    with db.read() as connection:
        assert connection.execute(select(func.count()).select_from(web_sessions)).scalar() == 0
    db.dispose()


def test_a_statistics_form_posted_twice_is_charged_once(site: Site) -> None:
    """A double click or a reload of the answer page (JavaScript off) spent ε twice."""
    client, token = site.signed_in("alice")
    page = client.get("/ui/datasets/tiny")
    key = re.search(r'id="stats-submission" name="submission" value="([0-9a-f]{24})"', page.text).group(1)
    form = {"csrf": token, "left": "[a]", "right": "[b]", "epsilon": "0.5", "action": "run", "submission": key}
    first = client.post("/ui/datasets/tiny/statistics", data=form)
    again = client.post("/ui/datasets/tiny/statistics", data=form)
    assert first.status_code == again.status_code == 200
    noisy = re.compile(r"<tbody>.*?</tbody>", re.S)
    assert noisy.search(first.text).group(0) == noisy.search(again.text).group(0)  # the first answer
    assert site.remaining("alice") == (5 * 10**8, 1)
    # the answer's form has a new key: posting it is a new request, charged
    fresh = re.search(r'id="stats-submission" name="submission" value="([0-9a-f]{24})"', first.text).group(1)
    assert fresh != key
    partial = client.post("/ui/datasets/tiny/statistics", data={**form, "submission": fresh},
                          headers={"HX-Request": "true"})
    assert partial.status_code == 200 and site.remaining("alice") == (10**9, 2)
    # an HTMX answer replaces the key of the form it leaves on the page
    oob = re.search(r'id="stats-submission" name="submission" value="([0-9a-f]{24})" hx-swap-oob="true"',
                    partial.text).group(1)
    assert oob not in (key, fresh)
    # the key with other values (a field changed after the back button put the key back) is a new
    # request, charged (it was 409 idempotency_key_reused), and sent again gets its own first answer
    changed = client.post("/ui/datasets/tiny/statistics", data={**form, "epsilon": "0.25"})
    assert changed.status_code == 200 and site.remaining("alice") == (125 * 10**7, 3)
    assert "sent before with these values" not in changed.text
    repeated = client.post("/ui/datasets/tiny/statistics", data={**form, "epsilon": "0.25"})
    assert noisy.search(repeated.text).group(0) == noisy.search(changed.text).group(0)
    assert "sent before with these values" in repeated.text and site.remaining("alice") == (125 * 10**7, 3)
    # a dry run does not use up its key
    dry = {**form, "submission": oob, "action": "dry-run"}
    assert client.post("/ui/datasets/tiny/statistics", data=dry).status_code == 200
    assert client.post("/ui/datasets/tiny/statistics", data={**dry, "action": "run"}).status_code == 200
    assert site.remaining("alice") == (175 * 10**7, 4)


def test_the_statistics_and_job_forms_name_the_intervals_level_alike(site: Site) -> None:
    """The statistics form said "Interval mass" (0.5 to 0.999), the job form "confidence" ((0, 1)):
    one name, one help and one range in both forms."""
    client, token = site.signed_in("bob")
    page = client.get("/ui/datasets/tiny?algorithm=alt-expm").text
    assert "Interval mass" not in page
    labels = re.findall(r'<label for="(p_confidence|confidence)">([^<]*)</label>', page)
    assert sorted(labels) == [("confidence", "confidence"), ("p_confidence", "confidence")]
    helps = {name: re.search(rf'<p class="help" id="{name}">([^<]*)</p>', page).group(1)
             for name in ("h_confidence", "confidence-help")}
    assert helps["h_confidence"] == helps["confidence-help"], helps
    assert "allowed: (0, 1)" in helps["h_confidence"] and "(default 0.95)" in helps["h_confidence"]
    for text in ("0.3", "0.9995"):  # inside (0, 1): the job form takes it, and now the statistics form too
        form = {"csrf": token, "left": "[a]", "right": "[b]", "epsilon": "0.5", "confidence": text, "dummy": "on",
                "action": "run"}
        stats = client.post("/ui/datasets/tiny/statistics", data=form)
        assert stats.status_code == 200 and f"{float(text) * 100:.1f} % intervals" in stats.text, text
        job = client.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "p_confidence": text})
        assert job.status_code == 200 and "Cost" in job.text, text
    for text in ("0", "1"):
        stats = client.post("/ui/datasets/tiny/statistics", data={
            "csrf": token, "left": "[a]", "right": "[b]", "epsilon": "0.5", "confidence": text, "action": "dry-run"})
        job = client.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "p_confidence": text})
        assert (stats.status_code, job.status_code) == (422, 422), text
        assert "confidence must be in (0, 1)" in html.unescape(stats.text) and "confidence" in job.text
    assert site.remaining("bob") == (0, 0)


def test_a_statistics_query_outside_the_public_domain_is_refused_and_charges_nothing(site: Site) -> None:
    """``[x > 1000]`` (x declared in [0, 100]) or an undeclared category: the answer is known from
    the public schema; refused by the free cost check and by a run alike, with the literal named."""
    client, token = site.signed_in("alice")
    for right, named in (("[x > 1000]", "[x ≥ 1000]"), ("[b] | [x < -3]", "[x ≤ -3]")):
        for action, headers in (("dry-run", {}), ("run", {}), ("run", {"HX-Request": "true"})):
            answer = client.post("/ui/datasets/tiny/statistics", headers=headers, data={
                "csrf": token, "left": "[a]", "right": right, "epsilon": "0.5", "action": action})
            text = html.unescape(answer.text)
            assert answer.status_code == 422, (right, action, answer.text[:500])
            assert f"right: {named} holds for no value in the declared domain of 'x', [0, 100]" in text, text
            assert "Noisy statistics" not in text
    answer = client.post("/ui/datasets/tiny/statistics", data={
        "csrf": token, "left": "[a] & [state = FL]", "right": "[b]", "epsilon": "0.5", "action": "run"})
    assert answer.status_code == 422
    assert "left: [state = FL] holds for no value in the declared domain of 'state', {CA, NY, TX}" in html.unescape(
        answer.text)
    assert site.remaining("alice") == (0, 0)


def test_form_numbers_are_read_as_the_api_and_the_command_line_read_them(site: Site) -> None:
    """``p_min_jaccard=0_5`` was read as 5, ``３`` and ``٣`` as 3 (Python's int() and float())."""
    client, token = site.signed_in("bob")
    for name, text, problem in (("depth", "0_3", "without '_' separators"), ("depth", "３", "ASCII digits"),
                                ("depth", "٣", "ASCII digits"), ("mcmc_iterations", "1_000", "'_' separators"),
                                ("min_jaccard", "０.５", "ASCII digits"), ("min_jaccard", "0_5", "'_' separators")):
        answer = client.post("/ui/datasets/tiny/jobs", data={"csrf": token, "algorithm": "alt-expm",
                                                             "epsilon": "0.1", f"p_{name}": text})
        assert answer.status_code == 422, (name, text)
        assert f"{name.replace('_', '-')}: " in answer.text and problem in html.unescape(answer.text)
    stats = client.post("/ui/datasets/tiny/statistics", data={
        "csrf": token, "left": "[a]", "right": "[b]", "epsilon": "0.5", "confidence": "0_9", "action": "dry-run"})
    assert stats.status_code == 422 and "confidence: " in stats.text
    for text, problem in (("nan", "finite number"), ("NaN", "finite number"), ("inf", "finite number"),
                          ("-inf", "finite number"), ("0", "in (0, 1)"), ("1", "in (0, 1)"), ("-0.5", "in (0, 1)")):
        stats = client.post("/ui/datasets/tiny/statistics", data={
            "csrf": token, "left": "[a]", "right": "[b]", "epsilon": "0.5", "confidence": text, "action": "dry-run"})
        assert stats.status_code == 422, text
        assert f"confidence must be {'a ' if 'finite' in problem else ''}{problem}" in html.unescape(stats.text), text
    fine = client.post("/ui/datasets/tiny/jobs", data={"csrf": token, "algorithm": "alt-expm", "epsilon": "0.1",
                                                       "p_depth": "3", "p_min_jaccard": "0.5"})
    assert fine.status_code == 200 and "Cost" in fine.text
    assert site.remaining("bob") == (0, 0)


def test_the_confidence_field_reads_numbers_as_the_epsilon_field_and_quotes_them_as_typed(site: Site) -> None:
    """ε took ``1/2`` but confidence refused it; ``0.9999999999999999999`` was refused as "not 1.0"."""
    client, token = site.signed_in("bob")
    form = {"csrf": token, "left": "[a]", "right": "[b]", "epsilon": "1/2", "dummy": "on", "action": "run"}
    for text, percent in (("1/2", "50.0"), ("3/4", "75.0"), ("0.3", "30.0")):
        stats = client.post("/ui/datasets/tiny/statistics", data={**form, "confidence": text})
        assert stats.status_code == 200 and f"{percent} % intervals" in stats.text, (text, stats.text[:500])
    for text, message in (("0.9999999999999999999", "not '0.9999999999999999999' (it reads as 1.0)"),
                          ("1", "not '1'"), ("3/2", "not '3/2'"), ("1/0", "finite number, got '1/0'")):
        stats = client.post("/ui/datasets/tiny/statistics", data={**form, "confidence": text, "action": "dry-run"})
        page = html.unescape(stats.text)
        assert stats.status_code == 422 and "confidence must be " in page and message in page, (text, page[:500])
        assert "not 1.0" not in page
    assert site.remaining("bob") == (0, 0)


def test_the_job_forms_confidence_reads_fractions_as_the_statistics_form_does(site: Site) -> None:
    """The job form's ``p_confidence`` sent ``1/2`` as text, which the API refused ("must be a
    number"), while the statistics form's confidence read it as 0.5; ``0.9999999999999999999``
    was refused as "not 1.0"."""
    import json

    client, token = site.signed_in("bob")
    form = {**JOB_FORM, "csrf": token, "epsilon": "0.1"}
    for text in ("1/2", "3/4", "0.3"):
        cost = client.post("/ui/datasets/tiny/jobs", data={**form, "p_confidence": text})
        assert cost.status_code == 200 and "Cost" in cost.text, (text, cost.text[:500])
    for text, message in (("0.9999999999999999999", "not '0.9999999999999999999' (it reads as 1.0)"),
                          ("3/2", "not '3/2'"), ("1", "not '1'")):
        refused = client.post("/ui/datasets/tiny/jobs", data={**form, "p_confidence": text})
        page = html.unescape(refused.text)
        assert refused.status_code == 422 and f"confidence must be in (0, 1), {message}" in page, (text, page[:500])
    assert site.remaining("bob") == (0, 0)
    ran = client.post("/ui/datasets/tiny/jobs", data={**form, "p_confidence": "1/2", "action": "run", "dummy": "on"},
                      follow_redirects=False)
    assert ran.status_code == 303, ran.text[:500]
    db = Database(site.url)
    with db.read() as connection:
        stored = connection.execute(select(jobs.c.parameters).order_by(jobs.c.id.desc())).scalars().first()
    db.dispose()
    assert json.loads(stored)["confidence"] == 0.5


def test_a_page_refused_by_the_rate_limit_says_when_to_retry(site: Site) -> None:
    """The pages' 429 had no Retry-After header (the API's has one)."""
    from dprm.server.ratelimit import RateLimiter

    app = create_app(site.url, background=False, limiter=RateLimiter(rate=0.01, burst=2))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        page = client.get("/ui/signin")
        client.post("/ui/signin", data={"csrf": _csrf(page.text), "token": site.tokens["alice"]})
        answers = [client.get("/ui/datasets") for _ in range(3)]
    refused = answers[-1]
    assert refused.status_code == 429 and refused.headers["content-type"].startswith("text/html")
    assert int(refused.headers["retry-after"]) >= 1


def test_a_refusal_of_a_part_of_a_page_is_its_message_put_inside_the_part(site: Site) -> None:
    """A refusal (the rate limit, a form token) answered to HTMX was a whole error page: swapped into
    the statistics box or a job's refreshing part, it put a second header and h1 in the page, and
    the part (its id, its hx- attributes) was gone."""
    from dprm.server.ratelimit import RateLimiter

    app = create_app(site.url, background=False, limiter=RateLimiter(rate=0.01, burst=4))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        page = client.get("/ui/signin")
        client.post("/ui/signin", data={"csrf": _csrf(page.text), "token": site.tokens["alice"]})
        token = _csrf(client.get("/ui/datasets/tiny").text)
        htmx = {"HX-Request": "true", "HX-Target": "stats-result"}
        forged = client.post("/ui/datasets/tiny/statistics", headers=htmx,
                             data={"csrf": "wrong", "left": "[a]", "right": "[b]", "action": "run"})
        polled = {"HX-Request": "true", "HX-Trigger": "jobs", "HX-Target": "jobs"}
        answers = [client.get("/ui/jobs", params={"partial": 1}, headers=polled) for _ in range(3)]
        whole = client.get("/ui/jobs")
    assert token and forged.status_code == 403 and "Form expired" in forged.text
    refused = answers[-1]
    assert refused.status_code == whole.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    for answer, again in ((forged, "Try again, or"), (refused, "tries again by itself")):
        assert answer.headers["HX-Reswap"] == "innerHTML" and answer.headers["HX-Reselect"] == ".refusal"
        assert answer.text.strip().startswith('<div class="refusal">')
        assert "<h1" not in answer.text and "<header" not in answer.text and "<html" not in answer.text
        assert 'role="alert"' in answer.text and again in answer.text and 'href=""' in answer.text
    assert "<h1>" in whole.text and "HX-Reswap" not in whole.headers  # a page load: the whole error page
    assert site.remaining("alice") == (0, 0)


def _job_in_state(site: Site, bob: TestClient, token: str, status: str, **values: Any) -> str:
    """A job of bob's made with the form, then set to ``status`` (test set-up: the worker's part)."""
    from sqlalchemy import update

    made = bob.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"},
                    follow_redirects=False)
    public_id = made.headers["location"].rsplit("/", 1)[1]
    db = Database(site.url)
    with db.write() as connection:
        row = connection.execute(select(jobs).where(jobs.c.public_id == public_id)).one()
        connection.execute(update(jobs).where(jobs.c.id == row.id).values(status=status, **values))
        if status in ("failed", "cancelled"):
            budget.refund(connection, row.charge_id)
    db.dispose()
    return public_id


def test_downloads_of_a_job_without_result_answer_the_apis_codes(site: Site) -> None:
    """A cancelled job's result.json said job_not_done ("no result yet"); the API says job_cancelled."""
    bob, token = site.signed_in("bob")
    api = {"Authorization": f"Bearer {site.tokens['bob']}"}
    for status, code in (("cancelled", "job_cancelled"), ("failed", "job_failed"), ("queued", "job_not_done")):
        public_id = _job_in_state(site, bob, token, status, error_code="dataset_changed" if status == "failed"
                                  else None)
        from_api = site.client().get(f"/v1/jobs/{public_id}/result", headers=api)
        assert from_api.status_code == 409 and from_api.json()["error"]["code"] == code
        for download in ("result.json", "queries.txt"):
            page = bob.get(f"/ui/jobs/{public_id}/{download}")
            assert page.status_code == 409 and html.escape(from_api.json()["error"]["message"]) in page.text
    # cancelling a job that has finished says so (it redirected to the list without a word)
    done = _job_in_state(site, bob, token, "done")
    answer = bob.post(f"/ui/jobs/{done}/cancel", data={"csrf": token}, follow_redirects=False)
    assert answer.status_code == 409 and "not cancelled" in answer.text and 'role="alert"' in answer.text
    partial = bob.post(f"/ui/jobs/{done}/cancel", data={"csrf": token}, headers={"HX-Request": "true"})
    assert partial.status_code == 409 and "not cancelled" in partial.text and 'id="jobs"' in partial.text


def test_a_refunded_failed_job_says_so(site: Site) -> None:
    """A job failed with dataset_changed said its ε was still reserved."""
    bob, token = site.signed_in("bob")
    public_id = _job_in_state(site, bob, token, "failed", error_code="dataset_changed")
    page = html.unescape(bob.get(f"/ui/jobs/{public_id}").text)
    assert "reserved meanwhile" not in page
    assert "No release: the job failed before it read any row, and its ε was refunded." in page


def test_refusals_of_page_requests_are_pages_with_the_same_status(site: Site) -> None:
    """The guard's refusals of page requests were the API's JSON (one saying "send JSON")."""
    bob, token = site.signed_in("bob")
    form = {"csrf": token, "algorithm": "alt-expm", "epsilon": "0.1"}
    answers = {
        415: bob.post("/ui/datasets/tiny/jobs", data=form, files={"epsilon": ("e.txt", b"0.1")}),
        422: bob.post("/ui/datasets/tiny/jobs", data={**form, "epsilon": "0.1\x00"}),
        413: bob.post("/ui/datasets/tiny/jobs", content=b"a" * (1024 * 1024 + 10),
                      headers={"content-type": "application/x-www-form-urlencoded"}),
    }
    for status, answer in answers.items():
        assert answer.status_code == status
        assert answer.headers["content-type"].startswith("text/html") and "<h1>" in answer.text
    assert "JSON" not in answers[415].text and "application/x-www-form-urlencoded" in answers[415].text
    missing = bob.get("/ui/static/nothing.js")  # (/favicon.ico is an icon: tests/test_web_owner_forms.py)
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/html")
    api = bob.post("/v1/jobs", files={"a": ("a", b"b")}, headers={"Authorization": f"Bearer {site.tokens['bob']}"})
    assert api.status_code == 415 and api.json()["error"]["code"] == "unsupported_media_type"
    # the live cost box: a refusal keeps its status (the pages' HTMX swaps a 4xx answer in)
    cost = bob.post("/ui/datasets/tiny/cost", data={**form, "epsilon": "NaN"}, headers={"HX-Request": "true"})
    assert cost.status_code == 422 and 'role="alert"' in cost.text and "epsilon" in cost.text
    fine = bob.post("/ui/datasets/tiny/cost", data=form, headers={"HX-Request": "true"})
    assert fine.status_code == 200 and "Cost" in fine.text


def test_long_inputs_keep_the_reason_of_their_refusal(site: Site) -> None:
    """A clired error echoed the query first and was cut before its reason; a long text
    parameter was refused as 'parameters.variant.bool: Input should be a valid boolean'."""
    client, token = site.signed_in("alice")
    long_query = "[b] & " * 100 + "[x > nan]"
    answer = client.post("/ui/datasets/tiny/statistics", data={
        "csrf": token, "left": "[a]", "right": long_query, "epsilon": "0.5", "action": "dry-run"})
    assert answer.status_code == 422 and "'nan' is not a number" in html.unescape(answer.text)
    api = site.client().post("/v1/jobs", headers={"Authorization": f"Bearer {site.tokens['alice']}"}, json={
        "dataset": "tiny", "algorithm": "alt-expm", "epsilon": "0.1", "dry_run": True,
        "parameters": {"variant": "x" * 300}})
    assert api.status_code == 422 and api.json()["error"] == {
        "code": "invalid_parameter", "message": "parameter 'variant' is longer than 200 characters"}
    page = client.post("/ui/datasets/tiny/jobs", data={"csrf": token, "algorithm": "alt-expm", "epsilon": "0.1",
                                                       "p_variant": "x" * 300})
    assert page.status_code == 422 and "longer than 200 characters" in page.text and ".bool" not in page.text


def test_the_ledger_page_lists_statistics_and_jobs_and_adds_up_to_the_budget(site: Site) -> None:
    """The audit: 'ε spent 1.3 of 3' while the pages' only ledgers were the jobs' (1.0); statistics were on none."""
    client, token = site.signed_in("alice")
    for epsilon in ("0.25", "0.5"):
        assert client.post("/ui/datasets/tiny/statistics", data={
            "csrf": token, "left": "[a]", "right": "[b]", "epsilon": epsilon, "action": "run"}).status_code == 200
    job = client.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"},
                      follow_redirects=False).headers["location"]
    page = client.get("/ui/ledger")
    assert page.status_code == 200 and 'href="/ui/ledger" aria-current="page"' in page.text
    charges, releases = (part.split("</tbody>")[0] for part in page.text.split("<caption>")[2:4])
    job_id = job.rsplit("/", 1)[1]
    assert charges.count("<td>statistics</td>") == 2 and f"job {job_id}</a>" in charges  # the queued job is charged
    assert "kept while the job runs" in charges
    api = client.get("/v1/ledger", headers={"Authorization": f"Bearer {site.tokens['alice']}"}).json()["ledger"]
    assert releases.count("<tr><td>") == len(api) == 2   # the statistics' releases; the job has not run
    spent = site.remaining("alice")[0] / 10**9
    total = re.search(r'<td><a href="/ui/datasets/tiny">tiny</a></td><td>([^<]+)</td><td>([^<]+)</td>', page.text)
    assert total is not None and total.group(1) == total.group(2)   # the charges add up to the budget's spent ε
    assert float(Fraction(total.group(1))) == pytest.approx(spent) == 1.75
    owner, _ = site.signed_in("olga")
    assert owner.get("/ui/ledger").status_code == 403   # an analyst's page
