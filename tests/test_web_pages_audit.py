"""The faults a second audit of the web pages with a real browser found, checked without one.

Two sign-in pages open at once refused every sign-in but the newest page's; a job
page linked a removed registration's name (a 404); "Download clired queries" was
offered where the file cannot be written (Chromium cancels a download answered 422
without a word); attribute names holding clired's symbols could not be typed in
the statistics form, and nothing said how else to name them; error pages showed
neither status nor code; tables lacked captions, and a heading sat inside a
``<summary>``; a refresh of the page's history (the back button, htmx) whose
session had ended was answered with an empty page. What only a browser shows
(the back button, 320 px screens) is in ``tests/test_web_browser.py``.

Same in-process app as tests/test_web_pages.py (its fixture ``site``).
"""

from __future__ import annotations

import html
import re
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")

from sqlalchemy import select  # noqa: E402

from dprm.server.tables import datasets  # noqa: E402
from dprm.server.web import csrf  # noqa: E402
from dprm.server.web.sessions import COOKIE  # noqa: E402
from test_web_pages import JOB_FORM, Site, _csrf, site  # noqa: E402,F401 - the fixture


def _signin_cookie(answer: Any) -> str | None:
    for header in answer.headers.get_list("set-cookie"):
        if header.startswith(csrf.SIGNIN_COOKIE + "="):
            return header.split(";")[0].split("=", 1)[1].strip('"')
    return None


# -- U1: two sign-in pages open at once ------------------------------------------------------------


def test_two_sign_in_pages_open_at_once_both_sign_in(site: Site) -> None:
    """Every sign-in page set a new sign-in cookie: the older tab's form was "expired", and after
    one tab signed in (the cookie deleted) the other's was too."""
    browser = site.client()  # one browser (one cookie jar), two tabs
    first, second = browser.get("/ui/signin?next=%2Fui%2Fjobs"), browser.get("/ui/signin?next=%2Fui%2Fledger")
    assert _csrf(first.text) == _csrf(second.text) == _signin_cookie(second)
    signed = browser.post("/ui/signin", data={"csrf": _csrf(first.text), "token": site.tokens["alice"],
                                              "next": "/ui/jobs"}, follow_redirects=False)
    assert signed.status_code == 303 and signed.headers["location"] == "/ui/jobs"
    again = browser.post("/ui/signin", data={"csrf": _csrf(second.text), "token": site.tokens["alice"],
                                             "next": "/ui/ledger"}, follow_redirects=False)
    assert again.status_code == 303 and again.headers["location"] == "/ui/ledger" and COOKIE in str(again.headers)
    # the double submit holds: a form token without its cookie, or not the cookie's, is refused
    stranger = site.client().post("/ui/signin", data={"csrf": _csrf(first.text), "token": site.tokens["alice"]},
                                  follow_redirects=False)
    assert stranger.status_code == 403 and COOKIE not in str(stranger.headers)
    wrong = browser.post("/ui/signin", data={"csrf": csrf.signin_token(None, time.time())[0],
                                             "token": site.tokens["alice"]}, follow_redirects=False)
    assert wrong.status_code == 403


def test_a_sign_in_token_is_reused_only_while_valid_and_only_if_the_server_drew_it(site: Site) -> None:
    now = time.time()
    for planted in ("guessed", "a" * 43, f"{int(now + 86400):x}." + "a" * 43):  # not drawn here; from the future
        client = site.client()
        client.cookies.set(csrf.SIGNIN_COOKIE, planted, path="/ui")
        page = client.get("/ui/signin")
        assert _csrf(page.text) != planted and csrf.signin_valid(_csrf(page.text), now)
        refused = client.post("/ui/signin", data={"csrf": planted, "token": site.tokens["alice"]},
                              follow_redirects=False)
        assert refused.status_code == 403
    old = f"{int(now - csrf.SIGNIN_LIFETIME - 1):x}." + "b" * 43  # drawn more than its lifetime ago
    client = site.client()
    client.cookies.set(csrf.SIGNIN_COOKIE, old, path="/ui")
    assert client.post("/ui/signin", data={"csrf": old, "token": site.tokens["alice"]},
                       follow_redirects=False).status_code == 403
    assert _csrf(client.get("/ui/signin").text) != old
    ageing = f"{int(now - csrf.SIGNIN_LIFETIME + 600):x}." + "c" * 43  # 10 minutes left: still good, not reused
    client = site.client()
    client.cookies.set(csrf.SIGNIN_COOKIE, ageing, path="/ui")
    assert _csrf(client.get("/ui/signin").text) != ageing
    client = site.client()
    client.cookies.set(csrf.SIGNIN_COOKIE, ageing, path="/ui")
    assert client.post("/ui/signin", data={"csrf": ageing, "token": site.tokens["alice"]},
                       follow_redirects=False).status_code == 303


