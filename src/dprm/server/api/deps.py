"""The dependencies of the API's endpoints: who is asking, on which database, for which dataset.

Every endpoint but ``/health`` takes :data:`Analyst` (a valid Bearer token within
its rate limit) and most take :data:`Db` (the server's
:class:`~dprm.server.database.Database`). :func:`granted` is the one dataset
grant: a dataset without a budget for the analyst, or with a budget of 0 (withdrawn),
is ``404 unknown_dataset``.
:func:`note` leaves what the audit record says in ``request.state``.
"""

from __future__ import annotations

from typing import Annotated, Any, Optional

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import and_, or_, select

from dprm.errors import ParameterError, short_repr
from dprm.server import accounts
from dprm.server.api_models import ErrorBody
from dprm.server.database import Database
from dprm.server.datasets import DatasetRecord
from dprm.server.errors import ApiError, rate_limited
from dprm.server.owners import analyst_of_token
from dprm.server.ratelimit import client_address
from dprm.server.tables import budgets, datasets
from dprm.server.units import epsilon_units, units_float, units_text

__all__ = ["Analyst", "Db", "ERROR_RESPONSES", "OVER_BUDGET", "budget_view", "current_analyst", "database",
           "granted", "note", "plain_query", "query_names", "units_of"]

_bearer = HTTPBearer(auto_error=False, description="The analyst's API token (dprm admin analyst add).")

#: The error answers every authenticated endpoint may give (for the OpenAPI schema).
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in ((400, "Malformed request"), (401, "Missing, wrong, expired or disabled token"),
                                (404, "Unknown dataset or job"), (413, "Request too large"),
                                (422, "Invalid parameters, query or tree"), (429, "Rate limited"),
                                (503, "Database or dataset files unavailable"))
}

#: The answer of an endpoint that charges the budget when it is too small.
OVER_BUDGET: dict[int | str, dict[str, Any]] = {403: {"model": ErrorBody, "description": "Over budget"}}


def query_names(dependant: Any) -> set[str]:
    """The names of the query parameters an endpoint reads: its own and its dependencies'."""
    names: set[str] = set()
    pending = [dependant]
    while pending:
        current = pending.pop()
        names.update(getattr(field, "alias", None) or field.name for field in current.query_params)
        pending.extend(current.dependencies)
    return names


async def plain_query(request: Request) -> None:
    """Refuse a NUL character in the path (``404 not_found``), a NUL in the query, a
    query parameter given twice or, on the API's routes (``/v1/...``), one the endpoint
    does not read (``422 invalid_request``).

    A dependency of every route (:func:`dprm.server.app.create_app`), run before the
    route's own: no name of a dataset, job, analyst or page holds a NUL, and
    PostgreSQL refuses one in a text parameter (a query with it would fail with an
    error, not find nothing), so the answer is given here, the same on both
    databases and before any read. A repeated parameter (``?limit=5&limit=500``) is
    refused as a repeated key of a JSON body is (:mod:`dprm.server.guard`): the
    endpoint would read the last value where a proxy or a log reader may read the first.
    An unknown parameter (``/v1/jobs?status=running``, a misspelt ``?datset=``) would be
    ignored: the answer would look like one to the question asked and is not.
    """
    if "\x00" in request.url.path or "\x00" in request.scope.get("path", ""):
        raise ApiError("not_found", "no such address (it holds a NUL character)")
    seen: set[str] = set()
    for key, value in request.query_params.multi_items():
        if "\x00" in key or "\x00" in value:
            raise ApiError("invalid_request", "a query parameter holds a NUL character")
        if key in seen:
            raise ApiError("invalid_request", f"the query parameter {short_repr(key)} is given more than once")
        seen.add(key)
    route = request.scope.get("route")
    if seen and route is not None and getattr(route, "path", "").startswith("/v1/") and hasattr(route, "dependant"):
        known = query_names(route.dependant)
        unknown = sorted(seen - known)
        if unknown:
            takes = f"it takes {', '.join(sorted(known))}" if known else "it takes no query parameter"
            raise ApiError("invalid_request", f"unknown query parameter {short_repr(unknown[0])} ({takes})")


