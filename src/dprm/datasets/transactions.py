"""Synthetic itemset streams in the manner of the IBM Quest generator (Agrawal & Srikant 1994).

The paper evaluates ISON on IBM-generated data. The Quest generator draws a pool of
*patterns* (potentially frequent itemsets) with exponentially distributed weights and
builds each transaction from patterns picked by weight, each pattern *corrupted* by
dropping some of its items. Here an item is ``variable = value`` over ``n_variables``
discrete variables (the paper's setting), so:

1. a pattern assigns values to ``1 + Poisson(mean_pattern_length - 1)`` distinct
   variables (at most ``n_variables``); patterns get weights ``Exp(1)``, normalised;
2. every variable has a background distribution over its ``n_values`` values
   (Dirichlet(1), drawn once); a row starts from independent background draws;
3. the row then receives ``patterns_per_row`` patterns picked by weight, in turn
   (a later one overrides an earlier one on a shared variable); each item of a
   picked pattern is kept with probability ``1 − corruption``.

Everything is vectorised over rows, so a stream of any length (10⁶ rows and more)
is drawn in seconds, in chunks of ``chunk_size`` rows by :func:`iter_transactions`
with the same rows as one call. The planted patterns and their weights are returned:
a pattern picked with weight ``w`` into one of ``r`` slots and kept whole has support
at least about ``r · w · (1 − corruption)^length`` less overrides (tests check the
heavy ones are frequent in the data, with the exact truth from FP-growth).

Examples
--------
>>> import numpy as np
>>> stream = make_transactions(1000, n_variables=5, n_values=3, n_patterns=4, rng=np.random.default_rng(0))
>>> stream.data.shape, sorted(stream.data["x0"].unique())
((1000, 5), ['a', 'b', 'c'])
>>> len(stream.patterns), round(sum(stream.weights), 6)
(4, 1.0)
"""

from __future__ import annotations

import string
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dprm.errors import ParameterError

__all__ = ["TransactionStream", "make_transactions", "iter_transactions"]


@dataclass
class TransactionStream:
    """What :func:`make_transactions` returns.

    Attributes
    ----------
    data : pandas.DataFrame
        Columns ``x0, x1, ...``; values ``"a", "b", ...`` (strings).
    patterns : list of dict
        The planted patterns, ``{column: value}``.
    weights : list of float
        Their weights (sum 1).
    categories : dict
        The public domain of each column.
    """

    data: pd.DataFrame
    patterns: list[dict[str, str]] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    categories: dict[str, list[str]] = field(default_factory=dict)

    def types(self) -> dict:
        """The public domains as a dprm types file (JSON-able)."""
        return {"columns": {c: {"type": "categorical", "categories": list(v)} for c, v in self.categories.items()}}


@dataclass
class _Model:
    columns: list[str]
    values: list[str]
    background: np.ndarray  # (n_variables, n_values) cumulative
    pattern_codes: np.ndarray  # (n_patterns, n_variables), -1 where unassigned
    weights: np.ndarray


def _value_names(n_values: int) -> list[str]:
    letters = string.ascii_lowercase
    if n_values <= len(letters):
        return list(letters[:n_values])
    return [f"v{i}" for i in range(n_values)]


def _check(n_rows: int, n_variables: int, n_values: int, n_patterns: int, mean_pattern_length: float,
           patterns_per_row: int, corruption: float) -> None:
    if not isinstance(n_rows, (int, np.integer)) or n_rows < 1:
        raise ParameterError(f"n_rows must be a positive integer, not {n_rows!r}")
    if not 1 <= n_variables <= 1000 or not 2 <= n_values <= 1000:
        raise ParameterError("n_variables must be in [1, 1000] and n_values in [2, 1000]")
    if not 1 <= n_patterns <= 100_000 or not 1 <= mean_pattern_length <= n_variables:
        raise ParameterError("n_patterns must be in [1, 100000] and mean_pattern_length in [1, n_variables]")
    if not 0 <= patterns_per_row <= 100 or not 0 <= corruption < 1:
        raise ParameterError("patterns_per_row must be in [0, 100] and corruption in [0, 1)")