# -- U2: the back button to a page HTMX pushed, once the session has ended --------------------------


def test_a_history_restore_without_session_is_a_sign_in_redirect_not_an_empty_answer(site: Site) -> None:
    """HTMX restores a page it pushed (the job form of another algorithm) by asking for it with
    ``HX-History-Restore-Request``; without a session that was a 204 with HX-Redirect, which it
    ignores there: it put the empty body in place of the page's."""
    from urllib.parse import quote

    page = "/ui/datasets/tiny?algorithm=alt-mcmc"
    restore = {"HX-Request": "true", "HX-History-Restore-Request": "true",
               "HX-Current-URL": "http://127.0.0.1/ui/datasets/tiny"}
    answer = site.client().get(page, headers=restore, follow_redirects=False)
    assert answer.status_code == 303 and "HX-Redirect" not in answer.headers
    assert answer.headers["location"] == "/ui/signin?next=" + quote(page, safe="")  # the page restored
    followed = site.client().get(page, headers=restore)
    assert followed.status_code == 200 and 'name="token"' in followed.text and "<h1>" in followed.text
    # signed in, a restore gets the whole page, and a refusal the whole error page (not a part's message)
    alice, _ = site.signed_in("alice")
    whole = alice.get(page, headers=restore)
    assert whole.status_code == 200 and whole.text.lstrip().startswith("<!doctype html>") and "<h1>" in whole.text
    missing = alice.get("/ui/jobs/job_000000000000000000000000", headers=restore)
    assert missing.status_code == 404 and "<h1>" in missing.text and "HX-Reswap" not in missing.headers
    # a part of a page refreshing itself is still answered as a part
    part = site.client().get(page, headers={"HX-Request": "true", "HX-Current-URL": "http://127.0.0.1" + page})
    assert part.status_code == 204 and part.headers["HX-Redirect"] == "/ui/signin?next=" + quote(page, safe="")
    # and the pages tell HTMX to reload a page of the history rather than ask for it (htmx-config)
    assert '"refreshOnHistoryMiss": true' in html.unescape(alice.get("/ui/datasets").text)


# -- U3: the clired file offered only where it can be written ----------------------------------------


def _job_done_with(site: Site, client: Any, token: str, names: list[str]) -> str:
    """A job of the form, finished with one redescription per left attribute name of ``names``."""
    from dprm.queries import BooleanLiteral, Redescription, RedescriptionStats
    from test_web_pages import _finish_with

    job = client.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"},
                      follow_redirects=False).headers["location"]
    _finish_with(site, job, [Redescription(BooleanLiteral(name), BooleanLiteral("b"),
                                           RedescriptionStats.from_counts(30.0, 40.0, 20.0, 200.0))
                             for name in names])
    return job


