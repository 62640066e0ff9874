"""The algorithms of an experiment and their parameters (``dprm evaluate``).

Which names an experiment accepts (the miners, the python-clired baselines, then
the DP synthetic-data baselines), which of them are private (take a budget), how the experiment's ``--parameters``
reach each algorithm and are checked before any work, whether an algorithm runs
on a sharded engine, and the seed of every run (:func:`run_seed`: the master seed
and the run's identity, so adding algorithms or budgets leaves the other runs'
seeds unchanged).
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any, Iterable, Mapping

from dprm.errors import ParameterError, short_repr
from dprm.json_values import no_duplicate_keys
from dprm.evaluation.budgets import Budget

__all__ = [
    "BASELINES",
    "SYNTHETIC_BASELINES",
    "known_algorithms",
    "is_private",
    "parameters_for",
    "parse_parameter_items",
    "check_sharded",
    "run_seed",
]

#: Non-private baselines run through python-clired (:mod:`dprm.evaluation.baselines`).
BASELINES: tuple[str, ...] = ("clired-reremi", "clired-splitt", "clired-layeredt")

#: Private baselines: DP synthetic data (dpmm's MST, AIM), then cartwheels on it
#: (:mod:`dprm.evaluation.synthetic`). They take a budget; their parameters are their own.
SYNTHETIC_BASELINES: tuple[str, ...] = ("mst-cartwheels", "aim-cartwheels")


def known_algorithms() -> list[str]:
    """Every algorithm name an experiment accepts: the miners, then the baselines.

    Examples
    --------
    >>> names = known_algorithms()
    >>> "alt-expm" in names and "cartwheels" in names and "clired-reremi" in names and "mst-cartwheels" in names
    True
    """
    from dprm.mining import ALGORITHMS

    return [*ALGORITHMS, *(b for b in (*BASELINES, *SYNTHETIC_BASELINES) if b not in ALGORITHMS)]


def _accepted(algorithm: str) -> set[str] | None:
    """The parameter names a miner accepts (without its fixed ones); None for a baseline."""
    from dprm.mining import ALGORITHMS

    if algorithm not in ALGORITHMS:
        return None
    miner_class, fixed = ALGORITHMS[algorithm]
    return set(miner_class.parameter_names()) - set(fixed)


def is_private(algorithm: str) -> bool:
    """Whether ``algorithm`` takes a privacy budget (a miner with an ``epsilon`` parameter, a synthetic-data baseline).

    Examples
    --------
    >>> is_private("alt-mcmc"), is_private("cartwheels"), is_private("clired-splitt"), is_private("mst-cartwheels")
    (True, False, False, True)
    """
    if algorithm in SYNTHETIC_BASELINES:
        return True
    accepted = _accepted(algorithm)
    return accepted is not None and "epsilon" in accepted


def parameters_for(algorithm: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters one algorithm gets from an experiment's ``parameters``.

    ``parameters`` maps parameter names to values (given to every miner that accepts
    the name) and algorithm names to mappings of that algorithm's own parameters
    (which win over the shared ones). Baselines get only their own mapping.

    Examples
    --------
    >>> p = {"mcmc_iterations": 50, "depth": 3, "alt-expm": {"depth": 2}}
    >>> parameters_for("alt-expm", p)
    {'mcmc_iterations': 50, 'depth': 2}
    >>> parameters_for("cartwheels", p)
    {'depth': 3}
    >>> parameters_for("clired-reremi", p)
    {}
    """
    from dprm.mining import ALGORITHMS
    from dprm.mining.base import read_none_texts

    names = set(known_algorithms())
    accepted = _accepted(algorithm)
    shared = {k: v for k, v in parameters.items() if k not in names}
    own = dict(parameters.get(algorithm) or {})
    if accepted is None:
        return own
    chosen = {**{k: v for k, v in shared.items() if k in accepted}, **own}
    return read_none_texts(ALGORITHMS[algorithm][0].parameter_specs, chosen)  # prune_interval=none


