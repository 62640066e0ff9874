"""The discrete domain of each variable of a density estimate, and the encoding of rows.

A density estimate over discrete variables (:mod:`dprm.itemsets.estimator`) works on
integer codes: the code of a value is its position in the variable's tuple of
categories. A :class:`VariableDomain` holds that tuple (the values as the text
written in the file, the names an itemset reports) and, for a binned numeric
column, the public bin edges.

Where the categories come from
    ``domains={column: [category, ...]}`` declares them (public: a declared domain
    reveals nothing about the rows). A column not declared gets the sorted distinct
    texts of its values in the data (:func:`infer_domains`); that is a property of
    the data, acceptable for the non-private estimate and its t-closeness, which
    are syntactic properties and not differential privacy.
Numeric columns
    A column of numbers (other than one holding only 0 and 1, which is Boolean) is
    refused unless it is binned by public edges, ``bins={column: [e0, e1, ...]}``
    (increasing): bin ``i`` is ``[e_i, e_{i+1})``, the last one closed, and its
    category text is ``"[e_i, e_{i+1})"`` (``"]"`` for the last). A value outside
    ``[e0, e_last]`` is an error. A column may also be made categorical by declaring
    its categories (``domains={"occupation": ["0", "1", ...]}``), the values then
    being matched by their canonical text (:func:`dprm.data.category_text.category_text`).
    A column of integer codes with at most :data:`MAX_INTEGER_CATEGORIES` distinct
    values (categories written as ``1`` .. ``10``) is read as categorical when asked
    (``categorical_integers=True``, ``--categorical-integers``), its categories in
    numeric order; otherwise the one error names every numeric column and which of
    them could be read so. ``categorical_integers=[column, ...]`` asks it of the named
    columns only, which are then read as categorical whatever numbers they hold (at
    most :data:`MAX_CATEGORIES`, in numeric order): the columns a types file declares
    ``categorical`` without listing their categories.
Missing values
    An item is a ``(column, value)`` pair, so a missing value is no item: the row
    holds no item of that column. The estimate still needs every row to have one
    state per column, so a column that may hold missing values has one more state,
    the **missing value**: code ``len(categories)``, the last, which no itemset names
    (:attr:`VariableDomain.missing`). A column's domain has it when the column is
    named in ``missing=`` (a public declaration, data-independent), or, for a column
    whose categories are read off the data, when the data hold a missing value (read
    off the data, like the categories). A missing value in a declared column not
    named in ``missing=`` is an error: its declared domain, which a private estimate
    relies on, has no missing value. Missing means ``None``, ``NaN`` or ``pd.NA`` (the
    empty cell of a CSV file, or a declared marker: :mod:`dprm.itemsets.text_table`);
    a marker that is not declared, such as ``"?"`` in mushroom, is a value like any
    other. How supports and sensitivities stay right with the extra state:
    :mod:`dprm.itemsets.private` (*Missing values*).

Every error is a :class:`~dprm.errors.DataError` or
:class:`~dprm.errors.ParameterError` naming the source, the column, the row (counted
from 1 in the stream) and the value.

Examples
--------
>>> import pandas as pd
>>> frame = pd.DataFrame({"colour": ["red", "blue", "red"], "age": [23.0, 51.5, 70.0]})
>>> domains = infer_domains(frame, bins={"age": [0, 25, 50, 100]})
>>> domains["colour"].categories, domains["age"].categories
(('blue', 'red'), ('[0, 25)', '[25, 50)', '[50, 100]'))
>>> encode_frame(frame, domains).tolist()
[[1, 0], [0, 2], [1, 2]]
>>> domains["age"].decode([0, 2])
['[0, 25)', '[50, 100]']
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from dprm.data.category_text import category_text
from dprm.data.reading import check_column_names
from dprm.errors import DataError, ParameterError, short_repr

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "MAX_CATEGORIES",
    "VariableDomain",
    "bin_labels",
    "infer_domains",
    "encode_frame",
    "declared_domains",
    "missing_columns",
    "DomainCollector",
    "MAX_INTEGER_CATEGORIES",
]

#: The most categories a column may have (a column with more is an identifier or a
#: number, not a discrete variable to estimate a density over).
MAX_CATEGORIES = 1000
#: The most distinct values of a column of integer codes that ``categorical_integers`` reads as categories.
MAX_INTEGER_CATEGORIES = 20


@dataclass(frozen=True)
class VariableDomain:
    """The public categories of one variable, and the bin edges of a binned numeric column.

    Attributes
    ----------
    name : str
        The column name.
    categories : tuple of str
        The values, as the text written in the file (bin labels for a binned column);
        the code of a value is its position here.
    edges : tuple of float or None
        The bin edges of a binned numeric column, else None.
    missing : bool
        Whether the domain has the missing value: one more state, code
        ``len(categories)``, that is no item (the module notes).

    Examples
    --------
    >>> d = VariableDomain("size", ("large", "small"))
    >>> d.size, d.code_of("small"), d.encode(["small", "large"]).tolist()
    (2, 1, [1, 0])
    >>> m = VariableDomain("size", ("large", "small"), missing=True)
    >>> m.size, m.n_items, m.encode(["small", None]).tolist(), m.decode([2, 0])
    (3, 2, [1, 2], [None, 'large'])
    """

    name: str
    categories: tuple[str, ...]
    edges: tuple[float, ...] | None = None
    missing: bool = False

    def __post_init__(self) -> None:
        if len(self.categories) == 0:
            raise ParameterError(f"column {self.name!r}: the domain has no categories")
        if len(set(self.categories)) != len(self.categories):
            raise ParameterError(f"column {self.name!r}: the domain lists a category twice")
        if self.edges is not None and len(self.edges) != len(self.categories) + 1:
            raise ParameterError(f"column {self.name!r}: {len(self.edges)} edges for {len(self.categories)} bins")

    @property
    def size(self) -> int:
        """The number of states: the categories, and the missing value when the domain has it."""
        return len(self.categories) + int(self.missing)

    @property
    def n_items(self) -> int:
        """The number of categories, the values an item may name (codes ``0 .. n_items - 1``)."""
        return len(self.categories)

    @property
    def missing_code(self) -> int | None:
        """The code of the missing value (``len(categories)``), or None when the domain has none."""
        return len(self.categories) if self.missing else None

    @cached_property
    def lookup(self) -> dict[str, int]:
        """Category text -> code."""
        return {text: code for code, text in enumerate(self.categories)}

    def code_of(self, value: object) -> int:
        """The code of one value (a category text, or a number of a binned column)."""
        return int(self.encode([value])[0])

    def encode(self, values: Iterable[object], *, source: str = "the data", first_row: int = 1) -> np.ndarray:
        """The codes of ``values`` (int64); a value outside the domain is a :class:`DataError`.

        A missing value (``None``, ``NaN``, ``pd.NA``) gets :attr:`missing_code`; in a
        domain without the missing value it is a :class:`DataError` naming its row.

        Parameters
        ----------
        values : iterable
            The column's cells.
        source : str
            Names the data in messages.
        first_row : int
            The row number (from 1) of the first value, for messages.
        """
        import pandas as pd

        array = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
        inverse, uniques = pd.factorize(array, use_na_sentinel=True)
        absent = inverse < 0
        if absent.any() and not self.missing:
            row = first_row + int(np.flatnonzero(absent)[0])
            raise DataError(f"{source}: column {self.name!r}, row {row}: missing value, but the column's declared "
                            f"domain has none (it is declared complete, or no missing values are declared: "
                            f"na_values in the types file, --na-values, missing= in Python)",
                            code="missing_in_complete", file=source, column=self.name, row=row)
        if self.edges is not None:
            return self._bin(array, source, first_row, absent)
        lookup = self.lookup
        texts = [category_text(u) for u in uniques]
        # the factorized sentinel -1 (a missing value) picks the last entry: the missing value's code
        unique_codes = np.array([lookup.get(t, -1) for t in texts] + [len(self.categories)], dtype=np.int64)
        codes = unique_codes[inverse]
        if (codes < 0).any():
            at = int(np.flatnonzero(codes < 0)[0])
            shown = ", ".join(self.categories[:8]) + (", ..." if self.size > 8 else "")
            raise DataError(f"{source}: column {self.name!r}, row {first_row + at}: value {texts[inverse[at]]!r} is "
                            f"not one of the categories ({shown})", code="unknown_category", file=source,
                            column=self.name, row=first_row + at)
        return codes

    def decode(self, codes: Iterable[int]) -> list[str | None]:
        """The category texts of ``codes`` (None for the missing value)."""
        return [None if int(c) == len(self.categories) else self.categories[int(c)] for c in codes]

    def texts(self, codes: np.ndarray) -> np.ndarray:
        """The category texts of an array of codes, as an object array (NaN for the missing value)."""
        names = np.array(list(self.categories) + [np.nan], dtype=object)
        return names[np.asarray(codes, dtype=np.int64)]

    def _bin(self, array: pd.Series, source: str, first_row: int, absent: np.ndarray) -> np.ndarray:
        import pandas as pd

        numbers = pd.to_numeric(array, errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(numbers) & ~absent
        if bad.any():
            at = int(np.flatnonzero(bad)[0])
            raise DataError(f"{source}: column {self.name!r}, row {first_row + at}: value {_shown(array.iloc[at])} is not "
                            f"a finite number", code="not_a_number", file=source, column=self.name,
                            row=first_row + at)
        edges = np.asarray(self.edges, dtype=float)
        outside = ((numbers < edges[0]) | (numbers > edges[-1])) & ~absent
        if outside.any():
            at = int(np.flatnonzero(outside)[0])
            raise DataError(f"{source}: column {self.name!r}, row {first_row + at}: value {_shown(array.iloc[at])} is "
                            f"outside the bin edges [{category_text(edges[0])}, {category_text(edges[-1])}]",
                            code="value_out_of_bounds", file=source, column=self.name, row=first_row + at)
        last = len(self.categories) - 1
        codes = np.minimum(np.searchsorted(edges, np.where(absent, edges[0], numbers), side="right") - 1, last)
        return np.where(absent, len(self.categories), codes).astype(np.int64)


def bin_labels(edges: Sequence[float]) -> tuple[str, ...]:
    """The category texts of the bins ``[e_i, e_{i+1})`` (the last one closed).

    Examples
    --------
    >>> bin_labels([0, 2.5, 10])
    ('[0, 2.5)', '[2.5, 10]')
    """
    texts = [category_text(float(e)) for e in edges]
    last = len(texts) - 2
    return tuple(f"[{texts[i]}, {texts[i + 1]}{']' if i == last else ')'}" for i in range(len(texts) - 1))


def _checked_edges(name: str, edges: Sequence[float]) -> tuple[float, ...]:
    try:
        given = list(edges)
        if isinstance(edges, str) or any(isinstance(e, bool | np.bool_) for e in given):  # True: the edge 1.0
            raise TypeError(edges)
        values = tuple(float(e) for e in given)
    except (TypeError, ValueError):
        raise ParameterError(f"bins for column {name!r}: the edges must be numbers") from None
    if len(values) < 2 or not all(np.isfinite(values)) or any(b <= a for a, b in zip(values, values[1:])):
        raise ParameterError(f"bins for column {name!r}: give at least two finite, strictly increasing edges")
    return values


def missing_columns(columns: Sequence[str], missing: Iterable[str] | None) -> frozenset[str]:
    """The columns ``missing=`` declares to have the missing value, checked against ``columns``.

    Examples
    --------
    >>> sorted(missing_columns(["a", "b"], ["b"]))
    ['b']
    >>> missing_columns(["a"], "a")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: missing must be a list of column names, not 'a'
    """
    if missing is None:
        return frozenset()
    if isinstance(missing, str | bytes | Mapping) or not isinstance(missing, Iterable):
        raise ParameterError(f"missing must be a list of column names, not {short_repr(missing)}")
    names = list(missing)
    if not all(isinstance(name, str) for name in names):
        raise ParameterError(f"missing must be a list of column names, not {short_repr(names)}")
    known = set(columns)
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ParameterError(f"missing: no column named {unknown[0]!r} (columns: {', '.join(columns)})")
    return frozenset(names)


def declared_domains(
    columns: Sequence[str],
    domains: Mapping[str, Sequence[object]] | None = None,
    bins: Mapping[str, Sequence[float]] | None = None,
    missing: Iterable[str] | None = None,
) -> dict[str, VariableDomain]:
    """The domains declared for ``columns`` (those neither declared nor binned are left out).

    A column both declared and binned, or a declaration naming no column of the data,
    is a :class:`ParameterError`. The domain of a column named in ``missing`` has the
    missing value (:attr:`VariableDomain.missing`).

    Examples
    --------
    >>> sorted(declared_domains(["a", "b"], domains={"a": ["x", "y"]}))
    ['a']
    >>> declared_domains(["a"], domains={"a": ["x", "y"]}, missing=["a"])["a"].size
    3
    >>> declared_domains(["a"], domains={"a": "xy"})   # not the categories x and y
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: domains['a'] must be a list of categories, not 'xy'
    """
    for what, given in (("domains", domains), ("bins", bins)):
        if given is not None and not isinstance(given, Mapping):
            raise ParameterError(f"{what} must map column names to their {'categories' if what == 'domains' else 'edges'}, "
                                 f"not {type(given).__name__}")
    domains, bins = dict(domains or {}), dict(bins or {})
    known = set(columns)
    for what, given in (("domains", domains), ("bins", bins)):
        unknown = [name for name in given if name not in known]
        if unknown:
            raise ParameterError(f"{what}: no column named {unknown[0]!r} (columns: {', '.join(columns)})")
    both = set(domains) & set(bins)
    if both:
        raise ParameterError(f"column {sorted(both)[0]!r} is given both categories and bins; give one")
    absent = missing_columns(columns, missing)
    result: dict[str, VariableDomain] = {}
    for name in columns:
        if name in bins:
            edges = _checked_edges(name, bins[name])
            result[name] = VariableDomain(name, bin_labels(edges), edges, missing=name in absent)
        elif name in domains:
            categories = domains[name]
            if isinstance(categories, str | bytes) or not isinstance(categories, Iterable):
                raise ParameterError(f"domains[{name!r}] must be a list of categories, not {short_repr(categories)}")
            result[name] = VariableDomain(name, tuple(category_text(v) for v in categories), missing=name in absent)
    return result


def _is_numeric(values: pd.Series) -> bool:
    """Numbers (or texts that all read as numbers) other than a Boolean 0/1 column."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(values):
        return False
    values = values.dropna()
    if len(values) == 0:
        return False
    if pd.api.types.is_numeric_dtype(values):
        numbers = values
    else:
        numbers = pd.to_numeric(values, errors="coerce")
        if numbers.isna().any():
            return False
    return not bool(numbers.isin([0, 1]).all())


