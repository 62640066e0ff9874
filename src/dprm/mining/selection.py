r"""How the private tree miners' low-budget selections draw: permute-and-flip below one trial's budget.

Below one trial's budget (``B = ε · n̂`` under :data:`~dprm.mining.auto_trees.ROWS_PER_TRIAL`
rows, ``n̂`` the released row count) a tree miner's run is two selections and one
extraction: each numeric column's grid (:mod:`dprm.mining.private_grids`) and one
literal pair (:mod:`dprm.mining.literal_pairs`). There both draw with
**permute-and-flip** (McKenna & Sheldon 2020): report noisy max with exponential noise
of the exponential mechanism's scale (Ding et al. 2021 show the two are one mechanism),
ε-DP like the exponential mechanism at the same scale (``2Δ/ε``, or ``Δ/ε`` for the
grids' monotone scores, derived in :mod:`dprm.privacy.exponential`) and never worse in
expected score: where one candidate stands above the rest it takes more of the mass,
which is what a single decisive choice needs. From one trial's budget on every selection
keeps the Gumbel sampler (the exponential mechanism's own distribution): with several
choices per run, permute-and-flip's sharper choices land on the same strongest relations
more often, and fewer relations are found over several runs. The ledger names the
sampler of each selection (``exponential (permute-and-flip…)``). The rule reads ε and the
released row count only: post-processing.

Measured (docs/mining-sessions.md, "Session 48"; the same seeds, Gumbel → permute-and-flip): at
ε = 0.1, 30 runs on each of nine tables, runs that keep something 179 → 194 of 270
(planted-heavy 16 → 21, nmes1988 24 → 28, randhie-s 7 → 10, planted-mixed 22 → 27, spi
28 → 26), and the five planted tables' relations found over 175 runs 30 → 45 (found at
least once over a table's runs: 13 → 12 over three blocks of 5, 10 and 20 seeds). For
every selection at ε = 0.3 and 1 (two blocks of seeds): relations found per run level
(388 → 391 at ε = 1), found at least once over a table's runs 40 → 37 at ε = 1 and 24 →
22 at ε = 0.3, hence Gumbel there.

Examples
--------
>>> selection_sampler(0.1, 2575), selection_sampler(1.0, 2575), selection_sampler(0.1, None)
('permute-and-flip', 'gumbel', 'gumbel')
"""

from __future__ import annotations

from dprm.mining.auto_trees import ROWS_PER_TRIAL, budget_in_rows
from dprm.privacy.budget import EpsilonLike
from dprm.privacy.noise import Sampler

__all__ = ["LOW_BUDGET_SAMPLER", "selection_sampler"]

#: The sampler of the grids' and the literal pair's selections below one trial's budget (module docstring).
LOW_BUDGET_SAMPLER: Sampler = "permute-and-flip"


def selection_sampler(epsilon: EpsilonLike, n_hat: float | None) -> Sampler:
    """:data:`LOW_BUDGET_SAMPLER` below one trial's budget in rows (``ε · n̂ < ROWS_PER_TRIAL``), else Gumbel.

    ``n_hat`` is the released row count (``None``: the run released none, Gumbel).
    A function of ε and a released value only.
    """
    if n_hat is None:
        return "gumbel"
    return LOW_BUDGET_SAMPLER if budget_in_rows(float(epsilon), n_hat) < ROWS_PER_TRIAL else "gumbel"
