"""Options converted without pydantic when the conversion is plain: about 0.1 s less per command.

typer (0.29) converts every option's value through a pydantic ``TypeAdapter``, built on
the option's first use: importing pydantic and building the adapters of a command's
two dozen options costs about 0.1 CPU-second, a tenth of a small ``dprm itemsets`` run.
:func:`plain_conversions` gives each option of a command whose type is ``str``,
``bool``, ``int``, ``float``, ``pathlib.Path`` (without checks on the file) or ``List[str]`` a
converter that handles the values whose conversion is plain: a string of digits for
an integer, a decimal number for a float, any text for a string or a path, the
default already of the type. Anything else (a value pydantic would refuse, or accept
only by one of its other rules: spaces, underscores, ``inf``, ``5.0`` for an integer)
is handed to typer's own converter, so every value converts exactly as before (tested
against typer's converter). A number typer's converter refuses too is said in dprm's
words, the value quoted as written (:func:`not_a_number`: ``Invalid value for
'--epsilon': 'abc' is not a number``, not pydantic's ``Input should be a valid
number, unable to parse string as a number``). Options of other types keep typer's
converter, and so does every option under a typer release this module was not
tested against. The subcommands of a group (``dprm datasets make-planted``, ``dprm
remote submit``) get the same converters as a command.

Before either, :func:`~dprm.errors.number_problem` (the rule the web pages' forms
share, in :mod:`dprm.errors`) refuses a number a user would not mean: with ``_``
separators (Python and pydantic read ``--epsilon 1_0`` as 10, ten times the budget of
a typo), in digits of another script (full-width ``５``, Arabic-Indic ``٣``), or an
integer of more than :data:`~dprm.errors.MAX_INTEGER_DIGITS` digits (no option takes
one; Python refuses more than 4300, and a message would echo them all).
:func:`read_number` reads option texts that commands convert themselves by the same rule.

Examples
--------
>>> plain(int, "42"), plain(float, "1e-3"), plain(int, " 4") is UNHANDLED
(42, 0.001, True)
>>> number_problem(float, "1_0"), number_problem(float, "0.5") is None
("'1_0' is not a number: write it without '_' separators", True)
"""

from __future__ import annotations

import os
import re
import typing
from pathlib import Path
from typing import Any

from dprm.errors import MAX_INTEGER_DIGITS, number_problem, short_repr

__all__ = ["MAX_INTEGER_DIGITS", "UNHANDLED", "not_a_number", "number_problem", "plain", "plain_conversions",
           "read_number"]

#: The typer releases whose private converter classes (``typer._coercion``) this module was written and
#: tested against; with any other, typer converts every value itself.
TESTED_TYPER = ("0.29.",)

#: What :func:`plain` returns for a value it leaves to typer's converter.
UNHANDLED: Any = object()

