"""The initial pairs of the greedy miners, counted and drawn block by block.

InitialPairs (Algorithm 4) makes ``k`` independent exponential-mechanism draws over
*every* pair (literal of the initial view, literal of the other view), pairs of two
literals on the same attribute name left out. That candidate set is the product of
the two views' literals: 5,000 Boolean attributes on each side make 25 million pairs,
and a numeric attribute alone has ``(s+1)(s+2)/2 - 1`` interval literals (209 at
``s = 19`` split points). Counting it as one dense matrix and scoring it as flat
arrays (intersection, union, pair number, score, then Gumbel keys for each draw) made
memory grow with the number of *pairs*: 2.4 GB for 1,000 rows × 10,000 Boolean
columns.

Here the pairs are produced in **blocks** of at most ``block_pairs`` (:func:`pair_blocks`),
and each draw is a Gumbel race fed block by block (:class:`~dprm.privacy.WeightedReservoir`
with ``k = 1``, :meth:`~dprm.privacy.reservoir.ReservoirDraw.offer`). Peak memory is
``O(block_pairs + literals + rows · attributes)``, whatever the number of pairs.

Exactness (derivation). A weighted reservoir with ``k = 1`` keeps the largest key
``q_i/s + G_i`` over everything offered; the largest key over all blocks is the
largest over all pairs, so the streamed race *is* the race over the whole candidate
set: the same exponential-mechanism draw, ``P(i) ∝ exp(q_i/s)``, charged once per draw
before any key is drawn. The candidate set and the order of the stream depend on the
public schema only (literals from declared domains, attribute names), never on the
data.

Same seed, same draws. When all pairs fit in one block (``block_pairs`` is 2 Mi, e.g.
MAMMAL's 1.9 M pairs), the draws take their Gumbel keys exactly as before — draw 1
over all pairs in (left, right) order, then draw 2, ... — so a seeded run is
unchanged. With more pairs, the draws take their keys block by block, interleaved:
the same distribution, with a different assignment of the seeded numbers.

How the counts are made. Intersections ``|supp(f) ∩ supp(o)|`` of a block of
literals ``f`` of the initial view with every literal ``o`` of a chunk of the other
view's attributes are asked of the engine (``GridCounts.pair_intersections``). The
in-memory :class:`~dprm.engine.table_counter.TableCounter` counts them from joint
histograms of codes: per (attribute of ``f``, attribute of ``o``) one ``bincount`` of
the rows' bin pairs and a 2-D cumulative sum, each interval pair four entries of it
(:mod:`.literals`): exact integers, ``O(rows)`` memory, never a (literals × rows)
matrix of row masks (which peaked at 3.3 GB at 100,000 rows × 50 + 50 columns).

Too many pairs. Time stays proportional to ``pairs × k``; a run over more than
:data:`MAX_PAIRS` pairs is refused by :func:`check_pair_count` before anything is
released (the candidate set is a function of the public schema, so the refusal
reveals nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from dprm.engine.base import GridCounts
from dprm.engine.table_counter import TableCounter
from dprm.errors import ParameterError
from dprm.mining.serenade.literals import LiteralTable
from dprm.privacy import Accountant, WeightedReservoir
from dprm.privacy.budget import EpsilonLike

__all__ = ["BLOCK_PAIRS", "MAX_PAIRS", "ONEHOT_CELLS", "PairBlock", "check_pair_count", "count_pairs",
           "draw_initial_pairs", "literal_sizes", "pair_blocks", "top_pairs"]

#: Pairs per block (2 Mi: about 100 MB of counts, scores and keys at a time).
BLOCK_PAIRS = 1 << 21
#: Entries of one dense one-hot chunk of the other view (4 Mi float32: 16 MB).
ONEHOT_CELLS = 1 << 22
#: Keys drawn at once within a block (1 Mi: the Gumbel temporaries stay near 50 MB).
OFFER_PAIRS = 1 << 20
#: Most candidate pairs a run may have (each draw scores every pair once).
MAX_PAIRS = 10**9


@dataclass(frozen=True)
class PairBlock:
    """Some allowed pairs with their counts.

    Attributes
    ----------
    pair : ndarray of int64
        ``left · n_right + right`` for the literal numbers ``left`` and ``right`` in
        the left and right view's :class:`LiteralTable`.
    intersection, union : ndarray of int64
        ``|supp(left) ∩ supp(right)|`` and ``|supp(left) ∪ supp(right)|``.
    """

    pair: np.ndarray
    intersection: np.ndarray
    union: np.ndarray

    def __len__(self) -> int:
        return int(self.pair.size)


def _name_codes(tables: Sequence[LiteralTable]) -> tuple[np.ndarray, np.ndarray]:
    """Each literal's attribute name as an integer, shared across the two views."""
    names = np.asarray(list(tables[0].names) + list(tables[1].names), dtype=object)
    _, codes = np.unique(names.astype(str), return_inverse=True)
    return codes[: len(tables[0])], codes[len(tables[0]):]


