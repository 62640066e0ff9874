"""The project's error types.

Every error a user can cause (bad input file, bad option, exhausted budget) is a
:class:`DprmError`. The command line turns it into one line ``error: ...`` on
stderr and exit code 2, without a traceback; library users catch it as usual.

Structured form
---------------
Besides its one-line message (``str(error)``, unchanged), an error carries
keyword-only details for programs — the server above all, which must never pass a
message that depends on the rows to an analyst:

``code``
    A stable machine code (``"value_out_of_bounds"``, ``"file_not_found"``, ...;
    :data:`ERROR_CODES` lists them with a public description). Each class has a
    default: ``"dprm_error"``, ``"data_error"``, ``"parameter_error"``,
    ``"budget_exceeded"``.
``file``, ``column``, ``row``
    Where the problem is, when known (``None`` otherwise). ``row`` counts data rows
    from 1, as in the messages.
``data_dependent``
    True when the message may reveal something about the rows (a value, a row
    number, a count, that a row exists at all). The default is True for
    :class:`DprmError` and :class:`DataError` (unknown is treated as dependent) and
    False for :class:`ParameterError` and :class:`BudgetExceededError`, whose
    messages are about options and budgets.

:meth:`DprmError.public_message` gives a message that is safe to show anyone: the
full message when it does not depend on the data, else one naming only the file,
the column and the code's public description.

Examples
--------
>>> err = DataError("left.csv: column 'age', row 17: value 130 is outside the declared bounds [0, 120]",
...                 code="value_out_of_bounds", file="left.csv", column="age", row=17)
>>> str(err)
"left.csv: column 'age', row 17: value 130 is outside the declared bounds [0, 120]"
>>> err.code, err.row, err.data_dependent
('value_out_of_bounds', 17, True)
>>> err.public_message()
"left.csv: column 'age': a value is outside the declared bounds (value_out_of_bounds)"
>>> DataError("plain message").code, ParameterError("epsilon must be positive").public_message()
('data_error', 'epsilon must be positive')
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

__all__ = ["DprmError", "DataError", "BudgetExceededError", "EngineError", "ParameterError", "UnaffordableEpsilonError",
           "ERROR_CODES",
           "MAX_INTEGER_DIGITS", "not_utf8", "number_problem", "printable_text", "short_repr", "short_text"]

#: The stable error codes and a public description of each (no data in it).
ERROR_CODES: dict[str, str] = {
    # defaults of the classes
    "dprm_error": "the input is not valid",
    "data_error": "the data cannot be read or does not fit the two-view format",
    "parameter_error": "a parameter is out of its allowed range",
    "budget_exceeded": "the release would exceed the privacy budget",
    # files and their form
    "file_not_found": "no such file",
    "not_a_file": "is a directory, a named pipe or a device, not a regular file",
    "file_too_large": "the file is larger than dprm reads",
    "unknown_file_type": "unknown file type",
    "unsupported_file_type": "this command does not read this type of file",
    "unreadable_file": "the file cannot be read",
    "bad_source": "expected a file path or a pandas DataFrame",
    "empty_file": "the file is empty",
    "no_rows": "the file has no data rows",
    "no_columns": "the file has no columns",
    "not_utf8": "the file is not UTF-8 text",
    "nul_character": "a text value holds a NUL character",
    "bad_csv": "the file cannot be parsed as CSV",
    "bad_parquet": "the file cannot be read as Parquet",
    "file_changed": "the file changed while it was read",
    "unnamed_column": "a column has no name",
    "control_character": "a column name holds a control character (a terminal would act on it)",
    "invisible_character": "a column name starts or ends with an invisible character, or holds a text-direction "
                           "control",
    "duplicate_column": "a column name occurs more than once",
    "shared_column": "a column name occurs in both views",
    "unsupported_column": "a column holds values of an unsupported type",
    # rows and ids
    "row_count_mismatch": "the views have different numbers of rows",
    "missing_id_column": "the id column is absent",
    "id_column_conflict": "two different id columns are given, or the id column is declared with another type",
    "missing_id": "a row has no id",
    "duplicate_id": "an id occurs more than once",
    "unmatched_id": "an id occurs in one view only",
    "id_names_differ": "the views' first columns look like one id column with two names",
    # values
    "not_a_number": "a value is not a number",
    "not_finite": "a value is not a finite number",
    "inexact_number": "two different whole numbers of a column read as the same floating-point number",
    "number_underflow": "a number that is not 0 is too close to 0 for a floating-point number (it would read as 0)",
    "not_boolean": "a value is not Boolean",
    "value_out_of_bounds": "a value is outside the declared bounds",
    "unknown_category": "a value is not one of the declared categories",
    "missing_in_complete": "a column declared complete has a missing value",
    # the types file
    "bad_types_file": "the types file is malformed",
    "unknown_column": "the types file declares a column that is not in the data",
    "engine_error": "the counting engine failed (a shard was lost or could not start)",
}


class DprmError(Exception):
    """An error caused by the user's input; its message is one self-contained line.

    Parameters
    ----------
    *args
        The message (as for any exception).
    code : str, optional
        A stable machine code (see :data:`ERROR_CODES`); default: the class's.
    file, column : str, optional
        The file (as the user named it) and the column the problem is in.
    row : int, optional
        The 1-based data row.
    data_dependent : bool, optional
        Whether the message may reveal anything about the rows; default: the
        class's (True here and for :class:`DataError`).
    """

    default_code: str = "dprm_error"
    default_data_dependent: bool = True

    def __init__(
        self,
        *args: Any,
        code: str | None = None,
        file: str | None = None,
        column: str | None = None,
        row: int | None = None,
        data_dependent: bool | None = None,
    ) -> None:
        super().__init__(*args)
        self.code: str = code if code is not None else self.default_code
        self.file: str | None = file
        self.column: str | None = column
        self.row: int | None = row
        self.data_dependent: bool = (
            self.default_data_dependent if data_dependent is None else bool(data_dependent)
        )

    def public_message(self) -> str:
        """A one-line message that reveals nothing about the rows.

        The full message when :attr:`data_dependent` is false; otherwise the file,
        the column and the code's public description (never a value, a row or a
        count).

        Examples
        --------
        >>> DataError("x.csv: row 3 has 5 fields but the header has 4", code="bad_csv",
        ...           file="x.csv").public_message()
        'x.csv: the file cannot be parsed as CSV (bad_csv)'
        """
        if not self.data_dependent:
            return str(self)
        where = [self.file] if self.file else []
        if self.column is not None:
            where.append(f"column {self.column!r}")
        description = ERROR_CODES.get(self.code, ERROR_CODES[self.default_code])
        prefix = ": ".join(where)
        return f"{prefix + ': ' if prefix else ''}{description} ({self.code})"


class DataError(DprmError):
    """The input data cannot be read or violates the two-view format."""

    default_code = "data_error"


class ParameterError(DprmError, ValueError):
    """A parameter (option of a miner or mechanism) is out of its allowed range."""

    default_code = "parameter_error"
    default_data_dependent = False


class EngineError(DprmError):
    """The counting engine failed: a shard was lost or the engine could not start."""

    default_code = "engine_error"
    default_data_dependent = False


class BudgetExceededError(DprmError):
    """A release would spend more privacy budget than the accountant holds."""

    default_code = "budget_exceeded"
    default_data_dependent = False


class UnaffordableEpsilonError(BudgetExceededError, ParameterError):
    """An estimator's ``epsilon`` exceeds its accountant's remaining budget: refused before any release.

    Both a :class:`BudgetExceededError` (what a caller of any dprm fit catches for an
    exhausted budget, as the miners raise it) and a :class:`ParameterError`, hence a
    ``ValueError`` (what scikit-learn style estimators raise for a parameter they
    cannot use, and what the classifiers and the itemset estimate have always raised
    here). Its code is ``"budget_exceeded"``.

    Examples
    --------
    >>> error = UnaffordableEpsilonError("the accountant's remaining budget 0 does not cover epsilon 1")
    >>> isinstance(error, BudgetExceededError), isinstance(error, ParameterError), isinstance(error, ValueError)
    (True, True, True)
    >>> error.code, error.data_dependent
    ('budget_exceeded', False)
    """


def short_text(text: str, limit: int = 40) -> str:
    """``text`` for an error message, cut to ``limit`` characters (``...`` at the end): an id or a number
    of 400 digits, say.

    Examples
    --------
    >>> short_text("12345"), short_text("9" * 50, 10)
    ('12345', '9999999...')
    """
    return text if len(text) <= limit else text[:limit - 3] + "..."


def printable_text(value: str | os.PathLike[str] | bytes) -> str:
    """``value`` (a text, a path) as text that can be written as UTF-8: its bytes that are not UTF-8 as ``\\xNN``.

    A file name that is not UTF-8 (``bad\\xff.csv``) reaches Python as a text holding
    surrogate escapes (``'bad\\udcff.csv'``), which no UTF-8 file, page or JSON document
    can hold: writing it failed with ``UnicodeEncodeError: surrogates not allowed``.
    Every path or option value that is embedded in a message, a report or a JSON
    document goes through this: the escapes become ``\\xNN`` (the bytes as written), any
    other lone surrogate ``\\udNNN``; a text that is UTF-8 is returned unchanged.

    Examples
    --------
    >>> printable_text(os.fsdecode(b"bad\\xff\\xfe.csv")), printable_text("caf\\u00e9.csv")
    ('bad\\\\xff\\\\xfe.csv', 'café.csv')
    >>> printable_text(b"r\\xff"), printable_text("\\ud800")
    ('r\\\\xff', '\\\\ud800')
    """
    text = os.fsdecode(value)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    return "".join(
        f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF
        else f"\\u{ord(c):04x}" if 0xD800 <= ord(c) <= 0xDFFF else c
        for c in text
    )


def not_utf8(value: str) -> bool:
    """Whether the text ``value`` holds a surrogate (a byte that is not UTF-8, as Python reads such bytes).

    Examples
    --------
    >>> not_utf8(os.fsdecode(b"\\xff")), not_utf8("NA")
    (True, False)
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def short_repr(value: Any, limit: int = 40) -> str:
    """``repr(value)`` for an error message, cut to ``limit`` characters (:func:`short_text`).

    Examples
    --------
    >>> short_repr(1.5), short_repr("x" * 50)
    ('1.5', "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...")
    """
    return short_text(repr(value), limit)