class DomainCollector:
    """The distinct values of each column over a stream of chunks, then their domains.

    Used for a file read in chunks: :meth:`add` each chunk, then :meth:`domains`.
    Declared and binned columns are not collected (their values are checked when the
    chunks are encoded). An undeclared column's domain has the missing value when it
    is named in ``missing`` or a chunk holds a missing value in it.

    Examples
    --------
    >>> import pandas as pd
    >>> collector = DomainCollector(["a", "b"], bins={"b": [0, 10]})
    >>> collector.add(pd.DataFrame({"a": ["y", "x"], "b": ["1", "2"]}))
    >>> collector.add(pd.DataFrame({"a": ["z", None], "b": ["3", "4"]}))
    >>> {n: (d.categories, d.missing) for n, d in collector.domains().items()}
    {'a': (('x', 'y', 'z'), True), 'b': (('[0, 10]',), False)}
    """

    def __init__(
        self,
        columns: Sequence[str],
        domains: Mapping[str, Sequence[object]] | None = None,
        bins: Mapping[str, Sequence[float]] | None = None,
        *,
        source: str = "the data",
        categorical_integers: bool | Collection[str] = False,
        missing: Iterable[str] | None = None,
    ) -> None:
        self.columns = [str(c) for c in columns]
        self.categorical_integers, self.categorical = categorical_reading(categorical_integers, self.columns)
        self.declared = declared_domains(self.columns, domains, bins, missing)
        self.source = source
        self._values: dict[str, set[object]] = {n: set() for n in self.columns if n not in self.declared}
        self._numeric: dict[str, bool] = {n: True for n in self._values}
        self._some: dict[str, bool] = {n: False for n in self._values}
        named = missing_columns(self.columns, missing)
        self._missing: dict[str, bool] = {n: n in named for n in self._values}

    def add(self, frame: pd.DataFrame) -> None:
        """Collect the distinct values of one chunk."""
        import pandas as pd

        for name, column in zip(self.columns, frame.columns):
            if name not in self._values:
                continue
            if not self._missing[name] and bool(frame[column].isna().any()):
                self._missing[name] = True  # read off the data, like the categories
            try:
                distinct = pd.Series(pd.unique(frame[column].dropna()))
            except TypeError:  # unhashable cells: lists, dicts, sets
                kind = type(frame[column].dropna().iloc[0]).__name__
                raise DataError(f"{self.source}: column {name!r} holds {kind} values; give text or numbers",
                                code="unsupported_column", file=self.source, column=name) from None
            if len(distinct) == 0:
                continue
            self._some[name] = True
            self._numeric[name] = self._numeric[name] and (
                pd.api.types.is_numeric_dtype(distinct) or pd.to_numeric(distinct, errors="coerce").notna().all()
            ) and not pd.api.types.is_bool_dtype(distinct)
            if len(self._values[name]) <= MAX_CATEGORIES:
                self._values[name].update(distinct.tolist())

    def domains(self) -> dict[str, VariableDomain]:
        """Every column's domain, in column order (see :func:`infer_domains` for the rules)."""
        import pandas as pd

        result: dict[str, VariableDomain] = {}
        numeric: list[str] = []
        integers: list[str] = []
        for name in self.columns:
            if name in self.declared:
                result[name] = self.declared[name]
                continue
            values = self._values[name]
            if not self._some[name]:
                raise DataError(f"{self.source}: column {name!r} has no values", file=self.source, column=name)
            if name in self.categorical and self._numeric[name] and len(values) <= MAX_CATEGORIES:
                texts = sorted({category_text(v) for v in values}, key=float)  # declared categorical: numbers too
                result[name] = VariableDomain(name, tuple(texts), missing=self._missing[name])
                continue
            if self._numeric[name] and (len(values) > MAX_CATEGORIES or _is_numeric(pd.Series(list(values)))):
                if not _few_integers(values):
                    numeric.append(name)
                    continue
                if not self.categorical_integers:
                    integers.append(name)
                    continue
                texts = sorted({category_text(v) for v in values}, key=float)
                result[name] = VariableDomain(name, tuple(texts), missing=self._missing[name])
                continue
            texts = sorted({category_text(v) for v in values})
            if len(texts) > MAX_CATEGORIES:
                raise ParameterError(f"{self.source}: column {name!r} has more than {MAX_CATEGORIES} distinct "
                                     f"values; bin it or leave it out")
            result[name] = VariableDomain(name, tuple(texts), missing=self._missing[name])
        if numeric or integers:
            raise ParameterError(_numeric_message(self.source, numeric, integers))
        return result


