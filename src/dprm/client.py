"""The analyst's Python client of a dprm server (``dprm serve``).

:class:`Client` wraps the HTTP API (docs/server.md) one method per endpoint. Queries
may be given as dprm :class:`~dprm.queries.Query` objects or in their JSON form;
epsilons as numbers, decimal strings, :class:`~fractions.Fraction` or
:class:`~decimal.Decimal` (both sent as their exact text). Every refusal raises
:class:`RemoteError`, a :class:`~dprm.errors.DprmError` with the server's stable
``code`` and HTTP ``status``, so the command line turns it into one line
``error: ...``. A URL that names no server or holds a user name or password (shown
masked, :func:`shown_url`), and a request that JSON cannot carry (a NaN or an infinite
number in it, a value of another type), raise :class:`~dprm.errors.ParameterError`
before anything is sent. Job ids and dataset names are sent as one escaped path
segment each; one that no server id can be (empty, ``.``, ``..``, or holding a
``/``) is refused without a request, with the code the server gives an unknown one
(``unknown_job``, ``unknown_dataset``).

Examples
--------
A session (against a running server; not run here)::

    from dprm.client import Client
    from dprm.queries import BooleanLiteral, NumericLiteral

    with Client("http://127.0.0.1:8000", token) as server:
        print(server.datasets()[0]["views"]["left"][:3])
        print(server.redescription_statistics("mammals", BooleanLiteral("Moose"),
                                              NumericLiteral("tmin_01", le=-5), 0.1, dry_run=True))
        job = server.submit("mammals", "mcmc-tree-pair", 0.5, {"depth": 3})
        document = server.wait(job["id"])

>>> RemoteError("budget_exceeded", "epsilon 5 exceeds the remaining budget 1", 403).code
'budget_exceeded'
"""

from __future__ import annotations

import json as _json
import numbers
import time
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable
from urllib.parse import quote

from dprm.errors import DprmError, ParameterError

__all__ = ["Client", "RemoteError", "check_token", "shown_url"]


class RemoteError(DprmError):
    """A request the server refused (or could not answer).

    Attributes
    ----------
    code : str
        The server's stable error code (``budget_exceeded``, ``unknown_job``, ...), or
        ``unreachable`` / ``bad_response`` for transport problems.
    status : int
        The HTTP status (0 when no answer came).
    """

    def __init__(self, code: str, message: str, status: int = 0) -> None:
        super().__init__(f"{message} ({code})", code=code, data_dependent=False)
        self.status = status


#: The server's messages for an id it does not know (dprm.server.errors), by code.
_UNKNOWN = {"unknown_job": "no such job", "unknown_dataset": "no such dataset for this analyst"}


def _segment(value: Any, code: str) -> str:
    """``value`` as one percent-escaped URL path segment.

    A value that would not stay one segment (empty, ``.``, ``..``: an HTTP client
    removes those; a ``/``: the server decodes ``%2F`` before routing) names nothing
    on a server; it is refused as the server refuses an unknown one, with ``code``.

    Examples
    --------
    >>> _segment("job_0a1b", "unknown_job"), _segment("x?y=1#z", "unknown_job")
    ('job_0a1b', 'x%3Fy%3D1%23z')
    >>> _segment("../budget", "unknown_job")
    Traceback (most recent call last):
    ...
    dprm.client.RemoteError: no such job (unknown_job)
    """
    text = str(value)
    if text in ("", ".", "..") or "/" in text:
        raise RemoteError(code, _UNKNOWN[code], 404)
    return quote(text, safe="")


def shown_url(url: Any) -> str:
    """``url`` as messages show it: a password in it masked (``http://user:***@host``), a user name alone
    too (``http://***@host``: a token is often written there); the text is not otherwise judged.

    Examples
    --------
    >>> shown_url("http://user:s3cret@127.0.0.1:9/x"), shown_url("https://tok3n@host"), shown_url("a:b@c d")
    ('http://user:***@127.0.0.1:9/x', 'https://***@host', 'a:***@c d')
    >>> shown_url("http://127.0.0.1:8000/v1?next=a@b")
    'http://127.0.0.1:8000/v1?next=a@b'
    """
    text = str(url)
    scheme, separator, rest = text.partition("://")
    if not separator:
        scheme, rest = "", text
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority = rest[:end]
    if "@" not in authority:
        return text
    userinfo, host = authority.rsplit("@", 1)
    shown = f"{userinfo.split(':', 1)[0]}:***" if ":" in userinfo else "***"
    return f"{scheme}{separator}{shown}@{host}{rest[end:]}"


def _check_json(body: Any) -> None:
    """Refuse a request body JSON cannot carry (NaN, infinity, a value of another type) before it is sent."""
    try:
        _json.dumps(body, allow_nan=False)
    except ValueError as error:
        reason = "a number in it is not finite (NaN or infinity)" if "Out of range" in str(error) else str(error)
        raise ParameterError(f"the request cannot be sent as JSON: {reason}") from None
    except TypeError as error:  # "Object of type Decimal is not JSON serializable"
        raise ParameterError(f"the request cannot be sent as JSON: {error}") from None


