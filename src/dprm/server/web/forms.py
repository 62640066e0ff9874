"""Form fields of the web pages to the API's requests, and the job form's fields.

An HTML form sends text; the API takes JSON values. :func:`parameter_value` reads a
parameter's text as the miner's own parameter spec expects it (integer, number,
true/false, a choice, ``auto``/``none`` where allowed), and the result goes through
the API's request models (:mod:`dprm.server.api_models`) and checks
(:func:`dprm.server.validation.check_job`), exactly as a JSON request would.

Examples
--------
>>> parameter_value("7", "int"), parameter_value("0.5", "float"), parameter_value("10", "float")
(7, 0.5, 10)
>>> parameter_value("auto", "int"), parameter_value("1e-3", "float")
('auto', 0.001)
>>> parameter_value("true", "bool"), parameter_value("none", "float"), parameter_value("x", "int")
(True, None, 'x')
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

__all__ = ["ParameterField", "job_fields", "parameter_value", "job_key", "job_request", "statistics_request",
           "confidence_value", "confidence_help", "FormError", "repeated_field"]


class FormError(Exception):
    """A form value the API's models refuse: ``message`` is one line for the page."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def repeated_field(fields: Iterable[tuple[str, Any]]) -> str | None:
    """The first name a form sends more than once, or None.

    A page's form sends each field once; a repeated one (``epsilon=0.01&epsilon=0.03``)
    is refused, as the API refuses a repeated query parameter or JSON key: reading its
    last value would run another request than a proxy or a log reader sees.

    Examples
    --------
    >>> repeated_field([("csrf", "t"), ("epsilon", "0.01"), ("epsilon", "0.03")])
    'epsilon'
    >>> repeated_field([("csrf", "t"), ("epsilon", "0.01")]) is None
    True
    """
    seen: set[str] = set()
    for name, _ in fields:
        if name in seen:
            return name
        seen.add(name)
    return None


@dataclass(frozen=True)
class ParameterField:
    """One input of a job form: the miner parameter, its default, kind, choices and help."""

    name: str
    default: Any
    kind: str
    choices: tuple[str, ...]
    help: str

    @property
    def default_text(self) -> str:
        """The default as the input shows it."""
        if self.default is None:
            return "none"
        if isinstance(self.default, bool):
            return "true" if self.default else "false"
        return str(self.default)

    @property
    def label(self) -> str:
        """The parameter's name in words (``init_trials`` → ``init trials``)."""
        return self.name.replace("_", " ")


def job_fields(algorithm: str) -> list[ParameterField]:
    """The inputs of ``algorithm``'s job form: the parameters a server lets analysts set,
    with the miner's help and, where the server allows less, the server's bounds.

    Examples
    --------
    >>> depth = next(f for f in job_fields("alt-expm") if f.name == "depth")
    >>> depth.default_text, depth.kind, depth.help.endswith("on this server: 1 to 7")
    ('auto', 'int', True)
    """
    from dprm.server.validation import (NOT_PRIVATE_VALUES, algorithm_parameters, parameter_limits,
                                        private_algorithms)

    miner_class = private_algorithms()[algorithm][0]
    specs = getattr(miner_class, "parameter_specs", {})
    helps = miner_class.parameter_help() if hasattr(miner_class, "parameter_help") else {}
    fields = []
    for name, default in algorithm_parameters(algorithm).items():
        spec = specs.get(name)
        kind = getattr(spec, "kind", "text") if spec is not None else "text"
        refused = NOT_PRIVATE_VALUES.get(name, ())  # choices the server refuses are not offered
        choices = tuple(c for c in (getattr(spec, "choices", None) or ()) if c not in refused)
        if not isinstance(default, (bool, int, float, str, type(None))):
            default = str(default)
        text = helps.get(name, "")
        limits = parameter_limits(algorithm)
        if name in limits:
            low, high = limits[name]
            text += f"; on this server: {low:,} to {high:,}"
        fields.append(ParameterField(name, default, kind, choices, text))
    return fields


def confidence_help() -> str:
    """The help of the statistics form's ``confidence``: the job form's help of the miners'
    parameter of the same name (:meth:`dprm.mining.base.Miner.parameter_help`'s words).

    Examples
    --------
    >>> confidence_help()
    'Level of the confidence intervals reported beside each noisy statistic; allowed: (0, 1)'
    """
    from dprm.mining.base import CONFIDENCE

    return f"{CONFIDENCE.help}; allowed: {CONFIDENCE.bounds_text()}"


