"""The classifier's features: their public domains and the integer codes the trees split on.

A private tree may only split on what the data owner declares public: the categories
of a categorical feature, the bounds of a numeric one. Each feature becomes a column
of small integer codes:

* categorical: the position of the value in its declared categories,
  ``0 .. k-1``; a missing value (``None``, NaN) gets ``k``;
* numeric: ``n_thresholds`` thresholds spread evenly inside the public bounds
  ``[low, high]`` (``low + (high - low) * j / (n_thresholds + 1)``, computed without overflow); a value gets the
  number of thresholds below it, ``0 .. n_thresholds``, so "``x <= t_j``" is
  "``code <= j``"; a missing value gets ``n_thresholds + 1``.

Domains that are not declared are read off the training data; they then depend on
the rows (the set of values present, the extreme values), and
:func:`learn_domains` returns a reason the model is then not private.

Examples
--------
>>> X = np.array([["a", 1.0], ["b", 7.5], [None, 3.0]], dtype=object)
>>> domains, reasons = learn_domains(X, ["f", "g"], categories=[["a", "b"], None],
...                                  bounds=[None, (0.0, 10.0)], n_thresholds=4)
>>> [d.kind for d in domains], reasons
(['categorical', 'numeric'], [])
>>> domains[1].thresholds.tolist()
[2.0, 4.0, 6.0, 8.0]
>>> encode(X, domains, strict=True).tolist()
[[0, 0], [1, 3], [2, 1]]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dprm.data.attributes import Domain, valid_bounds
from dprm.errors import ParameterError, short_repr

__all__ = ["FeatureEncoding", "learn_domains", "encode", "is_missing", "check_labels", "CATEGORICAL", "NUMERIC"]

CATEGORICAL = "categorical"
NUMERIC = "numeric"


@dataclass(frozen=True)
class FeatureEncoding:
    """How one feature becomes integer codes: its name, kind, public domain and thresholds.

    Attributes
    ----------
    name : str
    kind : {"categorical", "numeric"}
    domain : dprm.data.attributes.Domain
        The public domain, as the data layer declares it: the categories of a
        categorical feature (any hashable labels here, in code order) or the
        ``(low, high)`` bounds of a numeric one; ``declared`` is False when it was
        read off the training data (then the model is not private).
    thresholds : numpy.ndarray or None
        Split thresholds inside the bounds (numeric features).

    Examples
    --------
    >>> FeatureEncoding.categorical("colour", ("red", "blue")).n_options
    1
    >>> f = FeatureEncoding.numeric("age", 0.0, 100.0, np.array([25.0, 50.0, 75.0]))
    >>> f.low, f.high, f.from_data, f.describe(1)
    (0.0, 100.0, False, 'in (25, 50]')
    >>> FeatureEncoding.categorical("colour", np.array(["red", "blue"])).describe(1)
    "'blue'"
    """

    name: str
    kind: str
    domain: Domain = Domain(declared=True)
    thresholds: np.ndarray | None = None

    @classmethod
    def categorical(cls, name: str, categories: Sequence[Any], *, declared: bool = True) -> FeatureEncoding:
        """A categorical feature over ``categories`` (code ``i`` is ``categories[i]``)."""
        return cls(name, CATEGORICAL, Domain(categories=tuple(categories), declared=declared))

    @classmethod
    def numeric(cls, name: str, low: float, high: float, thresholds: np.ndarray, *,
                declared: bool = True) -> FeatureEncoding:
        """A numeric feature within ``[low, high]``, split at ``thresholds``."""
        return cls(name, NUMERIC, Domain(bounds=(low, high), declared=declared), thresholds)

    @property
    def categories(self) -> tuple[Any, ...] | None:
        """Declared categories (categorical features)."""
        return self.domain.categories

    @property
    def low(self) -> float | None:
        """Lower public bound (numeric features)."""
        return None if self.domain.bounds is None else self.domain.bounds[0]

    @property
    def high(self) -> float | None:
        """Upper public bound (numeric features)."""
        return None if self.domain.bounds is None else self.domain.bounds[1]

    @property
    def from_data(self) -> bool:
        """The domain was read off the training data (not public)."""
        return not self.domain.declared

    @property
    def n_codes(self) -> int:
        """Codes of present values: categories, or thresholds + 1 bins."""
        if self.kind == CATEGORICAL:
            return len(self.categories or ())
        return len(self.thresholds) + 1 if self.thresholds is not None else 1

    @property
    def missing_code(self) -> int:
        """The code of a missing value (one past the present codes)."""
        return self.n_codes

    @property
    def n_options(self) -> int:
        """Splits this feature offers: one multiway split, or one per threshold."""
        if self.kind == CATEGORICAL:
            return 1 if self.n_codes >= 2 else 0
        return len(self.thresholds) if self.thresholds is not None else 0

    def describe(self, code: int) -> str:
        """The value or range a code stands for, in words."""
        if code == self.missing_code:
            return "missing"
        if self.kind == CATEGORICAL:
            return repr(_plain(self.categories[code]))  # 'x', not np.str_('x') (categories declared as an array)
        t = self.thresholds
        if code == 0:
            return f"<= {t[0]:g}"
        if code == len(t):
            return f"> {t[-1]:g}"
        return f"in ({t[code - 1]:g}, {t[code]:g}]"


def is_missing(value: Any) -> bool:
    """``None``, float NaN and pandas' ``NA`` / ``NaT`` are missing; everything else is a value.

    >>> is_missing(None), is_missing(float("nan")), is_missing(pd.NA), is_missing("?"), is_missing(0)
    (True, True, True, False, False)
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def _column_spec(spec: Any, position: int, name: str, what: str) -> Any:
    """The entry of ``categories`` / ``bounds`` for one column (by name or position)."""
    if spec is None:
        return None
    if isinstance(spec, Mapping):
        if name in spec:
            return spec[name]
        return spec.get(position)
    if isinstance(spec, Sequence) and not isinstance(spec, str):
        return spec[position] if position < len(spec) else None
    raise ParameterError(f"{what} must be a dict by column or a list by position, got {type(spec).__name__}")


