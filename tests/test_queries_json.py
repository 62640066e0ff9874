"""JSON form of queries: the spec's example, round trips, strict reading."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_queries_helpers import random_query, random_view

from dprm.errors import DprmError
from dprm.queries import (
    And,
    BooleanLiteral,
    CategoricalLiteral,
    Not,
    NumericLiteral,
    Or,
    query_from_json,
    query_to_json,
)

SPEC_JSON = """
{"or": [{"and": [{"not": {"attr": "Hypertension", "eq": true}},
                 {"attr": "State", "eq": "CA"}]},
        {"attr": "BirthY", "le": 1950}]}
"""
SPEC_QUERY = Or(
    And(Not(BooleanLiteral("Hypertension", True)), CategoricalLiteral("State", "CA")),
    NumericLiteral("BirthY", le=1950),
)


def test_spec_example_both_ways():
    assert query_from_json(json.loads(SPEC_JSON)) == SPEC_QUERY
    assert query_to_json(SPEC_QUERY) == json.loads(SPEC_JSON)


def test_literal_forms():
    assert query_to_json(BooleanLiteral("A", False)) == {"attr": "A", "eq": False}
    assert query_to_json(CategoricalLiteral("A", "1")) == {"attr": "A", "eq": "1"}
    out = query_to_json(NumericLiteral("A", gt=1.5, le=3))
    assert out == {"attr": "A", "gt": 1.5, "le": 3} and isinstance(out["le"], int)
    assert json.dumps(query_to_json(NumericLiteral("A", ge=1e300, lt=-0.25))) == '{"attr": "A", "ge": 1e+300, "lt": -0.25}'
    assert query_from_json({"attr": "A", "ge": 2, "gt": 1, "lt": 5, "le": 4}) == NumericLiteral(
        "A", gt=1, ge=2, lt=5, le=4
    )


@pytest.mark.parametrize("seed", range(6))
def test_round_trip_random_queries(seed):
    rng = np.random.default_rng(seed)
    view = random_view(rng)
    for _ in range(50):
        q = random_query(rng, view, depth=4)
        obj = query_to_json(q)
        text = json.dumps(obj, allow_nan=False)
        assert query_from_json(json.loads(text)) == q
        assert query_to_json(query_from_json(obj)) == obj


def test_round_trip_keeps_float_bounds_exactly():
    rng = np.random.default_rng(7)
    for x in rng.normal(scale=1e6, size=100):
        q = NumericLiteral("x", gt=float(x), le=float(x) + 0.1)
        assert query_from_json(json.loads(json.dumps(query_to_json(q)))) == q


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([], "query: a query must be a JSON object, got []"),
        ({}, "query: empty query object"),
        ({"attr": "A", "eq": True, "foo": 1}, "query: unknown key 'foo'"),
        ({"eq": True}, "query: literal without 'attr'"),
        ({"foo": 1}, "query: unknown key 'foo'"),
        ({"attr": "", "eq": True}, "query.attr: must be a non-empty string"),
        ({"attr": 3, "eq": True}, "query.attr: must be a non-empty string, got 3"),
        ({"attr": "A"}, "query: literal on 'A' needs 'eq' or one of gt, ge, lt, le"),
        ({"attr": "A", "eq": 1}, "query.eq: must be true, false or a string, got 1"),
        ({"attr": "A", "eq": None}, "query.eq: must be true, false or a string, got None"),
        ({"attr": "A", "eq": "x", "le": 3}, "query: 'eq' cannot be combined with 'le'"),
        ({"attr": "A", "le": "3"}, "query.le: must be a finite number, got '3'"),
        ({"attr": "A", "le": True}, "query.le: must be a finite number, got True"),
        ({"attr": "A", "le": float("nan")}, "query.le: must be a finite number, got nan"),
        ({"attr": "A", "le": 10**400}, "query.le: must be a finite number"),
        ({"and": []}, "query.and: needs two or more queries, got 0"),
        ({"or": [{"attr": "A", "eq": True}]}, "query.or: needs two or more queries, got 1"),
        ({"and": {"attr": "A", "eq": True}}, "query.and: must be a list of queries"),
        ({"not": {"attr": "A", "eq": True}, "attr": "B"}, "query: unexpected key 'attr' beside 'not'"),
        ({"and": [{"attr": "A", "eq": True}, {"not": {"attr": "B", "foo": 1}}]}, "query.and[1].not: unknown key 'foo'"),
        ({"not": "A"}, "query.not: a query must be a JSON object, got 'A'"),
    ],
)
def test_malformed_queries(obj, message):
    with pytest.raises(DprmError) as info:
        query_from_json(obj)
    text = str(info.value)
    assert text.startswith(message) and "\n" not in text


def test_error_location_prefix():
    with pytest.raises(DprmError, match=r"^out\.json: redescriptions\[3\]\.left\.or\[0\]: unknown key 'x'$"):
        query_from_json({"or": [{"x": 1}, {"attr": "A", "eq": True}]}, where="out.json: redescriptions[3].left")


def test_deep_nesting_is_a_clean_error():
    obj: dict = {"attr": "A", "eq": True}
    for _ in range(5000):
        obj = {"not": obj}
    with pytest.raises(DprmError, match="nested too deeply"):
        query_from_json(obj)
