"""Split quality by the Gini criterion, for every candidate split and node at once.

For a node whose rows split into branches ``b`` (the literal holds / the opposite
literal holds / the attribute is missing) with class counts ``n_bc``, the quality is
the negative weighted Gini impurity, in units of rows::

    q = - sum_b ( n_b - sum_c n_bc**2 / n_b )

Rows with a missing value form their own branch, so an attribute is not rewarded for
leaving rows out. Adding or removing one row changes ``q`` by at most 2 (Friedman &
Schuster 2010), the sensitivity used by the private tree builders.

The counting is one compiled pass over the rows of every node of a tree level
(:func:`branch_class_counts`): for each attribute, the count of each
``(code, node, class)`` (G nodes, K classes), attributes in parallel; the code
histogram of a node then gives every threshold of the attribute at once.
"""

from __future__ import annotations

import numpy as np

from dprm.data.attributes import AttributeKind
from dprm.data.literal_index import LiteralIndex
from dprm.trees.compiled import code_histograms

__all__ = ["gini_quality", "majority_quality", "branch_class_counts", "split_qualities", "node_class_counts", "qualities_from_counts",
           "branch_sizes_from_counts"]

GINI_SENSITIVITY = 2.0

#: Rows × attributes from which the histogram pass spreads the attributes over the
#: cores. Below, one core counts: on MAMMAL (2,575 rows × 194 attributes, about 1 ms
#: of counting) a parallel pass cost 5–8 ms of CPU per call (OpenMP's threads start
#: and spin between the 32 calls of an AltExpM run), the serial one about 1 ms.
PARALLEL_HISTOGRAM_CELLS = 1 << 24
#: Cells of a block of attributes above which :func:`_from_counts` copies each attribute's counts as a
#: slice rather than through an index array as large as the block.
_GATHER_CELLS = 1 << 16


def gini_quality(counts: np.ndarray) -> np.ndarray:
    """Negative Gini impurity of branches given class counts on the last axis.

    ``counts[..., b, c]``: count of class ``c`` in branch ``b``; returns the sum over
    branches ``b`` of ``-(n_b - sum_c n_bc**2 / n_b)`` (0 for empty branches).

    Examples
    --------
    >>> float(gini_quality(np.array([[5, 0], [0, 5]])))   # a pure split
    0.0
    >>> float(gini_quality(np.array([[5, 5]])))   # one mixed branch of 10 rows
    -5.0
    """
    counts = np.asarray(counts, dtype=np.float64)
    sizes = counts.sum(axis=-1)
    squares = np.square(counts).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        impurity = np.where(sizes > 0, sizes - squares / np.where(sizes > 0, sizes, 1.0), 0.0)
    return 0.0 - impurity.sum(axis=-1)


def branch_class_counts(
    index: LiteralIndex, group: np.ndarray, n_groups: int, n_classes: int
) -> list[np.ndarray]:
    """Per attribute, counts ``[code, group, class]`` with the missing code last.

    ``group`` holds ``node * n_classes + class`` per row, or ``-1`` for rows that take
    no part (outside every node, or without a class). One compiled pass over the
    rows that take part counts every attribute (:func:`dprm.trees._histograms.code_histograms`).

    Examples
    --------
    >>> from dprm.data.attributes import Attribute, Domain, View
    >>> flag = Attribute("flag", "left", AttributeKind.BOOLEAN, np.array([1, 0, 1, -1]), Domain())
    >>> index = LiteralIndex(View("left", [flag]))
    >>> counts = branch_class_counts(index, np.array([0, 1, 1, 1]), 1, 2)   # one node, classes 0/1
    >>> counts[0][:, 0, :].tolist()   # rows with code 0 (false), code 1 (true), missing (-1)
    [[0, 1], [1, 1], [0, 1]]
    """
    flat, starts = _flat_counts(index, group, n_groups, n_classes)
    return [flat[start:start + (int(n) + 1) * n_groups * n_classes].reshape(int(n) + 1, n_groups, n_classes)
            for start, n in zip(starts, index.n_codes)]


