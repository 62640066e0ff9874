"""The types file: the data owner's declaration of column types and public domains.

A types file (JSON or TOML) says, per column, which kind of attribute it is and,
optionally, its *public domain*: the bounds of a numeric column, the categories of a
categorical one. A declared domain is public knowledge that does not depend on the
rows, which is what a private run needs; a domain read off the data is not.

The format (see ``docs/data.md``)::

    {
      "id_column": "patient",
      "columns": {
        "age":    {"type": "numeric", "bounds": [0, 120]},
        "sex":    {"type": "categorical", "categories": ["female", "male"]},
        "smoker": "boolean",
        "notes":  "ignore"
      }
    }

A column entry is either a type name or a table with ``type`` and, for numeric
columns, ``bounds``, for categorical ones ``categories``. ``type`` may be left out
when ``bounds`` or ``categories`` say it. ``"complete": true`` declares that the
column has no missing value (a public fact the normal form of queries may use; a
missing value is then an error when the data are read). Columns not named are
typed by inference.

Two top-level keys say how the files are read: ``na_values`` (the texts that mark a
missing value, besides the empty cell) and ``out_of_bounds`` (``"error"`` or
``"clamp"``: what a value outside its declared domain does).

Every problem is a :class:`~dprm.errors.DataError` with code ``"bad_types_file"``
(``"file_not_found"`` for a missing file); its message names the types file and
the column, and depends only on the types file, not on the data.
"""

from __future__ import annotations

import json
import math
import sys
import re
import tomllib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from dprm.data.attributes import AttributeKind, valid_bounds
from dprm.data.category_text import NONZERO_DIGITS, category_text, underflow_text
from dprm.data.grid import TRANSFORMS
from dprm.errors import DataError, not_utf8, printable_text, short_repr, short_text
from dprm.input_files import read_small_file, regular_file_size
from dprm.json_values import no_duplicate_keys

__all__ = ["ColumnType", "ColumnSpec", "TypesSpec", "read_types_file", "OUT_OF_BOUNDS", "MAX_TYPES_FILE_BYTES"]


class ColumnType(StrEnum):
    """What the types file may say a column is."""

    BOOLEAN = "boolean"
    CATEGORICAL = "categorical"
    NUMERIC = "numeric"
    IGNORE = "ignore"
    ID = "id"

    @property
    def kind(self) -> AttributeKind | None:
        """The attribute kind of this type, or None for ``ignore`` and ``id``."""
        try:
            return AttributeKind(self.value)
        except ValueError:
            return None


@dataclass(frozen=True)
class ColumnSpec:
    """The declaration of one column.

    Parameters
    ----------
    type : ColumnType
        The declared type.
    bounds : tuple of float, optional
        The public ``(low, high)`` of a numeric column.
    categories : tuple of str, optional
        The public categories of a categorical column, in code order.
    complete : bool
        Declared to have no missing value (``"complete": true``); checked when the
        data are read.
    transform : {None, "log", "linear", "integers"}
        A numeric column's public transform: ``"log"``, the private miners cut it at
        thresholds equally spaced in ``log(1 + x)``; ``"linear"``, equally spaced in
        ``x``; ``"integers"``, at whole numbers (counts; :func:`dprm.data.grid.integer_grid`).
        Without one, a private run chooses the grid privately
        (:mod:`dprm.mining.private_grids`).
    """

    type: ColumnType
    bounds: tuple[float, float] | None = None
    categories: tuple[str, ...] | None = None
    complete: bool = False
    transform: str | None = None


_COLUMN_KEYS = {"type", "bounds", "categories", "complete", "transform"}
_TOP_KEYS = {"id_column", "columns", "na_values", "out_of_bounds"}
#: The largest types file read (16 MiB: a declaration of thousands of columns with
#: thousands of categories each is far smaller); a bigger one is refused unread.
MAX_TYPES_FILE_BYTES = 16 << 20
#: The values of ``out_of_bounds`` (types file key and loader argument).
OUT_OF_BOUNDS = ("error", "clamp")


