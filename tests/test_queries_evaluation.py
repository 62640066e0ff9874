"""Query trees: construction, supports with missing values, errors, pandas oracle."""

from __future__ import annotations

import numpy as np
import pytest
from test_queries_helpers import pandas_support, random_query, random_view, view_frame

from dprm.data.attributes import Attribute, AttributeKind, Domain, View
from dprm.errors import DprmError, ParameterError
from dprm.queries import And, BooleanLiteral, CategoricalLiteral, Not, NumericLiteral, Or


@pytest.fixture
def view() -> View:
    # rows:                        0     1     2     3     4
    smoker = np.array([1, 0, -1, 1, 0], dtype=np.int8)
    state = np.array([0, 1, 2, -1, 0], dtype=np.int32)
    birth = np.array([1940.0, 1950.0, np.nan, 1960.0, 1950.5])
    code = np.array([1, 2, -1, 0, 1], dtype=np.int32)  # numeric-coded categorical
    return View(
        "left",
        [
            Attribute("smoker", "left", AttributeKind.BOOLEAN, smoker),
            Attribute("State", "left", AttributeKind.CATEGORICAL, state, Domain(categories=("CA", "NY", "TX"))),
            Attribute("BirthY", "left", AttributeKind.NUMERIC, birth),
            Attribute("code", "left", AttributeKind.CATEGORICAL, code, Domain(categories=("0", "1", "2.5"))),
        ],
    )


def rows(mask: np.ndarray) -> list[int]:
    assert mask.dtype == bool
    return np.flatnonzero(mask).tolist()


def test_boolean_literal_missing_is_false(view):
    assert rows(BooleanLiteral("smoker", True).support(view)) == [0, 3]
    assert rows(BooleanLiteral("smoker", False).support(view)) == [1, 4]


def test_categorical_literal_missing_is_false(view):
    assert rows(CategoricalLiteral("State", "CA").support(view)) == [0, 4]
    assert rows(CategoricalLiteral("State", "TX").support(view)) == [2]
    assert rows(CategoricalLiteral("State", "WA").support(view)) == []  # not a category: no row


def test_categorical_numbers_compared_as_numbers(view):
    assert rows(CategoricalLiteral("code", "1.0").support(view)) == [0, 4]
    assert rows(CategoricalLiteral("code", "2.50").support(view)) == [1]
    assert rows(CategoricalLiteral("code", "0").support(view)) == [3]
    # on a numeric attribute: float(category) == value, missing excluded
    assert rows(CategoricalLiteral("BirthY", "1950").support(view)) == [1]
    # on a Boolean attribute: "-1" must not match the missing code -1
    assert rows(CategoricalLiteral("smoker", "-1").support(view)) == []
    assert rows(CategoricalLiteral("smoker", "1").support(view)) == [0, 3]


def test_numeric_literal_missing_is_false(view):
    assert rows(NumericLiteral("BirthY", le=1950).support(view)) == [0, 1]
    assert rows(NumericLiteral("BirthY", gt=1940, lt=1960).support(view)) == [1, 4]
    assert rows(NumericLiteral("BirthY", ge=1940, le=1960).support(view)) == [0, 1, 3, 4]
    assert rows(NumericLiteral("BirthY", gt=1950, ge=1950).support(view)) == [3, 4]
    assert rows(NumericLiteral("BirthY", gt=1960, lt=1940).support(view)) == []  # empty interval is allowed
    assert rows(NumericLiteral("smoker", gt=0.5).support(view)) == [0, 3]  # 0/1 attribute
    assert rows(NumericLiteral("smoker", lt=0.5).support(view)) == [1, 4]  # missing (-1) excluded


def test_not_is_plain_complement(view):
    assert rows(Not(BooleanLiteral("smoker", True)).support(view)) == [1, 2, 4]  # includes missing row 2
    assert rows(Not(CategoricalLiteral("State", "CA")).support(view)) == [1, 2, 3]
    assert rows(Not(NumericLiteral("BirthY", le=1950)).support(view)) == [2, 3, 4]
    assert rows(Not(Not(BooleanLiteral("smoker"))).support(view)) == [0, 3]


