"""Reading a run's redescriptions document for a report or an experiment: the spec's checks and dprm's.

:func:`read_run_document` is the one reader of ``dprm report --run FILE``, of the
experiment report's privacy table and of ``dprm evaluate`` resuming an experiment
(its ``runs/ALGORITHM/EPSILON/RUN.json``). It reads the file with
:func:`dprm.queries.read_document` (UTF-8, a byte-order mark read past; no NaN, no
repeated key; the spec's form, the privacy block consistent with itself and with
the parameters, every statistic in its range), then checks what dprm knows about its
own runs (:func:`check_run_document`):

- ``privacy.epsilon`` is a budget the miners take (0.0001 to 10,000) or, for a run
  that is not private, null or 0;
- ``privacy.guarantee`` claims no more than the ledger's mechanisms guarantee
  (:func:`dprm.privacy.ledger_guarantee`: a Metropolis–Hastings chain holds only
  upon convergence, a float64 Gumbel selection is a floating-point selection);
- a non-private algorithm's run (``cartwheels``, ``reremi``, the python-clired
  baselines) says ``none``;
- under ``runs/ALGORITHM/`` the document is a run of that algorithm;
- where the document states the number of rows its counts are bounded by, no count
  of a redescription (``noisy``'s supports, intersection, union) exceeds it
  (:func:`stated_rows`);
- the ``run`` block ``dprm evaluate`` writes beside a run (when there is one) is an
  object whose fields, where present, have their types and ranges: ``run``,
  ``seed``, ``master_seed``, ``rows`` whole numbers; ``seconds`` and ``peak_mb``
  finite numbers >= 0 (``peak_mb`` within a 64-bit address space); ``epsilon`` null or
  a positive number, ``epsilon_label`` its text; ``algorithm`` the document's;
  ``status`` ``ok``; ``returned`` and ``kept`` the numbers of redescriptions listed and
  of those not pruned (:func:`_check_run_block`).

A private run's released counts are not bounded so: their noise may take them past
the number of rows, as it may the rows' noisy count they are clipped to. (The
counts' consistency among themselves, an intersection within each support, which
the clipping keeps, is checked for every document by the reader,
:meth:`dprm.queries.RedescriptionStats.from_json`.)

Any of these is refused in one line naming the file and what is inconsistent.
"""

from __future__ import annotations

import os
from typing import Any

from dprm.errors import DprmError, short_repr
from dprm.json_values import finite_number
from dprm.queries import Redescription, read_document, run_budget

__all__ = ["check_run_document", "read_run_document", "stated_rows"]

#: The counts of a ``noisy`` block, each bounded by the rows where their number is stated.
_COUNTS: tuple[str, ...] = ("support_left", "support_right", "intersection", "union")
#: How far, relative to the rows, a count may exceed them: float rounding (a clipped union is ``sL + sR - inter``).
_ROW_TOL = 1e-9
#: The run block's fields that are whole numbers >= 0.
_RUN_WHOLE: tuple[str, ...] = ("run", "seed", "master_seed", "rows", "returned", "kept")
#: The run block's fields that are texts.
_RUN_TEXTS: tuple[str, ...] = ("algorithm", "status", "message", "epsilon_label", "noise", "engine")
#: The largest peak memory a run can have had, in MB (``ru_maxrss``): a 64-bit address space, 2^64 bytes.
_MAX_PEAK_MB = float(2 ** 44)


def read_run_document(path: str | os.PathLike, *, algorithm: str | None = None,
                      ) -> tuple[dict[str, Any], list[Redescription]]:
    """Read a run's document and refuse one dprm could not have written (see the module docstring).

    Parameters
    ----------
    path : str or PathLike
        The document (``dprm.redescriptions/1``).
    algorithm : str, optional
        The algorithm the document must be a run of (the experiment's directory
        ``runs/ALGORITHM/`` it was found in).

    Returns
    -------
    doc : dict
        The decoded document.
    redescriptions : list of Redescription
        Its redescriptions.

    Raises
    ------
    DprmError
        One line naming the file and the first thing that is wrong.
    """
    source = os.fspath(path)
    doc, redescriptions = read_document(source)
    check_run_document(doc, source, algorithm=algorithm)
    return doc, redescriptions