def test_the_clired_file_is_offered_only_where_it_can_be_written(site: Site) -> None:
    """The link has ``download``: Chromium cancelled the 422 answer of a result clired cannot
    hold (an attribute name with '<') without a word. The page now says why there is no file."""
    client, token = site.signed_in("alice")
    writable = client.get(_job_done_with(site, client, token, ["a", "state"]))
    assert writable.status_code == 200 and "/queries.txt\" download>Download clired queries</a>" in writable.text
    assert 'id="no-clired"' not in writable.text
    job = _job_done_with(site, client, token, ["a", "x<y"])
    page = client.get(job)
    assert page.status_code == 200 and "queries.txt" not in page.text and "Download JSON" in page.text
    note = html.unescape(re.search(r'<p class="help" id="no-clired">(.*?)</p>', page.text, re.S).group(1))
    assert "cannot be written in clired's syntax (attribute name 'x<y' cannot be written in clired syntax)" in note
    assert client.get(job + "/queries.txt").status_code == 422  # the address itself still says why


# -- U7: a removed registration is not linked -------------------------------------------------------


def test_a_job_of_a_removed_registration_does_not_link_its_name(site: Site) -> None:
    """The job page linked /ui/datasets/tiny%20%28removed%29, a 404."""
    from dprm.server.database import Database
    from dprm.server.datasets import remove_dataset

    client, token = site.signed_in("alice")
    job = _job_done_with(site, client, token, ["a"])
    assert '<a href="/ui/datasets/tiny">tiny</a>' in client.get(job).text
    db = Database(site.url)
    with db.write() as connection:
        remove_dataset(connection, "tiny")
    db.dispose()
    page = client.get(job)
    assert page.status_code == 200 and "<dd>tiny (removed)</dd>" in page.text
    assert "/ui/datasets/tiny" not in page.text
    for listed in ("/ui/jobs", "/ui/ledger"):  # the lists do not link it either
        assert "/ui/datasets/tiny" not in client.get(listed).text, listed


# -- U5: attribute names a query cannot hold -------------------------------------------------------


def _register(site: Site, name: str, folder: Path, analyst: str) -> None:
    """Register ``folder``'s left.csv, right.csv and types.json as ``name``, and grant ``analyst`` 10 on it."""
    from dprm.server import accounts, budget
    from dprm.server.database import Database
    from dprm.server.datasets import register_dataset
    from dprm.server.units import epsilon_units

    db = Database(site.url)
    register_dataset(db, name, folder / "left.csv", folder / "right.csv", folder / "types.json")
    with db.write() as connection:
        who = accounts.find_analyst(connection, analyst)
        dataset_id = connection.execute(select(datasets.c.id).where(datasets.c.active_name == name)).scalar()
        budget.set_budget(connection, who.id, dataset_id, epsilon_units("10"))
    db.dispose()


def _odd_dataset(site: Site, analyst: str = "alice") -> None:
    """``odd``: attribute names holding clired's symbols, and one like an index, with a budget of 10."""
    import json

    folder = site.folder / "odd"
    folder.mkdir()
    rows = range(60)
    (folder / "left.csv").write_text('id,a<b,plain,[c]\n' + "".join(f"{i},{i % 2},{i % 3 == 0:d},{i % 5 == 0:d}\n"
                                                                     for i in rows))
    (folder / "right.csv").write_text("id,b,v0\n" + "".join(f"{i},{(i + 1) % 2},{i % 7}\n" for i in rows))
    (folder / "types.json").write_text(json.dumps({"id_column": "id", "columns": {
        "a<b": "boolean", "plain": "boolean", "[c]": "boolean", "b": "boolean",
        "v0": {"type": "numeric", "bounds": [0, 10]}}}))
    _register(site, "odd", folder, analyst)


