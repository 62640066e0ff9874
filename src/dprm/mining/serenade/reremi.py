"""ReReMi-style greedy baseline (non-private): the Serenade search with exact choices.

The same queries as SerenadeCS/ES (literals added one at a time by ``∧`` / ``∨`` on
either side, the same candidate literals, an attribute never on both sides), but:

* numeric thresholds at data values (:class:`~dprm.data.LiteralIndex` ``mode="data"``:
  distinct values, or ``max_splits`` quantile cut points);
* initial pairs: the ``initial_pairs`` distinct pairs of highest exact Jaccard among
  those with at least ``min_support`` rows in the intersection;
* each pair is extended greedily by the exact best extension (highest Jaccard with
  intersection ``≥ min_support``), up to ``extensions`` times, while it improves the
  Jaccard;
* exact statistics; ``guarantee: none``.

Both views may be numeric (the initial pairs are counted from the view with fewer
literals, :func:`~dprm.mining.serenade.private_miners.initial_side`).

``min_support``: rows (``>= 1``) or a share of the rows (``< 1``), default 10 %.
"""

from __future__ import annotations

import numpy as np

from dataclasses import replace
from typing import Any

from dprm.data.attributes import TwoViewData
from dprm.mining.base import MAX_ROWS, MAX_SUPPORT, MIN_JACCARD, Param, not_private_block, parameter_table
from dprm.mining.independence import with_independence
from dprm.mining.ranking import ranked
from dprm.mining.serenade.extensions import Growing, extend
from dprm.mining.serenade.greedy import GreedyMiner
from dprm.mining.serenade.pairs import PairBlock, top_pairs
from dprm.mining.serenade.parameters import SERENADE_PARAMETERS
from dprm.queries import Redescription, RedescriptionStats, p_value

__all__ = ["ReReMi", "exact_stats"]


def exact_stats(cells: np.ndarray, n_rows: int) -> RedescriptionStats:
    """Exact statistics from the 2×2 cell table ``[[L∩R, L∖R], [R∖L, neither]]`` of ``n_rows`` rows.

    The same numbers as :meth:`RedescriptionStats.from_supports` on the two row masks.

    Examples
    --------
    >>> exact_stats(np.array([[3, 1], [2, 4]]), 10) == RedescriptionStats.from_supports(
    ...     np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], bool), np.array([1, 1, 1, 0, 1, 1, 0, 0, 0, 0], bool))
    True
    """
    inter = int(cells[0, 0])
    support_left, support_right = int(cells[0].sum()), int(cells[:, 0].sum())
    union = support_left + support_right - inter
    return RedescriptionStats(support_left, support_right, inter, union, inter / union if union > 0 else 0.0,
                              p_value(inter, support_left, support_right, n_rows))


