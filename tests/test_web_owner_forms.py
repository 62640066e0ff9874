"""The data owner's pages as a browser uses them: reloads, the back button, the audit filters, the icon.

A user audit with a real browser found: reloading the page shown after "New token"
issued a second token and revoked the one just shown; after "Add analyst" a reload
said "exists already" and the token not yet copied was lost; the audit filter's
"Newest" = ``abc`` was a whole error page that lost the filters, ``0`` and ``-5``
silently showed one record, and Action = ``statistics`` showed nothing (the action
is ``redescription-statistics``, and the page listed none); registering a name in
use said "(remove it first)" where the pages cannot remove; every first visit's
``/favicon.ico`` was an audit record ``request 404 not_found`` among the refusals.

A reload is the GET the browser repeats: the one that followed the form's redirect
(``303 See Other``); the back button asks for the page before the form again. Same
in-process app as tests/test_web_pages.py (its fixture ``site``).
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")

from sqlalchemy import func, select  # noqa: E402

from dprm.server.database import Database  # noqa: E402
from dprm.server.tables import audit, metadata  # noqa: E402
from dprm.server.web import owner_notices  # noqa: E402
from dprm.server.web.sessions import COOKIE  # noqa: E402
from server_support import tiny_views  # noqa: E402
from test_web_pages import JOB_FORM, Site, _csrf, site  # noqa: E402,F401 - the fixture

TOKEN = re.compile(r'id="new-token">(dprm_[0-9a-f]{12}_[A-Za-z0-9_-]{43})<')
SRC = Path(__file__).resolve().parents[1] / "src" / "dprm" / "server"


def _token(page: str) -> str | None:
    found = TOKEN.search(page)
    return found.group(1) if found else None


def _api_status(site: Site, token: str) -> int:
    return site.client().get("/v1/budget", headers={"Authorization": f"Bearer {token}"}).status_code


def _audit(site: Site, action: str) -> list[Any]:
    site.app.state.audit.flush()
    db = Database(site.url)
    with db.read() as connection:
        rows = connection.execute(select(audit).where(audit.c.action == action).order_by(audit.c.id)).all()
    db.dispose()
    return rows


def _everything_stored(site: Site) -> str:
    """Every value of every table of the database, as one text."""
    site.app.state.audit.flush()
    db = Database(site.url)
    with db.read() as connection:
        text = "\n".join(repr(row) for table in metadata.sorted_tables
                         for row in connection.execute(select(table)).all())
    db.dispose()
    return text


def _posted(client: Any, path: str, form: dict[str, str]) -> Any:
    """A form's post as the browser sends it, without following its redirect."""
    return client.post(path, data=form, follow_redirects=False)


# -- 1. post/redirect/get: a reload or the back button never repeats an action ---------------------


def test_a_new_analysts_token_is_shown_once_and_a_reload_repeats_nothing(site: Site) -> None:
    olga, csrf = site.signed_in("olga")
    before = olga.get("/ui/owner")  # the page the back button returns to
    answer = _posted(olga, "/ui/owner/analysts", {"csrf": csrf, "name": "carol"})
    assert answer.status_code == 303 and answer.headers["location"] == "/ui/owner"
    page = olga.get(answer.headers["location"])
    token = _token(page.text)
    assert page.status_code == 200 and token and "added analyst carol" in page.text
    secret = token.split("_", 2)[2]
    # never in the redirect, its address, a header or a cookie (the cookie is sealed), nor stored
    assert secret not in answer.text and secret not in str(answer.headers) and secret not in answer.headers["location"]
    assert secret not in _everything_stored(site)
    assert olga.cookies.get(owner_notices.COOKIE) is None  # read once, then deleted in the browser
    for again in (olga.get("/ui/owner"), olga.get(before.url)):  # a reload; the back button
        assert again.status_code == 200 and _token(again.text) is None
        assert "exists already" not in again.text and "added analyst carol" not in again.text
        assert "<td>carol</td>" in again.text
    assert _api_status(site, token) == 200  # the token shown works
    added = _audit(site, "ui-owner-add-analyst")
    assert [(r.status, r.outcome) for r in added] == [(303, "ok")]
    assert not any(secret in (r.detail or "") + r.path for r in _audit(site, "ui-owner"))