def categorical_reading(categorical_integers: bool | Collection[str], columns: Sequence[str]
                        ) -> tuple[bool, frozenset[str]]:
    """``categorical_integers`` as (every column's integer codes read as categories, the columns named).

    ``True`` / ``False`` ask it of every undeclared column or of none; a collection of
    column names (the columns a types file declares ``categorical`` without their
    categories) asks it of those only, whatever numbers they hold.

    Examples
    --------
    >>> categorical_reading(True, ["a", "b"]), categorical_reading(["b"], ["a", "b"])
    ((True, frozenset()), (False, frozenset({'b'})))
    >>> categorical_reading(["c"], ["a", "b"])
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: categorical_integers: no column named 'c' (columns: a, b)
    """
    if isinstance(categorical_integers, bool | np.bool_):
        return bool(categorical_integers), frozenset()
    if isinstance(categorical_integers, str | bytes) or not isinstance(categorical_integers, Iterable):
        raise ParameterError("categorical_integers must be True, False or a list of column names, not "
                             f"{short_repr(categorical_integers)}")
    named = [str(c) for c in categorical_integers]
    unknown = [name for name in named if name not in set(columns)]
    if unknown:
        raise ParameterError(f"categorical_integers: no column named {unknown[0]!r} (columns: {', '.join(columns)})")
    return False, frozenset(named)