@dataclass(frozen=True)
class TypesSpec:
    """A parsed types file.

    Parameters
    ----------
    columns : dict of str to ColumnSpec
        The declared columns, by name (names are unique across the two views).
    id_column : str, optional
        The id column, when the file names one (by ``id_column`` or ``type: id``).
    source : str
        Where the spec came from, for messages.
    na_values : tuple of str
        Texts that mark a missing value (besides the empty cell), exactly as written.
    out_of_bounds : {"error", "clamp"}, optional
        What a value outside its declared domain does; None when the file does not
        say (the loader's default, ``"error"``, applies).

    Examples
    --------
    >>> spec = TypesSpec.from_mapping({"columns": {"age": {"bounds": [0, 120]}, "x": "ignore"}})
    >>> spec.columns["age"].type, spec.columns["age"].bounds, spec.columns["age"].transform
    (<ColumnType.NUMERIC: 'numeric'>, (0.0, 120.0), None)
    >>> spec.columns["x"].type
    <ColumnType.IGNORE: 'ignore'>
    >>> TypesSpec.from_mapping({"na_values": ["NA", "?"], "out_of_bounds": "clamp"}).na_values
    ('NA', '?')
    """

    columns: dict[str, ColumnSpec] = field(default_factory=dict)
    id_column: str | None = None
    source: str = "<types>"
    na_values: tuple[str, ...] = ()
    out_of_bounds: str | None = None

    def get(self, name: str) -> ColumnSpec | None:
        """The declaration of column ``name``, or None when it is not declared."""
        return self.columns.get(name)

    def check_public_domains(self) -> None:
        """Refuse a column declared without the public domain a private run needs.

        A private miner cuts a numeric column at thresholds taken from its declared
        ``bounds`` (a grid chosen privately between them, or the declared transform's)
        and enumerates a categorical column's declared ``categories``; read off the rows
        instead, they would make the run not private. A column the file does not name
        is not refused here (the run says it is not private, with the reason).

        Raises
        ------
        DataError
            Naming the file and the first such column (code ``bad_types_file``).

        Examples
        --------
        >>> TypesSpec.from_mapping({"columns": {"age": {"bounds": [0, 120]}}}).check_public_domains()
        >>> TypesSpec.from_mapping({"columns": {"visits": "numeric"}}, "t.json").check_public_domains()
        Traceback (most recent call last):
        dprm.errors.DataError: t.json: column 'visits': a private run needs its public 'bounds' \
(declare "bounds": [low, high]; a non-private algorithm reads them off the data)
        """
        needs = {ColumnType.NUMERIC: ("bounds", '"bounds": [low, high]'),
                 ColumnType.CATEGORICAL: ("categories", '"categories": [...]')}
        for name, column in self.columns.items():
            if column.type in needs and getattr(column, needs[column.type][0]) is None:
                key, example = needs[column.type]
                raise DataError(f"{self.source}: column {_name(name)}: a private run needs its public {key!r} "
                                f"(declare {example}; a non-private algorithm reads them off the data)",
                                code="bad_types_file", file=self.source, column=name, data_dependent=False)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "<types>") -> TypesSpec:
        """Validate and parse a types specification given as a mapping.

        Raises
        ------
        DataError
            On any malformed entry, naming ``source`` and the column.
        """
        if not isinstance(data, Mapping):
            raise _bad(source, "a types file must hold a table/object at the top level")
        unknown = set(data) - _TOP_KEYS
        if unknown:
            raise _bad(
                source,
                f"unknown key(s) {_names(unknown)}; a types file has 'id_column', 'columns', "
                f"'na_values' and 'out_of_bounds'",
            )
        id_column = data.get("id_column")
        if id_column is not None and not isinstance(id_column, str):
            raise _bad(source, "'id_column' must be a column name (a string)")
        raw_columns = data.get("columns", {})
        if not isinstance(raw_columns, Mapping):
            raise _bad(source, "'columns' must map column names to their types")
        na_values = data.get("na_values", [])
        if isinstance(na_values, str) or not isinstance(na_values, (list, tuple)) or not all(
            isinstance(v, str) for v in na_values
        ):
            raise _bad(source, f"'na_values' must be a list of texts, got {short_repr(na_values)}")
        for value in na_values:
            if not_utf8(value):  # a JSON escape of a lone surrogate ("\\udcff"): no cell of a UTF-8 file holds it
                raise _bad(source, f"'na_values': '{short_text(printable_text(value))}' is not UTF-8 text")
        out_of_bounds = data.get("out_of_bounds")
        if out_of_bounds is not None and out_of_bounds not in OUT_OF_BOUNDS:
            raise _bad(source, f"'out_of_bounds' must be 'error' or 'clamp', not {short_repr(out_of_bounds)}")
        columns: dict[str, ColumnSpec] = {}
        for name, entry in raw_columns.items():
            spec = _parse_column(str(name), entry, source)
            if spec.type is ColumnType.ID:
                if id_column is not None and id_column != name:
                    raise _bad(source, f"two id columns declared: {_name(id_column)} and {_name(name)}")
                id_column = str(name)
            columns[str(name)] = spec
        if id_column is not None:
            if id_column in columns and columns[id_column].type is not ColumnType.ID:
                raise _bad(
                    source,
                    f"column {_name(id_column)} is the id column but is declared "
                    f"{columns[id_column].type.value}",
                    column=id_column,
                )
            columns[id_column] = ColumnSpec(ColumnType.ID)
        return cls(
            columns=columns,
            id_column=id_column,
            source=source,
            na_values=tuple(na_values),
            out_of_bounds=out_of_bounds,
        )


