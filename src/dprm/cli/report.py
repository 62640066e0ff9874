"""``dprm report``: the HTML report's command.

Two forms::

    dprm report DIR [DIR ...] [--output FILE] [--no-figures]
    dprm report --run RUN.json [--data LEFT RIGHT [--types FILE] [--id-column ID]] [--output FILE]

The first reads experiment directories written by ``dprm evaluate`` (several are
combined, e.g. the same algorithms at several data sizes) and writes one HTML file,
by default ``DIR/report.html``, plus the figures as PNG and SVG in ``figures/``
beside it, all or none (a rerun that fails or is stopped leaves the earlier report and
figures whole; SIGTERM ends it as Ctrl-C does). The second renders one redescriptions document; with ``--data`` (for
people who may see the data) it adds the true statistics. Every file is written
atomically; a bad directory, table or document is one ``error:`` line, exit 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Tuple

import typer

from dprm.cli.app import command_app
from dprm.cli.console import console
from dprm.cli.interrupts import terminate_as_interrupt
from dprm.cli.views import IdColumn, TypesFile
from dprm.errors import ParameterError

app = command_app()


@app.command()
@terminate_as_interrupt()  # SIGTERM ends the command as Ctrl-C does: "interrupted", 130, nothing written
def report(
    dirs: Optional[List[Path]] = typer.Argument(
        None, help="Experiment directories written by 'dprm evaluate' (several are combined)."),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", dir_okay=False,
        help="HTML file to write (default: DIR/report.html, or RUN.html beside --run's document)."),
    run: Optional[Path] = typer.Option(None, "--run", help="Report one run: a redescriptions JSON document."),
    data: Optional[Tuple[Path, Path]] = typer.Option(
        None, "--data", metavar="LEFT RIGHT",
        help="With --run: the two views the run was mined from; adds true statistics (not private)."),
    types: TypesFile = None,
    id_column: IdColumn = None,
    figures: bool = typer.Option(True, "--figures/--no-figures",
                                 help="Also write the figures (PNG, SVG) to figures/ beside the report."),
) -> None:
    """Write an HTML report of experiments (DIR ...) or of one run (--run)."""
    from dprm.evaluation.report import write_experiment_report, write_run_report

    has_data = data is not None and all(part is not None for part in data)
    if run is None:
        if not dirs:
            raise ParameterError("give experiment directories (dprm report DIR ...) or --run RUN.json")
        for name, given in (("--data", has_data), ("--types", types is not None),
                            ("--id-column", id_column is not None)):
            if given:
                raise ParameterError(f"{name} applies only with --run")
        seen: dict[Path, Path] = {}
        for directory in dirs:
            earlier = seen.setdefault(directory.resolve(), directory)
            if earlier is not directory:
                raise ParameterError(f"{directory}: given twice (as {earlier}); its runs would be counted twice")
        _refuse_input_as_output(output, [p for d in dirs if d.is_dir() for p in _read_files(d)])
        path = write_experiment_report(dirs, output, figures=figures)
        console.print(f"wrote {path}")
        return
    if dirs:
        raise ParameterError("give either experiment directories or --run, not both")
    if not has_data and (types is not None or id_column is not None):
        raise ParameterError("--types and --id-column apply only with --data LEFT RIGHT")
    from dprm.input_files import regular_file_size

    regular_file_size(run, str(run), "run document (JSON)")
    _refuse_input_as_output(output, [run, *(data if has_data else ()), types])
    loaded = None
    if has_data:
        from dprm.cli.views import load_views, print_notes

        left, right = data
        loaded = load_views(left, right, id_column=id_column, types=types)
        print_notes(loaded)
    path = write_run_report(run, output, loaded, data_source=f"{data[0]}, {data[1]}" if has_data else "")
    console.print(f"wrote {path}")


def _read_files(directory: Path) -> list[Path]:
    """The files of an experiment directory a report may read (all but earlier reports and figures)."""
    return [p for p in directory.rglob("*") if p.is_file() and p.suffix not in (".html", ".png", ".svg")]


def _refuse_input_as_output(output: Path | None, inputs: list[Path | None]) -> None:
    """A one-line error when ``output`` would replace one of the command's inputs."""
    if output is None:
        return
    from dprm.cli.outputs import Outputs

    plan = Outputs(inputs=list(inputs))
    plan.add(output, lambda path: None)
    plan.check()
