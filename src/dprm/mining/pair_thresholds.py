r"""The thresholds of a chosen literal pair, chosen again near where they are.

A literal pair (:mod:`dprm.mining.literal_pairs`) is chosen by how well one literal
predicts the other, ``max(g/2, m)``, in the better of its two directions. When the
numeric literal is the one predicted, that score is nearly flat across its thresholds:
the majority gain of predicting ``x > t`` from ``c`` is the same for every ``t`` between
the median and the threshold where ``c``'s rows end (on the planted data of
docs/mining.md, 552 rows at the third threshold below the planted one, 498 at it),
because a balanced target has the most to gain. So the pair's threshold lands anywhere
in that range, and the pair describes the relation with a Jaccard index of 0.63–0.88
depending on where; a refinement split (:mod:`dprm.mining.pair_refinement`) added to
an off threshold finds nothing to add. After the pair is released, one more choice
moves its numeric literal to where it agrees best with the other side's:

* candidates: the literals of the same attribute whose grid points lie within
  :data:`THRESHOLD_WINDOW` points of the released one (a split ``a ≤ t_j``: the splits
  ``j − w … j + w``; an interval ``t_j < a ≤ t_k``: every interval with its ends within
  ``w`` of ``j`` and ``k``). The set is public: the schema, the public grid and the
  released pair. The window keeps the choice near a threshold the pair's score already
  found and makes it among few candidates;
* score: the **majority count** of the candidate's partition of the rows (it holds / its
  opposite holds / its attribute is missing) predicting the other side's released
  literal: each part's larger class, summed, rows where the other literal is missing
  having no class. For a fixed other literal ``o`` it is ``n_o − |l Δ o|`` where ``l``
  agrees with ``o``: the fewest rows on which the two literals disagree, which is what
  the pair's Jaccard index and its mirror's reward;
* **sensitivity 1, monotone**: adding a row puts it in exactly one part of every
  candidate and in one class or none, so every score rises by 0 or 1 (removing one:
  falls by 0 or 1); the exponential mechanism samples ``∝ exp(ε · score)``
  (``ExponentialMechanism(monotone=True)``). Checked on neighbouring datasets in
  ``tests/test_pair_thresholds.py``.

Only a pair with **one** numeric literal is moved, against the other side's Boolean or
categorical literal (:func:`anchored_side`, a function of the released pair): that
literal does not move, so it anchors the choice. Two numeric literals would each move to
agree with the other's, and two thresholds that already agree with each other
(``x ≤ 40 ↔ u ≤ 20`` where ``u ≈ x / 2``) would stay where they are, even where the
relation's own thresholds are elsewhere; measured (AltExpM at ε = 1, 10 runs), moving
them cost latent-heavy's top-10 excess 0.269 → 0.213 and spi's top-10 J 0.459 → 0.361,
so such a pair's share goes to its extraction instead (narrower intervals: latent-heavy's
median width 0.176 → 0.109).

Measured on AltExpM's refined pairs at ε = 1 (docs/mining.md, "Session 28"): the five
generated planted tables' relations found pooled over five runs 2, 4, 3, 3, 2 → 3, 4, 4,
4, 4 of 4, 2.4 → 3.0 per run. At smaller budgets per trial (two refined pairs
at ε = 0.3, a single pair at ε = 0.1) the share taken from the pair cost more than
the thresholds gained, so the ``"auto"`` rule uses it where a trial has at least 600
rows of budget (:func:`dprm.mining.auto_trees.auto_tree_settings`).

Examples
--------
>>> from dprm.data import Attribute, AttributeKind, Domain, View
>>> from dprm.data.literal_index import LiteralIndex
>>> from dprm.mining.initial_targets import InitialTarget
>>> from dprm.privacy import Accountant, SeededNoise
>>> rng = np.random.default_rng(0)
>>> x = rng.uniform(0, 100, 3000)
>>> c = (x > 60) ^ (rng.random(3000) < 0.03)                      # c agrees with x > 60
>>> left = View("l", [Attribute("c", "l", AttributeKind.BOOLEAN, c.astype(np.int8))])
>>> right = View("r", [Attribute("x", "r", AttributeKind.NUMERIC, x, Domain(bounds=(0, 100)))])
>>> indexes = (LiteralIndex(left), LiteralIndex(right, mode="private", max_splits=9))
>>> [round(float(t)) for t in indexes[1].thresholds[0]]
[10, 20, 30, 40, 50, 60, 70, 80, 90]
>>> released = InitialTarget(1, indexes[1].splits[3])            # x ≤ 40, off the relation's 60
>>> accountant = Accountant(0.5, SeededNoise(np.random.default_rng(1)))
>>> target, partner = sharpen_pair(indexes, released, indexes[0].splits[0], 0.5, accountant, "thresholds 1")
>>> round(float(indexes[1].thresholds[0][target.split.code])), partner == indexes[0].splits[0]
(60, True)
>>> [(e.step, float(e.epsilon)) for e in accountant.ledger]
[('thresholds 1', 0.5)]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dprm.data.attributes import AttributeKind
from dprm.data.literal_index import LiteralIndex, Split
from dprm.mining.initial_targets import GainCounter, InitialTarget, Literal, majority_counts, split_gain_counts
from dprm.privacy import Accountant, ExponentialMechanism
from dprm.privacy.budget import EpsilonLike

__all__ = ["THRESHOLD_SENSITIVITY", "THRESHOLD_WINDOW", "anchored_side", "sharpen_pair", "window_literals"]

#: The score's sensitivity (monotone: module docstring).
THRESHOLD_SENSITIVITY = 1
#: Grid points either side of a released threshold that are candidates.
THRESHOLD_WINDOW = 3


def anchored_side(target: InitialTarget, partner: Split) -> str | None:
    """The literal of a released pair that may move: ``"target"`` or ``"partner"`` where it is the
    pair's one numeric literal, else None (module docstring).

    Examples
    --------
    >>> b, x = Split(0, AttributeKind.BOOLEAN, 1), Split(0, AttributeKind.NUMERIC, 4)
    >>> anchored_side(InitialTarget(1, x, high=7), b), anchored_side(InitialTarget(0, b), x)
    ('target', 'partner')
    >>> anchored_side(InitialTarget(0, b), b), anchored_side(InitialTarget(0, x), x)
    (None, None)
    """
    numeric = [name for name, split in (("target", target.split), ("partner", partner))
               if split.kind is AttributeKind.NUMERIC]
    return numeric[0] if len(numeric) == 1 else None


def window_literals(index: LiteralIndex, split: Split, high: int | None = None,
                    window: int = THRESHOLD_WINDOW) -> list[Literal]:
    """The candidates near a released numeric literal (module docstring), the released one included.

    A split ``a ≤ t_j``: the splits of its attribute with codes ``j − w … j + w``; an
    interval ``t_j < a ≤ t_k`` (``high = k``): the intervals ``(j', k']`` with ``|j' − j|``
    and ``|k' − k|`` at most ``w`` and ``j' < k'``.

    Examples
    --------
    >>> from dprm.data import Attribute, Domain, View
    >>> x = Attribute("x", "v", AttributeKind.NUMERIC, np.linspace(0, 1, 50), Domain(bounds=(0, 1)))
    >>> index = LiteralIndex(View("v", [x]), mode="private", max_splits=8)
    >>> [s.code for s, _ in window_literals(index, index.splits[1], window=2)]
    [0, 1, 2, 3]
    >>> [(s.code, high) for s, high in window_literals(index, index.splits[1], high=2, window=1)]
    [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    """
    own = {s.code: s for s in index.splits if s.attribute == split.attribute}
    near = [own[code] for code in range(split.code - window, split.code + window + 1) if code in own]
    if high is None:
        return [(s, None) for s in near]
    return [(s, k) for s in near for k in range(high - window, high + window + 1) if k in own and k > s.code]


def sharpen_pair(indexes: Sequence[LiteralIndex], target: InitialTarget, partner: Split, epsilon: EpsilonLike,
                 accountant: Accountant, step: str, counters: Sequence[GainCounter] | None = None,
                 window: int = THRESHOLD_WINDOW) -> tuple[InitialTarget, Split]:
    """The pair with its one numeric literal chosen again near its threshold (module docstring).

    Charges ``epsilon`` as ``step``: one monotone exponential mechanism of sensitivity 1.
    A pair without exactly one numeric literal is returned as it is and charges nothing
    (the caller spends that share elsewhere: :func:`anchored_side` says beforehand).
    ``counters[s]`` counts :func:`~dprm.mining.initial_targets.split_gain_counts` of view
    ``s``'s literals against the other view's over all the rows (a sharded run's sum).
    """
    side = anchored_side(target, partner)
    if side is None:
        return target, partner
    if side == "target":
        class_side, klass = 1 - target.side, (partner, None)
        candidates = window_literals(indexes[target.side], target.split, target.high, window)
    else:
        class_side, klass = target.side, (target.split, target.high)
        candidates = window_literals(indexes[1 - target.side], partner, None, window)
    if counters is None:
        counts, totals = split_gain_counts(indexes[class_side], indexes[1 - class_side], [klass], candidates)
    else:
        counts, totals = counters[class_side]([klass], candidates)
    mechanism = ExponentialMechanism(epsilon, THRESHOLD_SENSITIVITY, monotone=True)
    split, high = candidates[int(mechanism.release(accountant, step, majority_counts(counts, totals)[0]))]
    if side == "target":
        return InitialTarget(target.side, split, high), partner
    return target, split