def read_types_file(path: str | Path) -> TypesSpec:
    """Read a types file (``.json`` or ``.toml``).

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    TypesSpec

    Raises
    ------
    DataError
        When the file is missing, unparsable or malformed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "types.toml"
    >>> _ = p.write_text('[columns]\\nsex = {categories = ["f", "m"]}\\n')
    >>> read_types_file(p).columns["sex"].categories
    ('f', 'm')
    """
    path = Path(path)
    source = str(path)
    suffix = path.suffix.lower()
    regular_file_size(path, source, "types file")  # first: a folder or a device is said to be one, whatever its name
    if suffix not in (".json", ".toml"):
        raise _bad(source, f"unknown types file extension {short_repr(path.suffix)}: use .json or .toml")
    raw = read_small_file(path, source, "types file", MAX_TYPES_FILE_BYTES)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _bad(source, f"is not UTF-8 text (bad byte at offset {exc.start})") from None
    try:
        data = (json.loads(text, object_pairs_hook=no_duplicate_keys, parse_float=_float_as_written,
                           parse_constant=_float_as_written)
                if suffix == ".json" else tomllib.loads(text, parse_float=_float_as_written))
    except json.JSONDecodeError as exc:
        raise _bad(source, f"invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except tomllib.TOMLDecodeError as exc:
        raise _bad(source, f"invalid TOML: {_one_line(str(exc))}") from None
    except ValueError as exc:  # a repeated key, or an integer of more digits than Python converts (4300)
        if "digits" not in str(exc):
            raise _bad(source, f"invalid JSON: {_one_line(str(exc))[:200]}") from None
        raise _bad(source, f"holds an integer of more than {sys.get_int_max_str_digits()} digits; "
                   f"no bound or category needs one") from None
    except RecursionError:
        raise _bad(source, "nested too deeply") from None
    return TypesSpec.from_mapping(data, source=source)


def _parse_column(name: str, entry: Any, source: str) -> ColumnSpec:
    where = _Where(source, name)
    if isinstance(entry, str):
        entry = {"type": entry}
    if not isinstance(entry, Mapping):
        raise where.error("give a type name or a table with 'type', 'bounds', 'categories', 'complete', 'transform'")
    unknown = set(entry) - _COLUMN_KEYS
    if unknown:
        raise where.error(f"unknown key(s) {_names(unknown)}; use 'type', 'bounds', 'categories', 'complete', "
                          f"'transform'")
    complete = entry.get("complete", False)
    if not isinstance(complete, bool):
        raise where.error(f"'complete' must be true or false, got {short_repr(complete)}")
    bounds = entry.get("bounds")
    categories = entry.get("categories")
    if "type" in entry:
        try:
            ctype = ColumnType(str(entry["type"]).lower())
        except ValueError:
            raise where.error(
                f"unknown type {short_repr(entry['type'])}; use one of {', '.join(t.value for t in ColumnType)}"
            ) from None
    elif bounds is not None and categories is None:
        ctype = ColumnType.NUMERIC
    elif categories is not None and bounds is None:
        ctype = ColumnType.CATEGORICAL
    else:
        raise where.error("give its 'type'")
    if bounds is not None and ctype is not ColumnType.NUMERIC:
        raise where.error(f"'bounds' is only for numeric columns, not {ctype.value}")
    if categories is not None and ctype is not ColumnType.CATEGORICAL:
        raise where.error(f"'categories' is only for categorical columns, not {ctype.value}")
    parsed_bounds = None if bounds is None else _parse_bounds(bounds, where)
    transform = entry.get("transform")
    if transform is not None:
        if transform not in TRANSFORMS:
            raise where.error(f"unknown transform {short_repr(transform)}; "
                              f"use one of {', '.join(map(repr, TRANSFORMS))}")
        if ctype is not ColumnType.NUMERIC:
            raise where.error(f"'transform' is only for numeric columns, not {ctype.value}")
        if transform == "log" and (parsed_bounds is None or parsed_bounds[0] < 0):
            raise where.error("'transform': 'log' needs declared 'bounds' with a lower bound of at least 0 "
                              "(the grid is equally spaced in log(1 + x))")
    return ColumnSpec(
        ctype,
        bounds=parsed_bounds,
        categories=None if categories is None else _parse_categories(categories, where),
        complete=complete,
        transform=transform,
    )


def _parse_bounds(bounds: Any, where: _Where) -> tuple[float, float]:
    ok = (
        isinstance(bounds, (list, tuple))
        and len(bounds) == 2
        and all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in bounds)
    )
    if not ok:
        raise where.error(f"'bounds' must be [low, high] with two numbers, got {short_repr(bounds)}")
    try:
        low, high = float(bounds[0]), float(bounds[1])
    except OverflowError:  # an integer beyond float's range
        low, high = math.inf, math.inf
    tiny = next((b for b in bounds if b == 0 and getattr(b, "written", None)), None)
    if tiny is not None:  # 1e-400 was the bound 0 without a word
        raise where.error(f"'bounds': {underflow_text(tiny.written)}")
    if not valid_bounds(low, high):
        shown = f"[{_as_written(bounds[0])}, {_as_written(bounds[1])}]"
        raise where.error(f"'bounds' must be finite with low <= high, got {short_text(shown)}")
    return (low, high)


