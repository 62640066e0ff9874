"""Redescription miners, chosen by name (``ALGORITHMS``) as on the command line.

``ALGORITHMS`` maps each command-line name to the miner class and the fixed
parameters that select the variant (scikit-learn style: variants by string key).
"""

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from dprm.mining.alternation import AlternatingTrees
from dprm.errors import ParameterError, short_repr
from dprm.mining.base import Miner, Param, Progress
from dprm.mining.cartwheels import CartWheels
from dprm.mining.default import DEFAULT_ALGORITHM, default_algorithm, default_parameters
from dprm.mining.extraction import Constraints, LeafCombination, contingency_table, extract_combinations
from dprm.mining.private_extraction import private_extract
from dprm.mining.pruning import prune
from dprm.mining.redundancy import DEFAULT_MAX_OVERLAP, deduplicate, filter_redundant, redundant
from dprm.mining.serenade import ReReMi, SerenadeCS, SerenadeES
from dprm.mining.tree_pair import MCMCTreePair

ALGORITHMS: dict[str, tuple[type[Miner], dict[str, Any]]] = {
    "cartwheels": (CartWheels, {}),
    "alt-expm": (AlternatingTrees, {"trees": "exponential"}),
    "alt-mcmc": (AlternatingTrees, {"trees": "mcmc"}),
    "mcmc-tree-pair": (MCMCTreePair, {}),
    "serenade-cs": (SerenadeCS, {}),
    "serenade-es": (SerenadeES, {"quality": "logistic"}),
    "serenade-es-nosens": (SerenadeES, {"quality": "jaccard"}),
    "reremi": (ReReMi, {}),
}


def sharded_algorithms() -> list[str]:
    """The miners that count through an engine (their class's ``counts_through_engine``), so run sharded.

    Examples
    --------
    >>> names = sharded_algorithms()
    >>> "serenade-es" in names and "reremi" in names and "clired-reremi" not in names
    True
    """
    return [name for name, (miner_class, _) in ALGORITHMS.items()
            if getattr(miner_class, "counts_through_engine", False)]


def make_miner(algorithm: str, **parameters: Any) -> Miner:
    """The miner named ``algorithm`` with the given parameters, checked.

    Every parameter is validated now (:meth:`Miner.check_parameters`: types, ranges,
    limits, combinations), before any data is read or budget spent; a bad one raises
    a one-line :class:`~dprm.errors.ParameterError`, as do an unknown algorithm and a
    parameter the algorithm does not have.

    Examples
    --------
    >>> make_miner("mcmc-tree-pair", depth=3).depth
    3
    >>> make_miner("mcmc-tree-pair", depth=100)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: depth must be at most 7 (extraction compares every pair of leaf sets of a tree pair: memory grows as 16^depth, about 3 GB at depth 7), not 100
    >>> make_miner("reremi", mcmc_iterations=5)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: reremi has no parameter mcmc-iterations
    """
    if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:  # a list is not hashable: one line too
        raise ParameterError(f"unknown algorithm {short_repr(algorithm)}; choose one of: {', '.join(ALGORITHMS)}")
    miner_class, fixed = ALGORITHMS[algorithm]
    for name in parameters:
        if name not in miner_class.parameter_specs or name in fixed:
            raise ParameterError(f"{algorithm} has no parameter {name.replace('_', '-')}")
    miner = miner_class(**fixed, **parameters)
    miner.check_parameters()
    return miner