def _epsilon(value: Any) -> Any:
    """An epsilon as the request carries it: a Fraction or a Decimal as its exact text, another integer type
    (numpy's) as an int, anything else as given (a text, a float; the server judges the value).

    Examples
    --------
    >>> _epsilon(Fraction(1, 3)), _epsilon(Decimal("0.1")), _epsilon(Decimal("1E-3")), _epsilon(0.5)
    ('1/3', '0.1', '0.001', 0.5)
    >>> _epsilon(Decimal("NaN"))
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: epsilon must be a finite number, got Decimal('NaN')
    """
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ParameterError(f"epsilon must be a finite number, got {value!r}")
        return str(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, (int, bool)):
        return int(value)
    if isinstance(value, numbers.Rational) and not isinstance(value, (int, bool)):
        return str(Fraction(value.numerator, value.denominator))
    return value


def _query(query: Any) -> Any:
    from dprm.queries import Query, query_to_json

    return query_to_json(query) if isinstance(query, Query) else query


def check_token(token: str) -> str:
    """``token`` without surrounding white space, if it is one word of printable ASCII; else a ParameterError.

    Examples
    --------
    >>> check_token(" dprm_0a1b_secret\\n")
    'dprm_0a1b_secret'
    """
    token = token.strip()
    if not token or not token.isascii() or not token.isprintable() or " " in token:
        raise ParameterError("a token is one word of printable ASCII (letters, digits, '_' and '-')")
    return token