async def database(request: Request) -> Database:
    """The server's database (``app.state.db``, made by :func:`dprm.server.app.create_app`)."""
    return request.app.state.db


Db = Annotated[Database, Depends(database)]


async def current_analyst(request: Request,
                          credentials: Annotated[Optional[HTTPAuthorizationCredentials], Depends(_bearer)]
                          ) -> accounts.Analyst:
    """The analyst of a valid token (a dependency of every endpoint but /health).

    One indexed read (:meth:`~dprm.server.database.Database.aread`), made by the
    :class:`~dprm.server.guard.Guard` for a ``POST`` (before its body is read). A
    token that matches no analyst counts as a guess of its address, and an address
    out of guesses is answered 429 before its token is read (:mod:`dprm.server.ratelimit`).
    """
    found = getattr(request.state, "authenticated", None)  # a POST's token, checked before its body
    problem = None
    if found is None:
        token = credentials.credentials if credentials is not None else None
        if token is None and request.headers.get("authorization"):
            raise ApiError("invalid_token", "the Authorization header must be 'Bearer TOKEN'")
        guesses, address = request.app.state.guesses, client_address(request.scope)
        if token is not None and (wait := guesses.wait(address)) > 0:  # too many invalid tokens from here
            raise rate_limited(wait)
        found, problem, guessed = await request.app.state.db.aread(lambda c: analyst_of_token(c, token))
        if guessed:
            guesses.allow(address)
    if found is None:
        raise ApiError(problem or "invalid_token")
    request.state.analyst_id = found.id
    wait = request.app.state.limiter.allow(found.token_id)
    if wait > 0:
        raise rate_limited(wait)
    return found


Analyst = Annotated[accounts.Analyst, Depends(current_analyst)]


def budget_view(dataset_name: str, total: int, spent: int) -> dict[str, Any]:
    """A budget as the API shows it: total, spent and remaining, as numbers and exact text."""
    left = max(total - spent, 0)
    return {"dataset": dataset_name, "total": units_float(total), "spent": units_float(spent),
            "remaining": units_float(left),
            "exact": {"total": units_text(total), "spent": units_text(spent), "remaining": units_text(left)}}


def units_of(value: Any) -> int:
    """An epsilon of a request in units, or ``422 invalid_epsilon``."""
    try:
        return epsilon_units(value)
    except ParameterError as error:
        raise ApiError("invalid_epsilon", str(error)[:300]) from None


def granted(connection: Any, who: accounts.Analyst, name: str, *, history: bool = False
            ) -> tuple[DatasetRecord, int, int]:
    """The dataset if the analyst has a budget on it: ``(record, total, spent)``.

    A budget whose total is 0 (``dprm admin budget set ANALYST DATASET 0``: withdrawn)
    is no grant: ``404 unknown_dataset``, as a dataset never granted. With ``history``
    (the ledger's filter) a withdrawn budget that was spent on is still the analyst's
    own history: its rows stay readable.
    """
    kept = budgets.c.total_units > 0
    if history:
        kept = or_(kept, budgets.c.spent_units > 0)
    row = connection.execute(
        select(datasets, budgets.c.total_units, budgets.c.spent_units)
        .join(budgets, and_(budgets.c.dataset_id == datasets.c.id, budgets.c.analyst_id == who.id))
        .where(and_(datasets.c.active_name == name, kept))
    ).first()
    if row is None:
        raise ApiError("unknown_dataset")
    return DatasetRecord.from_row(row), int(row.total_units), int(row.spent_units)


def note(request: Request, action: str, dataset: str | None = None, units: int | None = None) -> None:
    """What the audit record of this request says: its action, dataset and epsilon."""
    request.state.action = action
    if dataset is not None:
        request.state.dataset = dataset
    if units is not None:
        request.state.epsilon_units = units
