"""dpmm's side of a synthetic table (the baseline's and the itemsets' mst / aim): MST or AIM on a table of codes.

Run by :func:`dprm.privacy.dpmm_runner.run_dpmm` with the Python of the separate environment
that holds dpmm 0.1.9 and its pinned dependencies (``.venv-dpmm``, made by ``make``
from ``requirements-dpmm.lock``): dpmm pins numpy 1.26, pandas 2.1 and OpenDP 0.12,
which cannot live beside dprm's own. It imports nothing of dprm, only the standard
library, numpy, pandas and dpmm, and is run as a script::

    .venv-dpmm/bin/python dpmm_worker.py REQUEST.json

``REQUEST.json`` holds ``codes`` (a CSV file of non-negative integer codes, one
column per attribute, header ``c0, c1, ...``), ``domain`` (``{column: size}``, every
code below its size), ``model`` (``"mst"`` or ``"aim"``), ``epsilon``, ``delta``,
``seed`` (int or null), ``n_iters`` and ``output``. The worker fits the model on the
codes with dpmm's own mechanisms (privacy from dpmm: zCDP Gaussian measurements of
marginals through OpenDP, exponential-mechanism selection, the zCDP ρ of (ε, δ) from
its ``cdp_rho``), draws as many synthetic rows as the model's own noisy total (the
real row count is never passed), and writes them as ``output`` (CSV, same header)
and ``output + ".json"`` (dpmm's version, the seconds, the selected marginals, each measurement's
recorded noise scale).
"""

from __future__ import annotations

import json
import os
import sys
import time
from importlib.metadata import version

# Run as a script, this file's folder (dprm's privacy package) heads sys.path: drop it so
# that none of dprm's module names shadows a module dpmm, numpy or pandas imports.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]


def synthesize(request: dict) -> dict:
    """Fit ``request["model"]`` on the codes and write the synthetic codes; return the run's facts."""
    import numpy as np
    import pandas as pd
    from dpmm.models.aim import AIMGM
    from dpmm.models.mst import MSTGM

    codes = pd.read_csv(request["codes"], dtype="int64")
    domain = {str(k): int(v) for k, v in request["domain"].items()}
    models = {"mst": MSTGM, "aim": AIMGM}
    model = models[request["model"]](epsilon=float(request["epsilon"]), delta=float(request["delta"]),
                                     n_iters=int(request["n_iters"]), n_jobs=1)
    seed = request.get("seed")
    model.set_random_state(np.random.RandomState(None if seed is None else int(seed) % 2**32))
    model.set_domain(domain)
    start = time.perf_counter()
    model.fit(codes)
    synthetic = model.generate()  # as many rows as the model's noisy total
    seconds = time.perf_counter() - start
    synthetic = synthetic[list(codes.columns)].astype("int64")
    synthetic.to_csv(request["output"], index=False)
    cliques = [list(c) for c in (getattr(model.generator, "cliques", None) or [])]
    # The noise scale dpmm records with each measured marginal (AIM: the Gaussian's σ
    # itself; MST records its base σ, which each measurement divides by its weight).
    measures = getattr(model.generator, "measures", None) or []
    measured = [[list(m[3]), float(m[2])] for m in measures]
    facts = {"dpmm_version": version("dpmm"), "seconds": round(seconds, 3), "rows": int(len(synthetic)),
             "cliques": cliques, "measured": measured}
    with open(request["output"] + ".json", "w", encoding="utf-8") as out:
        json.dump(facts, out)
    return facts


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: dpmm_worker.py REQUEST.json", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as source:
        request = json.load(source)
    synthesize(request)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
