"""ISON's TPR / FPR on the differentially private estimate, by structure and ε, against FP-growth.

The datasets are those of ``quality_itemsets_defaults.py`` (UCI mushroom, vote,
tic-tac-toe; IBM-like transactions of 20,000 rows). Each is fitted by
:func:`dprm.itemsets.private.fit_private_estimator` with its categories declared
(read off the file: the stand-in for the owner's declaration), for each structure
(``parents``: conditionals over parents chosen by the exponential mechanism, the
order chosen too; ``dp-trees``: dprm's DP decision trees on a random order), each ε
and each seed (seeded noise: reproducible, so these runs are not private releases),
and mined by ISON at each θ. The ledger of every fit is checked to add up to ε.

``--methods frequent-items,chain`` compares the private methods of the parents
structure (``private_method=``; ``frequent-items`` releases one-way histograms first
and the chain over the domains of the items that can reach θ, so it is fitted once
per θ). ``nmes`` is the public NMES 1988 table's categorical columns (4,406 rows ×
10: health, chronic, adl, region, afam, gender, married, employed, insurance,
medicaid; ``../shared/data/nmes1988/left.csv``); ``rwas`` the public RWAS survey's
background columns (9,881 rows × 10: education, urban, gender, engnat, hand, religion,
orientation, race, voted, married; ``../shared/data/rwas/left.csv``).

``--methods basis`` adds the PrivBasis-style direct release (``private_method="basis"``:
noisy one-way, pair and basis histograms, supports summed from the bases' cells; fitted
once per θ); its itemsets are those :meth:`BasisRelease.named_itemsets` lists.

``--methods auto`` adds ``private_method="auto"`` (items first, then the basis release or
the chain, chosen on the items' noisy counts; the method column says which).

``--methods mst,aim`` adds the DP synthetic-data methods (``private_method="mst"`` /
``"aim"``: dpmm's MST or AIM in its own environment, ``DPRM_DPMM_PYTHON``, then
FP-growth on the synthetic rows at every θ; one synthetic table per ε and seed), side
by side with the chain's; ``--synthetic-timeout`` caps each synthesizer run (a run past
it prints dpmm's message instead of rates). For them the ``fit cpu`` column adds the
synthesizer's wall seconds (its own process) to this process's CPU seconds.

Usage::

    python benchmarks/quality_itemsets_private.py [--datasets mushroom,vote,tic-tac-toe,ibm,nmes]
        [--structures parents,dp-trees] [--methods chain] [--epsilons 0.3,1,3] [--thetas 0.2,0.3] [--seeds 0,1,2]
"""

from __future__ import annotations

import argparse
import math
import warnings

from dprm.errors import DprmError
from dprm.itemsets.ground_truth import frequent_itemsets, itemset_rates
from dprm.itemsets.ison import run_ison
from dprm.itemsets.private import fit_private_estimator

from quality_itemsets_defaults import UCI, cpu  # noqa: E402 - the benchmarks' own helpers (same folder)
from quality_itemsets_defaults import load as load_default  # noqa: E402

NMES_COLUMNS = ["health", "chronic", "adl", "region", "afam", "gender", "married", "employed", "insurance", "medicaid"]
#: The RWAS survey's background columns (``../shared/data/rwas/left.csv``, 9,881 rows; codes as
#: text, an unanswered question its own category ""); 87 frequent itemsets at θ = 0.3, sizes 1 – 4.
RWAS_COLUMNS = ["education", "urban", "gender", "engnat", "hand", "religion", "orientation", "race", "voted",
                "married"]


