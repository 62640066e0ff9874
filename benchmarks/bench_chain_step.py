"""CPU per Metropolis–Hastings step of the compiled tree-pair chain, two kernels interleaved.

On a shared machine, runs made minutes apart do not compare (other jobs change the
CPU seconds too). This benchmark prepares one pair chain on the benchmark data (as
``dprm.trees.private.prepare_tree_pair`` does: random start, pre-drawn proposals and
acceptance numbers) and runs it with this checkout's ``dprm.trees._kernels.run_chain``
and, with ``--baseline``, with the ``run_chain`` of another copy of ``_kernels.py``
(e.g. ``git show REV:src/dprm/trees/_kernels.py > /tmp/old_kernels.py``), alternating
the two, each run on fresh copies of the chain's state. It checks that both reach the
same final state (same splits, same counts: the same chain) and prints the user CPU
of the calling thread per step, best and median of ``--repeat`` runs.

The baseline runs with its own types of the chain's arrays (the classes in 4 bytes
unless ``--baseline-classes int8``), this checkout with those ``ChainJob`` makes.

Usage::

    python benchmarks/bench_tree_miners.py --write 115200 /tmp/planted   # once
    python benchmarks/bench_chain_step.py --data /tmp/planted [--baseline /tmp/old_kernels.py]
        [--steps 2000] [--repeat 8] [--epsilon 0.00475]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from pathlib import Path

import numpy as np

from dprm.data import load_two_view
from dprm.data.literal_index import LiteralIndex
from dprm.privacy import Accountant, SeededNoise
from dprm.trees import _kernels
from dprm.trees.private import prepare_tree_pair

#: Positions of the arrays a chain updates in place, and of the classes, in ``ChainJob.arguments``.
NODE_SPLITS, COUNTS, CLASSES = (12, 18), (16, 22), (17, 23)


def _load_kernels(path: str):
    spec = importlib.util.spec_from_file_location("baseline_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fresh(arguments: tuple, classes: str | None) -> tuple:
    """Copies of the chain's mutable arrays (the literal codes are only read: shared)."""
    out = [a.copy() if isinstance(a, np.ndarray) and a.ndim >= 1 and a.size < 10_000_000 else a
           for a in arguments]
    if classes is not None:
        for position in CLASSES:
            out[position] = out[position].astype(classes)
    return tuple(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="a folder with left.csv, right.csv and types.json")
    parser.add_argument("--baseline", help="another _kernels.py to compare with")
    parser.add_argument("--baseline-classes", default="int32", help="the class type the baseline gets")
    parser.add_argument("--steps", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=8)
    parser.add_argument("--epsilon", type=float, default=0.00475, help="the chain's ε (the benchmark's: 0.00475)")
    parser.add_argument("--depth", type=int, default=4)
    args = parser.parse_args()

    folder = Path(args.data)
    data = load_two_view(folder / "left.csv", folder / "right.csv", types=folder / "types.json")
    left, right = LiteralIndex(data.left), LiteralIndex(data.right)
    target = (left.codes[0] == 1).astype(np.int64)  # a Boolean attribute of the left view as the initial target
    accountant = Accountant(1e9, SeededNoise(np.random.default_rng(0)))
    job = prepare_tree_pair(left, right, target, 2, args.depth, args.epsilon, accountant, "chain",
                            np.random.default_rng(1), iterations=args.steps)
    kernels = {"this checkout": (_kernels.run_chain, None)}
    if args.baseline:
        kernels["baseline"] = (_load_kernels(args.baseline).run_chain, args.baseline_classes)

    finals = {}
    for name, (run_chain, classes) in kernels.items():  # compiles (or loads) each, and checks the chain
        state = _fresh(job.arguments, classes)
        steps, accepted = run_chain(*state, 0, args.steps, np.zeros(1))
        finals[name] = [state[p].tolist() for p in NODE_SPLITS + COUNTS]
    print(f"{data.n_rows:,} rows, depth {args.depth}, ε {args.epsilon}: {steps} steps, {accepted} accepted; "
          f"same chain: {all(f == finals['this checkout'] for f in finals.values())}")
    times = {name: [] for name in kernels}
    for _ in range(args.repeat):
        for name, (run_chain, classes) in kernels.items():
            state = _fresh(job.arguments, classes)
            start = time.thread_time()
            run_chain(*state, 0, args.steps, np.zeros(1))
            times[name].append((time.thread_time() - start) / args.steps * 1e6)
    for name, values in times.items():
        print(f"{name}: {min(values):.1f} µs a step (best of {args.repeat}), median {statistics.median(values):.1f}")


if __name__ == "__main__":
    main()
