r"""A damping of near-tautologies: the quality times a logistic fall in the union size.

Why
---
The Jaccard index rewards redescriptions whose two queries both hold on almost every
row: ``[age ≤ 86]`` against ``[q_379 ≤ 5.25] ∨ ...`` has ``J ≈ 0.99`` and says nothing
(true p-value about 0.5). With a Boolean view of rare events (MAMMAL's species) such
pairs are rare, but a numeric attribute offers half-intervals covering any share of
the rows on *both* sides, so on two numeric views (spi, nmes1988, planted data)
near-tautologies win every draw. ReReMi excludes them with a hard maximum support
(0.8 of the rows, :class:`~dprm.mining.serenade.reremi.ReReMi`); a hard cut on the
data would make the score jump by 1 when one row is added, so the private miners
damp the score smoothly instead:

.. math::

    q_{cap}(i, u) = q(i, u)\,\sigma\bigl(\mu (h - u)\bigr),

with ``q`` the Serenade quality (or the plain Jaccard index), ``h`` the public cap
(``max_union`` times the released noisy row count, or the public ``n``) and ``μ > 0``.

Sensitivity (derivation)
------------------------
Let ``f = q(i, u) ∈ [0, 1]`` and ``g = σ(μ(h - u)) ∈ (0, 1)``, ``g`` non-increasing in
``u``. Adding one row moves ``(i, u)`` to ``(i, u)``, ``(i, u+1)`` or ``(i+1, u+1)``
(``dprm.mining.serenade.quality``), so ``f' - f ∈ [-down, up]`` (the base quality's
exact one-sided bounds) and ``u' ∈ {u, u+1}``, hence ``0 ≤ g - g' ≤ γ`` with

.. math::

    γ = \max_u \bigl(σ(μ(h-u)) - σ(μ(h-u-1))\bigr) ≤ σ(μ/2) - σ(-μ/2) = \tanh(μ/4),

the largest step of a logistic of slope ``μ`` over one unit (at its centre). Then

.. math::

    q'_{cap} - q_{cap} = (f' - f)\,g' + f\,(g' - g) ∈ [-down - γ, up],

because ``g' ∈ (0, 1)`` scales ``[-down, up]`` into itself and ``f (g' - g) ∈ [-γ, 0]``.
Removing a row mirrors the interval. So the capped quality has the one-sided bounds
``(down + tanh(μ/4), up)``, range ``R = down + up + tanh(μ/4)`` and sensitivity
``max(down + tanh(μ/4), up)`` — over every data size, as the base quality's. The cap
``h`` must be public (a function of released values): in ``engine`` mode, where the row
count is never released, the miners do not damp.

The steepness: ``μ = λ / 2`` (half the logistic's, a function of the public centre), so
``tanh(μ/4) ≈ λ/8`` adds about a third to ``R`` at the line search's ``λ``
(``R ≈ 1.5 Δ`` becomes about ``2 Δ``). The fall then spans ``≈ 8/λ`` rows, a few times
the rise at the minimum support: a tautology (``u = n``) with the default cap
``h = 0.8 n`` and centre ``c = 0.1 n`` is damped by ``σ(-0.1 n λ) = σ(-cλ)``; the line
search gives ``cλ ≈ 5–8`` for every centre in ``quality``'s table, a factor of
0.007–0.0003, while a redescription with ``u ≤ 0.6 n`` keeps ``σ(cλ) ≥ 0.99`` of its score.

Examples
--------
>>> from dprm.mining.serenade.quality import LogisticQuality
>>> capped = UnionCap(LogisticQuality(center=10, steepness=0.5), cap=80.0, steepness=0.25)
>>> capped([40, 95], [50, 100]).round(3).tolist()   # the near-tautology is damped
[0.8, 0.006]
>>> down, up = capped.one_sided_sensitivity()
>>> round(down - 0.0587, 3) == round(float(np.tanh(0.25 / 4)), 3), round(up, 4)
(True, 0.1225)
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit

from dprm.errors import ParameterError

__all__ = ["UnionCap"]


class UnionCap:
    """``q(i, u) · σ(μ (h − u))``: a quality damped where the union exceeds the cap ``h``.

    Parameters
    ----------
    quality : callable
        ``quality(intersection, union)`` with values in ``[0, 1]``.
    one_sided : (float, float)
        The base quality's ``(down, up)``: the largest decrease and increase of a
        score when one row is added (e.g.
        :meth:`~dprm.mining.serenade.quality.LogisticQuality.one_sided_sensitivity`).
        Taken from ``quality`` when omitted and it has that method.
    cap : float
        ``h``, in rows; must be public.
    steepness : float
        ``μ > 0``.
    """

    def __init__(self, quality: Callable[[ArrayLike, ArrayLike], np.ndarray], cap: float, steepness: float,
                 one_sided: tuple[float, float] | None = None) -> None:
        if not (math.isfinite(cap) and cap >= 0):
            raise ParameterError(f"union cap must be a number of rows >= 0, not {cap}")
        if not (math.isfinite(steepness) and steepness > 0):
            raise ParameterError(f"cap steepness must be a positive number, not {steepness}")
        if one_sided is None:
            one_sided = quality.one_sided_sensitivity()  # type: ignore[attr-defined]
        self.quality = quality
        self.cap = float(cap)
        self.steepness = float(steepness)
        self.base_one_sided = (float(one_sided[0]), float(one_sided[1]))

    def __repr__(self) -> str:
        return f"UnionCap({self.quality!r}, cap={self.cap}, steepness={self.steepness})"

    def __call__(self, intersection: ArrayLike, union: ArrayLike) -> np.ndarray:
        """Damped scores (float64), broadcast over the arrays."""
        u = np.asarray(union, dtype=np.float64)
        return np.asarray(self.quality(intersection, union), dtype=np.float64) * expit(self.steepness * (self.cap - u))

    @property
    def step(self) -> float:
        """``γ = tanh(μ/4)``: the largest fall of the damping factor over one row."""
        return math.tanh(self.steepness / 4)

    def one_sided_sensitivity(self) -> tuple[float, float]:
        """``(down + γ, up)``: largest decrease and increase of a score when a row is added."""
        down, up = self.base_one_sided
        return down + self.step, up

    def sensitivity(self) -> float:
        """``max(down + γ, up)``: the largest change of a score, a row added or removed."""
        return max(self.one_sided_sensitivity())

    def score_range(self) -> float:
        """``R = down + up + γ``."""
        return float(sum(self.one_sided_sensitivity()))
