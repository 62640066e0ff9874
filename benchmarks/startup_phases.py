"""Where a ``dprm mine`` run's CPU goes: CPU seconds (user + system, all threads) per phase.

Runs the ``mine`` command in this process (as ``python -m dprm mine ...`` does) and
reads the process's CPU time at each mark: the interpreter, importing the command
line, the ``mine`` command (the miners, the data layer, the queries), parsing the
options, reading and encoding the files, the fit (a tree miner's includes numba's
import and start-up at its first kernel call), the JSON document, the table printed.
``benchmarks/bench_startup.py --phases`` runs it in a fresh process per miner.

Usage::

    python benchmarks/startup_phases.py mine LEFT RIGHT --types T --epsilon 1 --output O [--algorithm A]

Prints one line ``PHASES name seconds | ...`` on standard error.
"""

from __future__ import annotations

import importlib
import resource
import sys


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    marks = [("interpreter", _cpu())]

    def mark(name: str) -> None:
        marks.append((name, _cpu()))

    app = importlib.import_module("dprm.cli.app")
    mark("import CLI")
    mine = importlib.import_module("dprm.cli.mine")
    mark("import mine command")
    load_views, fit, write_document = mine.load_views, mine._fit, mine._write_document

    def timed_load(*args, **kwargs):
        mark("options")
        result = load_views(*args, **kwargs)
        mark("read+encode")
        return result

    def timed_fit(*args, **kwargs):
        fit(*args, **kwargs)
        mark("fit")

    def timed_document(*args, **kwargs):
        write_document(*args, **kwargs)
        mark("document")

    mine.load_views, mine._fit, mine._write_document = timed_load, timed_fit, timed_document
    sys.argv = ["dprm"] + sys.argv[1:]
    try:
        app.main()
    except SystemExit as stop:
        if stop.code:
            raise
    mark("print")
    parts, previous = [], 0.0
    for name, seconds in marks:
        parts.append(f"{name} {seconds - previous:.3f}")
        previous = seconds
    sys.stderr.write("PHASES " + " | ".join(parts) + f" | total {previous:.3f}\n")


if __name__ == "__main__":
    main()
