"""Imported once by the experiment runner's fork server: loads the compiled kernels there.

:func:`dprm.evaluation.runner.run_experiment` starts every run in a new process
forked from one fork server (``multiprocessing``'s ``forkserver``), which imports
this module first. Each run's process thus starts with numpy, the miners and the
compiled kernels (numba's and the ahead-of-time build, :mod:`dprm.precompiled`)
already in memory, instead of paying numba's start-up again and again. Nothing is
run here, and the kernels compiled with ``parallel=True`` are left to the children:
loading one starts numba's OpenMP threads, after which a fork kills the child
(:func:`dprm.kernel_cache.load_cached`).
"""

from dprm.kernel_cache import load_cached
from dprm.precompiled import preload

__all__: list[str] = []

try:
    preload()
    load_cached(parallel=False)
except Exception:  # noqa: BLE001 - only a head start: a failure here must not stop the fork server
    pass
