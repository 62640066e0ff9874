"""``dprm classify-eval``: the DP decision-tree comparison of Bai et al. (2017) into a directory.

Runs :func:`dprm.evaluation.classification.run_comparison` (repeated stratified
cross-validation of the DP tree at each embedding depth and variant, scikit-learn's
CART and diffprivlib's tree, over ε and the maximum depth; then fit time vs rows) and
writes into OUT_DIR::

    classification.csv, classification.json   the tidy table (one row per cell)
    accuracy_DATASET.png                       accuracy vs maximum depth, a panel per ε
    fit_time.png                               fit seconds vs rows (with the timing experiment)
    report.html                                settings, notes, figures and the table

Every option and the output directory are checked before any data is read; the
files are written all or none at the end (:class:`~dprm.cli.eval_options.ResultFolder`):
a new OUT_DIR appears whole by a rename, or not at all (an error, Ctrl-C or SIGTERM, a
full disk, a kill while the comparison runs); an earlier result's folder stays as it
was on a failure and holds only the new result after a success. This is a local
evaluation for people who may see the data: private methods run with seeded noise,
and every fit spends its ε on its own training fold.
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
from dprm.cli.eval_options import ResultFolder, number_list
from dprm.cli.seeds import check_seed
from dprm.errors import ParameterError

app = command_app()

#: The datasets of the paper (their class columns are known).
DEFAULT_DATASETS = "vote,mushroom,tic-tac-toe"
#: Where the UCI CSV files are looked for: $DPRM_UCI_DIR, else this (relative to the working directory).
DEFAULT_DATA_DIR = "../shared/data/uci"
#: The grid of --quick (tests, a smoke run).
QUICK = {"datasets": "vote", "epsilons": "1", "depths": "1,2", "embedding_depths": "1,whole", "variants": "dprm",
         "folds": 3, "repeats": 1, "timing_rows": "100,200", "timing_depth": 2, "timing_repeats": 1}
#: More accuracy cells than this are not printed (the report has them).
MAX_PRINTED = 60
FULL = {"datasets": DEFAULT_DATASETS, "epsilons": "0.01,0.1,1,10", "depths": "1-10",
        "embedding_depths": "1,2,3,whole", "variants": "dprm,paper", "folds": 10, "repeats": 5,
        "timing_rows": "500,1000,2000,4000,8000", "timing_depth": 5, "timing_repeats": 3}


@app.command("classify-eval")
@terminate_as_interrupt()  # SIGTERM ends the run as Ctrl-C does: "interrupted", 130, nothing written
def classify_eval(
    out_dir: Path = typer.Argument(..., metavar="OUT_DIR", show_default=False,
                                   help="Directory for the table, figures and report (created if needed)."),
    datasets: Optional[str] = typer.Option(
        None, "--datasets", metavar="A,B,...",
        help=f"UCI names ({DEFAULT_DATASETS}) found in --data-dir, or FILE.csv[:TARGET] (target 'class' by "
             f"default). Default: {DEFAULT_DATASETS}."),
    data_dir: Optional[Path] = typer.Option(
        None, "--data-dir", metavar="DIR",
        help=f"Where the UCI CSV files are. Default: $DPRM_UCI_DIR, else {DEFAULT_DATA_DIR}."),
    epsilons: Optional[str] = typer.Option(None, "--epsilons", metavar="E,...",
                                           help=f"Budgets of the private methods. Default: {FULL['epsilons']}."),
    depths: Optional[str] = typer.Option(None, "--depths", metavar="D,... or A-B",
                                         help=f"Maximum depths. Default: {FULL['depths']}."),
    embedding_depths: Optional[str] = typer.Option(
        None, "--embedding-depths", metavar="d,...",
        help=f"Embedding depths of the DP tree ('whole' = the maximum depth, 'auto' = the estimator's default). Default: {FULL['embedding_depths']}."),
    variants: Optional[str] = typer.Option(None, "--variants", metavar="dprm,paper",
                                           help=f"Variants of the DP tree. Default: {FULL['variants']}."),
    baselines: bool = typer.Option(True, "--baselines/--no-baselines",
                                   help="Also scikit-learn's CART (non-private) and diffprivlib's tree."),
    folds: Optional[int] = typer.Option(None, "--folds", metavar="K", help="Folds (default 10)."),
    repeats: Optional[int] = typer.Option(None, "--repeats", metavar="R", help="Repeats of the folds (default 5)."),
    timing: bool = typer.Option(True, "--timing/--no-timing",
                                help="Also fit time vs rows (the paper's Figure 8), on mushroom if given, "
                                     "else on the first dataset."),
    timing_rows: Optional[str] = typer.Option(None, "--timing-rows", metavar="N,...",
                                              help=f"Rows of the fit-time experiment. Default: {FULL['timing_rows']}."),
    seed: Optional[int] = typer.Option(None, "--seed", metavar="N",
                                       help="Master seed of folds and noise. Default: drawn and recorded."),
    jobs: int = typer.Option(1, "--jobs", metavar="N",
                             help="Cells at the same time, in processes (the fit-time experiment runs alone)."),
    quick: bool = typer.Option(False, "--quick",
                               help="A tiny grid (vote, ε 1, depths 1-2, 3 folds x 1, dprm d=1 and whole); "
                                    "options given still apply."),
) -> None:
    """Compare DP decision trees by cross-validated accuracy and fit time (local; not private).

    The paper's Figures 4-6 (accuracy vs maximum depth, a panel per ε, a line per
    embedding depth) and Figure 8 (fit time vs rows), with scikit-learn's CART and
    diffprivlib as baselines. The full default grid is large (hours); try --quick or
    a few --depths first.
    """
    from dprm.evaluation.classification import (GridConfig, dataset_name, default_methods, is_output_name,
                                                output_names, parse_embedding_depths, render_outputs,
                                                resolve_dataset, run_comparison)

    grid = QUICK if quick else FULL
    dataset_names = [d.strip() for d in (datasets or grid["datasets"]).split(",")]
    if any(not d for d in dataset_names) or len(set(dataset_names)) != len(dataset_names):
        raise ParameterError(f"--datasets: empty or repeated name in {datasets!r}")
    epsilon_values = number_list(epsilons or grid["epsilons"], "--epsilons", float)
    from dprm.privacy.budget import check_epsilon_range

    for value in epsilon_values:
        check_epsilon_range(value, "--epsilons")
    depth_values = sorted(set(number_list(depths or grid["depths"], "--depths", int, ranges=True)))
    if any(not 1 <= d <= 30 for d in depth_values):
        raise ParameterError(f"--depths must be between 1 and 30, not {depths!r}")
    embeddings = parse_embedding_depths(embedding_depths or grid["embedding_depths"])
    variant_values = [v.strip() for v in (variants or grid["variants"]).split(",")]
    if any(v not in ("dprm", "paper") for v in variant_values):
        raise ParameterError(f"--variants must be among dprm, paper, not {variants!r}")
    folds = grid["folds"] if folds is None else folds
    repeats = grid["repeats"] if repeats is None else repeats
    if not 2 <= folds <= 100 or not 1 <= repeats <= 1000:
        raise ParameterError(f"--folds must be in [2, 100] and --repeats in [1, 1000], not {folds} and {repeats}")
    rows = number_list(timing_rows or grid["timing_rows"], "--timing-rows", int, ranges=True)
    if any(not 1 <= n <= 10_000_000 for n in rows):
        raise ParameterError(f"--timing-rows must be between 1 and 10,000,000, not {timing_rows!r}")
    check_seed(seed)
    if not 1 <= jobs <= 256:
        raise ParameterError(f"--jobs must be between 1 and 256, not {jobs}")
    methods, method_notes = default_methods(embeddings, variant_values, baselines=baselines)
    idle = [m.name for m in methods if not any(m.applies(depth) for depth in depth_values)]
    if idle and embedding_depths is not None:  # asked for, it would vanish from every table
        raise ParameterError(f"--embedding-depths: {', '.join(idle)} embeds deeper than every --depths "
                             f"({', '.join(map(str, depth_values))})")
    if idle:  # the grid's own embedding depths: left out where no maximum depth reaches them
        methods = [m for m in methods if m.name not in idle]
        method_notes.append(f"{', '.join(idle)}: left out, deeper than every maximum depth "
                            f"({', '.join(map(str, depth_values))})")
    directory = Path(data_dir or os.environ.get("DPRM_UCI_DIR") or DEFAULT_DATA_DIR)
    shown_names = [dataset_name(d) for d in dataset_names]
    if len(set(shown_names)) != len(shown_names):
        raise ParameterError(f"--datasets: two datasets have the same name ({', '.join(shown_names)})")

    # -- outputs: checked before any data is read; the folder is written all or none at the end ---------
    folder = ResultFolder(out_dir, "classification.json", "dprm classify-eval", earlier=is_output_name)
    names = output_names(shown_names, timing)
    folder.check(names)

    loaded = [resolve_dataset(d, directory) for d in dataset_names]
    by_name = {d.name: d for d in loaded}
    timing_dataset = (by_name.get("mushroom") or loaded[0]) if timing else None
    import numpy as np

    master = int(np.random.SeedSequence().generate_state(2, dtype=np.uint64)[0] % 2**63) if seed is None else seed
    config = GridConfig(datasets=loaded, methods=methods, epsilons=epsilon_values, depths=depth_values,
                        folds=folds, repeats=repeats, seed=master, timing_dataset=timing_dataset,
                        timing_rows=rows, timing_depth=min(grid["timing_depth"], max(depth_values)),
                        timing_repeats=grid["timing_repeats"], jobs=jobs)
    config.check()
    from dprm.cli.progress import WorkProgress

    with WorkProgress("cells") as progress:
        result = run_comparison(config, progress=progress)
    result.notes[:0] = method_notes
    rendered = render_outputs(result)
    written = folder.commit({name: rendered[name] for name in names})
    for message in result.notes:
        note(message)
    _print_table(result.table)
    console.print(f"[dim]master seed {master}[/dim]")
    console.print(f"wrote {plural(len(written), 'file')} to {out_dir}: report {out_dir / 'report.html'}",
                  soft_wrap=True)


def _print_table(table: Any) -> None:
    """The accuracy cells as a table on the terminal (a small grid only; the report has all)."""
    from rich import box
    from rich.table import Table

    rows = table[table["experiment"] == "accuracy"]
    if rows.empty:
        return
    if len(rows) > MAX_PRINTED:
        console.print(f"{plural(len(rows), 'accuracy cell')}: see the report for all of them")
        return
    shown = Table(title="mean accuracy (std of the repeats' means)", box=box.SIMPLE_HEAD, padding=(0, 1))
    for title in ("dataset", "method", "ε", "depth", "accuracy", "fit s", "status"):
        shown.add_column(title, justify="left" if title in ("dataset", "method", "status") else "right")
    for _, row in rows.iterrows():
        accuracy = "–" if math.isnan(row["accuracy_mean"]) else f"{row['accuracy_mean']:.3f}" + (
            "" if math.isnan(row["accuracy_repeat_std"]) else f" ({row['accuracy_repeat_std']:.3f})")
        seconds = "–" if math.isnan(row["fit_seconds_mean"]) else f"{row['fit_seconds_mean']:.3g}"
        shown.add_row(str(row["dataset"]), str(row["method"]),
                      "–" if math.isnan(row["epsilon"]) else f"{row['epsilon']:g}", str(int(row["max_depth"])),
                      accuracy, seconds, str(row["status"]))
    console.print(shown)
