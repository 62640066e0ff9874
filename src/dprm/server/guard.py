"""ASGI middleware around the whole API: bounded bodies, bounded JSON depth, audit, no tracebacks.

For every HTTP request it

* answers a ``POST`` to the API (``/v1/...``) without a valid token 401 *before*
  reading its body (the same codes as :func:`~dprm.server.api.deps.current_analyst`,
  which then takes the analyst found here instead of reading it again): an outsider
  cannot make the server buffer a megabyte per connection;
* answers 408 ``request_timeout`` when the body has not arrived within
  ``body_timeout`` seconds of the headers (the headers' own deadline is the
  connection's: :mod:`dprm.server.limits`);
* refuses a body larger than ``max_body`` bytes (413 ``request_too_large``) before
  the application parses it, whether or not a ``Content-Length`` was sent;
* refuses a NUL character in a JSON text or a form field (422 ``invalid_request``:
  no name, query or parameter holds one, and PostgreSQL refuses it in text);
* refuses a body that is not JSON (415 ``unsupported_media_type`` without a JSON
  ``Content-Type``, except URL-encoded forms posted to the web pages under ``/ui``;
  400 ``invalid_json`` when it does not parse, repeats a key in an object, as every
  JSON reader of dprm does (:func:`~dprm.json_values.no_duplicate_keys`: the API's
  parser would keep the last value where a proxy or a client may read the first), or
  holds a number beyond Python's 4,300 digits) and JSON nested deeper than
  ``max_depth`` (400 ``json_too_deep``: Python's JSON parser would otherwise recurse
  until ``RecursionError``);
* refuses a request with more than one ``Authorization`` header (401
  ``invalid_token``: which one is meant is not guessed);
* turns any exception that escaped the handlers into 500 ``internal_error`` with the
  API's error body (the traceback goes to the server's log, never to the caller);
* answers each of these refusals to a page's address (:func:`is_page_path`) with the
  pages' error page instead of the API's JSON, with the same status;
* adds :data:`API_HEADERS` to every answer that does not set its own policy (the
  web pages and the docs do): JSON answers are never framed, sniffed or run;
* answers ``HEAD`` as ``GET`` without the body (a 405's ``Allow`` names ``HEAD``
  beside ``GET``: :func:`dprm.server.app.http_error`), and adds
  ``WWW-Authenticate: Bearer`` to the API's 401s;
* writes one audit record (:class:`~dprm.server.audit.AuditLog`) with what the
  handlers left in ``request.state`` (``analyst_id``, ``action``, ``dataset``,
  ``epsilon_units``, ``outcome``, ``detail``) and the status and duration.

Examples
--------
>>> json_depth(b'{"a": [1, {"b": "[[[["}]}')
3
>>> json_depth(b'"\\\\"[[["')
0
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from typing import Any

from dprm.json_values import no_duplicate_keys
from dprm.server.errors import ERRORS, error_body

__all__ = ["API_HEADERS", "Guard", "is_json_media_type", "is_page_path", "json_depth", "WEB_PREFIX"]

#: The web pages' prefix (:mod:`dprm.server.web`): only there are HTML forms accepted.
WEB_PREFIX = "/ui"
FORM_TYPE = b"application/x-www-form-urlencoded"

log = logging.getLogger("dprm.server")


def is_page_path(path: str) -> bool:
    """Whether a refusal of ``path`` is answered with the pages' error page, not the API's JSON:
    the web pages, their static files and the icon a browser asks for by itself.

    Examples
    --------
    >>> is_page_path("/ui/datasets"), is_page_path("/ui/static/x.css"), is_page_path("/favicon.ico")
    (True, True, True)
    >>> is_page_path("/v1/jobs"), is_page_path("/uix")
    (False, False)
    """
    return path.startswith(WEB_PREFIX + "/") or path == "/favicon.ico"

#: The security headers of an answer without a Content-Security-Policy of its own.
API_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy", b"default-src 'none'; frame-ancestors 'none'; base-uri 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
]

#: A string (closed, or running to the end of the body) or one bracket. The string's
#: loop is possessive and every string matches, so the scan is linear: a pattern that
#: could fail on an unterminated string would be tried again from every later quote,
#: quadratic in a body such as ``[\\"\\"\\"...`` (minutes for 1 MB, before the token
#: is even looked at).
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)|[\[\]{}]', re.DOTALL)


def _with_auth_header(headers: list[tuple[bytes, bytes]], status: int, path: str) -> list[tuple[bytes, bytes]]:
    """``headers`` of an answer, with ``WWW-Authenticate: Bearer`` on an API 401 (the
    scheme the API takes; the pages' 401s ask to sign in instead).

    Examples
    --------
    >>> _with_auth_header([], 401, "/v1/budget"), _with_auth_header([], 401, "/ui/jobs")
    ([(b'www-authenticate', b'Bearer')], [])
    """
    if status == 401 and not is_page_path(path) and all(name.lower() != b"www-authenticate" for name, _ in headers):
        return headers + [(b"www-authenticate", b"Bearer")]
    return headers


def json_depth(body: bytes) -> int:
    """The deepest nesting of arrays and objects in a JSON text (strings skipped)."""
    if body.count(b"[") + body.count(b"{") == 0:
        return 0
    depth = deepest = 0
    for match in _TOKENS.finditer(body):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in (b"]", b"}"):
            depth -= 1
    return deepest


def _json_problem(error: Exception) -> str | None:
    """The message of a JSON body Python's parser refused: what of its own form was wrong, or None.

    Never a value of the body (a repeated key is not named).

    Examples
    --------
    >>> _json_problem(ValueError("duplicate key 'a'"))
    'an object of the JSON body repeats a key (send each key once)'
    >>> _json_problem(ValueError("Exceeds the limit (4300 digits) for integer string conversion"))
    'a number of the JSON body has more than 4,300 digits'
    >>> _json_problem(ValueError("Expecting value: line 1 column 1 (char 0)")) is None
    True
    """
    text = str(error)
    if text.startswith("duplicate key"):
        return "an object of the JSON body repeats a key (send each key once)"
    if "integer string conversion" in text:
        return "a number of the JSON body has more than 4,300 digits"
    return None


def _holds_nul(value: Any) -> bool:
    """Whether a parsed JSON value holds a NUL character in a key or a string (no name,
    query or parameter does; PostgreSQL refuses it in text: the answer would be 500)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def is_json_media_type(content_type: bytes) -> bool:
    """Whether a (lower-case) Content-Type header names JSON: ``application/json`` or ``application/*+json``.

    Examples
    --------
    >>> [is_json_media_type(t) for t in (b"application/json; charset=utf-8", b"application/problem+json",
    ...                                  b"text/json", b"application/notjson", b"")]
    [True, True, False, False, False]
    """
    media = content_type.split(b";", 1)[0].strip()
    return media == b"application/json" or (media.startswith(b"application/") and media.endswith(b"+json"))


class Guard:
    """The middleware (see the module docstring)."""

    def __init__(self, app: Any, *, audit: Any, max_body: int, max_depth: int, body_timeout: float = 30.0) -> None:
        self.app = app
        self.audit = audit
        self.max_body = max_body
        self.max_depth = max_depth
        self.body_timeout = body_timeout

    @staticmethod
    def _media_accepted(scope: dict, headers: dict[bytes, bytes]) -> bool:
        """Whether a body of this Content-Type is read: JSON, or a form posted to the web pages."""
        content_type = headers.get(b"content-type", b"").lower()
        if scope.get("path", "").startswith(WEB_PREFIX + "/") and content_type.startswith(FORM_TYPE):
            return True
        return is_json_media_type(content_type)

    async def _token_refused(self, scope: dict, send: Any, state: dict) -> bool:
        """Whether a POST to the API was answered 401 for its token (before its body is read)."""
        if scope.get("method") != "POST" or not scope.get("path", "").startswith("/v1/"):
            return False
        from dprm.server.owners import analyst_of_token

        headers = dict(scope.get("headers", []))
        declared = headers.get(b"content-length", b"").strip()
        if declared.isdigit() and int(declared) > 0 and not self._media_accepted(scope, headers):
            return False  # 415 from the body's checks, before the token: nothing to buffer either way
        header = headers.get(b"authorization", b"").strip()
        scheme, _, token = header.decode("latin-1").partition(" ")
        if header and (scheme.lower() != "bearer" or not token.strip()):
            code, message = "invalid_token", "the Authorization header must be 'Bearer TOKEN'"
        else:
            from sqlalchemy.exc import OperationalError

            from dprm.server.errors import rate_limited
            from dprm.server.ratelimit import client_address

            guesses, address = scope["app"].state.guesses, client_address(scope)
            if token.strip() and (wait := guesses.wait(address)) > 0:  # too many invalid tokens from here
                refusal = rate_limited(wait)
                state["outcome"] = refusal.code
                await self._answer(send, refusal.code, headers=refusal.headers)
                return True
            try:
                found, code, guessed = await self.audit.db.aread(lambda c: analyst_of_token(c, token.strip() or None))
            except OperationalError as error:  # as the application's handler answers it
                log.error("database error: %s", error)
                state["detail"] = str(error)[:2000]
                found, code, guessed = None, "database_unavailable", False
            if found is not None:
                state["authenticated"] = found  # current_analyst takes it from here
                return False
            if guessed:
                guesses.allow(address)
            code, message = code or "invalid_token", None
        state["outcome"] = code
        await self._answer(send, code, message)
        return True

    async def _answer(self, send: Any, code: str, message: str | None = None, scope: dict | None = None,
                      headers: dict[str, str] | None = None) -> None:
        """The refusal ``code``: the API's JSON body, or the pages' error page for a page's
        address (:func:`is_page_path`), with the same status."""
        status, description = ERRORS[code]
        if scope is not None and is_page_path(scope.get("path", "")):
            from starlette.requests import Request

            from dprm.server.web.pages import error_page

            page = error_page(Request(scope), code, message)  # its title and message: pages.page_error
            await send({"type": "http.response.start", "status": status, "headers": page.raw_headers})
            await send({"type": "http.response.body", "body": page.body})
            return
        payload = json.dumps(error_body(code, message or description)).encode()
        extra = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in (headers or {}).items()]
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                                *extra]})
        await send({"type": "http.response.body", "body": payload})

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        head = scope.get("method") == "HEAD"
        if head:  # a GET whose answer's body is not sent (its headers are the GET's)
            scope = dict(scope, method="GET")
        state = scope.setdefault("state", {})
        sent = {"status": 0, "started": False}

        async def send_and_note(message: dict) -> None:
            if message["type"] == "http.response.start":
                sent["started"] = True
                sent["status"] = message["status"]
                headers = list(message.get("headers", []))
                if not any(name.lower() == b"content-security-policy" for name, _ in headers):
                    headers += API_HEADERS
                headers = _with_auth_header(headers, message["status"], scope.get("path", ""))
                message = dict(message, headers=headers)
            elif head and message["type"] == "http.response.body":
                message = dict(message, body=b"")
            await send(message)

        try:
            if sum(name == b"authorization" for name, _ in scope.get("headers", [])) > 1:
                state["outcome"] = "invalid_token"  # which one would be meant? refused, not guessed
                await self._answer(send_and_note, "invalid_token", "send one Authorization header", scope)
                return
            if await self._token_refused(scope, send_and_note, state):
                return
            body = await self._body(scope, receive, send_and_note, state)
            if body is not None:
                delivered = {"done": False}

                async def replay() -> dict:
                    if not delivered["done"]:
                        delivered["done"] = True
                        return {"type": "http.request", "body": body, "more_body": False}
                    return await receive()

                await self.app(scope, replay, send_and_note)
        except Exception as error:  # noqa: BLE001 - the answer is the API's error, the traceback the log's
            log.exception("unhandled error in %s %s", scope.get("method"), scope.get("path"))
            state["outcome"] = "internal_error"
            state["detail"] = f"{type(error).__name__}: {error}"[:4000]
            if not sent["started"]:
                await self._answer(send_and_note, "internal_error", scope=scope)
        finally:
            client = scope.get("client")
            self.audit.record(
                analyst_id=state.get("analyst_id"), action=state.get("action") or "request",
                method="HEAD" if head else scope.get("method"), path=scope.get("path"), dataset=state.get("dataset"),
                epsilon_units=state.get("epsilon_units"), status=sent["status"],
                outcome=state.get("outcome") or ("ok" if sent["status"] < 400 else f"http_{sent['status']}"),
                detail=state.get("detail"), client=f"{client[0]}:{client[1]}" if client else None,
                duration_ms=(time.perf_counter() - start) * 1000.0)

    async def _body(self, scope: dict, receive: Any, send: Any, state: dict) -> bytes | None:
        """The whole body, or None after answering a refusal."""
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > self.max_body or declared < 0:
                    state["outcome"] = "request_too_large" if declared > 0 else "invalid_request"
                    await self._answer(send, "request_too_large" if declared > 0 else "invalid_request",
                                       None if declared > 0 else "invalid Content-Length", scope)
                    return None
        chunks: list[bytes] = []
        size = 0
        deadline = time.monotonic() + self.body_timeout
        while True:
            try:
                message = await asyncio.wait_for(receive(), max(deadline - time.monotonic(), 0.001))
            except asyncio.TimeoutError:
                state["outcome"] = "request_timeout"
                await self._answer(send, "request_timeout", scope=scope)
                return None
            if message["type"] == "http.disconnect":
                state["outcome"] = "client_disconnected"
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                state["outcome"] = "request_too_large"
                await self._answer(send, "request_too_large", scope=scope)
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if not body.strip():
            return body
        content_type = next((v for k, v in scope.get("headers", []) if k == b"content-type"), b"").lower()
        if scope.get("path", "").startswith(WEB_PREFIX + "/") and content_type.startswith(FORM_TYPE):
            if b"\x00" in body or b"%00" in body:  # %00 is the NUL character; a typed "%00" is sent as %2500
                state["outcome"] = "invalid_request"
                await self._answer(send, "invalid_request", "a form field holds a NUL character", scope=scope)
                return None
            return body  # a form of the web pages (bounded above; parsed by the page's handler)
        if not self._media_accepted(scope, dict(scope.get("headers", []))):
            state["outcome"] = "unsupported_media_type"
            page = is_page_path(scope.get("path", ""))  # a page takes its form as its form sends it
            await self._answer(send, "unsupported_media_type", "send the form as the page does "
                               "(application/x-www-form-urlencoded)" if page else None, scope)
            return None
        if json_depth(body) > self.max_depth:
            state["outcome"] = "json_too_deep"
            await self._answer(send, "json_too_deep", f"the JSON body is nested deeper than {self.max_depth}",
                               scope=scope)
            return None
        try:
            # a repeated key is refused: the API's parser would keep the last value, a proxy
            # or a client reading the first would see another request (a dry run charged)
            value = json.loads(body, object_pairs_hook=no_duplicate_keys)
        except (ValueError, RecursionError) as error:
            state["outcome"] = "invalid_json"
            await self._answer(send, "invalid_json", _json_problem(error), scope=scope)
            return None
        if b"\\u0000" in body and _holds_nul(value):
            state["outcome"] = "invalid_request"
            await self._answer(send, "invalid_request", "a text of the JSON body holds a NUL character",
                               scope=scope)
            return None
        return body