def test_a_reload_after_new_token_keeps_the_token_just_shown(site: Site) -> None:
    olga, csrf = site.signed_in("olga")
    old = site.tokens["alice"]
    alice, _ = site.signed_in("alice")
    answer = _posted(olga, "/ui/owner/analysts/alice/rotate", {"csrf": csrf})
    assert answer.status_code == 303 and answer.headers["location"] == "/ui/owner"
    fresh = _token(olga.get("/ui/owner").text)
    assert fresh and fresh != old and "new token for alice" not in olga.get("/ui/owner").text
    assert (_api_status(site, old), _api_status(site, fresh)) == (401, 200)
    site.tokens["alice"] = fresh
    signed_in_again, _ = site.signed_in("alice")
    for _ in range(3):  # reloads: no new token, the one shown stays valid, its session stays open
        reloaded = olga.get("/ui/owner")
        assert _token(reloaded.text) is None and reloaded.status_code == 200
    assert _api_status(site, fresh) == 200
    assert signed_in_again.get("/ui/datasets", follow_redirects=False).status_code == 200
    assert alice.get("/ui/datasets", follow_redirects=False).status_code == 303  # the old token's session ended
    assert len(_audit(site, "ui-owner-rotate-analyst")) == 1
    assert fresh.split("_", 2)[2] not in _everything_stored(site)


def test_every_owner_form_that_changes_something_redirects_and_a_reload_repeats_none(site: Site) -> None:
    olga, csrf = site.signed_in("olga")
    folder = site.folder / "second"
    folder.mkdir()
    left, right, types = tiny_views(folder, rows=150)  # (tiny's own files are refused under a second name)
    forms = [("/ui/owner/datasets", {"name": "second", "left": str(left), "right": str(right), "types": str(types)},
              "registered second: 2 left and 2 right attributes", "ui-owner-add-dataset"),
             ("/ui/owner/budgets", {"analyst": "bob", "dataset": "second", "epsilon": "2"},
              "bob on second: total 2, spent 0, remaining 2", "ui-owner-grant"),
             ("/ui/owner/analysts/bob/disable", {}, "disabled bob", "ui-owner-disable-analyst"),
             ("/ui/owner/analysts/bob/enable", {}, "enabled bob", "ui-owner-enable-analyst")]
    for path, form, notice, action in forms:
        answer = _posted(olga, path, {"csrf": csrf, **form})
        assert (answer.status_code, answer.headers.get("location")) == (303, "/ui/owner"), (path, answer.text[:500])
        shown = html.unescape(olga.get("/ui/owner").text)
        assert notice in shown, path
        if action == "ui-owner-grant":  # the grant form keeps the analyst and dataset just granted
            assert "<option selected>bob</option>" in shown and "<option selected>second</option>" in shown
        reloaded = html.unescape(olga.get("/ui/owner").text)
        assert notice not in reloaded and 'role="alert"' not in reloaded, path
        assert len(_audit(site, action)) == 1, path
    assert "bob on second: total 2" not in html.unescape(olga.get("/ui/owner").text)
    assert site.client().get("/v1/budget", headers={"Authorization": f"Bearer {site.tokens['bob']}"}
                             ).status_code == 200  # enabled, once: not toggled by any reload


def test_a_refused_owner_form_keeps_its_values_and_does_nothing(site: Site) -> None:
    olga, csrf = site.signed_in("olga")
    refused = _posted(olga, "/ui/owner/budgets", {"csrf": csrf, "analyst": "alice", "dataset": "tiny",
                                                  "epsilon": "-1"})
    assert refused.status_code == 422 and 'role="alert"' in refused.text
    assert 'value="-1"' in refused.text  # the form's value kept
    budget = site.client().get("/v1/budget", headers={"Authorization": f"Bearer {site.tokens['alice']}"})
    assert budget.json()["budgets"][0]["exact"]["total"] == "10"
    unknown = _posted(olga, "/ui/owner/analysts/alice/explode", {"csrf": csrf})
    assert unknown.status_code == 422 and "disable, enable or rotate" in unknown.text
    assert len(_audit(site, "ui-owner-change-analyst")) == 1  # one action name, not one per path


