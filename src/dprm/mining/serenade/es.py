"""SerenadeES (Algorithm 2): the engine chooses which redescription to extend; NoSens.

``M`` rounds of the memoised extension race (:mod:`.race`), then one quality release
per distinct final redescription. ``quality="jaccard"`` is the paper's NoSens
ablation. Budget and privacy: :mod:`.private_miners`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dprm.data.attributes import TwoViewData
from dprm.mining.base import Param, keyword_init
from dprm.mining.independence import with_independence
from dprm.mining.ranking import ranked
from dprm.mining.serenade.auto import DEFAULT_MIN_SHARPNESS, DEFAULT_MIN_SHARPNESS_ES, MAX_ROUNDS_ES
from dprm.mining.serenade.compute_quality import release_cells
from dprm.mining.serenade.extensions import Growing, extend
from dprm.mining.serenade.greedy import GreedyMiner
from dprm.mining.serenade.parameters import (
    AUTO,
    COMMON_DOC,
    DEFAULT_MIN_SUPPORT_SHARE,
    ES_SPLIT,
    QUALITIES,
    SERENADE_KEPT_SUPPORT_SHARE,
    SERENADE_MIN_SUPPORT_SHARE,
    SERENADE_PAPER_VALUES,
    SERENADE_PARAMETERS,
    shared_serenade_parameters,
)
from dprm.mining.serenade.race import ExtensionRace
from dprm.mining.tree_miner_defaults import variant_init

__all__ = ["SerenadeES"]


def _own_parameters(
    *,
    quality: str = "logistic",
    epsilon: float = 1.0,
    budget_split: str = ES_SPLIT,
    initial_pairs: int | str = AUTO,
    extensions: int | str = AUTO,
    max_age: int = 40,
) -> None:
    """The first parameters of :class:`SerenadeES` (a signature only; the rest are
    :func:`~dprm.mining.serenade.parameters.shared_serenade_parameters`)."""


class SerenadeES(GreedyMiner):
    __doc__ = """SerenadeES (Algorithm 2): the engine chooses which redescription to extend.

    Parameters
    ----------
    quality : {"logistic", "jaccard"}
        The score of the exponential mechanism: the lower-sensitivity quality, or the
        plain Jaccard (``"jaccard"``: the paper's NoSens ablation, ``Δ = 1``).
    extensions : int or "auto"
        ``M``: extension rounds in all; ``"auto"`` (default): at most 80, by the rule.
    max_age : int
        Rounds a memoised extension is kept (default 40; no effect on the output
        distribution or the budget, see :mod:`dprm.mining.serenade.race`).
    """ + COMMON_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data import load_two_view
    >>> from dprm.datasets import make_planted
    >>> from dprm.privacy import Accountant, SeededNoise
    >>> planted = make_planted(600, n_planted=2, random_state=0)
    >>> data = load_two_view(planted.left, planted.right, types=planted.types)
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> miner = SerenadeES(initial_pairs=4, extensions=8).fit(data, accountant=acc, rng=np.random.default_rng(0))
    >>> acc.spent(), miner.work()
    (Fraction(1, 1), 12)
    """

    parameter_specs = {
        "quality": Param("quality", "Score of the exponential mechanism: 'logistic', the lower-sensitivity "
                                    "quality, or 'jaccard', the plain Jaccard index (the paper's NoSens ablation)",
                         "choice", choices=QUALITIES),
        **SERENADE_PARAMETERS,
        "extensions": Param("extensions", "Extension rounds (the paper's M) in all: each extends the best of the "
                                          "current redescriptions by one literal, drawn by the exponential "
                                          "mechanism; 'auto' picks up to 80 from the budget", "int", auto=True,
                            unit="rounds", low=0, high=10_000,
                            why="each round counts every candidate literal on all rows"),
        "max_age": Param("max_age", "Rounds a memoised extension is kept in the extension race before it is "
                                    "redrawn (no effect on the results or the budget, only on time)", "int",
                         unit="rounds", low=0, high=10_000, why="no run has more rounds"),
    }

    default_min_support_share = SERENADE_MIN_SUPPORT_SHARE
    default_kept_support_share = SERENADE_KEPT_SUPPORT_SHARE

    __init__ = variant_init(keyword_init(_own_parameters, shared_serenade_parameters,
                                         defaults={"min_sharpness": DEFAULT_MIN_SHARPNESS_ES}),
                            paper={**SERENADE_PAPER_VALUES, "extensions": MAX_ROUNDS_ES,
                                   "min_support": float(DEFAULT_MIN_SUPPORT_SHARE),
                                   "min_sharpness": DEFAULT_MIN_SHARPNESS})

    @property
    def algorithm(self) -> str:  # type: ignore[override]
        return "serenade-es-nosens" if self.quality == "jaccard" else "serenade-es"

    def work(self) -> int:
        """Progress total: ``k + M`` (initial pairs, then extension rounds; 20 and 80 for auto)."""
        k, rounds = self._caps(MAX_ROUNDS_ES)
        return k + rounds

    def _mine(self, data: TwoViewData) -> None:
        epsilon = self._prepare_private(data)
        init, ext, qual = (epsilon * s for s in self._split)
        slots = self._initial_pairs(init)
        rounds = self._m
        rounds_done = self._progress.part(self._caps(MAX_ROUNDS_ES)[1], rounds)
        if rounds:
            race = ExtensionRace(ext / rounds, self._sensitivity, max_age=self.max_age)
            pending: dict[int, Any] = {}

            def scores_of(slot: int) -> np.ndarray:
                candidates, scores = self._candidates(slots[slot])
                pending[slot] = candidates
                return scores

            for round_number in range(1, rounds + 1):
                slot, choice = race.round(self._accountant, f"extension {round_number}",
                                          list(range(len(slots))), scores_of)
                slots[slot] = extend(slots[slot], pending.pop(slot), choice, self.tables_)
                rounds_done.advance()
            self._notes.append(f"extension race: {race.expansions} expansions in {rounds} rounds")
        else:  # no extension rounds: the extension budget goes to the qualities
            qual = qual + ext
        unique: dict[str, Growing] = {}
        for state in slots:
            unique.setdefault(state.key(), state)
        share = qual / len(unique)
        found = []
        for number, state in enumerate(unique.values(), start=1):
            released = release_cells(self._accountant, f"quality {number}", share, self._counts.cells(*state.supports))
            found.append(self._result(state, released))
        self.redescriptions_ = ranked([with_independence(r, self._n_hat) for r in found], ties="kept")
