"""SerenadeES's memoised ExtendOne: one exponential-mechanism draw per round, exactly.

Algorithm 2 calls ExtendOne ``M`` times on the current collection ``Q`` of ``k``
redescriptions; each call must select one extension from the union of all their
candidate sets with ``P(c) ∝ w_c = exp(ε' q_c / (2Δ))`` (Lemma 2). Between two calls
only the redescription that was extended changes, so the paper memoises, for each
redescription, its best candidate and key, and expands only the changed one.

Reusing keys naively is not an exponential-mechanism draw: a stored key that lost
once is conditioned to be small, and a freshly expanded redescription is favoured.
dprm instead runs the draws as one **exponential race** (Gumbel keys are arrival
times: candidate ``c`` "arrives" at ``τ_c = exp(-(q_c/s + G_c)) ~ Exp(w_c)``,
``s = 2Δ/ε'``, and the earliest arrival is the Gumbel-max winner):

* a redescription entering the race at the current time ``T`` (the arrival time of
  the last winner; 0 at the start) draws the Gumbel keys of its candidates once; its
  entry is its best candidate ``c*`` and the arrival time ``T + exp(-max key)``;
* each round, the entry with the earliest arrival wins; ``T`` becomes its time; the
  winner's redescription is replaced by the chosen extension, which enters at ``T``.

Why each round is exactly the exponential mechanism over the current union: within
one redescription, ``exp(-max key) ~ Exp(W_r)``, ``W_r = Σ_c w_c``, independently of
the argmax, which has ``P(c) = w_c / W_r``. By the memorylessness of the exponential
distribution, given everything released so far (past winners and their times), each
surviving entry's residual time beyond ``T`` is again ``Exp(W_r)`` and independent,
and its stored candidate is still distributed ``∝ w_c``. So the next winner is
redescription ``r`` with probability ``W_r / Σ W`` and candidate ``c`` within it with
``w_c / W_r``: ``P(c) = w_c / Σ_all w``. The ``M`` rounds therefore have exactly the
joint distribution of ``M`` adaptive exponential-mechanism draws, each ``ε'``-DP, and
sequential composition gives ``M ε'``. Each round is charged ``ε'`` before it draws
anything (ledger step ``"{step} {t}"``).

Maximum age (the paper's parameter): entries not selected for ``max_age`` rounds are
dropped and redrawn at the current time. By memorylessness a redrawn entry has the
same distribution as the kept one, so the age changes neither the output
distribution nor the privacy cost; it only costs the time of re-expanding (0 redraws
every entry every round, the paper's unmemoised variant). The paper's memoisation
(fresh keys for new redescriptions, aged keys for old ones, and a re-expansion that
the authors' code charges again) is neither exact nor within budget.

Times are handled in log space (``log(T + τ) = logaddexp(log T, -max key)``): no
overflow for any scores.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dprm.errors import ParameterError
from dprm.privacy import Accountant, Mechanism
from dprm.privacy.accountant import FLOATING_POINT_SELECTION, PURE_DP, guarantee_label
from dprm.privacy.budget import EpsilonLike
from dprm.privacy.scale import noise_scale

__all__ = ["ExtensionRace"]


@dataclass
class _Entry:
    choice: int
    log_time: float
    age: int


class ExtensionRace(Mechanism):
    """Memoised exponential race over the extensions of ``k`` slots (SerenadeES).

    Parameters
    ----------
    epsilon : int, float, str or Fraction
        Cost of one round (one draw).
    sensitivity : int, float, str or Fraction
        Sensitivity ``Δ`` of every candidate's score.
    max_age : int
        Rounds an unselected entry is kept before it is redrawn (``>= 0``).

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.privacy import Accountant, SeededNoise
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> race = ExtensionRace(0.5, 1, max_age=3)
    >>> scores = {0: np.array([0.0, 900.0]), 1: np.array([0.0, 0.0])}
    >>> race.round(acc, "extension 1", [0, 1], scores.__getitem__)
    (0, 1)
    >>> [str(e.epsilon) for e in acc.ledger]
    ['1/2']
    """

    name = "exponential (memoised gumbel race)"
    #: float64 Gumbel keys, not an exact sampler (a failure probability of ~2^-53 per draw).
    guarantee = guarantee_label(PURE_DP, [FLOATING_POINT_SELECTION])

    def __init__(self, epsilon: EpsilonLike, sensitivity: EpsilonLike, *, max_age: int) -> None:
        super().__init__(epsilon, sensitivity)
        if isinstance(max_age, bool) or not isinstance(max_age, (int, np.integer)) or max_age < 0:
            raise ParameterError(f"max-age must be a non-negative integer, not {max_age!r}")
        self.max_age = int(max_age)
        self.scale: float = noise_scale(2 * self.sensitivity, self.epsilon)
        self._entries: dict[int, _Entry] = {}
        self._log_time = -np.inf
        self.expansions = 0

    def round(self, accountant: Accountant, step: str, slots: list[int],
              scores_of: Callable[[int], np.ndarray]) -> tuple[int, int]:
        """Charge ``epsilon``, then return the winning ``(slot, candidate index)``.

        ``scores_of(slot)`` gives the scores of a slot's candidates; it is called only
        for slots without a live entry (new, replaced or aged out). The winner's
        entry is removed: its slot re-enters with fresh keys in the next round.
        """
        if not slots:
            raise ParameterError("the extension race needs at least one redescription")
        self.charge(accountant, step)
        for slot in slots:
            if slot not in self._entries:
                scores = np.asarray(scores_of(slot), dtype=np.float64)
                keys = scores / self.scale + accountant.noise.gumbel(scores.size)
                best = int(np.argmax(keys))
                self._entries[slot] = _Entry(best, float(np.logaddexp(self._log_time, -keys[best])), 0)
                self.expansions += 1
        winner = min(slots, key=lambda s: self._entries[s].log_time)
        entry = self._entries.pop(winner)
        self._log_time = entry.log_time
        for slot in list(self._entries):
            self._entries[slot].age += 1
            if self._entries[slot].age > self.max_age:
                del self._entries[slot]
        return winner, entry.choice
