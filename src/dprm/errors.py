"""The project's error types.

Every error a user can cause (bad input file, bad option, exhausted budget) is a
:class:`DprmError`. The command line turns it into one line ``error: ...`` on
stderr and exit code 2, without a traceback; library users catch it as usual.
"""

from __future__ import annotations

__all__ = ["DprmError", "DataError", "BudgetExceededError", "ParameterError"]


class DprmError(Exception):
    """An error caused by the user's input; its message is one self-contained line."""


class DataError(DprmError):
    """The input data cannot be read or violates the two-view format."""


class ParameterError(DprmError, ValueError):
    """A parameter (option of a miner or mechanism) is out of its allowed range."""


class BudgetExceededError(DprmError):
    """A release would spend more privacy budget than the accountant holds."""
