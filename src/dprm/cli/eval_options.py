"""What the evaluation commands (``dprm itemsets-eval``, ``dprm classify-eval``) share.

Each writes tables, figures and a report into an output directory, takes its grid as
comma-separated lists and its datasets by name: :data:`OutDir` (the argument),
:func:`number_list`, :func:`dataset_names` and :func:`output_directory` (created if
needed, removed again when the run fails before writing into it).

Examples
--------
>>> number_list("0.1, 0.3", "--thetas", float)
[0.1, 0.3]
>>> number_list("1-3,5", "--depths", int, ranges=True)
[1, 2, 3, 5]
>>> dataset_names(None, "vote,mushroom")
['vote', 'mushroom']
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from dprm.cli.coercion import read_number
from dprm.cli.outputs import check_directory
from dprm.errors import ParameterError, short_repr

__all__ = ["OutDir", "number_list", "dataset_names", "output_directory"]

#: Most integers one range ``A-B`` may name.
MAX_RANGE = 1000

OutDir = Annotated[Path, typer.Argument(metavar="OUT_DIR", show_default=False,
                                        help="Directory for the tables, figures and report (created if needed).")]


def number_list(text: str, option: str, kind: type, *, ranges: bool = False) -> list[Any]:
    """A comma-separated list of numbers of type ``kind``; with ``ranges``, integers also as ``A-B``.

    An entry that is not a number (or a range of at most :data:`MAX_RANGE` + 1 integers),
    or no entry at all, is a one-line :class:`~dprm.errors.ParameterError` naming ``option``.
    """
    values: list[Any] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            if ranges and kind is int and "-" in part[1:]:
                low, high = (read_number(x, int) for x in part.split("-", 1))
                if high < low or high - low > MAX_RANGE:
                    raise ValueError
                values.extend(range(low, high + 1))
            else:
                values.append(read_number(part, kind))
        except ValueError:
            wanted = "whole number or range A-B" if ranges and kind is int else "number"
            raise ParameterError(f"{option}: {short_repr(part)} is not a {wanted}") from None
    if not values:
        raise ParameterError(f"{option}: no value given")
    return values


def dataset_names(datasets: str | None, default: str) -> list[str]:
    """The names of ``--datasets`` (``default`` when not given); an empty or repeated name is an error."""
    names = [d.strip() for d in (datasets or default).split(",")]
    if any(not d for d in names) or len(set(names)) != len(names):
        raise ParameterError(f"--datasets: empty or repeated name in {datasets!r}")
    return names


@contextmanager
def output_directory(out_dir: Path, marker: str, command: str) -> Iterator[Path]:
    """``out_dir``, checked and created if needed; removed again if the block fails and left it empty.

    An existing folder must be empty or hold an earlier result of ``command`` (its file
    ``marker``), whose files a new run replaces: a folder of other files is refused, as
    ``dprm evaluate`` refuses one, so that nothing unrelated is overwritten.
    """
    check_directory(out_dir, create=True)
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / marker).is_file():
        raise ParameterError(f"{out_dir}: not empty and holds no earlier {command} result ({marker}); "
                             "choose another OUT_DIR")
    created = not out_dir.exists()
    if created:
        out_dir.mkdir(parents=True)
    try:
        yield out_dir
    except BaseException:
        if created and out_dir.is_dir() and not any(out_dir.iterdir()):
            out_dir.rmdir()
        raise