def _as_number(value: Any) -> float | None:
    """``value`` as a float if it is a real number (not a string or a Boolean)."""
    if isinstance(value, (bool, np.bool_, str, bytes)):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    return None


def _check_declared(spec: Mapping[Any, Any] | Sequence[Any] | None, names: Sequence[str], what: str) -> None:
    """Refuse declarations for columns that do not exist.

    A key is a column's name or its position: a Python or numpy integer (``1``,
    ``np.int64(1)``). A Boolean is neither: ``True`` would otherwise be taken as
    position 1 (``True == 1`` in a dict), so it is refused.

    Examples
    --------
    >>> _check_declared({"a": [0, 1], np.int64(1): (0, 1)}, ["a", "b"], "bounds")
    >>> _check_declared({True: (0, 1)}, ["a", "b"], "bounds")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: bounds names a column by the Boolean True: give its name or its position (an integer)
    """
    if isinstance(spec, Mapping):
        for key in spec:
            if isinstance(key, (bool, np.bool_)):
                raise ParameterError(f"{what} names a column by the Boolean {_plain(key)!r}: "
                                     f"give its name or its position (an integer)")
            if key not in names and not (isinstance(key, (int, np.integer)) and 0 <= key < len(names)):
                raise ParameterError(f"{what} names unknown column {short_repr(_plain(key))}")
    elif isinstance(spec, Sequence) and not isinstance(spec, str) and len(spec) > len(names):
        raise ParameterError(f"{what} has {len(spec)} entries for {len(names)} columns")


