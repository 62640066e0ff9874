"""Parsing queries written in python-clired's syntax into dprm queries.

The inverse of :func:`dprm.queries.clired.to_clired`: a small tokenizer and recursive-descent
parser for the query syntax of python-clired / Siren 6.0.9, in both of the forms the
tool writes and reads:

* its *raw* form (what ``exec_clired`` writes into a ``.queries`` file): ``v8``,
  ``! v8``, ``v3=red``, ``-8.3<v1<8.1``, ``v1<-5.6``, ``0.8<v3``, operators ``&`` /
  ``|``, groups ``( ... )`` and negated groups ``! ( ... )``;
* its *bracketed* form (Siren, and :func:`dprm.queries.to_clired`): ``[A]``, ``![A]``,
  ``[A = red]``, ``[1.5 < A < 3]``, with ``∧ ∨ ¬ ≤`` for ``& | ! <``.

Also accepted, as clired's grammar (``redquery_parser.py``) does: ``>`` / ``≥``
bounds written high to low (``[3 > A > 1.5]``), category tests ``!=`` / ``≠``, sets
of categories ``[A ∈ {a,b}]`` / ``A={a,b}`` (a disjunction of categorical literals)
and ``∉``. Not accepted (a :class:`~dprm.errors.DprmError` naming the text):
anonymous ``?v3`` and constant ``!!`` literals, time values ``@...``, an empty
query ``[]``, and ``∧`` mixed with ``∨`` in one group without parentheses.

Meaning
-------
Numeric intervals are **closed**: clired's ``lo<v<hi`` is ``lo ≤ v ≤ hi`` (it reads
``<`` and ``≤`` alike), so it becomes ``NumericLiteral(v, ge=lo, le=hi)``.

Negation. clired evaluates queries in three-valued logic: a negated *literal* is
false on a missing value, like the literal itself. So a negated literal is read as
the complementary literal, which dprm also evaluates as false on a missing value:
``![A]`` → ``BooleanLiteral(A, False)``; ``!lo<v<hi`` → ``[v < lo] ∨ [v > hi]``;
``!lo<v`` → ``[v < lo]``; ``!v<hi`` → ``[v > hi]``. A negated categorical test and a
negated group (``!( ... )``) become dprm's :class:`~dprm.queries.Not`, the plain
complement, which differs from clired's reading only on rows where an attribute
of the negated part is missing. On data without missing values both readings
agree everywhere.

Attributes are referred to by column index ``v<i>`` (looked up in ``columns``,
0-based, as clired numbers the columns of one side) or by name; ``v<i>`` wins over
a name, as in clired. A name holding one of the grammar's symbols (``< > = ! [ ] (
) { } & | , ∧ ∨ ¬ ≤ ≥ ∈ ∉ ≠``, ``?``, ``@``, a tab or a newline), beginning or
ending with a space, or itself like ``v3`` can only be referred to by its index
(:func:`query_name` says how to write each).

Categories. A category is written as itself where clired's grammar holds it as one
token (as :func:`dprm.queries.to_clired` writes it). One that it cannot hold (a symbol
of the grammar such as ``] < = & | ,``, ``?`` or ``@``, a space at an end, a text that
begins with a digit but is no plain number, such as ``1e5``), and one like ``#2``, is
written by its index among its attribute's declared categories, ``#0`` for the
first: ``[colour = #2]`` (:func:`query_category` says how to write each). This is
dprm's reader's own form, read where the declared categories are given
(``domains``), as ``v<i>`` is read where the columns are; clired has no quoting nor
escaping, and reads ``#2`` as the category of that text. ``#<k>`` wins over a
category of that text, as ``v<i>`` over a name.

Examples
--------
>>> q = parse_clired_query("( -8.3<v1<8.1 | ! v0 ) & v2=red", columns=["smoker", "age", "colour"])
>>> print(q)
([-8.3 ≤ age ≤ 8.1] ∨ [smoker = false]) ∧ [colour = red]
>>> from dprm.queries import to_text
>>> to_text(parse_clired_query("[1950 ≤ BirthY] ∧ ¬[Hypertension]"))
'[BirthY ≥ 1950] ∧ [Hypertension = false]'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from dprm.errors import DprmError, number_problem
from dprm.queries.base import Query
from dprm.queries.clired import CATEGORY_INDEX, query_category
from dprm.queries.literals import BooleanLiteral, CategoricalLiteral, NumericLiteral
from dprm.queries.operators import And, Not, Or

__all__ = ["parse_clired_query", "query_name", "query_category"]

# Tokens of clired's grammar; everything else (between them) is a word: an attribute
# name, a category or a number. "!=" is one token, and so is "!" before anything else.
_SYMBOL_TOKENS = {
    "(": "(", ")": ")", "[": "[", "]": "]", "{": "{", "}": "}", ",": ",",
    "&": "and", "∧": "and", "|": "or", "∨": "or",
    "!": "not", "¬": "not",
    "<": "lt", "≤": "lt", ">": "gt", "≥": "gt",
    "=": "in", "∈": "in", "≠": "notin", "∉": "notin",
}
_SPECIAL = set(_SYMBOL_TOKENS) | {"\n", "\t", "?", "@"}
# ASCII digits only (re.ASCII): a digit of another script (full-width '０', Arabic-Indic '٣') is
# no number nor column index; _LIKE_NUMBER finds such a would-be number to refuse it in one line.
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z", re.ASCII)
_LIKE_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_INDEX = re.compile(r"v(\d+)\Z", re.ASCII)


@dataclass(frozen=True)
class _Token:
    kind: str  # a _SYMBOL_TOKENS value, or "word"
    text: str
    pos: int


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in " \r":
            i += 1
        elif ch == "!" and i + 1 < n and text[i + 1] == "=":
            tokens.append(_Token("notin", "!=", i))
            i += 2
        elif ch in _SYMBOL_TOKENS:
            tokens.append(_Token(_SYMBOL_TOKENS[ch], ch, i))
            i += 1
        elif ch in _SPECIAL:
            what = {"?": "anonymous literals (?v)", "@": "time values (@...)"}.get(ch, repr(ch))
            raise DprmError(f"clired query {text!r}: {what} are not supported (position {i})")
        else:
            j = i
            while j < n and text[j] not in _SPECIAL:
                j += 1
            tokens.append(_Token("word", text[i:j].strip(" \r"), i))
            i = j
    return tokens


#: Most parentheses open at once in a query (deeper is refused before Python's recursion limit).
MAX_NESTING = 64


class _Parser:
    def __init__(self, text: str, columns: Sequence[str] | None, categories: Mapping[str, Mapping[str, str]] | None,
                 domains: Mapping[str, Sequence[str]] | None = None):
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0
        self.columns = list(columns) if columns is not None else None
        self.names = set(self.columns) if self.columns is not None else None
        self.categories = categories or {}
        self.domains = domains or {}
        self.depth = 0  # of parentheses open at the token read

    # -- helpers
    def error(self, message: str) -> DprmError:
        where = self.tokens[self.i].pos if self.i < len(self.tokens) else len(self.text)
        return DprmError(f"clired query {self.text!r}: {message} (position {where})")

    def peek(self, offset: int = 0) -> _Token | None:
        k = self.i + offset
        return self.tokens[k] if k < len(self.tokens) else None

    def take(self, kind: str | None = None) -> _Token:
        tok = self.peek()
        if tok is None or (kind is not None and tok.kind != kind):
            expected = "more" if kind is None else {"word": "a name or value"}.get(kind, repr(kind))
            found = "the end" if tok is None else repr(tok.text)
            raise self.error(f"expected {expected}, found {found}")
        self.i += 1
        return tok

    def at(self, kind: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == kind

    # -- grammar
    def parse(self) -> Query:
        if not self.tokens or [t.kind for t in self.tokens] == ["[", "]"]:
            raise self.error("empty query")
        query = self.expression()
        if self.peek() is not None:
            raise self.error(f"unexpected {self.peek().text!r}")
        return query

    def expression(self) -> Query:
        operands = [self.term()]
        operator = None
        while self.at("and") or self.at("or"):
            tok = self.take()
            kind = tok.kind
            if operator is not None and kind != operator:
                raise DprmError(f"clired query {self.text!r}: ∧ and ∨ mixed in one group without "
                                f"parentheses (position {tok.pos})")
            operator = kind
            operands.append(self.term())
        if operator is None:
            return operands[0]
        return And(*operands) if operator == "and" else Or(*operands)

    def term(self) -> Query:
        negated = False
        while self.at("not"):
            self.take()
            negated = not negated
        if self.at("("):
            self.take("(")
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise self.error(f"parentheses nested more than {MAX_NESTING} deep")
            inner = self.expression()
            self.take(")")
            self.depth -= 1
            return Not(inner) if negated else inner
        if self.at("not") or self.at("word") or self.at("["):
            return self.literal(negated)
        tok = self.peek()
        raise self.error("expected a literal or '('" + ("" if tok is None else f", found {tok.text!r}"))

    def literal(self, negated: bool) -> Query:
        bracketed = self.at("[")
        if bracketed:
            self.take("[")
            if self.at("]"):
                raise self.error("empty literal []")
        first = self.take("word")
        nxt = self.peek()
        kind = None if nxt is None else nxt.kind
        if kind in ("in", "notin"):
            self.take()
            query = self.categorical(first, negated ^ (kind == "notin"))
        elif kind in ("lt", "gt"):
            query = self.numeric(first, negated)
        else:
            attr = self.attribute(first)
            query = BooleanLiteral(attr, not negated)
        if bracketed:
            self.take("]")
        return query

    def attribute(self, tok: _Token) -> str:
        word = tok.text
        m = _INDEX.match(word)
        if m is not None and self.columns is not None:
            i = int(m.group(1))
            if i >= len(self.columns):
                raise DprmError(f"clired query {self.text!r}: column {word} does not exist "
                                f"(the side has {len(self.columns)} columns)")
            return self.columns[i]
        if not word:
            raise DprmError(f"clired query {self.text!r}: empty attribute name (position {tok.pos})")
        if self.names is not None and word not in self.names:
            raise DprmError(f"clired query {self.text!r}: unknown attribute {word!r}")
        return word

    def is_attribute(self, word: str) -> bool:
        if _INDEX.match(word) and self.columns is not None:
            return True
        if self.names is not None:
            return word in self.names
        return not _LIKE_NUMBER.match(word)

    def categorical(self, attr_tok: _Token, negated: bool) -> Query:
        attr = self.attribute(attr_tok)
        if self.at("{"):
            self.take("{")
            words = [self.category(attr, self.take("word"))]
            while self.at(","):
                self.take(",")
                words.append(self.category(attr, self.take("word")))
            self.take("}")
        else:
            words = [self.category(attr, self.take("word"))]
        literals = [CategoricalLiteral(attr, w) for w in dict.fromkeys(words)]
        query = literals[0] if len(literals) == 1 else Or(*literals)
        return Not(query) if negated else query

    def category(self, attr: str, tok: _Token) -> str:
        """The category a word names: ``#<k>`` is the ``k``-th declared category of ``attr`` (when
        its categories are given), any other word the category of that text (or recoded so)."""
        m = CATEGORY_INDEX.match(tok.text)
        if m is None or attr not in self.domains:
            return self.categories.get(attr, {}).get(tok.text, tok.text)
        declared = self.domains[attr]
        k = int(m.group(1))
        if k >= len(declared):
            which = f"#0 to #{len(declared) - 1}" if declared else "none"
            raise DprmError(f"clired query {self.text!r}: category {tok.text} of {attr[:64]!r} does not exist "
                            f"(its declared categories: {which})")
        return str(declared[k])

    def number(self, tok: _Token) -> float:
        if not tok.text.isascii() and _LIKE_NUMBER.match(tok.text):
            raise DprmError(f"clired query {self.text!r}: {number_problem(float, tok.text)} (position {tok.pos})")
        if not _NUMBER.match(tok.text):
            raise DprmError(f"clired query {self.text!r}: {tok.text!r} is not a number (position {tok.pos})")
        # a bound beyond the floats' range: '1e400' would read as infinity, '1e-400' as 0 (a bound '> 0'
        # the file did not write)
        problem = number_problem(float, tok.text)
        if problem is not None:
            raise DprmError(f"clired query {self.text!r}: bound {problem} (position {tok.pos})")
        return float(tok.text)

    def numeric(self, first: _Token, negated: bool) -> Query:
        direction = self.take().kind  # "lt" (low to high) or "gt" (high to low)
        second = self.take("word")
        words = [first, second]
        if self.at(direction):
            self.take(direction)
            words.append(self.take("word"))
        elif self.at("lt") or self.at("gt"):
            raise self.error("an interval must use < / ≤ or > / ≥ on both sides")
        if len(words) == 3:
            attr_tok, bounds = words[1], (words[0], words[2])
        elif self.is_attribute(first.text) and _NUMBER.match(second.text):
            attr_tok, bounds = first, (None, second)
        elif self.is_attribute(second.text) and _NUMBER.match(first.text):
            attr_tok, bounds = second, (first, None)
        elif self.is_attribute(first.text) or not (self.is_attribute(second.text) or _NUMBER.match(first.text)):
            attr_tok, bounds = first, (None, second)
        else:
            attr_tok, bounds = second, (first, None)
        attr = self.attribute(attr_tok)
        if direction == "gt":  # "hi > v > lo": the first bound is the upper one
            bounds = bounds[::-1]
        low, high = (None if b is None else self.number(b) for b in bounds)
        if not negated:
            return NumericLiteral(attr, ge=low, le=high)
        parts = []
        if low is not None:
            parts.append(NumericLiteral(attr, lt=low))
        if high is not None:
            parts.append(NumericLiteral(attr, gt=high))
        return parts[0] if len(parts) == 1 else Or(*parts)


def query_name(name: str, index: int) -> str:
    """How a query names the attribute ``name``, the ``index``-th (0-based) of its side:
    the name itself where :func:`parse_clired_query` reads it back as that name, else its
    column index ``v<index>`` (the name holds a symbol of the grammar, begins or ends with
    a space, or is itself like ``v3``, which is read as an index).

    Examples
    --------
    >>> [query_name(name, i) for i, name in enumerate(["Moose", "Arctic Fox", "a<b", "v7", " x", "[c]", "2019"])]
    ['Moose', 'Arctic Fox', 'v2', 'v3', 'v4', 'v5', '2019']
    >>> from dprm.queries import to_text
    >>> to_text(parse_clired_query("[v2] & ![v3]", columns=["Moose", "Arctic Fox", "a<b", "v7"]))
    '[a<b] ∧ [v7 = false]'
    """
    readable = (bool(name) and name == name.strip(" \r") and not _INDEX.match(name)
                and not any(ch in _SPECIAL for ch in name))
    return name if readable else f"v{index}"


def parse_clired_query(
    text: str,
    *,
    columns: Sequence[str] | None = None,
    categories: Mapping[str, Mapping[str, str]] | None = None,
    domains: Mapping[str, Sequence[str]] | None = None,
) -> Query:
    """Parse one query in python-clired / Siren syntax (module docstring) into a dprm query.

    Parameters
    ----------
    text : str
        The query, e.g. ``"( -8.3<v1<8.1 | ! v0 ) & v2=red"`` or ``"[A] ∧ ¬[B = x]"``.
    columns : sequence of str, optional
        The column names of the query's side in clired's column order: ``v<i>`` is
        ``columns[i]``, and a name must be one of them. Without it, names are taken
        as written and ``v<i>`` is a name.
    categories : mapping, optional
        ``{attribute: {written category: category}}``, for categories that were
        recoded when the data was written for clired.
    domains : mapping, optional
        ``{attribute: its declared categories, in order}``: ``#<k>`` in a categorical
        test of such an attribute is its ``k``-th category (:func:`query_category`).

    Returns
    -------
    Query

    Raises
    ------
    DprmError
        One line naming the text and what is wrong in it.

    Examples
    --------
    >>> from dprm.queries import to_text
    >>> to_text(parse_clired_query("v1 | ! 2.5<v0", columns=["x", "smoker"]))
    'smoker ∨ [x < 2.5]'
    >>> to_text(parse_clired_query("[State ∈ {CA,NY}] & [3 > x > 1]"))
    '([State = CA] ∨ [State = NY]) ∧ [1 ≤ x ≤ 3]'
    >>> parse_clired_query("[A] & [B] | [C]")
    Traceback (most recent call last):
    ...
    dprm.errors.DprmError: clired query '[A] & [B] | [C]': ∧ and ∨ mixed in one group without parentheses (position 10)
    """
    if not isinstance(text, str):
        raise DprmError(f"clired query must be text, got {text!r}")
    return _Parser(text, columns, categories, domains).parse()
