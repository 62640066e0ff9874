"""The miners' parameters as command-line options, generated from the miners themselves.

``dprm mine`` (every algorithm) and ``dprm remote submit`` (the private ones a server
runs) take the same miner options. They are not written out by hand: each is built
from the miners' signatures (kind and default per algorithm) and their parameter
specs (help in words, unit, allowed range: :func:`dprm.mining.parameter_help`), so
a parameter added to a miner is an option of both commands at once. Each command's
help speaks of its own algorithms only (``remote submit`` never names cartwheels'
meanings or limits).
"""

from __future__ import annotations

import inspect
from functools import lru_cache
from typing import Any, Callable, Mapping, Optional

import typer

from dprm.cli.coercion import read_number
from dprm.errors import ParameterError, short_repr

__all__ = ["option_table", "option_parameters", "given_parameters", "with_options"]

#: ``{algorithm: (miner class, parameters fixed by the algorithm's name)}``, as ``dprm.mining.ALGORITHMS``.
Algorithms = Mapping[str, tuple[type, Mapping[str, Any]]]


def _kind(annotation: Any) -> str:
    """The kind of a miner parameter from its annotation: bool, int, float, int-or-auto, float-or-auto or str."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    kinds = {part.strip() for part in text.split("|")} - {"None"}
    if kinds == {"bool"}:
        return "bool"
    if kinds == {"int", "str"}:
        return "int-or-auto"
    if kinds == {"float", "str"}:
        return "float-or-auto"
    for kind in ("float", "int", "str"):
        if kind in kinds:
            return kind
    return "str"


def option_table(algorithms: Algorithms) -> dict[str, dict[str, Any]]:
    """Every miner parameter: its kind and the algorithms it applies to, with their defaults.

    Examples
    --------
    >>> from dprm.mining import ALGORITHMS
    >>> table = option_table(ALGORITHMS)
    >>> table["depth"]["kind"], table["depth"]["defaults"]["cartwheels"]   # "auto": the private tree miners
    ('int-or-auto', 4)
    >>> table["max_clauses"]["kind"]
    'int'
    """
    table: dict[str, dict[str, Any]] = {}
    for algorithm, (miner_class, fixed) in algorithms.items():
        for parameter in list(inspect.signature(miner_class.__init__).parameters.values())[1:]:
            if parameter.name in fixed:
                continue
            kind = _kind(parameter.annotation)
            entry = table.setdefault(parameter.name, {"kind": kind, "defaults": {}, "none": False})
            if kind.endswith("-or-auto"):  # an option takes "auto" if one algorithm does (the others refuse it)
                entry["kind"] = kind
            spec = miner_class.parameter_specs.get(parameter.name)
            if spec is not None and spec.none and spec.kind in ("int", "float"):
                entry["none"] = True  # the text "none" (no such rule) is a value of the option
            entry["defaults"][algorithm] = parameter.default
    return table


def _default_text(defaults: Mapping[str, Any]) -> str:
    """'default 4' or 'default 20; 4 for alt-expm, alt-mcmc'."""
    def shown(value: Any) -> str:
        return "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)

    by_value: dict[str, list[str]] = {}
    for algorithm, value in defaults.items():
        by_value.setdefault(shown(value), []).append(algorithm)
    ordered = sorted(by_value.items(), key=lambda item: -len(item[1]))
    text = f"default {ordered[0][0]}"
    for value, names in ordered[1:]:
        text += f"; {value} for {', '.join(names)}"
    return text


@lru_cache(maxsize=4)
def _helps(algorithms: tuple[str, ...], specs: Callable[[str], Mapping[str, Any]] | None) -> dict[str, str]:
    """The parameters' help over ``algorithms`` only, from ``specs``: what applies to the command's miners."""
    from dprm.mining import parameter_help

    return parameter_help(algorithms, specs)


def option_parameters(algorithms: Algorithms, *, skip: tuple[str, ...] = ("epsilon",),
                      specs: Callable[[str], Mapping[str, Any]] | None = None) -> list[inspect.Parameter]:
    """Keyword parameters with typer options, one per miner parameter (``--init-trials N`` ...).

    The help speaks of ``algorithms`` only, with the meanings and limits ``specs`` gives
    (default: the miners' own, :func:`dprm.mining.parameter_specs`); parameters in
    ``skip`` get no option.
    """
    everyone = set(algorithms)
    helps = _helps(tuple(algorithms), specs)  # e.g. remote submit: what a server's private miners accept
    parameters = []
    for name, entry in option_table(algorithms).items():
        if name in skip:
            continue
        flag = "--" + name.replace("_", "-")
        applies = "" if set(entry["defaults"]) == everyone else f" [{', '.join(entry['defaults'])}]"
        text = f"{helps.get(name, name.replace('_', ' '))} ({_default_text(entry['defaults'])}){applies}"
        kind = entry["kind"]
        if kind == "bool":
            option = typer.Option(None, f"{flag}/--no-{flag[2:]}", help=text, show_default=False)
            annotation: Any = Optional[bool]
        else:
            metavar = {"int": "N", "float": "X", "int-or-auto": "N|auto", "float-or-auto": "X|auto", "str": "TEXT"}[kind]
            if entry["none"]:
                metavar += "|none"
            option = typer.Option(None, flag, metavar=metavar, help=text, show_default=False)
            annotation = Optional[str] if entry["none"] else {"int": Optional[int], "float": Optional[float]}.get(
                kind, Optional[str])
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option,
                                            annotation=annotation))
    return parameters


def given_parameters(algorithms: Algorithms, algorithm: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """The miner parameters given on the command line, converted and checked to apply to ``algorithm``.

    Examples
    --------
    >>> from dprm.mining import ALGORITHMS
    >>> given_parameters(ALGORITHMS, "serenade-es", {"initial_pairs": "5", "extensions": "auto", "depth": None})
    {'initial_pairs': 5, 'extensions': 'auto'}
    """
    miner_class, fixed = algorithms[algorithm]
    accepted = set(miner_class.parameter_names()) - set(fixed)
    table = option_table(algorithms)
    given = {}
    for name, value in values.items():
        if value is None:
            continue
        flag = "--" + name.replace("_", "-")
        if name not in accepted:
            raise ParameterError(f"option {flag} does not apply to {algorithm}")
        kind = table[name]["kind"]
        if table[name]["none"] and isinstance(value, str):  # a text option: "none" or a number
            if value.strip().lower() == "none":
                given[name] = None
                continue
            if kind in ("int", "float"):
                value = _number(value, int if kind == "int" else float, flag)
        if kind == "int-or-auto" and value != "auto":
            try:
                value = read_number(value, int) if isinstance(value, str) else int(value)
            except ValueError:
                raise ParameterError(f"{flag} must be an integer or 'auto', not {short_repr(value)}") from None
        if kind == "float-or-auto" and value != "auto":
            try:
                value = read_number(value, float) if isinstance(value, str) else float(value)
            except ValueError:
                raise ParameterError(f"{flag} must be a number or 'auto', not {short_repr(value)}") from None
        given[name] = value
    return given


def _number(text: str, kind: type, flag: str) -> Any:
    try:
        return read_number(text, kind)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise ParameterError(f"{flag} must be {what} or 'none', not {short_repr(text)}") from None


def with_options(function: Callable[..., None], name: str, options: list[inspect.Parameter]) -> Callable[..., None]:
    """``function`` (whose ``**kwargs`` take the miner options) with ``options`` in its signature.

    Typer reads a command's parameters from ``inspect.signature``, which honours
    ``__signature__``; the returned command splits the values back into the
    function's own parameters and its ``**kwargs``.
    """
    signature = inspect.signature(function, eval_str=True)
    own = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    names = {p.name for p in own}

    def command(**values: Any) -> None:
        function(**{k: v for k, v in values.items() if k in names},
                 **{k: v for k, v in values.items() if k not in names})

    command.__signature__ = signature.replace(parameters=own + options)  # type: ignore[attr-defined]
    command.__doc__ = function.__doc__
    command.__name__ = name
    return command