def parse_parameter_items(items: Iterable[str], option: str = "--parameters") -> dict[str, Any]:
    """Merge ``--parameters`` values: JSON objects and ``[ALGORITHM.]NAME=VALUE`` items.

    A ``VALUE`` is read as JSON when it is valid JSON (numbers, ``true``, ``null``,
    quoted text), else as text. Dashes in a name become underscores
    (``mcmc-iterations`` = ``mcmc_iterations``). A parameter given twice (in one JSON
    object, or in two items: ``-p depth=3 -p depth=4``) is refused, as a run document's
    repeated key is: one of the values would be dropped silently.

    Examples
    --------
    >>> parse_parameter_items(['{"depth": 3}', "mcmc-iterations=200", "alt-expm.units=subtrees"])
    {'depth': 3, 'mcmc_iterations': 200, 'alt-expm': {'units': 'subtrees'}}
    >>> parse_parameter_items(["prune_support=null"])
    {'prune_support': None}
    >>> parse_parameter_items(["depth=3", "depth=4"])
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: --parameters: depth is given twice ('depth=4')
    """
    names = set(known_algorithms())
    merged: dict[str, Any] = {}

    def put(algorithm: str | None, name: str, value: Any, item: str) -> None:
        name = name.strip().replace("-", "_")
        if not name:
            raise ParameterError(f"{option}: empty parameter name")
        if algorithm is None:
            target = merged
        else:
            merged.setdefault(algorithm, {})
            if not isinstance(merged[algorithm], dict):
                raise ParameterError(f"{option}: {algorithm} must map to a JSON object of parameters")
            target = merged[algorithm]
        if name in target:
            shown = name if algorithm is None else f"{algorithm}.{name}"
            raise ParameterError(f"{option}: {shown} is given twice ({short_repr(item)})")
        target[name] = value

    for item in items:
        text = item.strip()
        if text.startswith("{"):
            try:
                decoded = json.loads(text, object_pairs_hook=no_duplicate_keys)
            except json.JSONDecodeError as err:
                raise ParameterError(f"{option}: not valid JSON: {err.msg} at character {err.pos}") from None
            except ValueError as err:  # a repeated key, or an integer of more than 4300 digits
                if str(err).startswith("duplicate key"):
                    raise ParameterError(f"{option}: not valid JSON: {err}") from None
                raise ParameterError(f"{option}: not valid JSON: an integer has more than "
                                     f"{sys.get_int_max_str_digits()} digits") from None
            if not isinstance(decoded, dict):
                raise ParameterError(f"{option}: a JSON value must be an object")
            for key, value in decoded.items():
                if key in names:
                    if not isinstance(value, dict):
                        raise ParameterError(f"{option}: {key} must map to a JSON object of parameters")
                    for name, inner in value.items():
                        put(key, name, inner, item)
                else:
                    put(None, key, value, item)
            continue
        if "=" not in text:
            raise ParameterError(f"{option}: {item!r} is neither a JSON object nor NAME=VALUE")
        key, raw = text.split("=", 1)
        try:
            value = json.loads(raw)
        except ValueError:  # not JSON, or an integer of more than 4300 digits: the text, refused as a number
            value = raw
        algorithm = None
        if "." in key:
            algorithm, key = key.rsplit(".", 1)
            algorithm = algorithm.strip()
            if algorithm not in names:
                raise ParameterError(f"{option}: unknown algorithm {short_repr(algorithm)} in {short_repr(item)}")
        put(algorithm, key, value, item)
    return merged


def _check_algorithms(algorithms: Iterable[str]) -> list[str]:
    names = known_algorithms()
    out: list[str] = []
    for algorithm in algorithms:
        if algorithm not in names:
            raise ParameterError(f"unknown algorithm {short_repr(algorithm)}; choose among: {', '.join(names)}")
        if algorithm in out:
            raise ParameterError(f"algorithm {algorithm} is listed twice")
        out.append(algorithm)
    if not out:
        raise ParameterError("give at least one algorithm")
    return out


