"""Compiled histogram pass of the split criterion (numba), kept apart so that importing
:mod:`dprm.trees.criterion` (and so :mod:`dprm.mining`) does not import numba."""

from __future__ import annotations

from numba import njit, prange

__all__ = ["code_histograms"]


@njit(cache=True, parallel=True)
def code_histograms(codes, missing_code, n_codes, starts, selected, key, width, out):
    """``out[starts[a] + code * width + key] += 1`` for every attribute ``a`` and row
    ``selected[i]`` (key ``key[i]``); the missing code counts as code ``n_codes[a]``."""
    for a in prange(codes.shape[0]):
        column = codes[a]
        start = starts[a]
        missing_at = n_codes[a]
        for i in range(selected.size):
            code = column[selected[i]]
            out[start + (missing_at if code == missing_code else code) * width + key[i]] += 1