def parameter_value(text: str, kind: str, name: str = "value") -> Any:
    """A parameter's form text as a JSON value for the API (unreadable text stays text,
    for the API's check to name).

    Numbers are read with the command line's rule (:func:`dprm.errors.number_problem`):
    a text Python would read but a JSON number is not (``1_000``, ``３``) is a
    :class:`FormError` naming the parameter ``name``.

    Examples
    --------
    >>> parameter_value("0_5", "float", "min_jaccard")
    Traceback (most recent call last):
    ...
    dprm.server.web.forms.FormError: min-jaccard: '0_5' is not a number: write it without '_' separators
    """
    text = text.strip()
    if text.lower() == "none":
        return None
    if kind == "bool":
        return {"true": True, "on": True, "1": True, "false": False, "off": False, "0": False}.get(text.lower(), text)
    if kind in ("int", "float", "epsilon"):  # a whole number stays whole (as in JSON), others are floats
        _check_number(text, int if kind == "int" else float, name)
        for read in ((int,) if kind == "int" else (int, float)):
            try:
                return read(text)
            except ValueError:
                pass
    return text


def _check_number(text: str, kind: type, name: str) -> None:
    """A :class:`FormError` naming ``name`` when ``text`` is no number by the shared rule."""
    from dprm.errors import number_problem

    problem = number_problem(kind, text)
    if problem is not None:
        raise FormError(f"{name.replace('_', '-')}: {problem}")


def confidence_value(text: str) -> float:
    """The statistics form's ``confidence`` (empty: 0.95), checked as the job form's
    parameter of the same name is: one name and one range, (0, 1)
    (:data:`dprm.mining.base.CONFIDENCE`).

    The text is read as the form's ``epsilon`` is, exactly
    (:func:`dprm.privacy.budget.as_fraction`: a decimal or a fraction ``a/b``), and the
    float it gives must be in the range too (the API takes a float):
    ``0.9999999999999999999`` is below 1 but reads as the float 1.0. A message quotes
    the value as typed.

    Examples
    --------
    >>> confidence_value(""), confidence_value("0.3"), confidence_value("1/2")
    (0.95, 0.3, 0.5)
    >>> confidence_value("1")
    Traceback (most recent call last):
    ...
    dprm.server.web.forms.FormError: confidence must be in (0, 1), not '1'
    >>> confidence_value("0.9999999999999999999")
    Traceback (most recent call last):
    ...
    dprm.server.web.forms.FormError: confidence must be in (0, 1), not '0.9999999999999999999' (it reads as 1.0)
    """
    from dprm.errors import ParameterError, short_repr
    from dprm.mining.base import CONFIDENCE
    from dprm.privacy.budget import as_fraction

    text = text.strip() or "0.95"
    _check_number(text, float, "confidence")
    try:
        exact = as_fraction(text, "confidence")  # finite: "nan", "inf" are refused here
    except ParameterError as error:
        raise FormError(str(error).splitlines()[0][:200]) from None
    value = float(exact)
    try:
        CONFIDENCE.validate(exact)
        CONFIDENCE.validate(value)
    except ParameterError:
        shown = "" if value == exact else f" (it reads as {value!r})"
        raise FormError(f"confidence must be in {CONFIDENCE.bounds_text()}, not {short_repr(text)}{shown}") from None
    return value


def _pydantic_message(error: Any, body: Mapping[str, Any]) -> str:
    """The first problem of a form's request (:func:`dprm.server.api_models.validation_message`), cut to 300
    characters."""
    from dprm.server.api_models import validation_message

    return validation_message(error.errors(), body)[:300]


#: The values a form's checkbox is read from: a browser sends ``on`` for a ticked box and nothing
#: for an unticked one; a client of its own may write the others.
FLAG_VALUES = {"on": True, "true": True, "1": True, "yes": True, "": False, "off": False, "false": False,
               "0": False, "no": False}


def _flag(form: Mapping[str, Any], name: str) -> bool:
    """A checkbox's value; any other text is refused (before, it was read as unticked: a "dummy"
    the form cannot send, such as ``maybe`` or ``on.``, ran on the real rows and was charged).

    Examples
    --------
    >>> _flag({"dummy": "on"}, "dummy"), _flag({}, "dummy"), _flag({"dummy": " True "}, "dummy")
    (True, False, True)
    >>> _flag({"dummy": "maybe"}, "dummy")
    Traceback (most recent call last):
    ...
    dprm.server.web.forms.FormError: dummy must be ticked or not (on or off), not 'maybe'; nothing was charged
    """
    sent = str(form.get(name, ""))
    value = sent.strip().lower()
    if value not in FLAG_VALUES:
        from dprm.errors import short_repr

        raise FormError(f"{name} must be ticked or not (on or off), not {short_repr(sent)}; nothing was charged")
    return FLAG_VALUES[value]


