"""What every miner shares: parameters and their limits, progress, the output document.

Miners follow scikit-learn's estimator conventions: ``__init__`` only stores the
parameters (all keyword arguments with defaults, in a signature that
``inspect.signature`` and :meth:`Miner.get_params` see: written out in the class, or
made by :func:`keyword_init` from signatures that several miners share),
``fit(data, *, accountant=None, rng=None, progress=None)`` validates them, mines,
sets ``redescriptions_``, ``privacy_`` and ``notes_`` and returns the miner. Private
miners take every release through the ``accountant``; the randomness of their
data-independent choices comes from ``rng``.

Parameters are declared once
----------------------------
Each miner class has a table ``parameter_specs`` (name → :class:`Param`): what the
parameter means in words (the papers' names explained, the unit stated), its type,
its allowed range and, for every upper limit, the reason for it (memory or time).
From that table

* ``__init__`` stores the parameters (:meth:`Miner._store`, one line per class),
* :meth:`Miner.check_parameters` validates every value before any data is read or
  any budget is spent (``fit`` and :func:`dprm.mining.make_miner` call it), with a
  one-line :class:`~dprm.errors.ParameterError` naming the option and its limit,
* the command line and the server read help texts and bounds
  (:func:`dprm.mining.parameter_help`, :func:`dprm.mining.parameter_specs`).

Parameters that several miners share are :class:`Param` objects defined once (here
and in :mod:`dprm.mining.private_trees`); a family that needs another limit replaces
one field (:func:`dataclasses.replace`). A class whose ``__init__`` has a parameter
without a spec, or a spec without a parameter, is refused when it is defined.

Progress
--------
``fit(..., progress=callback)`` calls ``callback(done, total)`` with whole numbers
of data-independent work units (:class:`Progress`): ``total`` is fixed before any
data is touched, ``done`` never decreases, calls come at most about every 1 % of the
work, and the last call is ``(total, total)``.

Examples
--------
>>> from dprm.mining import make_miner
>>> make_miner("cartwheels", depth=30)
Traceback (most recent call last):
...
dprm.errors.ParameterError: depth must be at most 6 (extraction compares every pair of leaf sets of a tree pair: memory grows as 16^depth, up to 7 GB at depth 6), not 30
>>> make_miner("alt-mcmc", init_trials=2.5)
Traceback (most recent call last):
...
dprm.errors.ParameterError: init-trials must be an integer or auto, not 2.5
"""

from __future__ import annotations

import inspect
import numbers
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from dprm.errors import ParameterError, short_repr
from dprm.mining.extraction import Constraints
from dprm.json_values import json_problem, plain_json
from dprm.params import Param, parameter_table, read_none_texts
from dprm.privacy.accountant import NEIGHBOURING, NO_GUARANTEE
from dprm.privacy.budget import LARGEST_EPSILON, SMALLEST_EPSILON, as_fraction
from dprm.queries import Redescription, make_document

if TYPE_CHECKING:
    from dprm.data.attributes import View

__all__ = [
    "Miner",
    "Param",
    "Progress",
    "ProgressCallback",
    "keyword_init",
    "parameter_table",
    "read_none_texts",
    "not_private_block",
    "view_reasons",
    "MAX_ROWS",
    "EPSILON",
    "MIN_SUPPORT_ROWS",
    "MAX_SUPPORT",
    "MIN_JACCARD",
    "MAX_PVALUE",
    "MAX_CLAUSES",
    "CONFIDENCE",
    "DEPTH",
    "INIT_TRIALS",
    "ALTERNATIONS",
    "MAX_SPLITS_TREES",
]

ProgressCallback = Callable[[int, int], None]
"""``progress(done, total)``: whole work units done so far, of a fixed total."""

#: Largest number of rows any row-count parameter may name: more than a two-view
#: table held in memory can have on any machine dprm runs on.
MAX_ROWS = 1_000_000_000

#: A miner's attributes that belong to a run in progress, not to its result: left out of a copy or a
#: pickle of the miner (:meth:`Miner.__getstate__`).
RUN_STATE = frozenset({"_accountant", "_progress", "_chooser", "_pair_chooser"})  # the choosers hold the accountant