def _flat_counts(index: LiteralIndex, group: np.ndarray, n_groups: int,
                 n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The counts of :func:`branch_class_counts` in one flat array, and where each
    attribute's ``(n_codes + 1, n_groups, n_classes)`` block starts."""
    selected = np.flatnonzero(group >= 0)
    key = np.asarray(group, dtype=np.int64)[selected]
    width = n_groups * n_classes
    n_codes = np.asarray(index.n_codes, dtype=np.int64)
    sizes = (n_codes + 1) * width
    starts = np.zeros(sizes.size, dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    flat = np.zeros(int(sizes.sum()), dtype=np.int64)
    if sizes.size:
        code_histograms(index.codes, index.missing_code, n_codes, starts, selected, key, width, flat,
                        parallel=selected.size * sizes.size >= PARALLEL_HISTOGRAM_CELLS)
    return flat, starts


def split_qualities(
    index: LiteralIndex, node: np.ndarray, target: np.ndarray, n_nodes: int, n_classes: int
) -> np.ndarray:
    """Gini quality of every split of ``index.splits`` in every node.

    Parameters
    ----------
    index : LiteralIndex
        The view the tree is grown on.
    node : ndarray of int
        Node number (0 .. n_nodes-1) of each row, ``-1`` for rows in no node.
    target : ndarray of int
        Class (0 .. n_classes-1) of each row, ``-1`` for rows without a class.

    Returns
    -------
    ndarray, shape (n_splits, n_nodes)
    """
    return qualities_from_counts(index, node_class_counts(index, node, target, n_nodes, n_classes), n_nodes,
                                 n_classes)


def node_class_counts(index: LiteralIndex, node: np.ndarray, target: np.ndarray, n_nodes: int,
                      n_classes: int) -> np.ndarray:
    """The counts :func:`split_qualities` scores: ``(code, node, class)`` of every attribute, in one flat array.

    Counts of rows, so those of disjoint sets of rows (shards) add up to the counts of
    their union; :func:`qualities_from_counts` turns the sum into the qualities.
    """
    group = np.where((node >= 0) & (target >= 0), node * n_classes + target, -1)
    return _flat_counts(index, group, n_nodes, n_classes)[0]


def majority_quality(counts: np.ndarray) -> np.ndarray:
    """Rows of each branch's majority class, summed over the branches (class counts on the last axis).

    Adding a row raises it by 0 or 1 for every split alike: a monotone quality of
    sensitivity 1 (``grow_exponential_tree(quality="counts")``).

    Examples
    --------
    >>> majority_quality(np.array([[5, 1], [0, 4]])).item()   # 5 + 4 rows classified right
    9
    """
    return np.asarray(counts).max(axis=-1).sum(axis=-1)


def qualities_from_counts(index: LiteralIndex, flat: np.ndarray, n_nodes: int, n_classes: int,
                          quality: str = "gini") -> np.ndarray:
    """:func:`split_qualities` from :func:`node_class_counts` (of all the rows): ``(n_splits, n_nodes)``.

    ``quality``: ``"gini"`` (:func:`gini_quality`) or ``"counts"`` (:func:`majority_quality`).
    """
    return _from_counts(index, flat, n_nodes, n_classes, sizes_only=False, quality=quality)


def branch_sizes_from_counts(index: LiteralIndex, flat: np.ndarray, n_nodes: int,
                             n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows with a class in the true and the false branch of every split and node, from :func:`node_class_counts`.

    Two ``(n_splits, n_nodes)`` integer arrays (rows with a missing value are in neither).

    Examples
    --------
    >>> from dprm.data.attributes import Attribute, Domain, View
    >>> flag = Attribute("flag", "left", AttributeKind.BOOLEAN, np.array([1, 0, 1, -1]), Domain())
    >>> index = LiteralIndex(View("left", [flag]))
    >>> flat = node_class_counts(index, np.zeros(4, dtype=np.int64), np.array([0, 1, 1, 1]), 1, 2)
    >>> [a.tolist() for a in branch_sizes_from_counts(index, flat, 1, 2)]
    [[[2]], [[1]]]
    """
    return _from_counts(index, flat, n_nodes, n_classes, sizes_only=True)


def _from_counts(index: LiteralIndex, flat: np.ndarray, n_nodes: int, n_classes: int, *, sizes_only: bool,
                 quality: str = "gini"):
    n_codes = np.asarray(index.n_codes, dtype=np.int64)
    sizes = (n_codes + 1) * n_nodes * n_classes
    starts = np.zeros(sizes.size, dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    kinds = [attribute.kind for attribute in index.attributes]
    n_splits = np.array([1 if kind is AttributeKind.BOOLEAN else (1 if n == 2 else int(n))
                         if kind is AttributeKind.CATEGORICAL else int(n) - 1
                         for kind, n in zip(kinds, index.n_codes)], dtype=np.int64)
    first_split = np.concatenate([[0], np.cumsum(n_splits)[:-1]]).astype(np.int64)
    out = np.empty((int(n_splits.sum()), n_nodes))
    true_sizes = np.zeros((int(n_splits.sum()), n_nodes), dtype=np.int64)
    false_sizes = np.zeros((int(n_splits.sum()), n_nodes), dtype=np.int64)
    # Attributes of one kind and number of codes are scored together (a Boolean view
    # is one block, a numeric one on a common grid another).
    blocks: dict[tuple[AttributeKind, int], list[int]] = {}
    for position, (kind, n) in enumerate(zip(kinds, index.n_codes)):
        blocks.setdefault((kind, int(n)), []).append(position)
    for (kind, n), members in blocks.items():
        size = (n + 1) * n_nodes * n_classes
        hist = _block(flat, starts[members], size).reshape(len(members), n + 1, n_nodes, n_classes)
        missing = hist[:, -1]
        held = None  # the categories some row of the level holds, when others are held by none
        if kind is AttributeKind.BOOLEAN:
            true = hist[:, 1:2]
        elif kind is AttributeKind.CATEGORICAL:
            true = hist[:, : (1 if n == 2 else n)]
            if n > 2:
                held = _held(true)
                if len(held) == n:
                    held = None
                else:  # the held categories, then one empty one: every absent category's split is alike
                    true = np.concatenate([true[:, held], np.zeros_like(true[:, :1])], axis=1)
        else:
            true = np.cumsum(hist[:, :-2], axis=1)
        # every code's counts; an absent category's are 0 (exact integer sums either way)
        present = (hist[:, :-1] if held is None else true).sum(axis=1)
        false = present[:, None] - true
        rows, true_splits = first_split[members], int(n_splits[members[0]])
        if sizes_only:
            _scatter(true_sizes, rows, true_splits, held, true.sum(axis=-1))
            _scatter(false_sizes, rows, true_splits, held, false.sum(axis=-1))
            continue
        branches = np.stack([true, false, np.broadcast_to(missing[:, None], true.shape)], axis=-2)
        scored = majority_quality(branches) if quality == "counts" else gini_quality(branches)
        _scatter(out, rows, true_splits, held, scored)
    return (true_sizes, false_sizes) if sizes_only else out


def _held(true: np.ndarray) -> np.ndarray:
    """The categories (axis 1 of ``true``, counts ``(member, category, node, class)``) that some count holds."""
    members, n = true.shape[:2]
    held = np.zeros(n, dtype=bool)
    held[np.flatnonzero(true) // (true.size // max(members * n, 1)) % n] = True  # the few non-zero counts
    return np.flatnonzero(held)


def _block(flat: np.ndarray, starts: np.ndarray, size: int) -> np.ndarray:
    """The ``size`` counts from each of ``starts`` in ``flat``, one attribute a row (a view for one wide one)."""
    if size <= _GATHER_CELLS:
        return flat[starts[:, None] + np.arange(size)]
    if len(starts) == 1:
        return flat[int(starts[0]):int(starts[0]) + size][None]
    return np.stack([flat[start:start + size] for start in starts])


def _scatter(target: np.ndarray, first: np.ndarray, splits: int, held: np.ndarray | None, value: np.ndarray) -> None:
    """Write each member's ``splits`` values into the rows of ``target`` from ``first[member]`` on.

    Without ``held``, ``value[member]`` has one row per split; with it, one per held
    category (split ``held[i]``), then one, last, for every other category (no row holds them).
    """
    if held is None:
        target[first[:, None] + np.arange(splits)] = value
        return
    for member, start in enumerate(first):
        target[start:start + splits] = value[member, -1]
        target[start + held] = value[member, :-1]