class Client:
    """A connection to a dprm server as one analyst.

    Parameters
    ----------
    url : str
        The server, e.g. ``http://127.0.0.1:8000``.
    token : str
        The analyst's API token (``dprm admin analyst add`` printed it).
    timeout : float
        Seconds to wait for one answer.
    retries : int
        How often a rate-limited request (429) is sent again after the server's
        ``Retry-After`` (at most 10 s each).
    """

    def __init__(self, url: str, token: str, *, timeout: float = 120.0, retries: int = 3,
                 transport: Any = None) -> None:
        import httpx

        self.url = str(url).strip().rstrip("/")
        try:
            parsed = httpx.URL(self.url)
        except (httpx.InvalidURL, TypeError, ValueError):
            parsed = None
        if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
            raise ParameterError(f"{shown_url(url)!r} is not a server URL (http://HOST:PORT or https://...)")
        if parsed.userinfo:  # httpx would send it as Basic authentication instead of the token
            raise ParameterError(f"{shown_url(url)!r}: a server URL holds no user name or password (the token "
                                 f"authenticates)")
        self.retries = retries
        token = check_token(token)
        self._http = httpx.Client(base_url=self.url, timeout=timeout, transport=transport,
                                  headers={"Authorization": f"Bearer {token}", "User-Agent": "dprm-client"})

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def __repr__(self) -> str:
        return f"Client({self.url!r})"

    # -- transport ---------------------------------------------------------------------------

    def _call(self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None,
              raw: bool = False) -> Any:
        import httpx

        if json is not None:
            _check_json(json)
        for attempt in range(self.retries + 1):
            try:
                response = self._http.request(method, path, json=json,
                                              params={k: v for k, v in (params or {}).items() if v is not None})
            except httpx.HTTPError as error:
                raise RemoteError("unreachable", f"cannot reach the server at {self.url}: "
                                                 f"{type(error).__name__}") from None
            if response.status_code == 429 and attempt < self.retries:
                time.sleep(min(float(response.headers.get("Retry-After", "1")), 10.0))
                continue
            break
        if response.status_code >= 400:
            try:
                error = response.json()["error"]
                code, message = str(error["code"]), str(error["message"])
            except (ValueError, KeyError, TypeError):
                code, message = "bad_response", f"the server answered HTTP {response.status_code}"
            raise RemoteError(code, message, response.status_code)
        if raw:
            return response.text
        try:
            return response.json()
        except ValueError:
            raise RemoteError("bad_response", "the server's answer is not JSON", response.status_code) from None

    # -- the API -------------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """The server's health check (no token needed)."""
        return self._call("GET", "/health")

    def datasets(self) -> list[dict[str, Any]]:
        """The datasets this analyst may use: public schema and budget."""
        return self._call("GET", "/v1/datasets")["datasets"]

    def dataset(self, name: str) -> dict[str, Any]:
        """One dataset's public schema and budget."""
        return self._call("GET", f"/v1/datasets/{_segment(name, 'unknown_dataset')}")

    def dummy_rows(self, dataset: str, rows: int = 100, seed: int | None = None) -> dict[str, Any]:
        """Rows synthesised from the dataset's public schema (no budget)."""
        return self._call("GET", f"/v1/datasets/{_segment(dataset, 'unknown_dataset')}/dummy",
                          params={"rows": rows, "seed": seed})

    def algorithms(self) -> dict[str, Any]:
        """The server's private algorithms, their parameters and limits."""
        return self._call("GET", "/v1/algorithms")["algorithms"]

    def submit(self, dataset: str, algorithm: str, epsilon: Any, parameters: dict[str, Any] | None = None, *,
               idempotency_key: str | None = None, dry_run: bool = False, dummy: bool = False,
               dummy_rows: int = 1000) -> dict[str, Any]:
        """Submit a job (its ε is charged at once); the job, or the dry run's cost."""
        body: dict[str, Any] = {"dataset": dataset, "algorithm": algorithm, "epsilon": _epsilon(epsilon),
                                "parameters": dict(parameters or {}), "dry_run": dry_run, "dummy": dummy,
                                "dummy_rows": dummy_rows}
        if idempotency_key is not None:
            body["idempotency_key"] = idempotency_key
        return self._call("POST", "/v1/jobs", json=body)

    def jobs(self, limit: int | None = 100, *, page_size: int = 500) -> list[dict[str, Any]]:
        """The analyst's newest ``limit`` jobs (None: all of them), newest first, read ``page_size`` at a time."""
        return self._pages("/v1/jobs", "jobs", {}, limit, page_size)

    def status(self, job_id: str) -> dict[str, Any]:
        """A job's status and progress."""
        return self._call("GET", f"/v1/jobs/{_segment(job_id, 'unknown_job')}")

    def result(self, job_id: str) -> dict[str, Any]:
        """A done job's result: the ``dprm.redescriptions/1`` document."""
        return self._call("GET", f"/v1/jobs/{_segment(job_id, 'unknown_job')}/result")

    def cancel(self, job_id: str) -> dict[str, Any]:
        """Cancel a job."""
        return self._call("POST", f"/v1/jobs/{_segment(job_id, 'unknown_job')}/cancel")

    def wait(self, job_id: str, *, timeout: float | None = None, poll: float = 0.5,
             progress: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Wait for a job to finish and return its result (RemoteError if it failed)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            state = self.status(job_id)
            if progress is not None:
                progress(state)
            if state["status"] not in ("queued", "running"):
                return self.result(job_id)
            if deadline is not None and time.monotonic() > deadline:
                raise RemoteError("wait_timeout", f"job {job_id} is still {state['status']} after {timeout:g} s")
            time.sleep(poll)

    def redescription_statistics(self, dataset: str, left: Any, right: Any, epsilon: Any, *,
                                 confidence: float = 0.95, dry_run: bool = False, dummy: bool = False,
                                 dummy_rows: int = 1000) -> dict[str, Any]:
        """Noisy statistics (with intervals) of the redescription ``(left, right)``."""
        return self._call("POST", "/v1/primitives/redescription-statistics", json={
            "dataset": dataset, "left": _query(left), "right": _query(right), "epsilon": _epsilon(epsilon),
            "confidence": float(confidence), "dry_run": dry_run, "dummy": dummy, "dummy_rows": dummy_rows})

    def leaf_pair_counts(self, dataset: str, left_tree: dict[str, Any], right_tree: dict[str, Any], epsilon: Any,
                         *, dry_run: bool = False, dummy: bool = False, dummy_rows: int = 1000) -> dict[str, Any]:
        """Noisy counts of the cells of two trees (JSON form: docs/server.md)."""
        return self._call("POST", "/v1/primitives/leaf-pair-counts", json={
            "dataset": dataset, "left_tree": left_tree, "right_tree": right_tree, "epsilon": _epsilon(epsilon),
            "dry_run": dry_run, "dummy": dummy, "dummy_rows": dummy_rows})

    def budget(self, dataset: str | None = None) -> list[dict[str, Any]]:
        """The analyst's budgets (``exact`` holds the decimal texts)."""
        return self._call("GET", "/v1/budget", params={"dataset": dataset})["budgets"]

    def ledger(self, dataset: str | None = None, limit: int | None = None, *, page_size: int = 10000
               ) -> list[dict[str, Any]]:
        """The analyst's ledger rows, newest first: all of them (or the newest ``limit``), read
        ``page_size`` at a time (the server's pages: ``?limit=&before=`` and the answer's ``next``)."""
        return self._pages("/v1/ledger", "ledger", {"dataset": dataset}, limit, page_size)

    def _pages(self, path: str, field: str, params: dict[str, Any], limit: int | None, page: int
               ) -> list[dict[str, Any]]:
        """Rows of a paged list (``?limit=&before=``, the answer's ``next``), up to ``limit`` (None: all)."""
        rows: list[dict[str, Any]] = []
        before = None
        while limit is None or len(rows) < limit:
            size = page if limit is None else min(page, limit - len(rows))
            answer = self._call("GET", path, params={**params, "limit": size, "before": before})
            rows.extend(answer[field])
            before = answer.get("next")
            if before is None:
                break
        return rows