def _exact_text(value: str) -> Any:
    """An ε given as text (``"1/3"``, ``"0.1"``) as the Fraction it names; text that names none is
    left as it is, for :meth:`Miner.check_parameters` to refuse in its words.

    Examples
    --------
    >>> _exact_text("1/3"), _exact_text("0.1"), _exact_text("abc")
    (Fraction(1, 3), Fraction(1, 10), 'abc')
    """
    try:
        return as_fraction(value)
    except ParameterError:
        return value


def keyword_init(*parts: Callable[..., Any], defaults: Mapping[str, Any] | None = None) -> Callable[..., None]:
    """A miner's ``__init__``: the keyword-only parameters of ``parts``, in order, stored.

    Each part is a function written for its signature only (``def part(*, name: type =
    default) -> None``), so that parameters several miners share, with their
    defaults, are written once. The returned ``__init__`` has the joined signature
    (``__signature__``: what :meth:`Miner.parameter_names`, the command line and the
    server read), refuses positional and unknown arguments with the ``TypeError`` a
    written-out ``def`` gives, and stores every value with :meth:`Miner._store`.
    ``defaults`` replaces some parts' defaults (one miner's own default of a shared
    parameter).

    Examples
    --------
    >>> def own(*, depth: int = 4) -> None: ...
    >>> def shared(*, confidence: float = 0.95, units: str = "leaves") -> None: ...
    >>> init = keyword_init(own, shared, defaults={"confidence": 0.9})
    >>> [(p.name, p.default) for p in inspect.signature(init).parameters.values()][1:]
    [('depth', 4), ('confidence', 0.9), ('units', 'leaves')]
    """
    defaults = dict(defaults or {})
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for part in parts:
        for parameter in inspect.signature(part).parameters.values():
            if parameter.kind is not inspect.Parameter.KEYWORD_ONLY:
                raise TypeError(f"{part.__name__}: parameter {parameter.name!r} must be keyword-only")
            parameters.append(parameter.replace(default=defaults.pop(parameter.name, parameter.default)))
    if defaults:
        raise TypeError(f"defaults of parameters that no part has: {sorted(defaults)}")
    signature = inspect.Signature(parameters, return_annotation="None")

    def __init__(self: Miner, *args: Any, **kwargs: Any) -> None:
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{type(self).__qualname__}.__init__() {error}") from None
        bound.apply_defaults()
        self._store(bound.arguments)

    __init__.__signature__ = signature  # type: ignore[attr-defined]
    return __init__



def not_private_block(reason: str) -> dict[str, Any]:
    """The spec's ``privacy`` block of a non-private algorithm (``guarantee: none``).

    Examples
    --------
    >>> not_private_block("cartwheels is not a private algorithm")["private"]
    False
    """
    return {"epsilon": None, "neighbouring": NEIGHBOURING, "guarantee": NO_GUARANTEE, "private": False,
            "reasons": [reason], "ledger": []}


def view_reasons(views: Sequence[View], private_domains: Sequence[bool], what: str) -> list[str]:
    """Why a private miner's run over ``views`` is not private, as its privacy block says.

    Parameters
    ----------
    views : sequence of View
        The run's views.
    private_domains : sequence of bool
        Per view, whether ``what`` of the view come from declared types and domains only.
    what : str
        What the miner builds from the domains: ``"split points"`` (tree miners),
        ``"literals"`` (Serenade).

    Returns
    -------
    list of str
        Each view whose ``what`` come from undeclared types or domains, then each view
        whose constant columns were left out (a choice made on the data).

    Examples
    --------
    >>> from types import SimpleNamespace as View
    >>> views = [View(name="left", constant=[]), View(name="right", constant=["x"])]
    >>> [reason[:36] for reason in view_reasons(views, [False, True], "literals")]
    ['literals of the left view come from ', 'constant columns of the right view w']
    """
    reasons = [f"{what} of the {view.name} view come from undeclared types or domains (declare every column's "
               f"type, bounds and categories in a types file)"
               for view, private in zip(views, private_domains) if not private]
    reasons += [f"constant columns of the {view.name} view were left out, a choice made on the data"
                for view in views if view.constant]
    return reasons