def check_run_document(doc: dict[str, Any], source: str, *, algorithm: str | None = None) -> None:
    """Refuse a (spec-valid) document whose claims dprm's own runs contradict.

    Parameters
    ----------
    doc : dict
        A document :func:`dprm.queries.document_redescriptions` accepted.
    source : str
        Starts the message (the file's name).
    algorithm : str, optional
        The algorithm the document must be a run of.

    Raises
    ------
    DprmError
        The first contradiction, e.g. ``run.json: privacy.guarantee is 'pure-dp', more than its
        ledger's releases guarantee ('pure-dp-on-mcmc-convergence': ...)``.

    Examples
    --------
    >>> ledger = [{"step": "sampleTreePair#1", "mechanism": "exponential (MCMC)", "epsilon": 1.0}]
    >>> doc = {"algorithm": "mcmc-tree-pair", "parameters": {}, "privacy": {
    ...     "epsilon": 1.0, "neighbouring": "add-remove-one-row", "guarantee": "pure-dp-on-mcmc-convergence",
    ...     "private": True, "reasons": [], "ledger": ledger}}
    >>> check_run_document(doc, "run.json", algorithm="mcmc-tree-pair")
    >>> check_run_document(doc, "run.json", algorithm="serenade-es")
    Traceback (most recent call last):
    ...
    dprm.errors.DprmError: run.json: algorithm is 'mcmc-tree-pair', but the document is under runs/serenade-es/ (a \
run of another algorithm)
    >>> doc["privacy"]["guarantee"] = "pure-dp"
    >>> check_run_document(doc, "run.json")
    Traceback (most recent call last):
    ...
    dprm.errors.DprmError: run.json: privacy.guarantee is 'pure-dp', more than the ledger's releases guarantee \
('pure-dp-on-mcmc-convergence': exponential (MCMC))
    """
    from dprm.evaluation.algorithms import is_private, known_algorithms
    from dprm.privacy import claims_more, ledger_guarantee, mechanism_guarantee
    from dprm.privacy.budget import check_epsilon_range

    name = doc["algorithm"]
    if algorithm is not None and name != algorithm:
        raise DprmError(f"{source}: algorithm is {short_repr(name)}, but the document is under runs/{algorithm}/ "
                        "(a run of another algorithm)")
    privacy = doc["privacy"]
    guarantee, private = privacy["guarantee"], privacy["private"]
    if private and name in known_algorithms() and not is_private(name):
        raise DprmError(f"{source}: privacy.guarantee is {guarantee!r}, but {name} is not a private algorithm "
                        "(its guarantee is 'none')")
    bound = ledger_guarantee(privacy["ledger"])
    if claims_more(guarantee, bound):
        weaker = sorted({e["mechanism"] for e in privacy["ledger"]
                         if claims_more(guarantee, mechanism_guarantee(e["mechanism"]))})
        raise DprmError(f"{source}: privacy.guarantee is {guarantee!r}, more than the ledger's releases guarantee "
                        f"({bound!r}: {', '.join(weaker)})")
    _check_run_block(doc, source)
    _check_row_counts(doc, source)
    epsilon = run_budget(privacy)
    if epsilon is None or (epsilon == 0 and not private):
        return
    check_epsilon_range(epsilon, f"{source}: privacy.epsilon")