def parameter_specs(algorithm: str) -> dict[str, Param]:
    """The parameters of ``algorithm`` that a user may set: name → :class:`Param`.

    Each :class:`Param` has ``help`` (words), ``kind``, ``unit``, ``low``/``high``
    (with ``low_open``/``high_open``), ``why`` (the reason for ``high``),
    ``choices``, ``none``, ``auto``, :meth:`Param.bounds_text` and
    :meth:`Param.validate`. The defaults are those of the miner's signature
    (``inspect.signature``); the parameters fixed by the algorithm's name are left
    out.

    Examples
    --------
    >>> spec = parameter_specs("mcmc-tree-pair")["mcmc_iterations"]
    >>> spec.unit, spec.high, spec.bounds_text()
    ('steps', 10000000, '1 to 10,000,000')
    >>> "trees" in parameter_specs("alt-mcmc")
    False
    """
    if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:  # a list is not hashable: one line too
        raise ParameterError(f"unknown algorithm {short_repr(algorithm)}; choose one of: {', '.join(ALGORITHMS)}")
    miner_class, fixed = ALGORITHMS[algorithm]
    return {name: spec for name, spec in miner_class.parameter_specs.items() if name not in fixed}


def parameter_help(algorithms: Iterable[str] | None = None,
                   specs: Callable[[str], Mapping[str, Param]] | None = None) -> dict[str, str]:
    """Help of every miner parameter in words, with its allowed values, for ``dprm mine --help``.

    ``{name: text}`` over ``algorithms`` (default: all). Where they give a parameter
    different meanings or limits, the text says which is whose: ``"<words>; allowed: 1
    to 7, 1 to 6 for cartwheels"``; the meanings and limits of algorithms not named are
    left out (``dprm remote submit``, whose server runs the private miners only).
    ``specs`` gives an algorithm's specs (default :func:`parameter_specs`; the server's
    narrower limits: :func:`dprm.server.validation.server_parameter_specs`). Defaults
    are not included (they are in the signatures).

    Examples
    --------
    >>> help = parameter_help()
    >>> help["depth"].split(":")[0], help["depth"].endswith("allowed: 1 to 7 or auto, 1 to 6 for cartwheels")
    ('Tree depth d', True)
    >>> "MCIter" in help["mcmc_iterations"], "rows" in help["min_support"]
    (True, True)
    >>> parameter_help(["alt-expm", "mcmc-tree-pair"])["depth"].endswith("allowed: 1 to 7 or auto")
    True
    """
    names = list(ALGORITHMS) if algorithms is None else list(algorithms)
    for algorithm in names:
        if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
            raise ParameterError(f"unknown algorithm {short_repr(algorithm)}; choose one of: {', '.join(ALGORITHMS)}")
    by_name: dict[str, dict[str, Param]] = {}
    for algorithm in names:
        for name, spec in (specs or parameter_specs)(algorithm).items():
            by_name.setdefault(name, {})[algorithm] = spec
    return {name: _merged_help(specs) for name, specs in by_name.items()}


def _merged_help(specs: dict[str, Param]) -> str:
    """One text from the specs of several algorithms: most common first, others 'for <algorithms>'."""
    def grouped(key) -> list[tuple[str, list[str]]]:
        groups: dict[str, list[str]] = {}
        for algorithm, spec in specs.items():
            groups.setdefault(key(spec), []).append(algorithm)
        return sorted(groups.items(), key=lambda item: -len(item[1]))

    words = grouped(lambda spec: spec.help)
    text = words[0][0] + "".join(f"; for {', '.join(algorithms)}: {help_text[0].lower()}{help_text[1:]}"
                                 for help_text, algorithms in words[1:])
    bounds = grouped(lambda spec: spec.bounds_text())
    allowed = bounds[0][0] + "".join(f", {b} for {', '.join(algorithms)}" for b, algorithms in bounds[1:])
    return f"{text}; allowed: {allowed}"


__all__ = [
    "ALGORITHMS",
    "sharded_algorithms",
    "DEFAULT_ALGORITHM",
    "default_algorithm",
    "default_parameters",
    "filter_redundant",
    "AlternatingTrees",
    "CartWheels",
    "Constraints",
    "LeafCombination",
    "MCMCTreePair",
    "ReReMi",
    "SerenadeCS",
    "SerenadeES",
    "Miner",
    "contingency_table",
    "extract_combinations",
    "make_miner",
    "Param",
    "Progress",
    "parameter_help",
    "parameter_specs",
    "private_extract",
    "prune",
]
