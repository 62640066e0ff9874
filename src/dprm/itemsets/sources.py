"""Where an estimate's rows come from: a CSV file read in chunks, or a stream of rows (mappings).

A CSV file is read twice by :meth:`DensityEstimator.fit
<dprm.itemsets.estimator.DensityEstimator.fit>`: :func:`scan_csv` collects the
domains and checks every value against them (so that a bad value is reported before
anything is learned), then :func:`csv_codes` yields the chunks' code rows to learn.
A small file of categories (the common case) is read once instead, without pandas
(:func:`table_codes`, the same domains and codes). :func:`row_codes` encodes one row
of a stream of mappings.

Examples
--------
>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
>>> _ = path.write_text("a,b\\nx,u\\ny,u\\nx,v\\n")
>>> scan = scan_csv(path, "t.csv", batch_size=2)
>>> scan.n_rows, {name: d.categories for name, d in scan.variables.items()}
(3, {'a': ('x', 'y'), 'b': ('u', 'v')})
>>> [codes.tolist() for codes in csv_codes(path, "t.csv", 2, scan.variables)]
[[[0, 0], [1, 0]], [[0, 1]]]
>>> row_codes(scan.variables, {"a": "y", "b": "v"}, number=4).tolist()
[1, 1]
>>> variables, codes = table_codes(path, "t.csv", 100)
>>> {name: d.categories for name, d in variables.items()}, codes.tolist()
({'a': ('x', 'y'), 'b': ('u', 'v')}, [[0, 0], [1, 0], [0, 1]])
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from dprm.data.arrow_arrays import to_numpy
from dprm.data.category_text import category_text
from dprm.errors import DataError, ParameterError
from dprm.itemsets.domains import (MAX_CATEGORIES, DomainCollector, VariableDomain, declared_domains, encode_frame,
                                   missing_columns)
from dprm.itemsets.text_table import read_text_arrow, read_text_chunks

__all__ = ["CsvScan", "scan_csv", "csv_codes", "row_codes", "surely_text", "table_codes"]

#: Texts that read as numbers although they hold letters other than an exponent's ``e`` (any case, a sign before).
_NUMBER_WORDS = ("inf", "infinity", "nan")


@dataclass(frozen=True)
class CsvScan:
    """What the first reading of a CSV file found.

    Attributes
    ----------
    variables : dict of str to VariableDomain
        Each column's domain: declared, or the values found in the file.
    n_rows : int
        Data rows.
    """

    variables: dict[str, VariableDomain]
    n_rows: int


def scan_csv(path: Path, name: str, batch_size: int, domains: Mapping[str, Sequence[object]] | None = None,
             bins: Mapping[str, Sequence[float]] | None = None, categorical_integers: bool | Collection[str] = False,
             missing: Iterable[str] | None = None) -> CsvScan:
    """Read a CSV file in chunks of ``batch_size`` rows: the columns' domains, every value checked against them.

    A value outside a declared domain is a :class:`~dprm.errors.DataError` naming its
    row; so is a file without data rows, and a missing value (an empty cell) in a
    declared column whose domain has no missing value (``missing``:
    :class:`~dprm.itemsets.domains.DomainCollector`).
    """
    collector: DomainCollector | None = None
    n_rows = 0
    for chunk in read_text_chunks(path, name, batch_size):
        if collector is None:
            collector = DomainCollector(list(chunk.columns), domains, bins, source=name,
                                        categorical_integers=categorical_integers, missing=missing)
        collector.add(chunk)
        encode_frame(chunk, collector.declared, source=name, first_row=n_rows + 1)
        n_rows += len(chunk)
    if collector is None or n_rows == 0:
        raise DataError(f"{name}: the file has no data rows", code="no_rows", file=name)
    return CsvScan(collector.domains(), n_rows)


def csv_codes(path: Path, name: str, batch_size: int, variables: Mapping[str, VariableDomain]) -> Iterator[np.ndarray]:
    """The code rows of a CSV file, one array per chunk of ``batch_size`` rows, in the file's order."""
    seen = 0
    for chunk in read_text_chunks(path, name, batch_size):
        yield encode_frame(chunk, variables, source=name, first_row=seen + 1)
        seen += len(chunk)


def surely_text(value: str) -> bool:
    """Whether no number parser reads ``value`` as a number: no digit at all, or a letter other than ``e``.

    A column with such a value is categorical by :class:`~dprm.itemsets.domains.DomainCollector`'s rule
    (a column is numeric only when every value reads as a number); the words ``inf``,
    ``infinity`` and ``nan`` (any case, signed) are not surely text.

    Examples
    --------
    >>> [surely_text(v) for v in ["a", "x1", "1d5", "-", "1e5", " 2 ", "-Inf", "nan", "1,5"]]
    [True, True, True, True, False, False, False, False, False]
    """
    if value.strip().lower().lstrip("+-") in _NUMBER_WORDS:
        return False
    return not any(ch.isdigit() for ch in value) or any(ch.isalpha() and ch not in "eE" for ch in value)


