"""Options that may be given once: a repeated ``--epsilon`` is refused, not overridden.

click (under typer) keeps the last value of an option given twice, so ``dprm mine ...
--epsilon 1 --epsilon 2`` spent a budget of 2 without a word, whichever of the two the
user meant (an alias or a script that sets ``--epsilon`` and a command line that sets
it again). :func:`refuse_repeats` makes every command of the ``dprm`` tree (a group's
subcommands too) refuse the options of :data:`ONCE_ONLY` given more than once, with one
:class:`~dprm.errors.ParameterError` line naming the option and quoting its values,
before any value is converted, any file read or any budget spent.

It reads the order in which click's parser met the options (``parse_args`` returns it,
an option "memorized multiple times" when it appears multiple times: click's documented
contract), so ``--epsilon=1``, ``--epsilon 1`` and any mix of them count alike, and a
value after ``--`` is no option. Repeatable options (``--na-values``, ``--sensitive``)
are not in :data:`ONCE_ONLY` and stay repeatable.

Examples
--------
>>> given_values(["a.csv", "--epsilon", "1", "--seed=3", "--epsilon=2", "--", "--epsilon"], ["--epsilon"])
['1', '2']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from dprm.errors import ParameterError, short_repr

__all__ = ["ONCE_ONLY", "given_values", "refuse_repeats"]

#: Options that a command takes once: the privacy budget, of every command that spends one
#: (``mine``, ``classify``, ``itemsets``, ``remote submit`` and the primitives).
ONCE_ONLY: frozenset[str] = frozenset({"--epsilon"})


def given_values(args: Sequence[str], names: Sequence[str]) -> list[str]:
    """The values written after the option ``names`` (``--x V`` or ``--x=V``) in ``args``, before ``--``."""
    values: list[str] = []
    tokens = iter(args)
    for token in tokens:
        if token == "--":
            break
        for name in names:
            if token == name:
                values.append(next(tokens, ""))
            elif token.startswith(name + "="):
                values.append(token[len(name) + 1:])
    return values


def refuse_repeats(command: Any) -> Any:
    """``command`` (a click command typer built, or a group of them) refusing repeats of :data:`ONCE_ONLY`.

    Returned as is when it has no parser to wrap (then click keeps the last value, as always).
    """
    make_parser = getattr(command, "make_parser", None)
    if make_parser is not None:

        def checked_parser(ctx: Any) -> Any:
            parser = make_parser(ctx)
            parse_args = parser.parse_args

            def parse_once(args: list[str]) -> Any:
                given = list(args)
                parsed = parse_args(args)
                _check_order(parsed, given)
                return parsed

            parser.parse_args = parse_once
            return parser

        command.make_parser = checked_parser
    for subcommand in dict(getattr(command, "commands", None) or {}).values():
        refuse_repeats(subcommand)
    return command


def _check_order(parsed: Any, args: list[str]) -> None:
    """A :class:`ParameterError` when an option of :data:`ONCE_ONLY` occurs twice in the parser's order."""
    try:
        _, _, order = parsed
    except (TypeError, ValueError):  # another click: nothing to check
        return
    counts = Counter(id(param) for param in order)
    for param in {id(param): param for param in order}.values():
        names = [name for name in getattr(param, "opts", ()) if name in ONCE_ONLY]
        if not names or getattr(param, "multiple", False) or counts[id(param)] < 2:
            continue
        values = given_values(args, list(param.opts) + list(getattr(param, "secondary_opts", ())))
        quoted = ", ".join(short_repr(v) for v in values)
        raise ParameterError(f"{names[0]} is given {counts[id(param)]} times ({quoted}); give it once")
