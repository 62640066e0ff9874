"""``/v1/primitives/...``: the papers' [inv] functions, noisy answers about what the analyst sends."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from dprm.server.api.service import primitive
from dprm.server.api.bodies import ExactJsonRoute
from dprm.server.api.deps import ERROR_RESPONSES, OVER_BUDGET, Analyst
from dprm.server.api_models import LeafPairsRequest, StatisticsRequest

__all__ = ["router"]

router = APIRouter(route_class=ExactJsonRoute)


@router.post("/v1/primitives/redescription-statistics", tags=["primitives"],
             responses={**ERROR_RESPONSES, **OVER_BUDGET},
             summary="Noisy supports, intersection, Jaccard index and p-value (with intervals) of a query pair.")
def redescription_statistics(request: Request, who: Analyst, body: StatisticsRequest) -> dict[str, Any]:
    return primitive(request, who, "redescription-statistics", body)


@router.post("/v1/primitives/leaf-pair-counts", tags=["primitives"], responses={**ERROR_RESPONSES, **OVER_BUDGET},
             summary="Noisy counts of every (left leaf, right leaf) cell of two trees the analyst sends.")
def leaf_pair_counts(request: Request, who: Analyst, body: LeafPairsRequest) -> dict[str, Any]:
    return primitive(request, who, "leaf-pair-counts", body)
