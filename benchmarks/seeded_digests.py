"""Digests of seeded outputs of every miner, the classifier and itemsets.

A refactoring must not change what a seeded run writes. This script runs each
command line tool with a fixed seed on small generated and shared data and prints
one SHA-256 per output (the JSON written with ``-o`` and the terminal output, in
both of which the temporary directory's path is replaced by ``OUT``). Run it before and
after a change and compare the lines::

    python benchmarks/seeded_digests.py > before.txt
    ... change ...
    python benchmarks/seeded_digests.py > after.txt
    diff before.txt after.txt

It needs ``../shared/data`` beside the checkout (the UCI tables) and takes about a
minute on two cores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"

MINERS = ["default", "alt-expm", "alt-mcmc", "mcmc-tree-pair", "serenade-cs", "serenade-es",
          "serenade-es-nosens", "cartwheels", "reremi"]


def _dprm(*args: str) -> list[str]:
    return [sys.executable, "-m", "dprm", *args]


#: Keys of a redescription (or ``parameters.NAME``) left out with --without (outputs added on purpose).
WITHOUT: tuple[str, ...] = ()


def _json_without(data: bytes) -> bytes:
    """The document with the :data:`WITHOUT` keys of every redescription removed, re-serialised."""
    document = json.loads(data)
    for key in WITHOUT:
        if key.startswith("parameters."):
            document.get("parameters", {}).pop(key.partition(".")[2], None)
    for redescription in document.get("redescriptions", []):
        for key in WITHOUT:
            redescription.pop(key, None)
    return json.dumps(document, sort_keys=True).encode()


def _run(name: str, command: list[str], out: Path, outputs: list[Path]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    text = (done.stdout + done.stderr).replace(str(out), "OUT")
    digest = hashlib.sha256(f"exit {done.returncode}\n{text}".encode()).hexdigest()[:16]
    parts = [f"terminal={digest}"]
    for path in outputs:
        data = path.read_bytes().replace(str(out).encode(), b"OUT") if path.exists() else b"<missing>"
        if WITHOUT and path.exists():
            data = _json_without(data)
        parts.append(f"{path.name}={hashlib.sha256(data).hexdigest()[:16]}")
    print(f"{name:<34} exit={done.returncode} " + " ".join(parts), flush=True)


def _categorical_types(csv: Path, target: Path) -> Path:
    """A types file declaring every column of ``csv`` categorical with the categories it holds."""
    import pandas as pd

    frame = pd.read_csv(csv, dtype=str, keep_default_na=False)
    columns = {name: {"type": "categorical",
                      "categories": sorted(frame[name].unique())}
               for name in frame.columns}
    target.write_text(json.dumps({"columns": columns}), encoding="utf-8")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=800, help="rows of the generated planted data")
    parser.add_argument("--without", default="", help="comma-separated redescription keys to leave out of the "
                        "JSON digests (re-serialised with sorted keys), e.g. "
                        "independence,redundant,parameters.max_overlap,parameters.redundancy")
    args = parser.parse_args()
    global WITHOUT
    WITHOUT = tuple(k for k in args.without.split(",") if k)
    out = Path(tempfile.mkdtemp(prefix="dprm-digests-"))
    try:
        data = out / "data"
        subprocess.run(_dprm("datasets", "make-planted", str(data), "--rows", str(args.rows), "--seed", "3"),
                       check=True, capture_output=True)
        views = [str(data / "left.csv"), str(data / "right.csv"), "--types", str(data / "types.json")]
        for miner in MINERS:
            algorithm = [] if miner == "default" else ["-a", miner]
            result = out / f"mine-{miner}.json"
            _run(f"mine {miner}", _dprm("mine", *views, *algorithm, "--seed", "11", "-o", str(result)),
                 out, [result])
        vote = SHARED / "uci" / "vote.csv"
        vote_types = _categorical_types(vote, out / "vote-types.json")
        for depth in ("1", "3"):
            result = out / f"classify-{depth}.json"
            _run(f"classify vote embedding {depth}",
                 _dprm("classify", str(vote), "--target", "class", "--epsilon", "1", "--max-depth", "3",
                       "--embedding-depth", depth, "--types", str(vote_types), "--cv", "3", "--seed", "5",
                       "-o", str(result)), out, [result])
        for private in (False, True):
            name = "itemsets vote" + (" epsilon 1" if private else "")
            result = out / ("itemsets-private.json" if private else "itemsets.json")
            budget = ["--epsilon", "1", "--types", str(vote_types)] if private else ["--passes", "3"]
            _run(name, _dprm("itemsets", str(vote), "--min-support", "0.3", *budget,
                             "--seed", "5", "-o", str(result)), out, [result])
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