def _common(form: Mapping[str, Any], dataset: str) -> dict[str, Any]:
    body: dict[str, Any] = {"dataset": dataset, "epsilon": str(form.get("epsilon", "")).strip(),
                            "dummy": _flag(form, "dummy")}
    rows = str(form.get("dummy_rows", "")).strip()
    if body["dummy"] and rows:
        _check_number(rows, int, "dummy_rows")
        try:
            body["dummy_rows"] = int(rows)
        except ValueError:
            raise FormError(f"dummy rows must be a whole number, not {rows[:40]!r}") from None
    return body


def job_key(key: str, body: Mapping[str, Any]) -> str | None:
    """The idempotency key of a job form's post: the form's one-time key (drawn when the page
    was rendered) and a digest of what the form asks for; None without a key the pages draw.

    A second post of the same form with the same values (a double click on a slow network, a
    reload, "Run the job" again after the back button, which puts the key back:
    ``static/dprm.js``) returns the first job, charged once. The same key with other values
    (a field changed after the back button) is a new job: not the API's
    ``409 idempotency_key_reused`` of one key sent with two requests.

    Examples
    --------
    >>> body = {"dataset": "tiny", "algorithm": "alt-expm", "epsilon": "0.5", "parameters": {}}
    >>> first = job_key("0123456789abcdef01234567", body)
    >>> first.startswith("web-0123456789abcdef01234567-"), first == job_key("0123456789abcdef01234567", dict(body))
    (True, True)
    >>> first != job_key("0123456789abcdef01234567", {**body, "epsilon": "0.25"}), job_key("guessed", body)
    (True, None)
    """
    from dprm.server.jobs import request_digest

    key = key.strip()
    if not re.fullmatch(r"[0-9a-f]{24}", key):
        return None
    asked = {name: value for name, value in body.items() if name not in ("idempotency_key", "dry_run")}
    return f"web-{key}-{request_digest(asked)[:32]}"


def job_request(form: Mapping[str, Any], dataset: str, *, dry_run: bool) -> Any:
    """The API's :class:`~dprm.server.api_models.JobRequest` of a job form.

    Parameters left empty or equal to their default are not sent (the miner's default
    applies). A value the models refuse is a :class:`FormError`. ``confidence`` is read
    as the statistics form reads its field of the same name (:func:`confidence_value`:
    ``1/2`` is 0.5, a refusal quotes the value as typed); before, the job form sent
    ``1/2`` as text and the API refused it ("must be a number").
    """
    from pydantic import ValidationError

    from dprm.server.api_models import JobRequest
    from dprm.server.validation import private_algorithms

    algorithm = str(form.get("algorithm", ""))
    if algorithm not in private_algorithms():
        raise FormError(f"unknown algorithm {algorithm[:64]!r}", 422)
    parameters = {}
    for field in job_fields(algorithm):
        text = form.get(f"p_{field.name}")
        if text is None or not str(text).strip() or str(text).strip() == field.default_text:
            continue
        if field.name == "confidence":  # one name, one range, one reading on both forms
            parameters[field.name] = confidence_value(str(text))
        else:
            parameters[field.name] = parameter_value(str(text), field.kind, field.name)
    body = {"algorithm": algorithm, "parameters": parameters, "dry_run": dry_run, **_common(form, dataset)}
    body["idempotency_key"] = None if dry_run else job_key(str(form.get("submission", "")), body)
    try:
        return JobRequest(**body)
    except ValidationError as error:
        raise FormError(_pydantic_message(error, body)) from None


def _index_hint(entries: list[Mapping[str, Any]]) -> str:
    """What a parse error of a view's query adds where the view (its public schema) has attribute
    names or categories a query cannot hold: they are written by their index (the first such
    one's, as example).

    Examples
    --------
    >>> _index_hint([{"name": "a"}, {"name": "c", "categories": ["x", "y"]}])
    ''
    >>> print(_index_hint([{"name": "a"}, {"name": "x<y"}, {"name": "[z]"}]))  # doctest: +NORMALIZE_WHITESPACE
    . An attribute whose name a query cannot hold (one of clired's symbols such as < = [ ] &, or a space at
    an end) is written by its index in the view, shown beside it in the schema: e.g. v1
    >>> print(_index_hint([{"name": "a"}, {"name": "c", "categories": ["x", "y, z"]}]))
    ... # doctest: +NORMALIZE_WHITESPACE
    . A category a query cannot hold (one of clired's symbols such as ] < = & | , or a space at an end) is
    written by its index among its attribute's categories, shown beside it in the schema: e.g. [c = #1]
    """
    from dprm.queries.clired_parser import query_category, query_name

    hint = ""
    columns = [str(entry["name"]) for entry in entries]
    index = next((i for i, name in enumerate(columns) if query_name(name, i) != name), None)
    if index is not None:
        hint += (". An attribute whose name a query cannot hold (one of clired's symbols such as < = [ ] &, or a "
                 f"space at an end) is written by its index in the view, shown beside it in the schema: e.g. v{index}")
    for i, entry in enumerate(entries):
        categories = [str(c) for c in entry.get("categories") or []]
        k = next((k for k, c in enumerate(categories) if query_category(c, k) != c), None)
        if k is not None:
            hint += (". A category a query cannot hold (one of clired's symbols such as ] < = & | , or a space at an "
                     "end) is written by its index among its attribute's categories, shown beside it in the schema: "
                     f"e.g. [{query_name(columns[i], i)[:64]} = #{k}]")
            break
    return hint


