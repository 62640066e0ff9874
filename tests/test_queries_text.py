"""Readable text of queries."""

from __future__ import annotations

import pytest

from dprm.queries import (
    And,
    BooleanLiteral,
    CategoricalLiteral,
    Not,
    NumericLiteral,
    Or,
    format_number,
    to_text,
)

A, B, C = BooleanLiteral("A"), BooleanLiteral("B"), BooleanLiteral("C")


def test_spec_example():
    q = Or(And(Not(BooleanLiteral("Hypertension")), CategoricalLiteral("State", "CA")), NumericLiteral("BirthY", le=1950))
    assert to_text(q) == "(¬Hypertension ∧ [State = CA]) ∨ [BirthY ≤ 1950]"
    assert str(q) == to_text(q)
    assert to_text(q, ascii=True) == "(!Hypertension & [State = CA]) | [BirthY <= 1950]"
    assert to_text(q, ascii=True).isascii()


@pytest.mark.parametrize(
    ("query", "text"),
    [
        (A & B & C, "A ∧ B ∧ C"),
        (A | (B & C), "A ∨ (B ∧ C)"),
        ((A | B) & C, "(A ∨ B) ∧ C"),
        (~(A & B), "¬(A ∧ B)"),
        (~~A, "¬¬A"),
        (And(~(A | B), C), "¬(A ∨ B) ∧ C"),
        (Or(A, And(B, Or(C, ~A))), "A ∨ (B ∧ (C ∨ ¬A))"),
        (BooleanLiteral("A", False), "[A = false]"),
        (~CategoricalLiteral("blood type", "0+"), "¬[blood type = 0+]"),
    ],
)
def test_minimal_parentheses(query, text):
    assert to_text(query) == text


@pytest.mark.parametrize(
    ("literal", "text", "ascii_text"),
    [
        (NumericLiteral("x", gt=1.5), "[x > 1.5]", "[x > 1.5]"),
        (NumericLiteral("x", ge=2.0), "[x ≥ 2]", "[x >= 2]"),
        (NumericLiteral("x", lt=-3), "[x < -3]", "[x < -3]"),
        (NumericLiteral("x", gt=0.1, le=2), "[0.1 < x ≤ 2]", "[0.1 < x <= 2]"),
        (NumericLiteral("x", ge=1e-7, lt=1e20), "[1e-07 ≤ x < 1e+20]", "[1e-07 <= x < 1e+20]"),
        (NumericLiteral("x", gt=1, ge=2), "[x > 1 ∧ x ≥ 2]", "[x > 1 & x >= 2]"),
    ],
)
def test_numeric_literals(literal, text, ascii_text):
    assert to_text(literal) == text
    assert to_text(literal, ascii=True) == ascii_text


@pytest.mark.parametrize("x", [0.1, 1 / 3, 2.5e-300, 123456789.125, -7.0, 1e16, 2.0**53 + 2, 5e-324])
def test_format_number_round_trips(x):
    text = format_number(x)
    assert float(text) == x
    assert not text.endswith(".0")


def test_format_number_integers_plain():
    assert [format_number(v) for v in (0.0, -0.0, 1950.0, 1e15)] == ["0", "0", "1950", "1000000000000000"]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("House mouse", "[House mouse]"),
        ("a(b)", "[a(b)]"),
        ("x<y", "[x<y]"),
        ("tab\tname", "[tab\tname]"),
        ("Moose", "Moose"),
        ("Eurasian_Lynx-2", "Eurasian_Lynx-2"),
    ],
)
def test_a_boolean_name_that_is_not_one_word_is_bracketed(name, text):
    assert to_text(BooleanLiteral(name)) == text
    assert to_text(Not(BooleanLiteral(name))) == "¬" + text
    assert to_text(BooleanLiteral(name, False)) == f"[{name} = false]"


def test_several_multi_word_names_read_as_their_literals():
    query = And(BooleanLiteral("House mouse"), Or(BooleanLiteral("Small Asian Mongoose"), BooleanLiteral("Moose")))
    assert to_text(query) == "[House mouse] ∧ ([Small Asian Mongoose] ∨ Moose)"


@pytest.mark.parametrize(
    "query, text",
    [
        (NumericLiteral("x", le=3) | NumericLiteral("x", gt=3), "[x known]"),
        (NumericLiteral("x", le=3) | NumericLiteral("x", ge=3), "[x known]"),   # overlapping at 3
        (NumericLiteral("x", le=1) | NumericLiteral("x", gt=2) | NumericLiteral("x", gt=0.5, le=2.5), "[x known]"),
        (BooleanLiteral("b") | BooleanLiteral("b", False) | NumericLiteral("y", gt=1), "[b known] ∨ [y > 1]"),
        (NumericLiteral("a", gt=1) & (NumericLiteral("c", le=0.3) | NumericLiteral("c", gt=0.3)),
         "[a > 1] ∧ [c known]"),
        (Not(NumericLiteral("a", gt=1) & (NumericLiteral("c", le=0.3) | NumericLiteral("c", gt=0.3))),
         "¬([a > 1] ∧ [c known])"),
        # not the whole line, or not one attribute: the literals as they are
        (NumericLiteral("x", lt=3) | NumericLiteral("x", gt=3), "[x < 3] ∨ [x > 3]"),
        (NumericLiteral("x", le=1) | NumericLiteral("x", gt=2), "[x ≤ 1] ∨ [x > 2]"),
        (NumericLiteral("x", le=3) | NumericLiteral("y", gt=3), "[x ≤ 3] ∨ [y > 3]"),
        (BooleanLiteral("b") | Not(BooleanLiteral("b")), "b ∨ ¬b"),   # holds where b is missing too
        (BooleanLiteral("b") & BooleanLiteral("b", False), "b ∧ [b = false]"),
    ],
)
def test_both_sides_of_a_split_read_as_a_known_value(query, text):
    """An ``Or`` of one attribute's literals that holds exactly where it has a value is written ``[x known]``."""
    assert to_text(query) == text
    assert to_text(query, ascii=True) == text.replace("∨", "|").replace("∧", "&").replace("¬", "!").replace("≤", "<=")


def test_a_category_holding_a_control_character_is_written_escaped():
    """An escape sequence in a category value reached the terminal in dprm mine's table; a line break split
    the query's one line."""
    from dprm.queries import CategoricalLiteral

    assert to_text(CategoricalLiteral("c", "a\x1b[31mb")) == "[c = a\\x1b[31mb]"
    assert to_text(CategoricalLiteral("c", "a\nb")) == "[c = a\\nb]"
    assert to_text(CategoricalLiteral("c", "plain é text")) == "[c = plain é text]"