def test_and_or_with_missing(view):
    a, b = BooleanLiteral("smoker"), NumericLiteral("BirthY", ge=1950)
    assert rows(And(a, b).support(view)) == [3]
    assert rows(Or(a, b).support(view)) == [0, 1, 3, 4]
    assert rows((~a & ~b).support(view)) == [2]  # row 2 is missing in both: Not includes it
    assert rows(Or(a, Not(b), CategoricalLiteral("State", "NY")).support(view)) == [0, 1, 2, 3]


def test_errors_name_attribute_and_view(view):
    with pytest.raises(DprmError, match=r"'nope'.*left view"):
        BooleanLiteral("nope").support(view)
    with pytest.raises(DprmError, match=r"Boolean literal on attribute 'BirthY' of the left view, which is numeric"):
        BooleanLiteral("BirthY").support(view)
    with pytest.raises(DprmError, match=r"numeric literal on attribute 'State'.*categorical"):
        NumericLiteral("State", le=1).support(view)
    with pytest.raises(DprmError, match=r"'abc' is not a number.*'BirthY'"):
        CategoricalLiteral("BirthY", "abc").support(view)
    with pytest.raises(DprmError, match="'nope'"):  # errors surface through operators too
        (BooleanLiteral("smoker") | ~NumericLiteral("nope", le=1)).support(view)


@pytest.mark.parametrize(
    "make",
    [
        lambda: NumericLiteral("x"),
        lambda: NumericLiteral("x", le=float("inf")),
        lambda: NumericLiteral("x", gt=float("nan")),
        lambda: NumericLiteral("x", le=True),
        lambda: NumericLiteral("x", le="3"),
        lambda: NumericLiteral("x", le=10**400),
        lambda: BooleanLiteral("x", 1),
        lambda: BooleanLiteral("", True),
        lambda: CategoricalLiteral("x", 3),
        lambda: And(BooleanLiteral("x")),
        lambda: Or(),
        lambda: And(BooleanLiteral("x"), "y"),
        lambda: Not("x"),
    ],
)
def test_invalid_construction(make):
    with pytest.raises(ParameterError):
        make()


def test_immutable_hashable_and_flattened():
    a, b, c = BooleanLiteral("a"), CategoricalLiteral("b", "x"), NumericLiteral("c", ge=1)
    assert NumericLiteral("c", ge=1) == c and hash(NumericLiteral("c", ge=1.0)) == hash(c)
    assert isinstance(c.ge, float)
    q = (a & b) & c
    assert q == And(a, b, c) == And([a, b, c])
    assert (a | b | c).queries == (a, b, c)
    assert And(a, Or(b, c)) != And(a, b, c)
    assert len({q, And(a, b, c), ~a, Not(a)}) == 2
    with pytest.raises(AttributeError):
        a.attr = "z"
    with pytest.raises(AttributeError):
        q.queries = ()
    assert q.literals() == (a, b, c)
    assert (~a | And(a, c)).literals() == (a, a, c)
    assert (~a | And(a, c)).attributes() == frozenset({"a", "c"})
    assert repr(And(a, b)) == "And(BooleanLiteral(attr='a', value=True), CategoricalLiteral(attr='b', category='x'))"


@pytest.mark.parametrize("seed", range(8))
def test_support_matches_pandas_oracle(seed):
    rng = np.random.default_rng(seed)
    view = random_view(rng, n_rows=80)
    df = view_frame(view)
    for _ in range(40):
        q = random_query(rng, view, depth=4)
        support = q.support(view)
        assert support.shape == (80,) and support.dtype == bool
        np.testing.assert_array_equal(support, pandas_support(q, df), err_msg=str(q))