def _parse_categories(categories: Any, where: _Where) -> tuple[str, ...]:
    if not isinstance(categories, (list, tuple)) or not categories:
        raise where.error(f"'categories' must be a non-empty list, got {short_repr(categories)}")
    out: list[str] = []
    for c in categories:
        if isinstance(c, bool) or not isinstance(c, (str, int, float)):
            raise where.error(f"category {short_repr(c)} is not a string or number")
        if isinstance(c, str) and not c.strip():
            raise where.error(f"category {short_repr(c)} is empty: an empty cell is a missing value, never a category")
        if isinstance(c, str):
            _refuse_control_characters(c, where)
        if isinstance(c, float) and not math.isfinite(c):  # JSON's NaN, Infinity; TOML's nan, inf; 1e999
            spelled = "NaN" if math.isnan(c) else ("Infinity" if c > 0 else "-Infinity")
            raise where.error(f"category {spelled} is not a finite number; a types file takes no NaN or infinity")
        out.append(c if isinstance(c, str) else getattr(c, "written", None) or category_text(c))
    seen: set[str] = set()
    dups = [c for c in out if c in seen or seen.add(c)]  # type: ignore[func-returns-value]
    if dups:
        raise where.error(f"category {short_repr(dups[0])} is listed twice")
    return tuple(out)