def count_pairs(tables: Sequence[LiteralTable]) -> int:
    """Number of allowed pairs: all (left, right) literal pairs on different attribute names.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, Domain, View
    >>> def view(side, names):
    ...     return View(side, [Attribute(n, side, AttributeKind.BOOLEAN, np.array([0, 1, 1], np.int8),
    ...                                  Domain(declared=True)) for n in names])
    >>> tables = [LiteralTable(view("left", ["a", "b"]), mode="private", max_splits=3),
    ...           LiteralTable(view("right", ["b", "c", "d"]), mode="private", max_splits=3)]
    >>> count_pairs(tables)   # 2 × 3, without (b, b)
    5
    """
    left, right = _name_codes(tables)
    shared = np.intersect1d(left, right)
    same = sum(int(np.count_nonzero(left == c)) * int(np.count_nonzero(right == c)) for c in shared)
    return len(tables[0]) * len(tables[1]) - same


def check_pair_count(tables: Sequence[LiteralTable], algorithm: str, limit: int | None = None) -> int:
    """Refuse (one-line :class:`ParameterError`) a candidate set of more than ``limit`` pairs.

    ``limit`` defaults to :data:`MAX_PAIRS`. A function of the public schema only; call
    it before anything is released. Returns the number of pairs.
    """
    limit = MAX_PAIRS if limit is None else limit
    n = count_pairs(tables)
    if n == 0:
        raise ParameterError(f"{algorithm}: no candidate initial pair (every literal's attribute name is on "
                             f"both sides)")
    if n > limit:
        raise ParameterError(
            f"{algorithm}: {len(tables[0]):,} × {len(tables[1]):,} literals make {n:,} candidate initial pairs, "
            f"more than the limit of {limit:,}; use fewer attributes or fewer split points (max-splits)")
    return n