def _few_integers(values: set[object]) -> bool:
    """Whether ``values`` are whole numbers, at most :data:`MAX_INTEGER_CATEGORIES` of them."""
    if len(values) > MAX_INTEGER_CATEGORIES:
        return False
    try:
        return all(float(v) == int(float(v)) for v in values)
    except (TypeError, ValueError, OverflowError):
        return False


def _numeric_message(source: str, numeric: list[str], integers: list[str]) -> str:
    """One error for every numeric column: bins for the measured ones, a switch for integer codes.

    Examples
    --------
    >>> print(_numeric_message("t.csv", ["age"], []))
    t.csv: column 'age' is numeric: give its public bin edges (--bins age=e0,e1,... on the command line, bins={'age': [...]} in Python) or declare its categories
    >>> print(_numeric_message("t.csv", [], ["a", "b"]))
    t.csv: columns 'a', 'b' are numeric with at most 20 distinct whole numbers each: read them as categories with --categorical-integers (categorical_integers=True in Python), give public bin edges (--bins a=e0,e1,...) or declare their categories
    """
    def names(columns: list[str]) -> str:
        return ", ".join(repr(c) for c in columns)

    parts = []
    if numeric:
        first = numeric[0]
        parts.append(f"column{'s' if len(numeric) > 1 else ''} {names(numeric)} "
                     f"{'are' if len(numeric) > 1 else 'is'} numeric: give "
                     f"{'their' if len(numeric) > 1 else 'its'} public bin edges (--bins {first}=e0,e1,... on the "
                     f"command line, bins={{{first!r}: [...]}} in Python) or declare "
                     f"{'their' if len(numeric) > 1 else 'its'} categories")
    if integers:
        many = len(integers) > 1
        first = integers[0]
        parts.append(f"{'columns' if many else 'column'} {names(integers)} {'are' if many else 'is'} numeric with at "
                     f"most {MAX_INTEGER_CATEGORIES} distinct whole numbers{' each' if many else ''}: read "
                     f"{'them' if many else 'it'} as categories with --categorical-integers "
                     f"(categorical_integers=True in Python), give public bin edges (--bins {first}=e0,e1,...) or "
                     f"declare {'their' if many else 'its'} categories")
    return f"{source}: " + "; ".join(parts)


