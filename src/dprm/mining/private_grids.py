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
With ``ε_grid`` the grids' budget and ``k`` the columns chosen for:

1. **A noisy count** ``n̂`` of the rows (discrete Laplace, ``ε_grid / 10``,
   sensitivity 1; ledger ``grids: data size``). It sets each cell's capacity
   ``c = n̂ / (max_splits + 1)``, the count of an even spread. A caller that releases
   its own count of the rows anyway passes it (``n_hat``) instead: the tree miners
   (but their paper variant) release one count, with that tenth added to their own
   ``size_share``, before the grids (:meth:`dprm.mining.private_trees.PrivateTreeMiner._choose_grids`), and the
   grids' choices get the other nine tenths. At ε = 0.1 the tenth alone (``5·10⁻⁴``,
   a scale of 2,000 rows) often left the capacity far off: on 40 uniform columns the
   common grid was a log grid in 91 of 200 draws, of ratio 10⁴ or more in 26; with the
   shared count in 71 and 12 (``benchmarks/grid_choice_odds.py``; the rest is the
   choice's own small budget).
2. **The score** of grid ``g`` for a column: ``Σ_k min(n_k(g), c)``, the rows in its
   cells with each cell counted up to ``c`` (:func:`spread_scores`): the rows when
   they spread evenly, far fewer when most crowd into a few cells (a heavy tail on an
   equally wide grid, or a light-tailed column on a log grid, whose cells near the
   low bound stay empty). Sensitivity 1: adding or removing one row changes one cell
   count of each grid by one, so each score by at most one. Monotone: adding a row
   never lowers a score, removing one never raises one; the selection (Gumbel, or
   permute-and-flip below one trial's budget: :mod:`dprm.mining.selection`) then needs the
   scale ``Δ/ε`` instead of ``2Δ/ε``
   (:class:`~dprm.privacy.exponential.ExponentialMechanism`, ``monotone=True``).
   Rows with a missing value count in no cell.
3. **A common grid** for all columns (``k ≥ 2``; ledger ``grid of all k numeric
   columns``): the exponential mechanism on the worse of the two views' mean scores
   (``min(mean_left, mean_right)`` over the columns of each view; the one view's mean
   where only one has columns to choose for): sensitivity 1 and monotone, as each
   column's score (a mean and a minimum of such scores are). With many columns and few
   rows a column's own choice would be nearly uniform, while this one is sharp. The
   worse view, not the mean of all columns: the two views of a table are often measured
   alike within and differently across (counts against test scores, incomes against
   shares), and the grid that suits most columns can leave the other view without a
   threshold where its rows are (session 44, docs/mining-sessions.md: AER's CASchools, 420
   districts, whose right view, reading and mathematics scores in ``[0, 709]``, got the
   left view's log grid; the default then kept something in 1 run of 5 at ε = 1, 5 of 5
   now). A grid per view would halve each choice's budget: measured, it lost on tables
   whose views are alike (docs/mining.md).
4. **Each column's own grid**, only when the rows can pay for it, a public rule of
   ``n̂``: ``ε_column · n̂ ≥`` :data:`PER_COLUMN_ROWS` with ``ε_column`` half of the
   rest over ``k`` (the other half bought the common grid). Then the exponential
   selection per column with the common grid as a public prior (half of the prior mass on
   it, the rest spread evenly): each score gets ``(Δ/ε) · ln prior(g)``, an offset that
   depends only on the earlier release (adaptive composition) and leaves each score's
   sensitivity and monotonicity as they were, so the selection stays ε-DP (with the
   Gumbel sampler it is exactly ``P(g) ∝ prior(g) · exp(ε q_g / Δ)``, a base measure).
   Otherwise every column takes the common grid, which then had all of the rest.

A row holds a value in every column, so all releases compose sequentially to
``ε_grid`` exactly, one ledger entry each, charged before it is drawn.

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
>>> chosen[(0, "visits")], chosen[(1, "age")]                # counts: whole-number thresholds
('integers', 'linear')
>>> for entry in accountant.ledger:
...     print(entry.step, entry.epsilon)
grids: data size 1/50
grid of all 2 numeric columns 9/100
grid of 'visits' 9/200
grid of 'age' 9/200
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from dprm.data.attributes import Attribute, AttributeKind, TwoViewData
from dprm.data.grid import GRID_FAMILY, public_grid
from dprm.engine.base import CountingEngine
from dprm.privacy.accountant import Accountant
from dprm.privacy.budget import EpsilonLike, as_epsilon, split_budget
from dprm.privacy.exponential import ExponentialMechanism
from dprm.params import Param
from dprm.privacy.laplace import DiscreteLaplaceCount
from dprm.privacy.noise import Sampler

__all__ = ["COUNT_SHARE", "GRID_CHOICES", "NUMERIC_GRID", "GRID_SHARE", "GridCells", "choosable", "choose_grids",
           "grid_bounds", "grid_cell_counts", "grid_note", "spread_scores"]

#: A private miner's ``numeric_grid`` parameter: ``"auto"`` chooses here, ``"equal-width"`` keeps
#: the equally wide grid of the public bounds (the papers').
GRID_CHOICES: tuple[str, ...] = ("auto", "equal-width")

#: The private miners' parameters of this choice (their ``Param`` tables list them).
NUMERIC_GRID = Param("numeric_grid", "Thresholds of numeric columns without a declared transform: 'auto', a grid "
                                     "of the public family chosen privately per column from grid-share (equally "
                                     "wide or log-spaced, whichever spreads the rows best); 'equal-width', "
                                     "equally wide between the bounds (the paper)", "choice", choices=GRID_CHOICES)
GRID_SHARE = Param("grid_share", "Share of ε for choosing the grids (numeric-grid auto, when a numeric column has "
                                 "no declared transform; otherwise nothing is spent)", "float", unit="share of ε",
                   low=0, high=1, low_open=True, high_open=True)

#: Share of the grids' budget for their own noisy count of the rows (it sets the cells' capacity).
COUNT_SHARE = Fraction(1, 10)
#: Per-column choices are made only when each would have at least this many rows per unit
#: of ε (``ε_column · n̂``): below it a column's own choice is nearly uniform, and every
#: column takes the common grid.
PER_COLUMN_ROWS = 5
#: The prior mass a column's own choice spreads over the grids other than the common one.
COMMON_PRIOR_REST = 0.5

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
    """One line saying which grids were chosen: each grid once, with its columns (the equally wide ones counted).

    Examples
    --------
    >>> grid_note({(0, "visits"): "log:1000", (1, "age"): "linear"})
    'grids chosen privately (grid-share): log:1000 for visits; 1 column equally wide'
    >>> grid_note({(0, "visits"): "integers", (0, "stays"): "integers", (1, "cost"): "log:100"})
    'grids chosen privately (grid-share): integers for visits, stays; log:100 for cost'
    >>> grid_note({(0, f"p{i}"): "integers" for i in range(3)})
    'grids chosen privately (grid-share): integers for all 3 columns'
    """
    groups: dict[str, list[str]] = {}
    for (_, name), member in chosen.items():
        groups.setdefault(member, []).append(name)
    head = "grids chosen privately (grid-share): "
    if len(groups) == 1 and len(chosen) > 1:
        member = next(iter(groups))
        return head + ("all {} columns equally wide" if member == "linear" else f"{member} for all {{}} columns"
                       ).format(len(chosen))
    parts = [f"{member} for {', '.join(names)}" for member, names in groups.items() if member != "linear"]
    wide = len(groups.get("linear", []))
    if wide:
        parts.append(f"{wide} column{'s' if wide != 1 else ''} equally wide")
    return head + "; ".join(parts)


def spread_scores(cells: np.ndarray, capacity: float) -> np.ndarray:
    """The score of each grid: rows in its cells, each cell counted up to ``capacity`` rows.

    ``Σ_k min(n_k, c)``: as many as there are rows when every cell holds at most ``c``
    (the rows spread evenly), few when most rows crowd into some cells. Adding a row
    raises one cell count by one, so each score by at most one (sensitivity 1) and
    never lowers one (monotone).

    Examples
    --------
    >>> spread_scores(np.array([[90, 5, 5], [40, 30, 30]]), 35.0).tolist()
    [45.0, 95.0]
    """
    return np.minimum(cells, capacity).sum(axis=1).astype(np.float64)


def choose_grids(engine: CountingEngine, epsilon: EpsilonLike, accountant: Accountant, *,
                 max_splits: int, n_hat: float | None = None, sampler: Sampler = "gumbel"
                 ) -> dict[tuple[int, str], str]:
    """Choose a grid of :data:`GRID_FAMILY` for every :func:`choosable` column, spending ``epsilon``.

    A noisy count of the rows, a common grid for all columns, then, where the rows can
    pay for it, one grid per column (module docstring: the scores, their sensitivity 1
    and monotonicity, the public rule); every release is charged before it is drawn,
    and nothing is charged when no column is choosable.

    Parameters
    ----------
    engine : CountingEngine
        Where the rows are (its schema gives the public facts).
    epsilon : int, float, str or Fraction
        The budget of all the releases together.
    accountant : Accountant
        Charged before each release.
    max_splits : int
        The number of thresholds of each grid (the miner's).
    n_hat : float, optional
        A noisy count of the rows released before (by the caller, from its own budget:
        :data:`COUNT_SHARE` of the grids' budget or more). Given, no count is released
        here and all of ``epsilon`` goes to the choices.
    sampler : {"gumbel", "permute-and-flip"}, default "gumbel"
        How the choices draw (:func:`~dprm.mining.selection.selection_sampler`: permute-and-flip
        below one trial's budget of a tree miner).

    Returns
    -------
    dict
        ``(side, name) -> member of GRID_FAMILY`` for every choosable column.
    """
    requests: list[list[GridRequest]] = [
        [(a.name, *grid_bounds(a)) for a in view.attributes if choosable(a)] for view in engine.schema.views]
    keys = [(side, name) for side in (0, 1) for name, _, _ in requests[side]]
    if not keys:
        return {}
    workers = engine.workers(GridCells)
    try:
        counts = [workers.sum("cell_counts", side, requests[side], int(max_splits)) if requests[side] else []
                  for side in (0, 1)]
    finally:
        workers.close()
    epsilon = as_epsilon(epsilon, "grid epsilon")
    if n_hat is None:
        count_epsilon, epsilon = split_budget(epsilon, [COUNT_SHARE, 1 - COUNT_SHARE])
        n_hat = DiscreteLaplaceCount(count_epsilon).release(accountant, "grids: data size", engine.n_rows)
    n_hat = max(1, n_hat)
    capacity = n_hat / (int(max_splits) + 1)   # public: a function of the released count
    scores = [spread_scores(cells, capacity) for side in (0, 1) for cells in counts[side]]
    per_column = len(keys) == 1 or float(epsilon) / 2 / len(keys) * n_hat >= PER_COLUMN_ROWS
    log_prior = np.zeros(len(GRID_FAMILY))
    if len(keys) > 1:
        common_epsilon, epsilon = split_budget(epsilon, [1, 1]) if per_column else (epsilon, 0)
        # each view's mean score, the worse of the two: one grid that fails neither view (docstring)
        view_means = [np.mean([score for key, score in zip(keys, scores) if key[0] == side], axis=0)
                      for side in (0, 1) if requests[side]]
        common = int(ExponentialMechanism(common_epsilon, 1, sampler, monotone=True).release(
            accountant, f"grid of all {len(keys)} numeric columns", np.min(view_means, axis=0)))
        if not per_column:
            return {key: GRID_FAMILY[common] for key in keys}
        log_prior[:] = np.log(COMMON_PRIOR_REST / (len(GRID_FAMILY) - 1))
        log_prior[common] = np.log(1 - COMMON_PRIOR_REST)
    chosen: dict[tuple[int, str], str] = {}
    for key, score, share in zip(keys, scores, split_budget(epsilon, [1] * len(keys))):
        mechanism = ExponentialMechanism(share, 1, sampler, monotone=True)
        # a public offset (Δ/ε)·ln prior(g) of each score: the same sensitivity, monotone (docstring, 4.)
        pick = mechanism.release(accountant, f"grid of {key[1]!r}", score + mechanism.scale * log_prior)
        chosen[key] = GRID_FAMILY[int(pick)]
    return chosen
