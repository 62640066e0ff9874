"""The itemset estimators' parameters: defaults, limits and one declarative table of checks.

Every parameter of :class:`~dprm.itemsets.estimator.DensityEstimator` and of
:func:`~dprm.itemsets.private.fit_private_estimator` is checked by one :class:`Setting`
of a table (``name → Setting``), in the style of the miners' ``Param`` tables
(:class:`dprm.mining.base.Param`, which this layer may not import): the allowed values
in words and a test; a bad value is a one-line
:class:`~dprm.errors.ParameterError` ``NAME must be ALLOWED, not VALUE``.

Examples
--------
>>> table = {"depth": Setting("depth", "an integer in [1, 10]", whole_number(1, 10))}
>>> check_settings(table, {"depth": 3})
>>> check_settings(table, {"depth": 11})
Traceback (most recent call last):
...
dprm.errors.ParameterError: depth must be an integer in [1, 10], not 11
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dprm.errors import ParameterError, short_repr

__all__ = ["MAX_NODES", "MAX_CHAINS", "MAX_SAMPLES", "N_CHAINS", "N_SAMPLES", "ROWS_TO_LEARN", "MAX_PASSES", "WIDTH_TO_LEARN", "TIE_THRESHOLD", "SPLIT_SIGNIFICANCE", "LEARNERS", "BATCH_WORK", "Setting",
           "check_settings", "store_parameters", "whole_number", "finite_number", "check_random_state",
           "parse_passes", "passes_for", "ESTIMATOR_SETTINGS"]

#: The default size budget of every tree, in nodes (see ``DensityEstimator(max_nodes=)``).
MAX_NODES = 200
#: The most chains of an estimate (``n_chains``, or orders given): the command line's ``--chains`` limit
#: (:data:`dprm.cli.itemsets.MAX_CHAINS`) and the private estimate's. Every chain is learned, sampled and
#: queried in turn, so time and memory grow with them (a million chains never finished a fit).
MAX_CHAINS = 100
#: The most rows of each chain's reference sample (``n_samples``): ten times the default 100,000
#: (standard error at most ``0.5 / sqrt(n)``: 0.0005 against 0.0016). A sample is drawn in memory as
#: ``n_samples x columns`` codes of 8 bytes per chain (800 MB at this limit for 100 columns; a
#: trillion rows asked numpy for tebibytes); the command line asks for at most the default.
MAX_SAMPLES = 1_000_000
#: Rows the trees see at least when :meth:`DensityEstimator.fit` learns a finite table
#: (``passes="auto"``; see :func:`passes_for`).
ROWS_TO_LEARN = 200_000
#: The most passes ``passes="auto"`` makes over a table.
MAX_PASSES = 1000
#: The widest table that learns :data:`ROWS_TO_LEARN` rows. A row costs every chain one
#: update per pair of columns (tree ``j`` tests the ``j`` columns before it), so a wider
#: table learns fewer rows: as many column pairs times rows as a table this wide (a
#: table of 500 columns would otherwise take minutes per chain).
WIDTH_TO_LEARN = 50
#: The trees' default tie threshold (river's and MOA's is 0.05; see the estimator's notes).
TIE_THRESHOLD = 0.1
#: The batch trees' default split test level (:func:`dprm.itemsets.batch_tree.grow_batch_tree`; the
#: estimator's notes give the measurements behind it).
SPLIT_SIGNIFICANCE = 0.9
#: The most ``rows x columns x (columns - 1)`` of a table that ``learner="auto"`` grows in batch:
#: the batch trees read the table once per level, each row once per earlier column of
#: every tree, so their work grows with the column pairs, while the Hoeffding learner's is
#: capped by the passes rule (:data:`WIDTH_TO_LEARN`). Measured (three chains, CPU s, batch
#: against Hoeffding): 10,000 x 20 0.2 against 0.8; 20,000 x 100 10 against 4; 100,000 x 50 16
#: against 4; 2,000 x 500 22 against 3: the two cost the same near 5e7.
BATCH_WORK = 50_000_000
#: How :meth:`DensityEstimator.fit` learns a finite table.
LEARNERS = ("auto", "batch", "hoeffding")
#: How leaves predict (the density needs class probabilities: class counts).
LEAF_PREDICTIONS = ("mc",)


@dataclass(frozen=True)
class Setting:
    """One parameter's check: its allowed values in words and a test of a value.

    Parameters
    ----------
    name : str
        The keyword (said in the error).
    allowed : str
        The allowed values in words: ``"a number in (0, 1)"``.
    test : callable
        True for an allowed value.
    """

    name: str
    allowed: str
    test: Callable[[Any], bool]

    def check(self, value: Any) -> None:
        """A one-line :class:`~dprm.errors.ParameterError` unless ``test(value)``."""
        if not self.test(value):
            raise ParameterError(f"{self.name} must be {self.allowed}, not {short_repr(value)}")


def check_settings(table: Mapping[str, Setting], values: Mapping[str, Any], skip: Collection[str] = ()) -> None:
    """Check ``values[name]`` by each setting of ``table`` in order (names in ``skip`` left out)."""
    for name, setting in table.items():
        if name not in skip:
            setting.check(values[name])


def store_parameters(obj: object, values: Mapping[str, Any]) -> None:
    """Store the ``__init__`` arguments of ``obj`` as attributes (call as ``store_parameters(self, locals())``)."""
    for name in inspect.signature(type(obj).__init__).parameters:
        if name != "self":
            setattr(obj, name, values[name])


def whole_number(low: int, high: float = math.inf) -> Callable[[Any], bool]:
    """The test of an integer (not a bool) in ``[low, high]``, numpy integers included."""
    return lambda v: (isinstance(v, int | np.integer) and not isinstance(v, bool)) and low <= v <= high


def finite_number(test: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """The test of a finite real number (not a bool) that passes ``test``.

    An integer beyond the floats' range (``10**400``) is not finite.

    Examples
    --------
    >>> positive = finite_number(lambda v: v > 0)
    >>> positive(2), positive(np.float64(0.5)), positive(True), positive(float("nan")), positive(10**400), positive("1")
    (True, True, False, False, False, False)
    """
    def passes(value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        try:
            finite = math.isfinite(value)
        except OverflowError:  # an integer beyond the floats' range
            return False
        return finite and bool(test(value))
    return passes


def _random_state(value: Any) -> bool:
    if value is None or isinstance(value, (np.random.Generator, np.random.RandomState)):
        return True
    return not isinstance(value, bool) and isinstance(value, numbers.Integral) and value >= 0


#: The checks of the estimates' sizes, shared by :data:`ESTIMATOR_SETTINGS` and the private estimate's table.
N_CHAINS = Setting("n_chains", f"an integer in [1, {MAX_CHAINS}]", whole_number(1, MAX_CHAINS))
N_SAMPLES = Setting("n_samples", f"an integer in [1, {MAX_SAMPLES}]", whole_number(1, MAX_SAMPLES))

RANDOM_STATE = Setting("random_state", "None, an integer >= 0, a numpy.random.Generator or a numpy.random.RandomState",
                       _random_state)


def check_random_state(value: object) -> None:
    """A :class:`ParameterError` unless ``value`` is None, an integer >= 0, a numpy Generator or RandomState.

    (A RandomState gives one seed drawn from it, :func:`dprm.params.as_seed`.)

    Examples
    --------
    >>> check_random_state(7)
    >>> check_random_state(-1)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: random_state must be None, an integer >= 0, a numpy.random.Generator or a numpy.random.RandomState, not -1
    """
    RANDOM_STATE.check(value)


#: The checks of :class:`~dprm.itemsets.estimator.DensityEstimator`'s parameters, in the
#: order they are made (``n_chains`` is skipped when ``orders`` is given; ``max_depth``
#: and ``max_nodes`` are checked by the trees' learner).
ESTIMATOR_SETTINGS: dict[str, Setting] = {setting.name: setting for setting in (
    Setting("leaf_prediction", f"one of {', '.join(LEAF_PREDICTIONS)}", lambda v: v in LEAF_PREDICTIONS),
    # integer settings refuse a bool (True is 1 to Python: n_chains=True was one chain)
    N_CHAINS,
    Setting("batch_size", "a positive integer", whole_number(1)),
    Setting("max_depth", "None or an integer >= 0", lambda v: v is None or whole_number(0)(v)),
    Setting("passes", f"'auto' or an integer in [1, {MAX_PASSES}]",
            lambda v: v == "auto" or whole_number(1, MAX_PASSES)(v)),
    Setting("learner", f"one of {', '.join(LEARNERS)}", lambda v: v in LEARNERS),
    Setting("split_significance", "a number in (0, 1)", finite_number(lambda v: 0 < v < 1)),
    N_SAMPLES,
    Setting("grace_period", "a whole number >= 1", finite_number(lambda v: v >= 1 and v == int(v))),
    Setting("split_confidence", "a number in (0, 1)", finite_number(lambda v: 0 < v < 1)),
    Setting("tie_threshold", "a number >= 0", finite_number(lambda v: v >= 0)),
    RANDOM_STATE,
)}


def parse_passes(text: str, option: str = "passes") -> int | str:
    """``"auto"`` or a whole number of passes in [1, :data:`MAX_PASSES`], from text (a command-line option).

    Examples
    --------
    >>> parse_passes("auto"), parse_passes(" 20 ")
    ('auto', 20)
    """
    text = str(text).strip().lower()
    if text == "auto":
        return "auto"
    try:
        passes = int(text)
    except ValueError:
        passes = 0
    if not 1 <= passes <= MAX_PASSES:
        raise ParameterError(f"{option} must be auto or a whole number between 1 and {MAX_PASSES}, not {text!r}")
    return passes


def passes_for(n_rows: int, rows_to_learn: int = ROWS_TO_LEARN, max_passes: int = MAX_PASSES,
               n_columns: int | None = None) -> int:
    """The passes ``passes="auto"`` makes over a finite table of ``n_rows`` rows.

    ``ceil(rows_to_learn / n_rows)``, at least 1 and at most ``max_passes``: the trees
    see at least ``rows_to_learn`` rows (unless the table is tiny), and a table of
    ``rows_to_learn`` rows or more is learned once, in its own order, like a stream.
    A table of ``n_columns`` > :data:`WIDTH_TO_LEARN` columns learns
    ``rows_to_learn · 50 · 49 / (n_columns · (n_columns - 1))`` rows instead (the same
    work as a table of 50 columns).

    Examples
    --------
    >>> passes_for(8124), passes_for(435), passes_for(200_000), passes_for(5_000_000), passes_for(3)
    (25, 460, 1, 1, 1000)
    >>> passes_for(435, n_columns=17), passes_for(435, n_columns=100), passes_for(50, n_columns=500)
    (460, 114, 40)
    """
    if n_rows < 1:
        raise ParameterError("a table needs at least one row")
    if n_columns is not None and n_columns > WIDTH_TO_LEARN:
        pairs = WIDTH_TO_LEARN * (WIDTH_TO_LEARN - 1)
        rows_to_learn = max(1, rows_to_learn * pairs // (n_columns * (n_columns - 1)))
    return int(min(max_passes, max(1, -(-rows_to_learn // n_rows))))
