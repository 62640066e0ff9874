"""ISON's TPR / FPR on the differentially private estimate, by structure and ε, against FP-growth.

The datasets are those of ``quality_itemsets_defaults.py`` (UCI mushroom, vote,
tic-tac-toe; IBM-like transactions of 20,000 rows). Each is fitted by
:func:`dprm.itemsets.private.fit_private_estimator` with its categories declared
(read off the file: the stand-in for the owner's declaration), for each structure
(``parents``: conditionals over parents chosen by the exponential mechanism, the
order chosen too; ``dp-trees``: dprm's DP decision trees on a random order), each ε
and each seed (seeded noise: reproducible, so these runs are not private releases),
and mined by ISON at each θ. The ledger of every fit is checked to add up to ε.

Usage::

    python benchmarks/quality_itemsets_private.py [--datasets mushroom,vote,tic-tac-toe,ibm]
        [--structures parents,dp-trees] [--epsilons 0.3,1,3] [--thetas 0.2,0.3] [--seeds 0,1,2]
"""

from __future__ import annotations

import argparse
import math
import warnings

from dprm.itemsets.ground_truth import frequent_itemsets, itemset_rates
from dprm.itemsets.ison import run_ison
from dprm.itemsets.private import fit_private_estimator

from quality_itemsets_defaults import cpu, load  # noqa: E402 - the benchmarks' own helpers (same folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="mushroom,vote,tic-tac-toe,ibm")
    parser.add_argument("--structures", default="parents,dp-trees")
    parser.add_argument("--epsilons", default="0.3,1,3")
    parser.add_argument("--thetas", default="0.2,0.3")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--max-parents", default="2", help="parents per variable of the parents structure "
                                                           "(comma-separated to compare: 1 is a Chow-Liu-like tree)")
    args = parser.parse_args()
    thetas = [float(t) for t in args.thetas.split(",")]
    print(f"{'dataset':>12} {'structure':>9} {'par':>3} {'eps':>5} {'seed':>4} {'fit cpu':>7} {'theta':>5} {'true':>6} "
          f"{'found':>6} {'TPR':>6} {'FPR':>6}", flush=True)
    for name in args.datasets.split(","):
        data = load(name, 0)
        domains = {c: sorted(data[c].unique()) for c in data.columns}
        truths = {theta: frequent_itemsets(data, theta) for theta in thetas}
        variants = [(s, int(p)) for s in args.structures.split(",")
                    for p in (args.max_parents.split(",") if s == "parents" else ["2"])]
        for structure, parents in variants:
            for eps in (float(e) for e in args.epsilons.split(",")):
                for seed in (int(s) for s in args.seeds.split(",")):
                    started = cpu()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", UserWarning)
                        fit = fit_private_estimator(data, eps, domains=domains, structure=structure, random_state=seed,
                                                    max_parents=parents)
                    seconds = cpu() - started
                    assert math.isclose(sum(e["epsilon"] for e in fit.privacy["ledger"]), eps)
                    for theta in thetas:
                        r = itemset_rates(run_ison(fit.estimator, theta, max_seconds=args.max_seconds).itemsets,
                                          truths[theta])
                        print(f"{name:>12} {structure:>9} {parents:3d} {eps:5g} {seed:4d} {seconds:7.2f} {theta:5.2f} {r.n_true:6d} "
                              f"{r.n_reported:6d} {r.tpr:6.3f} {r.fpr:6.3f}", flush=True)


if __name__ == "__main__":
    main()
