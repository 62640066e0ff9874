"""Export in python-clired / Siren query syntax.

The parse-back tests need python-clired 6.0.9, which is not a dependency of dprm:
install it aside (``pip install --target /tmp/clired_pkg python-clired==6.0.9
--no-deps``) and point ``DPRM_CLIRED_PATH`` at that directory (default
``/tmp/clired_pkg``); without it those tests are skipped.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from test_queries_helpers import random_query, random_view

from dprm.data.attributes import AttributeKind
from dprm.errors import DprmError
from dprm.queries import (
    CLIRED_HEADER,
    And,
    BooleanLiteral,
    CategoricalLiteral,
    Not,
    NumericLiteral,
    Or,
    Redescription,
    RedescriptionStats,
    to_clired,
    write_clired_queries,
)
from dprm.queries.clired_parser import parse_clired_query, query_category

A, B, C = BooleanLiteral("A"), BooleanLiteral("B"), BooleanLiteral("C")
NAMES = {"boolean": ["smoker", "has diabetes"], "categorical": ["blood type", "State"],
         "numeric": ["Birth year", "x_1"]}


@pytest.mark.parametrize(
    ("query", "text"),
    [
        (A, "[A]"),
        (BooleanLiteral("A", False), "![A]"),
        (Not(BooleanLiteral("A", False)), "[A]"),
        (~CategoricalLiteral("State", "New York"), "![State = New York]"),
        (CategoricalLiteral("code", "12"), "[code = 12]"),
        (NumericLiteral("x", ge=1, le=2.5), "[1 < x < 2.5]"),
        (NumericLiteral("x", gt=1, ge=0), "[1.0000000000000002 < x]"),
        (NumericLiteral("x", lt=0), "[x < -5e-324]"),
        (~(A & B), "!([A] & [B])"),
        (~(A | B) & C, "!([A] | [B]) & [C]"),
        (A & ~(B & C), "[A] & (![B] | ![C])"),  # De Morgan: no negated group inside a conjunction
        (A | ~(B | C), "[A] | (![B] & ![C])"),
        (A | (B & ~(A | C)), "[A] | ([B] & !([A] | [C]))"),
        (And(A, Not(Not(And(B, C)))), "[A] & [B] & [C]"),
    ],
)
def test_clired_text(query, text):
    assert to_clired(query) == text


def test_unicode_and_columns():
    q = Or(And(~BooleanLiteral("Hypertension"), CategoricalLiteral("State", "CA")), NumericLiteral("BirthY", le=1950))
    assert to_clired(q, ascii=False) == "(¬[Hypertension] ∧ [State = CA]) ∨ [BirthY ≤ 1950]"
    assert to_clired(q, columns=["BirthY", "State", "Hypertension"]) == "(![v2] & [v1 = CA]) | [v0 < 1950]"
    assert to_clired(BooleanLiteral("a=b"), columns=["a=b"]) == "[v0]"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (BooleanLiteral("v3"), "attribute name 'v3' cannot be written"),
        (BooleanLiteral("a<b"), "attribute name 'a<b'"),
        (BooleanLiteral("2nd"), "attribute name '2nd'"),
        (BooleanLiteral("x "), "attribute name 'x '"),
        (BooleanLiteral("@t"), "attribute name '@t'"),
        (CategoricalLiteral("c", "a,b"), "category 'a,b' of 'c'"),
        (CategoricalLiteral("c", "3rd"), "category '3rd' of 'c'"),
        (NumericLiteral("x", gt=2, lt=1), "interval of 'x' holds no float value"),
        (NumericLiteral("x", gt=1, lt=float(np.nextafter(1.0, 2.0))), "interval of 'x' holds no float value"),
    ],
)
def test_not_writable(query, message):
    with pytest.raises(DprmError, match=message):
        to_clired(query)
    if isinstance(query, BooleanLiteral):
        assert to_clired(query, columns=[query.attr]) == "[v0]"
    with pytest.raises(DprmError, match="not among the given columns"):
        to_clired(query, columns=["other"])


def test_queries_file_layout(tmp_path):
    reds = [
        Redescription(A & B, NumericLiteral("y", gt=0.5), RedescriptionStats.from_counts(10.4, 8.6, 6.2, 40)),
        Redescription(~A, CategoricalLiteral("c", "x"), RedescriptionStats.from_counts(3.0, 5.0, 4.0)),
    ]
    path = tmp_path / "reds.queries"
    write_clired_queries(reds, path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t") == list(CLIRED_HEADER)
    first = lines[1].split("\t")
    assert first[:3] == ["r1", "[A] & [B]", "[0.5000000000000001 < y]"]
    assert float(first[3]) == reds[0].stats.jaccard and float(first[4]) == reds[0].stats.p_value
    assert first[5:] == ["4", "2", "6"]
    assert lines[2].split("\t") == ["r2", "![A]", "[c = x]", "0.6", "-", "0", "2", "3"]


# --- parse back with python-clired ----------------------------------------------------

def _clired_query_class():
    path = os.environ.get("DPRM_CLIRED_PATH", "/tmp/clired_pkg")
    if os.path.isdir(path) and path not in sys.path:
        sys.path.append(path)
    module = pytest.importorskip("blocks.mine.classQuery", reason="python-clired is not importable")
    return module


def writable_queries(rng, view, count):
    """Random queries without empty numeric intervals (which clired cannot write)."""
    out = []
    while len(out) < count:
        q = random_query(rng, view, depth=4)
        try:
            to_clired(q)
        except DprmError as err:
            assert "holds no float value" in str(err)
            continue
        out.append(q)
    return out


def _clired_eval(module, buk, op, row) -> bool:
    """Evaluate clired's parsed query structure on one row (values by column index)."""
    if isinstance(buk, module.Literal):
        return bool(buk.truthEval(row[buk.colId()]))
    items = list(buk)
    negated = bool(items) and isinstance(items[0], module.Neg)
    if negated:
        items = items[1:]
    values = [_clired_eval(module, b, op.other(), row) for b in items]
    result = any(values) if op.isOr() else all(values)
    return result != negated


