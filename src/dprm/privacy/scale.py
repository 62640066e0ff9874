"""Conservative float noise scales from exact epsilons.

A mechanism charges an exact rational epsilon ``eps`` and needs a float noise scale
``s`` for its sampler. Rounding ``numerator / eps`` to the nearest float can give a
scale slightly too small, i.e. a real privacy loss slightly above the charge. We
therefore round towards more noise:

1. ``eps_down`` = the largest float ``<= eps`` (so ``eps_down <= eps`` exactly);
2. ``s`` = the smallest float ``>= numerator / eps_down`` (exact rational division).

Then ``numerator / s <= eps_down <= eps``. OpenDP's privacy maps compute
``numerator / s`` in float rounded *upwards*; because ``eps_down`` is itself a float,
that upward-rounded value is still ``<= eps_down <= eps``. The next smaller float
scale maps strictly above ``eps_down`` and hence (after rounding up) above ``eps``
whenever that matters: this is the boundary that the tests pin on both sides.
"""

from __future__ import annotations

import math
from fractions import Fraction

from dprm.errors import ParameterError
from dprm.privacy.budget import EpsilonLike, as_epsilon

__all__ = ["float_down", "float_up", "noise_scale"]


def float_down(value: Fraction) -> float:
    """Return the largest float that is ``<= value``.

    Examples
    --------
    >>> float_down(Fraction(1, 10)) < 0.1  # the float 0.1 is slightly above 1/10
    True
    >>> float_down(Fraction(1, 2))
    0.5
    """
    nearest = float(value)
    if Fraction(nearest) > value:
        nearest = math.nextafter(nearest, -math.inf)
    return nearest


def float_up(value: Fraction) -> float:
    """Return the smallest float that is ``>= value``.

    Examples
    --------
    >>> float_up(Fraction(1, 10))
    0.1
    >>> float_up(Fraction(1, 3)) > 1 / 3
    True
    """
    nearest = float(value)
    if Fraction(nearest) < value:
        nearest = math.nextafter(nearest, math.inf)
    return nearest


def noise_scale(numerator: EpsilonLike, epsilon: EpsilonLike) -> float:
    """Smallest float scale ``s`` with ``numerator / s <= float_down(epsilon)``.

    Use ``numerator = sensitivity`` for Laplace noise (``s = Δ/ε``) and
    ``numerator = 2 * sensitivity`` for the exponential mechanism (``s = 2Δ/ε``).

    Parameters
    ----------
    numerator : number
        Positive numerator (sensitivity, or twice it).
    epsilon : number
        The exact epsilon charged for the release.

    Returns
    -------
    float
        The conservative scale.

    Examples
    --------
    >>> noise_scale(1, 0.5)
    2.0
    >>> s = noise_scale(1, 0.1)
    >>> s > 10.0 and Fraction(1) / Fraction(s) <= Fraction(1, 10)
    True
    """
    exact_num = as_epsilon(numerator, "sensitivity")
    eps_down = float_down(as_epsilon(epsilon))
    if eps_down <= 0.0:
        raise ParameterError(f"epsilon {float(epsilon):.3g} is too small to be represented")
    scale = float_up(exact_num / Fraction(eps_down))
    if not math.isfinite(scale):
        raise ParameterError(
            f"noise scale {float(exact_num):.3g}/{float(epsilon):.3g} is too large to be represented"
        )
    return scale
