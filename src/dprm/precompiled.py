"""dprm's small-run kernels compiled ahead of time: built at install, called without numba.

numba's cache (:mod:`dprm.kernel_cache`) spares a run the compilation, not numba
itself: importing numba and readying its compiler for the first cached kernel costs
about half a CPU-second, which was half of a small run (MAMMAL's 2,575 rows) of a
tree miner. So the kernels such a run calls (:data:`KERNELS`: the serial ones) are
also compiled ahead of time, with numba's own compiler (``numba.pycc``), into one
Python extension module per machine, which a run imports in about a millisecond
without importing numba. ``dprm warm-cache`` builds it (:func:`build`) right after
warming numba's cache, for exactly the argument types of the warm-up's runs (the
types real runs use), from the same source, by the same compiler: the same code.

A call goes through a :class:`Kernel`: the build's variant for the arguments' types
when the build is there and has one, numba's dispatcher otherwise (imported then:
the results are the same, only the start-up differs). The build is used only if it
was made from the current source of :data:`KERNELS`' modules, with this numpy and
Python, for this processor (:func:`fingerprint`), and loads (a damaged one is
ignored); it is looked for in
``$DPRM_PRECOMPILED_DIR`` if set, else in ``__pycache__`` beside dprm's sources and in
the user's cache directory (``~/.cache/dprm``). ``DPRM_PRECOMPILED=0`` turns it off.

The extension's functions hold the GIL while they run (numba's dispatchers release
it, ``nogil=True``): callers that run kernels on several threads at once use numba's
(:func:`dprm.trees.compiled.chain_kernel`).

Code is generated for the x86-64 micro-architecture level (``x86-64-v2``, ``-v3``,
``-v4``) that ``/proc/cpuinfo``'s flags show, or for the generic processor of the
architecture elsewhere: never for instructions this processor lacks, even when a
virtual machine hides some of its model's.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import platform
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "KERNELS", "BuildReport", "Kernel", "build", "fingerprint", "forget", "kernel", "loaded_build", "numba_only",
    "preload",
]

#: The kernels compiled ahead of time, per module: those a small run calls (the
#: kernels with ``parallel=True`` cannot be, and are for large data anyway).
KERNELS: dict[str, tuple[str, ...]] = {
    "dprm.trees._kernels": ("_route_rows_serial", "run_chain"),
    "dprm.trees._bit_kernels": ("split_bitsets", "run_bit_chain"),
    "dprm.trees._histograms": ("code_histograms_serial",),
    # the itemset estimate and ISON (``dprm itemsets``): growing the batch trees, sampling
    # a chain, counting supports in its reference sample, ISON's candidate sets
    "dprm.itemsets._kernels": ("_grow", "_draw", "_pack_codes", "_count_matches", "_soft_predict"),
    "dprm.itemsets._candidate_kernels": ("_encode", "_decode", "_columns_of", "_rehash", "_add_many", "_contains_many",
                                          "_keep_without_rejected", "_merge_block", "_extend"),
}

#: ``DPRM_PRECOMPILED=0``: never use the build (numba's kernels only).
SWITCH = "DPRM_PRECOMPILED"
#: Where to build and look for the build instead of the default places.
DIRECTORY = "DPRM_PRECOMPILED_DIR"

_PREFIX = "_dprm_kernels_"
#: The manifest's format (its argument-type keys): a new one makes older builds unusable.
_FORMAT = 2
#: numba's types of Python's bool, int and float (``numba.typeof``), as numpy writes them.
_BOOL, _INT64, _FLOAT64 = np.dtype(np.bool_).str, np.dtype(np.int64).str, np.dtype(np.float64).str
#: /proc/cpuinfo flags each x86-64 micro-architecture level needs (the psABI's levels).
_X86_LEVELS = (
    ("x86-64-v4", {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}),
    ("x86-64-v3", {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}),
    ("x86-64-v2", {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"}),
)


def target_cpu() -> str:
    """The processor model the build's code is generated for ('' is the generic one).

    Examples
    --------
    >>> target_cpu() in ("", "x86-64-v2", "x86-64-v3", "x86-64-v4")
    True
    """
    if platform.machine() not in ("x86_64", "AMD64"):
        return ""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            flags = next((line.split(":", 1)[1].split() for line in info if line.startswith("flags")), [])
    except OSError:
        return ""
    present, chosen = set(flags), ""
    for name, needed in reversed(_X86_LEVELS):  # v2, v3, v4: each level includes the ones below
        if not needed <= present:
            break
        chosen = name
    return chosen


def _kernel_sources() -> list[Path]:
    """The source files of :data:`KERNELS`' modules, found without importing them or their packages.

    (``importlib.util.find_spec("dprm.itemsets.chain")`` would import ``dprm.itemsets``,
    and with it numba, which the build is there to spare a run.)
    """
    root = Path(__file__).resolve().parent  # dprm's own folder: every kernel module is dprm.<path>
    return [root.joinpath(*name.split(".")[1:]).with_suffix(".py") for name in KERNELS]


def fingerprint() -> str:
    """What a usable build must have been made for: 16 hex digits.

    The source of :data:`KERNELS`' modules, the manifest's format, numpy's version,
    the Python (its cache tag and extension suffix) and :func:`target_cpu`. Not
    numba's version: the build does not use numba when it runs.

    Examples
    --------
    >>> len(fingerprint())
    16
    """
    digest = hashlib.sha256()
    for path in _kernel_sources():
        digest.update(path.read_bytes())
    for part in (_FORMAT, np.__version__, sys.implementation.cache_tag, _extension_suffix(), platform.machine(),
                 target_cpu()):
        digest.update(b"\0" + str(part).encode())
    return digest.hexdigest()[:16]


def _extension_suffix() -> str:
    import importlib.machinery

    return importlib.machinery.EXTENSION_SUFFIXES[0]


def directories() -> list[Path]:
    """Where a build is looked for, in order; :func:`build` writes to the first writable one."""
    if os.environ.get(DIRECTORY):
        return [Path(os.environ[DIRECTORY])]
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return [Path(__file__).resolve().parent / "__pycache__", cache_home / "dprm"]


def argument_type(value: Any) -> str | None:
    """The key of a value's numba type, as :func:`build` writes it for each exported variant.

    numba's rules (``numba.typeof``): an array is its dtype, dimensions, layout (``C``,
    ``F`` or ``A``, the first that applies) and whether it is read-only; a bool is a
    boolean, an int an int64, a float a float64, a numpy scalar its dtype. ``None``:
    a value no build variant takes (an unaligned array, any other object).

    Examples
    --------
    >>> argument_type(np.zeros((2, 3), dtype=np.uint8)), argument_type(np.zeros(4)[::2])
    ('|u1:2C', '<f8:1A')
    >>> argument_type(True), argument_type(7), argument_type(0.5), argument_type(np.int8(1))
    ('|b1', '<i8', '<f8', '|i1')
    """
    if isinstance(value, np.ndarray):
        flags = value.flags
        if not flags.aligned:
            return None
        layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
        return f"{value.dtype.str}:{value.ndim}{layout}{'' if flags.writeable else 'r'}"
    if isinstance(value, (bool, np.bool_)):
        return _BOOL
    if isinstance(value, np.generic):
        return value.dtype.str
    if isinstance(value, int):
        return _INT64 if -(2**63) <= value < 2**63 else None
    if isinstance(value, float):
        return _FLOAT64
    return None


def _numba_type_key(numba_type: Any) -> str | None:
    """:func:`argument_type` of the values numba gives ``numba_type``; None if not one of those."""
    from numba import types
    from numba.np.numpy_support import as_dtype

    if isinstance(numba_type, types.Array):
        if not numba_type.aligned:
            return None
        readonly = "" if numba_type.mutable else "r"
        return f"{as_dtype(numba_type.dtype).str}:{numba_type.ndim}{numba_type.layout}{readonly}"
    if isinstance(numba_type, (types.Boolean, types.Integer, types.Float)):
        return as_dtype(numba_type).str
    return None


@dataclass
class BuildReport:
    """What :func:`build` did.

    Attributes
    ----------
    variants : int
        Kernel variants (one per argument types) in the build; 0 when none was made.
    seconds : float
        Wall time of the build.
    path : str or None
        The extension module written.
    reason : str
        Why no build was made ('' when one was).
    kept : bool
        The same build was there already and is kept (not compiled again).
    """

    variants: int = 0
    seconds: float = 0.0
    path: str | None = None
    reason: str = ""
    kept: bool = False

    def summary(self) -> str:
        """One line for the terminal.

        Examples
        --------
        >>> BuildReport(variants=6, seconds=12.5, path="/p/_dprm_kernels_0.so").summary()
        'precompiled kernels: 6 variants in 12.5 s (/p/_dprm_kernels_0.so)'
        >>> BuildReport(reason="no C compiler").summary()
        "precompiled kernels: none (no C compiler); runs use numba's cache"
        >>> BuildReport(variants=6, seconds=0.2, path="/p/_dprm_kernels_0.so", kept=True).summary()
        'precompiled kernels: 6 variants, up to date (/p/_dprm_kernels_0.so)'
        """
        if self.path is None:
            return f"precompiled kernels: none ({self.reason}); runs use numba's cache"
        if self.kept:
            return f"precompiled kernels: {self.variants} variants, up to date ({self.path})"
        return f"precompiled kernels: {self.variants} variants in {self.seconds:.1f} s ({self.path})"


def build(dispatchers: Mapping[str, Any]) -> BuildReport:
    """Compile :data:`KERNELS` ahead of time for the argument types ``dispatchers`` were compiled for.

    ``dispatchers`` are dprm's numba kernels by ``"module.function"``, as
    :func:`dprm.kernel_cache.kernels` gives them after
    :func:`~dprm.cli.warm_cache.warm_up` (``dprm warm-cache`` does both): each kernel
    is exported once per specialisation they hold, as ``<kernel>_<i>``, and a
    manifest beside the module lists each export's argument types
    (:func:`argument_type`). Writes to the first writable
    of :func:`directories` (then removes the builds of other fingerprints there);
    the files appear whole or not at all. A build of the same fingerprint with the
    same exports already there is kept (compiling it again would write the same
    module: about 20 CPU-s saved on every later ``dprm warm-cache``). When the build
    cannot be made (numba without ``pycc``, no C compiler, nothing cached) it says
    why in the report and runs keep using numba's cache.
    """
    started = time.perf_counter()
    try:
        with warnings.catch_warnings():  # pycc is "pending deprecation" since numba 0.57 (requirements.lock fixes numba)
            warnings.simplefilter("ignore")
            from numba.pycc import CC
    except ImportError as error:
        return BuildReport(reason=f"numba.pycc unavailable: {error}")
    target = next((d for d in directories() if _writable(d)), None)
    if target is None:
        return BuildReport(reason="no writable directory: " + ", ".join(map(str, directories())))
    key = fingerprint()
    name = _PREFIX + key
    try:
        compiler = CC(name, source_module=__name__)  # finds the C compiler
    except Exception as error:  # noqa: BLE001 - numba's toolchain check: say it, keep numba's cache
        return BuildReport(reason=f"compiling failed: {_first_line(error)}")
    compiler.target_cpu = target_cpu()
    exports = []
    for module, functions in KERNELS.items():
        for function in functions:
            dispatcher = dispatchers[f"{module}.{function}"]
            for argument_types, compiled in dispatcher.overloads.items():
                keys = [_numba_type_key(t) for t in argument_types]
                if None in keys:
                    continue
                export = f"{function.lstrip('_')}_{sum(e['function'] == function for e in exports)}"
                compiler.export(export, compiled.signature)(dispatcher.py_func)
                exports.append({"module": module, "function": function, "export": export, "arguments": keys})
    if not exports:
        return BuildReport(reason="numba's cache holds none of the kernels: run dprm warm-cache")
    module_file = target / compiler.output_file
    manifest = {"fingerprint": key, "target_cpu": compiler.target_cpu, "kernels": exports}
    if module_file.is_file() and _manifest(target / (name + ".json")) == manifest:
        return BuildReport(variants=len(exports), seconds=time.perf_counter() - started, path=str(module_file),
                           kept=True)
    with tempfile.TemporaryDirectory(dir=target, prefix=".build-") as scratch:
        compiler.output_dir = scratch
        try:
            compiler.compile()
        except Exception as error:  # noqa: BLE001 - the C compiler's or linker's failure: say it, keep numba's cache
            return BuildReport(reason=f"compiling failed: {_first_line(error)}")
        os.replace(Path(scratch) / compiler.output_file, module_file)
        (Path(scratch) / "manifest").write_text(json.dumps(manifest, indent=1))
        os.replace(Path(scratch) / "manifest", target / (name + ".json"))
    for stale in target.glob(_PREFIX + "*"):
        if not stale.name.startswith(name):
            stale.unlink(missing_ok=True)
    return BuildReport(variants=len(exports), seconds=time.perf_counter() - started, path=str(module_file))


def _manifest(path: Path) -> dict | None:
    """The manifest at ``path``, or None when there is none (or it is not JSON)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _writable(directory: Path) -> bool:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK)


