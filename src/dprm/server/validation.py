"""Checks of jobs and primitives against public information only, before any charge.

Everything here reads the request, the miners' signatures and validation, and the
dataset's public schema; nothing reads a row. A request that passes is charged and
handed to a worker; one that fails is answered with a 4xx code and a message that
depends only on the request (never on the data).

Bounds beyond the miners' own: the parameters that set a job's size
(:data:`SERVER_LIMITS`), the size of queries (:data:`MAX_QUERY_NODES`), trees
(:data:`dprm.server.tree_json.MAX_TREE_DEPTH`) and the confidence of intervals.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from dprm.errors import DprmError
from dprm.server.errors import ApiError
from dprm.server.units import huge_exponent, units_float, units_fraction, units_text

__all__ = ["SERVER_LIMITS", "MAX_QUERY_NODES", "private_algorithms", "parameter_limits", "server_parameter_specs",
           "check_job", "check_query", "check_confidence", "JobSpec"]

#: Inclusive bounds of the parameters that set a job's size (where a miner has them).
SERVER_LIMITS: dict[str, tuple[int, int]] = {
    "depth": (1, 7),  # the tree miners' own limit
    "init_trials": (1, 200),
    "alternations": (0, 50),
    "mcmc_iterations": (1, 2_000_000),
    "variance_window": (2, 1_000_000),
    "max_splits": (1, 1024),
    "max_clauses": (1, 16),
    "max_literals": (1, 16),
    "target_bins": (2, 256),
    "max_age": (1, 10_000),
}

#: Parameter values a server refuses: they make a run's result not private by
#: construction, so it could only be withheld after reading the rows. Worse, such a
#: run is an oracle: Serenade's ``data_size="public"`` compares ``rows`` with the true
#: number of rows and fails at once on a wrong guess, while the right guess runs to
#: the end; the analyst would learn the number of rows exactly for ε = 1e-4 a guess.
NOT_PRIVATE_VALUES: dict[str, tuple[Any, ...]] = {
    "data_size": ("public",),
}

#: Parameters a server never passes on (they only serve the values above).
NOT_PRIVATE_PARAMETERS = ("rows",)

#: The most nodes (literals and operators) of one query.
MAX_QUERY_NODES = 256

_MAX_TEXT = 200


@dataclass(frozen=True)
class JobSpec:
    """A checked job: the algorithm and the parameters the miner is built with."""

    algorithm: str
    parameters: dict[str, Any]


@lru_cache(maxsize=1)
def private_algorithms() -> dict[str, tuple[type, dict[str, Any]]]:
    """The algorithms a server runs: the private ones (they take an epsilon)."""
    from dprm.mining import ALGORITHMS

    return {name: entry for name, entry in ALGORITHMS.items() if "epsilon" in entry[0].parameter_names()}


@lru_cache(maxsize=None)
def _parameters(algorithm: str) -> tuple[tuple[str, Any], ...]:
    miner_class, fixed = private_algorithms()[algorithm]
    signature = inspect.signature(miner_class.__init__)
    return tuple((name, p.default) for name, p in signature.parameters.items()
                 if name not in ("self", "epsilon") and name not in fixed and name not in NOT_PRIVATE_PARAMETERS)


def algorithm_parameters(algorithm: str) -> dict[str, Any]:
    """The parameters an analyst may set for ``algorithm`` and their defaults."""
    return dict(_parameters(algorithm))


@lru_cache(maxsize=None)
def _limits(algorithm: str) -> tuple[tuple[str, int, int], ...]:
    miner_class, _ = private_algorithms()[algorithm]
    allowed = algorithm_parameters(algorithm)
    out = []
    for name, (low, high) in SERVER_LIMITS.items():
        if name not in allowed:
            continue
        spec = miner_class.parameter_specs.get(name)
        if spec is not None and spec.kind == "int":  # the miner's own range, where narrower
            if isinstance(spec.low, (int, float)):
                low = max(low, math.floor(spec.low) + 1 if spec.low_open else math.ceil(spec.low))
            if isinstance(spec.high, (int, float)):
                high = min(high, math.ceil(spec.high) - 1 if spec.high_open else math.floor(spec.high))
        out.append((name, low, high))
    return tuple(out)


def server_parameter_specs(algorithm: str) -> dict[str, Any]:
    """What a server accepts of ``algorithm``'s parameters, as :class:`~dprm.params.Param` specs.

    The miner's specs (:func:`dprm.mining.parameter_specs`) without the parameters a
    server never passes on (:data:`NOT_PRIVATE_PARAMETERS`), with the size limits of
    :func:`parameter_limits` and without the choices it refuses
    (:data:`NOT_PRIVATE_VALUES`, said in the help): what ``dprm remote submit --help``
    shows. Public information only.

    Examples
    --------
    >>> specs = server_parameter_specs("serenade-cs")
    >>> specs["max_literals"].bounds_text(), "rows" in specs, specs["data_size"].bounds_text()
    ('1 to 16', False, 'noisy | engine')
    >>> server_parameter_specs("alt-mcmc")["init_trials"].bounds_text()   # the miner takes up to 1,000
    '1 to 200 or auto'
    """
    from dataclasses import replace

    from dprm.mining import parameter_specs

    limits = parameter_limits(algorithm)
    out = {}
    for name, spec in parameter_specs(algorithm).items():
        if name in NOT_PRIVATE_PARAMETERS:
            continue
        if name in limits:
            spec = replace(spec, low=limits[name][0], high=limits[name][1], low_open=False, high_open=False)
        refused = NOT_PRIVATE_VALUES.get(name, ())
        if refused and spec.kind == "choice":
            shown = ", ".join(repr(value) for value in refused)
            spec = replace(spec, choices=tuple(c for c in spec.choices if c not in refused),
                           help=f"{spec.help}; a server refuses {shown} (its results are not private)")
        out[name] = spec
    return out


def parameter_limits(algorithm: str) -> dict[str, tuple[int, int]]:
    """The inclusive range of each size parameter of ``algorithm`` on this server.

    :data:`SERVER_LIMITS` narrowed to the miner's own range, so both ends are accepted.

    Examples
    --------
    >>> parameter_limits("alt-mcmc")["depth"], parameter_limits("alt-mcmc")["variance_window"]
    ((1, 7), (2, 10000))
    """
    return {name: (low, high) for name, low, high in _limits(algorithm)}


def _miner_epsilon(units: int) -> float:
    """The float a miner is built with; exact: it reads back as ``units`` (≤ 15 digits)."""
    value = units_float(units)
    if units_fraction(units) != _as_fraction(value):  # pragma: no cover - ≤ 15 significant digits round-trip
        raise ApiError("invalid_epsilon", "epsilon has too many significant digits")
    return value


def _as_fraction(value: float) -> Any:
    from dprm.privacy.budget import as_fraction

    return as_fraction(value)


def check_job(algorithm: str, parameters: dict[str, Any], units: int) -> JobSpec:
    """Check a job against the miner's own validation and :data:`SERVER_LIMITS`.

    Returns the parameters to build the miner with (epsilon included).
    """
    from dprm.mining import make_miner

    algorithms = private_algorithms()
    if algorithm not in algorithms:
        raise ApiError("unknown_algorithm",
                       f"unknown algorithm {algorithm[:64]!r}; this server runs: {', '.join(algorithms)}")
    allowed = algorithm_parameters(algorithm)
    if len(parameters) > len(allowed):
        raise ApiError("invalid_parameter", "too many parameters")
    checked: dict[str, Any] = {}
    for name, value in parameters.items():
        if name == "epsilon":
            raise ApiError("invalid_parameter", "give epsilon beside the parameters, not among them")
        if name not in allowed:
            raise ApiError("invalid_parameter", f"{algorithm} has no parameter {name[:64]!r}"
                           + (" on this server (its results are not private)" if name in NOT_PRIVATE_PARAMETERS
                              else ""))
        if isinstance(value, str) and value in NOT_PRIVATE_VALUES.get(name, ()):
            raise ApiError("invalid_parameter", f"{name.replace('_', '-')} {value!r} makes the result not private; "
                                                f"this server runs private algorithms only")
        if value is not None and not isinstance(value, (bool, int, float, str)):
            raise ApiError("invalid_parameter", f"parameter {name!r} must be a number, a text, true/false or null")
        if isinstance(value, str) and len(value) > _MAX_TEXT:
            raise ApiError("invalid_parameter", f"parameter {name!r} is longer than {_MAX_TEXT} characters")
        if isinstance(value, str) and huge_exponent(value):
            raise ApiError("invalid_parameter", f"parameter {name!r} has a number with an exponent out of range")
        if isinstance(value, float) and not math.isfinite(value):
            raise ApiError("invalid_parameter", f"parameter {name!r} must be finite")
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
            raise ApiError("invalid_parameter", f"parameter {name!r} is out of range")
        limits = parameter_limits(algorithm)
        if name in limits and isinstance(value, (int, float)) and not isinstance(value, bool):
            low, high = limits[name]
            if not low <= value <= high:
                raise ApiError("invalid_parameter",
                               f"{name.replace('_', '-')} must be between {low} and {high} on this server")
        checked[name] = value
    for name, (low, high) in SERVER_LIMITS.items():  # defaults too
        value = checked.get(name, allowed.get(name))
        if name in allowed and isinstance(value, int) and not isinstance(value, bool) and not low <= value <= high:
            raise ApiError("invalid_parameter",
                           f"{name.replace('_', '-')} must be between {low} and {high} on this server")
    checked["epsilon"] = _miner_epsilon(units)
    _check_job_epsilon(units)
    try:
        miner = make_miner(algorithm, **checked)
        check = getattr(miner, "check_parameters", None)
        if callable(check):
            check()
    except DprmError as error:
        raise ApiError("invalid_parameter", _public(error)) from None
    except (TypeError, ValueError, ArithmeticError) as error:  # e.g. OverflowError of budget-split 1e400,1,1
        raise ApiError("invalid_parameter", f"invalid parameters for {algorithm}: {str(error)[:200]}") from None
    return JobSpec(algorithm, checked)


def _check_job_epsilon(units: int) -> None:
    """A job's ε within the miners' own range (narrower than a primitive's), else ``422 invalid_epsilon``."""
    from dprm.privacy.budget import LARGEST_EPSILON, SMALLEST_EPSILON

    if not SMALLEST_EPSILON <= units_fraction(units) <= LARGEST_EPSILON:
        raise ApiError("invalid_epsilon", f"a job's epsilon must be between {float(SMALLEST_EPSILON):g} and "
                                          f"{float(LARGEST_EPSILON):g} (the miners' range), got {units_text(units)}")


def _public(error: DprmError) -> str:
    """A parameter error's message (public: parameters are not data)."""
    public = getattr(error, "public_message", None)
    text = str(error) if getattr(error, "data_dependent", False) is False or public is None else public()
    return text.splitlines()[0][:300] if text else "invalid parameter"


def check_query(obj: Any, schema: dict[str, Any], view: str, where: str) -> Any:
    """A query of the analyst, read from JSON and checked against ``view``'s public schema.

    A literal the schema decides (:mod:`dprm.server.public_domain`: no declared value
    satisfies it, or every one does on a column declared complete) is ``422
    outside_domain``; other problems are ``422 invalid_query``.
    """
    from dprm.queries import BooleanLiteral, CategoricalLiteral, NumericLiteral, query_from_json

    from dprm.server.datasets import attribute_of
    from dprm.server.public_domain import query_problem

    try:
        query = query_from_json(obj, where=where)
    except DprmError as error:  # about the request's JSON, never the data
        raise ApiError("invalid_query", str(error).splitlines()[0][:300]) from None
    nodes = sum(1 for _ in query.iter_nodes())
    if nodes > MAX_QUERY_NODES:
        raise ApiError("invalid_query", f"{where}: at most {MAX_QUERY_NODES} nodes, got {nodes}")
    for literal in query.literals():
        entry = attribute_of(schema, view, literal.attr)
        if entry is None:
            raise ApiError("invalid_query", f"{where}: the {view} view has no attribute {literal.attr[:64]!r}")
        kind = entry["type"]
        if isinstance(literal, BooleanLiteral) and kind != "boolean":
            raise ApiError("invalid_query", f"{where}: {literal.attr!r} is {kind}; a Boolean literal needs a "
                                            f"boolean attribute")
        if isinstance(literal, CategoricalLiteral):
            if kind != "categorical":
                raise ApiError("invalid_query", f"{where}: {literal.attr!r} is {kind}; use a numeric literal "
                                                f"(gt, ge, lt, le)" if kind == "numeric" else
                               f"{where}: {literal.attr!r} is {kind}; use eq true/false")
        if isinstance(literal, NumericLiteral) and kind != "numeric":
            raise ApiError("invalid_query", f"{where}: {literal.attr!r} is {kind}; a numeric literal needs a "
                                            f"numeric attribute")
        problem = query_problem(literal, entry, where)  # an undeclared category, [x > 1000] on [0, 100], ...
        if problem is not None:
            raise ApiError("outside_domain", problem)
    problem = decided_problem(query, schema, view, where)  # a ∧ ¬a, [x ≤ 5] ∨ [x > 5] on a complete x, ...
    if problem is not None:
        raise ApiError("outside_domain", problem)
    return query


def decided_problem(query: Any, schema: dict[str, Any], view: str, where: str) -> str | None:
    """Why a compound query's answer is known from the public schema, or None.

    A query that holds on every row or on none whatever the rows (``a ∧ ¬a``; ``[x ≤ 5]
    ∨ [x > 5]`` where ``x`` is declared complete), as the normal form's provers show it
    (:func:`dprm.queries.normal_form.decided`, given the attributes the schema declares
    complete), would spend ε on nothing, as a literal outside its domain would
    (:mod:`dprm.server.public_domain`). Reads the request and the public schema only.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral as B
    >>> schema = {"views": {"left": [{"name": "a", "type": "boolean"}]}}
    >>> decided_problem(B("a") & ~B("a"), schema, "left", "left")
    'left: a ∧ ¬a holds on no row whatever the data, so its answer is known from the public schema (nothing was charged)'
    >>> decided_problem(B("a"), schema, "left", "left") is None
    True
    """
    from dprm.queries import to_text
    from dprm.queries.normal_form import decided

    complete = {entry["name"] for entry in schema["views"].get(view, []) if entry.get("complete")}
    holds = decided(query, complete)
    if holds is None:
        return None
    text = to_text(query)
    text = text if len(text) <= 200 else text[:199] + "…"
    return (f"{where}: {text} holds on {'every' if holds == 'every' else 'no'} row whatever the data, so its "
            f"answer is known from the public schema (nothing was charged)")


def check_tree(obj: Any, schema: dict[str, Any], view: str, where: str) -> Any:
    """A tree of the analyst (:mod:`dprm.server.tree_json`) checked against ``view``."""
    from dprm.server.public_domain import OutsideDomainError
    from dprm.server.tree_json import tree_from_json

    try:
        return tree_from_json(obj, schema["views"][view], where=where)
    except OutsideDomainError as error:  # a split one of whose branches is empty whatever the rows
        raise ApiError("outside_domain", str(error).splitlines()[0][:400]) from None
    except DprmError as error:
        raise ApiError("invalid_tree", str(error).splitlines()[0][:300]) from None
    except RecursionError:  # pragma: no cover - the body's depth is bounded before
        raise ApiError("invalid_tree", f"{where}: nested too deeply") from None


def check_confidence(confidence: Any) -> float:
    """The confidence of intervals: a number in (0, 1), the miners' own range
    (:data:`dprm.mining.base.CONFIDENCE`), for jobs and primitives alike."""
    from dprm.mining.base import CONFIDENCE

    try:
        CONFIDENCE.validate(confidence)
    except DprmError as error:
        raise ApiError("invalid_parameter", str(error).splitlines()[0][:200]) from None
    return float(confidence)
