"""Budget specifications of an experiment: ``EPSxRUNS`` items such as ``1x10,0.1x10,0.01x100``.

The papers' protocol runs every private algorithm 10 times at ε = 1, 10 times at
ε = 0.1 and 100 times at ε = 0.01; :func:`parse_budgets` reads that as
``"1x10,0.1x10,0.01x100"``. Each item is a positive finite epsilon, the letter
``x`` and a positive whole number of runs. An epsilon may appear once.

:func:`epsilon_label` is the canonical text of an epsilon (directory names, the
manifest): the shortest decimal that reads back as the same float, without a
trailing ``.0``; a non-private run's label is ``"none"``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from dprm.errors import ParameterError, number_problem, short_repr
from dprm.privacy.budget import check_epsilon_range

__all__ = ["Budget", "MAX_RUNS", "parse_budgets", "format_budgets", "epsilon_label", "NO_EPSILON"]

#: The epsilon label of a non-private algorithm's runs (it ignores the budget).
NO_EPSILON = "none"

_ITEM = re.compile(r"^\s*([^xX\s]+)\s*[xX]\s*([0-9]+)\s*$")


@dataclass(frozen=True, order=True)
class Budget:
    """One budget of an experiment: ``runs`` runs of every private algorithm at ``epsilon``.

    Examples
    --------
    >>> Budget(0.1, 10).label
    '0.1'
    >>> str(Budget(1.0, 10))
    '1x10'
    """

    epsilon: float
    runs: int

    @property
    def label(self) -> str:
        """The canonical text of the epsilon (see :func:`epsilon_label`)."""
        return epsilon_label(self.epsilon)

    def __str__(self) -> str:
        return f"{self.label}x{self.runs}"


def epsilon_label(epsilon: float | None) -> str:
    """The canonical text of an epsilon: shortest round-trip decimal, no trailing ``.0``.

    ``None`` (a non-private run) gives :data:`NO_EPSILON`.

    Examples
    --------
    >>> epsilon_label(1.0), epsilon_label(0.1), epsilon_label(0.01), epsilon_label(2.5)
    ('1', '0.1', '0.01', '2.5')
    >>> epsilon_label(1e-05), epsilon_label(None)
    ('1e-05', 'none')
    """
    if epsilon is None or (isinstance(epsilon, float) and math.isnan(epsilon)):
        return NO_EPSILON
    text = repr(float(epsilon))
    return text[:-2] if text.endswith(".0") else text


#: Most runs of one budget (each run is a record on disk; an experiment of more is a typo).
MAX_RUNS = 100_000


def parse_budgets(spec: str, option: str = "--budgets") -> list[Budget]:
    """Read a budget specification ``EPSxRUNS[,EPSxRUNS...]``.

    Parameters
    ----------
    spec : str
        Comma-separated items ``EPSxRUNS``: a positive finite epsilon and a positive
        number of runs, e.g. ``"1x10,0.1x10,0.01x100"``, in ASCII digits without ``_``
        (:func:`dprm.errors.number_problem`, the options' rule). Spaces around items
        are allowed; an empty item (``"1x10,"``) is not.
    option : str
        The option named in error messages.

    Returns
    -------
    list of Budget
        In the order given.

    Raises
    ------
    ParameterError
        In one line naming the option and the bad item.

    Examples
    --------
    >>> parse_budgets("1x10,0.1x10,0.01x100")
    [Budget(epsilon=1.0, runs=10), Budget(epsilon=0.1, runs=10), Budget(epsilon=0.01, runs=100)]
    >>> parse_budgets(" 2X3 ")
    [Budget(epsilon=2.0, runs=3)]
    >>> for bad in ("1x", "x10", "0x10", "-1x5", "1x0", "1x10,", "abc", "1x10,1x5", "nanx3", "1_0x2", "０.５x2"):
    ...     try:
    ...         parse_budgets(bad)
    ...     except ParameterError as error:
    ...         print(error)
    --budgets: '1x' is not EPSxRUNS (e.g. 1x10)
    --budgets: 'x10' is not EPSxRUNS (e.g. 1x10)
    --budgets: epsilon must be a positive finite number, not '0' in '0x10'
    --budgets: epsilon must be a positive finite number, not '-1' in '-1x5'
    --budgets: the number of runs must be between 1 and 100,000, not '0' in '1x0'
    --budgets: empty item in '1x10,' (a comma too many?)
    --budgets: 'abc' is not EPSxRUNS (e.g. 1x10)
    --budgets: epsilon 1 appears twice
    --budgets: epsilon must be a positive finite number, not 'nan' in 'nanx3'
    --budgets: in '1_0x2': '1_0' is not a number: write it without '_' separators
    --budgets: in '０.５x2': '０.５' is not a number: write it in ASCII digits (0-9)
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ParameterError(f"{option}: give at least one budget EPSxRUNS (e.g. 1x10)")
    budgets: list[Budget] = []
    seen: set[float] = set()
    for item in spec.split(","):
        if not item.strip():
            raise ParameterError(f"{option}: empty item in {short_repr(spec.strip())} (a comma too many?)")
        shown = short_repr(item.strip())  # an item of thousands of characters is cut
        match = _ITEM.match(item)
        if match is None:
            raise ParameterError(f"{option}: {shown} is not EPSxRUNS (e.g. 1x10)")
        eps_text, runs_text = match.groups()
        problem = number_problem(float, eps_text) or number_problem(int, runs_text)
        if problem:  # 1_0 (read as 10), full-width digits, thousands of digits: the options' rule
            raise ParameterError(f"{option}: in {shown}: {problem}")
        try:
            epsilon = float(eps_text)
        except ValueError:
            raise ParameterError(f"{option}: {shown} is not EPSxRUNS (e.g. 1x10)") from None
        if not (math.isfinite(epsilon) and epsilon > 0):
            raise ParameterError(
                f"{option}: epsilon must be a positive finite number, not {short_repr(eps_text)} in {shown}")
        check_epsilon_range(epsilon, f"{option}: epsilon in {shown}")
        runs = int(runs_text)
        if not 1 <= runs <= MAX_RUNS:
            raise ParameterError(f"{option}: the number of runs must be between 1 and {MAX_RUNS:,}, "
                                 f"not {short_repr(runs_text)} in {shown}")
        if epsilon in seen:
            raise ParameterError(f"{option}: epsilon {epsilon_label(epsilon)} appears twice")
        seen.add(epsilon)
        budgets.append(Budget(epsilon, runs))
    return budgets


def format_budgets(budgets: list[Budget]) -> str:
    """The specification text of ``budgets`` (inverse of :func:`parse_budgets`).

    Examples
    --------
    >>> format_budgets(parse_budgets("1x10, 0.10x10"))
    '1x10,0.1x10'
    """
    return ",".join(str(b) for b in budgets)