# -- parameters several miner families share ------------------------------------------

EPSILON = Param(
    "epsilon", "Privacy budget ε of the run: the run spends at most this much, and the output's ledger lists "
    "every release", "epsilon", unit="ε", low=SMALLEST_EPSILON, high=LARGEST_EPSILON,
    why="a larger budget is no privacy: the noise is far below one row",
    why_low="a smaller budget drowns every count in noise of 10,000 rows and more",
)
MIN_SUPPORT_ROWS = Param(
    "min_support", "Smallest intersection of the two queries' supports, in rows (estimated from noisy counts "
    "in a private run)", "float", unit="rows", low=0, high=MAX_ROWS, why="more rows than any table in memory",
)
MAX_SUPPORT = Param(
    "max_support", "Largest support of either query, as a share of the rows (1: no limit)", "float",
    unit="share of rows", low=0, high=1, low_open=True,
)
MIN_JACCARD = Param("min_jaccard", "Smallest Jaccard index |L ∩ R| / |L ∪ R| of a redescription", "float",
                    low=0, high=1)
MAX_PVALUE = Param("max_pvalue", "Largest p-value of a redescription (its significance against independent "
                                 "queries)", "float", low=0, high=1, low_open=True)
MAX_CLAUSES = Param(
    "max_clauses", "Disjunctions (clauses) extraction may add to each side of a redescription built from two "
    "leaves", "int", unit="clauses", low=0, high=128,
    why="a side is a union of leaves, and a tree has at most 2^7 = 128 of them",
)
CONFIDENCE = Param("confidence", "Level of the confidence intervals reported beside each noisy statistic",
                   "float", low=0, high=1, low_open=True, high_open=True)

# The tree-based miners (CARTwheels, AltExpM, AltMCMC, MCMCTreePair).
DEPTH = Param(
    "depth", "Tree depth d: levels of splits of every tree, so a tree has up to 2^d leaves and a tree pair "
    "4^d leaf pairs", "int", unit="levels", low=1, high=7,
    why="extraction compares every pair of leaf sets of a tree pair: memory grows as 16^depth, about 3 GB at "
        "depth 7",
)
INIT_TRIALS = Param(
    "init_trials", "Number of initial targets (the papers' InTr): how many times the search starts from a "
    "randomly chosen attribute, whose values the first tree predicts", "int", unit="trials", low=1, high=1000,
    why="each trial grows and extracts trees of its own: 1,000 trials take hours at the larger depths",
)
ALTERNATIONS = Param(
    "alternations", "Number of alternations (the papers' RMIter) per initial target: each grows a tree on the "
    "other view that predicts the leaves of the last tree, and extracts redescriptions from the two", "int",
    unit="alternations", low=1, high=100,
    why="each alternation is one more tree and extraction in every trial",
)
MAX_SPLITS_TREES = Param(
    "max_splits", "Split points per numeric attribute, on a grid over its declared bounds (numeric-grid: "
    "equally spaced, or the family member chosen privately)", "int", unit="split points", low=1, high=1000,
    why="a tree level counts every split point for every node and class: beyond 1,000 a deep tree's levels "
        "need gigabytes",
)


# -- progress -------------------------------------------------------------------------