def _onehot_chunks(table: LiteralTable, rows: int,
                   max_literals: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The other view's attributes in chunks: ``(attributes, literals, [lower, upper])``.

    ``literals`` are the literal numbers whose attribute lies in the chunk; ``lower`` and
    ``upper`` their cumulative positions relative to the chunk's first position.
    Each chunk's one-hot matrix has at most ``ONEHOT_CELLS`` entries and at most
    ``max_literals`` literals, unless one attribute alone has more.
    """
    offsets = table._offsets
    n_attributes = offsets.size
    ends = np.append(offsets[1:], table.n_positions - 1)
    width = ends - offsets  # positions per attribute (leading zero slot and bins)
    literal_counts = np.bincount(table.attribute, minlength=n_attributes)
    per_chunk = max(1, ONEHOT_CELLS // max(rows, 1))
    start = 0
    while start < n_attributes:
        stop = start + 1
        total, literals_in = int(width[start]), int(literal_counts[start])
        while (stop < n_attributes and total + int(width[stop]) <= per_chunk
               and literals_in + int(literal_counts[stop]) <= max_literals):
            total += int(width[stop])
            literals_in += int(literal_counts[stop])
            stop += 1
        literals = np.flatnonzero((table.attribute >= start) & (table.attribute < stop))
        base = offsets[start]
        yield (np.arange(start, stop), literals, np.stack([table._lower[literals] - base,
                                                           table._upper[literals] - base]))
        start = stop


def pair_blocks(tables: Sequence[LiteralTable], side: int, block_pairs: int = BLOCK_PAIRS,
                counts: GridCounts | None = None, n_rows: int | None = None) -> Iterator[PairBlock]:
    """All allowed pairs with their intersection and union, in blocks of at most ``block_pairs``.

    Parameters
    ----------
    tables : (LiteralTable, LiteralTable)
        The left and right view's literals.
    side : {0, 1}
        The initial view (its literals' row masks are made; the other view is
        counted through its bins).
    block_pairs : int
        Most pairs per block (a block holds at least one literal of the initial view
        with all literals of one attribute of the other view, so a block can exceed
        it only when a single attribute has more literals). When every pair fits in
        one block, that block lists them in (left, right) order, as one flat matrix
        would.
    counts, n_rows : GridCounts and int, optional
        Who counts (an engine's counts for ``tables``' grid) and the number of rows
        it holds; by default the rows ``tables`` encode, counted here. The blocks
        (and so the order of the stream) depend on ``n_rows`` and the schema only,
        never on how the rows are split into shards; when every pair fits in one
        block, all of its counting requests go to the engine at once.

    Yields
    ------
    PairBlock

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, Domain, View
    >>> a = Attribute("a", "left", AttributeKind.BOOLEAN, np.array([1, 1, 0, 0], np.int8), Domain(declared=True))
    >>> x = Attribute("x", "right", AttributeKind.BOOLEAN, np.array([1, 0, 1, 0], np.int8), Domain(declared=True))
    >>> tables = [LiteralTable(View("left", [a]), mode="private", max_splits=3),
    ...           LiteralTable(View("right", [x]), mode="private", max_splits=3)]
    >>> [(b.intersection.tolist(), b.union.tolist()) for b in pair_blocks(tables, 0)]
    [([1], [3])]
    """
    first, other = tables[side], tables[1 - side]
    n_first, n_other = len(first), len(other)
    if n_first == 0 or n_other == 0:
        return
    if counts is None:
        counts, n_rows = TableCounter(tables), first.n_rows
    rows = int(n_rows)
    codes_first, codes_other = _name_codes(tables)
    if side == 1:
        codes_first, codes_other = codes_other, codes_first
    size_first = counts.literal_sizes(side)
    size_other = counts.literal_sizes(1 - side)
    n_right = len(tables[1])
    # the schedule: (chunk of the other view's attributes, its literals, members of the initial view)
    schedule = []
    for attributes, literals, _ in _onehot_chunks(other, rows, block_pairs):
        if literals.size == 0:
            continue
        chunk_positions = int(other._offsets[attributes[-1]] - other._offsets[attributes[0]]
                              + other.index.n_codes[attributes[-1]] + 1)
        step = max(1, block_pairs // max(literals.size, chunk_positions))
        for begin in range(0, n_first, step):
            schedule.append((attributes, literals, np.arange(begin, min(begin + step, n_first))))
    if n_first * n_other <= block_pairs:  # one block, in (left, right) order: the same stream as one flat matrix
        matrix = np.empty((n_first, n_other), dtype=np.int64)
        answers = counts.pair_intersections(side, [(a, m) for a, _, m in schedule])
        for (_, literals, members), inter in zip(schedule, answers):
            matrix[np.ix_(members, literals)] = inter
        yield _block(np.arange(n_first), np.arange(n_other), matrix, size_first, size_other,
                     codes_first, codes_other, side, n_right)
        return
    for attributes, literals, members in schedule:
        inter = counts.pair_intersections(side, [(attributes, members)])[0]  # (members, literals)
        yield _block(members, literals, inter, size_first, size_other, codes_first, codes_other, side, n_right)


def _block(members, literals, inter, size_first, size_other, codes_first, codes_other, side, n_right) -> PairBlock:
    """A block in (left, right) order, same-attribute pairs left out."""
    union = size_first[members][:, None] + size_other[literals][None, :] - inter
    if side == 0:
        pair = members[:, None] * n_right + literals[None, :]
        allowed = codes_first[members][:, None] != codes_other[literals][None, :]
    else:  # (left, right) order: the other view is the left one
        inter, union = inter.T, union.T
        pair = literals[:, None] * n_right + members[None, :]
        allowed = codes_other[literals][:, None] != codes_first[members][None, :]
    if allowed.all():
        return PairBlock(pair.ravel(), inter.ravel(), union.ravel())
    keep = allowed.ravel()
    return PairBlock(pair.ravel()[keep], inter.ravel()[keep], union.ravel()[keep])


def draw_initial_pairs(
    tables: Sequence[LiteralTable],
    side: int,
    score: Callable[[np.ndarray, np.ndarray], np.ndarray],
    sensitivity: EpsilonLike,
    shares: Sequence[EpsilonLike],
    accountant: Accountant,
    *,
    block_pairs: int = BLOCK_PAIRS,
    counts: GridCounts | None = None,
    n_rows: int | None = None,
    distinct: bool = False,
    block_score: Callable[[PairBlock], np.ndarray] | None = None,
) -> list[tuple[int, int]]:
    """One exponential-mechanism draw over all allowed pairs per share (Algorithm 4), streamed.

    Parameters
    ----------
    tables : (LiteralTable, LiteralTable)
    side : {0, 1}
        The initial view.
    score : callable
        ``score(intersection, union)``, the quality of each pair (floats).
    sensitivity : number
        ``Δ`` of the score (the draws sample ``∝ exp(ε q / (2Δ))``).
    shares : sequence of epsilons
        One draw per share: ``WeightedReservoir(share, Δ, k=1)``, all charged (ledger
        steps ``"initial pair 1"``, ...) before the first key is drawn.
    accountant : Accountant
    block_pairs : int
        Most pairs counted and scored at a time.
    counts, n_rows : GridCounts and int, optional
        The engine's counts and its number of rows (:func:`pair_blocks`).
    distinct : bool, default False
        Draw ``j`` chooses among the pairs the draws before it did not choose (without
        replacement), instead of among all pairs (the paper's independent draws, where
        a pair drawn twice is one pair). Still one pass: draw ``j`` keeps its ``j``
        largest keys and takes the first not chosen before, which is the exponential
        mechanism over the pairs not chosen before at the same ε
        (:meth:`~dprm.privacy.WeightedReservoir.start`'s ``keep``).
    block_score : callable, optional
        ``block_score(block)``, each pair's score from the whole block (e.g. the
        covariance count of :mod:`.covariance`, which needs the literals' sizes), used
        instead of ``score``; ``sensitivity`` is then its sensitivity.

    Returns
    -------
    list of (int, int)
        The drawn (left literal, right literal), one per share.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, Domain, View
    >>> from dprm.privacy import SeededNoise
    >>> def boolean(name, side, values):
    ...     return Attribute(name, side, AttributeKind.BOOLEAN, np.array(values, np.int8), Domain(declared=True))
    >>> left = View("left", [boolean("a", "left", [1, 1, 0, 0]), boolean("b", "left", [0, 1, 0, 1])])
    >>> right = View("right", [boolean("x", "right", [1, 1, 0, 0])])
    >>> tables = [LiteralTable(v, mode="private", max_splits=3) for v in (left, right)]
    >>> acc = Accountant(2, SeededNoise(np.random.default_rng(0)))
    >>> jaccard = lambda i, u: i / u
    >>> draw_initial_pairs(tables, 0, jaccard, 1, [1, 1], acc, block_pairs=1)   # a with x, twice
    [(0, 0), (0, 0)]
    >>> [entry.step for entry in acc.ledger]
    ['initial pair 1', 'initial pair 2']
    >>> acc = Accountant(2, SeededNoise(np.random.default_rng(0)))
    >>> draw_initial_pairs(tables, 0, jaccard, 1, [1, 1], acc, block_pairs=1, distinct=True)
    [(0, 0), (1, 0)]
    """
    draws = [WeightedReservoir(share, sensitivity, k=1).start(accountant, f"initial pair {number}",
                                                              keep=number if distinct else 1)
             for number, share in enumerate(shares, start=1)]
    n_right = len(tables[1])
    for block in pair_blocks(tables, side, block_pairs, counts, n_rows):
        if len(block) == 0:
            continue
        scores = np.asarray(block_score(block) if block_score is not None else score(block.intersection, block.union),
                            dtype=np.float64)
        labels = block.pair
        del block
        for draw in draws:  # each draw takes its keys for the whole block in turn
            for begin in range(0, scores.size, OFFER_PAIRS):
                draw.offer(scores[begin:begin + OFFER_PAIRS], labels=labels[begin:begin + OFFER_PAIRS])
    chosen: list[int] = []
    for draw in draws:
        # distinct: the best of the draw's keys not chosen before; fewer pairs than draws: a repeat
        result = draw.result(exclude=chosen if distinct else ())
        if result.size == 0:
            result = draw.result()
        if result.size == 0:
            raise ParameterError("no allowed pair of literals: the views share every attribute name")
        chosen.append(int(result[0]))
    return [divmod(label, n_right) for label in chosen]


def literal_sizes(table: LiteralTable) -> np.ndarray:
    """``|supp(literal)|`` of every literal of ``table`` (int64), in one pass over the rows."""
    return table.group_counts(np.zeros(table.n_rows, dtype=np.int64), 1)[:, 0].astype(np.int64)


def top_pairs(
    tables: Sequence[LiteralTable],
    side: int,
    k: int,
    value: Callable[[PairBlock], np.ndarray],
    *,
    block_pairs: int = BLOCK_PAIRS,
    counts: GridCounts | None = None,
    n_rows: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` pairs of largest ``value``, streamed (the non-private ReReMi's start).

    Ties are broken by the pair number ``left · n_right + right``, i.e. exactly as a
    stable sort of one flat (left, right) array by decreasing value would. Memory is
    that of one block plus ``k``. ``counts`` and ``n_rows``: who counts (an engine's
    counts for ``tables``' grid, :func:`pair_blocks`); by default the rows ``tables`` encode.

    Returns
    -------
    (pairs, values) : ndarray of int64, ndarray of float64
        Best first.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, Domain, View
    >>> def boolean(name, side, values):
    ...     return Attribute(name, side, AttributeKind.BOOLEAN, np.array(values, np.int8), Domain(declared=True))
    >>> left = View("left", [boolean("a", "left", [1, 1, 0, 0]), boolean("b", "left", [0, 1, 0, 1])])
    >>> right = View("right", [boolean("x", "right", [1, 1, 0, 0]), boolean("y", "right", [0, 1, 0, 1])])
    >>> tables = [LiteralTable(v, mode="private", max_splits=3) for v in (left, right)]
    >>> top_pairs(tables, 0, 2, lambda b: b.intersection / b.union, block_pairs=1)
    (array([0, 3]), array([1., 1.]))
    """
    best_pairs = np.empty(0, dtype=np.int64)
    best_values = np.empty(0, dtype=np.float64)
    for block in pair_blocks(tables, side, block_pairs, counts, n_rows):
        values = np.asarray(value(block), dtype=np.float64)
        pair = block.pair
        if values.size > k:  # keep the block's k largest, with every tie of the k-th
            kth = np.partition(values, values.size - k)[values.size - k]
            keep = values >= kth
            values, pair = values[keep], pair[keep]
        values = np.concatenate((best_values, values))
        pair = np.concatenate((best_pairs, pair))
        order = np.lexsort((pair, -values))[:k]
        best_pairs, best_values = pair[order], values[order]
    return best_pairs, best_values
