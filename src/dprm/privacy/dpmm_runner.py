"""dpmm's synthesizers (MST, AIM) run in their own environment: finding it and running the worker.

dpmm 0.1.9 pins numpy 1.26, pandas 2.1 and OpenDP 0.12, which cannot be installed
beside dprm's (and dpmm does not run on OpenDP 0.16: ``atom_domain`` now needs
``nan=False``, and on SciPy 1.17 its ``lsmr`` call fails). ``make`` builds
``.venv-dpmm`` from ``requirements-dpmm.lock`` (hashes); :func:`dpmm_python` finds it
(``$DPRM_DPMM_PYTHON``, else ``.venv-dpmm`` beside the running environment), and
:func:`run_dpmm` hands it a table of codes through :mod:`dprm.privacy.dpmm_worker`
(run as a script with that Python; it imports nothing of dprm).

Two users: the synthetic-data baseline of ``dprm evaluate``
(:mod:`dprm.evaluation.synthetic`) and the itemsets' ``private_method="mst"`` /
``"aim"`` (:mod:`dprm.itemsets.private_synthetic`). What dpmm guarantees: (ε, δ)-DP
under add-remove-one-row neighbours through its zCDP accounting; the callers charge
their accountant before calling :func:`run_dpmm` and state the guarantee.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from dprm.errors import DprmError

__all__ = ["DPMM_VERSION", "DPMM_PYTHON_VARIABLE", "INSTALL", "SyntheticUnavailable", "dpmm_python", "run_dpmm"]

#: The dpmm release ``requirements-dpmm.lock`` pins.
DPMM_VERSION = "0.1.9"

#: The environment variable naming the Python of dpmm's environment (else ``.venv-dpmm`` beside the running one).
DPMM_PYTHON_VARIABLE = "DPRM_DPMM_PYTHON"

#: How to make the environment (the end of every "missing" message).
INSTALL = ("make .venv-dpmm/.installed (a separate environment from requirements-dpmm.lock), "
           f"or set {DPMM_PYTHON_VARIABLE} to the Python of an environment with dpmm=={DPMM_VERSION}")


class SyntheticUnavailable(DprmError, ImportError):
    """dpmm's environment is missing; the message says how to make it."""


def dpmm_python(purpose: str = "the synthetic-data baseline") -> Path:
    """The Python of dpmm's environment: ``$DPRM_DPMM_PYTHON``, else ``.venv-dpmm`` beside the running environment.

    Raises
    ------
    SyntheticUnavailable
        When neither exists (one line naming ``purpose`` and how to make it).
    """
    given = os.environ.get(DPMM_PYTHON_VARIABLE)
    candidate = Path(given) if given else Path(sys.prefix).parent / ".venv-dpmm" / "bin" / "python"
    if not candidate.is_file():
        raise SyntheticUnavailable(f"{purpose} needs dpmm in its own environment ({candidate} is missing): {INSTALL}")
    return candidate


def run_dpmm(model: str, codes: pd.DataFrame, domain: Mapping[str, int], *, python: Path, work: Path,
             epsilon: float, delta: float, seed: int | None, n_iters: int, timeout: float
             ) -> tuple[pd.DataFrame, dict]:
    """dpmm's ``model`` (``"mst"`` or ``"aim"``) on ``codes`` with ``python``; the synthetic codes and the run's facts.

    ``codes`` (one column per attribute, codes below ``domain``'s sizes) are written to
    ``work``; the worker draws as many rows as the model's own noisy total (the real
    row count is never passed). The caller must have charged ``epsilon`` already.

    Raises
    ------
    DprmError
        dpmm failed or ran past ``timeout`` seconds.
    SyntheticUnavailable
        ``python`` cannot be run.
    """
    codes_path, output = work / "codes.csv", work / "synthetic.csv"
    codes.to_csv(codes_path, index=False)
    output.unlink(missing_ok=True)
    request = {"codes": str(codes_path), "domain": dict(domain), "model": model, "epsilon": epsilon, "delta": delta,
               "seed": seed, "n_iters": n_iters, "output": str(output)}
    (work / "request.json").write_text(json.dumps(request), encoding="utf-8")
    worker = Path(__file__).with_name("dpmm_worker.py")
    try:
        done = subprocess.run([str(python), str(worker), str(work / "request.json")], cwd=work, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise DprmError(f"dpmm {model} did not finish within the timeout of {timeout:g} s") from None
    except OSError as error:
        raise SyntheticUnavailable(f"cannot run {python} ({error.strerror or error}): {INSTALL}") from None
    if done.returncode != 0 or not output.exists():
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise DprmError(f"dpmm {model} failed (exit {done.returncode}): {lines[-1] if lines else 'no message'}")
    facts = json.loads(Path(f"{output}.json").read_text(encoding="utf-8"))
    return pd.read_csv(output, dtype="int64"), facts
