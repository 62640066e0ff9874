"""Parameter tables: each parameter's meaning, type, allowed values and why they are limited.

Every miner (:mod:`dprm.mining.base`) and estimator (:mod:`dprm.classifier`) declares its
``__init__`` parameters once, as :class:`Param` objects in a table (name → spec): the
class validates every value from that table before any data is read or any budget is
spent, and the command line and the server read help texts and bounds from it.

:class:`Param` words its refusals for the command line (``init-trials must be at most
1,000 (...), not 5000``); :class:`KeywordParam` for a scikit-learn estimator's keyword
(``max_depth must be in [1, 30], got 0``).

This module sits below every layer that declares parameters (it imports only
:mod:`dprm.errors` and :mod:`dprm.privacy.budget`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dprm.errors import ParameterError, short_repr, short_text
from dprm.privacy.budget import as_epsilon, as_fraction, check_budget_share, check_epsilon_range

__all__ = ["BUDGET_SHARE_UNIT", "Param", "KeywordParam", "as_generator", "as_seed", "check_random_state",
           "parameter_table", "read_none_texts", "RANDOM_STATE_KINDS", "MAX_SEED"]

_KINDS = ("int", "float", "epsilon", "bool", "choice", "text", "object")
#: The unit of a parameter that gives a share of the privacy budget to some release: a
#: positive value is at least :data:`~dprm.privacy.budget.SMALLEST_BUDGET_SHARE`.
BUDGET_SHARE_UNIT = "share of ε"


def _number(value: float) -> str:
    """A limit as written in messages and help: ``10,000`` or ``0.0001``."""
    if isinstance(value, Fraction):
        value = int(value) if value.denominator == 1 else float(value)
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) >= 1):
        return f"{int(value):,}"
    return f"{value:g}"


@dataclass(frozen=True)
class Param:
    """One parameter of a miner or estimator: meaning, type, allowed values and why they are limited.

    Parameters
    ----------
    name : str
        The keyword of ``__init__`` (the option is ``--name-with-hyphens``).
    help : str
        What it means, in words: the papers' names explained, the unit stated.
    kind : {"int", "float", "epsilon", "bool", "choice", "text", "object"}
        ``"int"``: an integer (not a bool, not a float such as ``2.0``);
        ``"float"``: a finite real number (ints too); ``"epsilon"``: a finite
        number, also as exact text (``"1/3"``) or :class:`~fractions.Fraction`;
        ``"bool"``: ``True`` or ``False``; ``"choice"``: one of ``choices``;
        ``"text"``: a string checked by ``check``; ``"object"``: any value ``check``
        accepts (an accountant, a mapping of declared domains; no ``check``: any value).
    unit : str
        The unit of a number (``"rows"``, ``"share of rows"``, ``"steps"``, ...).
    low, high : float, optional
        Allowed range; ``low_open`` / ``high_open`` exclude the end.
    why, why_low : str
        Why ``high`` (``low``) is the limit (memory, time, meaning): said in the error.
    allowed : str
        The allowed values in words, where :meth:`bounds_text` cannot say them
        (a ``"text"`` parameter).
    choices : tuple of str
        The allowed values of a ``"choice"``.
    none : bool
        ``None`` is allowed (its meaning is in ``help``).
    auto : bool
        The text ``"auto"`` is allowed (its meaning is in ``help``).
    check : callable, optional
        Further validation of a value that passed the rest; raises
        :class:`~dprm.errors.ParameterError`.

    Examples
    --------
    >>> depth = Param("depth", "Tree depth.", "int", low=1, high=7, why="a tree pair has 4^depth cells")
    >>> depth.validate(3)
    >>> depth.validate(30)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: depth must be at most 7 (a tree pair has 4^depth cells), not 30
    >>> depth.validate(True)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: depth must be an integer, not True
    >>> depth.bounds_text()
    '1 to 7'
    """

    name: str
    help: str
    kind: str
    unit: str = ""
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    why: str = ""
    why_low: str = ""
    allowed: str = ""
    choices: tuple[str, ...] = ()
    none: bool = False
    auto: bool = False
    check: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"unknown parameter kind {self.kind!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"choice parameter {self.name} needs choices")

    @property
    def option(self) -> str:
        """The name in messages and on the command line, without dashes: ``init-trials``."""
        return self.name.replace("_", "-")

    # -- validation -----------------------------------------------------------------

    def validate(self, value: Any) -> None:
        """Raise a one-line :class:`~dprm.errors.ParameterError` unless ``value`` is allowed."""
        if value is None and self.none:
            return
        if self.auto and isinstance(value, str) and value == "auto":
            return
        number = self._typed(value)
        if number is not None:
            self._in_range(number, value)
        if self.check is not None:
            self.check(value)

    def _typed(self, value: Any) -> float | Fraction | int | None:
        """The value as a number to range-check (None for non-numbers), or an error."""
        extra = " or auto" if self.auto else ""
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise ParameterError(f"{self.option} must be an integer{extra}, not {short_repr(value)}")
            return int(value)
        if self.kind == "float":
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ParameterError(f"{self.option} must be a number{extra}, not {short_repr(value)}")
            try:
                finite = math.isfinite(float(value))
            except OverflowError:  # an integer beyond the float range
                finite = False
            if not finite:
                raise ParameterError(f"{self.option} must be a finite number, not {short_repr(value)}")
            return value if isinstance(value, numbers.Rational) else float(value)
        if self.kind == "epsilon":
            return as_fraction(value, self.option)  # finite numbers, exact text or fractions
        if self.kind == "bool":
            if not isinstance(value, bool) and type(value).__name__ != "bool_":
                raise ParameterError(f"{self.option} must be true or false, not {short_repr(value)}")
            return None
        if self.kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise ParameterError(f"{self.option} must be one of {', '.join(self.choices)}, not {short_repr(value)}")
            return None
        if self.kind == "object":
            return None
        if not isinstance(value, (str, list, tuple)):
            raise ParameterError(f"{self.option} must be text, not {short_repr(value)}")
        return None

    def _in_range(self, number: Any, value: Any) -> None:
        if self.unit == BUDGET_SHARE_UNIT:
            check_budget_share(number, self.option, may_be_zero=not (self.low == 0 and self.low_open))
        low, high = self.low, self.high
        shown = short_text(str(value) if isinstance(value, (Fraction, str)) else repr(value))  # 400 digits, say
        too_low = low is not None and (number <= low if self.low_open else number < low)
        too_high = high is not None and (number >= high if self.high_open else number > high)
        if not (too_low or too_high):
            return
        why = self.why if too_high else self.why_low
        reason = f" ({why})" if why else ""
        if self.kind != "int" and low is not None and high is not None:
            raise ParameterError(f"{self.option} must be in {self._interval()}{reason}, not {shown}")
        if too_low:
            if self.low_open:
                words = "positive" if low == 0 else f"greater than {_number(low)}"
            else:
                words = f"at least {_number(low)}"
        else:
            words = f"below {_number(high)}" if self.high_open else f"at most {_number(high)}"
        raise ParameterError(f"{self.option} must be {words}{reason}, not {shown}")

    def _interval(self) -> str:
        return (f"{'(' if self.low_open else '['}{_number(self.low)}, "
                f"{_number(self.high)}{')' if self.high_open else ']'}")

    # -- description ----------------------------------------------------------------

    def bounds_text(self) -> str:
        """The allowed values in words: ``1 to 7``, ``(0, 1)``, ``cells | paper``, ``≥ 0 or none``."""
        if self.allowed:
            return self.allowed
        if self.kind == "choice":
            text = " | ".join(self.choices)
        elif self.kind == "bool":
            text = "true | false"
        elif self.kind == "object":
            text = "any value"
        elif self.kind == "text" or (self.low is None and self.high is None):
            text = "text" if self.kind == "text" else "any number"
        elif self.low is not None and self.high is not None:
            if self.low_open or self.high_open:
                text = self._interval()
            else:
                text = f"{_number(self.low)} to {_number(self.high)}"
        elif self.low is not None:
            text = f"{'>' if self.low_open else '≥'} {_number(self.low)}"
        else:
            text = f"{'<' if self.high_open else '≤'} {_number(self.high)}"
        if self.auto:
            text += " or auto"
        if self.none:
            text += " or none"
        return text


@dataclass(frozen=True)
class KeywordParam(Param):
    """A parameter of a scikit-learn estimator, refused in the estimator's words.

    The same fields and checks as :class:`Param`; the message names the keyword
    (``max_depth``, not ``max-depth``) and says what was given after ``got``, with a
    range as ``[low, high]``, as scikit-learn's own checks do. ``allowed`` (if given)
    is the one wording of every refusal of a number: ``min_samples_split must be 'auto'
    or a number >= 0, got -1``. An ``"epsilon"`` is read by
    :func:`~dprm.privacy.budget.as_epsilon` and must lie in the range of
    :func:`~dprm.privacy.budget.check_epsilon_range`.

    Examples
    --------
    >>> depth = KeywordParam("max_depth", "Levels of splits.", "int", low=1, high=30)
    >>> depth.validate(31)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: max_depth must be in [1, 30], got 31
    >>> KeywordParam("search", "How.", "choice", choices=("auto", "mcmc")).validate("x")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: search must be one of auto, mcmc, got 'x'
    >>> KeywordParam("min_samples_split", "Rows.", "float", low=0, auto=True,
    ...              allowed="'auto' or a number >= 0").validate(-1)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: min_samples_split must be 'auto' or a number >= 0, got -1
    >>> import numpy as np
    >>> depth.validate(np.int64(0))
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: max_depth must be in [1, 30], got 0
    """

    @property
    def option(self) -> str:
        """The keyword itself: ``max_depth``."""
        return self.name

    def validate(self, value: Any) -> None:
        """Raise a one-line :class:`~dprm.errors.ParameterError` unless ``value`` is allowed.

        A numpy scalar is judged, and shown, as the Python value it holds: ``got -1``, not
        ``got np.int64(-1)`` (it passes or fails every check as that value does).
        """
        import numpy as np

        if isinstance(value, np.generic):
            value = value.item()
        try:
            super().validate(value)
        except ParameterError:
            if self.allowed and self.kind in ("int", "float"):
                raise ParameterError(f"{self.option} must be {self.allowed}, got {short_repr(value)}") from None
            raise

    def _typed(self, value: Any) -> float | Fraction | int | None:
        if self.kind == "int" and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
            raise ParameterError(f"{self.option} must be an integer, got {short_repr(value)}")
        if self.kind == "choice" and (not isinstance(value, str) or value not in self.choices):
            raise ParameterError(f"{self.option} must be one of {', '.join(self.choices)}, got {short_repr(value)}")
        if self.kind == "epsilon":
            check_epsilon_range(as_epsilon(value, self.option), self.option)
            return None
        return super()._typed(value)

    def _in_range(self, number: Any, value: Any) -> None:
        try:
            super()._in_range(number, value)
        except ParameterError:
            if self.kind == "int" and self.low is not None and self.high is not None:
                raise ParameterError(f"{self.option} must be in [{self.low}, {self.high}], "
                                     f"got {short_repr(value)}") from None
            raise


def parameter_table(*params: Param) -> dict[str, Param]:
    """A class's ``parameter_specs``: the given specs by name (later ones replace earlier)."""
    return {p.name: p for p in params}


