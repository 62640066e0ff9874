"""The bodies of the API's requests (pydantic models), hence its OpenAPI schema.

Models forbid unknown keys; bounds that need the public schema or the miners
(parameters, queries, trees) are checked by :mod:`dprm.server.validation` and
answered with the same error body.

``epsilon`` is a JSON number or a decimal string (``0.1``, ``"0.1"``): it is read
exactly as written (a float through its shortest text) and must be a multiple of
10⁻⁹ (:mod:`dprm.server.units`).
"""

from __future__ import annotations

from typing import Annotated, Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StringConstraints

from dprm.server.dummy import MAX_DUMMY_ROWS

__all__ = ["JobRequest", "StatisticsRequest", "LeafPairsRequest", "ErrorBody", "Epsilon", "DatasetName"]

DatasetName = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
# any text: its checks (:func:`dprm.server.units.epsilon_units`) answer ``invalid_epsilon``, where pydantic's
# length bounds gave a generic ``invalid_request`` about the integer form
Epsilon = Annotated[Union[StrictInt, StrictFloat, str],
                    Field(description="Privacy budget of the request: > 0, a multiple of 1e-9, at most 1e6; "
                                      "a number or a decimal string", examples=[0.5, "0.25"])]
# a text's length is checked by dprm.server.validation.check_job, which names the limit (here pydantic
# named the union's first member: "parameters.variant.bool: Input should be a valid boolean")
ParameterValue = Union[StrictBool, StrictInt, StrictFloat, str, None]
IdempotencyKey = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$")]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Common(_Body):
    dataset: DatasetName = Field(description="The dataset's name (GET /v1/datasets).")
    epsilon: Epsilon
    dry_run: StrictBool = Field(False, description="Only check the request and return its exact cost and the "
                                                   "remaining budget: nothing is charged, no row is read.")
    dummy: StrictBool = Field(False, description="Run on rows synthesised from the public schema (no budget).")
    dummy_rows: Annotated[StrictInt, Field(ge=10, le=MAX_DUMMY_ROWS)] = Field(
        1000, description="Number of dummy rows (with dummy=true).")


class JobRequest(_Common):
    """A miner run (as ``dprm mine``) on a dataset of the server."""

    algorithm: Annotated[str, StringConstraints(min_length=1, max_length=64)] = Field(
        description="A private algorithm (GET /v1/algorithms).", examples=["mcmc-tree-pair"])
    parameters: dict[Annotated[str, StringConstraints(max_length=64)], ParameterValue] = Field(
        default_factory=dict, description="The miner's parameters, named as in Python (depth, init_trials, ...).")
    idempotency_key: Optional[IdempotencyKey] = Field(
        None, description="A key of the analyst's choice: a second submission with it returns the first job and "
                          "charges nothing.")


class StatisticsRequest(_Common):
    """Noisy statistics of a redescription the analyst proposes (a [inv] primitive)."""

    left: dict[str, Any] = Field(description="Query over the left view (spec/redescriptions.md, query JSON).",
                                 examples=[{"attr": "Moose", "eq": True}])
    right: dict[str, Any] = Field(description="Query over the right view.",
                                  examples=[{"attr": "tmin_01", "le": -5}])
    confidence: Annotated[StrictFloat, Field(ge=0.5, le=0.999)] = Field(
        0.95, description="Posterior mass of the intervals.")


class LeafPairsRequest(_Common):
    """Noisy counts of the leaf pairs of two trees the analyst sends (a [inv] primitive)."""

    left_tree: dict[str, Any] = Field(
        description='Tree over the left view: {"leaf": true} or {"split": LITERAL, "yes": TREE, "no": TREE}.',
        examples=[{"split": {"attr": "Moose", "eq": True}, "yes": {"leaf": True}, "no": {"leaf": True}}])
    right_tree: dict[str, Any] = Field(description="Tree over the right view.",
                                       examples=[{"split": {"attr": "tmin_01", "le": -5}, "yes": {"leaf": True},
                                                  "no": {"leaf": True}}])


class ErrorDetail(BaseModel):
    code: str = Field(description="A stable machine code (docs/server.md lists them).")
    message: str = Field(description="One line for people; never about the rows.")


class ErrorBody(BaseModel):
    """Every refusal's body."""

    error: ErrorDetail