def _check_parameters(algorithms: list[str], budgets: list[Budget], parameters: Mapping[str, Any]) -> None:
    """Refuse, before any work, a parameter that is misplaced or out of range."""
    from dprm.mining import make_miner

    names = set(known_algorithms())
    for key, value in parameters.items():
        if key in names:
            if key not in algorithms:
                raise ParameterError(f"--parameters: {key} is not among the experiment's algorithms")
            if not isinstance(value, Mapping):
                raise ParameterError(f"--parameters: {key} must map to a JSON object of parameters")
            for name in value:
                if name in ("epsilon", "seed"):
                    raise ParameterError(f"--parameters: {name} is set by the experiment (--budgets, --seed)")
            if key in SYNTHETIC_BASELINES:
                from dprm.evaluation.synthetic import check_synthetic_parameters

                try:
                    check_synthetic_parameters(key, value)
                except ParameterError as err:
                    raise ParameterError(f"--parameters: {key}: {err}") from None
            accepted = _accepted(key)
            if accepted is not None:
                for name in value:
                    if name not in accepted:
                        raise ParameterError(f"--parameters: {name} does not apply to {key}")
            continue
        if key in ("epsilon", "seed"):
            raise ParameterError(f"--parameters: {key} is set by the experiment (--budgets, --seed)")
        if not any(key in (_accepted(a) or ()) for a in algorithms):
            raise ParameterError(f"--parameters: {key} applies to none of the algorithms {', '.join(algorithms)}")
    for key, value in parameters.items():  # each value recorded as JSON: a name, and a value as written
        for name, item in (value.items() if isinstance(value, Mapping) else [(key, value)]):
            try:
                json.dumps(item, allow_nan=False)
            except (TypeError, ValueError):
                raise ParameterError(f"--parameters: {name} = {short_repr(item)} cannot be recorded "
                                     "(a finite number, a text, true/false or a list of them)") from None
    # Values: build every miner and let it check its own parameters now, not in a run.
    for algorithm in algorithms:
        if _accepted(algorithm) is None:
            continue
        given = parameters_for(algorithm, parameters)
        if is_private(algorithm):
            given["epsilon"] = budgets[0].epsilon
        try:
            make_miner(algorithm, **given)  # Miner.check_parameters: every value and its limit
        except ParameterError as err:
            raise ParameterError(f"--parameters: {algorithm}: {err}") from None
        except (TypeError, ValueError) as err:
            raise ParameterError(f"--parameters: {algorithm}: bad value ({err})") from None


def check_sharded(algorithms: Iterable[str], parameters: Mapping[str, Any]) -> None:
    """Refuse, in one line, an algorithm that cannot run on a sharded engine (before anything is read).

    A miner runs sharded when it counts only through an engine (its
    ``counts_through_engine``, asked of the miner built with the experiment's
    parameters); the python-clired baselines never do.

    Examples
    --------
    >>> check_sharded(["serenade-es", "alt-expm"], {})
    >>> check_sharded(["serenade-es", "clired-splitt"], {})
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: clired-splitt does not run on --engine ray yet (...)
    """
    from dprm.mining import make_miner, sharded_algorithms

    for algorithm in algorithms:
        sharded = False
        if _accepted(algorithm) is not None:
            given = parameters_for(algorithm, parameters)
            if is_private(algorithm):
                given["epsilon"] = 1.0  # any budget: it does not decide where the miner counts
            sharded = bool(getattr(make_miner(algorithm, **given), "counts_through_engine", False))
        if not sharded:
            raise ParameterError(f"{algorithm} does not run on --engine ray yet "
                                 f"({', '.join(sharded_algorithms())} do)")


def run_seed(master_seed: int, algorithm: str, epsilon: str, run: int) -> int:
    """The seed of one run: a 63-bit hash of the master seed and the run's identity.

    It depends only on ``(master_seed, algorithm, epsilon label, run)``, so adding
    algorithms or budgets to an experiment leaves the other runs' seeds unchanged.

    Examples
    --------
    >>> run_seed(7, "alt-expm", "1", 0) == run_seed(7, "alt-expm", "1", 0)
    True
    >>> len({run_seed(7, "alt-expm", "1", r) for r in range(100)})
    100
    >>> run_seed(7, "alt-expm", "1", 0) != run_seed(8, "alt-expm", "1", 0)
    True
    >>> 0 <= run_seed(7, "alt-expm", "0.1", 3) < 2**63
    True
    """
    key = f"dprm-experiment/{int(master_seed)}/{algorithm}/{epsilon}/{int(run)}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") >> 1