class Progress:
    """Reports ``(done, total)`` work units to a callback, cheaply and in order.

    ``total`` is fixed when the object is made (it must not depend on the data);
    :meth:`advance` adds done units, clipped at ``total``. The callback is called
    when ``done`` has grown by about 1 % of ``total`` since the last call, and at the
    end (:meth:`finish`: ``(total, total)``). Calls are serialised by a lock, so
    worker threads may advance one object and the callback still sees a
    non-decreasing ``done``. Without a callback every method does nothing.

    Examples
    --------
    >>> seen = []
    >>> progress = Progress(lambda done, total: seen.append((done, total)), 1000)
    >>> for _ in range(1000):
    ...     progress.advance(1)
    >>> progress.finish()
    >>> len(seen), seen[0], seen[-1]
    (101, (0, 1000), (1000, 1000))
    """

    def __init__(self, callback: ProgressCallback | None, total: int) -> None:
        if callback is not None and not callable(callback):  # made before any release: nothing spent
            raise ParameterError(f"progress must be a function of (done, total) or None, not "
                                 f"{type(callback).__name__}")
        self.total = max(int(total), 1)
        self._callback = callback
        self._done = 0
        self._every = max(1, self.total // 100)
        self._next = 0
        self._lock = threading.Lock()
        self._report()

    @property
    def done(self) -> int:
        return self._done

    def _report(self) -> None:
        if self._callback is not None and (self._done >= self._next or self._done == self.total):
            self._callback(self._done, self.total)
            self._next = min(self._done + self._every, self.total)

    def advance(self, units: int = 1) -> None:
        """``units`` more work units are done."""
        if self._callback is None or units <= 0:
            return
        with self._lock:
            if self._done >= self.total:
                return
            self._done = min(self.total, self._done + int(units))
            self._report()

    def advance_to(self, done: int) -> None:
        """At least ``done`` units are done (no effect if more are already)."""
        with self._lock:
            missing = int(done) - self._done
        self.advance(missing)

    def part(self, units: int, steps: int) -> "ProgressPart":
        """A share of ``units`` of this progress, done in ``steps`` (known later) equal steps."""
        return ProgressPart(self, units, steps)

    def finish(self) -> None:
        """All the work is done: the last call, ``(total, total)``."""
        self.advance_to(self.total)


class ProgressPart:
    """``units`` of a :class:`Progress`, done in ``steps`` steps (e.g. rounds chosen at run time)."""

    def __init__(self, progress: Progress, units: int, steps: int) -> None:
        self._progress = progress
        self._units = max(int(units), 0)
        self._steps = max(int(steps), 1)
        self._step = 0
        self._given = 0

    def advance(self, steps: int = 1) -> None:
        """``steps`` more steps are done."""
        self.advance_to(self._step + steps)

    def advance_to(self, step: int) -> None:
        """At least ``step`` steps are done (no effect if more are already)."""
        self._step = min(self._steps, max(self._step, int(step)))
        share = self._units * self._step // self._steps
        self._progress.advance(share - self._given)
        self._given = share

    def finish(self) -> None:
        self.advance(self._steps)


# -- the base class -------------------------------------------------------------------


class Miner:
    """Base class of the redescription miners.

    Attributes set by ``fit``
    -------------------------
    redescriptions_ : list of Redescription
        What was found, best first.
    privacy_ : dict
        The spec's ``privacy`` block, for every miner (private or not): ``epsilon``
        (spent; None for a non-private algorithm), ``neighbouring``, ``guarantee``,
        ``private`` (true exactly when the guarantee is not ``none``), ``reasons``
        (why not private, in words; empty when private) and ``ledger``.
    notes_ : list of str
        Remarks on the run for the user (never a reason of ``privacy_`` again).
    """

    algorithm: ClassVar[str] = ""
    #: name → :class:`Param` of every ``__init__`` parameter.
    parameter_specs: ClassVar[dict[str, Param]] = {}

    redescriptions_: list[Redescription]
    privacy_: dict[str, Any]
    notes_: list[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" not in cls.__dict__:
            return
        names = set(cls.parameter_names())
        declared = set(cls.parameter_specs)
        if names != declared:
            raise TypeError(f"{cls.__name__}: parameters without a spec: {sorted(names - declared)}; "
                            f"specs without a parameter: {sorted(declared - names)}")

    @classmethod
    def parameter_names(cls) -> list[str]:
        signature = inspect.signature(cls.__init__)
        return [name for name in signature.parameters if name != "self"]

    @classmethod
    def parameter_help(cls) -> dict[str, str]:
        """Each parameter's help in words with its allowed values: ``{name: "...; allowed: 1 to 7"}``."""
        return {name: f"{spec.help}; allowed: {spec.bounds_text()}" for name, spec in cls.parameter_specs.items()}

    def _store(self, values: Mapping[str, Any]) -> None:
        """Store the ``__init__`` arguments (call as ``self._store(locals())``, first)."""
        for name in self.parameter_names():
            setattr(self, name, self._stored_value(name, values[name]))

    def _stored_value(self, name: str, value: Any) -> Any:
        """``value`` of parameter ``name`` as the miner stores it (by ``__init__`` and :meth:`set_params` alike)."""
        spec = self.parameter_specs.get(name)
        kind = spec.kind if spec is not None else None
        if (kind == "float" and isinstance(value, numbers.Rational)
                and not isinstance(value, (bool, int))):
            value = float(value)  # a Fraction is checked as a number, then used as a float (numpy)
        elif (kind == "int" and isinstance(value, numbers.Integral) and not isinstance(value, bool)
              and type(value) is not int):
            value = int(value)  # a numpy integer would overflow in the miner's arithmetic (uint8 · 100)
        elif kind == "epsilon" and isinstance(value, str):
            value = _exact_text(value)  # "1/3" is used as the Fraction it names (float("1/3") fails)
        return value

    def check_parameters(self) -> None:
        """Validate every parameter without the data; one-line ParameterError on the first bad one.

        Called by ``fit`` before anything is read or spent, and by
        :func:`dprm.mining.make_miner`, so that front ends refuse bad options up front.
        """
        for name, spec in self.parameter_specs.items():
            spec.validate(getattr(self, name))
        self._check_combination()

    def _check_combination(self) -> None:
        """Rules that involve several parameters (subclasses)."""

    def constraints(self) -> Constraints:
        """The constraints Γ from the miner's parameters (validated)."""
        return Constraints(
            min_support=self.min_support,
            max_support=self.max_support,
            min_jaccard=self.min_jaccard,
            max_pvalue=self.max_pvalue,
            max_clauses=self.max_clauses,
        )

    def _forget_fit(self) -> None:
        """Drop an earlier fit's results (scikit-learn's fitted attributes: names ending in ``_``).

        Called first by every ``fit``, so that a fit that fails (a budget refused, bad data)
        leaves no earlier ``redescriptions_`` or ``document()`` to be taken for its own.
        """
        for name in [n for n in vars(self) if n.endswith("_") and not n.startswith("_")]:
            delattr(self, name)

    def __getstate__(self) -> dict[str, Any]:
        """What a copy or a pickle of the miner holds: everything but :data:`RUN_STATE`.

        A fitted miner pickles and deep-copies as a fitted scikit-learn estimator does;
        the accountant (which refuses to be copied: a copy would spend the budget twice)
        and the progress (a lock) belong to the run, not to its result.

        Examples
        --------
        >>> import pickle
        >>> from dprm.mining import make_miner
        >>> from dprm.datasets import make_planted
        >>> from dprm.data import load_two_view
        >>> planted = make_planted(200, random_state=0)
        >>> data = load_two_view(planted.left, planted.right, types=planted.types)
        >>> miner = make_miner("mcmc-tree-pair", epsilon=1, mcmc_iterations=200).fit(data, rng=0)
        >>> copied = pickle.loads(pickle.dumps(miner))
        >>> copied.document() == miner.document()
        True
        """
        return {name: value for name, value in vars(self).items() if name not in RUN_STATE}

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The miner's parameters, as given to ``__init__`` (scikit-learn's signature; no parameter is an estimator).

        Examples
        --------
        >>> from sklearn.base import clone
        >>> from dprm.mining import make_miner
        >>> miner = make_miner("mcmc-tree-pair", epsilon=0.5)
        >>> copy = clone(miner)
        >>> copy is not miner and copy.get_params() == miner.get_params()
        True
        """
        return {name: getattr(self, name) for name in self.parameter_names()}

    def set_params(self, **parameters: Any) -> "Miner":
        """Set parameters as ``__init__`` would (scikit-learn's ``set_params``); each is checked as in ``fit``.

        An unknown name is a :class:`~dprm.errors.ParameterError`; values are validated by
        :meth:`check_parameters` at once, so a bad value leaves the miner unchanged.

        Examples
        --------
        >>> from dprm.mining import make_miner
        >>> make_miner("alt-mcmc", epsilon=1.0).set_params(epsilon=0.3).epsilon
        0.3
        """
        names = self.parameter_names()
        unknown = sorted(set(parameters) - set(names))
        if unknown:
            raise ParameterError(f"{type(self).__name__} has no parameter {', '.join(map(repr, unknown))}; "
                                 f"its parameters: {', '.join(names)}")
        before = self.get_params()
        for name, value in parameters.items():
            setattr(self, name, self._stored_value(name, value))  # as __init__ stores it: "1/3" a Fraction
        try:
            self.check_parameters()
        except Exception:
            for name, value in before.items():
                setattr(self, name, value)
            raise
        return self

    def document(self, extra_parameters: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The spec's JSON document (``dprm.redescriptions/1``) of the fitted miner.

        Parameters
        ----------
        extra_parameters : mapping, optional
            More entries of the document's ``parameters`` (a seed, the dataset's name):
            string keys other than the ones the run states itself (its parameters, and
            ``auto``, ``unused`` or ``chosen`` where the miner writes them), values that are JSON (numpy numbers and arrays,
            tuples and fractions are made plain). Anything else is a one-line
            :class:`~dprm.errors.ParameterError` naming the key, and no document.

        Examples
        --------
        >>> from dprm.mining import make_miner
        >>> from dprm.datasets import make_planted
        >>> from dprm.data import load_two_view
        >>> planted = make_planted(200, random_state=0)
        >>> data = load_two_view(planted.left, planted.right, types=planted.types)
        >>> miner = make_miner("mcmc-tree-pair", epsilon=1, mcmc_iterations=200).fit(data, rng=0)
        >>> miner.document({"dataset": "planted"})["parameters"]["dataset"]
        'planted'
        >>> miner.document({"when": object()})
        Traceback (most recent call last):
        ...
        dprm.errors.ParameterError: extra_parameters['when'] is of type object, which is not a JSON value (use numbers, text, Booleans, None, lists and dicts)
        >>> miner.document({"depth": 9})
        Traceback (most recent call last):
        ...
        dprm.errors.ParameterError: extra_parameters: 'depth' is stated by the MCMCTreePair run itself (as 'auto'); name the extra entry otherwise
        """
        if not hasattr(self, "privacy_"):
            raise ParameterError(f"{type(self).__name__} has no result yet: call fit first")
        own = plain_json({**self.get_params(), **self._run_parameters()})  # numpy numbers, fractions
        parameters = {**own, **self._checked_extra(extra_parameters, own)}
        return make_document(self.algorithm, parameters, self.privacy_, self.redescriptions_)

    def _run_parameters(self) -> dict[str, Any]:
        """Entries of the document's ``parameters`` besides the miner's own that the run states (subclasses)."""
        return {}

    def _checked_extra(self, extra_parameters: Any, own: Mapping[str, Any]) -> dict[str, Any]:
        """``extra_parameters`` of :meth:`document` made plain, or a ParameterError naming the first bad key.

        ``own`` are the entries the run states itself (its parameters, :meth:`_run_parameters`).
        """
        if extra_parameters is None:
            return {}
        if not isinstance(extra_parameters, Mapping):
            raise ParameterError(f"extra_parameters must be a mapping of names to JSON values, not "
                                 f"{type(extra_parameters).__name__}")
        extra: dict[str, Any] = {}
        for key, value in extra_parameters.items():
            if not isinstance(key, str):
                raise ParameterError(f"extra_parameters has the key {short_repr(key)}, which is not a string "
                                     f"(JSON's keys are)")
            if key in own:
                raise ParameterError(f"extra_parameters: {key!r} is stated by the {type(self).__name__} run itself "
                                     f"(as {short_repr(own[key])}); name the extra entry otherwise")
            plain = plain_json(value)
            problem = json_problem(plain, f"extra_parameters[{key!r}]")
            if problem is not None:
                raise ParameterError(problem)
            extra[key] = plain
        return extra

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"