def load(name: str, stream_rows: int):
    """A dataset as a text frame (``nmes`` / ``rwas``: the NMES 1988 / RWAS tables' categorical columns)."""
    import pandas as pd

    if name == "nmes":
        return pd.read_csv(UCI.parent / "nmes1988" / "left.csv", dtype=str, keep_default_na=False)[NMES_COLUMNS]
    if name == "rwas":
        return pd.read_csv(UCI.parent / "rwas" / "left.csv", dtype=str, keep_default_na=False)[RWAS_COLUMNS]
    return load_default(name, stream_rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="mushroom,vote,tic-tac-toe,ibm")
    parser.add_argument("--structures", default="parents,dp-trees")
    parser.add_argument("--epsilons", default="0.3,1,3")
    parser.add_argument("--thetas", default="0.2,0.3")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--methods", default="chain", help="private methods of the parents structure "
                                                           "(chain, frequent-items, basis, auto, mst, aim)")
    parser.add_argument("--synthetic-timeout", type=float, default=1800.0, help="seconds per mst / aim run")
    parser.add_argument("--max-parents", default="default", help="parents per variable of the parents structure "
                                                           "(comma-separated to compare: 1 is a Chow-Liu-like tree; "
                                                           "default: the method's)")
    args = parser.parse_args()
    thetas = [float(t) for t in args.thetas.split(",")]
    print(f"{'dataset':>12} {'structure':>9} {'method':>14} {'par':>3} {'eps':>5} {'seed':>4} {'fit cpu':>7} "
          f"{'theta':>5} {'true':>6} {'found':>6} {'TPR':>6} {'FPR':>6}", flush=True)
    for name in args.datasets.split(","):
        data = load(name, 0)
        domains = {c: sorted(data[c].unique()) for c in data.columns}
        truths = {theta: frequent_itemsets(data, theta) for theta in thetas}
        variants = [(s, m, p) for s in args.structures.split(",")
                    for m in (args.methods.split(",") if s == "parents" else ["chain"])
                    for p in (args.max_parents.split(",") if s == "parents" else ["default"])]
        for structure, method, parents in variants:
            for eps in (float(e) for e in args.epsilons.split(",")):
                for seed in (int(s) for s in args.seeds.split(",")):
                    for theta in thetas:
                        one_fit = method not in ("frequent-items", "basis", "auto")  # one chain / synthetic table serves every theta
                        if one_fit and theta != thetas[0]:
                            continue
                        started = cpu()
                        try:
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore", UserWarning)
                                fit = fit_private_estimator(
                                    data, eps, domains=domains, structure=structure, random_state=seed,
                                    max_parents=None if parents == "default" else int(parents),
                                    private_method=method,
                                    min_support=theta if method in ("frequent-items", "basis", "auto") else None,
                                    synthetic_timeout=args.synthetic_timeout)
                        except DprmError as error:
                            print(f"{name:>12} {structure:>9} {method:>14} {'':>3} {eps:5g} {seed:4d} "
                                  f"{cpu() - started:7.2f} {error}", flush=True)
                            continue
                        seconds = cpu() - started + (fit.parameters.get("synthesizer_seconds") or 0.0)
                        assert math.isclose(sum(e["epsilon"] for e in fit.privacy["ledger"]), eps)
                        label = method if method != "auto" else f"auto:{fit.parameters['auto_choice']}"
                        for mined in (thetas if one_fit else [theta]):
                            if fit.bases is not None:  # the itemsets listed from the released bases
                                reported = [s["items"] for s in fit.bases.named_itemsets(mined)]
                            elif fit.synthetic is not None:  # FP-growth on the released synthetic rows
                                reported = list(frequent_itemsets(fit.synthetic, mined))
                            else:
                                reported = run_ison(fit.estimator, mined, max_seconds=args.max_seconds).itemsets
                            r = itemset_rates(reported, truths[mined])
                            print(f"{name:>12} {structure:>9} {label:>14} {fit.parameters.get('max_parents', 0):3d} "
                                  f"{eps:5g} {seed:4d} {seconds:7.2f} {mined:5.2f} {r.n_true:6d} {r.n_reported:6d} "
                                  f"{r.tpr:6.3f} {r.fpr:6.3f}", flush=True)

if __name__ == "__main__":
    main()
