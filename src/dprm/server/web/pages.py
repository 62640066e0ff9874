"""Rendering the pages: the templates' environment, the security headers, error pages and redirects.

Every page (:mod:`dprm.server.web.routes`) answers through :func:`render`, so every
answer carries :data:`SECURITY_HEADERS` (a strict Content-Security-Policy: scripts
and styles from this server only).
"""

from __future__ import annotations

import secrets
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse

from dprm.server.errors import ERRORS, ApiError
from dprm.server.web import csrf
from dprm.server.web.sessions import Session

__all__ = ["HTMX_REFUSAL", "PAGE_MESSAGES", "PAGE_TITLES", "SECURITY_HEADERS", "STATIC", "TEMPLATES", "api_problem",
           "error_page", "is_htmx", "page_error", "page_switch", "problem", "redirect", "render"]

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
TEMPLATES = HERE / "templates"

#: Headers of every page: only this server's scripts and styles, no framing, no sniffing.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}

#: How HTMX puts a refusal of a request for part of a page (the statistics box, a job's or the
#: job list's refresh, the cost box) in the page: inside that part, whatever its own hx-select
#: and hx-swap say. The part's element and its hx- attributes stay: its refresh goes on, its form
#: posts again. A whole error page there put a second header and h1 in the page and lost the part.
HTMX_REFUSAL = {"HX-Reswap": "innerHTML", "HX-Reselect": ".refusal"}


#: The error page's title of each of the API's error codes (:data:`dprm.server.errors.ERRORS`): a few
#: words; the page shows the one-line message below it, then the status and the code.
PAGE_TITLES: dict[str, str] = {
    "invalid_json": "Form not accepted", "json_too_deep": "Form not accepted",
    "invalid_request": "Request not accepted", "invalid_parameter": "Parameter out of range",
    "invalid_epsilon": "ε not accepted", "invalid_query": "Query not accepted", "invalid_tree": "Tree not accepted",
    "outside_domain": "Known from the public schema", "unknown_algorithm": "No such algorithm",
    "request_too_large": "Request too large", "request_timeout": "Request too slow",
    "unsupported_media_type": "Form not accepted", "missing_token": "Sign in first",
    "invalid_token": "Token not valid", "token_expired": "Token expired", "token_disabled": "Account disabled",
    "rate_limited": "Too many requests", "too_many_jobs": "Too many jobs", "not_found": "No such page",
    "method_not_allowed": "Method not allowed", "unknown_dataset": "Dataset not found", "unknown_job": "Job not found",
    "budget_exceeded": "Over budget", "idempotency_key_reused": "Form sent already",
    "submission_pending": "Form still being answered", "job_not_done": "No result yet", "job_failed": "Job failed",
    "job_cancelled": "Job cancelled", "job_finished": "Job finished", "dataset_removed": "Dataset removed",
    "dataset_changed": "Dataset changed", "dataset_missing": "Dataset missing",
    "computation_failed": "Computation failed", "worker_died": "Worker died", "timeout": "Job ran too long",
    "database_unavailable": "Database unavailable", "database_unwritable": "Database not writable",
    "internal_error": "Internal error",
}

#: The error page's message of a code whose API description speaks of the API (its schema, JSON,
#: headers, endpoints) or only repeats the title, where the refusal has no message of its own.
PAGE_MESSAGES: dict[str, str] = {
    "invalid_json": "the form was not sent as the page sends it",
    "json_too_deep": "the form was not sent as the page sends it",
    "unsupported_media_type": "the form was not sent as the page sends it",
    "invalid_request": "the request is not one these pages send; go back and use the page's form or link",
    "missing_token": "this page needs a signed-in session",
    "not_found": "there is no page at this address",
    "method_not_allowed": "this address does not take this method",
    "unknown_job": "no such job among your jobs",
}


def page_error(code: str, message: str | None = None) -> tuple[str, str]:
    """The error page's title and one-line message of the API's error ``code`` (and its message, if any).

    Examples
    --------
    >>> page_error("unknown_job")
    ('Job not found', 'no such job among your jobs')
    >>> page_error("invalid_request", "partial: Input should be a valid integer")
    ('Request not accepted', 'partial: Input should be a valid integer')
    """
    description = ERRORS[code][1]
    title = PAGE_TITLES.get(code) or description[:1].upper() + description[1:]
    if not message or message == description:
        message = PAGE_MESSAGES.get(code, description)
    return title, message


def page_switch(text: str, name: str) -> bool:
    """A page's on/off query parameter (``?partial=1``, ``?again=1``): ``1`` on; ``0`` or empty off.

    Anything else is the API's ``422 invalid_request`` in the pages' words, naming the
    parameter and quoting the value: before, FastAPI read such a parameter as an integer
    and its refusal was pydantic's wording (``query.partial: Input should be a valid
    integer, unable to parse string as an integer``).

    Examples
    --------
    >>> page_switch("1", "partial"), page_switch("0", "partial"), page_switch("", "again")
    (True, False, False)
    >>> page_switch("zz", "partial")
    Traceback (most recent call last):
    ...
    dprm.server.errors.ApiError: invalid_request: partial must be 0 or 1, not 'zz'
    """
    from dprm.errors import short_repr

    value = text.strip()
    if value in ("", "0", "1"):
        return value == "1"
    raise ApiError("invalid_request", f"{name} must be 0 or 1, not {short_repr(text)}")


def _when(seconds: float | None) -> str:
    """A time of the database as UTC text; one no calendar holds (stored by an older dprm) as its number."""
    if seconds is None:
        return "-"
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))
    except (OverflowError, OSError, ValueError):
        return f"{seconds:g}"