def table_codes(path: Path, name: str, max_rows: int, domains: Mapping[str, Sequence[object]] | None = None,
                bins: Mapping[str, Sequence[float]] | None = None, missing: Iterable[str] | None = None
                ) -> tuple[dict[str, VariableDomain], np.ndarray] | None:
    """A small file's domains and code rows, read once and without pandas; None when it needs :func:`scan_csv`.

    The common case: at most ``max_rows`` data rows, no bins, no empty cell, every
    column declared (every value one of its categories) or holding a value that is
    :func:`surely_text`, so categorical with its sorted distinct values as categories
    (:class:`~dprm.itemsets.domains.DomainCollector`'s rule, so :func:`scan_csv` and
    :func:`csv_codes` give the same domains and codes). Anything else (numbers,
    integer codes, missing cells, bad values such as one holding a NUL character, or
    bad declarations) returns None and goes through :func:`scan_csv`, which decides
    with pandas and words every error.
    Columns named in ``missing`` have the missing value in their domain (it then
    holds no row here: a file with an empty cell goes through :func:`scan_csv`).
    """
    if bins:
        return None
    read = read_text_arrow(path, name, max_rows, dictionary=True)
    if read is None:
        return None
    columns, cells = read
    try:
        declared = declared_domains(columns, domains, None, missing)
        named = missing_columns(columns, missing)
    except ParameterError:
        return None
    variables: dict[str, VariableDomain] = {}
    codes = np.empty((len(cells[0]), len(columns)), dtype=np.int64)
    for j, (column, array) in enumerate(zip(columns, cells)):
        if array.null_count:
            return None
        chunks = [(chunk.dictionary.to_pylist(), chunk.indices) for chunk in map(_encoded, array.chunks)]
        values = sorted({v for texts, _ in chunks for v in texts})
        if any("\x00" in v for v in values):  # refused, naming its row, by the chunked reading
            return None
        if column in declared:
            variables[column] = declared[column]
        elif len(values) <= MAX_CATEGORIES and any(surely_text(v) for v in values):
            variables[column] = VariableDomain(column, tuple(values), missing=column in named)
        else:
            return None
        lookup = variables[column].lookup
        start = 0
        for texts, indices in chunks:
            recode = np.array([lookup.get(v, -1) for v in texts], dtype=np.int64)
            if (recode < 0).any():
                return None
            codes[start:start + len(indices), j] = recode[to_numpy(indices)]  # not pyarrow's: it imports pandas
            start += len(indices)
    return variables, codes


def _encoded(chunk: pa.Array) -> pa.DictionaryArray:
    """A chunk dictionary-encoded: as pyarrow read it, or encoded here when it came as plain strings.

    pyarrow honours the dictionary column type it is given, but a CI run once received
    one column of ``mushroom.csv`` as plain strings (not reproduced since), so both are
    accepted (``dictionary_encode`` imports ``pyarrow.compute``, only then).
    """
    return chunk if pa.types.is_dictionary(chunk.type) else chunk.dictionary_encode()


def row_codes(variables: Mapping[str, VariableDomain], row: Mapping[str, object], number: int) -> np.ndarray:
    """The code of each column's value in one row of a stream (row ``number``, from 1, named in errors).

    A missing column, or a value outside its column's domain, is a
    :class:`~dprm.errors.DataError`; extra keys are ignored. A missing value (``None``,
    NaN) is the missing value's code where the domain has one (an error otherwise).
    """
    codes = np.empty(len(variables), dtype=np.int64)
    for j, (name, domain) in enumerate(variables.items()):
        if name not in row:
            raise DataError(f"the stream: row {number}: no value for column {name!r}", column=name, row=number)
        value = row[name]
        code = domain.lookup.get(value if isinstance(value, str) else category_text(value)) \
            if domain.edges is None and not _is_missing(value) else None
        # the slow path bins numbers and words the error of a value outside the domain
        codes[j] = code if code is not None else domain.encode([value], source="the stream", first_row=number)[0]
    return codes


def _is_missing(value: object) -> bool:
    """``None`` or a float NaN (``pd.NA`` too): a missing value of a stream's row.

    Examples
    --------
    >>> [_is_missing(v) for v in (None, float("nan"), "nan", 0)]
    [True, True, False, False]
    """
    if value is None:
        return True
    if isinstance(value, float):
        return value != value
    return type(value).__name__ == "NAType"