def test_a_double_click_on_add_analyst_loses_no_token(site: Site) -> None:
    """The first post's answer (its sealed notice) and the second's refusal: the page shows both."""
    olga, csrf = site.signed_in("olga")
    first = _posted(olga, "/ui/owner/analysts", {"csrf": csrf, "name": "dora"})
    second = _posted(olga, "/ui/owner/analysts", {"csrf": csrf, "name": "dora"})
    assert first.status_code == 303 and second.status_code == 422
    assert "exists already" in html.unescape(second.text)
    token = _token(second.text)
    assert token and _api_status(site, token) == 200
    assert _token(olga.get("/ui/owner").text) is None


def test_the_sealed_notice_opens_only_in_the_session_that_asked(site: Site) -> None:
    olga, csrf = site.signed_in("olga")
    answer = _posted(olga, "/ui/owner/analysts", {"csrf": csrf, "name": "erin"})
    sealed = answer.cookies.get(owner_notices.COOKIE)
    assert sealed and "erin" not in sealed
    cookie = next(h for h in answer.headers.get_list("set-cookie") if h.startswith(owner_notices.COOKIE))
    for attribute in ("HttpOnly", "Path=/ui/owner", "SameSite=strict", "Max-Age=300"):
        assert attribute.lower() in cookie.lower(), cookie
    other, _ = site.signed_in("olga")  # the same owner, another sign-in
    for value in (sealed, sealed[:-4] + "AAAA", "not even base64 !"):
        other.cookies.set(owner_notices.COOKIE, value, domain="127.0.0.1", path="/ui/owner")
        page = other.get("/ui/owner")
        assert page.status_code == 200 and _token(page.text) is None
        assert "could not be shown" in page.text  # said, not silently dropped
        assert other.cookies.get(owner_notices.COOKIE) is None  # and deleted
    assert _token(olga.get("/ui/owner").text)  # the session that asked still gets it, once
    assert owner_notices.unseal(olga.cookies.get(COOKIE), sealed, now=10**10) is None  # after 5 minutes: gone


def test_a_new_token_form_sent_again_after_its_notice_expired_says_what_happened(site: Site) -> None:
    """The "New token" form's repeat (its one-time key) replays its first answer, sealed for 5
    minutes: sent again later (a tab left open, the back button, then the button again) or from
    another sign-in, the overview showed no token and only the words of a lost notice."""
    import json
    import time

    from sqlalchemy import update

    from dprm.server.tables import one_time_answers

    olga, _ = site.signed_in("olga")
    page = olga.get("/ui/owner").text
    start = page.index('action="/ui/owner/analysts/bob/rotate"')
    form = {name: re.search(rf'name="{name}" value="([^"]+)"', page[start:]).group(1) for name in ("csrf", "submission")}
    assert _posted(olga, "/ui/owner/analysts/bob/rotate", form).status_code == 303
    fresh = _token(olga.get("/ui/owner").text)
    assert fresh and _api_status(site, fresh) == 200
    # the first answer as it is kept, sealed 6 minutes ago (what a repeat finds 6 minutes later)
    db = Database(site.url)
    with db.write() as connection:
        row = connection.execute(select(one_time_answers)).one()
        kept = json.loads(row.answer)
        notes = owner_notices.unseal(olga.cookies.get(COOKIE), kept["body"]["sealed"])
        assert notes is not None and notes["new_token"]["name"] == "bob"
        kept["body"]["sealed"] = owner_notices.seal(olga.cookies.get(COOKIE), notes,
                                                    now=time.time() - owner_notices.LIFETIME - 60)
        connection.execute(update(one_time_answers).where(one_time_answers.c.id == row.id)
                           .values(answer=json.dumps(kept)))
    db.dispose()
    other, _ = site.signed_in("olga")  # another sign-in sends the same form (its own form token)
    other_csrf = re.search(r'name="csrf" value="([^"]+)"', other.get("/ui/owner").text).group(1)
    for client, csrf in ((olga, form["csrf"]), (other, other_csrf)):
        again = _posted(client, "/ui/owner/analysts/bob/rotate", {**form, "csrf": csrf})
        assert again.status_code == 303
        shown = html.unescape(client.get("/ui/owner").text)
        assert _token(shown) is None and "could not be shown" not in shown
        assert "this New token form for bob was sent before" in shown and "Nothing was changed now" in shown
    assert _api_status(site, fresh) == 200  # rotated once: the token shown first still works
    assert [r.outcome for r in _audit(site, "ui-owner-rotate-analyst")] == ["ok", "idempotent_replay",
                                                                           "idempotent_replay"]