_numba_only = False


@contextmanager
def numba_only() -> Iterator[None]:
    """Within: every :class:`Kernel` calls numba's dispatcher (``dprm warm-cache`` warms numba's cache so).

    Examples
    --------
    >>> with numba_only():
    ...     kernel("dprm.trees._kernels", "run_chain").precompiled() is None
    True
    """
    global _numba_only
    before, _numba_only = _numba_only, True
    try:
        yield
    finally:
        _numba_only = before


_Table = dict[tuple[str, str], dict[tuple[str | None, ...], Callable[..., Any]]]
_table: _Table | None = None
_build_path: str | None = None
_loading = threading.Lock()


def _variants() -> _Table:
    """The build's functions: ``(module, kernel)`` → argument types → function ({} without a build).

    Loaded once per process (under a lock: chains call kernels from several threads).
    """
    global _table, _build_path
    if _table is None:
        with _loading:
            if _table is None:
                _build_path = _find_build()
                _table = {} if _build_path is None else _load(_build_path)
    return _table


def _find_build() -> str | None:
    if os.environ.get(SWITCH, "1") == "0":
        return None
    name = _PREFIX + fingerprint()
    for directory in directories():
        module_file = directory / (name + _extension_suffix())
        if module_file.is_file() and module_file.with_name(name + ".json").is_file():
            return str(module_file)
    return None


