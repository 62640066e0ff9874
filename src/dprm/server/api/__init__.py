"""The analysts' API (``/health``, ``/v1/...``): one :class:`fastapi.APIRouter` a concept.

================  ==================================================================
``bodies``        how a JSON body is read: numbers keep their text (an ε is read exactly)
``deps``          the dependencies of the endpoints: the database, the authenticated
                  analyst (:func:`~dprm.server.api.deps.current_analyst`), the dataset
                  grant, the audit note, the error answers of the OpenAPI schema
``service``       what the endpoints and the web pages share: submit, cancel, the
                  primitives (:class:`~dprm.server.api.service.Service`)
``health``        ``GET /health``
``datasets``      ``/v1/datasets``: public schemas, budgets, dummy rows
``jobs``          ``/v1/algorithms`` and ``/v1/jobs``: submit, list, status, result, cancel
``primitives``    ``/v1/primitives/...``: noisy statistics, leaf-pair counts
``budgets``       ``/v1/budget`` and ``/v1/ledger``
``paging``        pages of the analyst's own lists, newest first, by a cursor
================  ==================================================================

:func:`dprm.server.app.create_app` includes the routers in the order of
:func:`routers` (the order of the paths in the OpenAPI schema).
"""

from __future__ import annotations

from typing import Any

__all__ = ["routers"]


def routers() -> list[Any]:
    """The API's routers, in the order their paths are listed in the OpenAPI schema."""
    from dprm.server.api import budgets, datasets, health, jobs, primitives

    return [health.router, datasets.router, jobs.router, primitives.router, budgets.router]
