"""The ``dprm`` command line: small commands that parse options and call the library.

Every user error (a :class:`~dprm.errors.DprmError`, or a bad option) ends as one line
``error: ...`` on stderr with exit code 2, no traceback and no partial output file.
"""

from __future__ import annotations

import functools
import math
import os
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from dprm.data import LiteralIndex, TwoViewData, load_two_view
from dprm.datasets import make_planted, write_planted
from dprm.errors import DprmError, ParameterError
from dprm.mining import ALGORITHMS, Miner, make_miner
from dprm.privacy import Accountant, SecureNoise, SeededNoise
from dprm.queries import Redescription, write_clired_queries, write_document

app = typer.Typer(
    help="Differentially private redescription mining.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
datasets_app = typer.Typer(help="Example datasets.", no_args_is_help=True)
app.add_typer(datasets_app, name="datasets")

console = Console()


def user_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the project's errors into one line on stderr and exit code 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except DprmError as error:
            _fail(str(error))

    return wrapper


def _fail(message: str) -> None:
    first_line = message.strip().splitlines()[0] if message.strip() else "unknown error"
    print(f"error: {first_line}", file=sys.stderr)
    raise SystemExit(2)


DUPLICATES_HELP = "A column name twice in one file: 'rename' later ones (with a note) or 'error'."


def _load(
    left: Path, right: Path, id_column: str | None, types: Path | None, duplicate_columns: str
) -> TwoViewData:
    if duplicate_columns not in ("rename", "error"):
        raise ParameterError(f"--duplicate-columns must be 'rename' or 'error', not {duplicate_columns!r}")
    data = load_two_view(left, right, id_column=id_column, types=types, duplicate_names=duplicate_columns)
    for view in data.views:
        for renamed, original in view.renamed.items():
            print(f"note: {view.source}: duplicate column {original!r} renamed {renamed!r}", file=sys.stderr)
    return data


# -- mine ---------------------------------------------------------------------------

MINER_OPTIONS = (
    "epsilon",
    "depth",
    "init_trials",
    "alternations",
    "mcmc_iterations",
    "omega",
    "pair_score",
    "mcmc_stop",
    "variance_threshold",
    "variance_window",
    "max_clauses",
    "min_support",
    "max_support",
    "min_jaccard",
    "max_pvalue",
    "max_splits",
    "min_leaf",
    "target_bins",
    "counts",
    "units",
    "prune_support",
    "prune_interval",
    "prune_significance",
    "confidence",
    "size_share",
    "target_binning",
    "binning_share",
    "budget_split",
    "initial_pairs",
    "extensions",
    "max_age",
    "max_literals",
    "data_size",
    "rows",
    "min_rows",
    "steepness",
    "score_range",
)


@app.command()
@user_errors
def mine(
    left: Path = typer.Argument(..., help="Left view: CSV or Parquet file."),
    right: Path = typer.Argument(..., help="Right view: CSV or Parquet file."),
    algorithm: str = typer.Option("cartwheels", "--algorithm", "-a", help=f"One of: {', '.join(ALGORITHMS)}."),
    epsilon: Optional[float] = typer.Option(None, help="Privacy budget of a private algorithm."),
    seed: Optional[int] = typer.Option(None, help="Seed: reproducible, and then not private."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the redescriptions JSON here."),
    clired: Optional[Path] = typer.Option(None, help="Also write the queries in Siren/clired's format here."),
    id_column: Optional[str] = typer.Option(None, help="Id column of both views (default: auto-detect)."),
    types: Optional[Path] = typer.Option(None, help="Types file: attribute types and public domains."),
    duplicate_columns: str = typer.Option("rename", help=DUPLICATES_HELP),
    top: int = typer.Option(20, help="Number of redescriptions shown in the table."),
    depth: Optional[int] = typer.Option(None, help="Tree depth d."),
    init_trials: Optional[int] = typer.Option(None, help="Initial targets InTr."),
    alternations: Optional[int] = typer.Option(None, help="Alternations RMIter."),
    max_clauses: Optional[int] = typer.Option(None, help="Disjunctions per side."),
    min_support: Optional[float] = typer.Option(None, help="Minimum intersection size."),
    max_support: Optional[float] = typer.Option(None, help="Maximum query support (share of rows)."),
    min_jaccard: Optional[float] = typer.Option(None, help="Minimum Jaccard index."),
    max_pvalue: Optional[float] = typer.Option(None, help="Maximum p-value."),
    max_splits: Optional[int] = typer.Option(None, help="Thresholds per numeric attribute."),
    min_leaf: Optional[int] = typer.Option(None, help="Minimum rows per branch (non-private trees)."),
    mcmc_iterations: Optional[int] = typer.Option(None, help="Metropolis-Hastings steps per tree (pair) MCIter."),
    omega: Optional[float] = typer.Option(None, help="mcmc-tree-pair: budget share for sampling the pair."),
    pair_score: Optional[str] = typer.Option(None, help="mcmc-tree-pair: 'counts' (default), 'gini' or 'paper'."),
    mcmc_stop: Optional[str] = typer.Option(None, help="'fixed' steps (default) or the paper's 'variance' stop."),
    variance_threshold: Optional[float] = typer.Option(None, help="σ of the variance stop."),
    variance_window: Optional[int] = typer.Option(None, help="k of the variance stop."),
    target_bins: Optional[int] = typer.Option(None, help="Bins of a numeric initial target (private miners)."),
    counts: Optional[str] = typer.Option(None, help="Private extraction: 'cells' (default) or 'paper'."),
    units: Optional[str] = typer.Option(None, help="Private extraction's simple queries: 'leaves' or 'subtrees'."),
    prune_support: Optional[float] = typer.Option(None, help="Prune below this noisy support (paper: 500 on MAMMAL)."),
    prune_interval: Optional[float] = typer.Option(None, help="Prune where the Jaccard interval is wider."),
    prune_significance: Optional[bool] = typer.Option(
        None, "--prune-significance/--no-prune-significance",
        help="Prune where the p-value interval reaches above --max-pvalue (default on)."),
    confidence: Optional[float] = typer.Option(None, help="Level of the reported intervals."),
    size_share: Optional[float] = typer.Option(None, help="Budget share for a noisy count of the rows (0: none)."),
    target_binning: Optional[str] = typer.Option(None, help="Numeric initial targets: 'fd' (private) or 'fixed'."),
    binning_share: Optional[float] = typer.Option(None, help="Budget share for the private Freedman-Diaconis bins."),
    budget_split: Optional[str] = typer.Option(
        None, help="Serenade: shares init,extend,quality summing to 1 (default the paper's d3: 0.6,0.3,0.1)."),
    initial_pairs: Optional[str] = typer.Option(
        None, help="Serenade/reremi: number of initial pairs k, or 'auto' (Serenade default; paper: 20)."),
    extensions: Optional[str] = typer.Option(
        None, help="Serenade: extension rounds, m for CS / M for ES, or 'auto' (default; paper: 4 / 80)."),
    score_range: Optional[str] = typer.Option(
        None, help="Serenade: exponential mechanism 'bounded' (range down+up, default) or 'symmetric' (2Δ, paper)."),
    max_age: Optional[int] = typer.Option(None, help="serenade-es: rounds a memoised extension is kept (40)."),
    max_literals: Optional[int] = typer.Option(None, help="Serenade/reremi: literals per query at most (4)."),
    data_size: Optional[str] = typer.Option(
        None, help="Serenade: the row count is 'noisy' (default, bought with --size-share), 'public' or 'engine'."),
    rows: Optional[int] = typer.Option(None, help="Serenade with --data-size public: the true, public row count."),
    min_rows: Optional[int] = typer.Option(None, help="Serenade with --data-size engine: public lower bound of rows."),
    steepness: Optional[float] = typer.Option(None, help="Serenade: steepness λ of the logistic quality (default: line search)."),
) -> None:
    """Mine redescriptions of two views LEFT and RIGHT."""
    if algorithm not in ALGORITHMS:
        raise ParameterError(f"unknown algorithm {algorithm!r}; choose one of: {', '.join(ALGORITHMS)}")
    miner_class, fixed = ALGORITHMS[algorithm]
    given = {name: value for name, value in locals().items() if name in MINER_OPTIONS and value is not None}
    for name in ("initial_pairs", "extensions"):  # an integer, or 'auto' for the Serenade miners
        if name in given and given[name] != "auto":
            try:
                given[name] = int(given[name])
            except ValueError:
                raise ParameterError(f"--{name.replace('_', '-')} must be an integer or 'auto', "
                                     f"not {given[name]!r}") from None
    accepted = set(miner_class.parameter_names()) - set(fixed)
    for name in given:
        if name not in accepted:
            raise ParameterError(f"option --{name.replace('_', '-')} does not apply to {algorithm}")
    if epsilon is not None and not (math.isfinite(epsilon) and epsilon > 0):
        raise ParameterError(f"--epsilon must be a positive number, not {epsilon}")
    if seed is not None and seed < 0:
        raise ParameterError(f"--seed must be a non-negative integer, not {seed}")
    if top < 0:
        raise ParameterError(f"--top must be non-negative, not {top}")
    for path in (output, clired):
        if path is not None:
            _check_writable(path)
    if "epsilon" not in accepted and epsilon is not None:
        print(f"note: {algorithm} is not private; --epsilon is ignored", file=sys.stderr)
        given.pop("epsilon")
    data = _load(left, right, id_column, types, duplicate_columns)
    miner: Miner = make_miner(algorithm, **given)
    choices, noise = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    accountant = None
    if "epsilon" in accepted:
        accountant = Accountant(miner.epsilon, SecureNoise() if seed is None else SeededNoise(noise))
    with console.status(f"mining with {algorithm}..."):
        miner.fit(data, accountant=accountant, rng=choices)
    document = miner.document({"seed": seed})
    _print_redescriptions(miner.redescriptions_, top, noisy=accountant is not None)
    for note in miner.notes_:
        console.print(f"[dim]{note}[/dim]")
    _write_outputs(document, miner.redescriptions_, output, clired)


def _check_writable(path: Path) -> None:
    """Refuse an output path before any work: its directory must exist, it must not be one."""
    if not path.parent.exists():
        raise DprmError(f"{path}: directory {path.parent} does not exist")
    if path.is_dir():
        raise DprmError(f"{path}: is a directory; give a file name")


def _write_outputs(document: dict, redescriptions: list[Redescription], output: Path | None,
                   clired: Path | None) -> None:
    """Write both outputs or neither: the clired file goes to a temporary name first."""
    staged = None
    try:
        if clired is not None:
            staged = clired.with_name(f".{clired.name}.partial")
            write_clired_queries(redescriptions, staged)
        if output is not None:
            write_document(document, output)
        if staged is not None:
            os.replace(staged, clired)
            staged = None
    finally:
        if staged is not None:
            staged.unlink(missing_ok=True)
    if output is not None:
        console.print(f"wrote {len(redescriptions)} redescriptions to {output}")
    if clired is not None:
        console.print(f"wrote the queries in Siren/clired's format to {clired}")


def _print_redescriptions(redescriptions: list[Redescription], top: int, noisy: bool) -> None:
    """One block per redescription: its statistics on a line, then both queries."""
    kept = sum(not r.pruned for r in redescriptions)
    title = f"{len(redescriptions)} redescriptions"
    if noisy:
        title += f", {kept} kept after pruning (noisy, differentially private statistics)"
    console.rule(title)
    shown = sorted(redescriptions, key=lambda r: r.pruned)[:top]
    for number, r in enumerate(shown, start=1):
        s = r.stats
        line = Text(f"{number:>3}. J = {s.jaccard:.3f}", style="bold")
        interval = r.extra.get("interval", {}).get("jaccard") if noisy else None
        if interval:
            line.append(f" [{interval[0]:.2f}, {interval[1]:.2f}]")
        line.append(f"   |L| {s.support_left:.0f}   |R| {s.support_right:.0f}   |L∩R| {s.intersection:.0f}")
        if s.p_value is not None:
            line.append(f"   p {s.p_value:.2g}")
        if r.pruned:
            line.append("   pruned", style="yellow")
        console.print(line)
        console.print(Text("     L: ") + Text(str(r.left)))
        console.print(Text("     R: ") + Text(str(r.right)))
    if len(redescriptions) > len(shown):
        console.print(f"... {len(redescriptions) - len(shown)} more (--top N shows more; --output writes all)")


# -- inspect ------------------------------------------------------------------------


@app.command()
@user_errors
def inspect(
    left: Path = typer.Argument(..., help="Left view: CSV or Parquet file."),
    right: Path = typer.Argument(..., help="Right view: CSV or Parquet file."),
    id_column: Optional[str] = typer.Option(None, help="Id column of both views (default: auto-detect)."),
    types: Optional[Path] = typer.Option(None, help="Types file: attribute types and public domains."),
    duplicate_columns: str = typer.Option("rename", help=DUPLICATES_HELP),
    max_splits: int = typer.Option(32, help="Thresholds per numeric attribute."),
) -> None:
    """Print the inferred schema of two views (local use: it shows the row count)."""
    if max_splits < 1:
        raise ParameterError(f"--max-splits must be at least 1, not {max_splits}")
    data = _load(left, right, id_column, types, duplicate_columns)
    table = Table(title=f"{data.n_rows} rows")
    for column in ("attribute", "view", "type", "literals", "missing", "domain"):
        table.add_column(column, justify="right" if column in ("literals", "missing") else "left")
    for view in data.views:
        index = LiteralIndex(view, mode="data", max_splits=max_splits)
        per_attribute = np.bincount([p for p, _, _ in index.literals], minlength=len(view))
        for position, attribute in enumerate(view):
            domain = attribute.domain
            if domain.bounds is not None:
                described = f"[{domain.bounds[0]:g}, {domain.bounds[1]:g}]"
            elif domain.categories is not None:
                described = f"{len(domain.categories)} categories"
            else:
                described = "{0, 1}"
            described += " declared" if domain.declared else " inferred"
            table.add_row(
                attribute.name,
                view.name,
                attribute.kind.value,
                str(per_attribute[position]),
                f"{attribute.missing.mean():.1%}",
                described,
            )
    console.print(table)
    for view in data.views:
        if view.constant:
            console.print(f"{view.name} view: constant columns left out: {', '.join(view.constant)}")


# -- datasets -----------------------------------------------------------------------


@datasets_app.command("make-planted")
@user_errors
def make_planted_command(
    outdir: Path = typer.Argument(..., help="Directory to write left.csv, right.csv, types.json, planted.json."),
    rows: int = typer.Option(1000, help="Number of rows."),
    seed: Optional[int] = typer.Option(None, help="Random seed."),
    planted: int = typer.Option(3, help="Number of planted relations."),
    left_boolean: int = typer.Option(30, help="Boolean attributes of the left view."),
    left_numeric: int = typer.Option(0, help="Numeric attributes of the left view."),
    right_boolean: int = typer.Option(0, help="Boolean attributes of the right view."),
    right_numeric: int = typer.Option(20, help="Numeric attributes of the right view."),
    noise: float = typer.Option(0.05, help="Share of rows on which a planted attribute is wrong."),
    missing: float = typer.Option(0.0, help="Share of missing values."),
) -> None:
    """Write an example two-view dataset with planted redescriptions."""
    if outdir.exists() and not outdir.is_dir():
        raise DprmError(f"{outdir}: exists and is not a directory")
    data = make_planted(
        rows,
        n_left_boolean=left_boolean,
        n_left_numeric=left_numeric,
        n_right_boolean=right_boolean,
        n_right_numeric=right_numeric,
        n_planted=planted,
        noise=noise,
        missing=missing,
        random_state=seed,
    )
    for path in write_planted(data, outdir):
        console.print(f"wrote {path}")


# The experiment runner and the report live in their own modules; importing them
# registers their commands on ``app``.
from dprm import cli_evaluation, cli_report  # noqa: E402,F401


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``dprm`` command."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        result = app(args=args or ["--help"], standalone_mode=False)
    except typer.Exit as done:
        raise SystemExit(done.exit_code) from None
    except typer.Abort:
        print("error: aborted", file=sys.stderr)
        raise SystemExit(130) from None
    except typer.TyperException as error:  # bad options and arguments
        if type(error).__name__ == "NoArgsIsHelpError":  # a command group alone: help was shown
            raise SystemExit(0) from None
        _fail(error.format_message())
    except DprmError as error:
        _fail(str(error))
    if isinstance(result, int) and result:
        raise SystemExit(result)


if __name__ == "__main__":
    main()
