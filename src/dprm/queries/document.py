"""The redescriptions document (format ``dprm.redescriptions/1``): build, write, read.

Writing is atomic: the JSON goes to a temporary file in the target's directory,
is flushed to disk, and replaces the target with :func:`os.replace`, so a reader
sees the old file or the new one, never half of it. Numbers must be finite (JSON
has no NaN): an unknown value is ``null`` or absent.

Reading validates the document and reports the first problem in one line naming
the file and the place, e.g. ``out.json: redescriptions[3].left: unknown key 'foo'``.
Unknown top-level keys are kept (room for metadata); inside queries nothing
unknown is accepted.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from dprm.errors import DprmError, short_repr, short_text
from dprm.files import write_atomic
from dprm.json_values import finite_number, no_duplicate_keys
from dprm.queries.redescription import Redescription

__all__ = ["FORMAT", "GUARANTEES", "NEIGHBOURING", "PRIVACY_KEYS", "valid_guarantee", "check_privacy_block",
           "check_run_parameters", "run_budget", "explain_guarantee", "make_document", "write_document",
           "read_document", "document_redescriptions"]

#: The value of the document's ``format`` key.
FORMAT = "dprm.redescriptions/1"

#: The allowed bases of ``privacy.guarantee``; a base other than ``none`` may carry
#: qualifiers after ``"; "`` (the spec: e.g. ``pure-dp; floating-point selection``).
#: ``approx-dp`` is (ε, δ)-DP, with ``privacy.delta``: only the DP synthetic-data
#: baseline of ``dprm evaluate`` (:mod:`dprm.evaluation.synthetic`) writes it.
GUARANTEES: tuple[str, ...] = ("pure-dp", "pure-dp-on-mcmc-convergence", "approx-dp", "none")

#: The one ``privacy.neighbouring`` of the spec: datasets differ by one row (one entity, both views).
NEIGHBOURING = "add-remove-one-row"

#: How closely the ledger's epsilons must add up to ``privacy.epsilon`` (written as floats, summed with
#: :func:`math.fsum`): relative, and absolute for a budget near 0.
_REL_TOL, _ABS_TOL = 1e-9, 1e-12


def valid_guarantee(label: object) -> bool:
    """Whether ``label`` is a ``privacy.guarantee`` the spec allows: a base, then qualifiers.

    Readers accept any non-empty qualifier text (the spec names examples, not a closed
    list); :mod:`dprm.privacy.accountant` writes only the ones it knows.

    Examples
    --------
    >>> valid_guarantee("pure-dp"), valid_guarantee("pure-dp-on-mcmc-convergence; data-dependent stop")
    (True, True)
    >>> valid_guarantee("none; floating-point selection"), valid_guarantee("pure-dp;"), valid_guarantee(1)
    (False, False, False)
    """
    if not isinstance(label, str):
        return False
    base, *qualifiers = label.split("; ")
    if base not in GUARANTEES or (base == "none" and qualifiers):
        return False
    return all(q.strip() == q and q and ";" not in q for q in qualifiers)


_BASE_MEANINGS = {
    "pure-dp": "ε-differentially private: whether or not any one person's row is in the data changes the "
               "probability of any output by a factor of at most e^ε; every release was an exact mechanism "
               "on a secure random source.",
    "pure-dp-on-mcmc-convergence": "ε-differentially private as far as the Markov chains that chose the trees "
                                   "had converged to the exponential mechanism they sample; a finite chain "
                                   "carries no formal guarantee, the other releases are exact.",
    "approx-dp": "(ε, δ)-differentially private (δ is privacy.delta): whether or not any one person's row is "
                 "in the data changes the probability of any output by a factor of at most e^ε, except with "
                 "probability at most δ.",
    "none": "Not differentially private (see the reasons): the values may reveal individual rows.",
}
#: The base sentence's claim of exactness, and what it says instead beside "floating-point selection".
_EXACT_CLAUSES = {"pure-dp": "every release was an exact mechanism on a secure random source.",
                  "pure-dp-on-mcmc-convergence": "the other releases are exact."}
_FLOAT_CLAUSES = {"pure-dp": "every release used a secure random source.",
                  "pure-dp-on-mcmc-convergence": "the other releases used a secure random source."}
_QUALIFIER_MEANINGS = {
    "floating-point selection": "Some selections used floating-point random keys, which the proofs of "
                                "exact mechanisms do not cover.",
    "data-dependent stop": "The chains stopped when their scores settled, a rule that itself depends on "
                           "the data.",
}


def explain_guarantee(label: str) -> str:
    """The meaning of a ``privacy.guarantee`` label in a sentence or two, for people.

    Examples
    --------
    >>> explain_guarantee("pure-dp").split(":")[0]
    'ε-differentially private'
    >>> explain_guarantee("pure-dp-on-mcmc-convergence; data-dependent stop").endswith("depends on the data.")
    True
    >>> "was an exact mechanism" in explain_guarantee("pure-dp; floating-point selection")   # not claimed, then taken back
    False
    >>> explain_guarantee("approximately private")
    'Not a guarantee label of the format (dprm.redescriptions/1).'
    """
    if not valid_guarantee(label):
        return f"Not a guarantee label of the format ({FORMAT})."
    base, *qualifiers = label.split("; ")
    meaning = _BASE_MEANINGS[base]
    if "floating-point selection" in qualifiers:  # then not every release was exact: say so once, not twice
        meaning = meaning.replace(_EXACT_CLAUSES.get(base, ""), _FLOAT_CLAUSES.get(base, ""))
    parts = [meaning]
    parts += [_QUALIFIER_MEANINGS.get(q, f"Caveat: {q}.") for q in qualifiers]
    return " ".join(parts)


def make_document(
    algorithm: str, parameters: dict, privacy: dict, redescriptions: list[Redescription]
) -> dict:
    """The document dict of the spec, ready for :func:`write_document`.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral, Redescription, RedescriptionStats
    >>> r = Redescription(BooleanLiteral("a"), BooleanLiteral("b"), RedescriptionStats.from_counts(3, 4, 2))
    >>> privacy = {"epsilon": None, "neighbouring": "add-remove-one-row", "guarantee": "none", "private": False,
    ...            "reasons": ["greedy is not a private algorithm"], "ledger": []}
    >>> doc = make_document("greedy", {"depth": 2}, privacy, [r])
    >>> doc["format"], len(doc["redescriptions"]), doc["redescriptions"][0]["noisy"]["jaccard"]
    ('dprm.redescriptions/1', 1, 0.4)
    """
    doc = {
        "format": FORMAT,
        "algorithm": algorithm,
        "parameters": dict(parameters),
        "privacy": dict(privacy),
        "redescriptions": [r.to_json() if isinstance(r, Redescription) else r for r in redescriptions],
    }
    document_redescriptions(doc, source="document")  # validate now, not when it is read back
    return doc


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _encode(doc: dict, name: str) -> str:
    try:
        return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False, default=_jsonable) + "\n"
    except ValueError as err:  # NaN or infinity somewhere
        raise DprmError(f"{name}: cannot write a number that is not finite ({err})") from None
    except TypeError as err:
        raise DprmError(f"{name}: cannot write {err}") from None


def write_document(doc: dict, path: str | os.PathLike, *, validate: bool = True) -> None:
    """Validate ``doc`` and write it to ``path`` atomically (UTF-8, indented JSON).

    A new file gets mode 0666 less the umask; an existing file keeps its mode
    (:func:`dprm.files.write_atomic`). ``validate=False``
    skips the validation for a document :func:`make_document` has just made (and
    validated): on MAMMAL that is about 0.02 s of a run.

    Raises
    ------
    DprmError
        When the document is invalid, holds a non-finite number, or cannot be written.
    """
    name = os.fspath(path)
    if validate:
        document_redescriptions(doc, source=name)
    text = _encode(doc, name)
    try:
        write_atomic(Path(name), text)
    except OSError as err:
        raise DprmError(f"{name}: cannot write: {err.strerror or err}") from None


def document_redescriptions(doc: Any, *, source: str = "document") -> list[Redescription]:
    """Validate a decoded document and return its redescriptions.

    ``source`` starts every error message (a file name, typically).
    """
    if not isinstance(doc, dict):
        raise DprmError(f"{source}: the document must be a JSON object")
    for key in ("format", "algorithm", "parameters", "privacy", "redescriptions"):
        if key not in doc:
            raise DprmError(f"{source}: missing key {key!r}")
    if doc["format"] != FORMAT:
        raise DprmError(f"{source}: format is {doc['format']!r}, expected {FORMAT!r}")
    if not isinstance(doc["algorithm"], str) or not doc["algorithm"]:
        raise DprmError(f"{source}: algorithm must be a non-empty string")
    for key in ("parameters", "privacy"):
        if not isinstance(doc[key], dict):
            raise DprmError(f"{source}: {key} must be a JSON object")
    check_privacy_block(doc["privacy"], source)
    check_run_parameters(doc["parameters"], doc["privacy"], source)
    if not isinstance(doc["redescriptions"], list):
        raise DprmError(f"{source}: redescriptions must be a list")
    return [
        Redescription.from_json(obj, where=f"{source}: redescriptions[{i}]")
        for i, obj in enumerate(doc["redescriptions"])
    ]


#: The keys of the spec's ``privacy`` block, each required (``delta`` besides, for ``approx-dp``).
PRIVACY_KEYS: tuple[str, ...] = ("epsilon", "neighbouring", "guarantee", "private", "reasons", "ledger")

#: The keys every ``privacy.ledger`` entry has (an entry may carry more, e.g. ``delta``).
LEDGER_KEYS: tuple[str, ...] = ("step", "mechanism", "epsilon")


def check_privacy_block(privacy: dict, source: str) -> None:
    """Refuse a ``privacy`` block that does not follow the spec, in one line naming the key.

    Every key of :data:`PRIVACY_KEYS` is required with its type: ``epsilon`` a finite
    number >= 0 (``null`` only with an empty ledger: a non-private baseline that spent
    nothing), ``neighbouring`` the spec's one relation (:data:`NEIGHBOURING`),
    ``guarantee`` a label of :func:`valid_guarantee`, ``private`` true or false,
    ``reasons`` a list of strings, ``ledger`` a list of objects each with a non-empty
    ``step`` and ``mechanism`` and an ``epsilon`` >= 0. ``delta``, required by
    ``approx-dp`` (and given with ``approx-dp`` or ``none`` only), is a number in [0, 1];
    ``unspent``, where given, a finite number >= 0.
    Then the spec's invariants:

    - ``private`` is true exactly when ``guarantee`` is not ``none``, and a private run
      lists no reason it is not private and at least one release (a guarantee is about
      releases; an empty ledger is no private run);
    - the ledger lists every release, so its epsilons add up to ``epsilon`` (within a
      relative 1e-9: the entries are floats). They add up to less only where the
      unspent rest is stated: ledger + ``unspent`` = ``epsilon``. (dprm's miners write
      ``epsilon`` as what the releases spent, the ledger's sum, and a run that stops
      early states ``unspent`` beside it: :func:`check_run_parameters` checks that
      against the budget asked for.)

    A report that showed a block of another form would state a guarantee the run does
    not have: ``"epsilon": "1"`` beside a ledger of 10,000, ``"private": "yes"`` beside
    ``none``, a ledger entry without ε that no sum counts, a ledger cut to 3 of 8
    releases, or a private label on no release at all.

    Parameters
    ----------
    privacy : dict
        The document's ``privacy`` object.
    source : str
        Starts the message (the file's name, typically).

    Raises
    ------
    DprmError
        The first key that does not conform, e.g.
        ``out.json: privacy.epsilon must be a finite number >= 0, got '1'``.

    Examples
    --------
    >>> block = {"epsilon": 1.0, "neighbouring": "add-remove-one-row", "guarantee": "pure-dp",
    ...          "private": True, "reasons": [], "ledger": [{"step": "a", "mechanism": "m", "epsilon": 1.0}]}
    >>> check_privacy_block(block, "out.json")
    >>> check_privacy_block({**block, "private": "yes"}, "out.json")
    Traceback (most recent call last):
    ...
    dprm.errors.DprmError: out.json: privacy.private must be true or false, got 'yes'
    >>> check_privacy_block({**block, "epsilon": 2.0}, "out.json")
    Traceback (most recent call last):
    ...
    dprm.errors.DprmError: out.json: the ledger's epsilons add up to 1, not privacy.epsilon 2 (a run that \
stops early states the rest as privacy.unspent)
    >>> check_privacy_block({**block, "epsilon": 2.0, "unspent": 1.0}, "out.json")   # stopped early, the rest stated
    """
    where = f"{source}: privacy"
    for key in PRIVACY_KEYS:
        if key not in privacy:
            raise DprmError(f"{where}: missing key {key!r}")
    epsilon, ledger, guarantee, private = (privacy[k] for k in ("epsilon", "ledger", "guarantee", "private"))
    if not isinstance(ledger, list):
        raise DprmError(f"{where}.ledger must be a list of releases, got {short_repr(ledger)}")
    if not (epsilon is None and not ledger) and not (finite_number(epsilon) and epsilon >= 0):
        raise DprmError(f"{where}.epsilon must be a finite number >= 0 (null only with an empty ledger), "
                        f"got {short_repr(epsilon)}")
    if privacy["neighbouring"] != NEIGHBOURING:  # the spec defines one relation; a report would show any text
        raise DprmError(f"{where}.neighbouring is {short_repr(privacy['neighbouring'])}, expected "
                        f"{NEIGHBOURING!r} (the spec's one neighbouring relation)")
    if not valid_guarantee(guarantee):
        raise DprmError(f"{where}.guarantee is {short_repr(guarantee)}, expected one of {', '.join(GUARANTEES)} "
                        "(with qualifiers after '; ')")
    if not isinstance(private, bool):
        raise DprmError(f"{where}.private must be true or false, got {short_repr(private)}")
    reasons = privacy["reasons"]
    if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
        raise DprmError(f"{where}.reasons must be a list of strings, got {short_repr(reasons)}")
    if private != (guarantee.split(";")[0].strip() != "none"):
        raise DprmError(f"{where}.private is {str(private).lower()} but privacy.guarantee is "
                        f"{guarantee!r}; private must be true exactly when the guarantee is not 'none'")
    if private and reasons:
        raise DprmError(f"{where}.reasons lists why the run is not private, but privacy.private is true")
    delta = privacy.get("delta")
    if ("delta" in privacy or guarantee.startswith("approx-dp")) and not (finite_number(delta) and 0 <= delta <= 1):
        raise DprmError(f"{where}.delta must be a number in [0, 1] (required by approx-dp), got {short_repr(delta)}")
    if "delta" in privacy and guarantee.split("; ")[0] not in ("approx-dp", "none"):
        raise DprmError(f"{where}.delta is given, but privacy.guarantee {guarantee!r} is pure ε-DP (δ belongs to "
                        "approx-dp)")
    for i, entry in enumerate(ledger):
        at = f"{where}.ledger[{i}]"
        if not isinstance(entry, dict):
            raise DprmError(f"{at} must be a JSON object, got {short_repr(entry)}")
        for key in LEDGER_KEYS:
            if key not in entry:
                raise DprmError(f"{at}: missing key {key!r}")
        for key in ("step", "mechanism"):
            if not isinstance(entry[key], str) or not entry[key]:
                raise DprmError(f"{at}.{key} must be a non-empty string, got {short_repr(entry[key])}")
        if not (finite_number(entry["epsilon"]) and entry["epsilon"] >= 0):
            raise DprmError(f"{at}.epsilon must be a finite number >= 0, got {short_repr(entry['epsilon'])}")
    if private and not ledger:
        raise DprmError(f"{where}.private is true but privacy.ledger lists no release (a private run spends its "
                        "budget in releases, each listed)")
    unspent = privacy.get("unspent")
    if "unspent" in privacy and not (finite_number(unspent) and unspent >= 0 and epsilon is not None):
        raise DprmError(f"{where}.unspent must be a finite number >= 0 (the budget a run left unspent, beside "
                        f"privacy.epsilon), got {short_repr(unspent)}")
    if epsilon is None:
        return
    total = math.fsum(entry["epsilon"] for entry in ledger)
    if _close(total, epsilon) or (unspent is not None and _close(math.fsum([total, unspent]), epsilon)):
        return
    if unspent is None:
        raise DprmError(f"{source}: the ledger's epsilons add up to {total:g}, not privacy.epsilon {epsilon:g} "
                        "(a run that stops early states the rest as privacy.unspent)")
    raise DprmError(f"{source}: the ledger's epsilons ({total:g}) add up to neither privacy.epsilon {epsilon:g} "
                    f"nor, with privacy.unspent {unspent:g}, to it")


def _close(a: float, b: float) -> bool:
    """Whether two sums of epsilons are equal up to float rounding."""
    return math.isclose(a, b, rel_tol=_REL_TOL, abs_tol=_ABS_TOL)


def run_budget(privacy: dict) -> float | None:
    """The budget a run of this (checked) ``privacy`` block was given; None where it spent nothing.

    ``privacy.epsilon``, plus ``privacy.unspent`` where the ledger adds up to
    ``privacy.epsilon`` (dprm's miners: what the releases spent, then the rest).

    Examples
    --------
    >>> ledger = [{"step": "a", "mechanism": "m", "epsilon": 0.75}]
    >>> run_budget({"epsilon": 0.75, "unspent": 0.25, "ledger": ledger})   # the miners' form
    1.0
    >>> run_budget({"epsilon": 1.0, "unspent": 0.25, "ledger": ledger})    # the spec's other form
    1.0
    >>> run_budget({"epsilon": None, "ledger": []}) is None
    True
    """
    epsilon, unspent = privacy["epsilon"], privacy.get("unspent")
    if epsilon is None or unspent is None or not _close(math.fsum(e["epsilon"] for e in privacy["ledger"]), epsilon):
        return epsilon
    return math.fsum([epsilon, unspent])


def check_run_parameters(parameters: dict, privacy: dict, source: str) -> None:
    """Refuse ``parameters`` that contradict the (checked) ``privacy`` block, in one line naming both.

    - ``parameters.epsilon``, where it is a number and ``privacy.epsilon`` is not null, is
      the run's budget: ``privacy.epsilon``, or ``privacy.epsilon`` + ``privacy.unspent``
      where the ledger adds up to ``privacy.epsilon`` and the rest is stated (dprm's
      miners write what their releases spent as ``privacy.epsilon``, and a run that
      stops early its rest as ``unspent``: ``dprm mine --epsilon 5`` never writes
      ``privacy.epsilon`` 1).
    - ``parameters.seed``, where it is not null, made the run reproducible, so not
      private (the spec: a private algorithm run with a seed says ``none``).

    Examples
    --------
    >>> privacy = {"epsilon": 0.75, "unspent": 0.25, "guarantee": "pure-dp",
    ...            "ledger": [{"step": "a", "mechanism": "m", "epsilon": 0.75}]}
    >>> check_run_parameters({"epsilon": 1.0, "seed": None}, privacy, "out.json")
    >>> check_run_parameters({"epsilon": 5}, privacy, "out.json")
    Traceback (most recent call last):
    ...
    dprm.errors.DprmError: out.json: parameters.epsilon 5 is not the run's budget, privacy.epsilon 0.75 + \
privacy.unspent 0.25 = 1
    >>> check_run_parameters({"seed": 3}, privacy, "out.json")
    Traceback (most recent call last):
    ...
    dprm.errors.DprmError: out.json: parameters.seed is 3: a seeded run is not private, but privacy.guarantee \
is 'pure-dp' (it must be 'none')
    """
    asked, epsilon, budget = parameters.get("epsilon"), privacy["epsilon"], run_budget(privacy)
    if finite_number(asked) and budget is not None and not _close(asked, budget):
        shown = (f"privacy.epsilon {epsilon:g}" if budget == epsilon
                 else f"privacy.epsilon {epsilon:g} + privacy.unspent {privacy['unspent']:g} = {budget:g}")
        raise DprmError(f"{source}: parameters.epsilon {asked:g} is not the run's budget, {shown}")
    seed = parameters.get("seed")
    if seed is not None and privacy["guarantee"] != "none":
        raise DprmError(f"{source}: parameters.seed is {short_repr(seed)}: a seeded run is not private, but "
                        f"privacy.guarantee is {privacy['guarantee']!r} (it must be 'none')")


def _no_constant(token: str) -> Any:
    raise ValueError(f"{token} is not allowed (numbers must be finite)")


class _HugeInteger(ValueError):
    """An integer of more digits than Python converts by default."""


#: The most digits of an integer in a document: Python's default limit (4300), whatever the process's setting.
_MAX_DIGITS = sys.int_info.default_max_str_digits


def _integer(text: str) -> int:
    """A JSON integer; :class:`_HugeInteger` past :data:`_MAX_DIGITS` digits.

    Python's own error tells the user to call ``sys.set_int_max_str_digits()``; with
    the limit lifted, a huge integer converts in quadratic time.
    """
    digits = len(text.lstrip("-").lstrip("0"))
    if digits > _MAX_DIGITS:
        raise _HugeInteger(f"holds an integer of {digits} digits ({short_text(text)}); no value of a "
                           f"redescriptions document needs more than {_MAX_DIGITS}")
    return int(text)


def read_document(path: str | os.PathLike) -> tuple[dict, list[Redescription]]:
    """Read and validate a redescriptions document.

    Returns
    -------
    doc : dict
        The decoded JSON document.
    redescriptions : list of Redescription
        Its redescriptions, parsed.

    Raises
    ------
    DprmError
        One line naming the file and what is wrong (unreadable, not JSON, NaN,
        duplicate keys, an integer of more than 4300 digits, wrong format, a
        privacy block that contradicts itself or the parameters, malformed
        redescription or query, a statistic outside its range).

    Notes
    -----
    The text is UTF-8; a byte-order mark before it (as some editors on Windows
    write) is read past, as :mod:`dprm.data.types_file` reads past one in a types file.
    """
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8-sig") as fh:  # a byte-order mark is read past, as in a types file
            text = fh.read()
    except OSError as err:
        raise DprmError(f"{name}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise DprmError(f"{name}: not UTF-8 text") from None
    try:
        doc = json.loads(text, parse_constant=_no_constant, parse_int=_integer, object_pairs_hook=no_duplicate_keys)
    except json.JSONDecodeError as err:
        raise DprmError(f"{name}: not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})") from None
    except _HugeInteger as err:
        raise DprmError(f"{name}: {err}") from None
    except ValueError as err:
        raise DprmError(f"{name}: not valid JSON: {err}") from None
    except RecursionError:
        raise DprmError(f"{name}: JSON nested too deeply") from None
    return doc, document_redescriptions(doc, source=name)
