"""Compiled histogram pass of the split criterion (numba), kept apart so that importing
:mod:`dprm.trees.criterion` (and so :mod:`dprm.mining`) does not import numba."""

from __future__ import annotations

from numba import njit, prange

__all__ = ["code_histograms", "code_histograms_serial"]


@njit(cache=True, nogil=True, inline="always")
def _attribute_histogram(codes, missing_code, n_codes, starts, selected, key, width, out, a):
    column = codes[a]
    start = starts[a]
    missing_at = n_codes[a]
    for i in range(selected.size):
        code = column[selected[i]]
        out[start + (missing_at if code == missing_code else code) * width + key[i]] += 1


@njit(cache=True, parallel=True)
def code_histograms(codes, missing_code, n_codes, starts, selected, key, width, out):
    """``out[starts[a] + code * width + key] += 1`` for every attribute ``a`` and row
    ``selected[i]`` (key ``key[i]``); the missing code counts as code ``n_codes[a]``.
    The attributes are spread over the cores."""
    for a in prange(codes.shape[0]):
        _attribute_histogram(codes, missing_code, n_codes, starts, selected, key, width, out, a)


@njit(cache=True, nogil=True)
def code_histograms_serial(codes, missing_code, n_codes, starts, selected, key, width, out):
    """:func:`code_histograms` on one core: for small inputs, where starting the
    parallel loop (and its threads' spinning between calls) costs more than counting."""
    for a in range(codes.shape[0]):
        _attribute_histogram(codes, missing_code, n_codes, starts, selected, key, width, out, a)
