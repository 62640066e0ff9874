"""The root of the ``dprm`` command: a group that imports a command only when it runs.

Typer builds every option of every command before it can print the top-level help,
and the commands' modules import numpy, pandas and the miners (about two seconds).
:class:`LazyCommands` lists the commands from a static table instead and imports a
command's module (``dprm.cli.<module>``, which defines a :class:`typer.Typer` named
``app``) on first use, so ``dprm --help`` and ``dprm --version`` stay fast.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Optional

import typer
from typer.core import TyperGroup

from dprm.cli.console import INTERRUPTED, StdoutClosed, exit_on, fail, quiet_exit, standard_streams

__all__ = ["app", "main", "COMMANDS", "CONTEXT"]

#: name -> (module under dprm.cli, one-line help shown by ``dprm --help``).
COMMANDS: dict[str, tuple[str, str]] = {
    "mine": ("mine", "Mine redescriptions of two views, privately or not."),
    "inspect": ("inspect", "Show the schema dprm reads from two views (local: shows row counts)."),
    "evaluate": ("evaluate", "Run algorithms many times; true vs noisy statistics, tables."),
    "report": ("report", "Write an HTML report of experiments or of one run."),
    "datasets": ("datasets", "Example datasets with planted redescriptions."),
    "serve": ("serve", "Serve datasets to analysts: the secured server's API (docs/server.md)."),
    "admin": ("admin", "The data owner's administration of a server: datasets, analysts, budgets, ledger."),
    "remote": ("remote", "Use a dprm server as an analyst: datasets, jobs, primitives, budget."),
    "classify": ("classify", "Fit a differentially private decision tree on one CSV and print it."),
    "classify-eval": ("classify_eval", "Compare DP decision trees by cross-validated accuracy (local, not private)."),
    "itemsets": ("itemsets", "Mine frequent itemsets from a density estimate of one CSV (ISON; t-closeness, DP)."),
    "itemsets-eval": ("itemsets_eval", "Evaluate ISON against FP-growth: TPR/FPR, chains, time, t-closeness (local)."),
    "warm-cache": ("warm_cache", "Compile dprm's kernels once into numba's cache (run by the set-up)."),
}

#: Click settings shared by every command: -h as --help, help text at 80 columns.
CONTEXT: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 80}


class LazyCommands(TyperGroup):
    """A command group whose commands are imported when first used."""

    def list_commands(self, ctx: typer.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: typer.Context, cmd_name: str) -> Optional[Any]:
        if cmd_name not in COMMANDS:
            return None
        from dprm.cli.coercion import plain_conversions
        from dprm.cli.repeats import refuse_repeats

        module = importlib.import_module(f"dprm.cli.{COMMANDS[cmd_name][0]}")
        command = refuse_repeats(plain_conversions(typer.main.get_command(module.app)))
        command.name = cmd_name
        return command

    def format_commands(self, ctx: typer.Context, formatter: Any) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, short) for name, (_, short) in COMMANDS.items()])


def command_app(help_text: str | None = None, *, cls: type[TyperGroup] | None = None) -> typer.Typer:
    """A :class:`typer.Typer` for one command module, with the shared settings.

    Plain click help (no rich panels, which cut long option names at 80 columns),
    ``-h``, defaults shown, no shell-completion options. ``cls``: the group's class, when
    a command module runs its commands in a way of its own (``dprm admin``).
    """
    return typer.Typer(help=help_text, context_settings=CONTEXT, rich_markup_mode=None, cls=cls,
                       add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True)


def _version(value: bool) -> None:
    if value:
        from dprm import __version__

        print(f"dprm {__version__}")
        raise typer.Exit()


app = typer.Typer(cls=LazyCommands, context_settings=CONTEXT, rich_markup_mode=None,
                  add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True)


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                 help="Print dprm's version and exit."),
) -> None:
    """dprm: differentially private redescription mining.

    Redescriptions are pairs of queries, one over each of two views of the same
    entities, that describe nearly the same entities. Private algorithms spend exactly
    --epsilon and say on every run whether their guarantee holds.
    """


def _one_blas_thread() -> None:
    """Ask OpenBLAS for one thread, unless the user chose, when numpy is not imported yet.

    dprm calls no BLAS routine (its kernels are numba's and numpy's element-wise ones),
    but OpenBLAS starts a thread per core when numpy is imported, and those threads
    cost a short command about 0.1 CPU s (a dense ``dprm itemsets --top-k`` run, 2
    cores: 0.92 – 1.08 against 0.82 – 0.87 CPU s). A process that imported numpy
    before (a test calling :func:`main`) keeps its settings.
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``dprm`` command (``argv`` defaults to ``sys.argv[1:]``).

    The standard streams are set up first (:func:`dprm.cli.console.standard_streams`):
    a standard output closed by its reader (``dprm mine ... | head -1``) ends the
    command quietly with exit code 141, as a shell reports for ``yes | head -1``; the
    output files it had written stay.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    _one_blas_thread()
    try:
        with standard_streams():
            _run(args)
    except StdoutClosed:
        quiet_exit()


def _run(args: list[str]) -> None:
    """Run the command line ``args``: one line on stderr and its exit code for every ending."""
    try:
        from dprm.cli.coercion import plain_conversions

        # what app(...) does, with the root's options converted without pydantic (dprm.cli.coercion)
        result = plain_conversions(typer.main.get_command(app))(args=args or ["--help"], standalone_mode=False,
                                                                prog_name="dprm")
    except typer.Exit as done:
        raise SystemExit(done.exit_code) from None
    except typer.Abort:
        print("interrupted", file=sys.stderr)
        raise SystemExit(INTERRUPTED) from None
    except typer.TyperException as error:  # bad options and arguments
        if type(error).__name__ == "NoArgsIsHelpError":  # a command group alone: its help
            context = getattr(error, "ctx", None)
            if context is not None:
                print(context.get_help())
            raise SystemExit(0) from None
        fail(error.format_message())
    except SystemExit:
        raise
    except BaseException as error:  # noqa: BLE001 - every other ending is one line too
        exit_on(error)
    if result == INTERRUPTED:  # typer turns Ctrl-C in a command into this exit code, silently
        print("interrupted", file=sys.stderr, flush=True)
    if isinstance(result, int) and result:
        raise SystemExit(result)