def stated_rows(doc: dict[str, Any]) -> tuple[int, str] | None:
    """The number of rows a (spec-valid) document states its counts are bounded by, and where; else None.

    - ``run.rows`` (the data's rows, which ``dprm evaluate`` writes beside each run)
      of a non-private algorithm's run: its counts are exact on those rows. A private
      algorithm's released counts are noisy (and a synthetic-data baseline counts
      synthetic rows): no bound.
    - ``parameters.rows`` of a run with ``parameters.data_size`` ``'public'`` (Serenade's
      public data size): its counts are clipped to it.

    Examples
    --------
    >>> stated_rows({"algorithm": "cartwheels", "parameters": {}, "run": {"rows": 300}})
    (300, 'run.rows, the rows cartwheels counted exactly')
    >>> stated_rows({"algorithm": "alt-expm", "parameters": {}, "run": {"rows": 300}}) is None   # noisy counts
    True
    >>> stated_rows({"algorithm": "serenade-es", "parameters": {"data_size": "public", "rows": 250}})
    (250, "parameters.rows, with data_size 'public'")
    """
    from dprm.evaluation.algorithms import is_private, known_algorithms

    def count(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0

    parameters, name = doc["parameters"], doc["algorithm"]
    if parameters.get("data_size") == "public" and count(parameters.get("rows")):
        return parameters["rows"], "parameters.rows, with data_size 'public'"
    run = doc.get("run")
    if isinstance(run, dict) and count(run.get("rows")) and name in known_algorithms() and not is_private(name):
        return run["rows"], f"run.rows, the rows {name} counted exactly"
    return None


def _check_row_counts(doc: dict[str, Any], source: str) -> None:
    """Refuse a redescription's count above the rows the document states (:func:`stated_rows`)."""
    stated = stated_rows(doc)
    if stated is None:
        return
    rows, where = stated
    for i, redescription in enumerate(doc["redescriptions"]):
        for key in _COUNTS:
            value = redescription["noisy"][key]
            if value > rows + _ROW_TOL * max(1, rows):
                raise DprmError(f"{source}: redescriptions[{i}].noisy.{key}: {short_repr(value)} is more than the "
                                f"{rows:,} rows of the data ({where})")


def _check_run_block(doc: dict[str, Any], source: str) -> None:
    """Refuse a ``run`` block (what ``dprm evaluate`` writes beside a run) with a field of another type or range.

    Its numbers go into ``runs.csv`` as the run's: ``kept`` 99 of 3 redescriptions, a
    negative time or row count, a peak of 1e300 MB. Fields that are absent are not asked for.

    Examples
    --------
    >>> doc = {"algorithm": "alt-expm", "redescriptions": [{"pruned": False}, {"pruned": True}],
    ...        "run": {"returned": 2, "kept": 1, "seconds": 0.5, "rows": 300}}
    >>> _check_run_block(doc, "run.json")
    >>> doc["run"]["kept"] = 99
    >>> _check_run_block(doc, "run.json")
    Traceback (most recent call last):
    ...
    dprm.errors.DprmError: run.json: run.kept is 99, but 1 of the document's 2 redescriptions are kept (not pruned)
    """
    if "run" not in doc:
        return
    run = doc["run"]
    if not isinstance(run, dict):
        raise DprmError(f"{source}: run must be a JSON object (the run block dprm evaluate writes), not "
                        f"{_json_repr(run)}")
    for key in _RUN_WHOLE:
        value = run.get(key)
        if key in run and not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            raise DprmError(f"{source}: run.{key} must be a whole number >= 0, not {_json_repr(value)}")
    for key in ("seconds", "peak_mb"):
        value = run.get(key)
        if key in run and not (finite_number(value) and value >= 0):
            raise DprmError(f"{source}: run.{key} must be a finite number >= 0, not {_json_repr(value)}")
    if run.get("peak_mb", 0) > _MAX_PEAK_MB:
        raise DprmError(f"{source}: run.peak_mb is {short_repr(run['peak_mb'])}, more memory than a 64-bit "
                        f"address space holds ({_MAX_PEAK_MB:.0f} MB)")
    for key in _RUN_TEXTS:
        if key in run and not isinstance(run[key], str):
            raise DprmError(f"{source}: run.{key} must be a text, not {_json_repr(run[key])}")
    epsilon = run.get("epsilon")
    if epsilon is not None and not (finite_number(epsilon) and epsilon > 0):
        raise DprmError(f"{source}: run.epsilon must be a positive number or null, not {_json_repr(epsilon)}")
    if "epsilon_label" in run and "epsilon" in run:
        from dprm.evaluation.budgets import epsilon_label

        if run["epsilon_label"] != epsilon_label(epsilon):
            raise DprmError(f"{source}: run.epsilon_label is {short_repr(run['epsilon_label'])}, but run.epsilon "
                            f"{short_repr(epsilon)} is written {epsilon_label(epsilon)!r}")
    if "algorithm" in run and run["algorithm"] != doc["algorithm"]:
        raise DprmError(f"{source}: run.algorithm is {short_repr(run['algorithm'])}, but the document's algorithm is "
                        f"{short_repr(doc['algorithm'])}")
    if "status" in run and run["status"] != "ok":
        raise DprmError(f"{source}: run.status is {short_repr(run['status'])}, but a run's document is written only "
                        "when it finished ('ok')")
    listed = doc["redescriptions"]
    kept = sum(not entry.get("pruned", False) for entry in listed)
    if "returned" in run and run["returned"] != len(listed):
        raise DprmError(f"{source}: run.returned is {run['returned']}, but the document lists {len(listed)} "
                        "redescriptions")
    if "kept" in run and run["kept"] != kept:
        raise DprmError(f"{source}: run.kept is {run['kept']}, but {kept} of the document's {len(listed)} "
                        "redescriptions are kept (not pruned)")


def _json_repr(value: Any) -> str:
    """A value as the document writes it, for a message: ``null``, ``true``, a text quoted, a number as is."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    return short_repr(value)
