"""Imported once by the experiment runner's fork server: loads the compiled kernels there.

:func:`dprm.evaluation.runner.run_experiment` starts every run in a new process
forked from one fork server (``multiprocessing``'s ``forkserver``), which imports
this module first. Each run's process thus starts with numpy, the miners and the
compiled kernels already in memory, instead of paying numba's start-up again and
again. Nothing is run here (:func:`dprm.kernel_cache.load_cached` only loads), so
the server starts no numba threads before it forks.
"""

from dprm.kernel_cache import load_cached

__all__: list[str] = []

load_cached()
