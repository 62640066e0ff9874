"""``dprm itemsets-eval``: the evaluation of ISON (Geilke & Kramer 2017) into a directory.

Runs :func:`dprm.evaluation.itemsets.run_evaluation` and writes into OUT_DIR::

    itemsets_eval.csv, itemsets_eval.json      the tidy table (one row per cell)
    closeness_deviation.csv                    support before / after t-closeness per itemset (Figure 6)
    closeness_singled_out.csv                  itemsets of the smallest quasi-identifier groups (Table II)
    tpr_fpr.png, chains.png, time.png, closeness.png
    report.html                                settings, notes, figures and tables

Every option and the output directory are checked before any data is read; the files
are written all or none at the end (:class:`~dprm.cli.eval_options.ResultFolder`: a new
OUT_DIR appears whole by a rename, an earlier result's folder stays as it was on a
failure). A local evaluation for people who may see the data:
runs are seeded (the DP fits are not private releases) and row counts are shown.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Optional

import typer

from dprm.cli.app import command_app
from dprm.cli.interrupts import terminate_as_interrupt
from dprm.cli.console import console, note, plural
from dprm.cli.eval_options import OutDir, ResultFolder, dataset_names, number_list
from dprm.cli.seeds import check_seed
from dprm.errors import ParameterError

app = command_app()

#: Where the shared data are looked for: $DPRM_DATA_DIR, else this (relative to the working directory).
DEFAULT_DATA_DIR = "../shared/data"
FULL = {"datasets": "mushroom,movielens,ibm", "thetas": "0.1,0.2,0.3", "epsilons": "0.1,1,10",
        "chain_counts": "1,2,3,5", "timing_rows": "10000,100000,1000000", "experiments": "discovery,chains,timing,closeness"}
QUICK = {"datasets": "ibm", "ibm_rows": 3000, "thetas": "0.3", "epsilons": "1", "chain_counts": "1,2", "timing_rows": "1000,4000",
         "experiments": "discovery,chains,timing,closeness"}


@app.command("itemsets-eval")
@terminate_as_interrupt()  # SIGTERM ends the run as Ctrl-C does: "interrupted", 130, nothing written
def itemsets_eval(
    out_dir: OutDir,
    datasets: Optional[str] = typer.Option(
        None, "--datasets", metavar="A,B,...",
        help=f"mushroom, movielens (from --data-dir), ibm (synthetic), or FILE.csv[:Q1+Q2] with quasi-identifiers. "
             f"Default: {FULL['datasets']}."),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", metavar="DIR",
                                            help=f"Folder with uci/ and movielens/. Default: $DPRM_DATA_DIR, else "
                                                 f"{DEFAULT_DATA_DIR}."),
    thetas: Optional[str] = typer.Option(None, "--thetas", metavar="θ,...",
                                         help=f"Minimum supports. Default: {FULL['thetas']}."),
    epsilons: Optional[str] = typer.Option(None, "--epsilons", metavar="ε,...",
                                           help=f"Budgets of the DP estimate. Default: {FULL['epsilons']}."),
    chains: int = typer.Option(3, "--chains", metavar="K", help="Chains of the Hoeffding-tree estimate."),
    chain_counts: Optional[str] = typer.Option(None, "--chain-counts", metavar="K,...",
                                               help=f"Chains of the chains experiment. Default: {FULL['chain_counts']}."),
    chains_theta: float = typer.Option(0.3, "--chains-theta", metavar="θ", help="θ of the chains experiment."),
    delta: float = typer.Option(0.0, "--delta", metavar="δ", help="t-closeness distance allowed."),
    timing_rows: Optional[str] = typer.Option(None, "--timing-rows", metavar="N,...",
                                              help=f"Stream lengths of the timing experiment. Default: "
                                                   f"{FULL['timing_rows']}."),
    ibm_rows: Optional[int] = typer.Option(None, "--ibm-rows", metavar="N",
                                           help="Rows of the synthetic dataset 'ibm' (default 20,000)."),
    experiments: Optional[str] = typer.Option(None, "--experiments", metavar="A,B,...",
                                              help=f"Which to run. Default: {FULL['experiments']}."),
    passes: str = typer.Option("auto", "--passes", metavar="auto|P",
                               help="Passes over each dataset's rows for the online estimate, each in a new random "
                                    "order (auto: the estimator's rule, at least 200,000 rows learned)."),
    grace_period: int = typer.Option(200, "--grace-period", metavar="N", help="Hoeffding trees' grace period."),
    split_confidence: float = typer.Option(1e-7, "--split-confidence", metavar="D",
                                           help="Hoeffding trees' split confidence."),
    max_seconds: float = typer.Option(300.0, "--max-seconds", metavar="S", help="Stop each ISON run after S seconds."),
    seed: int = typer.Option(0, "--seed", metavar="N", help="Master seed (the evaluation is always seeded)."),
    quick: bool = typer.Option(False, "--quick", help="A tiny grid on synthetic data (tests, a smoke run)."),
) -> None:
    """Evaluate ISON against FP-growth: TPR/FPR vs θ (with t-closeness and the DP variant), the number of
    chains, time vs stream length, and the effect of t-closeness on supports (local; not private)."""
    from dprm.evaluation.itemsets import EvalConfig, output_names, render_outputs, resolve_dataset, run_evaluation
    from dprm.itemsets.parameters import parse_passes

    grid = QUICK if quick else FULL
    names = dataset_names(datasets, grid["datasets"])
    theta_values = number_list(thetas or grid["thetas"], "--thetas", float)
    epsilon_values = number_list(epsilons or grid["epsilons"], "--epsilons", float)
    counts = number_list(chain_counts or grid["chain_counts"], "--chain-counts", int)
    rows = number_list(timing_rows or grid["timing_rows"], "--timing-rows", int)
    chosen = [e.strip() for e in (experiments or grid["experiments"]).split(",") if e.strip()]
    ibm_rows = ibm_rows if ibm_rows is not None else grid.get("ibm_rows", 20_000)
    if not 1 <= ibm_rows <= 10_000_000:
        raise ParameterError(f"--ibm-rows must be between 1 and 10,000,000, not {ibm_rows}")
    if not (math.isfinite(max_seconds) and max_seconds > 0):
        raise ParameterError(f"--max-seconds must be positive, not {max_seconds:g}")
    check_seed(seed)
    config_args = dict(thetas=theta_values, epsilons=epsilon_values, chains=chains, chain_counts=counts,
                       chains_theta=chains_theta, delta=delta, timing_rows=rows, max_seconds=max_seconds, seed=seed,
                       passes=parse_passes(passes, option="--passes"), grace_period=grace_period, split_confidence=split_confidence)
    EvalConfig(datasets=[], **config_args).check()  # every setting, before any data is read
    unknown = [e for e in chosen if e not in ("discovery", "chains", "timing", "closeness")]
    if unknown or not chosen:
        raise ParameterError(f"--experiments: choose among discovery, chains, timing, closeness, not {experiments!r}")
    directory = Path(data_dir or os.environ.get("DPRM_DATA_DIR") or DEFAULT_DATA_DIR)

    # the folder: checked before any data is read, written all or none at the end
    folder = ResultFolder(out_dir, "itemsets_eval.json", "dprm itemsets-eval",
                          earlier=set(output_names()).__contains__)
    folder.check(output_names())
    loaded = [resolve_dataset(d, directory, rows=ibm_rows, seed=seed) for d in names]
    config = EvalConfig(datasets=loaded, **config_args)
    from dprm.cli.progress import WorkProgress

    with WorkProgress("cells") as progress:
        result = run_evaluation(config, experiments=chosen, progress=progress)
    rendered = render_outputs(result)
    written = folder.commit({name: rendered[name] for name in output_names()})
    for message in result.notes:
        note(message)
    _print_table(result.table)
    console.print(f"wrote {plural(len(written), 'file')} to {out_dir}: report {out_dir / 'report.html'}",
                  soft_wrap=True)


def _print_table(table: Any) -> None:
    """The cells as plain text columns (a log keeps them whole)."""
    import pandas as pd

    def number(value: Any, fmt: str) -> str:
        return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, fmt)

    shown = pd.DataFrame([{
        "experiment": row["experiment"], "dataset": row["dataset"], "method": row["method"],
        "ε": number(row["epsilon"], "g"), "θ": number(row["theta"], "g"), "K": number(row["chains"], ".0f"),
        "rows": number(row["rows"], ",.0f"), "TPR": number(row["tpr"], ".3f"), "FPR": number(row["fpr"], ".3f"),
        "learn s": number(row["learn_seconds"], ".3g"), "ISON s": number(row["mine_seconds"], ".3g"),
        "FP-growth s": number(row["truth_seconds"], ".3g")} for row in table.to_dict(orient="records")])
    if not shown.empty:
        console.print(shown.to_string(index=False), markup=False, highlight=False, soft_wrap=True)
