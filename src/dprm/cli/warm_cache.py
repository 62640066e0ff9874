"""``dprm warm-cache``: compile dprm's kernels (and its Python bytecode) once, so that no run pays for it.

Three steps: numba's cache (:mod:`dprm.kernel_cache`; :func:`warm_up` runs the miners
on small generated data so that every kernel is compiled for the argument types real
runs use), the ahead-of-time build of the kernels small runs call
(:mod:`dprm.precompiled`, for the argument types of the warm-up's runs), dprm's
bytecode. A line per stage tells the terminal what it is doing.

The Makefile's set-up runs it after installing; run it again after upgrading numba
or Python, or as each user of a read-only install (see :mod:`dprm.kernel_cache` and
``docs/performance.md``, "Start-up and the warm cache").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

from dprm.cli.app import CONTEXT
from dprm.cli.console import console

if TYPE_CHECKING:
    from dprm.kernel_cache import CacheReport

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
    from dprm.kernel_cache import kernels
    from dprm.precompiled import build

    with _ticking("still compiling (numba)"):
        report = warm_up(step=_say)
    console.print(report.summary(), soft_wrap=True)
    _say("building the small runs' kernels ahead of time (numba.pycc; about 8 s)")
    with _ticking("still building the kernels ahead of time"):
        console.print(build(kernels()).summary(), soft_wrap=True)
    console.print(compile_bytecode(), soft_wrap=True)
    if check and report.compiled:
        raise typer.Exit(NOT_WARM)


def _say(text: str) -> None:
    """One progress line on the terminal at once (set-up shows what it does, every few seconds)."""
    console.print(f"warm-cache: {text}", soft_wrap=True)


@contextmanager
def _ticking(text: str, every: float = 5.0) -> Iterator[None]:
    """Say ``text`` with the seconds spent every ``every`` seconds while the block runs (one long step)."""
    import threading
    import time

    done = threading.Event()
    started = time.perf_counter()

    def tick() -> None:
        while not done.wait(every):
            _say(f"{text} ({time.perf_counter() - started:.0f} s)")

    thread = threading.Thread(target=tick, name="dprm-warm-cache-ticker", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def warm_up(step: Callable[[str], None] = lambda text: None) -> "CacheReport":
    """Compile (or load) every kernel for the argument types real runs use; ``step`` hears each stage.

    Runs, with seeded noise and on generated data, the private tree miners (the
    literal codes in one byte, and in two with 300 split points; routing the rows and
    counting the split histograms on one core and on all,
    :data:`dprm.trees.compiled.PARALLEL_ROUTING_ROWS`,
    :data:`dprm.trees.criterion.PARALLEL_HISTOGRAM_CELLS`; the chain on row bitsets and
    on the row layout, :data:`dprm.trees.private.BIT_CHAIN_BYTES`), the itemset
    density estimate with ISON (grown in batch, and online) and the tree classifier's chain (:mod:`dprm.kernel_cache`).
    Costs about 16 CPU-seconds on a cold cache (and about 8 more for the classifier's
    chain) and 1–2 on a warm one; each of its 12 stages (a miner at a size, the
    estimate, the classifier) takes at most a few seconds, and ``step`` is told before each.
    """
    import time

    import numpy as np

    from dprm.data import load_two_view
    from dprm.datasets.planted import make_planted
    from dprm.datasets.transactions import make_transactions
    from dprm.itemsets import DensityEstimator, run_ison
    from dprm.itemsets.candidates import KeySet
    from dprm.kernel_cache import counts, kernels, report
    from dprm.mining import make_miner
    from dprm.precompiled import numba_only
    from dprm.privacy import Accountant, SeededNoise
    from dprm.trees import compiled, criterion, private

    started = time.perf_counter()
    step("loading numba and dprm's kernel modules")
    dispatchers = kernels()
    before = counts(dispatchers)
    planted = make_planted(400, n_left_boolean=6, n_left_numeric=2, n_right_boolean=2, n_right_numeric=6,
                           missing=0.05, random_state=0)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    settings = compiled.PARALLEL_ROUTING_ROWS, criterion.PARALLEL_HISTOGRAM_CELLS, private.BIT_CHAIN_BYTES
    try:
        # twice: as small data (rows routed and split histograms counted on one core, the
        # chain on row bitsets), then as large data (all cores, the chain on the row
        # layout: bitsets too large); numba's kernels even where a precompiled build
        # would stand in for them (dprm.precompiled: built from these types afterwards)
        for size, small_or_large in (("small", settings), ("large", (0, 0, -1))):
            (compiled.PARALLEL_ROUTING_ROWS, criterion.PARALLEL_HISTOGRAM_CELLS,
             private.BIT_CHAIN_BYTES) = small_or_large
            # two-byte codes: 300 equally wide thresholds (a chosen grid of 400 rows may keep fewer than 256)
            wide = {"max_splits": 300, "numeric_grid": "equal-width"}
            for algorithm, extra in (("mcmc-tree-pair", {}), ("alt-mcmc", {}), ("alt-expm", {}),
                                     ("mcmc-tree-pair", wide), ("alt-mcmc", wide)):
                width = "two-byte codes" if extra else "one-byte codes"
                step(f"compiling the kernels of {algorithm} ({size} data, {width}; "
                     f"{time.perf_counter() - started:.0f} s so far)")
                miner = make_miner(algorithm, epsilon=1.0, depth=2, init_trials=2, **extra)
                with numba_only():
                    miner.fit(data, accountant=Accountant(1.0, SeededNoise(np.random.default_rng(0))),
                              rng=np.random.default_rng(0))
    finally:
        compiled.PARALLEL_ROUTING_ROWS, criterion.PARALLEL_HISTOGRAM_CELLS, private.BIT_CHAIN_BYTES = settings
    step(f"compiling the itemset estimate's kernels ({time.perf_counter() - started:.0f} s so far)")
    stream = make_transactions(500, n_variables=6, n_patterns=4, rng=np.random.default_rng(0))
    with numba_only():  # numba's kernels, for the build's argument types (dprm.precompiled.KERNELS)
        estimator = DensityEstimator(n_chains=2, grace_period=50, random_state=0).fit(stream.data)
        run_ison(estimator, 0.2)
        # rows whose tested columns are not given, marginalised over the children (the "paths" method;
        # ISON's products read most rows without it: ConditionalTree.target_proba)
        for tree in estimator.chains_[0].trees:
            tree.predict_proba(np.full((1, len(estimator.columns_)), -1, dtype=np.int64))
        # a table this small is grown in batch: the online learner's kernels (a stream, a
        # table beyond ROWS_TO_LEARN rows, passes or learner="hoeffding") by one online fit
        DensityEstimator(n_chains=1, grace_period=50, learner="hoeffding", random_state=0).fit(stream.data)
        keys = KeySet(1, capacity=1)
        keys.add(np.arange(1, 65, dtype=np.uint64))  # grows: a set of candidates rehashed
        keys.contains(np.arange(1, 3, dtype=np.uint64))
    step(f"compiling the tree classifier's chain ({time.perf_counter() - started:.0f} s so far)")
    _warm_classifier()
    return report(dispatchers, before, started)


def _warm_classifier() -> None:
    """One whole-tree fit by MCMC (:mod:`dprm.classifier._chain_kernel`) on generated data."""
    import warnings

    import numpy as np

    from dprm.classifier import DPDecisionTreeClassifier
    from dprm.datasets import make_planted_classification

    data = make_planted_classification(300, rng=np.random.default_rng(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # seeded noise: not private
        DPDecisionTreeClassifier(epsilon=1.0, max_depth=3, embedding_depth=3, search="mcmc", mcmc_steps=50,
                                 categories=data.categories, classes=data.classes, random_state=0).fit(data.X, data.y)


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
