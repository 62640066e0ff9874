"""SerenadeCS (Algorithm 1): client-side decisions, each initial pair extended in turn.

Rounds ``ℓ = 0..m``: round 0 measures every distinct initial pair, round ``ℓ ≥ 1``
extends every alive pair once and measures it; a pair stays alive while its noisy
Jaccard exceeds ``min_jaccard``. Budget and privacy: :mod:`.private_miners`.
"""

from __future__ import annotations

from dprm.data.attributes import TwoViewData
from dprm.mining.base import Param, keyword_init
from dprm.mining.independence import with_independence
from dprm.mining.ranking import ranked
from dprm.mining.serenade.auto import DEFAULT_QUALITY_NOISE_CS, MAX_ROUNDS_CS, cs_sizes
from dprm.mining.serenade.compute_quality import release_cells
from dprm.mining.serenade.extensions import Growing, extend
from dprm.mining.serenade.greedy import GreedyMiner
from dprm.mining.serenade.parameters import (
    AUTO,
    COMMON_DOC,
    DEFAULT_MIN_SUPPORT_SHARE,
    DEFAULT_SPLIT,
    SERENADE_KEPT_SUPPORT_SHARE,
    SERENADE_MIN_SUPPORT_SHARE,
    SERENADE_PAPER_VALUES,
    SERENADE_PARAMETERS,
    shared_serenade_parameters,
)
from dprm.mining.tree_miner_defaults import variant_init
from dprm.privacy import ExponentialMechanism
from dprm.queries import Redescription

__all__ = ["SerenadeCS"]


def _own_parameters(
    *,
    epsilon: float = 1.0,
    budget_split: str = DEFAULT_SPLIT,
    initial_pairs: int | str = AUTO,
    extensions: int | str = AUTO,
) -> None:
    """The first parameters of :class:`SerenadeCS` (a signature only; the rest are
    :func:`~dprm.mining.serenade.parameters.shared_serenade_parameters`)."""


class SerenadeCS(GreedyMiner):
    __doc__ = """SerenadeCS (Algorithm 1): client-side decisions, each initial pair extended in turn.

    Parameters
    ----------
    extensions : int or "auto"
        ``m``: extension rounds per pair; ``"auto"`` (default): at most 4, by the rule.
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
    >>> miner = SerenadeCS(initial_pairs=4, extensions=2).fit(data, accountant=acc, rng=np.random.default_rng(0))
    >>> miner.privacy_["epsilon"] <= 1.0, miner.privacy_["guarantee"], miner.work()   # seeded: not private
    (True, 'none', 12)
    >>> from dprm.privacy import SecureNoise
    >>> miner = SerenadeCS(initial_pairs=4, extensions=2).fit(data, accountant=Accountant(1.0, SecureNoise()))
    >>> miner.privacy_["guarantee"], miner.privacy_["private"]
    ('pure-dp; floating-point selection', True)
    """

    algorithm = "serenade-cs"
    parameter_specs = {
        **SERENADE_PARAMETERS,
        "extensions": Param("extensions", "Extension rounds (the paper's m) of every initial pair, each adding one "
                                          "literal by the exponential mechanism; 'auto' picks up to 4 from the "
                                          "budget", "int", auto=True, unit="rounds", low=0, high=10_000,
                            why="each round counts every candidate literal on all rows for every pair"),
    }

    #: CS always scores with the logistic quality (not a parameter).
    quality = "logistic"
    sizes_rule = staticmethod(cs_sizes)
    draws_per_pair = True
    default_min_support_share = SERENADE_MIN_SUPPORT_SHARE
    default_kept_support_share = SERENADE_KEPT_SUPPORT_SHARE

    __init__ = variant_init(keyword_init(_own_parameters, shared_serenade_parameters,
                                         defaults={"quality_noise": DEFAULT_QUALITY_NOISE_CS}),
                            paper={**SERENADE_PAPER_VALUES, "extensions": MAX_ROUNDS_CS,
                                   "min_support": float(DEFAULT_MIN_SUPPORT_SHARE)})

    def work(self) -> int:
        """Progress total: ``k + k·m`` (initial pairs, then each pair's extensions; 20 and 4 for auto)."""
        k, rounds = self._caps(MAX_ROUNDS_CS)
        return k + k * rounds

    def _mine(self, data: TwoViewData) -> None:
        epsilon = self._prepare_private(data)
        init, ext, qual = (epsilon * s for s in self._split)
        m = self._m
        if m == 0:  # no extension rounds: the extension budget goes to the qualities (as in ES)
            qual, ext = qual + ext, ext * 0
        unique: dict[str, Growing] = {}
        for state in self._initial_pairs(init):
            unique.setdefault(state.key(), state)
        alive = list(unique.values())
        results: dict[int, Redescription] = {}
        ids = list(range(len(alive)))
        quality_round = qual / (m + 1)
        extension_round = ext / m if m else None
        k_cap, m_cap = self._caps(MAX_ROUNDS_CS)
        extended_done = self._progress.part(k_cap * m_cap, m * len(alive))  # each pair, each round
        for round_number in range(m + 1):
            extended_done.advance_to((round_number - 1) * len(unique))  # pairs that stopped count as done
            if not alive:
                break
            if round_number > 0:
                share = extension_round / len(alive)
                extended = []
                for pid, state in zip(ids, alive):
                    candidates, scores = self._candidates(state)
                    choice = ExponentialMechanism(share, self._sensitivity).release(
                        self._accountant, f"extension {round_number}.{pid + 1}", scores)
                    extended.append(extend(state, candidates, choice, self.tables_))
                    extended_done.advance()
                alive = extended
            share = quality_round / len(alive)
            next_alive, next_ids = [], []
            for pid, state in zip(ids, alive):
                released = release_cells(self._accountant, f"quality {round_number}.{pid + 1}", share,
                                         self._counts.cells(*state.supports))
                result = self._result(state, released)
                if result.stats.jaccard > self.min_jaccard:
                    results[pid] = result
                    next_alive.append(state)
                    next_ids.append(pid)
            alive, ids = next_alive, next_ids
        extended_done.finish()
        self.redescriptions_ = ranked([with_independence(r, self._n_hat) for r in results.values()], ties="kept")
