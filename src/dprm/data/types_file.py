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
when ``bounds`` or ``categories`` say it. Columns not named are typed by inference.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from dprm.data.attributes import AttributeKind
from dprm.data.category_text import category_text
from dprm.errors import DataError

__all__ = ["ColumnType", "ColumnSpec", "TypesSpec", "read_types_file"]


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
    """

    type: ColumnType
    bounds: tuple[float, float] | None = None
    categories: tuple[str, ...] | None = None


_COLUMN_KEYS = {"type", "bounds", "categories"}
_TOP_KEYS = {"id_column", "columns"}


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

    Examples
    --------
    >>> spec = TypesSpec.from_mapping({"columns": {"age": {"bounds": [0, 120]}, "x": "ignore"}})
    >>> spec.columns["age"]
    ColumnSpec(type=<ColumnType.NUMERIC: 'numeric'>, bounds=(0.0, 120.0), categories=None)
    >>> spec.columns["x"].type
    <ColumnType.IGNORE: 'ignore'>
    """

    columns: dict[str, ColumnSpec] = field(default_factory=dict)
    id_column: str | None = None
    source: str = "<types>"

    def get(self, name: str) -> ColumnSpec | None:
        """The declaration of column ``name``, or None when it is not declared."""
        return self.columns.get(name)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "<types>") -> TypesSpec:
        """Validate and parse a types specification given as a mapping.

        Raises
        ------
        DataError
            On any malformed entry, naming ``source`` and the column.
        """
        if not isinstance(data, Mapping):
            raise DataError(f"{source}: a types file must hold a table/object at the top level")
        unknown = set(data) - _TOP_KEYS
        if unknown:
            raise DataError(
                f"{source}: unknown key(s) {_names(unknown)}; a types file has "
                f"'id_column' and 'columns'"
            )
        id_column = data.get("id_column")
        if id_column is not None and not isinstance(id_column, str):
            raise DataError(f"{source}: 'id_column' must be a column name (a string)")
        raw_columns = data.get("columns", {})
        if not isinstance(raw_columns, Mapping):
            raise DataError(f"{source}: 'columns' must map column names to their types")
        columns: dict[str, ColumnSpec] = {}
        for name, entry in raw_columns.items():
            spec = _parse_column(str(name), entry, source)
            if spec.type is ColumnType.ID:
                if id_column is not None and id_column != name:
                    raise DataError(
                        f"{source}: two id columns declared: {id_column!r} and {name!r}"
                    )
                id_column = str(name)
            columns[str(name)] = spec
        if id_column is not None:
            if id_column in columns and columns[id_column].type is not ColumnType.ID:
                raise DataError(
                    f"{source}: column {id_column!r} is the id column but is declared "
                    f"{columns[id_column].type.value}"
                )
            columns[id_column] = ColumnSpec(ColumnType.ID)
        return cls(columns=columns, id_column=id_column, source=source)


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
    if suffix not in (".json", ".toml"):
        raise DataError(f"{source}: unknown types file extension {path.suffix!r}: use .json or .toml")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise DataError(f"{source}: is a directory, not a types file") from None
    except OSError as exc:
        raise DataError(f"{source}: cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"{source}: is not UTF-8 text (bad byte at offset {exc.start})") from None
    try:
        data = json.loads(text) if suffix == ".json" else tomllib.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{source}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"{source}: invalid TOML: {_one_line(str(exc))}") from None
    return TypesSpec.from_mapping(data, source=source)


def _parse_column(name: str, entry: Any, source: str) -> ColumnSpec:
    where = f"{source}: column {name!r}"
    if isinstance(entry, str):
        entry = {"type": entry}
    if not isinstance(entry, Mapping):
        raise DataError(f"{where}: give a type name or a table with 'type', 'bounds', 'categories'")
    unknown = set(entry) - _COLUMN_KEYS
    if unknown:
        raise DataError(f"{where}: unknown key(s) {_names(unknown)}; use 'type', 'bounds', 'categories'")
    bounds = entry.get("bounds")
    categories = entry.get("categories")
    if "type" in entry:
        try:
            ctype = ColumnType(str(entry["type"]).lower())
        except ValueError:
            raise DataError(
                f"{where}: unknown type {entry['type']!r}; use one of "
                f"{', '.join(t.value for t in ColumnType)}"
            ) from None
    elif bounds is not None and categories is None:
        ctype = ColumnType.NUMERIC
    elif categories is not None and bounds is None:
        ctype = ColumnType.CATEGORICAL
    else:
        raise DataError(f"{where}: give its 'type'")
    if bounds is not None and ctype is not ColumnType.NUMERIC:
        raise DataError(f"{where}: 'bounds' is only for numeric columns, not {ctype.value}")
    if categories is not None and ctype is not ColumnType.CATEGORICAL:
        raise DataError(f"{where}: 'categories' is only for categorical columns, not {ctype.value}")
    return ColumnSpec(
        ctype,
        bounds=None if bounds is None else _parse_bounds(bounds, where),
        categories=None if categories is None else _parse_categories(categories, where),
    )


def _parse_bounds(bounds: Any, where: str) -> tuple[float, float]:
    ok = (
        isinstance(bounds, (list, tuple))
        and len(bounds) == 2
        and all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in bounds)
    )
    if not ok:
        raise DataError(f"{where}: 'bounds' must be [low, high] with two numbers, got {bounds!r}")
    low, high = float(bounds[0]), float(bounds[1])
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        raise DataError(f"{where}: 'bounds' must be finite with low <= high, got {bounds!r}")
    return (low, high)


def _parse_categories(categories: Any, where: str) -> tuple[str, ...]:
    if not isinstance(categories, (list, tuple)) or not categories:
        raise DataError(f"{where}: 'categories' must be a non-empty list, got {categories!r}")
    out: list[str] = []
    for c in categories:
        if isinstance(c, bool) or not isinstance(c, (str, int, float)):
            raise DataError(f"{where}: category {c!r} is not a string or number")
        out.append(c if isinstance(c, str) else category_text(c))
    seen: set[str] = set()
    dups = [c for c in out if c in seen or seen.add(c)]  # type: ignore[func-returns-value]
    if dups:
        raise DataError(f"{where}: category {dups[0]!r} is listed twice")
    return tuple(out)


def _names(keys: set[Any]) -> str:
    return ", ".join(repr(k) for k in sorted(map(str, keys)))


def _one_line(text: str) -> str:
    return " ".join(text.split())
