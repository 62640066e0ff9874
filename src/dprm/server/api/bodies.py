"""How the API reads a JSON body: every number keeps the text it was written as.

A route of :class:`ExactJsonRoute` reads its JSON body with
``parse_float=``:class:`~dprm.json_values.JsonNumber`, so an ε sent as a JSON number
is read exactly as written (:func:`dprm.server.units.epsilon_units` takes its text):
``0.10000000000000001`` is refused as the string ``"0.10000000000000001"`` is, not
rounded to the float 0.1 and charged 0.1, and ``1e-400`` is quoted as sent, not as
0.0. Every other number is still the float its text reads as. Repeated keys are
refused here too (:func:`~dprm.json_values.no_duplicate_keys`), as the
:class:`~dprm.server.guard.Guard` refused them before.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Coroutine

from fastapi import Request, Response
from fastapi.routing import APIRoute

from dprm.json_values import JsonNumber, no_duplicate_keys

__all__ = ["ExactJsonRequest", "ExactJsonRoute"]


class ExactJsonRequest(Request):
    """A request whose JSON body's numbers with a fraction or exponent are :class:`JsonNumber`."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = json.loads(await self.body(), parse_float=JsonNumber,
                                    object_pairs_hook=no_duplicate_keys)
        return self._json


class ExactJsonRoute(APIRoute):
    """The route class of the API's routers with JSON bodies (``route_class=ExactJsonRoute``)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def exact(request: Request) -> Response:
            return await handler(ExactJsonRequest(request.scope, request.receive))

        return exact
