"""``dprm evaluate``: the experiment runner's command (:mod:`dprm.evaluation.runner`)."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import typer

from dprm.cli.app import command_app
from dprm.cli.console import console, plural
from dprm.cli.interrupts import terminate_as_interrupt
from dprm.cli.views import EngineOption, IdColumn, LeftView, RightView, ShardsOption, TypesFile, check_engine
from dprm.errors import ParameterError

if TYPE_CHECKING:
    import pandas as pd

app = command_app()

#: Upper bound of --jobs: processes at the same time.
MAX_JOBS = 256


def _algorithm_names() -> str:
    from dprm.evaluation.algorithms import known_algorithms

    return ", ".join(known_algorithms())


@app.command()
def evaluate(
    left: LeftView,
    right: RightView,
    algorithms: str = typer.Option(..., "--algorithms", metavar="A,B,...", show_default=False,
                                   help=f"Comma-separated, among: {_algorithm_names()}."),
    budgets: str = typer.Option(..., "--budgets", metavar="EPSxRUNS,...", show_default=False,
                                help="E.g. 1x10,0.1x10,0.01x100: RUNS runs at each ε (private algorithms; "
                                     "non-private ones run once)."),
    out: Path = typer.Option(..., "--out", metavar="DIR", show_default=False,
                             help="Experiment directory: new, empty, or the same experiment to resume."),
    seed: Optional[int] = typer.Option(None, metavar="N", help="Master seed. Default: drawn and recorded."),
    jobs: Optional[int] = typer.Option(None, metavar="N", show_default=False,
                                       help=f"Runs at the same time, each in a fresh process (1 to {MAX_JOBS}; "
                                            f"default: the number of cores). Not with --engine ray."),
    types: TypesFile = None,
    id_column: IdColumn = None,
    parameters: List[str] = typer.Option(
        [], "--parameters", "-p", metavar="[ALG.]NAME=VALUE",
        help="Miner parameters, repeatable, with the bounds of 'dprm mine': e.g. -p mcmc_iterations=200 "
             "-p alt-expm.depth=3, or a JSON object '{\"alt-mcmc\": {\"depth\": 3}}'."),
    alpha: float = typer.Option(0.01, metavar="P", help="Significance level of the tables."),
    timeout: Optional[float] = typer.Option(None, metavar="SECONDS",
                                            help="Time allowed to one run of a baseline (clired-*, mst-cartwheels, "
                                                 "aim-cartwheels); only with one of them."),
    reports: bool = typer.Option(True, "--reports/--no-reports", help="Write the figures and the HTML report."),
    engine: EngineOption = "in-process",
    shards: ShardsOption = 2,
) -> None:
    """Run every algorithm RUNS times per ε on LEFT and RIGHT; true vs noisy statistics, tables.

    Private algorithms run RUNS times at each EPS of --budgets, non-private ones once.
    Each run is a fresh process seeded from the master seed (seeded noise: reproducible,
    not private). Rerunning resumes (finished runs are skipped); more algorithms or
    budgets extend the experiment. With --engine ray the rows stay in --shards Ray
    actors, started once for the experiment; the runs go one after the other through
    them and the true statistics are counted there (the same results as in-process).
    """
    import pandas as pd
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    from dprm.evaluation.runner import NOISE_NOTE, ExperimentConfig, RunRecord, parse_parameter_items, run_experiment

    if jobs is not None and not 1 <= jobs <= MAX_JOBS:
        raise ParameterError(f"--jobs must be between 1 and {MAX_JOBS}, not {jobs}")
    address = check_engine(engine, shards)
    if address is not None and jobs not in (None, 1):
        raise ParameterError("--jobs: with --engine ray the runs go one at a time through the shards "
                             "(every request already uses all of them); leave --jobs out")
    names = [name.strip() for name in algorithms.split(",")]
    if any(not name for name in names):
        raise ParameterError(f"--algorithms: empty name in {algorithms!r}")
    config = ExperimentConfig(left=left, right=right, algorithms=names, budgets=budgets,
                              parameters=parse_parameter_items(parameters), seed=seed, id_column=id_column,
                              types=types, alpha=alpha, timeout=timeout)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("eta"), TimeRemainingColumn())
    # The bar starts with the first report of the runner, i.e. after every check of the
    # input: a bad option is one line of error, with no bar drawn before it.
    bar = Progress(*columns, console=console, transient=False)
    task = None

    def progress(done: int, total: int, record: RunRecord | None) -> None:
        nonlocal task
        if task is None:
            bar.start()
            task = bar.add_task("runs", total=total)
        if record is None:
            bar.update(task, total=total, completed=done,
                       description=f"runs ({done} finished before)" if done else "runs")
            return
        bar.update(task, completed=done)
        if record.status != "ok":
            bar.console.print(f"[yellow]{record.algorithm} ε={record.label} run {record.run}: "
                              f"{record.status}: {record.message}[/yellow]")

    try:
        # SIGTERM ends the experiment as Ctrl-C does: the runs under way are stopped (none finishes
        # behind a restart's back), "interrupted: ...", exit 130
        with terminate_as_interrupt():
            if address is None:
                result = run_experiment(config, out, jobs=jobs or os.cpu_count() or 1, progress=progress,
                                        reports=reports)
            else:
                result = run_experiment(config, out, jobs=1, progress=progress, reports=reports, shards=shards,
                                        address=address or None)
    except KeyboardInterrupt:
        if task is not None:
            bar.stop()
        if (out / "experiment.json").is_file():
            print(f"interrupted: finished runs are kept in {out}; run the same command again to resume",
                  file=sys.stderr)
        else:  # stopped before the experiment was written (while the data loaded): there is nothing to resume
            print("interrupted: nothing was written", file=sys.stderr)
        raise SystemExit(130) from None
    finally:
        if task is not None:
            bar.stop()
    console.print(f"[dim]master seed {result.master_seed}; {NOISE_NOTE}[/dim]")
    console.print(f"{plural(result.ran, 'run')} now, {result.skipped:,} finished before")
    _print_summary(pd.read_csv(result.tables["summary"]))
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    console.print(f"wrote {result.redescriptions}, {result.runs}, "
                  + ", ".join(str(p) for p in result.tables.values()))
    if result.report is not None:
        console.print(f"report: {result.report}")
    problems = []
    if result.failed:
        problems.append(f"{plural(len(result.failed), 'run')} failed (run the same command again to retry them)")
    if result.refused:
        problems.append(f"{plural(len(result.refused), 'run')} refused their input and would be refused again "
                        f"(e.g. {result.refused[0].message}); use other parameters in a new --out directory")
    if problems:
        print(f"error: {'; '.join(problems)}", file=sys.stderr)
        raise SystemExit(1)


def _cell(value: object, digits: int = 2) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        return f"{value:.{digits}g}" if abs(value) < 10 ** -digits and value != 0 else f"{value:.{digits}f}"
    return str(value)


def _print_summary(summary: "pd.DataFrame") -> None:
    import pandas as pd
    from rich import box
    from rich.table import Table

    from dprm.evaluation.budgets import epsilon_label

    table = Table(title="summary (kept redescriptions; true statistics)", box=box.SIMPLE_HEAD, padding=(0, 1))
    shown = (("algorithm", "algorithm"), ("epsilon", "ε"), ("runs_with_results", "runs ≥1"),
             ("kept", "kept"), ("share_significant", "sig."), ("spearman_rho", "ρ"),
             ("true_jaccard_median", "J med"), ("abs_error_jaccard_median", "|ΔJ| med"),
             ("seconds_median", "s med"), ("peak_mb_median", "MB med"))
    rows = []
    for _, row in summary.iterrows():
        cells = []
        for column, _ in shown:
            value = row[column]
            if column == "epsilon":
                cells.append(epsilon_label(None if pd.isna(value) else float(value)))
            elif column == "kept":
                cells.append(str(int(value)))
            elif column in ("seconds_median", "peak_mb_median"):
                cells.append("–" if pd.isna(value) else f"{float(value):.{1 if column == 'seconds_median' else 0}f}")
            else:
                cells.append(_cell(float(value)) if not isinstance(value, str) else value)
        rows.append(cells)
    for position, (_, title) in enumerate(shown):
        width = max([1, *(len(cells[position]) for cells in rows)])  # values whole; headers may wrap
        table.add_column(title, justify="left" if position == 0 else "right", min_width=width, no_wrap=position == 0)
    for cells in rows:
        table.add_row(*cells)
    console.print(table)
    # under the table, not its caption: rich cut a caption as wide as the table by a letter ("med: media")
    console.print("runs ≥1: share of runs with a kept redescription; sig.: share with true p < alpha; "
                  "ρ: Spearman noisy vs true J; J med: median true Jaccard; |ΔJ| med: median |noisy − true| J")
