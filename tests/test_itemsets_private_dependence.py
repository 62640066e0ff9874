"""dprm.itemsets.private_dependence: the batch scores are the one-by-one scores, bit for bit."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dprm.itemsets.private_dependence import BITSET_CELLS, candidate_arrays, dependences, table_dependences
from dprm.itemsets.private_parents import candidate_parents, next_candidates


def one_by_one(codes: np.ndarray, x: int, parents: tuple[int, ...], sizes: list[int]) -> float:
    """The reference: the table counted by a pass over the rows, then ``n·R`` as PrivBayes's ``R`` in counts."""
    config = np.zeros(len(codes), dtype=np.int64)
    for p in parents:
        config = config * sizes[p] + codes[:, p]
    configs = math.prod(sizes[p] for p in parents)
    table = np.bincount(config * sizes[x] + codes[:, x], minlength=configs * sizes[x]).reshape(configs, sizes[x])
    table = table.astype(np.float64)
    n = table.sum()
    if n <= 0:
        return 0.0
    return 0.5 * float(np.abs(table - np.outer(table.sum(axis=1), table.sum(axis=0)) / n).sum())


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool((np.asarray(a, np.float64).view(np.int64)
                                        == np.asarray(b, np.float64).view(np.int64)).all())


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_rows", [0, 1, 63, 64, 65, 777])
def test_batch_scores_equal_the_one_by_one_scores_bit_for_bit(seed, n_rows) -> None:
    """Random candidates of 0 to 3 parents (tables both sides of BITSET_CELLS), rows both sides of a word."""
    rng = np.random.default_rng(seed)
    sizes = [int(s) for s in rng.integers(1, 9, size=9)] + [40, 300]
    codes = np.column_stack([rng.integers(0, s, size=n_rows) for s in sizes]).astype(np.int64)
    if seed % 2:
        codes = np.asfortranarray(codes)  # any memory order
    candidates = []
    for _ in range(300):
        x = int(rng.integers(len(sizes)))
        others = [j for j in range(len(sizes)) if j != x]
        k = int(rng.integers(0, 4))
        candidates.append((x, tuple(int(p) for p in rng.choice(others, size=k, replace=False))))
    expected = np.array([one_by_one(codes, x, p, sizes) for x, p in candidates])
    assert same_bits(dependences(codes, candidates, sizes), expected)
    cells = [math.prod(sizes[p] for p in parents) * sizes[x] for x, parents in candidates]
    assert min(cells) <= BITSET_CELLS < max(cells)  # both routes taken


def test_batches_and_packing_in_small_pieces_give_the_same_scores(monkeypatch) -> None:
    """Memory bounds met by many small batches and categories packed a few at a time: the same scores."""
    from dprm.itemsets import private_dependence

    rng = np.random.default_rng(11)
    sizes = [3, 5, 2, 7, 4]
    codes = np.column_stack([rng.integers(0, s, size=200) for s in sizes])
    candidates = [(x, p) for x in range(5) for p in candidate_parents([j for j in range(5) if j != x], sizes, x, 2)]
    expected = dependences(codes, candidates, sizes)
    monkeypatch.setattr(private_dependence, "_BATCH_WORDS", 1)
    monkeypatch.setattr(private_dependence, "_PACK_FLAGS", 1)
    assert same_bits(dependences(codes, candidates, sizes), expected)
    assert same_bits(expected, np.array([one_by_one(codes, x, p, sizes) for x, p in candidates]))


def test_batch_scores_of_a_chain_release_of_a_wide_table() -> None:
    """The candidates a release of a 120-column table actually scores (a random public subset)."""
    rng = np.random.default_rng(7)
    sizes = [int(s) for s in rng.integers(2, 5, size=120)]
    latent = rng.integers(0, 2, size=500)
    codes = np.column_stack([np.where(rng.random(500) < 0.7, latent % s, rng.integers(0, s, 500)) for s in sizes])
    order = [int(j) for j in rng.permutation(120)]
    for released in (1, 40, 119):
        candidates = next_candidates(order[:released], order[released:], sizes, rng=rng)
        expected = np.array([one_by_one(codes, x, p, sizes) for x, p in candidates])
        assert same_bits(dependences(codes, candidates, sizes), expected)


def test_table_dependences_equal_one_table_at_a_time() -> None:
    """Tables of up to 1,600 cells (numpy's summation blocks of 8 and 128 both sides), empty tables 0."""
    rng = np.random.default_rng(3)
    for _ in range(400):
        configs, k, b = int(rng.integers(1, 200)), int(rng.integers(1, 9)), int(rng.integers(1, 6))
        tables = rng.integers(0, rng.choice([2, 30, 5000]), size=(b, configs, k))
        tables[0] *= rng.integers(0, 2)  # sometimes empty
        expected = []
        for table in tables.astype(np.float64):
            n = table.sum()
            expected.append(0.0 if n <= 0 else
                            0.5 * float(np.abs(table - np.outer(table.sum(axis=1), table.sum(axis=0)) / n).sum()))
        assert same_bits(table_dependences(tables), np.array(expected))


def test_candidate_arrays_pad_the_parents() -> None:
    target, parents, shape = candidate_arrays([(3, (0, 1, 2)), (0, ()), (1, (3,))], [2, 3, 4, 5])
    assert target.tolist() == [3, 0, 1]
    assert parents.tolist() == [[0, 1, 2], [-1, -1, -1], [3, -1, -1]]
    assert shape.prod(axis=1).tolist() == [24, 1, 5]
    empty = candidate_arrays([], [2])
    assert [a.shape for a in empty] == [(0,), (0, 0), (0, 0)]


@pytest.mark.parametrize("seed", range(3))
def test_candidate_parents_lists_the_sets_in_the_same_order(seed) -> None:
    """Every parent set of at most k, in itertools' order, whose table fits: the definition."""
    rng = np.random.default_rng(seed)
    sizes = [int(s) for s in rng.integers(1, 12, size=9)]
    earlier = [int(j) for j in rng.permutation(8)[:6]]
    for max_parents, max_cells in ((0, 10), (2, 64), (3, 200), (2, 1)):
        expected = [()] + [tuple(p) for k in range(1, max_parents + 1) for p in itertools.combinations(earlier, k)
                           if math.prod(sizes[q] for q in p) * sizes[8] <= max_cells]
        assert candidate_parents(earlier, sizes, 8, max_parents, max_cells) == expected