class ReReMi(GreedyMiner):
    """Non-private greedy redescription miner in the style of ReReMi.

    Parameters
    ----------
    initial_pairs : int
        Number of initial pairs extended.
    extensions : int
        Extensions per pair at most.
    min_support : float or None
        Minimum intersection: rows (``>= 1``) or a share of the rows; default 10 %.
    min_jaccard : float
        Results below it are marked ``pruned``.
    max_literals : int
        Literals per query at most.
    max_splits : int
        Cut points per numeric attribute (data quantiles).
    max_support : float
        Largest support of either query, as a share of the rows (ReReMi keeps a share
        of the rows outside each query; without it, near-tautologies win).

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data import load_two_view
    >>> from dprm.datasets import make_planted
    >>> planted = make_planted(600, n_planted=2, noise=0.0, random_state=0)
    >>> data = load_two_view(planted.left, planted.right, types=planted.types)
    >>> best = ReReMi(initial_pairs=5).fit(data).redescriptions_[0]
    >>> best.stats.jaccard > 0.9, best.extra["independence"]["excess"] > 0.5, ReReMi().fit(data).privacy_["guarantee"]
    (True, True, 'none')
    """

    #: Counts only through the engine: its data-value thresholds are merged exactly from the shards
    #: (:mod:`dprm.engine.value_statistics`), so it runs sharded with the in-process output.
    counts_through_engine = True

    algorithm = "reremi"
    private = False
    parameter_specs = parameter_table(
        Param("initial_pairs", "Initial pairs: the pairs of one literal per side of highest Jaccard index that "
                               "the search extends", "int", unit="pairs", low=1, high=1000,
              why="each pair is extended on its own, counting every literal on all rows"),
        Param("extensions", "Extensions per pair at most, each adding the literal that raises the Jaccard index "
                            "most", "int", unit="extensions", low=0, high=10_000,
              why="each extension counts every candidate literal on all rows"),
        Param("min_support", "Smallest intersection: rows if 1 or more, else a share of the rows; none: 10 % of "
                             "the rows", "float", unit="rows or share of rows", low=0, high=MAX_ROWS,
              low_open=True, none=True, why="more rows than any table in memory"),
        replace(MIN_JACCARD, help="Smallest Jaccard index of a kept redescription (results below it are marked "
                                  "pruned)"),
        SERENADE_PARAMETERS["max_literals"],
        replace(SERENADE_PARAMETERS["max_splits"], help="Cut points per numeric attribute, at quantiles of its "
                                                        "values; a numeric literal is an interval between two"),
        MAX_SUPPORT,
    )

    def __init__(
        self,
        *,
        initial_pairs: int = 20,
        extensions: int = 8,
        min_support: float | None = None,
        min_jaccard: float = 0.0,
        max_literals: int = 4,
        max_splits: int = 40,
        max_support: float = 0.8,
    ) -> None:
        self._store(locals())

    def _check_combination(self) -> None:
        """No rule across parameters."""

    def work(self) -> int:
        """Progress total: ``initial_pairs · (1 + extensions)`` (each pair, then each extension)."""
        return self.initial_pairs * (1 + self.extensions)

    def _privacy_block(self, data: TwoViewData) -> dict[str, Any]:
        return not_private_block("reremi is not a private algorithm: every statistic is exact")

    def _mine(self, data: TwoViewData) -> None:
        n = self._engine.n_rows
        min_support = self._kept_support(float(n))
        n_right = len(self.tables_[1])
        too_big = self.max_support * n
        sizes_left, sizes_right = (self._counts.literal_sizes(side) for side in (0, 1))

        def start_value(block: PairBlock) -> np.ndarray:
            """Jaccard of each pair; -1 where the intersection or a support is out of range."""
            jaccard = np.divide(block.intersection, block.union, out=np.zeros(len(block)), where=block.union > 0)
            excluded = ((block.intersection < min_support) | (sizes_left[block.pair // n_right] > too_big)
                        | (sizes_right[block.pair % n_right] > too_big))
            return np.where(excluded, -1.0, jaccard)

        # the best pairs of all, streamed block by block (:mod:`.pairs`): memory of one block
        starts, start_values = top_pairs(self.tables_, self._side, self.initial_pairs, start_value,
                                         counts=self._counts, n_rows=n)
        found: dict[str, Redescription] = {}
        for number, (pair, current) in enumerate(zip(starts, start_values)):
            self._progress.advance_to(number * (1 + self.extensions))  # a pair that stopped early counts as done
            if current < 0:
                break
            left, right = divmod(int(pair), n_right)
            state = Growing.pair(self.tables_, left, right)
            self._progress.advance(1)
            for _ in range(self.extensions):
                candidates = self._extension_table(state)
                values = np.divide(candidates.intersection, candidates.union,
                                   out=np.zeros(len(candidates)), where=candidates.union > 0)
                values[(candidates.intersection < min_support) | (candidates.support_left > too_big)
                       | (candidates.support_right > too_big)] = -1.0
                best = int(np.argmax(values))
                if values[best] <= current + 1e-12 or candidates.side[best] < 0:
                    break
                state, current = extend(state, candidates, best, self.tables_), values[best]
                self._progress.advance(1)
            stats = exact_stats(self._counts.cells(*state.supports), n)
            redescription = Redescription(state.queries[0], state.queries[1], stats,
                                          pruned=bool(stats.jaccard < self.min_jaccard))
            found.setdefault(state.key(), with_independence(redescription, n))
        self.redescriptions_ = ranked(list(found.values()))

    def _extension_table(self, state: Growing):
        from dprm.mining.serenade.extensions import extension_counts

        return extension_counts(state, self.tables_, self.max_literals, self._counts)
