"""The ``--seed`` option's one rule, shared by every command that takes it.

A seed is an integer from 0 to 2^63 − 1: numpy's and scikit-learn's seeds take it,
and it is written as a JSON number that other programs read exactly as a 64-bit
integer.
"""

from __future__ import annotations

from dprm.errors import ParameterError

__all__ = ["check_seed"]


def check_seed(seed: int | None) -> None:
    """A one-line :class:`ParameterError` unless ``seed`` is None or in [0, 2^63 − 1].

    Examples
    --------
    >>> check_seed(None), check_seed(2**63 - 1)
    (None, None)
    >>> check_seed(2**63)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: --seed must be an integer from 0 to 2^63 - 1, not 9223372036854775808
    """
    if seed is not None and not 0 <= seed < 2**63:
        raise ParameterError(f"--seed must be an integer from 0 to 2^63 - 1, not {seed}")