def _refuse_control_characters(category: str, where: _Where) -> None:
    """Refuse a declared category holding a control character or a byte that is not UTF-8, as a column's name is
    refused (:func:`dprm.data.reading.check_column_names`): a terminal would act on it when the category is printed
    (an escape sequence recolours or rewrites the output), and no cell of a UTF-8 file holds a lone surrogate.

    Examples
    --------
    >>> _refuse_control_characters("\\x1b[31mred", _Where("t.json", "sex"))
    Traceback (most recent call last):
    ...
    dprm.errors.DataError: t.json: column 'sex': category '\\x1b[31mred' holds the control character '\\x1b'; \
a category cannot hold one (rename it in the data and here)
    """
    if not_utf8(category):
        raise where.error(f"category '{short_text(printable_text(category))}' is not UTF-8 text")
    control = next((c for c in category if unicodedata.category(c) == "Cc"), None)
    if control is not None:
        raise where.error(f"category {short_repr(category)} holds the control character {control!r}; a category "
                          f"cannot hold one (rename it in the data and here)")


class _WrittenFloat(float):
    """A number of a types file that is not finite (``1e400``, read as infinity; ``NaN``), with its text as
    written."""

    written: str


def _float_as_written(text: str) -> float:
    """JSON's and TOML's ``parse_float`` (and JSON's ``parse_constant``): the float of ``text``; one that is not
    finite keeps ``text`` (for the message: ``got [0, 1e400]``, not ``[0, inf]``).

    Examples
    --------
    >>> _float_as_written("1.5"), _float_as_written("1e400").written, _float_as_written("1e-400").written
    (1.5, '1e400', '1e-400')
    """
    value = float(text)
    if math.isfinite(value) and not (value == 0 and re.match(NONZERO_DIGITS, text)):
        return value
    written = _WrittenFloat(value)  # infinite, or not 0 but read as 0 (1e-400): refused as written
    written.written = text
    return written


def _as_written(value: Any) -> str:
    """A bound as the file wrote it, when known (``1e400``), else as Python writes it."""
    return getattr(value, "written", None) or repr(value)


@dataclass(frozen=True)
class _Where:
    """A column of a types file, for messages."""

    source: str
    column: str

    def __str__(self) -> str:
        return f"{self.source}: column {_name(self.column)}"

    def error(self, text: str) -> DataError:
        return _bad(self.source, f"column {_name(self.column)}: {text}", column=self.column)


def _bad(source: str, text: str, column: str | None = None) -> DataError:
    """A malformed types file: the message depends on the types file only."""
    return DataError(
        f"{source}: {text}", code="bad_types_file", file=source, column=column, data_dependent=False
    )


def _names(keys: set[Any]) -> str:
    """The first few of ``keys``, sorted, each quoted short (for messages)."""
    names = sorted(map(str, keys))
    return ", ".join(_name(k) for k in names[:5]) + (", ..." if len(names) > 5 else "")


def _name(name: str) -> str:
    """A column name or key quoted for a message, cut to 60 characters (a name may be huge).

    Examples
    --------
    >>> _name("age"), len(_name("p" * 100_000))
    ("'age'", 60)
    """
    return short_repr(name, 60)


def _one_line(text: str) -> str:
    return " ".join(text.split())
