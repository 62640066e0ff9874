"""The graph side of the basis release: maximal cliques of joined items and the greedy merge into bases.

Pure functions of released (noisy) counts, used by :mod:`dprm.itemsets.private_basis`
to choose the bases (post-processing, no privacy cost); see that module's notes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["MAX_BASIS_CELLS", "MAX_CLIQUES", "LARGE_BASIS_CELLS", "Item", "maximal_cliques", "merge_bases",
           "largest_basis", "grow_within"]

#: Most cells of one basis's histogram.
MAX_BASIS_CELLS = 4096
#: Most maximal cliques enumerated (a bound on time; past it the rest are not bases).
MAX_CLIQUES = 400
#: Most cells of the one basis of ``bases="one"`` (:func:`largest_basis`).
LARGE_BASIS_CELLS = 32768

Item = tuple[int, int]  # (column, compressed code)


def maximal_cliques(n_nodes: int, adjacency: Sequence[set[int]], limit: int = MAX_CLIQUES) -> list[frozenset[int]]:
    """The maximal cliques of a graph (Bron–Kerbosch with pivoting), at most ``limit`` of them.

    Examples
    --------
    >>> sorted(sorted(c) for c in maximal_cliques(4, [{1, 2}, {0, 2}, {0, 1}, set()]))
    [[0, 1, 2], [3]]
    """
    found: list[frozenset[int]] = []
    stack = [(frozenset(), set(range(n_nodes)), set())]
    while stack and len(found) < limit:
        clique, candidates, excluded = stack.pop()
        if not candidates and not excluded:
            found.append(clique)
            continue
        pivot = max(candidates | excluded, key=lambda u: len(adjacency[u] & candidates))
        for v in sorted(candidates - adjacency[pivot]):
            stack.append((clique | {v}, candidates & adjacency[v], excluded & adjacency[v]))
            candidates = candidates - {v}
            excluded = excluded | {v}
    return found


def _cells(items: set[Item] | frozenset[Item], sizes: Sequence[int]) -> int:
    """Cells of a basis over ``items``: per column its items, plus *rest* when the column has other codes."""
    per_column: dict[int, int] = {}
    for j, _ in items:
        per_column[j] = per_column.get(j, 0) + 1
    return math.prod(k + (1 if k < sizes[j] else 0) for j, k in per_column.items())


def merge_bases(cliques: Sequence[set[Item]], sizes: Sequence[int], max_cells: int | None = None
                ) -> list[set[Item]]:
    """Merge bases greedily: largest first, each into the basis it saves most cells with, if the union fits.

    A basis contained in another is dropped; each remaining one, by decreasing cells, joins
    the merged basis whose union with it has at most ``max_cells`` cells and saves the most
    cells (``cells(a) + cells(b) − cells(a ∪ b)``, possibly negative: one basis fewer lowers
    every basis's noise scale ``k / ε_bases``), or starts a new one when none fits.

    Examples
    --------
    >>> merged = merge_bases([{(0, 0), (1, 0)}, {(0, 0), (2, 0)}, {(3, 0)}], [2, 2, 2, 2], max_cells=8)
    >>> sorted(sorted(b) for b in merged)
    [[(0, 0), (1, 0), (2, 0)], [(3, 0)]]
    """
    max_cells = MAX_BASIS_CELLS if max_cells is None else max_cells
    unique = list({frozenset(c) for c in cliques})
    unique = [b for b in unique if not any(b < o for o in unique)]
    merged: list[set[Item]] = []
    for basis in sorted(unique, key=lambda b: (-_cells(b, sizes), sorted(b))):
        best, best_saving = None, -math.inf
        own = _cells(basis, sizes)
        for k, other in enumerate(merged):
            size = _cells(other | basis, sizes)
            saving = _cells(other, sizes) + own - size
            if size <= max_cells and saving > best_saving:
                best, best_saving = k, saving
        if best is None:
            merged.append(set(basis))
        else:
            merged[best] |= basis
    return merged


def largest_basis(items: Sequence[Item], counts: Mapping[Item, float], bar: float, sizes: Sequence[int],
                  max_cells: int | None = None) -> set[Item]:
    """One basis: the items whose noisy count reaches ``bar``, by decreasing count, each added while it fits.

    An item joins when the basis with it has at most ``max_cells`` cells
    (:data:`LARGE_BASIS_CELLS` by default); ties in count go by item. A function of the
    noisy counts and public sizes only (post-processing).

    Examples
    --------
    >>> counts = {(0, 0): 90.0, (1, 0): 80.0, (1, 1): 15.0, (2, 0): 70.0, (3, 0): 10.0}
    >>> sorted(largest_basis(list(counts), counts, 30.0, [2, 3, 2, 2], max_cells=8))
    [(0, 0), (1, 0), (2, 0)]
    """
    max_cells = LARGE_BASIS_CELLS if max_cells is None else max_cells
    return grow_within(sorted((it for it in items if counts[it] >= bar), key=lambda it: (-counts[it], it)), sizes,
                       max_cells)


def grow_within(items: Iterable[Item], sizes: Sequence[int], max_cells: int) -> set[Item]:
    """The items, in order, each added while the basis with it has at most ``max_cells`` cells (:func:`_cells`).

    The cells are kept as the product of the columns' factors (a column's items, plus *rest*
    when it has other codes), one factor changed per item: the same whole numbers as
    recounting the basis for every item (once quadratic: 23,839 items of a column of 100,000
    declared categories took minutes).

    Examples
    --------
    >>> sorted(grow_within([(0, 0), (1, 0), (1, 1), (2, 0)], [2, 3, 2], 8))   # cells 2, 4, 6; then 12
    [(0, 0), (1, 0), (1, 1)]
    """
    basis: set[Item] = set()
    per_column: dict[int, int] = {}
    cells = 1
    for item in items:
        if item in basis:
            continue
        j = item[0]
        k = per_column.get(j, 0)
        factor = k + (1 if k < sizes[j] else 0) if k else 1  # the column's factor so far (1: not in the basis)
        grown = cells // factor * (k + 1 + (1 if k + 1 < sizes[j] else 0))
        if grown <= max_cells:
            basis.add(item)
            per_column[j] = k + 1
            cells = grown
    return basis
