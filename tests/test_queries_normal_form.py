"""The normal form of queries (issue 9), provable containment / disjointness, and
redescriptions kept in normal form."""

from __future__ import annotations

import numpy as np
import pytest

from dprm.queries import (
    And,
    BooleanLiteral as B,
    CategoricalLiteral as C,
    Not,
    NumericLiteral as N,
    Or,
    Redescription,
    RedescriptionStats,
    canonical_key,
    complete_attributes,
    disjoint,
    implies,
    normalize,
    to_clired,
    to_text,
)
from test_queries_helpers import random_literal, random_query, random_view

from dprm.data.attributes import Attribute, AttributeKind, Domain, View
from dprm.queries.base import Query

ALL = {"b0", "b1", "c0", "c1", "x0", "x1"}


# -- oracle: the normal form holds on the same rows -----------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_normal_form_has_the_same_support_with_missing_values(seed: int) -> None:
    rng = np.random.default_rng(seed)
    views = [random_view(rng, missing=0.25) for _ in range(3)]
    for _ in range(150):
        q = random_query(rng, views[0])
        n = normalize(q)
        for view in views:
            assert np.array_equal(q.support(view), n.support(view)), (q, n)
        assert normalize(n) == n  # idempotent
        assert canonical_key(q) == canonical_key(n)


