"""CPU per Metropolis–Hastings step of the compiled tree-pair chain, kernels interleaved.

On a shared machine, runs made minutes apart do not compare (other jobs change the
CPU seconds too). This benchmark prepares one pair chain on the benchmark data (as
``dprm.trees.private.prepare_tree_pair`` does: random start, pre-drawn proposals and
acceptance numbers) and runs it with this checkout's two in-process kernels, the
pre-order layout (``dprm.trees._kernels.run_chain``) and the row bitsets
(``dprm.trees._bit_kernels.run_bit_chain``), and, with ``--baseline``, with the
``run_chain`` of another copy of ``_kernels.py`` (e.g. ``git show
REV:src/dprm/trees/_kernels.py > /tmp/old_kernels.py``), alternating them, each run on
fresh copies of the chain's state. It checks that all reach the same final state
(same splits, same counts, same cells: the same chain) and prints the user CPU of
the calling thread per step, best and median of ``--repeat`` runs.

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
from dprm.trees import _bit_kernels, _kernels, private
from dprm.trees.private import prepare_tree_pair

#: Positions of the arrays a chain updates in place (node splits, cells, counts), and of
#: the classes, in ``ChainJob.arguments`` of the layout kernel and of the bitset kernel.
LAYOUT_STATE, LAYOUT_CLASSES = (12, 13, 16, 18, 19, 22), (17, 23)
BITS_STATE = (12, 13, 14, 16, 17, 18)


def _load_kernels(path: str):
    spec = importlib.util.spec_from_file_location("baseline_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fresh(arguments: tuple, classes: str | None) -> tuple:
    """Copies of the chain's mutable arrays (the literal codes are only read: shared)."""
    out = [a.copy() if isinstance(a, np.ndarray) and a.ndim >= 1 and a.size < 10_000_000 and a.dtype != np.uint64
           else a for a in arguments]  # (uint64: the split bitsets, only read)
    if classes is not None:
        for position in LAYOUT_CLASSES:
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
    parser.add_argument("--mcmc-nodes", default="uniform", help="the node choice (uniform or by-depth)")
    args = parser.parse_args()

    folder = Path(args.data)
    data = load_two_view(folder / "left.csv", folder / "right.csv", types=folder / "types.json",
                         duplicate_names="rename")  # (MAMMAL has two columns of one name)
    left, right = LiteralIndex(data.left), LiteralIndex(data.right)
    target = (left.codes[0] == 1).astype(np.int64)  # a Boolean attribute of the left view as the initial target
    jobs = {}
    for bits, limit in ((False, -1), (True, private.BIT_CHAIN_BYTES)):  # the same draws for both kernels
        private.BIT_CHAIN_BYTES = limit
        accountant = Accountant(1e9, SeededNoise(np.random.default_rng(0)))
        jobs[bits] = prepare_tree_pair(left, right, target, 2, args.depth, args.epsilon, accountant, "chain",
                                       np.random.default_rng(1), iterations=args.steps, node_choice=args.mcmc_nodes)
        assert jobs[bits].bitsets == bits
    kernels = {"layout": (_kernels.run_chain, jobs[False], None, LAYOUT_STATE),
               "bitsets": (_bit_kernels.run_bit_chain, jobs[True], None, BITS_STATE)}
    if args.baseline:
        kernels["baseline"] = (_load_kernels(args.baseline).run_chain, jobs[False], args.baseline_classes,
                               LAYOUT_STATE)

    finals = {}
    for name, (run_chain, job, classes, positions) in kernels.items():  # compiles (or loads), checks the chain
        state = _fresh(job.arguments, classes)
        steps, accepted = run_chain(*state, 0, args.steps, np.zeros(1))
        finals[name] = [state[p].tolist() for p in positions]
    print(f"{data.n_rows:,} rows, depth {args.depth}, ε {args.epsilon}: {steps} steps, {accepted} accepted; "
          f"same chain: {all(f == finals['layout'] for f in finals.values())}")
    times = {name: [] for name in kernels}
    for _ in range(args.repeat):
        for name, (run_chain, job, classes, _) in kernels.items():
            state = _fresh(job.arguments, classes)
            start = time.thread_time()
            run_chain(*state, 0, args.steps, np.zeros(1))
            times[name].append((time.thread_time() - start) / args.steps * 1e6)
    for name, values in times.items():
        print(f"{name}: {min(values):.1f} µs a step (best of {args.repeat}), median {statistics.median(values):.1f}")


if __name__ == "__main__":
    main()