@lru_cache(maxsize=1)
def _shared_environment() -> Any:
    return _environment()


def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["when"] = _when
    env.globals["submission_key"] = lambda: secrets.token_hex(12)  # a one-time key (the job and statistics forms)
    env.filters["num"] = _number_text
    env.filters["query_name"] = _query_name  # how the statistics form names an attribute (the schema says it)
    env.filters["query_category"] = _query_category  # and a category
    env.filters["pct"] = lambda x: f"{100 * max(0.0, min(1.0, float(x or 0))):.1f}"
    return env


def _query_name(name: str, index: int) -> str:
    """How a query of the statistics form names the attribute ``name``, the ``index``-th of its view
    (:func:`dprm.queries.clired_parser.query_name`: the name, or ``v<index>`` where it cannot be typed)."""
    from dprm.queries.clired_parser import query_name

    return query_name(name, index)


def _query_category(category: Any, index: int) -> str:
    """How a query of the statistics form writes ``category``, the ``index``-th declared category of
    its attribute (:func:`dprm.queries.clired_parser.query_category`: the category, or ``#<index>``
    where it cannot be typed)."""
    from dprm.queries.clired_parser import query_category

    return query_category(str(category), index)


def _number_text(value: Any, digits: int = 3) -> str:
    """A figure for a table: whole numbers without decimals, others with ``digits`` significant digits.

    Examples
    --------
    >>> [_number_text(v) for v in (717.0, 1505.0, 0.934, 12.25, 3e-05, None)]
    ['717', '1,505', '0.934', '12.2', '3.00e-05', '-']
    """
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if number != 0 and (abs(number) < 1e-3 or abs(number) >= 1e6):
        return f"{number:.{digits - 1}e}"
    if abs(number) >= 1 and number.is_integer():  # a released count: 717, not 717.0 (as in the support bars)
        return f"{int(number):,}"
    return f"{number:.{digits}g}" if abs(number) < 1 else f"{number:,.1f}"



def error_page(request: Request, code: str, message: str | None = None,
               headers: dict[str, str] | None = None) -> HTMLResponse:
    """The pages' error page of the API's error ``code``, for an answer the application gives
    before any page handler (a malformed query string, a wrong method, the rate limit) to an
    address under ``/ui``: its status, title and message (:func:`page_error`) and the code."""
    title, text = page_error(code, message)
    return _refusal(request, ERRORS[code][0], None, title, text, headers, code)


def _refusal(request: Request, status: int, session: Session | None, title: str, message: str,
             headers: dict[str, str] | None = None, code: str | None = None) -> HTMLResponse:
    """The error page of a refusal: its title, its one-line message, its status and stable code
    (the API's, or the audit's outcome of a page's own refusal such as ``csrf_refused``); to HTMX
    (:func:`is_htmx`), only its message, put inside the part of the page that asked (:data:`HTMX_REFUSAL`)."""
    htmx = is_htmx(request)
    trigger = request.headers.get("hx-trigger")
    polls = htmx and request.method == "GET" and trigger is not None and trigger == request.headers.get("hx-target")
    page = _shared_environment().get_template("_refusal.html" if htmx else "error.html").render(
        session=session, request_path=request.url.path, csrf_field=csrf.FIELD, title=title, message=message,
        status=status, code=code, polls=polls)  # polls: a part that refreshes itself (its own trigger and target)
    return HTMLResponse(page, status_code=status,
                        headers={**SECURITY_HEADERS, **(HTMX_REFUSAL if htmx else {}), **(headers or {})})


# -- rendering and answers -------------------------------------------------------------------


def render(request: Request, template: str, status: int = 200, session: Session | None = None,
           **context: Any) -> HTMLResponse:
    """A page of the templates with the session, the form token's field name and ``context``."""
    page = _shared_environment().get_template(template).render(session=session, request_path=request.url.path,
                                                            csrf_field=csrf.FIELD, **context)
    return HTMLResponse(page, status_code=status, headers=SECURITY_HEADERS)


def problem(request: Request, status: int, title: str, message: str, session: Session | None = None,
            outcome: str | None = None) -> HTMLResponse:
    """The error page of a refusal (``outcome`` is what the audit record says)."""
    request.state.outcome = outcome or f"http_{status}"
    return _refusal(request, status, session, title, message, code=outcome)


def api_problem(request: Request, error: ApiError, session: Session | None) -> HTMLResponse:
    """The error page of an API error code (:func:`page_error`)."""
    request.state.outcome = error.code
    title, message = page_error(error.code, error.message)
    return _refusal(request, error.status, session, title, message, code=error.code)


def redirect(url: str) -> RedirectResponse:
    """``303 See Other`` to ``url``, with the pages' headers."""
    return RedirectResponse(url, status_code=303, headers=SECURITY_HEADERS)


def is_htmx(request: Request) -> bool:
    """Whether HTMX asks for part of a page.

    Not when it restores a page of the browser's history (``HX-History-Restore-Request``:
    the back or forward button to an address HTMX pushed, e.g. the job form of another
    algorithm): it puts the answer's body in place of the page's, so it needs the whole
    page, and a sign-in redirect, never the ``204`` with ``HX-Redirect`` of a part (which
    it ignores there: the page was left empty). The pages' ``htmx-config`` makes HTMX
    reload such a page instead (``refreshOnHistoryMiss``); this is for an older page.
    """
    return request.headers.get("hx-request") == "true" and request.headers.get("hx-history-restore-request") != "true"
