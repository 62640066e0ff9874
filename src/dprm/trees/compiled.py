"""The tree kernels as the rest of dprm calls them: precompiled for small runs, numba's otherwise.

Each function here picks the kernel for its input and calls it: the serial kernels
through :func:`dprm.precompiled.kernel` (the ahead-of-time build when there is one,
so a small run never imports numba), the parallel kernels and the chains that run on
several threads at once from numba (:mod:`dprm.trees._kernels`,
:mod:`dprm.trees._bit_kernels`, :mod:`dprm.trees._histograms`). Both are the same
compiled source and give the same results.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from dprm.precompiled import kernel

__all__ = ["PARALLEL_ROUTING_ROWS", "THREADED_CHAIN_ROWS", "chain_kernel", "code_histograms", "route_rows",
           "split_bitsets"]

#: Rows from which :func:`route_rows` spreads the rows over the cores; below, one core
#: routes them (on MAMMAL's 2,575 rows the parallel loop's start-up costs more CPU
#: than the routing: ``docs/performance.md``).
PARALLEL_ROUTING_ROWS = 100_000

#: Rows from which :func:`chain_kernel` gives numba's chain, which releases the GIL,
#: so that the chains of a miner's batch run on all cores; below, a chain of 10,000
#: steps takes milliseconds, less than numba's start-up (about 0.5 CPU-s), and the
#: ahead-of-time build runs it.
THREADED_CHAIN_ROWS = 10_000


def route_rows(
    codes: np.ndarray,
    missing_code: int,
    attribute: np.ndarray,
    code: np.ndarray,
    numeric: np.ndarray,
    rows: np.ndarray,
    start: int,
    first_leaf: int,
) -> np.ndarray:
    """Cells of ``rows`` (increasing) routed from node ``start`` down a complete tree.

    ``codes`` is the literal index's ``(attributes, rows)`` matrix: the rows below a
    node all take that node's test first, so they read one attribute's codes in
    order (a layout with one row per data row measured three times slower). From
    :data:`PARALLEL_ROUTING_ROWS` rows on, the rows are spread over the cores.

    Examples
    --------
    >>> codes = np.array([[1, 0, 255]], dtype=np.uint8)   # one Boolean attribute, 3 rows
    >>> route_rows(codes, 255, np.array([0]), np.array([1]), np.array([False]),
    ...            np.arange(3), 0, 1).tolist()           # holds: leaf 1; fails: leaf 2; missing: node 0
    [1, 2, 0]
    """
    if rows.size >= PARALLEL_ROUTING_ROWS:
        from dprm.trees._kernels import _route_rows_parallel as route
    else:
        route = kernel("dprm.trees._kernels", "_route_rows_serial")
    return route(codes, missing_code, attribute, code, numeric, rows, start, first_leaf)


def code_histograms(codes: np.ndarray, missing_code: int, n_codes: np.ndarray, starts: np.ndarray,
                    selected: np.ndarray, key: np.ndarray, width: int, out: np.ndarray, *, parallel: bool) -> None:
    """:func:`dprm.trees._histograms.code_histograms` (``parallel``) or its serial twin, into ``out``.

    Examples
    --------
    >>> out = np.zeros(6, dtype=np.int64)   # one attribute, codes 0 and 1 and missing, 2 keys
    >>> code_histograms(np.array([[0, 1, 255, 1]], dtype=np.uint8), 255, np.array([2]), np.array([0]),
    ...                 np.arange(4), np.array([0, 1, 1, 1]), 2, out, parallel=False)
    >>> out.tolist()                        # (code, key): (0, 0), (1, 1) twice, (missing, 1)
    [1, 0, 0, 2, 0, 1]
    """
    if parallel:
        from dprm.trees._histograms import code_histograms as count
    else:
        count = kernel("dprm.trees._histograms", "code_histograms_serial")
    count(codes, missing_code, n_codes, starts, selected, key, width, out)


def split_bitsets(codes: np.ndarray, missing: int, splits: np.ndarray, starts: np.ndarray,
                  sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`dprm.trees._bit_kernels.split_bitsets`: ``(holds, absent)`` row bitsets."""
    return kernel("dprm.trees._bit_kernels", "split_bitsets")(codes, missing, splits, starts, sizes)


def chain_kernel(bitsets: bool, n_rows: int) -> Callable[..., Any]:
    """The chain to run: on row bitsets (:func:`~dprm.trees._bit_kernels.run_bit_chain`) or
    on the pre-order layout (:func:`~dprm.trees._kernels.run_chain`); numba's from
    :data:`THREADED_CHAIN_ROWS` rows on, else through the ahead-of-time build."""
    module, name = ("dprm.trees._bit_kernels", "run_bit_chain") if bitsets else ("dprm.trees._kernels", "run_chain")
    chain = kernel(module, name)
    return chain.numba() if n_rows >= THREADED_CHAIN_ROWS else chain
