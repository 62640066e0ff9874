"""``dprm warm-cache``: compile dprm's kernels (and its Python bytecode) once, so that no run pays for it.

Three steps: numba's cache (:mod:`dprm.kernel_cache`), the ahead-of-time build of the
kernels small runs call (:mod:`dprm.precompiled`, for the argument types of the
warm-up's runs), dprm's bytecode.

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
    """Compile dprm's numba kernels into numba's cache (about 16 CPU-s once; then 1-2 s), then
    build the small runs' kernels ahead of time (about 8 s; needs a C compiler).

    Later runs load the compiled code instead of compiling it. The cache is where
    numba keeps it: $NUMBA_CACHE_DIR if set, else beside the installed sources when
    writable, else ~/.cache/numba. The ahead-of-time build goes to
    $DPRM_PRECOMPILED_DIR if set, else beside the installed sources when writable,
    else ~/.cache/dprm; without it (no C compiler) runs use numba's cache.
    """
    from dprm.kernel_cache import kernels, warm_cache as warm
    from dprm.precompiled import build

    report = warm()
    console.print(report.summary())
    console.print(build(kernels()).summary())
    console.print(compile_bytecode())
    if check and report.compiled:
        raise typer.Exit(NOT_WARM)


def compile_bytecode() -> str:
    """Write the bytecode of dprm's modules to ``__pycache__`` beside them; one line for the terminal.

    Python writes it at a module's first import anyway, unless it may not
    (``PYTHONDONTWRITEBYTECODE``, a read-only install: pip compiles those at install);
    without it every run compiles dprm's ~180 modules again (about 0.1 CPU-s of the
    imports of a ``dprm mine`` run, measured). Up-to-date files are left alone.
    """
    import compileall
    import io
    from contextlib import redirect_stdout
    from pathlib import Path

    import dprm

    package = Path(dprm.__file__).parent
    with redirect_stdout(io.StringIO()):  # compileall lists what it could not write
        done = compileall.compile_dir(package, quiet=1)
    return f"bytecode of {package}: {'up to date' if done else 'not all written (read-only?)'}"
