"""Grids that follow the data: each numeric column's grid chosen privately from a public family.

A private miner cuts a numeric attribute only at thresholds that are a function of
public facts (:func:`dprm.data.grid.public_grid`). Equally wide thresholds fail on
heavy-tailed columns (counts, incomes, populations): most rows fall into the first
cell or two, and most thresholds a miner can choose lie in the tail, where they
leave a handful of rows on one side. A data owner may declare ``"transform": "log"``
in the types file; without it, a private run spends a small share of its budget
(``grid_share``) here, before anything else, to choose for every numeric column
without a declared transform one grid of :data:`~dprm.data.grid.GRID_FAMILY`
(equally wide, or equally spaced in ``log(1 + r (x − low) / (high − low))`` for
``r`` = 10 … 10⁶).

The mechanism
-------------
Score of a candidate grid ``g`` for column ``c``: ``−max_k n_k(g)``, the number of
rows (with a value) in the fullest of the grid's cells, negated. The grid whose
fullest cell holds the fewest rows spreads the rows best; on a heavy tail the
equally wide grid's first cell holds most rows, a log grid's a small share.

* Sensitivity 1: adding or removing one row changes one cell count of each grid by
  one, so each maximum by at most one.
* Monotone: adding a row never raises a score and removing one never lowers one
  (every maximum can only grow with the rows). The exponential mechanism then needs
  the scale ``Δ/ε`` instead of ``2Δ/ε``
  (:class:`~dprm.privacy.exponential.ExponentialMechanism`, ``monotone=True``).
* One selection per column, each with ``ε_grid / k`` (``k`` columns chosen for): a
  row holds a value in every column, so the ``k`` selections compose sequentially to
  ``ε_grid``, charged one ledger entry per column (``grid of 'visits'``) before its
  selection. Rows with a missing value count in no cell: adding such a row changes
  nothing.

The public facts used: the column's kind, declared bounds and transform, the family
and ``max_splits``. Columns with a declared transform, without bounds, or with
``low == high`` are not chosen for (they keep their public grid) and cost nothing.

Counts come from a worker on every shard (:class:`GridCells`, summed), so a sharded
run (:mod:`dprm.engine`) chooses exactly what an in-process run chooses for the same
noise.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from dprm.data import load_two_view
>>> from dprm.engine import InProcessEngine
>>> from dprm.privacy import Accountant, SeededNoise
>>> rng = np.random.default_rng(0)
>>> visits = np.floor(rng.pareto(1.2, 2000) * 3)           # heavy-tailed counts
>>> left = pd.DataFrame({"visits": visits})
>>> right = pd.DataFrame({"age": rng.uniform(20, 80, 2000)})
>>> types = {"columns": {"visits": {"type": "numeric", "bounds": [0, float(visits.max())]},
...                      "age": {"type": "numeric", "bounds": [20, 80]}}}
>>> data = load_two_view(left, right, types=types)
>>> engine = InProcessEngine(data)
>>> accountant = Accountant(1.0, SeededNoise(np.random.default_rng(1)))
>>> chosen = choose_grids(engine, 0.2, accountant, max_splits=32)
>>> chosen[(0, "visits")].startswith("log"), chosen[(1, "age")]
(True, 'linear')
>>> [(e.step, str(e.epsilon)) for e in accountant.ledger]
[("grid of 'visits'", '1/10'), ("grid of 'age'", '1/10')]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dprm.data.attributes import Attribute, AttributeKind, TwoViewData
from dprm.data.grid import GRID_FAMILY, public_grid
from dprm.engine.base import CountingEngine
from dprm.privacy.accountant import Accountant
from dprm.privacy.budget import EpsilonLike, as_epsilon, split_budget
from dprm.params import Param
from dprm.privacy.exponential import ExponentialMechanism

__all__ = ["GRID_CHOICES", "NUMERIC_GRID", "GRID_SHARE", "GridCells", "choosable", "choose_grids", "grid_bounds", "grid_cell_counts", "grid_note"]

#: A private miner's ``numeric_grid`` parameter: ``"auto"`` chooses here, ``"public"`` keeps the
#: equally wide grid of the public bounds (the papers').
GRID_CHOICES: tuple[str, ...] = ("auto", "public")

#: The private miners' parameters of this choice (their ``Param`` tables list them).
NUMERIC_GRID = Param("numeric_grid", "Thresholds of numeric columns without a declared transform: 'auto', a grid "
                                     "of the public family chosen privately per column from grid-share (equally "
                                     "wide or log-spaced, whichever spreads the rows best); 'public', equally wide "
                                     "between the bounds (the paper)", "choice", choices=GRID_CHOICES)
GRID_SHARE = Param("grid_share", "Share of ε for choosing the grids (numeric-grid auto, when a numeric column has "
                                 "no declared transform; otherwise nothing is spent)", "float", unit="share of ε",
                   low=0, high=1, low_open=True, high_open=True)

#: A request for one column: ``(name, low, high)``.
GridRequest = tuple[str, float, float]


def grid_bounds(attribute: Attribute) -> tuple[float, float] | None:
    """The bounds the literal index puts a numeric attribute's grid in, or None (no grid to choose).

    The domain's bounds (declared, or merged by a sharded engine), else the range of the
    values held here (an undeclared domain: the run is then not private anyway, as the
    literal index says), else None.

    Examples
    --------
    >>> from dprm.data.attributes import Domain
    >>> x = Attribute("x", "left", AttributeKind.NUMERIC, np.array([3.0, np.nan, 7.0]))
    >>> grid_bounds(x), grid_bounds(Attribute("x", "left", AttributeKind.NUMERIC, x.values, Domain((0.0, 9.0))))
    ((3.0, 7.0), (0.0, 9.0))
    """
    if attribute.domain.bounds is not None:
        return attribute.domain.bounds
    values = attribute.values[~np.isnan(attribute.values)]
    return (float(values.min()), float(values.max())) if values.size else None


def choosable(attribute: Attribute) -> bool:
    """True for a numeric attribute whose grid is chosen privately (public facts only).

    Numeric, no declared transform, and bounds (:func:`grid_bounds`) with ``low < high``.
    """
    if attribute.kind is not AttributeKind.NUMERIC or attribute.domain.transform is not None:
        return False
    bounds = grid_bounds(attribute)
    return bounds is not None and bounds[0] < bounds[1]


def grid_cell_counts(values: np.ndarray, low: float, high: float, max_splits: int) -> np.ndarray:
    """Rows per cell of every grid of :data:`GRID_FAMILY` over ``[low, high]``, one row per grid.

    ``values`` are one column's values (NaN: missing, counted nowhere). Cell ``j`` of a
    grid holds the values with exactly ``j`` thresholds strictly below them (the
    literal index's codes); a grid with fewer distinct thresholds leaves its last
    cells empty.

    Returns
    -------
    numpy.ndarray
        ``int64``, shape ``(len(GRID_FAMILY), max_splits + 1)``.

    Examples
    --------
    >>> counts = grid_cell_counts(np.array([0.0, 1.0, 2.0, 900.0, np.nan]), 0.0, 1000.0, 3)
    >>> counts[0].tolist(), counts[3].tolist()   # linear: 250, 500, 750; log:1000: 4.6, 31, 180
    ([3, 0, 0, 1], [3, 0, 0, 1])
    >>> int(counts.sum(axis=1)[0])
    4
    """
    present = values[~np.isnan(values)]
    out = np.zeros((len(GRID_FAMILY), max_splits + 1), dtype=np.int64)
    for k, member in enumerate(GRID_FAMILY):
        thresholds = public_grid(low, high, max_splits, member)
        codes = np.searchsorted(thresholds, present, side="left")
        out[k, : thresholds.size + 1] = np.bincount(codes, minlength=thresholds.size + 1)
    return out


class GridCells:
    """A shard's cell counts of the candidate grids (a worker: :mod:`dprm.engine.workers`).

    Parameters
    ----------
    data : TwoViewData
        The shard's rows.
    """

    def __init__(self, data: TwoViewData) -> None:
        self.data = data

    def cell_counts(self, side: int, requests: Sequence[GridRequest], max_splits: int) -> list[np.ndarray]:
        """:func:`grid_cell_counts` of each requested column of view ``side`` (counts: summed over shards)."""
        view = self.data.views[side]
        return [grid_cell_counts(view[name].values, low, high, int(max_splits)) for name, low, high in requests]


def grid_note(chosen: dict[tuple[int, str], str]) -> str:
    """One line saying which grids were chosen (log grids by name; the equally wide ones counted).

    Examples
    --------
    >>> grid_note({(0, "visits"): "log:1000", (1, "age"): "linear"})
    'grids chosen privately (grid-share): visits log:1000; 1 column equally wide'
    """
    logs = [f"{name} {member}" for (_, name), member in chosen.items() if member != "linear"]
    wide = sum(member == "linear" for member in chosen.values())
    parts = ["; ".join(logs)] if logs else []
    if wide:
        parts.append(f"{wide} column{'s' if wide != 1 else ''} equally wide")
    return "grids chosen privately (grid-share): " + "; ".join(parts)


def choose_grids(engine: CountingEngine, epsilon: EpsilonLike, accountant: Accountant, *,
                 max_splits: int) -> dict[tuple[int, str], str]:
    """Choose a grid of :data:`GRID_FAMILY` for every :func:`choosable` column, spending ``epsilon``.

    One exponential-mechanism selection per column (module docstring: score, sensitivity
    1, monotone), each charged ``epsilon / k`` before it is drawn; nothing is charged when
    no column is choosable.

    Parameters
    ----------
    engine : CountingEngine
        Where the rows are (its schema gives the public facts).
    epsilon : int, float, str or Fraction
        The budget of all the selections together.
    accountant : Accountant
        Charged before each selection.
    max_splits : int
        The number of thresholds of each grid (the miner's).

    Returns
    -------
    dict
        ``(side, name) -> member of GRID_FAMILY`` for every choosable column.
    """
    requests: list[list[GridRequest]] = [
        [(a.name, *grid_bounds(a)) for a in view.attributes if choosable(a)] for view in engine.schema.views]
    n_columns = sum(len(r) for r in requests)
    if n_columns == 0:
        return {}
    shares = split_budget(as_epsilon(epsilon, "grid epsilon"), [1] * n_columns)
    workers = engine.workers(GridCells)
    try:
        counts = [workers.sum("cell_counts", side, requests[side], int(max_splits)) if requests[side] else []
                  for side in (0, 1)]
    finally:
        workers.close()
    chosen: dict[tuple[int, str], str] = {}
    for side in (0, 1):
        for (name, _, _), cells in zip(requests[side], counts[side]):
            mechanism = ExponentialMechanism(shares.pop(0), 1, monotone=True)
            pick = mechanism.release(accountant, f"grid of {name!r}", -cells.max(axis=1).astype(np.float64))
            chosen[(side, name)] = GRID_FAMILY[int(pick)]
    return chosen