def learn_domains(
    X: np.ndarray,
    names: Sequence[str],
    *,
    categories: Mapping[Any, Sequence[Any]] | Sequence[Sequence[Any] | None] | None = None,
    bounds: Mapping[Any, tuple[float, float]] | Sequence[tuple[float, float] | None] | None = None,
    n_thresholds: int = 16,
    dtype_categories: Mapping[int, Sequence[Any]] | None = None,
) -> tuple[list[FeatureEncoding], list[str]]:
    """Domains of the columns of ``X``: declared where given, else read off the data.

    A column is categorical if ``categories`` declares it, numeric if ``bounds``
    declares it, and otherwise numeric exactly when all its present values are real
    numbers.

    Parameters
    ----------
    X : numpy.ndarray, shape (n_rows, n_features)
        Object or numeric array; ``None`` / NaN are missing.
    names : sequence of str
        Column names (for messages and for ``categories`` / ``bounds`` dicts).
    categories, bounds : dict by column name or position, or list by position
        Public categories of categorical columns, public ``(low, high)`` of numeric
        ones.
    n_thresholds : int
        Thresholds per numeric column.
    dtype_categories : dict by column position, optional
        The categories of a pandas ``category`` column (its dtype's, used or not). A
        categorical domain read off the data holds them too, so that a category no
        training row holds is a known value at prediction (as scikit-learn's encoders
        read a ``category`` dtype), not an unknown one. They are still not a declaration
        (pandas reads them off the values unless told): the fit is not private for it.

    Returns
    -------
    domains : list of FeatureEncoding
    reasons : list of str
        Why the model is not private (domains read off the data); empty if none.

    Raises
    ------
    ParameterError
        A declaration that does not fit (unknown column, bad bounds, a column both
        categorical and numeric).
    """
    _check_declared(categories, names, "categories")
    _check_declared(bounds, names, "bounds")
    domains: list[FeatureEncoding] = []
    from_data: list[str] = []
    for position, name in enumerate(names):
        declared_categories = _column_spec(categories, position, name, "categories")
        declared_bounds = _column_spec(bounds, position, name, "bounds")
        if declared_categories is not None and declared_bounds is not None:
            raise ParameterError(f"column {name!r} is declared both categorical and numeric")
        column = X[:, position]
        if declared_categories is not None:
            values = check_labels(declared_categories, f"categories of column {name!r}")
            domains.append(FeatureEncoding.categorical(name, values))
            continue
        present = list(pd.unique(pd.Series(column, dtype=object).dropna()))
        numbers = [_as_number(v) for v in present]
        numeric = declared_bounds is not None or all(n is not None for n in numbers)
        if numeric:
            if declared_bounds is not None:
                if isinstance(declared_bounds, Sequence | np.ndarray) and any(
                        isinstance(b, bool | np.bool_) for b in declared_bounds):  # as the types file: no Booleans
                    raise ParameterError(f"bounds of column {name!r} must be a pair of numbers (low, high), "
                                         f"not {short_repr(tuple(_plain(b) for b in declared_bounds))}")
                try:
                    low, high = (float(b) for b in declared_bounds)
                except OverflowError:  # an integer beyond the floats (10**400)
                    low = high = math.inf
                except (TypeError, ValueError):
                    raise ParameterError(f"bounds of column {name!r} must be a pair (low, high)") from None
                if not valid_bounds(low, high):  # the types file's rule (docs/data.md): low == high is one value
                    shown = short_repr(tuple(_plain(b) for b in declared_bounds))
                    raise ParameterError(f"bounds of column {name!r} must be finite with low <= high, got {shown}")
                read = False
            else:
                finite = [n for n in numbers if n is not None and math.isfinite(n)]
                low, high = (min(finite), max(finite)) if finite else (0.0, 1.0)
                if low == high:
                    low, high = low - 0.5, high + 0.5
                read = True
                from_data.append(name)
            # as a convex combination: high - low overflows for bounds near ±1.8e308; a column of one
            # declared value (low == high) has nothing to split
            share = np.arange(1, n_thresholds + 1 if low < high else 1) / (n_thresholds + 1)
            grid = low * (1 - share) + high * share
            domains.append(FeatureEncoding.numeric(name, low, high, grid, declared=not read))
        else:
            known = set(present) | set((dtype_categories or {}).get(position, ()))
            try:
                values = tuple(sorted(known))
            except TypeError:
                values = tuple(sorted(known, key=repr))
            domains.append(FeatureEncoding.categorical(name, values, declared=False))
            from_data.append(name)
    reasons = []
    if from_data:
        shown = ", ".join(repr(n) for n in from_data[:5]) + (" ..." if len(from_data) > 5 else "")
        reasons.append(
            f"feature domains read off the data (declare categories or bounds): {shown}"
        )
    return domains, reasons