def test_attribute_names_a_query_cannot_hold_are_typed_by_their_index(site: Site) -> None:
    """'[a<b]' was "expected a name or value, found '<'"; [v0] worked but neither the message
    nor the schema said so."""
    _odd_dataset(site)
    client, token = site.signed_in("alice")
    page = client.get("/ui/datasets/odd").text
    hints = {html.unescape(name): index for name, index in re.findall(
        r'<tr><td>([^<]*)(?:<br><span class="help">in a query: <code>(v\d+)</code></span>)?</td><td>(?:boolean|numeric)',
        page)}
    page = html.unescape(page)
    assert hints == {"a<b": "v0", "plain": "", "[c]": "v2", "b": "", "v0": "v1"}
    assert "is written by its index in its view, e.g. <code>[v0]</code>" in page
    assert 'id="index-names"' not in client.get("/ui/datasets/tiny").text  # only where a name needs it
    form = {"csrf": token, "epsilon": "0.5", "action": "dry-run"}
    refused = client.post("/ui/datasets/odd/statistics", data={**form, "left": "[a<b]", "right": "[b]"})
    message = html.unescape(refused.text)
    assert refused.status_code == 422 and "left query: " in message
    assert "is written by its index in the view, shown beside it in the schema: e.g. v0" in message
    read = client.post("/ui/datasets/odd/statistics", data={**form, "left": "[v0] & ![v2]", "right": "[v1 > 3] | [b]"},
                       headers={"HX-Request": "true"})
    assert read.status_code == 200
    assert "Read as <strong>[a<b] ∧ [[c] = false]</strong> ⇔ <strong>[v0 ≥ 3] ∨ b</strong>" in html.unescape(read.text)
    assert site.remaining("alice") == (0, 0)


# -- U6: error pages with their status and stable code ----------------------------------------------


def _error_parts(text: str) -> tuple[str, str, str]:
    """The error page's title, message and the line with status and code."""
    title = re.search(r"<h1>(.*?)</h1>", text, re.S).group(1)
    message = re.search(r'<p class="alert error" role="alert">(.*?)</p>', text, re.S).group(1)
    code = re.search(r'<p class="help" id="error-code">(.*?)</p>', text, re.S).group(1)
    return html.unescape(title), html.unescape(message), re.sub(r"<[^>]+>", "", code)


def test_error_pages_show_the_status_and_the_stable_code_under_a_human_title(site: Site) -> None:
    """docs/server.md said error pages carry the API's status and code; they showed neither, their
    title was their message, and a 422 spoke of "the API's schema"."""
    from dprm.server.errors import ERRORS
    from dprm.server.web.pages import PAGE_TITLES

    assert set(PAGE_TITLES) == set(ERRORS)  # every code of the API has a title of its own on the pages
    client, _ = site.signed_in("alice")
    answers = {
        "unknown_job": client.get("/ui/jobs/job_000000000000000000000000"),
        "unknown_dataset": client.get("/ui/datasets/nothing"),
        "invalid_request": client.get("/ui/jobs", params={"partial": "x"}),
        "method_not_allowed": client.post("/ui/owner/analysts/a/b/disable"),
        "not_found": client.get("/ui/static/nothing.js"),
        "wrong_role": client.get("/ui/owner"),  # a page's own refusal: the audit's outcome is its code
    }
    for code, answer in answers.items():
        title, message, line = _error_parts(answer.text)
        assert line == f"Status {answer.status_code} · code {code}", (code, line)
        assert title.strip(". ").lower() != message.strip(". ").lower(), (code, title, message)
        assert "API" not in title + message and "endpoint" not in message, (code, title, message)
    assert _error_parts(answers["unknown_job"].text)[:2] == ("Job not found", "no such job among your jobs")
    assert answers["invalid_request"].status_code == 422
    # the part of a page HTMX asked for says them too
    part = client.get("/ui/jobs/job_000000000000000000000000", headers={"HX-Request": "true"})
    assert part.status_code == 404 and "404 <code>unknown_job</code>" in part.text


# -- U8: every table has a caption; no heading inside a summary ------------------------------------


