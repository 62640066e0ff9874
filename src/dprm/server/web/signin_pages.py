"""The sign-in pages: ``/ui`` (to the signed-in role's home), ``/ui/signin``, ``/ui/signout``.

``/ui/signin?next=PAGE`` (where a page asked for without a session sends the browser)
brings it back to ``PAGE`` after sign-in, a same-site page only
(:mod:`~dprm.server.web.return_to`).

A token signs in an analyst or a data owner (:mod:`~dprm.server.web.sessions`);
the sign-in form carries its own token against cross-site posts (a cookie, since
there is no session yet). Every sign-in page of a browser shows the same form token
while it is valid (:func:`~dprm.server.web.csrf.signin_token`), and a sign-in leaves
it in place: two sign-in pages open at once (every tab whose session ended) each
sign in.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from dprm.errors import short_repr
from dprm.server import accounts
from dprm.server.errors import rate_limited
from dprm.server.ratelimit import client_address
from dprm.server.web import csrf
from dprm.server.web.access import session_of
from dprm.server.web.forms import repeated_field
from dprm.server.web.pages import problem, redirect, render
from dprm.server.web.return_to import after_signin, home_of, safe_next
from dprm.server.web.sessions import COOKIE, LIFETIME, close_session, open_session

__all__ = ["router", "signin_page"]

router = APIRouter(prefix="/ui", include_in_schema=False)


@router.get("", response_class=HTMLResponse)
@router.get("/", response_class=HTMLResponse)
async def home(request: Request) -> Response:
    request.state.action = "ui-home"
    found = await session_of(request)
    if found is None:
        return redirect("/ui/signin")
    return redirect(home_of(found.role))


def signin_page(request: Request, status: int = 200, message: str | None = None,
                next_page: str | None = None) -> HTMLResponse:
    """The sign-in form with its sign-in form token (in a cookie and in the form: the browser's
    own while it is valid, else a new one, :func:`~dprm.server.web.csrf.signin_token`), and the
    page to return to after it (:func:`~dprm.server.web.return_to.safe_next`), if any."""
    token, seconds = csrf.signin_token(request.cookies.get(csrf.SIGNIN_COOKIE), time.time())
    response = render(request, "signin.html", status, None, signin_token=token, message=message,
                      next_page=safe_next(next_page))
    response.set_cookie(csrf.SIGNIN_COOKIE, token, max_age=seconds, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", path="/ui")
    return response


@router.get("/signin", response_class=HTMLResponse)
async def signin_form(request: Request, next: str | None = None) -> Response:  # noqa: A002 - the query's name
    request.state.action = "ui-signin-page"
    return signin_page(request, next_page=next)


@router.post("/signin", response_class=HTMLResponse)
async def signin(request: Request) -> Response:
    from dprm.server.owners import authenticate_owner

    request.state.action = "ui-signin"
    form = await request.form()
    next_page = str(form.get("next") or "")
    cookie = request.cookies.get(csrf.SIGNIN_COOKIE)
    if csrf.cross_origin(request.headers) or not csrf.signin_valid(cookie, time.time()) \
            or not csrf.matches(cookie, str(form.get(csrf.FIELD) or "")):
        request.state.outcome = "csrf_refused"
        return signin_page(request, 403, "The sign-in form expired; please try again.", next_page)
    if (repeated := repeated_field(form.multi_items())) is not None:  # never read as its last value
        request.state.outcome = "invalid_request"
        return signin_page(request, 422, f"The form field {short_repr(repeated)} was sent more than once; "
                                         f"please sign in with the form as the page sends it.", next_page)
    token = str(form.get("token") or "").strip()
    db = request.app.state.db
    guesses, address = request.app.state.guesses, client_address(request.scope)
    if token and (wait := guesses.wait(address)) > 0:  # too many invalid tokens from this address
        request.state.outcome = "rate_limited"
        retry_after = rate_limited(wait).headers
        refused = signin_page(request, 429, "Too many invalid tokens were sent from your address; "
                              f"try again in {retry_after['Retry-After']} s.", next_page)
        refused.headers.update(retry_after)
        return refused

    def check(connection: Any) -> tuple[str, Any, str | None]:
        analyst, problem_code = accounts.authenticate(connection, token)
        if analyst is not None:
            return "analyst", analyst, None
        owner, owner_problem = authenticate_owner(connection, token)
        if owner is not None:
            return "owner", owner, None
        return "", None, problem_code if problem_code != "invalid_token" else owner_problem

    role, who, problem_code = await db.aread(check)
    if who is None:
        if token and problem_code in (None, "invalid_token"):
            guesses.allow(address)
        request.state.outcome = problem_code or "invalid_token"
        messages = {"token_disabled": "This token is disabled.", "token_expired": "This token has expired.",
                    "missing_token": "Paste your token."}
        return signin_page(request, 401, messages.get(problem_code or "", "This token is not valid."), next_page)
    if role == "analyst":
        request.state.analyst_id = who.id
    cookie, _ = await run_in_threadpool(open_session, db, role, who.id, who.token_id)
    response = redirect(after_signin(role, next_page))  # the page asked for, or the role's home
    response.set_cookie(COOKIE, cookie, max_age=int(LIFETIME), httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", path="/ui")
    return response  # the sign-in cookie stays: another sign-in page open in the browser signs in too


@router.post("/signout", response_class=HTMLResponse)
async def signout(request: Request) -> Response:
    request.state.action = "ui-signout"
    found = await session_of(request)
    form = await request.form()
    if found is None:
        return redirect("/ui/signin")
    if csrf.cross_origin(request.headers) or not csrf.matches(
            found.csrf, str(form.get(csrf.FIELD) or request.headers.get(csrf.HEADER) or "")):
        return problem(request, 403, "Form expired", "Reload the page and sign out again.", found, "csrf_refused")
    await run_in_threadpool(close_session, request.app.state.db, request.cookies.get(COOKIE))
    response = redirect("/ui/signin")
    response.delete_cookie(COOKIE, path="/ui")
    return response