def encode(X: np.ndarray, domains: Sequence[FeatureEncoding], *, strict: bool) -> np.ndarray:
    """Integer codes, shape ``(n_rows, n_features)``, int32 (module docstring).

    Parameters
    ----------
    X : numpy.ndarray
        Same columns as the domains.
    domains : sequence of FeatureEncoding
    strict : bool
        True when fitting: a value outside its declared domain (an unknown category,
        a number outside the bounds, a non-finite number) raises. False when
        predicting: a category outside *declared* categories still raises, as in
        fitting (scikit-learn's encoders' ``handle_unknown="error"``: the declaration
        says which values exist); a category the training data did not hold, where
        the categories were read off it, gets code ``-1`` (a test ``a = v`` sends it
        to the other categories' branch, a multiway split to the missing values', as
        scikit-learn's histogram gradient boosting treats unknown categories as
        missing); numbers are clipped into the bounds; non-finite numbers still raise.

    Raises
    ------
    ParameterError
        Naming the column and the value.

    Examples
    --------
    >>> colour = FeatureEncoding.categorical("colour", ("red", "blue"))
    >>> encode(np.array([["blue"], ["green"]], dtype=object), [colour], strict=False)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: column 'colour': value 'green' is not one of its declared categories
    >>> seen = FeatureEncoding.categorical("colour", ("red", "blue"), declared=False)
    >>> encode(np.array([["blue"], ["green"]], dtype=object), [seen], strict=False).tolist()
    [[1], [-1]]
    """
    n_rows = X.shape[0]
    codes = np.empty((n_rows, len(domains)), dtype=np.int32)
    for position, domain in enumerate(domains):
        column = X[:, position]
        if domain.kind == CATEGORICAL:
            series = pd.Series(column, dtype=object)
            missing = series.isna().to_numpy()
            found = pd.Categorical(series, categories=list(domain.categories or ())).codes.astype(np.int32)
            unknown = (found < 0) & ~missing
            if (strict or not domain.from_data) and unknown.any():
                value = column[int(np.flatnonzero(unknown)[0])]
                raise ParameterError(
                    f"column {domain.name!r}: value {short_repr(_plain(value))} is not one of its declared categories"
                )
            codes[:, position] = np.where(missing, domain.missing_code, found)
            continue
        series = pd.Series(column, dtype=object)
        try:
            numbers = series.where(~series.isna(), np.nan).astype(np.float64).to_numpy()
        except (TypeError, ValueError):
            why = "declared numeric (bounds)" if not domain.from_data else "numeric"
            raise ParameterError(f"column {domain.name!r} is {why} but holds a value that is not a number"
                                 + ("" if domain.from_data else "; declare its categories instead")) from None
        missing = np.isnan(numbers)
        if np.any(np.isinf(numbers)):
            raise ParameterError(f"column {domain.name!r} holds a non-finite value (inf); features must be finite")
        present = numbers[~missing]
        if strict and present.size and (present.min() < domain.low or present.max() > domain.high):
            bad = present[(present < domain.low) | (present > domain.high)][0]
            raise ParameterError(f"column {domain.name!r}: value {bad:g} is outside its declared bounds "
                                 f"[{domain.low:g}, {domain.high:g}]")
        binned = np.searchsorted(domain.thresholds, np.where(missing, 0.0, numbers), side="left")
        codes[:, position] = np.where(missing, domain.missing_code, binned)
    return codes


def check_labels(given: Any, what: str) -> tuple[Any, ...]:
    """``given`` as a tuple of distinct, present, hashable scalar labels, or a :class:`ParameterError`.

    A string is refused rather than split into its characters.

    Examples
    --------
    >>> check_labels(["a", 1], "classes")
    ('a', 1)
    >>> check_labels("ab", "classes")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: classes must be a list of labels, not the string 'ab'
    """
    if isinstance(given, str | bytes):
        raise ParameterError(f"{what} must be a list of labels, not the string {short_repr(_plain(given))}")
    try:
        values = tuple(given)
    except TypeError:
        raise ParameterError(f"{what} must be a list of labels, not {type(given).__name__}") from None
    for value in values:
        if isinstance(value, list | tuple | set | dict | np.ndarray) or is_missing(value):
            raise ParameterError(f"{what} must be scalar labels, not missing, not {short_repr(_plain(value))}")
    seen: set[Any] = set()
    for value in values:  # one pass (100,000 categories of a zip-code column: a list scan took a minute)
        try:
            repeated = value in seen
            seen.add(value)
        except TypeError:
            raise ParameterError(f"{what} must be hashable labels") from None
        if repeated:
            raise ParameterError(f"{what} lists {short_repr(_plain(value))} twice")
    return values


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds, for messages (``0.5``, not ``np.float64(0.5)``).

    Examples
    --------
    >>> _plain(np.float64(0.5)), _plain(np.str_("a")), _plain("b")
    (0.5, 'a', 'b')
    """
    return value.item() if isinstance(value, np.generic) else value