def test_every_table_of_the_pages_has_a_caption_and_no_summary_holds_a_heading(site: Site) -> None:
    """The job's ledger, the owner's budgets, jobs, analysts and datasets and the owner's job list
    had no caption (docs/server.md: "the tables have captions"); the dataset page's Schema heading
    sat inside a <summary>, which may hold phrasing content only."""
    from dprm.server import jobs as queue
    from dprm.server.database import Database
    from dprm.server.worker import run_job

    alice, token = site.signed_in("alice")
    ran = alice.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"},
                     follow_redirects=False).headers["location"]
    db = Database(site.url)
    assert run_job(db, queue.claim_next(db, "worker-1").id, "worker-1") == "done"
    db.dispose()
    queued = alice.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run", "epsilon": "0.5"},
                        follow_redirects=False).headers["location"]
    olga, _ = site.signed_in("olga")
    pages = {path: alice.get(path) for path in ("/ui/datasets", "/ui/datasets/tiny", "/ui/jobs", ran, queued,
                                                 "/ui/ledger")}
    pages.update({path: olga.get(path) for path in ("/ui/owner", "/ui/owner/jobs", "/ui/owner/jobs?status=done",
                                                    "/ui/owner/audit")})
    assert '<table class="ledger">' in pages[ran].text
    assert pages["/ui/owner"].text.count("<table") == 4  # budgets, jobs, analysts, datasets
    assert sum(page.text.count("<table") for page in pages.values()) >= 14
    for path, page in pages.items():
        assert page.status_code == 200, path
        tables = re.findall(r"<table[^>]*>\s*(<[a-z]+)", page.text)
        assert all(first == "<caption" for first in tables), (path, tables)
        summaries = re.findall(r"<summary>(.*?)</summary>", page.text, re.S)
        assert not any(re.search(r"<(h[1-6]|p|div|table)\b", summary) for summary in summaries), (path, summaries)
    assert re.search(r'<h2 id="schema-heading">Schema</h2>\s*<details>\s*<summary>The 2 left and 2 right attributes'
                     r"</summary>", pages["/ui/datasets/tiny"].text)


# -- L1: the job form sent again after the back button ------------------------------------------------


def test_a_job_forms_key_sent_again_returns_its_job_and_other_values_make_a_new_one(site: Site) -> None:
    """The server's part of the back button (tests/test_web_browser.py has the browser's): the
    page puts the form's key back (static/dprm.js), so a repeat of key and values must be the
    first job, charged once, and the same key with a changed value a new job, not a 409."""
    client, token = site.signed_in("bob")
    page = client.get("/ui/datasets/tiny").text
    key = re.search(r'name="submission" value="([0-9a-f]{24})"', page).group(1)
    assert re.search(r'<label hidden>[^<]*<input type="text" name="submission_kept" value="" '
                     r'data-keeps="submission" tabindex="-1"></label>', page)
    assert '<p class="help" id="job-sent" data-sent-note hidden>' in page
    assert '<script src="/ui/static/dprm.js" defer></script>' in page
    assert client.get("/ui/static/dprm.js").headers["content-type"].startswith(("text/javascript",
                                                                                "application/javascript"))
    form = {**JOB_FORM, "csrf": token, "action": "run", "submission": key, "submission_kept": key}
    first = client.post("/ui/datasets/tiny/jobs", data=form, follow_redirects=False).headers["location"]
    again = client.post("/ui/datasets/tiny/jobs", data=form, follow_redirects=False).headers["location"]
    assert again == first + "?again=1" and site.remaining("bob") == (10**9, 1)
    said = html.unescape(client.get(again).text)
    assert "The job form was sent again with the same values: this is the job it started, charged once." in said
    assert 'id="sent-again"' not in client.get(first).text
    changed = client.post("/ui/datasets/tiny/jobs", data={**form, "epsilon": "0.5"}, follow_redirects=False)
    assert changed.status_code == 303 and changed.headers["location"].split("?")[0] != first
    assert "again" not in changed.headers["location"] and site.remaining("bob") == (15 * 10**8, 2)
    fresh = re.search(r'name="submission" value="([0-9a-f]{24})"', client.get("/ui/datasets/tiny").text).group(1)
    new = client.post("/ui/datasets/tiny/jobs", data={**form, "submission": fresh}, follow_redirects=False)
    assert new.headers["location"] not in (first, again) and site.remaining("bob") == (25 * 10**8, 3)


# -- categories a query cannot hold ----------------------------------------------------------------

#: Declared categories of ``colour`` in ``hues``: clired's symbols, spaces at an end, a number-like text.
HUES = ["red", "a]b", "x, y", " pale", "1e5", "p<q=r", "#0"]


