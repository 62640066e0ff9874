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
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")

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
