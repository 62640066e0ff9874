"""numba's on-disk cache of dprm's compiled kernels: warm it once, then only load it.

dprm's inner loops are numba functions (``@njit(cache=True)``, the modules in
:data:`KERNEL_MODULES`). numba compiles a kernel the first time it is called with
new argument types (about 7 s for the MCMC tree kernels) and writes the machine code
to its cache, from which every later process loads it in milliseconds. Where the
cache lives (numba's rule, first that applies):

1. ``$NUMBA_CACHE_DIR`` when set;
2. ``__pycache__`` beside the kernel's source file, when that directory is writable
   (an editable or user-owned install: what ``make`` sets up);
3. the user's cache directory (``~/.cache/numba`` on Linux) otherwise, e.g. for a
   read-only ``site-packages``.

An entry is valid for one source file (its modification time and size: editing a
kernel invalidates it), one Python and numba version and one CPU model (numba keys
it by CPU name and features), so a cache copied from another machine is ignored, never
used wrongly. This is why dprm warms the cache on the machine itself at install time
(``dprm warm-cache``, run by the Makefile's set-up: :mod:`dprm.cli.warm_cache`)
rather than shipping compiled code in the package.

The warm-up compiles by *running* the code that calls the kernels on small
generated data (the tree miners, at both widths of the literal codes, and the
itemset estimator), so the cache holds exactly the argument types real runs use; it
lives in the command line's layer, above the miners it runs. This module sits below
every layer: it names the kernel modules and imports them only by name, on demand.
:func:`load_cached` loads, without running anything, every entry the cache holds for
this CPU: a parent process that forks workers (``dprm evaluate``, the server's fork
server) pays numba's start-up once, and starts no numba threads before
it forks.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["KERNEL_MODULES", "CacheReport", "kernels", "counts", "report", "load_cached"]

#: The modules that define compiled kernels.
KERNEL_MODULES: tuple[str, ...] = (
    "dprm.trees._kernels",
    "dprm.trees._bit_kernels",
    "dprm.trees._histograms",
    "dprm.itemsets._candidate_kernels",
    "dprm.itemsets._kernels",
    "dprm.classifier._chain_kernel",
)


@dataclass
class CacheReport:
    """What the warm-up (:func:`dprm.cli.warm_cache.warm_up`) or :func:`load_cached` did.

    Attributes
    ----------
    kernels : int
        Compiled kernels found in :data:`KERNEL_MODULES`.
    loaded : int
        Kernel specialisations (one per argument types) read from the cache.
    compiled : int
        Specialisations compiled (and written to the cache) because it had none.
    seconds : float
        Wall time of the whole step.
    locations : list of str
        The cache directories in use.
    """

    kernels: int = 0
    loaded: int = 0
    compiled: int = 0
    seconds: float = 0.0
    locations: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the terminal.

        Examples
        --------
        >>> CacheReport(kernels=3, loaded=2, compiled=1, seconds=0.5, locations=["/c"]).summary()
        '3 kernels: 2 loaded from the cache, 1 compiled, in 0.5 s (cache: /c)'
        """
        return (f"{self.kernels} kernels: {self.loaded} loaded from the cache, {self.compiled} compiled, "
                f"in {self.seconds:.1f} s (cache: {', '.join(self.locations) or 'none'})")


def kernels() -> dict[str, Any]:
    """Every compiled kernel of dprm: ``"module.function"`` → numba dispatcher (imports them).

    Examples
    --------
    >>> "dprm.trees._kernels.run_chain" in kernels()
    True
    """
    from numba.core.registry import CPUDispatcher

    found = {}
    for name in KERNEL_MODULES:
        module = importlib.import_module(name)
        for attribute, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == name:
                found[f"{name}.{attribute}"] = value
    return found


def counts(dispatchers: dict[str, Any]) -> tuple[int, int]:
    """Cache hits and misses (loads and compilations) of ``dispatchers`` so far."""
    hits = sum(sum(d.stats.cache_hits.values()) for d in dispatchers.values())
    misses = sum(sum(d.stats.cache_misses.values()) for d in dispatchers.values())
    return hits, misses


def report(dispatchers: dict[str, Any], before: tuple[int, int], started: float) -> CacheReport:
    """What happened to ``dispatchers`` since ``before`` (:func:`counts`) and ``started`` (perf_counter)."""
    hits, misses = counts(dispatchers)
    locations = sorted({str(d.stats.cache_path) for d in dispatchers.values() if d.stats.cache_path})
    return CacheReport(kernels=len(dispatchers), loaded=hits - before[0], compiled=misses - before[1],
                       seconds=time.perf_counter() - started, locations=locations)


def load_cached(*, parallel: bool = True) -> CacheReport:
    """Load every cached specialisation of every kernel for this CPU; run and compile nothing.

    An entry of another CPU or of an edited source file is skipped (numba would not
    use it either); a kernel never warmed is left to compile on its first call.
    Uses numba's cache index (``Dispatcher._cache``, pinned numba version).

    Parameters
    ----------
    parallel : bool
        Also load the kernels compiled with ``parallel=True``. Loading one starts
        numba's threading layer (GNU OpenMP here), after which a ``fork()`` kills
        the child: a process that forks workers passes ``False`` and leaves those
        few to its children (they load in milliseconds once numba is up).
    """
    started = time.perf_counter()
    dispatchers = kernels()
    before = counts(dispatchers)
    for dispatcher in dispatchers.values():
        if not parallel and dispatcher.targetoptions.get("parallel"):
            continue
        cache = dispatcher._cache
        magic = dispatcher.targetctx.codegen().magic_tuple()
        for key in cache._cache_file._load_index():
            signature, key_magic = key[0], key[1]
            if key_magic == magic and signature not in dispatcher.overloads:
                dispatcher.compile(signature)  # found in the cache: a load, not a compilation
    return report(dispatchers, before, started)
