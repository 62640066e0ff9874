"""A types file's reading rules on a table read as text: complete columns, numbers, values outside their domains.

The itemset miner reads a file's cells as written (:mod:`dprm.itemsets.text_table`:
the empty cell and the declared ``na_values`` missing) and encodes them on public
domains (:mod:`dprm.itemsets.domains`). Two more rules of the types file, which the data
layer applies to the typed views (:mod:`dprm.data.encoding`), apply here the same way:

``"complete": true``
    The column has no missing value: one is an error naming the column and the row
    (:func:`check_complete`, code ``missing_in_complete``), whether or not the run
    declares missing values.
``"type": "numeric"`` (and its ``"bounds"``)
    Every value of the column is a number, within its declared bounds
    (:func:`check_numbers`): the data layer's own check of a numeric column
    (:func:`dprm.data.encoding.encode_column`), so that ``dprm itemsets`` refuses what
    ``dprm mine`` and ``dprm classify`` refuse, in their words (``value 'f' is not a
    number (the column is numeric)``, ``value 90 is outside the declared bounds
    [30, 40]``); with ``out_of_bounds: clamp``, a number outside the bounds is clamped
    into them, with the same note. The errors are data-dependent
    (:meth:`dprm.errors.DprmError.public_message` names only the file and column).
``"out_of_bounds": "clamp"`` (``--out-of-bounds clamp``)
    OpenDP's convention (:func:`clamp_to_domains`): a cell of a declared categorical
    column that is not one of its categories becomes a missing value (no item), unless
    the column has no missing value in its domain (declared complete): then it stays
    the error it is without clamping, saying why; a number of a binned column outside
    its bin edges is clamped to the nearer edge (a value that is not a number stays an
    error). Each column where this happened gets a note, without values or counts.

Both read the rows, before anything is learned or released; the notes are for the data
owner (whether one appears depends on the data).

Examples
--------
>>> import pandas as pd
>>> frame = pd.DataFrame({"a": ["x", "z", "y"], "v": ["1", "12", "-3"]})
>>> clamped, notes = clamp_to_domains(frame, {"a": ["x", "y"]}, {"v": [0, 5, 10]}, missing=["a"], source="t.csv")
>>> clamped["a"].tolist(), clamped["v"].tolist()
(['x', nan, 'y'], ['1', 10.0, 0.0])
>>> notes
["t.csv: column 'a': values that are not declared categories read as missing", "t.csv: column 'v': values outside the bin edges [0, 10] clamped into them"]
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from dprm.data.category_text import category_text
from dprm.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["check_complete", "check_numbers", "clamp_to_domains"]


def check_complete(frame: pd.DataFrame, complete: Collection[str], *, source: str, types_source: str) -> None:
    """Refuse a missing value in a column the types file declares complete (the first one, by column order).

    Examples
    --------
    >>> import pandas as pd
    >>> check_complete(pd.DataFrame({"a": ["x", None]}), ["a"], source="t.csv", types_source="types.json")
    Traceback (most recent call last):
    ...
    dprm.errors.DataError: t.csv: column 'a', row 2: a missing value, but types.json declares the column complete
    """
    for name in frame.columns:
        if name in complete:
            absent = np.flatnonzero(frame[name].isna().to_numpy())
            if absent.size:
                row = int(absent[0]) + 1
                raise DataError(f"{source}: column {name!r}, row {row}: a missing value, but {types_source} "
                                f"declares the column complete", code="missing_in_complete", file=source,
                                column=name, row=row)


def check_numbers(frame: pd.DataFrame, numeric: Mapping[str, tuple[float, float] | None], *, clamp: bool,
                  source: str) -> tuple[pd.DataFrame, list[str]]:
    """``frame`` with the columns declared numeric checked (module notes): numbers, within their bounds.

    Parameters
    ----------
    frame : pandas.DataFrame
        The cells as text, a missing cell NaN.
    numeric : mapping of str to (low, high) or None
        The columns the types file declares numeric, and their declared bounds (None: none declared).
    clamp : bool
        ``out_of_bounds: clamp``: a number outside its bounds is clamped into them (a note says so),
        rather than an error.
    source : str
        Names the file in notes and errors.

    Returns
    -------
    (pandas.DataFrame, list of str)
        The table (a copy where a value was clamped, the clamped cells numbers) and the notes.

    Raises
    ------
    DataError
        As :func:`dprm.data.encoding.encode_column` raises it, naming the column, the row and the value
        (codes ``not_a_number``, ``not_finite``, ``value_out_of_bounds``; data-dependent).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"age": ["49", float("nan"), "35"], "sex": ["m", "f", "f"]})
    >>> check_numbers(frame, {"sex": (0.0, 1.0)}, clamp=False, source="t.csv")
    Traceback (most recent call last):
    ...
    dprm.errors.DataError: t.csv: column 'sex', row 1: value 'm' is not a number (the column is numeric)
    >>> check_numbers(frame, {"age": (30.0, 40.0)}, clamp=False, source="t.csv")
    Traceback (most recent call last):
    ...
    dprm.errors.DataError: t.csv: column 'age', row 1: value 49 is outside the declared bounds [30, 40]
    >>> clamped, notes = check_numbers(frame, {"age": (30.0, 40.0)}, clamp=True, source="t.csv")
    >>> clamped["age"].tolist(), notes
    ([40.0, nan, '35'], ["t.csv: column 'age': values outside the declared bounds [30, 40] clamped into them"])
    """
    import pyarrow as pa

    from dprm.data.attributes import AttributeKind
    from dprm.data.encoding import encode_column
    from dprm.data.types_file import ColumnSpec, ColumnType

    notes: list[str] = []
    for name in frame.columns:
        if name not in numeric:
            continue
        cells = frame[name]
        present = cells.notna().to_numpy()
        texts = pa.array([str(cell) if ok else None for cell, ok in zip(cells.tolist(), present)], pa.string())
        bounds = numeric[name]
        before = len(notes)
        attribute = encode_column(name, "left", texts, AttributeKind.NUMERIC,
                                  ColumnSpec(ColumnType.NUMERIC, bounds=bounds), source,
                                  out_of_bounds="clamp" if clamp else "error", notes=notes,
                                  cells_as_written=lambda cells=cells, present=present: [
                                      str(c) if ok else None for c, ok in zip(cells.tolist(), present)])
        if len(notes) > before and bounds is not None:  # clamped: the cells outside become the bound they meet
            import pandas as pd

            numbers = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=float)
            outside = (numbers < bounds[0]) | (numbers > bounds[1])  # NaN (missing) is neither
            changed = cells.astype(object).copy()
            changed[outside] = attribute.values[outside]
            frame = frame.copy()
            frame[name] = changed
    return frame, notes


def clamp_to_domains(frame: pd.DataFrame, domains: Mapping[str, Sequence[object]],
                     bins: Mapping[str, Sequence[float]], *, missing: Collection[str], source: str
                     ) -> tuple[pd.DataFrame, list[str]]:
    """``frame`` with values outside their declared domains clamped (module notes), and one note per column.

    Parameters
    ----------
    frame : pandas.DataFrame
        The cells as text, a missing cell NaN.
    domains : mapping of str to list
        Declared categories (matched by their canonical text, as the encoding does).
    bins : mapping of str to list of float
        Public bin edges of numeric columns.
    missing : collection of str
        The columns whose domain has the missing value; an undeclared category of any
        other declared column stays an error (it could not become missing).
    source : str
        Names the file in notes and errors.

    Returns
    -------
    (pandas.DataFrame, list of str)
        The clamped table (a copy where anything changed) and the notes.
    """
    import pandas as pd

    notes: list[str] = []
    frame = frame.copy()
    for name in frame.columns:
        cells = frame[name]
        present = cells.notna().to_numpy()
        if name in domains:
            declared = {category_text(value) for value in domains[name]}
            texts = cells[present].map(category_text)
            outside = np.zeros(len(cells), dtype=bool)
            outside[np.flatnonzero(present)] = ~texts.isin(declared).to_numpy()
            if not outside.any():
                continue
            if name not in missing:
                at = int(np.flatnonzero(outside)[0])
                raise DataError(f"{source}: column {name!r}, row {at + 1}: value {category_text(cells.iloc[at])!r} is "
                                f"not one of the declared categories (clamping would make it missing, but the types "
                                f"file declares the column complete)", code="unknown_category", file=source,
                                column=name, row=at + 1)
            frame[name] = cells.where(~outside, np.nan)
            notes.append(f"{source}: column {name!r}: values that are not declared categories read as missing")
        elif name in bins:
            edges = [float(e) for e in bins[name]]
            numbers = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=float)
            low, high = numbers < edges[0], numbers > edges[-1]  # NaN (missing, or not a number) is neither
            if not (low.any() or high.any()):
                continue
            clamped = cells.astype(object).copy()
            clamped[low] = edges[0]
            clamped[high] = edges[-1]
            frame[name] = clamped
            notes.append(f"{source}: column {name!r}: values outside the bin edges "
                         f"[{category_text(edges[0])}, {category_text(edges[-1])}] clamped into them")
    return frame, notes