def _rows_for_clired(view):
    rows = []
    for i in range(len(view.attributes[0].values)):
        row = []
        for a in view:
            v = a.values[i]
            if a.kind is AttributeKind.BOOLEAN:
                row.append(bool(v))
            elif a.kind is AttributeKind.CATEGORICAL:
                row.append(a.domain.categories[v])
            else:
                row.append(float(v))
        rows.append(row)
    return rows


@pytest.mark.parametrize("use_index", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_clired_parses_back_same_queries(seed, use_index):
    module = _clired_query_class()
    rng = np.random.default_rng(seed)
    view = random_view(rng, n_rows=40, missing=0.0, names=NAMES)  # clired and dprm agree without missing values
    names = view.names
    rows = _rows_for_clired(view)
    for ascii_ in (True, False):
        for q in writable_queries(rng, view, 25):
            text = to_clired(q, columns=names if use_index else None, ascii=ascii_)
            parsed = module.Query.parse(text, names=names)
            got = np.array([_clired_eval(module, parsed.buk, parsed.op, row) for row in rows])
            np.testing.assert_array_equal(got, q.support(view), err_msg=f"{q} -> {text}")
            # clired's own rendering reads back to the same literals
            again = module.Query.parse(parsed.disp(names=names), names=names)
            assert sorted(map(str, again.invLiterals())) == sorted(map(str, parsed.invLiterals()))


def test_clired_literals_are_the_same():
    module = _clired_query_class()
    names = ["smoker", "blood type", "Birth year"]
    q = BooleanLiteral("smoker", False) & CategoricalLiteral("blood type", "AB") & NumericLiteral(
        "Birth year", ge=1950, le=1960.5)
    parsed = module.Query.parse(to_clired(q), names=names)
    lits = sorted(parsed.invLiterals(), key=lambda lit: lit.colId())
    assert [lit.colId() for lit in lits] == [0, 1, 2]
    assert [lit.isNeg() for lit in lits] == [True, False, False]
    assert [lit.typeId() for lit in lits] == [1, 2, 3]  # Boolean, categorical, numeric
    assert lits[1].getTerm().getCat() == {"AB"}
    assert lits[2].getTerm().valRange() == [1950.0, 1960.5]
    assert parsed.op.isAnd()


def test_clired_parses_queries_file(tmp_path):
    module = _clired_query_class()
    rng = np.random.default_rng(11)
    view = random_view(rng, n_rows=30, missing=0.0, names=NAMES)
    queries = writable_queries(rng, view, 12)
    reds = [Redescription(queries[2 * i], queries[2 * i + 1],
                          RedescriptionStats.from_supports(rng.random(30) < 0.5, rng.random(30) < 0.5))
            for i in range(6)]
    path = tmp_path / "reds.queries"
    write_clired_queries(reds, path, ascii=False)
    rows = _rows_for_clired(view)
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    for r, line in zip(reds, lines[1:]):
        fields = dict(zip(header, line.split("\t")))
        for side, q in (("query_LHS", r.left), ("query_RHS", r.right)):
            parsed = module.Query.parse(fields[side], names=view.names)
            got = np.array([_clired_eval(module, parsed.buk, parsed.op, row) for row in rows])
            np.testing.assert_array_equal(got, q.support(view))


# --- categories clired's grammar cannot hold: dprm's reader's index form #<k> -------------------

HOSTILE = ["red", "a]b", "x, y", " pale", "dark ", "1e5", "2.5", "#1", 'say "hi"', "p<q", "a=b", "c&d", "e|f",
           "it's", "{z}", "?", "@t"]


def test_categories_clired_cannot_hold_are_written_by_index_and_read_back():
    """``[colour = a]b]`` cannot be typed (clired has no quoting): such a category is written
    ``#<k>``, its index among the declared categories, and dprm's reader reads it back."""
    from dprm.queries import to_text
    from dprm.queries.clired_parser import parse_clired_query, query_category

    domains = {"colour": HOSTILE}
    written = [query_category(c, k) for k, c in enumerate(HOSTILE)]
    assert written == ["red", "#1", "#2", "#3", "#4", "#5", "2.5", "#7", 'say "hi"', "#9", "#10", "#11", "#12",
                       "it's", "#14", "#15", "#16"]
    names = ["smoker", "colour"]
    for k, category in enumerate(HOSTILE):
        for query in (CategoricalLiteral("colour", category),
                      Not(CategoricalLiteral("colour", category)) & BooleanLiteral("smoker"),
                      CategoricalLiteral("colour", category) | CategoricalLiteral("colour", "red")):
            for columns in (None, names):
                text = to_clired(query, columns=columns, domains=domains)
                back = parse_clired_query(text, columns=columns, domains=domains)
                assert to_text(back) == to_text(query), (category, text)
                assert to_clired(back, columns=columns, domains=domains) == text
    # a set, and the index winning over a category of its text
    assert to_text(parse_clired_query("[colour ∈ {#1,red,#7}]", domains=domains)) == (
        "[colour = a]b] ∨ [colour = red] ∨ [colour = #1]")
    assert to_text(parse_clired_query("[colour = #1]")) == "[colour = #1]"  # without domains: as written
    with pytest.raises(DprmError, match=r"category #17 of 'colour' does not exist \(its declared categories: "
                                        r"#0 to #16\)"):
        parse_clired_query("[colour = #17]", domains=domains)
    # without domains a category clired cannot hold is still refused, as before
    with pytest.raises(DprmError, match="cannot be written in clired syntax"):
        to_clired(CategoricalLiteral("colour", "a]b"))


def test_the_index_form_of_a_category_is_clireds_grammar():
    """clired has no quoting: ``#<k>`` is one of its category tokens (it reads the category of that
    text), so a query with it is still clired syntax, not an invented one."""
    module = _clired_query_class()
    domains = {"colour": HOSTILE}
    for k, category in enumerate(HOSTILE):
        text = to_clired(CategoricalLiteral("colour", category) & BooleanLiteral("smoker"), domains=domains)
        parsed = module.Query.parse(text, names=["smoker", "colour"])
        cats = [lit.getTerm().getCat() for lit in parsed.invLiterals() if lit.typeId() == 2]
        assert cats == [{text.split(" = ")[1].split("]")[0]}], (category, text)


@pytest.mark.parametrize("text, columns, bad", [
    ("[x > ０]", None, "'０'"),            # a full-width digit once read as the threshold 0
    ("[x > ０]", ["x"], "'０'"),
    ("[٣ < x < 5]", ["x"], "'٣'"),        # Arabic-Indic 3 once read as 3
    ("x<-１.５", None, "'-１.５'"),
])
def test_digits_of_another_script_are_no_number(text, columns, bad):
    with pytest.raises(DprmError) as info:
        parse_clired_query(text, columns=columns)
    message = str(info.value)
    assert message.startswith(f"clired query {text!r}: ") and "\n" not in message
    assert f"{bad} is not a number: write it in ASCII digits (0-9)" in message


def test_index_and_category_index_take_ascii_digits_only():
    # 'v١' (Arabic-Indic 1) was read as the column v1; '#٣' as the declared category #3
    with pytest.raises(DprmError, match=r"unknown attribute 'v١'"):
        parse_clired_query("v١", columns=["a", "b"])
    assert parse_clired_query("v1", columns=["a", "b"]) == BooleanLiteral("b", True)
    domains = {"c": ["a", "b", "c", "d"]}
    assert parse_clired_query("[c = #٣]", domains=domains) == CategoricalLiteral("c", "#٣")
    assert parse_clired_query("[c = #3]", domains=domains) == CategoricalLiteral("c", "d")
    assert query_category("#٣", 0) == "#٣"  # written as itself, read back as itself


@pytest.mark.parametrize("text, bad, why", [
    ("[1e-400 < x < 3]", "'1e-400'", "is too close to 0 (it would read as 0)"),   # once the bound 0
    ("[x < -1e-400]", "'-1e-400'", "is too close to 0 (it would read as 0)"),
    ("[x > 0." + "0" * 400 + "1]", "'0.000000", "is too close to 0 (it would read as 0)"),
    ("[x < 1e400]", "'1e400'", "is beyond the largest number (about 1.8e308)"),
])
def test_a_bound_beyond_the_floats_range_is_refused_not_rounded(text, bad, why):
    """A bound a float64 cannot hold was read as 0 (``1e-400``: ``[x > 0]``, a threshold the query did not
    write) without a word; now one line naming the bound."""
    with pytest.raises(DprmError) as info:
        parse_clired_query(text)
    message = str(info.value)
    assert message.startswith(f"clired query {text!r}: bound {bad}") and why in message and "\n" not in message


def test_bounds_near_the_floats_range_that_a_float_holds_are_read():
    assert parse_clired_query("[x < 1e-310]") == NumericLiteral("x", le=1e-310)
    assert parse_clired_query("[x < 0e-400]") == NumericLiteral("x", le=0.0)
    assert parse_clired_query("[x < 1.7e308]") == NumericLiteral("x", le=1.7e308)