_INTEGER = re.compile(r"-?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: A path option's settings when typer makes no check on the file (its defaults).
_PLAIN_PATH = {"exists": False, "file_okay": True, "dir_okay": True, "writable": False, "readable": True,
               "resolve_path": False, "allow_dash": False, "path_type": None}


def read_number(text: str, kind: type) -> Any:
    """``text`` read as ``kind`` (int or float) by :func:`number_problem`'s rule; ValueError naming the problem.

    For option values a command converts itself (``--thetas 0.1,0.3``, ``--max-depth 3``).

    Examples
    --------
    >>> read_number("007", int), read_number("1e-3", float)
    (7, 0.001)
    >>> read_number("1_000", int)
    Traceback (most recent call last):
    ...
    ValueError: '1_000' is not a number: write it without '_' separators
    """
    problem = number_problem(kind, text)
    if problem is not None:
        raise ValueError(problem)
    return kind(text)


def plain(annotation: Any, value: Any) -> Any:
    """``value`` converted to ``annotation`` when the conversion is plain (module notes), else :data:`UNHANDLED`."""
    if annotation is str:
        return value if type(value) is str else UNHANDLED
    if annotation is bool:  # a flag's value is already a bool (typer converts nothing then)
        return value if type(value) is bool else UNHANDLED
    if annotation is int:
        if type(value) is int:
            return value
        return int(value) if type(value) is str and _INTEGER.fullmatch(value) else UNHANDLED
    if annotation is float:
        if type(value) is float:
            return value
        if type(value) is int:
            return float(value)
        return float(value) if type(value) is str and _DECIMAL.fullmatch(value) else UNHANDLED
    if annotation is Path:
        if isinstance(value, Path):
            return value
        return Path(value) if type(value) is str and value else UNHANDLED
    if typing.get_origin(annotation) is list and typing.get_args(annotation) == (str,):
        if isinstance(value, (tuple, list)) and all(type(v) is str for v in value):
            return list(value)
    return UNHANDLED


def not_a_number(kind: Any, value: Any) -> str | None:
    """The message for the text ``value`` that no rule reads as ``kind`` (int or float); else None.

    What an option says of ``--epsilon abc`` or ``--seed 1.5`` instead of pydantic's
    ``Input should be a valid number, unable to parse string as a number``: the value
    as written (cut to about 40 characters) and what it should be.

    Examples
    --------
    >>> not_a_number(float, "abc"), not_a_number(int, "1.5"), not_a_number(str, "abc")
    ("'abc' is not a number", "'1.5' is not a whole number", None)
    """
    if type(value) is not str or kind not in (int, float):
        return None
    return f"{short_repr(value)} is not a {'whole number' if kind is int else 'number'}"


def plain_conversions(command: Any) -> Any:
    """``command`` (a click command typer built, or a group of them) with the plain converters installed;
    returned as is when typer's internals are not the expected ones (then typer converts every value, as
    always)."""
    import typer

    if not typer.__version__.startswith(TESTED_TYPER):  # internals written against these releases only
        return command
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
    except ImportError:  # another typer: nothing to do
        return command

    class PlainRuntimeParam(RuntimeParam):  # type: ignore[misc, valid-type]
        """Plain values here, the others by typer's converter (built when first needed)."""

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            problem = number_problem(self.annotation, value) or _not_a_file_name(self, value)
            if problem is not None:
                raise typer.BadParameter(problem, ctx=ctx, param=param)
            converted = plain(self.annotation, value)
            if converted is not UNHANDLED:
                return converted
            typer_param = getattr(param, "_dprm_typer_param", None)
            if typer_param is None:
                typer_param = param._dprm_typer_param = build_runtime_param(param.type_descriptor)
            try:
                return typer_param._coerce_value(value, param=param, ctx=ctx)
            except typer.BadParameter:
                refused = not_a_number(self.annotation, value)
                if refused is None:
                    raise
                raise typer.BadParameter(refused, ctx=ctx, param=param) from None

    def install(param: Any) -> None:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", 0) is not None or not _plain_type(descriptor):
            return
        param._runtime_param = PlainRuntimeParam(parameter_info=descriptor.parameter_info,
                                                 annotation=descriptor.annotation)

    try:
        for param in getattr(command, "params", []):
            install(param)
    except (TypeError, AttributeError):  # typer's internals are not the expected ones: typer converts everything
        for param in getattr(command, "params", []):
            if isinstance(getattr(param, "_runtime_param", None), PlainRuntimeParam):
                param._runtime_param = None
        return command
    for subcommand in dict(getattr(command, "commands", None) or {}).values():  # a group's (dprm datasets ...)
        plain_conversions(subcommand)
    help_option = getattr(command, "get_help_option", None)
    if help_option is not None:  # --help is made when the options are parsed: a flag, converted too

        def get_help_option(ctx: Any) -> Any:
            option = help_option(ctx)
            if option is not None:
                install(option)
            return option

        command.get_help_option = get_help_option
    return command


def _not_a_file_name(runtime_param: Any, value: Any) -> str | None:
    """The message for a file option's value that ends with a separator (a directory's name); else None.

    ``Path("out.json/")`` is ``Path("out.json")``: without this, ``-o out.json/`` would
    write a file the user did not name; so would ``-o -`` (a file named ``-``, where
    other tools write to standard output). A file option says ``dir_okay=False``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> file_option = SimpleNamespace(annotation=Path, parameter_info=SimpleNamespace(dir_okay=False))
    >>> _not_a_file_name(file_option, "out.json/")
    "'out.json/' ends with '/', so it names a directory: give a file name"
    >>> _not_a_file_name(file_option, "out.json") is None
    True

    An empty value of any path option is refused too: ``Path("")`` is the current
    directory (``evaluate --out ""`` wrote its experiment there).

    >>> directory_option = SimpleNamespace(annotation=Path, parameter_info=SimpleNamespace(dir_okay=True))
    >>> _not_a_file_name(directory_option, "")
    "the value is empty: give a directory ('.' for the current one)"
    """
    if runtime_param.annotation is not Path:
        return None
    file_only = not getattr(runtime_param.parameter_info, "dir_okay", True)
    if type(value) is str and not value.strip():
        return "the value is empty: " + ("give a file name" if file_only else
                                         "give a directory ('.' for the current one)")
    if not file_only:
        return None
    if type(value) is str and value.endswith(tuple(sep for sep in (os.sep, os.altsep) if sep)):
        return f"{short_repr(value)} ends with {value[-1]!r}, so it names a directory: give a file name"
    if value == "-":  # elsewhere standard output; here it would be a file named "-"
        return "'-' (standard output) is not an output file here: give a file name"
    return None


def _plain_type(descriptor: Any) -> bool:
    """Whether an option's type is one :func:`plain` converts, with no range, choice or file to check."""
    annotation = descriptor.annotation
    try:
        if descriptor.is_choice or descriptor.is_ranged or descriptor.is_file or descriptor.is_tuple:
            return False
    except (AttributeError, TypeError):
        return False
    if annotation is Path:
        info = descriptor.parameter_info
        return all(getattr(info, name, default) == default for name, default in _PLAIN_PATH.items()
                   if name != "dir_okay")  # a file option (dir_okay=False): its checks are the command's
    return annotation in (str, bool, int, float) or (typing.get_origin(annotation) is list
                                               and typing.get_args(annotation) == (str,))