def _refuse_undeclared_unholdable(side: str, query: Any, columns: list[str], domains: Mapping[str, list[str]]
                                  ) -> None:
    """Refuse a category that its attribute does not declare where the attribute has categories a query
    cannot hold, naming the index form (``[colour = pale]`` typed for the declared ``" pale"``).

    The API would refuse the literal too (its answer is known from the public schema,
    ``outside_domain``), but its message cannot say how such a category is typed. Reads the
    typed query and the public schema only; elsewhere the API's refusal stands.

    Examples
    --------
    >>> from dprm.queries import CategoricalLiteral
    >>> _refuse_undeclared_unholdable("left", CategoricalLiteral("c", "red"), ["a", "c"], {"c": ["red", " pale"]})
    >>> _refuse_undeclared_unholdable("left", CategoricalLiteral("c", "pale"), ["a", "c"], {"c": ["red", " pale"]})
    Traceback (most recent call last):
    ...
    dprm.server.web.forms.FormError: left query: 'pale' is not a declared category of 'c'; a category a query cannot hold (one of clired's symbols such as ] < = & | , or a space at an end) is written by its index among its attribute's categories, shown beside it in the schema: e.g. [c = #1]
    """
    from dprm.queries import CategoricalLiteral
    from dprm.queries.clired_parser import query_category, query_name

    for literal in query.literals():
        declared = domains.get(literal.attr) if isinstance(literal, CategoricalLiteral) else None
        if declared is None or literal.category in declared:
            continue
        k = next((k for k, c in enumerate(declared) if query_category(c, k) != c), None)
        if k is not None:
            name = query_name(literal.attr, columns.index(literal.attr))
            raise FormError(f"{side} query: {str(literal.category)[:64]!r} is not a declared category of "
                            f"{literal.attr[:64]!r}; a category a query cannot hold (one of clired's symbols such "
                            "as ] < = & | , or a space at an end) is written by its index among its attribute's "
                            f"categories, shown beside it in the schema: e.g. [{name[:64]} = #{k}]")


def statistics_request(form: Mapping[str, Any], dataset: str, schema: Mapping[str, Any], *, dry_run: bool) -> Any:
    """The API's :class:`~dprm.server.api_models.StatisticsRequest` of the statistics form.

    The two queries are typed in python-clired / Siren syntax (``[Moose] & ![Arctic
    Fox]``, ``[-5 < tmin_01 < 3]``) and parsed by
    :func:`dprm.queries.clired_parser.parse_clired_query` against the view's
    attribute names and declared categories (a name or category a query cannot hold is
    written by its index: ``[v0]``, ``[colour = #2]``); a parse error is a
    :class:`FormError` naming the side.
    """
    from pydantic import ValidationError

    from dprm.errors import DprmError
    from dprm.queries import query_to_json
    from dprm.queries.clired_parser import parse_clired_query
    from dprm.server.api_models import StatisticsRequest

    queries = {}
    for side in ("left", "right"):
        text = str(form.get(side, "")).strip()
        if not text:
            raise FormError(f"{side} query: type a query in clired syntax, e.g. [Moose] & ![Arctic Fox]")
        if len(text) > 4000:
            raise FormError(f"{side} query: longer than 4000 characters")
        entries = schema["views"].get(side, [])
        columns = [entry["name"] for entry in entries]
        domains = {entry["name"]: [str(c) for c in entry["categories"]] for entry in entries
                   if entry.get("categories") is not None}
        try:
            query = parse_clired_query(text, columns=columns, domains=domains)
        except DprmError as error:  # the reason, not the query the form shows already (a long one hid it)
            reason = str(error).splitlines()[0].removeprefix(f"clired query {text!r}: ")
            raise FormError(f"{side} query: {reason[:300]}{_index_hint(entries)}") from None
        _refuse_undeclared_unholdable(side, query, columns, domains)
        queries[side] = query_to_json(query)
    confidence = confidence_value(str(form.get("confidence", "")))
    body = {"left": queries["left"], "right": queries["right"], "confidence": confidence, "dry_run": dry_run,
            **_common(form, dataset)}
    try:
        return StatisticsRequest(**body)
    except ValidationError as error:
        raise FormError(_pydantic_message(error, body)) from None