#: The most digits (leading zeros aside) an integer text is read with: 2^63 has 19 and no option takes
#: more; up to 50, the option's own range check answers (naming its range) in a line of reasonable length.
MAX_INTEGER_DIGITS = 50

_DIGITS = re.compile(r"\s*[+-]?0*([0-9]+)\s*")
#: A decimal number's text (digits, point, exponent): the texts whose float may overflow or underflow.
_DECIMAL_TEXT = re.compile(r"\s*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*")


def number_problem(kind: Any, value: Any) -> str | None:
    """Why the text ``value`` is refused as a number of type ``kind`` (int or float); else None.

    The number syntax shared by the command line's options (:mod:`dprm.cli.coercion`)
    and the web pages' forms (:mod:`dprm.server.web.forms`), the texts that Python's
    ``int()`` and ``float()`` read but a user would not mean: ``_`` separators
    (``1_0`` read as 10, ten times the budget of a typo), digits of another script
    (full-width ``５``, Arabic-Indic ``٣``), and integers of more than
    :data:`MAX_INTEGER_DIGITS` digits (Python refuses more than 4300, and a message
    would echo them all). For ``float``, also a decimal text beyond the floats'
    range: ``1e400`` would read as infinity (and a message would say ``inf``), ``1e-400``
    as 0. Only texts are judged (a default is already a number), and only for ``int``
    and ``float``.

    Examples
    --------
    >>> number_problem(int, "５"), number_problem(int, "7"), number_problem(str, "1_0")
    ("'５' is not a number: write it in ASCII digits (0-9)", None, None)
    >>> number_problem(float, "1_0")
    "'1_0' is not a number: write it without '_' separators"
    >>> number_problem(int, "9" * 400)
    "'999999999999999999999999999999999999... has 400 digits; an integer option takes at most 50"
    >>> number_problem(float, "1e400"), number_problem(float, "-1e-400"), number_problem(float, "0e400")
    ("'1e400' is beyond the largest number (about 1.8e308)", "'-1e-400' is too close to 0 (it would read as 0)", None)
    """
    if kind not in (int, float) or type(value) is not str:
        return None
    if "_" in value:
        return f"{short_repr(value)} is not a number: write it without '_' separators"
    if not value.isascii():
        return f"{short_repr(value)} is not a number: write it in ASCII digits (0-9)"
    digits = _DIGITS.fullmatch(value)
    if kind is int and digits is not None and len(digits.group(1)) > MAX_INTEGER_DIGITS:
        return (f"{short_repr(value)} has {len(digits.group(1))} digits; an integer option takes at most "
                f"{MAX_INTEGER_DIGITS}")
    if kind is float and _DECIMAL_TEXT.fullmatch(value):
        number = float(value)
        if not math.isfinite(number):
            return f"{short_repr(value)} is beyond the largest number (about 1.8e308)"
        if number == 0 and any(c in "123456789" for c in value.split("e")[0].split("E")[0]):
            return f"{short_repr(value)} is too close to 0 (it would read as 0)"
    return None
