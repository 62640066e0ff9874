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

An entry is valid for one source file (numba keys it by a hash of the file's text:
editing a kernel invalidates it), one Python and numba version and one CPU model (numba keys
it by CPU name and features), so a cache copied from another machine is ignored, never
used wrongly. This is why dprm warms the cache on the machine itself at install time
(``dprm warm-cache``, run by the Makefile's set-up: :mod:`dprm.cli.warm_cache`)
rather than shipping compiled code in the package.

numba compiles a kernel together with the kernels it calls, but checks only the calling
kernel's own file: after an edit (or an update of an installed copy) of
:mod:`dprm.trees._kernels` alone, the cached chain of :mod:`dprm.trees._bit_kernels`
would go on running the old score, silently (measured: a chain scored by the old
``chain_score`` after the function had changed). :func:`tie_to_sources` makes a module's
entries depend on the text of the modules it calls into as well; every kernel module
that calls another's kernels calls it (:data:`KERNEL_DEPENDENCIES`, checked by the tests).

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

import hashlib
import importlib
import importlib.util
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["KERNEL_MODULES", "KERNEL_DEPENDENCIES", "CacheReport", "kernels", "counts", "report", "load_cached",
           "tie_to_sources"]

#: The modules that define compiled kernels.
KERNEL_MODULES: tuple[str, ...] = (
    "dprm.trees._kernels",
    "dprm.trees._bit_kernels",
    "dprm.trees._histograms",
    "dprm.itemsets._candidate_kernels",
    "dprm.itemsets._kernels",
    "dprm.classifier._chain_kernel",
)

#: The first item of a stamp :func:`tie_to_sources` has extended.
_TIED = "dprm: tied to the sources of the kernels it calls"
#: Kernel modules whose kernels call the kernels of other modules: module → those modules.
KERNEL_DEPENDENCIES: dict[str, tuple[str, ...]] = {
    "dprm.trees._bit_kernels": ("dprm.trees._kernels",),
}


def tie_to_sources(namespace: dict[str, Any], *modules: str) -> str:
    """Make the cache entries of the kernels defined in ``namespace`` depend on ``modules``' text too.

    numba stamps a cache entry with a hash of the kernel's own file only, though the
    machine code includes the kernels it calls from other files (module docstring).
    Called at the end of a kernel module with its ``globals()``, this adds the SHA-256
    of ``modules``' source files to the stamp each of its cached kernels is saved
    with and checked against, so an edit of any of them makes numba compile the
    module's kernels again instead of loading stale code. Uses numba's cache object
    (``Dispatcher._cache``, pinned numba version), as :func:`load_cached` does; a kernel
    without an on-disk cache is left alone. Returns the added digest.

    Examples
    --------
    >>> import dprm.trees._bit_kernels as bits
    >>> stamp = bits.run_bit_chain._cache._cache_file._source_stamp
    >>> stamp[2] == tie_to_sources({"__name__": "nothing"}, "dprm.trees._kernels")
    True
    """
    digest = hashlib.sha256()
    for name in modules:
        digest.update(Path(importlib.util.find_spec(name).origin).read_bytes())
    text = digest.hexdigest()
    for value in list(namespace.values()):
        cache_file = getattr(getattr(value, "_cache", None), "_cache_file", None)
        if getattr(value, "py_func", None) is None or value.py_func.__module__ != namespace["__name__"]:
            continue
        stamp = getattr(cache_file, "_source_stamp", None)
        if cache_file is not None and not (isinstance(stamp, tuple) and stamp[:1] == (_TIED,)):
            cache_file._source_stamp = (_TIED, stamp, text)
    return text


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
