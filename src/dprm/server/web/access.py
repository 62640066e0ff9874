"""Who is asking for a page: the session of the cookie, checked for the page's role and form token.

A page's ``GET`` takes :func:`for_reading` (a sign-in redirect without a session,
which brings the browser back to the page after sign-in (:mod:`~dprm.server.web.return_to`),
403 for the other role); a ``POST`` takes :func:`for_posting` (401 without a
session, 403 with a wrong or missing form token or for the other role, 422
``invalid_request`` for a field sent more than once, and nothing is done). They are
called by the handlers after FastAPI has checked the query, so a malformed query is
refused before the session is looked up (and its rate limit paid).
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import Response

from dprm.errors import short_repr
from dprm.server.errors import ApiError, rate_limited
from dprm.server.web import csrf
from dprm.server.web.forms import repeated_field
from dprm.server.web.pages import SECURITY_HEADERS, api_problem, is_htmx, problem, redirect
from dprm.server.web.return_to import asked_page, signin_location
from dprm.server.web.sessions import COOKIE, Session, find_session

__all__ = ["for_posting", "for_reading", "session_of"]


async def session_of(request: Request) -> Session | None:
    """The live session of the request's cookie, if any (its token's rate limit applies)."""
    cookie = request.cookies.get(COOKIE)
    if not cookie:
        return None
    db = request.app.state.db
    found = await db.aread(lambda connection: find_session(connection, cookie))
    if found is not None:
        if found.role == "analyst":
            request.state.analyst_id = found.principal_id
        else:
            request.state.detail = f"owner {found.name}"
        wait = request.app.state.limiter.allow(found.token_id)
        if wait > 0:
            raise rate_limited(wait)
    return found


async def for_reading(request: Request, role: str) -> Session | Response:
    """The session of a page's GET: a sign-in redirect without one, 403 for the other role."""
    found = await session_of(request)
    if found is None:  # to sign in, then back to the page asked for (return_to: same-site pages only)
        htmx = is_htmx(request)
        location = signin_location(asked_page(request.url, request.headers, htmx))
        if htmx:  # a refresh of part of a page whose session ended: the whole page goes
            return Response(status_code=204, headers={**SECURITY_HEADERS, "HX-Redirect": location})
        return redirect(location)
    if found.role != role:
        return problem(request, 403, "Not for this account",
                       f"This page is for {role}s; you are signed in as {found.role} {found.name}.", found,
                       "wrong_role")
    return found


async def for_posting(request: Request, role: str) -> tuple[Session | None, dict[str, Any], Response | None]:
    """Session and form of a POST; an answer instead when it is refused (nothing done)."""
    found = await session_of(request)
    sent = await request.form()
    form = dict(sent)
    if found is None:
        if is_htmx(request):  # a live form part whose session ended: to the sign-in page, not a page in a box,
            # and back to the page after it, as a refreshing part's GET (before: the role's home, the page lost)
            request.state.outcome = "missing_session"
            location = signin_location(asked_page(request.url, request.headers, True))
            return None, form, Response(status_code=204, headers={**SECURITY_HEADERS, "HX-Redirect": location})
        return None, form, problem(request, 401, "Sign in first",
                                   "This form needs a signed-in session; nothing was done.",
                                   outcome="missing_session")
    given = form.get(csrf.FIELD) or request.headers.get(csrf.HEADER)
    if csrf.cross_origin(request.headers) or not csrf.matches(found.csrf, str(given) if given is not None else None):
        return found, form, problem(request, 403, "Form expired",
                                    "The form's security token is missing or wrong; reload the page and try "
                                    "again. Nothing was done.", found, "csrf_refused")
    if found.role != role:
        return found, form, problem(request, 403, "Not for this account",
                                    f"This action is for {role}s; nothing was done.", found, "wrong_role")
    repeated = repeated_field(sent.multi_items())
    if repeated is not None:  # never read as its last value
        return found, form, api_problem(request, ApiError(
            "invalid_request", f"the form field {short_repr(repeated)} is sent more than once; nothing was done"),
            found)
    return found, form, None
