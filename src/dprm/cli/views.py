"""The options that load two views, shared by ``mine``, ``inspect``, ``evaluate`` and ``report``.

Each option is declared once here as an ``Annotated`` type; a command lists the ones
it takes and hands them to :func:`load_views`, which loads the views with the data
layer's checks; :func:`print_notes` prints every silent change the data layer made (a
column read as categorical, an empty column left out, a duplicate name renamed, values
clamped) as a ``note:`` line on stderr, so ``mine`` says what ``inspect`` would show.
Commands print them once their own checks have passed, so that a refused command is
still exactly one line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, List, Optional

import typer

from dprm.cli.console import note
from dprm.errors import ParameterError, not_utf8, printable_text, short_repr, short_text

if TYPE_CHECKING:
    from dprm.data import TwoViewData

__all__ = ["LeftView", "RightView", "IdColumn", "TableIdColumn", "TypesFile", "DuplicateColumns", "NaValues",
           "OutOfBounds", "EngineOption", "ShardsOption", "na_markers", "load_views", "print_notes", "check_engine",
           "open_engine"]

LeftView = Annotated[Path, typer.Argument(help="Left view: a CSV or Parquet file.", show_default=False)]
RightView = Annotated[Path, typer.Argument(help="Right view: a CSV or Parquet file, rows aligned by id.",
                                           show_default=False)]
IdColumn = Annotated[Optional[str], typer.Option(
    "--id-column", metavar="NAME",
    help="Id column of both views. Default: the types file's, else a first column of the same name in both.")]
TableIdColumn = Annotated[Optional[str], typer.Option(
    "--id-column", metavar="NAME",
    help="Id column of the table: not a feature. Default: the types file's, else a first column named 'ids'.")]
TypesFile = Annotated[Optional[Path], typer.Option(
    "--types", metavar="FILE",
    help="Types file (JSON/TOML): attribute types and public domains; needed for a private run (docs/data.md).")]
DuplicateColumns = Annotated[str, typer.Option(
    "--duplicate-columns", metavar="rename|error",
    help="A column name twice in one file: 'rename' later ones (with a note) or 'error'.")]


def _na_values_are_text(values: Optional[List[str]]) -> Optional[List[str]]:
    """Refuse a ``--na-values`` that is not UTF-8 text (a marker is compared with a UTF-8 file's cells), as the
    option is parsed: before any file is read or any budget spent.

    Examples
    --------
    >>> _na_values_are_text(["NA,?"])
    ['NA,?']
    >>> try:
    ...     _na_values_are_text([os.fsdecode(b"N\\xff")])
    ... except ParameterError as error:
    ...     print(error)
    --na-values 'N\\xff': not UTF-8 text; a marker is compared with the cells of the UTF-8 file
    """
    for value in values or []:
        if not_utf8(value):
            raise ParameterError(f"--na-values '{short_text(printable_text(value))}': not UTF-8 text; "
                                 f"a marker is compared with the cells of the UTF-8 file")
    return values


NaValues = Annotated[Optional[List[str]], typer.Option(
    "--na-values", metavar="TEXT", callback=_na_values_are_text,
    help="A text that marks a missing value, besides an empty cell (repeatable, or comma-separated). "
         "Nothing else is missing: 'none' or 'NA' are values unless given here or in the types file.")]
OutOfBounds = Annotated[Optional[str], typer.Option(
    "--out-of-bounds", metavar="error|clamp",
    help="A value outside its declared domain: 'error' (stop, naming it) or 'clamp' into the bounds "
         "(an unknown category becomes missing), as OpenDP does. Default: the types file's, else error.")]

EngineOption = Annotated[str, typer.Option(
    "--engine", metavar="in-process|ray[://ADDRESS]",
    help="Where the rows are counted: 'in-process' (default), or 'ray': sharded on Ray actors, each reading its "
         "own part of the files (a local Ray on loopback is started and stopped; 'ray://HOST:PORT' joins a "
         "cluster). Only counts cross between processes (docs/scale-out.md).")]
ShardsOption = Annotated[int, typer.Option(
    "--shards", metavar="N", help="Shards of --engine ray (one Ray actor each).")]

#: Most shards of --engine ray.
MAX_SHARDS = 4096
#: Most shards per core of a local Ray (--engine ray): each shard is a process.
LOCAL_SHARDS_PER_CORE = 4


def na_markers(na_values: Optional[List[str]]) -> list[str] | None:
    """The missing-value markers of repeated and comma-separated ``--na-values``.

    Examples
    --------
    >>> na_markers(["NA,?", "none"]), na_markers(None)
    (['NA', '?', 'none'], None)
    """
    if not na_values:
        return None
    return [part for item in na_values for part in item.split(",")]


def load_views(left: Path, right: Path, *, id_column: str | None = None, types: Path | None = None,
               duplicate_columns: str = "rename", na_values: Optional[List[str]] = None,
               out_of_bounds: str | None = None) -> "TwoViewData":
    """Load two views as the options say (their notes are printed by :func:`print_notes`)."""
    from dprm.data import load_two_view

    if duplicate_columns not in ("rename", "error"):
        raise ParameterError(f"--duplicate-columns must be 'rename' or 'error', not {short_repr(duplicate_columns)}")
    if out_of_bounds not in (None, "error", "clamp"):
        raise ParameterError(f"--out-of-bounds must be 'error' or 'clamp', not {short_repr(out_of_bounds)}")
    data = load_two_view(left, right, id_column=id_column, types=types, duplicate_names=duplicate_columns,
                         na_values=na_markers(na_values), out_of_bounds=out_of_bounds)
    return data


def check_engine(engine: str, shards: int) -> str | None:
    """Check ``--engine`` and ``--shards``; the Ray address (``""`` for a local Ray), or None in-process."""
    if not 1 <= shards <= MAX_SHARDS:
        raise ParameterError(f"--shards must be between 1 and {MAX_SHARDS}, not {shards}")
    if engine == "in-process":
        return None
    if engine == "ray":
        most = LOCAL_SHARDS_PER_CORE * (os.cpu_count() or 1)
        if shards > most:
            raise ParameterError(f"--shards {shards}: a local Ray on this machine runs at most {most} shards "
                                 f"({LOCAL_SHARDS_PER_CORE} per core, one process each); "
                                 f"use a Ray cluster (--engine ray://HOST:PORT) for more")
        return ""
    if engine.startswith("ray://") and len(engine) > len("ray://"):
        _check_ray_address(engine)
        return engine
    raise ParameterError(f"--engine must be 'in-process', 'ray' or 'ray://HOST:PORT', not {engine!r}")


def _check_ray_address(engine: str) -> None:
    """A ``ray://HOST:PORT`` whose port is a port and whose host, if written as an IP address, is one."""
    import ipaddress
    from urllib.parse import urlsplit

    wrong = ParameterError(f"--engine {engine!r}: not a Ray address ray://HOST:PORT (a port from 1 to 65535)")
    try:
        parts = urlsplit(engine)
        port = parts.port
    except ValueError:
        raise wrong from None
    host = parts.hostname or ""
    if port is None or port == 0 or not host or parts.path not in ("", "/"):
        raise wrong
    if host.replace(".", "").isdigit() or ":" in host:
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise ParameterError(f"--engine {engine!r}: {host!r} is not an IP address") from None


def open_engine(address: str, shards: int, left: Path, right: Path, *, id_column: str | None = None,
                types: Path | None = None, duplicate_columns: str = "rename",
                na_values: Optional[List[str]] = None, out_of_bounds: str | None = None):
    """A :class:`~dprm.engine.ray_engine.RayEngine` over the two files, loaded as the options say.

    ``address`` from :func:`check_engine` (``""``: a local Ray). Close it after the run.
    """
    from dprm.engine.ray_engine import RayEngine
    from dprm.engine.sharding import ShardSpec

    for path in (left, right):
        if not path.exists():
            raise ParameterError(f"{path}: no such file")
    spec = ShardSpec.of(left, right, id_column=id_column, types=types, duplicate_names=duplicate_columns,
                        na_values=na_markers(na_values), out_of_bounds=out_of_bounds)
    return RayEngine(spec, shards=shards, address=address or None)


def print_notes(data: "TwoViewData") -> None:
    """Each silent change of the data layer, one ``note:`` line on stderr."""
    for message in data.notes:
        note(message)
