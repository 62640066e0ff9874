"""Duplicate and redundant redescriptions (dprm.mining.redundancy, issue 9)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dprm.data.attributes import TwoViewData
from dprm.errors import ParameterError
from dprm.mining.redundancy import REDUNDANT_KEY, deduplicate, filter_redundant, redundant
from dprm.queries import (
    BooleanLiteral as B,
    Not,
    NumericLiteral as N,
    Or,
    Redescription,
    RedescriptionStats,
    complete_attributes,
)
from test_queries_helpers import random_query, random_view


def exact(left, right, data: TwoViewData) -> Redescription:
    return Redescription(left, right, RedescriptionStats.from_supports(left.support(data.left),
                                                                        right.support(data.right)))


def two_views(seed: int, missing: float) -> TwoViewData:
    rng = np.random.default_rng(seed)
    left = random_view(rng, n_rows=120, missing=missing)
    right = random_view(rng, n_rows=120, missing=missing,
                        names={"boolean": ["rb0", "rb1"], "categorical": ["rc0", "rc1"], "numeric": ["rx0", "rx1"]})
    return TwoViewData(left, right)


def random_redescriptions(seed: int, data: TwoViewData, n: int = 40) -> list[Redescription]:
    rng = np.random.default_rng(seed)
    return [exact(random_query(rng, data.left, 2), random_query(rng, data.right, 2), data) for _ in range(n)]


def sets(r: Redescription, data: TwoViewData, support: str = "intersection") -> np.ndarray:
    left, right = r.left.support(data.left), r.right.support(data.right)
    return left & right if support == "intersection" else left | right


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    union = np.count_nonzero(a | b)
    return np.count_nonzero(a & b) / union if union else 1.0


# -- deduplication -------------------------------------------------------------------------


def test_deduplicate_keeps_the_first_of_equal_normal_forms_and_uses_completeness() -> None:
    data = two_views(0, missing=0.0)
    forms = [B("b0"), Not(B("b0", False)), Not(Not(B("b0")))]
    reds = [exact(q, N("rx0", le=1.5) & B("rb0"), data) for q in forms]
    reds.append(exact(B("b0"), B("rb0") & N("rx0", le=1.5), data))
    assert len(deduplicate(reds)) == 2  # ¬[b0 = false] may differ from b0 where b0 is missing
    done = deduplicate(reds, complete=complete_attributes(*data.views))
    assert len(done) == 1 and done[0] == reds[0]
    with_missing = two_views(0, missing=0.3)
    assert len(deduplicate([exact(q, B("rb0"), with_missing) for q in forms],
                           complete=complete_attributes(*with_missing.views))) == 2


# -- exact overlaps (non-private) ----------------------------------------------------------


def brute_force(reds, data, max_overlap, support):
    """The greedy filter written plainly: quality order, compare with every kept one."""
    def key(i):
        s = reds[i].stats
        return (reds[i].pruned, -s.jaccard, np.inf if s.p_value is None else s.p_value, -s.intersection, i)

    result, kept = [None] * len(reds), []
    for i in sorted(range(len(reds)), key=key):
        overlaps = [jaccard(sets(reds[i], data, support), sets(reds[k], data, support)) for k in kept]
        if overlaps and max(overlaps) > max_overlap:
            result[i] = kept[int(np.argmax(overlaps))]
        else:
            kept.append(i)
    return result


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("support", ["intersection", "union"])
def test_exact_filter_matches_brute_force(seed: int, support: str) -> None:
    data = two_views(seed, missing=0.2)
    reds = random_redescriptions(seed, data)
    for max_overlap in (0.0, 0.3, 0.7, 0.95, 1.0):
        assert redundant(reds, data=data, max_overlap=max_overlap, support=support) == brute_force(
            reds, data, max_overlap, support)
    assert redundant(reds, data=data, max_overlap=1.0) == [None] * len(reds)


@pytest.mark.parametrize("seed", range(3))
def test_kept_ones_overlap_at_most_max_overlap_and_each_dropped_one_has_a_reason(seed: int) -> None:
    data = two_views(10 + seed, missing=0.1)
    reds = random_redescriptions(seed, data, 60)
    flags = redundant(reds, data=data, max_overlap=0.5)
    kept = [i for i, f in enumerate(flags) if f is None]
    for i, j in itertools.combinations(kept, 2):
        assert jaccard(sets(reds[i], data), sets(reds[j], data)) <= 0.5
    for i, f in enumerate(flags):
        if f is not None:
            assert flags[f] is None and jaccard(sets(reds[i], data), sets(reds[f], data)) > 0.5


def test_filter_and_mark() -> None:
    data = two_views(3, missing=0.1)
    reds = random_redescriptions(3, data, 30)
    flags = redundant(reds, data=data, max_overlap=0.4)
    shown = filter_redundant(reds, data=data, max_overlap=0.4)
    assert shown == [r for r, f in zip(reds, flags) if f is None] and 0 < len(shown) < len(reds)
    marked = filter_redundant(reds, data=data, max_overlap=0.4, mark=True)
    assert len(marked) == len(reds)
    assert [REDUNDANT_KEY in r.extra for r in marked] == [f is not None for f in flags]
    assert all(r.to_json()[REDUNDANT_KEY] is True for r in marked if REDUNDANT_KEY in r.extra)
    assert Redescription.from_json(marked[flags.index(next(f for f in flags if f is not None))].to_json()).extra == {
        REDUNDANT_KEY: True}


def test_pruned_ones_never_hide_sound_ones() -> None:
    data = two_views(4, missing=0.0)
    good = exact(B("b0"), B("rb0"), data)
    best_but_pruned = Redescription(good.left, good.right,
                                    RedescriptionStats.from_counts(10, 10, 10), pruned=True)
    assert redundant([best_but_pruned, good], data=data) == [1, None]


def test_bad_parameters() -> None:
    for kw in ({"max_overlap": 1.5}, {"max_overlap": -0.1}, {"max_overlap": True}, {"support": "left"}):
        with pytest.raises(ParameterError):
            redundant([], **kw)
    assert redundant([]) == [] and filter_redundant([]) == []


# -- released values only (private) -------------------------------------------------------


def noisy(r: Redescription, rng: np.random.Generator, scale: float) -> Redescription:
    s = r.stats
    z = rng.laplace(0, scale, 3)
    return Redescription(r.left, r.right, RedescriptionStats.from_counts(
        s.support_left + z[0], s.support_right + z[1], s.intersection + z[2], 120))


def test_private_filter_reads_only_the_redescriptions(monkeypatch) -> None:
    def no_support(self, view):
        raise AssertionError("the private filter evaluated a query")

    data = two_views(5, missing=0.2)
    reds = [exact(Or(B("b0"), B("b1")), N("rx0", le=1.5), data), exact(B("b0"), N("rx0", le=1.0), data)]
    for cls in {type(q) for r in reds for side in (r.left, r.right) for q in side.iter_nodes()}:
        monkeypatch.setattr(cls, "support", no_support)
    assert len(redundant(reds, max_overlap=0.0)) == 2


@pytest.mark.parametrize("seed", range(4))
def test_private_filter_only_drops_provably_nested_pairs_and_is_right_about_their_overlap(seed: int) -> None:
    data = two_views(20 + seed, missing=0.2)
    rng = np.random.default_rng(seed)
    reds = []
    for _ in range(15):  # a start and its extensions, as extraction makes them
        left, right = random_query(rng, data.left, 1), random_query(rng, data.right, 1)
        reds.append(exact(left, right, data))
        for _ in range(2):
            left = left | random_query(rng, data.left, 1)
            reds.append(exact(left, right, data))
            right = right | random_query(rng, data.right, 1)
            reds.append(exact(left, right, data))
    flags = redundant(reds, max_overlap=0.8)  # exact statistics, no rows
    assert any(f is not None for f in flags)
    for i, f in enumerate(flags):
        if f is not None:  # nested, so the size ratio is the true overlap
            a, b = sets(reds[i], data), sets(reds[f], data)
            assert ((a & ~b).sum() == 0) or ((b & ~a).sum() == 0)
            assert jaccard(a, b) > 0.8
    # the private filter drops a subset of what the exact one would consider redundant
    assert sum(f is not None for f in flags) <= sum(f is not None for f in redundant(reds, data=data,
                                                                                       max_overlap=0.8))
    # with noise it still runs on released values only
    noisy_reds = [noisy(r, rng, 3.0) for r in reds]
    assert len(redundant(noisy_reds, max_overlap=0.8)) == len(reds)


def test_private_filter_on_tree_leaves_and_negations() -> None:
    """The other leaves of a tree lie inside the negation of a leaf: nested."""
    leaf = [B("a") & N("x", le=3), B("a") & N("x", gt=3), B("a", False)]
    right = B("r")
    stats = [RedescriptionStats.from_counts(s, 60, i, 500) for s, i in ((52, 48), (50, 47), (30, 10))]
    negation = Redescription(Not(leaf[0]), right, stats[0])
    others = Redescription(leaf[1] | leaf[2], right, stats[1])
    unrelated = Redescription(leaf[2], right, stats[2])
    assert redundant([negation, others, unrelated]) == [None, 0, None]
    assert redundant([negation, others, unrelated], max_overlap=0.99) == [None, None, None]