def _hues_dataset(site: Site, analyst: str = "alice") -> None:
    """``hues``: a categorical attribute ``colour`` whose categories a query cannot hold, budget 10."""
    import csv
    import json

    folder = site.folder / "hues"
    folder.mkdir()
    with open(folder / "left.csv", "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["id", "colour", "a"])
        writer.writerows([i, HUES[i % len(HUES)], i % 2] for i in range(70))
    (folder / "right.csv").write_text("id,b\n" + "".join(f"{i},{i % 3 == 0:d}\n" for i in range(70)))
    (folder / "types.json").write_text(json.dumps({"id_column": "id", "columns": {
        "colour": {"type": "categorical", "categories": HUES}, "a": "boolean", "b": "boolean"}}))
    _register(site, "hues", folder, analyst)


def test_categories_a_query_cannot_hold_are_typed_by_their_index(site: Site) -> None:
    """A category holding one of clired's symbols (``a]b``, ``x, y``), a space at an end or a text like
    ``1e5`` could not be typed in the statistics form ([colour = a]b] was "unexpected ']'"): it is
    written by its index among its attribute's categories, [colour = #1], which the schema shows
    beside it and a parse error names."""
    _hues_dataset(site)
    client, token = site.signed_in("alice")
    page = client.get("/ui/datasets/hues").text
    shown = {html.unescape(c): k for c, k in re.findall(
        r'<code class="category">([^<]*)</code> <span class="help">\(in a query: <code>(#\d+)</code>\)</span>', page)}
    assert shown == {"a]b": "#1", "x, y": "#2", " pale": "#3", "1e5": "#4", "p<q=r": "#5", "#0": "#6"}
    assert re.search(r"<td>red, <code", page)  # a category a query holds is shown as it is
    assert "is written by its index among its attribute's categories, e.g. <code>[colour = #1]</code>" in page
    assert 'id="index-categories"' not in client.get("/ui/datasets/tiny").text  # only where a category needs it
    form = {"csrf": token, "epsilon": "0.5", "action": "dry-run", "right": "[b]"}
    for typed in ("[colour = a]b]", "[colour = x, y]", "[colour = p<q=r]"):
        refused = client.post("/ui/datasets/hues/statistics", data={**form, "left": typed})
        message = html.unescape(refused.text)
        assert refused.status_code == 422 and "left query: " in message, typed
        assert ("is written by its index among its attribute's categories, shown beside it in the schema: "
                "e.g. [colour = #1]") in message, typed
    for typed in ("[colour = pale]", "[colour = purple] & [a]"):  # " pale" is declared: the index form named
        undeclared = client.post("/ui/datasets/hues/statistics", data={**form, "left": typed})
        message = html.unescape(undeclared.text)
        assert undeclared.status_code == 422 and "is not a declared category of 'colour'" in message, typed
        assert "written by its index among its attribute's categories" in message and "[colour = #1]" in message
    missing = client.post("/ui/datasets/hues/statistics", data={**form, "left": "[colour = #7]"})
    assert missing.status_code == 422
    assert "category #7 of 'colour' does not exist (its declared categories: #0 to #6)" in html.unescape(missing.text)
    read = client.post("/ui/datasets/hues/statistics", headers={"HX-Request": "true"}, data={
        **form, "left": "[colour = #1] | [colour ∈ {#3,red,#6}] | ![colour = #4]"})
    assert read.status_code == 200, read.text
    assert ("Read as <strong>[colour = a]b] ∨ [colour =  pale] ∨ [colour = red] ∨ [colour = #0] ∨ "
            "¬[colour = 1e5]</strong>") in html.unescape(read.text)
    paid = client.post("/ui/datasets/hues/statistics", data={**form, "left": "[colour = #2] & [a]", "action": "run"})
    assert paid.status_code == 200 and "[colour = x, y] ∧ a" in html.unescape(paid.text)
    assert site.remaining("alice", "hues") == (5 * 10**8, 1)