def read_none_texts(specs: Mapping[str, Param], values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with the text ``"none"`` read as None where a number's spec allows None.

    The command line and ``NAME=VALUE`` items spell a missing rule ``none`` (as the
    options' help shows it); a choice or text parameter keeps ``"none"`` as written.

    Examples
    --------
    >>> specs = parameter_table(Param("prune_support", "Rule.", "float", none=True),
    ...                         Param("damping", "Damping.", "choice", choices=("union", "none")))
    >>> read_none_texts(specs, {"prune_support": "None", "damping": "none", "depth": "none"})
    {'prune_support': None, 'damping': 'none', 'depth': 'none'}
    """
    out = dict(values)
    for name, value in values.items():
        spec = specs.get(name)
        if (spec is not None and spec.none and spec.kind in ("int", "float") and isinstance(value, str)
                and value.strip().lower() == "none"):
            out[name] = None
    return out


#: What a ``random_state`` may be, in words (scikit-learn's kinds and numpy's Generator).
RANDOM_STATE_KINDS = "None, an integer in [0, 2**63 - 1], a numpy.random.Generator or a numpy.random.RandomState"

#: Largest integer seed (numpy's seeds are unbounded; dprm's outputs record seeds as int64).
MAX_SEED = 2**63 - 1


def check_random_state(value: Any, name: str = "random_state") -> None:
    """A one-line :class:`ParameterError` unless ``value`` is a ``random_state`` (:data:`RANDOM_STATE_KINDS`).

    Nothing is drawn: a fit checks its parameters before it reads data or spends budget.

    Examples
    --------
    >>> import numpy as np
    >>> check_random_state(np.random.RandomState(0))
    >>> check_random_state(-1)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: random_state must be in [0, 9223372036854775807], got -1
    >>> check_random_state("7")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: random_state must be None, an integer in [0, 2**63 - 1], a numpy.random.Generator or a numpy.random.RandomState, got '7'
    """
    import numpy as np

    if value is None or isinstance(value, (np.random.Generator, np.random.RandomState)):
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(f"{name} must be {RANDOM_STATE_KINDS}, got {short_repr(value)}")
    if not 0 <= int(value) <= MAX_SEED:
        raise ParameterError(f"{name} must be in [0, {MAX_SEED}], got {short_repr(value)}")


def as_seed(random_state: Any, name: str = "random_state") -> int | None:
    """A ``random_state`` as an integer seed: None stays None (unseeded), an integer is itself.

    A :class:`numpy.random.Generator` or a legacy :class:`numpy.random.RandomState`
    (scikit-learn's) gives one integer drawn from it: the object is **advanced** by
    that draw, as scikit-learn's estimators advance a RandomState they are given, and
    the result is what that integer seed gives, so it is reproducible from the
    object's state and is seeded (not private) like any given seed.

    Examples
    --------
    >>> import numpy as np
    >>> as_seed(None), as_seed(7)
    (None, 7)
    >>> as_seed(np.random.RandomState(0)) == as_seed(np.random.RandomState(0))
    True
    >>> state = np.random.RandomState(0); as_seed(state) == as_seed(state)  # advanced
    False
    """
    import numpy as np

    check_random_state(random_state, name)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(MAX_SEED + 1))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(MAX_SEED + 1, dtype=np.int64))
    return None if random_state is None else int(random_state)


def as_generator(rng: Any, name: str = "rng") -> Any:
    """``rng`` as a :class:`numpy.random.Generator`: a Generator as given, a seed (an int ≥ 0 or a
    :class:`numpy.random.SeedSequence`) or None through :func:`numpy.random.default_rng`, a legacy
    :class:`numpy.random.RandomState` (scikit-learn's) through a seed drawn from it (:func:`as_seed`:
    it is advanced, and the run is that seed's).

    Anything else is a :class:`ParameterError` naming ``name`` (numpy's own would come from deep
    inside a fit without it).

    Examples
    --------
    >>> import numpy as np
    >>> type(as_generator(0)).__name__, type(as_generator(None)).__name__
    ('Generator', 'Generator')
    >>> g = np.random.default_rng(1); as_generator(g) is g
    True
    >>> seed = np.random.RandomState(2).randint(2**63, dtype=np.int64)
    >>> as_generator(np.random.RandomState(2)).random() == np.random.default_rng(seed).random()
    True
    >>> as_generator("abc")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: rng must be a numpy.random.Generator (numpy.random.default_rng(seed)), a seed (an integer 0 or more), a numpy.random.RandomState or None, not str
    """
    import numpy as np

    if rng is None or isinstance(rng, (np.random.Generator, np.random.SeedSequence)):
        return np.random.default_rng(rng)
    if isinstance(rng, np.random.RandomState):
        return np.random.default_rng(as_seed(rng, name))
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and int(rng) >= 0:
        return np.random.default_rng(int(rng))
    raise ParameterError(f"{name} must be a numpy.random.Generator (numpy.random.default_rng(seed)), a seed "
                         f"(an integer 0 or more), a numpy.random.RandomState or None, not {type(rng).__name__}")