def _load(path: str) -> _Table:
    name = Path(path).name.split(".")[0]
    try:
        manifest = json.loads(Path(path).with_name(name + ".json").read_text())
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        table: _Table = {}
        for entry in manifest["kernels"]:
            table.setdefault((entry["module"], entry["function"]), {})[tuple(entry["arguments"])] = getattr(
                module, entry["export"])
    except (OSError, ImportError, ValueError, KeyError, TypeError, AttributeError):
        return {}  # a damaged build: numba's kernels, which give the same results, do the work
    return table


def loaded_build() -> str | None:
    """Path of the build this process uses (its fingerprint is :func:`fingerprint`), or None.

    Examples
    --------
    >>> loaded_build() is None or Path(loaded_build()).name.startswith("_dprm_kernels_")
    True
    """
    return _build_path if _variants() else None


def forget() -> None:
    """Forget the loaded build: the next call looks again (after changing ``DPRM_PRECOMPILED_DIR``)."""
    global _table, _build_path
    with _loading:
        _table, _build_path = None, None


def preload() -> bool:
    """Load the build now (a process that forks or waits for work); whether there is one."""
    return bool(_variants())


class Kernel:
    """One compiled kernel, called through the build when it has the arguments' types.

    Parameters
    ----------
    module, name : str
        The numba kernel (``@njit``) it stands for: ``module.name``.

    Examples
    --------
    >>> route = kernel("dprm.trees._kernels", "_route_rows_serial")
    >>> codes = np.array([[1, 0, 255]], dtype=np.uint8)   # one Boolean attribute, 3 rows
    >>> route(codes, 255, np.array([0]), np.array([1]), np.array([False]), np.arange(3), 0, 1).tolist()
    [1, 2, 0]
    """

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def precompiled(self, *args: Any) -> Callable[..., Any] | None:
        """The build's function for these arguments, or None (then numba's is called)."""
        if _numba_only:
            return None
        variants = _variants().get((self.module, self.name))
        return None if variants is None else variants.get(tuple(argument_type(a) for a in args))

    def numba(self) -> Callable[..., Any]:
        """numba's dispatcher (imports numba)."""
        return getattr(importlib.import_module(self.module), self.name)

    def __call__(self, *args: Any) -> Any:
        function = self.precompiled(*args)
        return (function or self.numba())(*args)


@cache
def kernel(module: str, name: str) -> Kernel:
    """The :class:`Kernel` of ``module.name`` (one of :data:`KERNELS`)."""
    if name not in KERNELS.get(module, ()):
        raise ValueError(f"{module}.{name} is not compiled ahead of time (see KERNELS)")
    return Kernel(module, name)
