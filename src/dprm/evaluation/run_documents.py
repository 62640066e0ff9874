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
  (:func:`stated_rows`).

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
from dprm.queries import Redescription, read_document, run_budget

__all__ = ["check_run_document", "read_run_document", "stated_rows"]

#: The counts of a ``noisy`` block, each bounded by the rows where their number is stated.
_COUNTS: tuple[str, ...] = ("support_left", "support_right", "intersection", "union")
#: How far, relative to the rows, a count may exceed them: float rounding (a clipped union is ``sL + sR - inter``).
_ROW_TOL = 1e-9


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
