"""What ``dprm itemsets`` reads of LEARN.csv and its types file before it learns anything.

The file's header and its rows as text (:func:`read_header`, :func:`read_frame`), the
Boolean columns' cells as ``"false"`` / ``"true"`` (:func:`booleans_as_text`), and
what the types file with ``--na-values`` and ``--out-of-bounds`` declares of the
columns (:class:`Declarations`, :func:`public_domains`): the public categories, the
ignored, Boolean and complete columns, and the missing-value markers. Everything here
reads public declarations or raises a one-line error before any budget is spent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dprm.cli.views import na_markers
from dprm.errors import DataError

__all__ = ["BOOLEAN_CATEGORIES", "Declarations", "booleans_as_text", "left_out_reason", "public_domains", "read_frame",
           "read_header"]


def read_header(path: Path) -> list[str]:
    """The column names of a CSV file (a one-line error when it cannot be read)."""
    from dprm.itemsets.text_table import read_text_header

    return read_text_header(path, str(path))


def read_frame(path: Path, columns: list[str], *, allow_empty: bool = False,
               na_values: tuple[str, ...] | None = None) -> Any:
    """The whole CSV as text (the values as written; ``na_values`` and the empty cell missing), only ``columns``;
    no rows is an error unless ``allow_empty``."""
    from dprm.itemsets.text_table import read_text_frame

    return read_text_frame(path, str(path), allow_empty=allow_empty, na_values=na_values)[columns]


#: The categories of a column the types file declares ``boolean``.
BOOLEAN_CATEGORIES = ("false", "true")


def booleans_as_text(frame: Any, names: list[str], source: str) -> Any:
    """``frame`` with each Boolean column's cells as ``"false"`` / ``"true"``.

    A cell is read as the data layer reads Booleans (``0``/``1``, ``false``/``true``,
    ``no``/``yes``, any case); another value is a one-line DataError naming the
    column and row (rows counted from 1 after the header).

    Examples
    --------
    >>> import pandas as pd
    >>> booleans_as_text(pd.DataFrame({"b": ["Yes", "no", float("nan")]}), ["b"], "t.csv")["b"].tolist()
    ['true', 'false', nan]
    """
    import numpy as np

    from dprm.data.inference import BOOLEAN_WORDS

    words = {word: BOOLEAN_CATEGORIES[value] for word, value in BOOLEAN_WORDS.items()}
    frame = frame.copy()
    for name in names:
        cells = frame[name]
        present = cells.notna().to_numpy()
        read = cells.astype(object).where(~present, cells.astype(str).str.strip().str.lower().map(words))
        bad = np.flatnonzero(present & read.isna().to_numpy())
        if bad.size:
            row = int(bad[0]) + 1
            raise DataError(f"{source}: column {name!r}, row {row}: {cells.iloc[bad[0]]!r} is not Boolean "
                            f"(0/1, true/false, yes/no), as the types file declares", code="not_boolean",
                            file=source, column=name, row=row)
        frame[name] = read
    return frame


@dataclass
class Declarations:
    """What the types file (and ``--na-values``, ``--out-of-bounds``) declare of LEARN.csv's columns.

    Attributes
    ----------
    domains : dict of str to list of str
        Declared categories (Boolean columns: :data:`BOOLEAN_CATEGORIES`).
    ignored, booleans, complete : list of str
        Columns of type ``ignore`` / ``id`` (and the ``id_column``), of type ``boolean``, declared ``complete``.
    ids : list of str
        The ignored columns that are the id column (type ``id``, or the ``id_column``): for messages.
    categorical : list of str
        Columns declared ``categorical`` without their categories: read as categories whatever they hold
        (integer codes too; the categories read off the data).
    numeric : dict of str to (float, float) or None
        Columns declared ``numeric`` and their declared bounds (None: none): their values are checked to be
        numbers within them, as ``dprm mine`` checks them (:func:`dprm.itemsets.declarations.check_numbers`).
    markers : tuple of str
        The texts read as missing: the empty cell, ``--na-values`` and the types file's ``na_values``.
    na_values : list of str
        The markers declared (``--na-values``, the types file's ``na_values``), as given: ``[""]`` declares
        that empty cells are missing values.
    clamp : bool
        ``out_of_bounds`` is ``"clamp"`` (the option's, else the types file's).
    source : str or None
        The types file, for messages.
    """

    domains: dict[str, list[str]] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    booleans: list[str] = field(default_factory=list)
    complete: list[str] = field(default_factory=list)
    categorical: list[str] = field(default_factory=list)
    numeric: dict[str, tuple[float, float] | None] = field(default_factory=dict)
    markers: tuple[str, ...] = ("",)
    na_values: list[str] = field(default_factory=list)
    clamp: bool = False
    source: str | None = None

    @property
    def declares_missing(self) -> bool:
        """Whether the run declares that cells may be missing: markers (the empty cell too), or clamping.

        Examples
        --------
        >>> Declarations().declares_missing, Declarations(na_values=["?"]).declares_missing
        (False, True)
        >>> Declarations(na_values=[""]).declares_missing, Declarations(clamp=True).declares_missing
        (True, True)
        """
        return bool(self.na_values) or self.clamp


def public_domains(types: Path | None, columns: list[str], bins: dict[str, list[float]],
                   na_values: list[str] | None = None, out_of_bounds: str | None = None) -> Declarations:
    """What the types file declares (categories, ignored, Boolean and complete columns), with the reading options.

    Categorical columns with categories are declared; Boolean ones have the categories
    :data:`BOOLEAN_CATEGORIES` (their cells are read by :func:`booleans_as_text`);
    ``ignore`` / ``id`` columns are left out; a numeric column needs ``--bins``
    (checked by the estimator), and its values are checked to be numbers within its
    declared bounds (:attr:`Declarations.numeric`). ``na_values`` (``--na-values``, split at commas) and
    ``out_of_bounds`` are combined with the types file's keys as every command combines
    them (:func:`dprm.data.reading.reading_options`).
    """
    from dprm.data.reading import reading_options
    from dprm.data.types_file import ColumnType, TypesSpec, read_types_file

    spec = read_types_file(types) if types is not None else TypesSpec()
    given = na_markers(na_values)
    markers, policy = reading_options(spec, given, out_of_bounds)
    declared = Declarations(markers=markers, na_values=list(dict.fromkeys([*(given or []), *spec.na_values])),
                            clamp=policy == "clamp", source=None if types is None else str(types))
    unknown = [name for name in spec.columns if name not in columns]
    if unknown:
        raise DataError(f"{types}: column {unknown[0]!r} is not in the data (columns: {', '.join(columns)})",
                        file=str(types), column=unknown[0], data_dependent=False)
    for name, column in spec.columns.items():
        if column.type in (ColumnType.IGNORE, ColumnType.ID):
            declared.ignored.append(name)
            if column.type is ColumnType.ID:
                declared.ids.append(name)
            continue
        if column.complete:
            declared.complete.append(name)
        if column.categories is not None and name not in bins:
            declared.domains[name] = list(column.categories)
        elif column.type is ColumnType.BOOLEAN and name not in bins:
            declared.domains[name] = list(BOOLEAN_CATEGORIES)
            declared.booleans.append(name)
        elif column.type is ColumnType.CATEGORICAL and name not in bins:
            declared.categorical.append(name)
        elif column.type is ColumnType.NUMERIC:
            declared.numeric[name] = column.bounds
    if spec.id_column and spec.id_column in columns and spec.id_column not in declared.ignored:
        declared.ignored.append(spec.id_column)
        declared.ids.append(spec.id_column)
    return declared


def left_out_reason(declared: Declarations, name: str, types: Path | None) -> str | None:
    """Why column ``name`` of the file is not mined, when the types file leaves it out (else None).

    Examples
    --------
    >>> print(left_out_reason(Declarations(ignored=["age", "x"], ids=["age"]), "age", Path("t.json")))
    column 'age' is declared the id column in t.json: it is not mined
    >>> left_out_reason(Declarations(ignored=["x"]), "x", Path("t.json"))
    "column 'x' is declared ignore in t.json: it is not mined"
    """
    if name not in declared.ignored:
        return None
    kind = "the id column" if name in declared.ids else "ignore"
    return f"column {name!r} is declared {kind} in {types}: it is not mined"
