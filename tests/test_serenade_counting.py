"""Serenade's vectorised counts against brute force with dprm.queries.support."""

from __future__ import annotations

import numpy as np
import pytest

from dprm.data.attributes import Attribute, AttributeKind, Domain, View
from dprm.mining.serenade.extensions import Growing, extend, extension_counts
from dprm.mining.serenade.literals import LiteralTable


def _views(seed: int, n: int = 80, shared: bool = False) -> tuple[View, View]:
    rng = np.random.default_rng(seed)

    def boolean(name, side):
        values = rng.integers(0, 2, n).astype(np.int8)
        values[rng.random(n) < 0.1] = -1
        return Attribute(name, side, AttributeKind.BOOLEAN, values)

    def categorical(name, side):
        values = rng.integers(0, 3, n).astype(np.int32)
        values[rng.random(n) < 0.1] = -1
        return Attribute(name, side, AttributeKind.CATEGORICAL, values,
                         Domain(categories=("a", "b", "c"), declared=True))

    def numeric(name, side):
        values = rng.uniform(0, 10, n)
        values[rng.random(n) < 0.1] = np.nan
        return Attribute(name, side, AttributeKind.NUMERIC, values, Domain(bounds=(0.0, 10.0), declared=True))

    left = View("left", [boolean("b1", "left"), boolean("b2", "left"), categorical("c1", "left")])
    right_attrs = [numeric("x", "right"), numeric("y", "right"), boolean("b3", "right")]
    if shared:
        right_attrs.append(boolean("b1", "right"))
    return left, View("right", right_attrs)


@pytest.mark.parametrize("seed", range(4))
def test_literal_supports_are_the_queries_supports(seed: int) -> None:
    left, right = _views(seed)
    for view in (left, right):
        table = LiteralTable(view, mode="private", max_splits=4)
        for i in range(len(table)):
            assert np.array_equal(table.support(i), table.query(i).support(view))
        groups = np.random.default_rng(seed).integers(0, 3, view.attributes[0].n_rows)
        counts = table.group_counts(groups, 3)
        brute = np.array([[np.count_nonzero(table.query(i).support(view) & (groups == g)) for g in range(3)]
                          for i in range(len(table))])
        assert np.array_equal(counts, brute)


@pytest.mark.parametrize("seed", range(3))
def test_pair_counts_match_brute_force(seed: int) -> None:
    left, right = _views(seed)
    tables = [LiteralTable(v, mode="private", max_splits=3) for v in (left, right)]
    masks = tables[0].supports()
    counts = tables[1].pair_counts(masks)
    for a in range(len(tables[0])):
        for b in range(len(tables[1])):
            assert counts[a, b] == np.count_nonzero(masks[a] & tables[1].query(b).support(right))


@pytest.mark.parametrize("seed", range(4))
def test_extension_counts_match_brute_force(seed: int) -> None:
    left, right = _views(seed, shared=True)
    tables = (LiteralTable(left, mode="private", max_splits=3), LiteralTable(right, mode="private", max_splits=3))
    rng = np.random.default_rng(seed)
    state = Growing.pair(tables, 0, 0)
    for _ in range(3):  # grow a few random steps, checking every candidate each time
        candidates = extension_counts(state, tables, max_literals=3)
        views = (left, right)
        for c in range(len(candidates)):
            grown = extend(state, candidates, c, tables)
            sl, sr = (grown.queries[s].support(views[s]) for s in (0, 1))
            masks = grown.masks(tables)  # the supports evaluated on the rows
            assert np.array_equal(sl, masks[0]) and np.array_equal(sr, masks[1])
            inter = np.count_nonzero(sl & sr)
            assert candidates.intersection[c] == inter
            assert candidates.union[c] == np.count_nonzero(sl | sr)
            assert candidates.support_left[c] == np.count_nonzero(sl)
            assert candidates.support_right[c] == np.count_nonzero(sr)
            # an attribute is never on both sides, nor twice in one redescription
            names = [lit.attr for q in grown.queries for lit in q.literals()]
            assert len(names) == len(set(names))
        state = extend(state, candidates, int(rng.integers(1, len(candidates))), tables)


def test_the_candidate_set_does_not_depend_on_the_data() -> None:
    left, right = _views(0)
    other_left, other_right = _views(1)
    for view, other in ((left, other_left), (right, other_right)):
        a = LiteralTable(view, mode="private", max_splits=5)
        b = LiteralTable(other, mode="private", max_splits=5)
        assert [str(a.query(i)) for i in range(len(a))] == [str(b.query(i)) for i in range(len(b))]


def test_full_literal_limit_stops_extensions_on_that_side() -> None:
    left, right = _views(2)
    tables = (LiteralTable(left, mode="private", max_splits=3), LiteralTable(right, mode="private", max_splits=3))
    state = Growing.pair(tables, 0, 0)
    candidates = extension_counts(state, tables, max_literals=1)
    assert len(candidates) == 1 and candidates.side[0] == -1


@pytest.mark.parametrize("side", [0, 1])
@pytest.mark.parametrize("seed", range(3))
def test_table_counter_pair_intersections_match_brute_force(seed: int, side: int) -> None:
    """Every request shape (members of several attributes, chunks of several attributes,
    missing values on both sides) gives the exact intersections of the literals' supports."""
    from dprm.engine.table_counter import TableCounter

    left, right = _views(seed, n=120)
    tables = [LiteralTable(v, mode="private", max_splits=4) for v in (left, right)]
    first, other = tables[side], tables[1 - side]
    counter = TableCounter(tables)
    n_attributes = int(other.attribute.max()) + 1
    rng = np.random.default_rng(seed)
    requests = [(np.arange(0, n_attributes), np.arange(len(first))),
                (np.arange(1, n_attributes), rng.permutation(len(first))[: max(1, len(first) // 2)]),
                (np.array([n_attributes - 1]), np.array([len(first) - 1, 0]))]
    for (attributes, members), got in zip(requests, counter.pair_intersections(side, requests)):
        literals = np.flatnonzero(np.isin(other.attribute, attributes))
        brute = np.array([[np.count_nonzero(first.support(int(f)) & other.support(int(o))) for o in literals]
                          for f in members], dtype=np.int64)
        assert got.dtype == np.int64 and np.array_equal(got, brute)


def test_table_counter_pair_intersections_make_no_rows_by_literals_matrix() -> None:
    """The initial pairs' counts never hold a (literals × rows) matrix of row masks.

    Before, each request stacked its members' row masks as one dense float32 matrix:
    at 100,000 rows × 50 + 50 columns that was about 3.3 GB. Here 400 literals of 20,000
    rows would be 32 MB of float32 masks (and 8 MB of Boolean ones); the joint-histogram
    counting stays below a few row-sized vectors.
    """
    import tracemalloc

    from dprm.engine.table_counter import TableCounter

    n = 20_000
    rng = np.random.default_rng(0)
    attributes = [Attribute(f"x{i}", "left", AttributeKind.NUMERIC, rng.uniform(0, 10, n),
                            Domain(bounds=(0.0, 10.0), declared=True)) for i in range(4)]
    left = View("left", attributes)
    right = View("right", [Attribute("y", "right", AttributeKind.NUMERIC, rng.uniform(0, 10, n),
                                     Domain(bounds=(0.0, 10.0), declared=True))])
    tables = [LiteralTable(v, mode="private", max_splits=19) for v in (left, right)]
    members = np.arange(min(400, len(tables[0])))
    assert members.size * n * 4 >= 30 * 2**20
    counter = TableCounter(tables)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        counter.pair_intersections(0, [(np.array([0]), members)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.1f} MB"