# -- 3. a dataset name in use: the exact command that frees it -------------------------------------


def test_a_dataset_name_in_use_says_the_command_that_removes_it(site: Site) -> None:
    olga, csrf = site.signed_in("olga")
    folder = site.folder / "again"
    folder.mkdir()
    left, right, types = tiny_views(folder)
    answer = _posted(olga, "/ui/owner/datasets", {"csrf": csrf, "name": "tiny", "left": str(left),
                                                  "right": str(right), "types": str(types)})
    text = html.unescape(answer.text)
    assert answer.status_code == 422 and "a dataset named 'tiny' is registered already" in text
    assert f'<code class="command">dprm admin --db {site.url} dataset remove tiny</code>' in text
    assert "remove it first" not in text and f'value="{left}"' in text  # the form kept


def test_the_removal_command_hides_a_database_password() -> None:
    from dprm.server.web.owner_pages import registered_already

    class Db:
        url = "postgresql+psycopg://dprm:s3cret@127.0.0.1:5432/dprm"

    refusal = registered_already(Db(), "my data")
    assert refusal.command == "dprm admin --db 'postgresql+psycopg://dprm:***@127.0.0.1:5432/dprm' dataset remove " \
                              "'my data'"
    assert "s3cret" not in str(refusal) + refusal.command and "in place of ***" in str(refusal)


# -- 4. the icon a browser asks for ----------------------------------------------------------------


def test_the_icon_is_served_and_not_audited_as_a_refusal(site: Site) -> None:
    from dprm.server.web.routes import ICON

    olga, _ = site.signed_in("olga")
    for client in (olga, site.client()):  # with and without a session
        icon = client.get("/favicon.ico")
        assert icon.status_code == 200 and icon.content == ICON and icon.headers["content-type"] == "image/x-icon"
        assert "max-age=86400" in icon.headers["cache-control"]
        assert icon.headers["x-content-type-options"] == "nosniff"
    assert [(r.status, r.outcome) for r in _audit(site, "favicon")] == [(200, "ok"), (200, "ok")]
    refusals = olga.get("/ui/owner/audit", params={"errors": "on"})
    assert "favicon" not in refusals.text.split("<tbody>")[1] and "/favicon.ico" not in refusals.text


# -- 2. the audit page's filters -------------------------------------------------------------------


def test_a_bad_newest_value_is_one_message_on_the_page_with_the_filters_kept(site: Site) -> None:
    olga, _ = site.signed_in("olga")
    for value, says in (("abc", "Newest: 'abc' is not a whole number; give one from 1 to 1000."),
                        ("0", "Newest: 0 is less than 1; give a number of records from 1 to 1000."),
                        ("-5", "Newest: -5 is less than 1; give a number of records from 1 to 1000."),
                        ("1.5", "Newest: '1.5' is not a whole number; give one from 1 to 1000.")):
        page = olga.get("/ui/owner/audit", params={"analyst": "alice", "action": "submit-job",
                                                   "outcome": "budget_exceeded", "errors": "on", "limit": value})
        text = html.unescape(page.text)
        assert page.status_code == 422 and page.headers["content-type"].startswith("text/html")
        assert "<h1>Audit log</h1>" in page.text and says in text and "schema" not in text
        assert text.count('role="alert"') == 1 and "<tbody>\n</tbody>" in page.text  # no record
        assert f'id="f_limit" name="limit" inputmode="numeric" value="{value}"' in text
        assert 'value="alice"' in page.text and "<option selected>submit-job</option>" in page.text
        assert 'value="budget_exceeded"' in page.text
        assert 'id="f_errors" name="errors" type="checkbox" checked' in page.text
    assert [r.outcome for r in _audit(site, "ui-owner-audit")] == ["invalid_request"] * 4