def infer_domains(
    frame: pd.DataFrame,
    domains: Mapping[str, Sequence[object]] | None = None,
    bins: Mapping[str, Sequence[float]] | None = None,
    *,
    source: str = "the data",
    categorical_integers: bool | Collection[str] = False,
    missing: Iterable[str] | None = None,
) -> dict[str, VariableDomain]:
    """The domain of every column of ``frame``: declared, binned, or its sorted distinct values.

    Parameters
    ----------
    frame : pandas.DataFrame
        The data (a text file's columns read as text keep the file's spelling).
    domains, bins : mapping, optional
        Declared categories and public bin edges by column (see the module notes).
    source : str
        Names the data in messages.
    categorical_integers : bool or collection of str
        Read a column of at most :data:`MAX_INTEGER_CATEGORIES` distinct integer codes
        as categorical (categories in numeric order) instead of refusing it; a collection
        of column names reads those columns as categorical whatever numbers they hold
        (:func:`categorical_reading`).
    missing : iterable of str, optional
        Columns whose domain has the missing value, whatever the rows hold (public); an
        undeclared column also has it when it holds a missing value (module notes).

    Returns
    -------
    dict of str to VariableDomain
        In the frame's column order.

    Raises
    ------
    ParameterError
        A numeric column that is neither binned nor declared, a column with more than
        :data:`MAX_CATEGORIES` values, or a bad declaration.
    DataError
        A column without any value.
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise ParameterError(f"{source}: must be a pandas DataFrame, not {type(frame).__name__}")
    check_column_names([str(c) for c in frame.columns], source)  # none empty or repeated, at least one
    collector = DomainCollector([str(c) for c in frame.columns], domains, bins, source=source,
                                categorical_integers=categorical_integers, missing=missing)
    collector.add(frame)
    return collector.domains()


def encode_frame(
    frame: pd.DataFrame,
    domains: Mapping[str, VariableDomain],
    *,
    source: str = "the data",
    first_row: int = 1,
) -> np.ndarray:
    """The codes of ``frame``'s rows, one column per domain (in the domains' order).

    A column of the domains missing from the frame, or a value outside its domain,
    is a :class:`DataError`; extra columns of the frame are ignored.

    Returns
    -------
    numpy.ndarray of int64, shape (n_rows, len(domains))
    """
    names = {str(c): c for c in frame.columns}
    codes = np.empty((len(frame), len(domains)), dtype=np.int64)
    for j, (name, domain) in enumerate(domains.items()):
        if name not in names:
            raise DataError(f"{source}: no column {name!r}", code="data_error", file=source, column=name)
        codes[:, j] = domain.encode(frame[names[name]].reset_index(drop=True), source=source, first_row=first_row)
    return codes


def _shown(value: Any) -> str:
    """``repr`` of a cell for a message, numpy scalars as plain Python values (``-3.5``, not ``np.float64(-3.5)``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)
