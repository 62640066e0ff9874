"""ISON's compiled candidate bookkeeping against plain Python sets and brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dprm.itemsets.candidates import ItemCodec, KeySet, merge_new, without_rejected_subsets


def random_itemsets(rng: np.random.Generator, sizes: list[int], n: int, p: float = 0.3) -> np.ndarray:
    rows = np.full((n, len(sizes)), -1, dtype=np.int16)
    for j, size in enumerate(sizes):
        on = rng.random(n) < p
        rows[on, j] = rng.integers(0, size, size=int(on.sum()))
    empty = (rows < 0).all(axis=1)  # itemsets are never empty
    rows[empty, 0] = rng.integers(0, sizes[0], size=int(empty.sum()))
    return rows


def as_set(row) -> frozenset:
    return frozenset((j, int(c)) for j, c in enumerate(row) if c >= 0)


@pytest.mark.parametrize("sizes", [[2, 3, 4], [5] * 30, [70, 3, 2]])  # one, two and three words
def test_codec_round_trip(sizes) -> None:
    codec = ItemCodec(sizes)
    rows = random_itemsets(np.random.default_rng(0), sizes, 500)
    items, columns = codec.encode(rows)
    np.testing.assert_array_equal(codec.decode(items), rows)
    np.testing.assert_array_equal(codec.columns_of(items), columns)
    assert (np.bitwise_count(items).sum(axis=1) == (rows >= 0).sum(axis=1)).all()


def test_the_empty_itemset_is_not_a_key() -> None:
    keys = KeySet(1)
    with pytest.raises(ValueError, match="empty"):
        keys.add(np.zeros((1, 1), dtype=np.uint64))
    assert not keys.contains(np.zeros((1, 1), dtype=np.uint64))[0]


def test_key_set_is_an_exact_set_through_growth() -> None:
    sizes = [4] * 40
    codec = ItemCodec(sizes)
    rng = np.random.default_rng(1)
    keys = KeySet(codec.n_words, capacity=4)
    reference: set = set()
    for _ in range(6):
        rows = random_itemsets(rng, sizes, 3000, p=0.05)
        items, _ = codec.encode(rows)
        probe = codec.encode(random_itemsets(rng, sizes, 2000, p=0.05))[0]
        expected_found = [as_set(r) in reference for r in codec.decode(probe)]
        assert keys.contains(probe).tolist() == expected_found
        new = keys.add(items)
        expected_new = []
        for row in rows:
            expected_new.append(as_set(row) not in reference)
            reference.add(as_set(row))
        assert new.tolist() == expected_new
        assert len(keys) == len(reference)


def test_merge_new_against_brute_force() -> None:
    sizes = [3, 2, 4, 3, 2]
    codec = ItemCodec(sizes)
    rng = np.random.default_rng(2)
    a_rows = random_itemsets(rng, sizes, 60, p=0.35)
    b_rows = random_itemsets(rng, sizes, 40, p=0.3)
    rejected_rows = random_itemsets(rng, sizes, 30, p=0.3)
    rejected_rows = rejected_rows[[as_set(r) not in set(map(as_set, a_rows)) for r in rejected_rows]]  # a passed
    seen_rows = random_itemsets(rng, sizes, 30, p=0.5)
    seen = KeySet(codec.n_words)
    seen.add(codec.encode(seen_rows)[0])
    rejected = KeySet(codec.n_words)
    rejected.add(codec.encode(rejected_rows)[0])
    a_items, a_columns = codec.encode(a_rows)
    b_items, b_columns = codec.encode(b_rows)
    got, pruned = merge_new(codec, a_items, a_columns, b_items, b_columns, seen, rejected, max_length=4)

    known = {as_set(r) for r in seen_rows}
    bad = {as_set(r) for r in rejected_rows}
    expected, expected_pruned = [], 0
    for a, b in itertools.product(map(as_set, a_rows), map(as_set, b_rows)):
        union = a | b
        if len({j for j, _ in union}) < len(union) or len(union) <= len(a) or union in known:
            continue
        if len(union) > 4:
            continue
        if any(union - {item} in bad for item in union):
            expected_pruned += 1  # each time formed: pruned unions are not recorded as seen
            continue
        known.add(union)
        expected.append(union)
    assert [as_set(r) for r in codec.decode(got)] == expected
    assert pruned == expected_pruned > 0
    assert len(seen) == len(known)  # the returned unions were recorded as seen
    keep = without_rejected_subsets(got, rejected)
    assert keep.all()


@pytest.mark.parametrize("seed", range(3))
def test_a_codec_holding_some_items_writes_them_in_the_full_codecs_order(seed: int) -> None:
    """ISON's codec holds only the items that can be frequent (``held``): code rows of those items round-trip
    with their own codes, bitsets over the held items compare (as sets) as the full codec's do, an item not
    held is refused, and ranks invert."""
    rng = np.random.default_rng(seed)
    sizes = [3, 30_000, 2, 70]  # ISON's codes are int16
    held = [np.sort(rng.choice(size, size=min(size, 2), replace=False)) for size in sizes]
    codec, full = ItemCodec(sizes, held), ItemCodec(sizes)
    assert codec.n_items == sum(len(h) for h in held) and codec.n_words == 1 and full.n_words > 400
    rows = np.full((200, 4), -1, dtype=np.int16)
    for j, h in enumerate(held):
        on = rng.random(200) < 0.5
        rows[on, j] = rng.choice(h, size=int(on.sum()))
    rows[(rows < 0).all(axis=1), 0] = held[0][0]
    items, columns = codec.encode(rows)
    np.testing.assert_array_equal(codec.decode(items), rows)
    np.testing.assert_array_equal(columns, full.encode(rows)[1])
    np.testing.assert_array_equal(codec.codes_of_ranks(codec.ranks(rows)), rows)
    assert codec.holds(rows).all() and codec.holds_cells(rows).sum() == (rows >= 0).sum()
    subset = [as_set(a) <= as_set(b) for a, b in zip(rows[:100], rows[100:])]
    assert [bool(((a & ~b) == 0).all()) for a, b in zip(items[:100], items[100:])] == subset
    outside = rows[:1].copy()
    outside[0, 1] = next(v for v in range(sizes[1]) if v not in held[1])
    assert not codec.holds(outside)[0]
    with pytest.raises(ValueError, match="does not hold"):
        codec.encode(outside)