def _model(n_variables: int, n_values: int, n_patterns: int, mean_pattern_length: float,
           rng: np.random.Generator) -> _Model:
    columns = [f"x{i}" for i in range(n_variables)]
    background = np.cumsum(rng.dirichlet(np.ones(n_values), size=n_variables), axis=1)
    background[:, -1] = 1.0
    codes = np.full((n_patterns, n_variables), -1, dtype=np.int64)
    lengths = np.minimum(1 + rng.poisson(mean_pattern_length - 1, size=n_patterns), n_variables)
    for p in range(n_patterns):
        chosen = rng.choice(n_variables, size=int(lengths[p]), replace=False)
        codes[p, chosen] = rng.integers(0, n_values, size=chosen.size)
    weights = rng.exponential(1.0, size=n_patterns)
    return _Model(columns, _value_names(n_values), background, codes, weights / weights.sum())


def _rows(model: _Model, n: int, patterns_per_row: int, corruption: float, rng: np.random.Generator) -> np.ndarray:
    n_variables = len(model.columns)
    uniform = rng.random((n, n_variables))
    codes = np.empty((n, n_variables), dtype=np.int8 if len(model.values) < 128 else np.int16)
    for j in range(n_variables):
        codes[:, j] = np.searchsorted(model.background[j], uniform[:, j], side="right")
    for _ in range(patterns_per_row):
        picked = rng.choice(len(model.weights), size=n, p=model.weights)
        planted = model.pattern_codes[picked]
        keep = (planted >= 0) & (rng.random(planted.shape) >= corruption)
        codes[keep] = planted[keep]
    return codes


def _frame(model: _Model, codes: np.ndarray) -> pd.DataFrame:
    names = np.asarray(model.values, dtype=object)
    return pd.DataFrame({c: names[codes[:, j]] for j, c in enumerate(model.columns)})


def iter_transactions(
    n_rows: int,
    *,
    n_variables: int = 20,
    n_values: int = 4,
    n_patterns: int = 20,
    mean_pattern_length: float = 3.0,
    patterns_per_row: int = 2,
    corruption: float = 0.1,
    chunk_size: int = 100_000,
    rng: np.random.Generator,
) -> Iterator[pd.DataFrame]:
    """The stream of :func:`make_transactions` in DataFrames of at most ``chunk_size`` rows.

    The model (background, patterns) is drawn first from ``rng``, then the rows chunk
    by chunk: the same seed and ``chunk_size`` give the same stream, and the same
    model as :func:`make_transactions` with that seed.
    """
    _check(n_rows, n_variables, n_values, n_patterns, mean_pattern_length, patterns_per_row, corruption)
    if chunk_size < 1:
        raise ParameterError(f"chunk_size must be positive, not {chunk_size}")
    model = _model(n_variables, n_values, n_patterns, mean_pattern_length, rng)
    done = 0
    while done < n_rows:
        n = min(chunk_size, n_rows - done)
        yield _frame(model, _rows(model, n, patterns_per_row, corruption, rng))
        done += n


def make_transactions(
    n_rows: int,
    *,
    n_variables: int = 20,
    n_values: int = 4,
    n_patterns: int = 20,
    mean_pattern_length: float = 3.0,
    patterns_per_row: int = 2,
    corruption: float = 0.1,
    rng: np.random.Generator,
) -> TransactionStream:
    """An IBM-Quest-like table of ``n_rows`` rows over ``n_variables`` discrete variables.

    Parameters
    ----------
    n_rows : int
    n_variables : int, default 20
    n_values : int, default 4
        Values per variable (``"a"``, ``"b"``, ...).
    n_patterns : int, default 20
        Planted patterns in the pool.
    mean_pattern_length : float, default 3
        Mean number of items of a pattern (``1 + Poisson(mean − 1)``).
    patterns_per_row : int, default 2
        Patterns picked (by weight) into each row.
    corruption : float, default 0.1
        Probability that an item of a picked pattern is dropped.
    rng : numpy.random.Generator

    Returns
    -------
    TransactionStream
    """
    _check(n_rows, n_variables, n_values, n_patterns, mean_pattern_length, patterns_per_row, corruption)
    model = _model(n_variables, n_values, n_patterns, mean_pattern_length, rng)
    codes = _rows(model, int(n_rows), patterns_per_row, corruption, rng)
    patterns = [
        {model.columns[j]: model.values[int(code)] for j, code in enumerate(row) if code >= 0}
        for row in model.pattern_codes
    ]
    return TransactionStream(
        data=_frame(model, codes),
        patterns=patterns,
        weights=[float(w) for w in model.weights],
        categories={c: list(model.values) for c in model.columns},
    )
