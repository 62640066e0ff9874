"""The bodies of the API's requests (pydantic models), hence its OpenAPI schema.

Models forbid unknown keys; bounds that need the public schema or the miners
(parameters, queries, trees) are checked by :mod:`dprm.server.validation` and
answered with the same error body.

``epsilon`` is a JSON number or a decimal string (``0.1``, ``"0.1"``): it is read
exactly as written (a JSON number by its text: :mod:`dprm.server.api.bodies`; a float
given in Python through its shortest text) and must be a multiple of 10⁻⁹
(:mod:`dprm.server.units`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Optional, Union

from pydantic import (BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StringConstraints,
                      ValidationInfo, ValidatorFunctionWrapHandler, WrapValidator, field_validator)
from pydantic_core import PydanticCustomError

from dprm.json_values import JsonNumber
from dprm.mining.base import CONFIDENCE
from dprm.server.dummy import MAX_DUMMY_ROWS

__all__ = ["JobRequest", "StatisticsRequest", "LeafPairsRequest", "ErrorBody", "Epsilon", "DatasetName",
           "validation_message"]

DatasetName = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]


def _with_text(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """The union's check, then a JSON number as read (:class:`JsonNumber`, with its text)."""
    checked = handler(value)
    return value if isinstance(value, JsonNumber) else checked


# any text: its checks (:func:`dprm.server.units.epsilon_units`) answer ``invalid_epsilon``, where pydantic's
# length bounds gave a generic ``invalid_request`` about the integer form
Epsilon = Annotated[Union[StrictInt, StrictFloat, str], WrapValidator(_with_text),
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
    dummy_rows: StrictInt = Field(1000, description=f"Number of dummy rows, 10 to {MAX_DUMMY_ROWS} (read with "
                                                    f"dummy=true only; any whole number is ignored otherwise).")

    @field_validator("dummy_rows")
    @classmethod
    def _dummy_rows_of_a_dummy_run(cls, rows: int, info: ValidationInfo) -> int:
        """The number of rows is checked where it is used: on a dummy request (a real one ignores it, and
        refused ``dummy_rows: 0`` sent beside ``dummy: false``, as ``dprm remote ... --dummy-rows 0`` does)."""
        if info.data.get("dummy") and not 10 <= rows <= MAX_DUMMY_ROWS:
            raise PydanticCustomError("dummy_rows_range", "Input should be between 10 and {high} with dummy: true",
                                      {"high": MAX_DUMMY_ROWS})
        return rows


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
    confidence: Annotated[StrictFloat, Field(gt=0, lt=1)] = Field(
        0.95, description=f"{CONFIDENCE.help}, in {CONFIDENCE.bounds_text()}: the miners' parameter "
                          f"'confidence' (a job's), with the same range.")


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


#: The start of pydantic's message for a value of the wrong type (``Input should be a valid integer``).
_WRONG_TYPE = "Input should be a valid "
#: ``body`` not given: every location is kept as pydantic wrote it.
_NO_BODY: Any = object()


def validation_message(problems: Sequence[Mapping[str, Any]], body: Any = _NO_BODY) -> str:
    """The first problem pydantic found in a request, as ``where: what`` in the request's own terms.

    Pydantic adds the member of a union it tried to a problem's location (``epsilon.int``,
    ``parameters.budget_split.bool``) and reports one problem per member. The location here
    keeps only what names a place in ``body``: its keys and list positions, a key that is
    missing, and ``[key]`` (a key itself is wrong); the members' problems are said as one
    (``epsilon: Input should be a valid integer, number or string``). The message quotes
    nothing but the request's own keys.

    Parameters
    ----------
    problems : sequence of mapping
        ``ValidationError.errors()``, each with ``loc``, ``msg`` and ``type``; locations
        relative to ``body``.
    body : object, optional
        The request's value as sent (a JSON object, or a model's keyword arguments).
        Without it every location is kept as pydantic wrote it.

    Returns
    -------
    str
        ``"where: what"``, or ``"what"`` for the request as a whole.

    Examples
    --------
    >>> problems = [{"loc": ("epsilon", "int"), "msg": "Input should be a valid integer", "type": "int_type"},
    ...             {"loc": ("epsilon", "str"), "msg": "Input should be a valid string", "type": "string_type"}]
    >>> validation_message(problems, {"epsilon": [1]})
    'epsilon: Input should be a valid integer or string'
    >>> validation_message([{"loc": ("left",), "msg": "Field required", "type": "missing"}], {"dataset": "x"})
    'left: Field required'
    """
    if not problems:
        return "the request does not match the API's schema"
    places = [_place(problem, body) for problem in problems]
    first = problems[0]
    message = str(first.get("msg", "invalid value"))
    same = [str(problem.get("msg", "")) for problem, place in zip(problems, places) if place == places[0]]
    if len(same) > 1 and all(text.startswith(_WRONG_TYPE) for text in same):  # a union's members, said as one
        kinds = list(dict.fromkeys(text[len(_WRONG_TYPE):] for text in same))
        message = _WRONG_TYPE + (", ".join(kinds[:-1]) + " or " + kinds[-1] if len(kinds) > 1 else kinds[0])
    return f"{places[0]}: {message}" if places[0] else message


def _place(problem: Mapping[str, Any], body: Any) -> str:
    """A problem's location, with only the parts that name a place in ``body`` (:func:`validation_message`)."""
    location = tuple(problem.get("loc", ()))
    if body is _NO_BODY:
        return ".".join(str(part) for part in location)
    node, kept = body, []
    for i, part in enumerate(location):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and -len(node) <= part < len(node):
            node = node[part]
        elif not (part == "[key]" or (i == len(location) - 1 and problem.get("type") == "missing")):
            continue  # a union's member or another validator's name: not a place in the request
        kept.append(str(part))
    return ".".join(kept)
