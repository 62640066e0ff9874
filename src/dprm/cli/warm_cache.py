"""``dprm warm-cache``: compile dprm's kernels once, so that no run pays for it.

The Makefile's set-up runs it after installing; run it again after upgrading numba
or Python, or as each user of a read-only install (see :mod:`dprm.kernel_cache` and
``docs/performance.md``, "Start-up cost of a run").
"""

from __future__ import annotations

import typer

from dprm.cli.app import CONTEXT
from dprm.cli.console import console

app = typer.Typer(context_settings=CONTEXT, rich_markup_mode=None, add_completion=False,
                  pretty_exceptions_enable=False)

#: Exit code of ``--check`` when something had to be compiled.
NOT_WARM = 1


@app.command()
def warm_cache(
    check: bool = typer.Option(False, "--check",
                               help=f"Exit with code {NOT_WARM} if any kernel had to be compiled (the cache "
                                    "was not warm; it is now)."),
) -> None:
    """Compile dprm's numba kernels into numba's cache (about 16 CPU-s once; then 1-2 s).

    Later runs load the compiled code instead of compiling it. The cache is where
    numba keeps it: $NUMBA_CACHE_DIR if set, else beside the installed sources when
    writable, else ~/.cache/numba.
    """
    from dprm.kernel_cache import warm_cache as warm

    report = warm()
    console.print(report.summary())
    if check and report.compiled:
        raise typer.Exit(NOT_WARM)
