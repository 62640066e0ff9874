"""The connection limits of ``dprm serve``: how long a client may take, how many may connect.

A server behind a TLS proxy (docs/server.md, "Deployment") still bounds what one
slow or hostile client can hold. :class:`ConnectionLimits` holds the choices and
:func:`uvicorn_config` applies them:

* ``header_timeout``: a connection must deliver a request's headers within this many
  seconds of opening, or of the previous answer; otherwise it is closed (uvicorn
  itself has no such deadline: a client sending one header byte a second kept a
  connection, and its memory, for ever). :class:`HeaderDeadline` arms the timer;
* ``keep_alive``: an idle kept-alive connection is closed after this many seconds
  (uvicorn's ``timeout_keep_alive``);
* ``max_connections``: connections and requests in progress at once; beyond, a new
  request is answered 503 at once (uvicorn's ``limit_concurrency``);
* ``max_header_bytes``: a request line and headers larger than this are 400 (h11's
  ``max_incomplete_event_size``);
* ``backlog``: connections the kernel queues before the server accepts them.

The deadline of a request's *body* is the application's
(:class:`~dprm.server.guard.Guard`, ``body_timeout``: 408 ``request_timeout``), and a
request to the API without a valid token is answered 401 before its body is read.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

__all__ = ["ConnectionLimits", "HeaderDeadline", "uvicorn_config"]


@dataclass(frozen=True, kw_only=True)
class ConnectionLimits:
    """The limits (see the module docstring); the defaults are ``dprm serve``'s."""

    header_timeout: float = 10.0
    keep_alive: float = 5.0
    max_connections: int = 512
    max_header_bytes: int = 16_384
    backlog: int = 256


class HeaderDeadline:
    """A mixin of uvicorn's HTTP protocol: close a connection whose request headers are late."""

    header_timeout: float = 10.0
    _deadline: asyncio.TimerHandle | None = None
    _armed_for: Any = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._armed_for = self.cycle  # type: ignore[attr-defined]
        self._deadline = self.loop.call_later(self.header_timeout, self._expire)  # type: ignore[attr-defined]

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def data_received(self, data: bytes) -> None:
        super().data_received(data)  # type: ignore[misc]
        if self._deadline is not None and self.cycle is not None and self.cycle is not self._armed_for:  # type: ignore[attr-defined]
            self._disarm()  # a new request's headers are in: its body has the application's deadline

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        cycle = self.cycle  # type: ignore[attr-defined]
        # (a pipelined request already read is being answered: its end arms the deadline)
        if not self.transport.is_closing() and (cycle is None or cycle.response_complete):  # type: ignore[attr-defined]
            self._arm()  # the next request's headers

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]

    def _expire(self) -> None:
        self._deadline = None
        cycle = self.cycle  # type: ignore[attr-defined]
        if cycle is not None and cycle is not self._armed_for and not cycle.response_complete:
            return  # a request is being answered
        if not self.transport.is_closing():  # type: ignore[attr-defined]
            self.transport.close()  # type: ignore[attr-defined]


def protocol(limits: ConnectionLimits) -> type:
    """uvicorn's h11 protocol with the header deadline of ``limits``."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    return type("DeadlineH11Protocol", (HeaderDeadline, H11Protocol), {"header_timeout": limits.header_timeout})


def uvicorn_config(app: Any, host: str, port: int, limits: ConnectionLimits | None = None, **options: Any) -> Any:
    """The ``uvicorn.Config`` of ``app`` on ``host:port`` with ``limits`` (h11: its header size limit)."""
    import uvicorn

    limits = limits or ConnectionLimits()
    return uvicorn.Config(app, host=host, port=port, http=protocol(limits), timeout_keep_alive=limits.keep_alive,
                          limit_concurrency=limits.max_connections, backlog=limits.backlog,
                          h11_max_incomplete_event_size=limits.max_header_bytes, server_header=False, **options)
