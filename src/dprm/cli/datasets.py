"""``dprm datasets``: example data with planted redescriptions (known answers)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from dprm.cli.app import command_app
from dprm.cli.console import console
from dprm.cli.outputs import check_directory
from dprm.errors import DprmError, ParameterError

app = command_app("Example datasets with planted redescriptions (known answers).")


@app.callback()
def datasets() -> None:
    """Example datasets with planted redescriptions (known answers)."""


@app.command("make-planted")
def make_planted_command(
    outdir: str = typer.Argument(..., show_default=False, metavar="OUTDIR",
                                  help="Directory for left.csv, right.csv, types.json and planted.json."),
    rows: int = typer.Option(1000, metavar="N", help="Number of rows (entities)."),
    seed: Optional[int] = typer.Option(None, metavar="N", help="Random seed, a non-negative integer."),
    planted: int = typer.Option(3, metavar="N", help="Number of planted relations (of the default kind, "
                                                      "conjunction; not used with --relations)."),
    relations: Optional[str] = typer.Option(
        None, metavar="KIND,...",
        help="Kinds of planted relations, comma-separated, one relation each: conjunction (a ∧ b vs x > 60), "
             "disjunction ((a ∧ b) ∨ c vs x > 60), interval (a ∧ ¬b vs 40 < x ≤ 70), thresholds "
             "(a vs x > 60 ∧ y > 60), threshold-or (a ∨ b vs x > 60). On a view without Boolean attributes "
             "a Boolean literal is written as x > 60."),
    left_boolean: int = typer.Option(30, metavar="N", help="Boolean attributes of the left view."),
    left_numeric: int = typer.Option(0, metavar="N", help="Numeric attributes of the left view."),
    right_boolean: int = typer.Option(0, metavar="N", help="Boolean attributes of the right view."),
    right_numeric: int = typer.Option(20, metavar="N", help="Numeric attributes of the right view."),
    noise: float = typer.Option(0.05, metavar="SHARE",
                                help="Share of rows on which a planted attribute is wrong, in [0, 0.5)."),
    missing: float = typer.Option(0.0, metavar="SHARE", help="Share of missing values, in [0, 1). Without "
                                                             "any, types.json declares every column complete."),
) -> None:
    """Write an example two-view dataset with planted redescriptions to OUTDIR."""
    from dprm.datasets import PLANTED_FILES, make_planted, write_planted

    if not outdir.strip():
        raise ParameterError("OUTDIR is empty; give a directory ('.' for the current one)")
    directory = Path(outdir)
    check_directory(directory, create=True)  # before the rows are generated
    for name in PLANTED_FILES:  # and before any file is written
        path = directory / name
        if path.is_dir() or (path.exists() and not path.is_file()):
            kind = "a directory" if path.is_dir() else "not a regular file"
            raise DprmError(f"{path}: is {kind}, where make-planted writes a file; move it away or give another "
                            "OUTDIR")
    kinds = None if relations is None else [kind.strip() for kind in relations.split(",")]
    data = make_planted(rows, n_left_boolean=left_boolean, n_left_numeric=left_numeric,
                        n_right_boolean=right_boolean, n_right_numeric=right_numeric, n_planted=planted,
                        noise=noise, missing=missing, relations=kinds, random_state=seed)
    for path in write_planted(data, directory):
        console.print(f"wrote {path}")