@pytest.mark.parametrize("seed", range(6))
def test_complete_rules_are_exact_on_complete_data(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    views = [random_view(rng, missing=0.0) for _ in range(3)]
    assert complete_attributes(views[0]) == ALL
    for _ in range(150):
        q = random_query(rng, views[0])
        n = normalize(q, ALL)
        for view in views:
            assert np.array_equal(q.support(view), n.support(view)), (q, n)
        assert normalize(n, ALL) == n and normalize(n) == n
        # only categorical literals may stay negated
        assert all(isinstance(lit, C) for node in n.iter_nodes() if isinstance(node, Not) for lit in node.literals())


def test_complete_rules_are_not_applied_without_completeness() -> None:
    # ¬[B = false] holds where B is missing, [B = true] does not: not the same query
    rng = np.random.default_rng(7)
    view = random_view(rng, missing=0.3)
    assert complete_attributes(view) == frozenset()
    q = Not(B("b0", False))
    assert normalize(q) == q
    assert not np.array_equal(q.support(view), normalize(q, {"b0"}).support(view))
    assert normalize(Not(N("x0", le=1))) == Not(N("x0", le=1))


# -- the simple forms of the issue coincide -------------------------------------------------


@pytest.mark.parametrize("a, b, complete", [
    (Not(B("Polar bear", False)), B("Polar bear"), {"Polar bear"}),
    (Not(B("a")), B("a", False), {"a"}),
    (Not(Not(B("a") & C("c", "x"))), C("c", "x") & B("a"), ()),
    (Not(N("x", le=3)), N("x", gt=3), {"x"}),
    (Not(N("x", gt=1, lt=3)), N("x", le=1) | N("x", ge=3), {"x"}),
    (Not(B("a") & N("x", le=3)), Not(B("a")) | Not(N("x", le=3)), ()),
    (Not(N("x", le=3)) | Not(N("x", le=5)), Not(N("x", le=3)), ()),
    (Not(N("x", le=3)) & Not(N("x", gt=2, le=5)), Not(N("x", le=5)), ()),
    (Not(B("a") & N("x", le=3)) & Not(C("c", "u")), Not((N("x", le=3) & B("a")) | C("c", "u")), ()),
    (Not(B("a") | B("b")), Not(B("b")) & Not(B("a")), ()),
    (And(B("a"), And(B("b"), B("c"))), And(B("c"), B("b"), B("a"), B("b")), ()),
    (N("x", gt=1) & B("a") & N("x", le=3), B("a") & N("x", gt=1, le=3), ()),
    (N("x", gt=1, ge=0, le=5, lt=3), N("x", gt=1, lt=3), ()),
    (N("x", ge=2, gt=2), N("x", gt=2), ()),
    (N("x", le=3) | N("x", gt=2, le=5), N("x", le=5), ()),
    (N("x", le=3) | N("x", gt=3, le=5), N("x", le=5), ()),
    (Or(B("a"), Or(B("b"), B("a"))), B("b") | B("a"), ()),
    (And(B("a"), B("a")), B("a"), ()),
    # absorption (rule 10)
    (B("a") | (B("a") & B("b")), B("a"), ()),
    (N("x", le=3) | (N("x", le=2) & B("b")), N("x", le=3), ()),
    (B("a") & (B("a") | B("b")), B("a"), ()),
    # resolution (rule 11): u ∨ (c ∧ x) = u ∨ x where ¬c ⊆ u; u ∧ (c ∨ x) = u ∧ x where u, c disjoint
    (B("m", False) | (B("s") & B("m")), B("s") | B("m", False), {"m"}),
    (N("t", gt=0.5) | (N("t", le=0.5) & N("u", le=10)), N("t", gt=0.5) | N("u", le=10), {"t"}),
    (Not(B("m")) | (B("s") & B("m")), B("s") | Not(B("m")), ()),
    (N("x", le=3) & (N("x", gt=5) | B("y")), N("x", le=3) & B("y"), ()),
    # consensus (rule 12): (a ∧ x) ∨ (b ∧ x) = x where ¬a ⊆ b; (a ∨ x) ∧ (b ∨ x) = x where a, b disjoint
    ((N("p", gt=72.7) & B("x")) | (N("p", le=72.7) & B("x")), B("x"), {"p"}),
    ((B("b", False) & B("m")) | (B("b") & B("m")) | (B("e", False) & B("m", False)), B("e", False) | B("m"),
     {"b", "e", "m"}),
    ((N("t", gt=5) | B("x")) & (N("t", le=5) | B("x")), B("x"), ()),
    # a tree's paths and the literals they make (all attributes complete)
    (N("a", gt=0.5) | (N("p", gt=77) & N("a", le=0.5) & N("b", gt=12))
     | (N("p", le=77) & N("q", le=58) & N("a", le=0.5) & N("b", gt=12)) | (N("a", le=0.5) & N("b", le=12)),
     N("p", gt=77) | N("q", le=58) | N("a", gt=0.5) | N("b", le=12), {"a", "b", "p", "q"}),
])
def test_equivalent_forms_coincide(a, b, complete) -> None:
    assert normalize(a, complete) == normalize(b, complete)
    assert canonical_key(a, complete) == canonical_key(b, complete)


def _tree_leaves(rng: np.random.Generator) -> list[Query]:
    """The leaves of a random depth-2 tree over the random views' attributes, as conjunctions of tests."""
    def test() -> tuple[Query, Query]:
        name = str(rng.choice(["b0", "b1", "x0", "x1"]))
        if name.startswith("b"):
            return B(name), B(name, False)
        threshold = float(rng.choice([0.25, 0.5, 0.75]))
        return N(name, le=threshold), N(name, gt=threshold)
    root, leaves = test(), []
    for branch in root:
        split = test()
        leaves += [branch & side for side in split]
    return leaves


@pytest.mark.parametrize("seed", range(4))
def test_unions_of_tree_leaves_keep_their_support_and_merge_siblings(seed: int) -> None:
    """Extraction's queries (unions of leaves): the same rows after rule 12, and two sibling leaves merge."""
    rng = np.random.default_rng(400 + seed)
    complete_views = [random_view(rng, missing=0.0) for _ in range(2)]
    missing_views = [random_view(rng, missing=0.25) for _ in range(2)]
    for _ in range(100):
        leaves = _tree_leaves(rng)
        chosen = [leaf for leaf in leaves if rng.random() < 0.6] or leaves[:1]
        q = chosen[0] if len(chosen) == 1 else Or(*chosen)
        n, m = normalize(q, ALL), normalize(q)
        for view in complete_views:
            assert np.array_equal(q.support(view), n.support(view)), (q, n)
        for view in missing_views + complete_views:
            assert np.array_equal(q.support(view), m.support(view)), (q, m)
        assert normalize(n, ALL) == n and normalize(m) == m
    siblings = _tree_leaves(np.random.default_rng(seed))[:2]  # the two children of the root's first branch
    merged = normalize(Or(*siblings), ALL)
    assert len(list(merged.literals())) < len(list(Or(*siblings).literals()))


@pytest.mark.parametrize("a, b", [
    (N("x", le=3) | N("x", gt=3), N("x", le=3) | N("x", gt=3)),  # not one interval
    (N("x", lt=3) | N("x", gt=3), N("x", lt=3) | N("x", gt=3)),  # the point 3 is missing
])
def test_intervals_that_do_not_make_one_interval_stay_apart(a, b) -> None:
    assert len(normalize(a).queries) == 2


def test_negations_are_pulled_out_of_junctions_of_negations() -> None:
    leaf = B("a") & N("x", le=3) & B("b", False)
    assert normalize(Not(leaf)) == Not(normalize(leaf))
    assert to_text(normalize(Not(leaf | C("c", "u")))) == "¬([c = u] ∨ (a ∧ [b = false] ∧ [x ≤ 3]))"
    assert to_text(normalize(Not(leaf), {"a", "b"})) == "[a = false] ∨ b ∨ ¬[x ≤ 3]"  # mixed: stays apart


def test_keys_differ_where_supports_may_differ() -> None:
    assert canonical_key(Not(B("a", False))) != canonical_key(B("a"))
    # resolution needs the exact complement: [m = false] is not ¬m where m may be missing
    assert canonical_key(B("m", False) | (B("s") & B("m"))) != canonical_key(B("s") | B("m", False))
    assert canonical_key(N("x", gt=3)) != canonical_key(N("x", ge=3))
    assert canonical_key(B("a") & B("b")) != canonical_key(B("a") | B("b"))


def test_the_text_and_clired_forms_print_the_normal_form() -> None:
    r = Redescription(Not(B("Moose") & B("Hare", False)), Not(N("t", le=4)) & N("p", gt=1) & N("p", le=9),
                      RedescriptionStats.from_counts(10, 12, 9))
    assert r.to_json()["left_text"] == "¬([Hare = false] ∧ Moose)"
    assert r.to_json()["right_text"] == "[1 < p ≤ 9] ∧ ¬[t ≤ 4]"
    done = r.normalized({"Moose", "Hare", "t", "p"})
    assert to_text(done.left) == "Hare ∨ [Moose = false]" and to_text(done.right) == "[1 < p ≤ 9] ∧ [t > 4]"
    assert to_clired(done.left) == "[Hare] | ![Moose]"
    assert done.stats == r.stats and Redescription.from_json(done.to_json()) == done
    assert r.key() != done.key() and r.key({"Moose", "Hare", "t", "p"}) == done.key()
    assert r.normalized() is r


def test_normalisation_of_big_queries_is_fast_enough_to_be_cached() -> None:
    # the same (hashable) query object normalises once: later calls hit the cache
    q = Or(*[And(B(f"a{i}"), N("x", gt=i), Not(B(f"b{i}"))) for i in range(30)])
    assert normalize(q) is normalize(q)


# -- provable containment and disjointness --------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_implies_and_disjoint_are_sound(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    views = [random_view(rng, n_rows=80, missing=0.2) for _ in range(4)]
    proven = {"implies": 0, "disjoint": 0}
    for _ in range(400):
        a, b = random_query(rng, views[0], depth=2), random_query(rng, views[0], depth=2)
        if rng.random() < 0.3:  # related pairs: a part of the other
            b = a | b if rng.random() < 0.5 else b
            a = a & random_query(rng, views[0], depth=1)
        if implies(a, b):
            proven["implies"] += 1
            for view in views:
                assert not (a.support(view) & ~b.support(view)).any(), (a, b)
        if disjoint(a, b):
            proven["disjoint"] += 1
            for view in views:
                assert not (a.support(view) & b.support(view)).any(), (a, b)
    assert proven["implies"] > 20 and proven["disjoint"] > 5


def test_implies_and_disjoint_on_tree_queries() -> None:
    leaf1, leaf2 = B("a") & N("x", le=3), B("a") & N("x", gt=3)
    leaf3 = B("a", False)
    assert disjoint(leaf1, leaf2) and disjoint(leaf1, leaf3)
    assert implies(leaf2 | leaf3, Not(leaf1))  # the other leaves lie in ¬leaf1
    assert not implies(Not(leaf1), leaf2 | leaf3)  # ¬leaf1 also holds on missing values
    assert implies(Not(leaf3), B("a"), complete={"a"}) and not implies(Not(leaf3), B("a"))
    assert implies(N("x", le=3), N("x", le=4.2)) and not implies(N("x", le=4.2), N("x", le=3))
    assert implies(N("x", gt=5, le=3), B("z"))  # an empty interval holds on no row
    assert not disjoint(C("c", "1"), C("c", "1.0")) and disjoint(C("c", "red"), C("c", "blue"))
    assert not disjoint(Not(B("a")), Not(B("b")))


# -- wide junctions: the provers' index of operands by attribute -----------------------------


def _wide_query(rng: np.random.Generator, view, depth: int = 2) -> Query:
    """Junctions of 6 to 14 operands (the provers index junctions of 8 or more), some negated."""
    if depth == 0 or rng.random() < 0.2:
        return random_literal(rng, view)
    parts = {_wide_query(rng, view, depth - 1) for _ in range(rng.integers(6, 15))}
    parts = {Not(p) if rng.random() < 0.3 else p for p in parts}
    if len(parts) == 1:
        return parts.pop()
    return And(*parts) if rng.random() < 0.5 else Or(*parts)


@pytest.mark.parametrize("seed", range(4))
def test_wide_junctions_keep_their_support(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    views = [random_view(rng, missing=0.2) for _ in range(2)] + [random_view(rng, missing=0.0)]
    for _ in range(40):
        q, r = _wide_query(rng, views[0]), _wide_query(rng, views[0])
        for complete in (frozenset(), ALL):
            n = normalize(q, complete)
            for view in views[2:] if complete else views:
                assert np.array_equal(q.support(view), n.support(view)), (q, n)
            assert normalize(n, complete) == n
        # the provers may only say what holds on every view
        for a, b in ((q, r), (r, q), (q, Not(r))):
            if implies(a, b):
                assert all(not np.any(a.support(v) & ~b.support(v)) for v in views)
            if disjoint(a, b):
                assert all(not np.any(a.support(v) & b.support(v)) for v in views)


def test_a_query_over_thousands_of_categories_normalises_by_set_lookups() -> None:
    # ¬(s ∈ S1 ∧ s ∈ S2) with |S1| = |S2| = 2,999: the extraction of a tree that split a
    # column of 3,000 distinct strings wrote this; pairwise proofs took minutes (9 million pairs)
    rng = np.random.default_rng(1)
    categories = [f"s{i}" for i in range(3000)]
    values = rng.integers(0, 3000, 4000).astype(np.int32)
    values[rng.random(4000) < 0.1] = -1
    view = View("left", [Attribute("s", "left", AttributeKind.CATEGORICAL, values, Domain(categories=categories))])
    first = Or(*(C("s", c) for c in categories[:-1]))
    second = Or(*(C("s", c) for c in categories[1:]))
    q = Not(And(first, second))
    n = normalize(q)
    assert np.array_equal(q.support(view), n.support(view))
    assert n == normalize(Not(Or(*(C("s", c) for c in categories[1:-1]))))  # ¬(S1 ∩ S2), resolved
    assert disjoint(C("s", "s0"), Not(first)) and not disjoint(C("s", "s0"), Not(second))
    assert implies(C("s", "s0"), first) and not implies(C("s", "s0"), second)


def test_a_leaf_over_thousands_of_categories_looks_for_trivial_parts_by_set_lookups(monkeypatch) -> None:
    """Rule 14 on ``m ∧ (s ∈ S)``, |S| = 2,999: the parts a prover could relate only, not every pair."""
    import dprm.queries.normal_form as normal_form

    calls = [0]
    implies_, disjoint_ = normal_form._implies, normal_form._disjoint

    def counted(prover):
        def call(a, b):
            calls[0] += 1
            return prover(a, b)
        return call

    monkeypatch.setattr(normal_form, "_implies", counted(implies_))
    monkeypatch.setattr(normal_form, "_disjoint", counted(disjoint_))
    normal_form._nnf.cache_clear()
    categories = [f"s{i}" for i in range(3000)]
    leaf = And(B("m"), Or(*(C("s", c) for c in categories[:-1])))
    n = normalize(leaf)
    assert len(list(n.literals())) == 3000 and calls[0] < 30_000   # nothing to drop; pairwise: about 9 million checks
    normal_form._nnf.cache_clear()


def test_indexed_provers_keep_the_cases_of_equal_operands() -> None:
    # the provers themselves (the public implies / disjoint normalise first, which absorbs these
    # junctions): a junction of 8 or more operands takes the indexed path, and the operand equal to
    # the other query is within it but not disjoint from it
    from dprm.queries._containment import _disjoint, _implies

    others = [C("s", f"w{i}") for i in range(8)]
    q = Or(Not(C("s", "v")), *others)
    assert not _disjoint(q, Not(C("s", "v"))) and not _disjoint(Not(C("s", "v")), q)
    assert _implies(Not(C("s", "v")), q) and _implies(C("s", "w3"), q)
    flags = [B(f"b{i}", True) for i in range(8)]
    assert _implies(And(Not(C("s", "v")), *flags), Not(C("s", "v")))
    assert not _implies(C("s", "v"), Or(*others)) and _implies(And(C("s", "w1"), *flags), Or(*others))
    assert _disjoint(C("s", "v"), Or(*others)) and not _disjoint(C("s", "w5"), Or(*others))
    assert _disjoint(Or(*others), And(*[Not(C("s", f"w{i}")) for i in range(8)]))
    # every other operand disjoint from ¬v, but ¬v itself is not: the junction is not
    v = C("s", "v")
    q = Or(Not(v), v, *[And(v, flag) for flag in flags[:6]])
    assert not _disjoint(q, Not(v)) and _disjoint(Or(v, *[And(v, flag) for flag in flags]), Not(v))


def test_a_shared_operand_is_factored_out_and_trivial_operands_go() -> None:
    """Rule 13 takes a conjunct shared by disjuncts out (and dually); rule 14 drops what then holds
    on every row (or none) once the attributes are declared complete."""
    a, b_high, b_low = N("a", le=0.95), N("b", gt=-99), N("b", le=-99)
    leaves = (a & b_high) | (a & b_low)   # a tree node's two leaves; b may be missing
    assert normalize(leaves) == a & (b_low | b_high)   # both of b's literals stay in the query ...
    assert to_text(normalize(leaves)) == "[a ≤ 0.95] ∧ [b known]"   # ... and read as what they say
    assert normalize(leaves, {"b"}) == a and normalize(normalize(leaves), {"b"}) == a
    assert to_text(normalize((B("a") | B("b")) & (B("a") | B("c")))) == "a ∨ (b ∧ c)"
    assert normalize(B("m") & (B("v") | B("v", False)), {"v"}) == B("m")
    assert normalize(B("m", False) | (B("v") & B("v", False))) == B("m", False)   # disjoint: sound with missing


@pytest.mark.parametrize("seed", range(3))
def test_factored_tree_queries_are_no_longer_and_simplify_again_with_completeness(seed: int) -> None:
    """Unions of tree leaves: the normal form has no more literals than the union, and normalising
    it again with every attribute complete gives no more than normalising the union so at once."""
    rng = np.random.default_rng(700 + seed)
    for _ in range(200):
        leaves = _tree_leaves(rng)
        chosen = [leaf for leaf in leaves if rng.random() < 0.6] or leaves[:1]
        q = chosen[0] if len(chosen) == 1 else Or(*chosen)
        size = len(list(normalize(q).literals()))
        assert size <= len(list(q.literals()))
        assert len(list(normalize(normalize(q), ALL).literals())) <= len(list(normalize(q, ALL).literals()))