def test_newest_above_the_most_is_clamped_and_says_so(site: Site) -> None:
    olga, _ = site.signed_in("olga")
    for _ in range(3):
        olga.get("/ui/owner")
    site.app.state.audit.flush()
    page = olga.get("/ui/owner/audit", params={"limit": "5000"})
    assert page.status_code == 200
    assert "Newest: this page shows at most 1000 records; showing the newest 1000, not 5000." in page.text
    assert 'value="1000"' in page.text
    two = olga.get("/ui/owner/audit", params={"limit": "2"})
    assert "2 records, newest first" in two.text and two.text.count("<tr class=") == 2
    default = olga.get("/ui/owner/audit")
    assert 'name="limit" inputmode="numeric" value="200"' in default.text


def test_the_action_filter_offers_every_action_and_names_the_one_meant(site: Site) -> None:
    answer = site.client().post("/v1/primitives/redescription-statistics", json={
        "dataset": "tiny", "epsilon": "0.1", "left": {"attr": "a", "eq": True}, "right": {"attr": "b", "eq": True}},
        headers={"Authorization": f"Bearer {site.tokens['alice']}"})
    assert answer.status_code == 200, answer.text
    site.app.state.audit.flush()
    olga, _ = site.signed_in("olga")
    page = olga.get("/ui/owner/audit")
    from dprm.server.audit import ACTION_GROUPS, ACTIONS

    offered = re.findall(r"<option(?: selected)?>([a-z-]+)</option>", page.text)
    assert offered == list(ACTIONS) and "redescription-statistics" in offered
    for group in ACTION_GROUPS:
        assert f'<optgroup label="{html.escape(group)}">' in page.text
    wrong = olga.get("/ui/owner/audit", params={"action": "statistics"})
    assert wrong.status_code == 422
    assert ("Action: no action is called 'statistics'; did you mean redescription-statistics, "
            "dry-run-redescription-statistics or ui-statistics-form?") in html.unescape(wrong.text)
    assert '<option value="statistics" selected>statistics (unknown)</option>' in wrong.text
    right = olga.get("/ui/owner/audit", params={"action": "redescription-statistics"})
    assert right.status_code == 200 and "1 records, newest first" in right.text
    assert "<td>alice</td><td>redescription-statistics</td>" in right.text
    both = olga.get("/ui/owner/audit", params={"action": "statistics", "analyst": "mallory", "limit": "x"})
    assert both.status_code == 422 and html.unescape(both.text).count('role="alert"') == 1
    for field in ("Newest:", "Action:", "Analyst: no analyst is called 'mallory'."):
        assert field in html.unescape(both.text)


def test_the_code_names_no_action_the_audit_list_lacks(site: Site) -> None:
    """Every action a handler names is in :data:`dprm.server.audit.ACTIONS` (so the filter offers it)."""
    from dprm.server.audit import ACTIONS
    from dprm.server.primitives import PRIMITIVES

    named = set(PRIMITIVES) | {f"dry-run-{kind}" for kind in PRIMITIVES}
    patterns = (r'state\.action = "([^"]+)"', r'note\(request, "([^"]+)"', r'finished_job\(request, job_id, "([^"]+)"',
                r'act\(request, "([^"]+)"', r'note\(request, "([^"]+)" if', r'else "([^"]+)", body')
    for path in SRC.rglob("*.py"):
        text = path.read_text()
        for pattern in patterns:
            named |= set(re.findall(pattern, text))
    assert len(named) > 30
    assert named <= set(ACTIONS), sorted(named - set(ACTIONS))
    # and what a session of requests wrote
    bob, token = site.signed_in("bob")
    bob.get("/ui/datasets/tiny")
    bob.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"})
    bob.get("/ui/jobs")
    bob.get("/favicon.ico")
    bob.get("/ui/nothing")
    api = {"Authorization": f"Bearer {site.tokens['alice']}"}
    for path in ("/v1/datasets", "/v1/budget", "/v1/ledger", "/v1/jobs", "/v1/algorithms", "/health", "/v1/nothing"):
        site.client().get(path, headers=api)
    site.app.state.audit.flush()
    db = Database(site.url)
    with db.read() as connection:
        written = set(connection.execute(select(audit.c.action).distinct()).scalars())
        assert connection.execute(select(func.count()).select_from(audit)).scalar() > 10
    db.dispose()
    assert written <= set(ACTIONS), sorted(written - set(ACTIONS))
