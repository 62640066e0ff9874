"""The analyst's Python client of a dprm server (``dprm serve``).

:class:`Client` wraps the HTTP API (docs/server.md) one method per endpoint. Queries
may be given as dprm :class:`~dprm.queries.Query` objects or in their JSON form;
epsilons as numbers, decimal strings, :class:`~fractions.Fraction` or
:class:`~decimal.Decimal` (both sent as their exact text). Every refusal raises
:class:`RemoteError`, a :class:`~dprm.errors.DprmError` with the server's stable
``code`` and HTTP ``status``, so the command line turns it into one line
``error: ...``. A URL that names no server (or a port out of range) or holds a user
name or password (shown masked, :func:`shown_url`), a timeout, retry count or poll
interval that is no positive finite number, a URL with a query (``?...``), a
``confidence`` that is no number, ``parameters`` that are no mapping, a ``limit`` of
a list below 0 (it read nothing), and a request that JSON cannot carry (a NaN or an
infinite number in it, a value of another type), raise
:class:`~dprm.errors.ParameterError` before anything is sent.

A request that fails in transport is told apart by whether it was sent:
``unreachable`` when it never left (no connection: nothing can have been charged; the
message says why, a TLS certificate not trusted here with ``SSL_CERT_FILE`` to trust it),
``no_answer`` when it was sent and its answer was lost (a read timeout, a dropped
connection): a charged request may then have been charged, and the message says to
look at the ledger; ``speaks_tls`` when an ``http://`` request's connection ended without
an answer (or a TLS proxy answered ``400`` itself) and the server completes a TLS
handshake: plain HTTP on a TLS port never reaches dprm, so nothing was charged, and the
message says to give ``https://``; Ctrl-C (or SIGTERM under the command line) while such a request
waits for its answer raises :class:`RequestInterrupted`, a :class:`KeyboardInterrupt`
saying the same. An answer of an unexpected form (not a JSON object, nested too
deeply to read, a missing ``id`` or ``status``, an error that is not the server's
``{"error": {"code": TEXT, "message": TEXT}}``) is ``bad_response``, and so is a
redirect (a dprm server's API never redirects: the message names the target, for a
URL that is not the server's own). A charged request answered with a 5xx (the
server's own failure, or a proxy's ``502``/``504`` after the server may have taken
it) says that it may have been charged. :meth:`Client.wait` polls through
temporary errors (the server restarting, ``503``, ``429``) until its timeout.

Job ids and dataset names are sent as one escaped path segment each; one that no
server id can be (empty, ``.``, ``..``, or holding a ``/``) is refused without a
request, with the code the server gives an unknown one (``unknown_job``,
``unknown_dataset``).

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
import math
import numbers
import re
import sys
import time
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable
from urllib.parse import quote

from dprm.errors import DprmError, ParameterError, short_repr

__all__ = ["Client", "RemoteError", "RequestInterrupted", "check_token", "shown_url", "retry_after",
           "SERVER_PRIMITIVE_LIMIT", "DEFAULT_TIMEOUT"]

#: The longest a server lets one primitive run, in seconds (``dprm.server.app.ServerSettings
#: .primitive_timeout``; the server takes seconds to import, so the value is repeated here and
#: tests/test_remote_transport.py pins the two together).
SERVER_PRIMITIVE_LIMIT = 300.0
#: Seconds a client waits for one answer by default: a primitive's longest run, and a margin.
DEFAULT_TIMEOUT = SERVER_PRIMITIVE_LIMIT + 30.0
#: The longest wait for a connection (a server that is down refuses at once; a host that drops
#: packets would hold a request the whole read timeout).
CONNECT_TIMEOUT = 30.0
#: Seconds to sleep after a 429 or 503 whose ``Retry-After`` is missing or invalid, and the most.
DEFAULT_RETRY_AFTER, MAX_RETRY_AFTER = 1.0, 10.0
#: Error codes (and HTTP statuses) that a later try may not meet: :meth:`Client.wait` polls on.
TEMPORARY_CODES = frozenset({"unreachable", "no_answer", "rate_limited", "database_unavailable"})
TEMPORARY_STATUSES = frozenset({429, 502, 503, 504})


class RemoteError(DprmError):
    """A request the server refused (or could not answer).

    Attributes
    ----------
    code : str
        The server's stable error code (``budget_exceeded``, ``unknown_job``, ...), or
        ``unreachable`` / ``bad_response`` for transport problems.
    status : int
        The HTTP status (0 when no answer came).
    retry_after : float or None
        Seconds the server asked to wait before trying again (its ``Retry-After``), if any.
    """

    def __init__(self, code: str, message: str, status: int = 0, *, retry_after: float | None = None) -> None:
        super().__init__(f"{message} ({code})", code=code, data_dependent=False)
        self.status = status
        self.retry_after = retry_after

    @property
    def temporary(self) -> bool:
        """Whether the same request may succeed later (the server restarting, overloaded, its database away)."""
        return self.code in TEMPORARY_CODES or self.status in TEMPORARY_STATUSES


class RequestInterrupted(KeyboardInterrupt):
    """Ctrl-C while a request that may be charged waits for its answer: it was sent, so it may have been
    charged; the message says where to look. A :class:`KeyboardInterrupt`, so the program stops as usual."""


def _bad_response(what: str, status: int = 200, charged: str | None = None) -> RemoteError:
    return RemoteError("bad_response", f"the server's answer is not of the expected form: {what}"
                                       f"{_charge_hint(charged)}", status)


def _field(answer: Any, key: str, kind: type | tuple[type, ...], what: str = "an answer",
           charged: str | None = None) -> Any:
    """``answer[key]`` if ``answer`` is an object holding a ``kind`` there; else ``bad_response``.

    Examples
    --------
    >>> _field({"id": "job_1"}, "id", str)
    'job_1'
    >>> _field([1, 2], "id", str)
    Traceback (most recent call last):
    ...
    dprm.client.RemoteError: the server's answer is not of the expected form: an answer without 'id' (bad_response)
    """
    value = answer.get(key) if isinstance(answer, dict) else None
    if not isinstance(value, kind):
        raise _bad_response(f"{what} without {key!r}", charged=charged)
    return value


def _error_of(response: Any) -> tuple[str, str]:
    """The code and message of an error answer: the server's own (``{"error": {"code": ..., "message":
    ...}}``, both texts), else ``bad_response`` naming the HTTP status (a proxy's page, a foreign body).

    Examples
    --------
    >>> import httpx
    >>> _error_of(httpx.Response(403, json={"error": {"code": "budget_exceeded", "message": "m"}}))
    ('budget_exceeded', 'm')
    >>> _error_of(httpx.Response(502, text="<html>Bad Gateway</html>"))
    ('bad_response', 'the server answered HTTP 502')
    >>> _error_of(httpx.Response(403, json={"error": {"code": ["x"], "message": {"a": 1}}}))
    ('bad_response', 'the server answered HTTP 403')
    """
    try:
        error = response.json()["error"]
        code, message = error["code"], error["message"]
    except (ValueError, KeyError, TypeError, RecursionError):
        code = message = None
    if isinstance(code, str) and isinstance(message, str) and code:
        return code, message
    return "bad_response", f"the server answered HTTP {response.status_code}"


def _redirected(status: int, location: str | None, charged: str | None) -> RemoteError:
    """The error of a redirect: a dprm server's API never redirects, so the URL is not the server's own
    (a proxy sending ``http://`` to ``https://``, a login page); the target is named, a password in it masked.

    Examples
    --------
    >>> print(_redirected(301, "https://example.org/v1/budget", None))
    the server answered HTTP 301, a redirect to 'https://example.org/v1/budget', which a dprm server's API \
never does: give the server's own address as the URL (bad_response)
    """
    target = f", a redirect to {short_repr(shown_url(location), 80)}" if location else ", a redirect"
    return RemoteError("bad_response", f"the server answered HTTP {status}{target}, which a dprm server's API "
                                       f"never does: give the server's own address as the URL"
                                       f"{_charge_hint(charged)}", status)


def _why_unreachable(error: BaseException) -> str:
    """Why a connection failed, for the message: a TLS certificate not trusted here (and how to trust it),
    another TLS failure (``https://`` to a server that speaks HTTP), or the system's reason
    (``Connection refused``); empty when the error says nothing more.

    Examples
    --------
    >>> _why_unreachable(ConnectionRefusedError(111, "Connection refused"))
    ' (Connection refused)'
    """
    import ssl

    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            why = cause.verify_message or cause.reason or "not verified"
            return (f" (its TLS certificate is not trusted here: {why}; give the certificate of the authority "
                    f"that signed it in SSL_CERT_FILE=FILE.pem)")
        if isinstance(cause, ssl.SSLError):
            hint = "; the server may speak plain HTTP: http://..." if cause.reason == "WRONG_VERSION_NUMBER" else ""
            return f" (TLS failed: {cause.reason or cause}{hint})"
        if isinstance(cause, OSError) and cause.strerror:
            return f" ({cause.strerror})"
        cause = cause.__cause__ or cause.__context__
    return ""


#: Seconds to wait for a TLS handshake that tells whether a server speaks TLS (:func:`_speaks_tls`).
TLS_PROBE_TIMEOUT = 5.0


def _speaks_tls(host: str, port: int, timeout: float) -> bool:
    """Whether the server at ``host:port`` completes a TLS handshake (any certificate: it is not trusted, only
    asked whether it speaks TLS); False when it does not, or cannot be reached.

    A plain ``http://`` request to a server that speaks TLS (``https://``) is no TLS
    handshake: the server's TLS layer drops it before any HTTP is read, and the client
    sees the connection end without an answer (``no_answer``), as if a sent request's
    answer was lost. A handshake on a new connection tells the two apart.

    Examples
    --------
    >>> import socket
    >>> with socket.socket() as listener:
    ...     listener.bind(("127.0.0.1", 0))
    ...     _speaks_tls("127.0.0.1", listener.getsockname()[1], 1.0)   # listening, never accepting: no
    False
    """
    import socket
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=timeout) as connection, \
                context.wrap_socket(connection, server_hostname=host):
            return True
    except (OSError, ValueError):  # ssl.SSLError is an OSError; ValueError: a host name TLS refuses
        return False


def _charge_hint(charged: str | None) -> str:
    """What a message about a request that may have been charged (``charged``: ``"job"``, ``"primitive"``)
    adds: where to look; nothing for a free request.

    >>> _charge_hint("primitive"), _charge_hint(None)
    ('; it may have been charged: see your ledger (dprm remote ledger)', '')
    """
    if not charged:
        return ""
    where = "jobs and ledger (dprm remote jobs, dprm remote ledger)" if charged == "job" else \
        "ledger (dprm remote ledger)"
    return f"; it may have been charged: see your {where}"


def retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header, at most :data:`MAX_RETRY_AFTER`; None if absent or invalid.

    Both forms of RFC 9110 (10.2.3) are read: delay-seconds (a decimal fraction is taken too) and an
    HTTP-date (a date past is no wait). Anything else (``abc``, ``-5``, ``nan``) is ignored.

    Examples
    --------
    >>> [retry_after(text) for text in ("3", " 2.5 ", "60", "abc", "-5", "nan")]
    [3.0, 2.5, 10.0, None, None, None]
    >>> retry_after("Sun, 06 Nov 1994 08:49:42 GMT", now=784111780.0), retry_after("Sun, 06 Nov 1994 08:49:42 GMT")
    (2.0, 0.0)
    """
    if value is None:
        return None
    text = value.strip()
    if re.fullmatch(r"[0-9]{1,9}(\.[0-9]{1,9})?", text, flags=re.ASCII):
        seconds = float(text)
    else:
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:  # "-0000": taken as UTC, as RFC 5322 says it means
            from datetime import timezone

            when = when.replace(tzinfo=timezone.utc)
        seconds = when.timestamp() - (time.time() if now is None else now)
    return min(max(seconds, 0.0), MAX_RETRY_AFTER) if math.isfinite(seconds) else None


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


def _plain_numbers(body: Any) -> Any:
    """``body`` with numpy's numbers and arrays (``np.int64(3)``, ``np.float32(0.5)``) as JSON's own.

    Only where numpy is loaded (a caller with numpy values has loaded it): the client itself
    never imports it. A :class:`~fractions.Fraction` becomes a float, as in every dprm writer
    of JSON (:func:`dprm.json_values.plain_json`); an epsilon is sent exactly
    (:func:`_epsilon`) before this.

    Examples
    --------
    >>> import numpy as np
    >>> _plain_numbers({"epsilon": np.float32(0.5), "parameters": {"depth": np.int64(3)}})
    {'epsilon': 0.5, 'parameters': {'depth': 3}}
    """
    if "numpy" not in sys.modules:
        return body
    from dprm.json_values import plain_json

    return plain_json(body)


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


def _confidence(value: Any) -> float:
    """The level of a request's intervals as a float (the server judges its range); a value that is no
    number (nor a number's text) is refused before anything is sent.

    Examples
    --------
    >>> _confidence(0.9), _confidence(Decimal("0.99")), _confidence(Fraction(19, 20)), _confidence("0.8")
    (0.9, 0.99, 0.95, 0.8)
    >>> _confidence("high")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: confidence must be a number in (0, 1), not 'high'
    """
    if not isinstance(value, bool):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    raise ParameterError(f"confidence must be a number in (0, 1), not {short_repr(value)}")


def _query(query: Any) -> Any:
    from dprm.queries import Query, query_to_json

    return query_to_json(query) if isinstance(query, Query) else query


def _positive(value: Any) -> bool:
    """Whether ``value`` is a positive finite real number (not a bool).

    >>> _positive(0.5), _positive(0), _positive(float("nan")), _positive(True), _positive("1")
    (True, False, False, False, False)
    """
    return (isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
            and value > 0)


def check_token(token: str) -> str:
    """``token`` without surrounding white space (nor a byte-order mark before it, as an editor on Windows
    saves a file), if it is one word of printable ASCII; else a ParameterError.

    Examples
    --------
    >>> check_token(" dprm_0a1b_secret\\n"), check_token("\\ufeffdprm_0a1b_secret\\r\\n")
    ('dprm_0a1b_secret', 'dprm_0a1b_secret')
    >>> check_token(None)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: a token is a text (the one dprm admin analyst add printed), not None
    """
    if not isinstance(token, str):
        raise ParameterError(f"a token is a text (the one dprm admin analyst add printed), not {short_repr(token)}")
    token = token.strip().removeprefix("\ufeff").strip()
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
        Seconds to wait for one answer (a connection: at most :data:`CONNECT_TIMEOUT`); by default
        :data:`DEFAULT_TIMEOUT`, longer than a server lets a primitive run.
    retries : int
        How often a rate-limited request (429) is sent again after the server's
        ``Retry-After`` (at most 10 s each; 1 s when it is missing or invalid).

    Notes
    -----
    Values may be numpy's (``np.int64(3)`` in ``parameters``, an ``np.float32``
    epsilon): they are sent as JSON's numbers. A closed client (``close()``, or the end
    of its ``with`` block) refuses every call with a :class:`~dprm.errors.ParameterError`.
    """

    def __init__(self, url: str, token: str, *, timeout: float = DEFAULT_TIMEOUT, retries: int = 3,
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
        if b"?" in parsed.raw_path:  # httpx would append every request's path to the query
            raise ParameterError(f"{shown_url(url)!r}: a server URL holds no query ('?...'); give "
                                 f"http://HOST:PORT")
        if parsed.port is not None and not 1 <= parsed.port <= 65535:
            raise ParameterError(f"{shown_url(url)!r} is not a server URL: its port {parsed.port} is not "
                                 f"between 1 and 65535")
        #: Whether a plain-HTTP request whose connection ends without an answer asks the server whether it
        #: speaks TLS (``http://`` for ``https://``): not through a given transport (a test's mock).
        self._probe_tls = parsed.scheme == "http" and transport is None
        self._host, self._port = parsed.host, parsed.port or 80
        #: A path after the host (``http://h:8000/v1``): requests go below it; a 404 then says so.
        self._path = parsed.path if parsed.path not in ("", "/") else None
        if not _positive(timeout):
            raise ParameterError(f"timeout must be a positive number of seconds, not {timeout!r}")
        if not isinstance(retries, numbers.Integral) or isinstance(retries, bool) or retries < 0:
            raise ParameterError(f"retries must be a whole number, 0 or more, not {retries!r}")
        self.timeout = float(timeout)
        self.retries = int(retries)
        token = check_token(token)
        # idle connections are dropped after 2 s, well before the server closes them (5 s): a request sent on
        # one the server is closing gets no answer (docs/server.md, "Soak")
        self._http = httpx.Client(base_url=self.url, transport=transport,
                                  timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, CONNECT_TIMEOUT)),
                                  limits=httpx.Limits(keepalive_expiry=2.0),
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
              raw: bool = False, charged: str | None = None, timeout: float | None = None) -> Any:
        """The answer to one request: a JSON object (``raw``: the text); a refusal raises :class:`RemoteError`.

        ``charged`` names what a request that may be charged buys (``"job"``, ``"primitive"``): if its
        answer is lost after it was sent, the error (or the :class:`RequestInterrupted` of a Ctrl-C) says
        that it may have been charged. ``timeout``: this request's own bound on its answer, if shorter than
        the client's (what is left of a wait).
        """
        if self._http.is_closed:  # httpx's own RuntimeError named no dprm call
            raise ParameterError("this Client was closed (close() or the end of its with block): make a new one")
        if json is not None:
            json = _plain_numbers(json)
            _check_json(json)
        for attempt in range(self.retries + 1):
            response = self._send(method, path, json, params, charged, timeout)
            if response.status_code == 429 and attempt < self.retries:
                wait = retry_after(response.headers.get("Retry-After"))
                time.sleep(DEFAULT_RETRY_AFTER if wait is None else wait)
                continue
            break
        status = response.status_code
        if 300 <= status < 400:
            raise _redirected(status, response.headers.get("Location"), charged)
        if status >= 400:
            code, message = _error_of(response)
            if status == 400 and code == "bad_response" and self._probe_tls and self._speaks_tls():
                # a TLS proxy's own answer to plain HTTP on its port (nginx's "The plain HTTP request was sent
                # to HTTPS port", Caddy's "Client sent an HTTP request to an HTTPS server"): it went no further
                raise self._tls_error()
            if status == 404 and code in ("not_found", "bad_response") and self._path:
                message += (f"; the URL must be the server's root (http://HOST:PORT), without the path "
                            f"{short_repr(self._path)}")
            if status >= 500:  # it failed on the server or behind a proxy (502, 504): perhaps after the charge
                message += _charge_hint(charged)
            raise RemoteError(code, message, status, retry_after=retry_after(response.headers.get("Retry-After")))
        if raw:
            return response.text
        try:
            answer = response.json()
        except (ValueError, RecursionError):  # RecursionError: nested too deeply for Python's JSON reader
            raise RemoteError("bad_response", f"the server's answer is not JSON{_charge_hint(charged)}",
                              status) from None
        if not isinstance(answer, dict):
            kind = {list: "an array", str: "a string", bool: "true or false", type(None): "null"}.get(type(answer),
                                                                                                "a number")
            raise _bad_response(f"{kind} where an object was expected", response.status_code, charged)
        return answer

    def _send(self, method: str, path: str, json: Any, params: dict[str, Any] | None, charged: str | None,
              timeout: float | None = None) -> Any:
        """One request and its response; a transport failure as ``unreachable`` (never sent) or ``no_answer``."""
        import httpx

        progress = {"traced": False, "sent": False}

        def trace(event: str, info: dict[str, Any]) -> None:  # httpcore's events of this request
            progress["traced"] = True
            if event.endswith("send_request_body.started"):  # the headers went out and the body goes now
                progress["sent"] = True

        def sent(error: BaseException | None) -> bool:
            if progress["traced"]:
                return progress["sent"]
            # (a transport without events: a mock) all but a failed connection may have reached the server
            return not isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout,
                                          httpx.UnsupportedProtocol))

        look = _charge_hint(charged)
        bound = self.timeout if timeout is None else min(timeout, self.timeout)
        try:
            return self._http.request(method, path, json=json, extensions={"trace": trace},
                                      timeout=httpx.Timeout(bound, connect=min(bound, CONNECT_TIMEOUT)),
                                      params={k: v for k, v in (params or {}).items() if v is not None})
        except httpx.HTTPError as error:
            kind = type(error).__name__
            if not sent(error):
                raise RemoteError("unreachable", f"cannot reach the server at {self.url}: {kind}"
                                                 f"{_why_unreachable(error)}; nothing was sent") from None
            if self._probe_tls and not isinstance(error, httpx.TimeoutException) and self._speaks_tls():
                raise self._tls_error() from None
            if isinstance(error, httpx.TimeoutException):
                what = f"no answer came within {bound:g} s ({kind})"
            else:
                what = f"the connection ended without an answer ({kind})"
            raise RemoteError("no_answer", f"the request was sent to the server at {self.url} but {what}{look}"
                              ) from None
        except KeyboardInterrupt:
            if charged and sent(None):
                raise RequestInterrupted(f"the {charged} request was sent to the server before the interrupt"
                                         f"{look}") from None
            raise

    def _speaks_tls(self) -> bool:
        """Whether this client's ``http://`` server speaks TLS (:func:`_speaks_tls`)."""
        return _speaks_tls(self._host, self._port, min(self.timeout, TLS_PROBE_TIMEOUT))

    def _tls_error(self) -> RemoteError:
        """The error of a plain-HTTP request to a server that speaks TLS: its TLS layer (or TLS proxy) refused
        it before any HTTP reached dprm, so nothing was charged."""
        https = "https" + self.url[len("http"):]
        return RemoteError("speaks_tls", f"the server at {self.url} speaks TLS: give {https}; the request was "
                                         f"refused before it reached dprm, so nothing was charged")

    # -- the API -------------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """The server's health check (no token needed)."""
        return self._call("GET", "/health")

    def datasets(self) -> list[dict[str, Any]]:
        """The datasets this analyst may use: public schema and budget."""
        return _field(self._call("GET", "/v1/datasets"), "datasets", list)

    def dataset(self, name: str) -> dict[str, Any]:
        """One dataset's public schema and budget."""
        return self._call("GET", f"/v1/datasets/{_segment(name, 'unknown_dataset')}")

    def dummy_rows(self, dataset: str, rows: int = 100, seed: int | None = None) -> dict[str, Any]:
        """Rows synthesised from the dataset's public schema (no budget)."""
        return self._call("GET", f"/v1/datasets/{_segment(dataset, 'unknown_dataset')}/dummy",
                          params={"rows": rows, "seed": seed})

    def algorithms(self) -> dict[str, Any]:
        """The server's private algorithms, their parameters and limits."""
        return _field(self._call("GET", "/v1/algorithms"), "algorithms", dict)

    def submit(self, dataset: str, algorithm: str, epsilon: Any, parameters: dict[str, Any] | None = None, *,
               idempotency_key: str | None = None, dry_run: bool = False, dummy: bool = False,
               dummy_rows: int = 1000) -> dict[str, Any]:
        """Submit a job (its ε is charged at once); the job, or the dry run's cost."""
        try:
            parameters = dict(parameters or {})
        except (TypeError, ValueError):
            raise ParameterError(f"parameters must be a mapping of names to values, not "
                                 f"{short_repr(parameters)}") from None
        body: dict[str, Any] = {"dataset": dataset, "algorithm": algorithm, "epsilon": _epsilon(epsilon),
                                "parameters": parameters, "dry_run": dry_run, "dummy": dummy,
                                "dummy_rows": dummy_rows}
        if idempotency_key is not None:
            body["idempotency_key"] = idempotency_key
        charged = None if dry_run or dummy else "job"
        answer = self._call("POST", "/v1/jobs", json=body, charged=charged)
        if not dry_run:
            for key in ("id", "status"):
                _field(answer, key, str, "a job", charged)
        return answer

    def jobs(self, limit: int | None = 100, *, page_size: int = 500) -> list[dict[str, Any]]:
        """The analyst's newest ``limit`` jobs (None: all of them), newest first, read ``page_size`` at a time."""
        return self._pages("/v1/jobs", "jobs", {}, limit, page_size)

    def status(self, job_id: str) -> dict[str, Any]:
        """A job's status and progress."""
        return self._status(job_id)

    def _status(self, job_id: str, timeout: float | None = None) -> dict[str, Any]:
        answer = self._call("GET", f"/v1/jobs/{_segment(job_id, 'unknown_job')}", timeout=timeout)
        _field(answer, "status", str, "a job")
        return answer

    def result(self, job_id: str) -> dict[str, Any]:
        """A done job's result: the ``dprm.redescriptions/1`` document."""
        return self._result(job_id)

    def _result(self, job_id: str, timeout: float | None = None) -> dict[str, Any]:
        return self._call("GET", f"/v1/jobs/{_segment(job_id, 'unknown_job')}/result", timeout=timeout)

    def cancel(self, job_id: str) -> dict[str, Any]:
        """Cancel a job."""
        answer = self._call("POST", f"/v1/jobs/{_segment(job_id, 'unknown_job')}/cancel")
        _field(answer, "id", str, "a job")
        _field(answer, "status", str, "a job")
        return answer

    def wait(self, job_id: str, *, timeout: float | None = None, poll: float = 0.5, max_poll: float = 5.0,
             progress: Callable[[dict[str, Any]], None] | None = None,
             trouble: Callable[[RemoteError], None] | None = None) -> dict[str, Any]:
        """Wait for a job to finish and return its result (RemoteError if it failed).

        Parameters
        ----------
        job_id : str
            The job.
        timeout : float or None
            Give up after this many seconds (``wait_timeout``; the job goes on); None: as long as it runs.
            Each read waits for its answer no longer than the wait has left (a server or proxy that holds a
            request held the wait for the client's whole ``timeout`` before).
        poll, max_poll : float
            Seconds between the first status reads; each next pause is 1.5 times longer, up to
            ``max_poll`` (a long job is asked every few seconds, not twice a second).
        progress : callable, optional
            Called with each status read.
        trouble : callable, optional
            Called with each temporary error the wait polls through (:attr:`RemoteError.temporary`:
            the server restarting or not answering, ``503``, ``429``): it pauses for the server's
            ``Retry-After`` if it gave one, else the poll interval, and tries again until ``timeout``.
        """
        if timeout is not None and not (_positive(timeout) or timeout == 0 and not isinstance(timeout, bool)):
            raise ParameterError(f"timeout must be None or a number of seconds, 0 or more, not {timeout!r}")
        for name, value in (("poll", poll), ("max_poll", max_poll)):
            if not _positive(value):
                raise ParameterError(f"{name} must be a positive number of seconds, not {value!r}")
        deadline = None if timeout is None else time.monotonic() + timeout

        def left() -> float | None:  # a request waits for its answer no longer than the wait has left
            return None if deadline is None else max(deadline - time.monotonic(), 0.05)

        delay, longest = float(poll), float(max(poll, max_poll))
        state: dict[str, Any] | None = None
        while True:
            failed: RemoteError | None = None
            try:
                if state is None or state["status"] in ("queued", "running"):
                    state = self._status(job_id, left())
                    if progress is not None:
                        progress(state)
                if state["status"] not in ("queued", "running"):
                    return self._result(job_id, left())
                pause, delay = delay, min(delay * 1.5, longest)
            except RemoteError as error:
                if not error.temporary:
                    raise
                failed = error
                if trouble is not None:
                    trouble(error)
                pause = delay if error.retry_after is None else max(error.retry_after, 0.05)
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                where = f"is still {state['status']}" if state is not None else "was not read"
                last = f"; the last try failed: {failed}" if failed is not None else ""
                raise RemoteError("wait_timeout", f"job {job_id} {where} after {timeout:g} s{last}")
            time.sleep(pause if deadline is None else min(pause, deadline - now))

    def redescription_statistics(self, dataset: str, left: Any, right: Any, epsilon: Any, *,
                                 confidence: float = 0.95, dry_run: bool = False, dummy: bool = False,
                                 dummy_rows: int = 1000) -> dict[str, Any]:
        """Noisy statistics (with intervals) of the redescription ``(left, right)``."""
        return self._call("POST", "/v1/primitives/redescription-statistics", json={
            "dataset": dataset, "left": _query(left), "right": _query(right), "epsilon": _epsilon(epsilon),
            "confidence": _confidence(confidence), "dry_run": dry_run, "dummy": dummy, "dummy_rows": dummy_rows},
            charged=None if dry_run or dummy else "primitive")

    def leaf_pair_counts(self, dataset: str, left_tree: dict[str, Any], right_tree: dict[str, Any], epsilon: Any,
                         *, dry_run: bool = False, dummy: bool = False, dummy_rows: int = 1000) -> dict[str, Any]:
        """Noisy counts of the cells of two trees (JSON form: docs/server.md)."""
        return self._call("POST", "/v1/primitives/leaf-pair-counts", json={
            "dataset": dataset, "left_tree": left_tree, "right_tree": right_tree, "epsilon": _epsilon(epsilon),
            "dry_run": dry_run, "dummy": dummy, "dummy_rows": dummy_rows},
            charged=None if dry_run or dummy else "primitive")

    def budget(self, dataset: str | None = None) -> list[dict[str, Any]]:
        """The analyst's budgets (``exact`` holds the decimal texts)."""
        budgets = _field(self._call("GET", "/v1/budget", params={"dataset": dataset}), "budgets", list)
        for row in budgets:
            _field(row, "dataset", str, "a budget")
            exact = _field(row, "exact", dict, "a budget")
            for key in ("total", "spent", "remaining"):
                _field(exact, key, (str, int, float), "a budget's exact")
        return budgets

    def ledger(self, dataset: str | None = None, limit: int | None = None, *, page_size: int = 10000
               ) -> list[dict[str, Any]]:
        """The analyst's ledger rows, newest first: all of them (or the newest ``limit``), read
        ``page_size`` at a time (the server's pages: ``?limit=&before=`` and the answer's ``next``)."""
        return self._pages("/v1/ledger", "ledger", {"dataset": dataset}, limit, page_size)

    def _pages(self, path: str, field: str, params: dict[str, Any], limit: int | None, page: int
               ) -> list[dict[str, Any]]:
        """Rows of a paged list (``?limit=&before=``, the answer's ``next``), up to ``limit`` (None: all)."""
        if limit is not None and not (isinstance(limit, numbers.Integral) and not isinstance(limit, bool)
                                      and limit >= 0):
            raise ParameterError(f"limit must be None (all) or a whole number, 0 or more, not {short_repr(limit)}")
        rows: list[dict[str, Any]] = []
        before = None
        asked: set[Any] = set()
        while limit is None or len(rows) < limit:
            size = page if limit is None else min(page, limit - len(rows))
            answer = self._call("GET", path, params={**params, "limit": size, "before": before})
            rows.extend(_field(answer, field, list))
            asked.add(before)
            before = answer.get("next")
            if not isinstance(before, (int, str, type(None))) or isinstance(before, bool):
                raise _bad_response(f"a page whose 'next' is {short_repr(before)}")
            if before is None:
                break
            if before in asked:  # (a proxy that caches the first page) the list would be read without end
                raise _bad_response(f"a page whose 'next' ({short_repr(before)}) names a page read before")
        return rows
