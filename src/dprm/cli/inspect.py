"""``dprm inspect``: the schema dprm reads from two views (for people who may see the data)."""

from __future__ import annotations

from dprm.cli.app import command_app
from dprm.cli.console import console, err_console
from dprm.cli.views import (DuplicateColumns, IdColumn, LeftView, NaValues, OutOfBounds, RightView, TypesFile,
                            load_views, print_notes)
from dprm.errors import ParameterError

import typer

app = command_app()

#: Upper bound of --max-splits: thresholds per numeric attribute.
MAX_SPLITS = 4096


@app.command()
def inspect(
    left: LeftView,
    right: RightView,
    id_column: IdColumn = None,
    types: TypesFile = None,
    duplicate_columns: DuplicateColumns = "rename",
    na_values: NaValues = None,
    out_of_bounds: OutOfBounds = None,
    max_splits: int = typer.Option(32, "--max-splits", metavar="N",
                                   help=f"Thresholds per numeric attribute (1 to {MAX_SPLITS})."),
    limit: int = typer.Option(100, "--limit", metavar="N",
                              help="Attributes listed per view at most (0: all); the rest are counted."),
) -> None:
    """Show the schema dprm reads from LEFT and RIGHT: types, literals, missing shares, domains.

    Local use only: it shows the number of rows and other values computed from the data.
    """
    import numpy as np
    from rich.table import Table
    from rich.text import Text

    from dprm.data import LiteralIndex
    from dprm.data.attributes import View

    if not 1 <= max_splits <= MAX_SPLITS:
        raise ParameterError(f"--max-splits must be between 1 and {MAX_SPLITS}, not {max_splits}")
    if limit < 0:
        raise ParameterError(f"--limit must be 0 (all) or a positive number of attributes, not {limit}")
    with err_console.status(f"reading {left} and {right}"):  # a spinner on a terminal only
        data = load_views(left, right, id_column=id_column, types=types, duplicate_columns=duplicate_columns,
                          na_values=na_values, out_of_bounds=out_of_bounds)
    left_out = []
    table = Table(title=f"{data.n_rows:,} rows")
    for column in ("attribute", "view", "type", "literals", "missing", "domain"):
        table.add_column(column, justify="right" if column in ("literals", "missing") else "left")
    for view in data.views:
        shown = len(view) if limit == 0 else min(limit, len(view))
        if shown < len(view):
            left_out.append(f"{len(view) - shown:,} more attributes of the {view.name} view not listed "
                            f"(--limit 0 lists all)")
        index = LiteralIndex(View(view.name, view.attributes[:shown], source=view.source), mode="data",
                             max_splits=max_splits)
        per_attribute = np.bincount([p for p, _, _ in index.literals], minlength=shown)
        for position, attribute in enumerate(view.attributes[:shown]):
            domain = attribute.domain
            if domain.bounds is not None:
                described = f"[{domain.bounds[0]:g}, {domain.bounds[1]:g}]"
            elif domain.categories is not None:
                described = f"{len(domain.categories)} categories"
            else:
                described = "{0, 1}"
            described += " declared" if domain.declared else " inferred"
            # Text: a column name is shown as written, never read as markup ('[red]x', '[br]')
            table.add_row(Text(attribute.name), view.name, attribute.kind.value, str(per_attribute[position]),
                          f"{attribute.missing.mean():.1%}", Text(described))
    console.print(table)
    for line in left_out:
        console.print(line)
    print_notes(data)
