"""An experiment's directory: its manifest, its lock, its run files and resuming.

Layout of the output directory ``DIR``::

    DIR/experiment.json                     the manifest (what the experiment is)
    DIR/runs/ALGORITHM/EPSILON/RUN.json     each finished run: the spec's document
                                            with a top-level "run" block (seed, seconds,
                                            peak_mb, rows, ...); EPSILON is "none" for
                                            a non-private algorithm
    DIR/runs/ALGORITHM/EPSILON/RUN.failed.json   a run that raised (redone on restart)
    DIR/redescriptions.csv                  one row per redescription of every run,
                                            noisy and true statistics
    DIR/runs.csv                            one row per run
    DIR/summary.csv, DIR/mann_whitney.csv   the papers' tables (dprm.evaluation.tables)

Resuming. A run's JSON is written atomically (temporary file, then
:func:`os.replace`) only when it has finished, so after an interruption (Ctrl-C, a
kill, a crash) a restart skips exactly the finished runs and redoes the others.
The manifest decides whether ``DIR`` holds *the same* experiment: the same data
(by content: SHA-256 of the files, so moved files are fine), types file, id
column, parameters and master seed. Anything else is refused in one line.
The same experiment may be *extended*: more algorithms, more budgets or more runs
of a budget; the manifest then records the union, and every unfinished run of the
union is run (per-run seeds do not depend on which other runs exist, so the old
runs stay valid). ``alpha`` and ``timeout`` only shape the tables and the baselines'
limits: the latest values are recorded. A lock file (``DIR/.lock``) keeps two runners out of one DIR;
the manifest and the finished runs that decide what is written are read with it held
(a runner that read them before would write a stale manifest over another's).

The manifest is read strictly (:func:`read_manifest`, :func:`check_manifest`): its
algorithms name folders under ``DIR/runs``, and a hand-edited one (a text for a list,
``../..``, a name twice, ``NaN``) is refused, never trusted; :func:`_run_path` keeps
every run's path inside ``DIR``. A finished run's document is the planned run's or
it is refused (:func:`_finished`: its run block's master seed, seed and rows).
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import hashlib
import json
import math
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping

from dprm.errors import DprmError, short_repr
from dprm.file_sets import naming, write_named
from dprm.json_values import no_duplicate_keys
from dprm.evaluation.algorithms import is_private, run_seed
from dprm.evaluation.budgets import NO_EPSILON, Budget, epsilon_label, format_budgets, parse_budgets

__all__ = [
    "EXPERIMENT_FORMAT",
    "NOISE_NOTE",
    "RunRecord",
    "check_manifest",
    "read_manifest",
]

#: The format tag of ``experiment.json``.
EXPERIMENT_FORMAT = "dprm.experiment/1"


#: What the manifest and the CLI say about the noise of the runs.
NOISE_NOTE = ("seeded noise: every run is reproducible from its seed; the results are for "
              "evaluation and are not private releases")


_LOCK_NAME = ".lock"


_MANIFEST_NAME = "experiment.json"


@dataclass
class RunRecord:
    """One run of an experiment, as a row of ``runs.csv``."""

    algorithm: str
    epsilon: float | None
    run: int
    seed: int
    seconds: float = math.nan
    peak_mb: float = math.nan
    returned: int | None = None
    kept: int | None = None
    rows: int | None = None
    status: str = "pending"
    message: str = ""

    @property
    def label(self) -> str:
        """The epsilon's directory name (``"none"`` for a non-private run)."""
        return epsilon_label(self.epsilon)

    def row(self) -> dict[str, Any]:
        out = asdict(self)
        out["epsilon"] = math.nan if self.epsilon is None else self.epsilon
        return out


def _atomic_write_text(path: Path, text: str) -> None:
    with naming(path.parent):
        path.parent.mkdir(parents=True, exist_ok=True)
    write_named(path, text)  # a full disk's error names the file


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_entry(path: str | None) -> dict[str, Any] | None:
    if path is None:
        return None
    return {"path": path, "sha256": _sha256(path), "bytes": os.path.getsize(path)}


def read_manifest(out_dir: str | os.PathLike) -> dict[str, Any]:
    """The manifest ``experiment.json`` of an experiment directory, read strictly.

    The file is what dprm writes or nothing (:func:`check_manifest`): UTF-8 JSON
    without ``NaN``, ``Infinity`` or a repeated key, every field of its type and in
    its range. A hand-edited manifest is refused, not trusted: its algorithms name
    the folders the runs are written to.

    Raises
    ------
    DprmError
        One line naming the file and what is wrong: missing, not JSON, not an
        experiment manifest, or a field of another type or out of range.
    """
    path = Path(out_dir) / _MANIFEST_NAME
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark is read past, as in a types file
    except FileNotFoundError:
        raise DprmError(f"{out_dir}: holds no experiment ({_MANIFEST_NAME} is missing)") from None
    except UnicodeDecodeError:
        raise DprmError(f"{path}: cannot read the experiment manifest (not UTF-8 text)") from None
    except OSError as err:
        raise DprmError(f"{path}: cannot read the experiment manifest ({err.strerror or err})") from None
    try:
        manifest = json.loads(text, parse_constant=_no_constant, object_pairs_hook=no_duplicate_keys)
    except json.JSONDecodeError as err:
        raise DprmError(f"{path}: cannot read the experiment manifest (not valid JSON: {err.msg}, line "
                        f"{err.lineno}, column {err.colno})") from None
    except ValueError as err:  # a repeated key, NaN, an integer of more than 4300 digits
        raise DprmError(f"{path}: cannot read the experiment manifest (not valid JSON: {err})") from None
    except RecursionError:
        raise DprmError(f"{path}: cannot read the experiment manifest (JSON nested too deeply)") from None
    if not isinstance(manifest, dict) or manifest.get("format") != EXPERIMENT_FORMAT:
        raise DprmError(f"{path}: not a dprm experiment manifest (format {EXPERIMENT_FORMAT})")
    check_manifest(manifest, str(path))
    return manifest


def _no_constant(token: str) -> Any:
    raise ValueError(f"{token} is not allowed (numbers must be finite)")


def _whole(value: Any) -> bool:
    """A JSON integer >= 0 (not a Boolean, not a float such as ``3.0``)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_manifest(manifest: Mapping[str, Any], source: str) -> None:
    """Refuse a manifest dprm could not have written, in one line naming ``source`` and the field.

    ``format`` is :data:`EXPERIMENT_FORMAT`; ``data.left`` and ``data.right`` (and
    ``data.types`` unless null) are ``{"path": text, "sha256": 64 hex digits, "bytes":
    a whole number}``, ``data.id_column`` null or a text; ``algorithms`` a non-empty
    list of known algorithm names, none twice; ``budgets`` a budget text
    (:func:`~dprm.evaluation.budgets.parse_budgets`); ``parameters`` an object, an
    algorithm's entry an object too; ``seed`` a whole number; ``alpha`` (when given) a
    number in (0, 1); ``timeout`` null or a positive finite number; ``noise``,
    ``created`` and ``dprm_version`` texts. Other keys are ignored.

    Examples
    --------
    >>> check_manifest({"format": EXPERIMENT_FORMAT, "algorithms": "serenade-es"}, "experiment.json")
    Traceback (most recent call last):
    ...
    dprm.errors.DprmError: experiment.json: data is missing (expected a JSON object of the data files)
    """
    from dprm.evaluation.algorithms import known_algorithms
    from dprm.json_values import finite_number

    def refuse(field: str, expected: str, value: Any = None, *, missing: bool = False) -> DprmError:
        if missing:
            return DprmError(f"{source}: {field} is missing (expected {expected})")
        return DprmError(f"{source}: {field} must be {expected}, not {short_repr(value)}")

    data = manifest.get("data")
    if not isinstance(data, dict):
        raise refuse("data", "a JSON object of the data files", data, missing="data" not in manifest)
    for key in ("left", "right", "types"):
        entry = data.get(key)
        if key == "types" and entry is None:
            continue
        expected = "an object {path, sha256, bytes}" + (" or null" if key == "types" else "")
        if not isinstance(entry, dict):
            raise refuse(f"data.{key}", expected, entry, missing=key not in data)
        if not isinstance(entry.get("path"), str) or not entry["path"]:
            raise refuse(f"data.{key}.path", "the file's path (a text)", entry.get("path"),
                         missing="path" not in entry)
        digest = entry.get("sha256")
        if not (isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
            raise refuse(f"data.{key}.sha256", "64 hexadecimal digits", digest, missing="sha256" not in entry)
        if not _whole(entry.get("bytes")):
            raise refuse(f"data.{key}.bytes", "a whole number >= 0", entry.get("bytes"), missing="bytes" not in entry)
    if data.get("id_column") is not None and not isinstance(data["id_column"], str):
        raise refuse("data.id_column", "a column name or null", data["id_column"])
    algorithms = manifest.get("algorithms")
    if not isinstance(algorithms, list) or not algorithms:
        raise refuse("algorithms", "a non-empty list of algorithm names", algorithms,
                     missing="algorithms" not in manifest)
    names = known_algorithms()
    for position, algorithm in enumerate(algorithms):
        if not isinstance(algorithm, str) or algorithm not in names:
            raise refuse(f"algorithms[{position}]", f"one of {', '.join(names)}", algorithm)
        if algorithm in algorithms[:position]:
            raise DprmError(f"{source}: algorithms[{position}]: {algorithm} is listed twice")
    if not isinstance(manifest.get("budgets"), str):
        raise refuse("budgets", "a text EPSxRUNS,...", manifest.get("budgets"), missing="budgets" not in manifest)
    parse_budgets(manifest["budgets"], option=f"{source}: budgets")
    parameters = manifest.get("parameters")
    if not isinstance(parameters, dict):
        raise refuse("parameters", "a JSON object", parameters, missing="parameters" not in manifest)
    for key, value in parameters.items():
        if key in names and not isinstance(value, dict):
            raise refuse(f"parameters.{key}", "a JSON object of the algorithm's parameters", value)
    if not _whole(manifest.get("seed")):
        raise refuse("seed", "a whole number >= 0 (the master seed)", manifest.get("seed"),
                     missing="seed" not in manifest)
    if "alpha" in manifest and not (finite_number(manifest["alpha"]) and 0 < manifest["alpha"] < 1):
        raise refuse("alpha", "a number in (0, 1)", manifest["alpha"])
    timeout = manifest.get("timeout")
    if timeout is not None and not (finite_number(timeout) and timeout > 0):
        raise refuse("timeout", "a positive finite number of seconds or null", timeout)
    for key in ("noise", "created", "dprm_version"):
        if key in manifest and not isinstance(manifest[key], str):
            raise refuse(key, "a text", manifest[key])


def _identity(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """What makes two manifests the same experiment (see the module docstring)."""
    data = manifest["data"]
    return {
        "left": data["left"]["sha256"],
        "right": data["right"]["sha256"],
        "types": None if data.get("types") is None else data["types"]["sha256"],
        "id_column": data.get("id_column"),
        "parameters": manifest.get("parameters", {}),
        "seed": manifest.get("seed"),
    }


def _describe_difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    for key, what in (("left", "left data"), ("right", "right data"), ("types", "types file"),
                      ("id_column", "id column"), ("parameters", "parameters"), ("seed", "master seed")):
        if old[key] != new[key]:
            if key == "seed":  # repr: a text "3" is told from the number 3
                return f"master seed {old[key]!r}, not {new[key]!r}"
            if key == "parameters":
                return (f"parameters {json.dumps(old[key], sort_keys=True)}, not "
                        f"{json.dumps(new[key], sort_keys=True)}")
            return f"other {what}"
    return "another experiment"


def _merge_manifest(old: Mapping[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    if old is None:
        return new
    algorithms = list(old["algorithms"]) + [a for a in new["algorithms"] if a not in old["algorithms"]]
    runs: dict[float, int] = {}
    for spec in (old["budgets"], new["budgets"]):
        for budget in parse_budgets(spec, option="experiment.json budgets"):
            runs[budget.epsilon] = max(runs.get(budget.epsilon, 0), budget.runs)
    merged = dict(new)
    merged["algorithms"] = algorithms
    merged["budgets"] = format_budgets([Budget(e, r) for e, r in runs.items()])
    merged["created"] = old.get("created", new["created"])
    return merged


def _data_files(config: Any) -> dict[str, Any]:
    """The manifest's ``data`` of ``config`` (a checked ``ExperimentConfig``): each file's path, hash and size."""
    return {"left": _file_entry(str(config.left)), "right": _file_entry(str(config.right)),
            "types": _file_entry(None if config.types is None else str(config.types)),
            "id_column": config.id_column}


def _new_manifest(config: Any, old: Mapping[str, Any] | None, out_dir: Path,
                  files: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The manifest of ``config`` (an ``ExperimentConfig``), merged with ``old``'s when it is the same experiment.

    ``files``: :func:`_data_files` of ``config``, when already computed (hashing the data takes a while).

    Raises
    ------
    DprmError
        When ``old`` is incomplete or describes another experiment.
    """
    manifest = {
        "format": EXPERIMENT_FORMAT,
        "data": json.loads(json.dumps(files)) if files is not None else _data_files(config),
        "algorithms": list(config.algorithms),
        "budgets": format_budgets(list(config.budgets)),
        "parameters": json.loads(json.dumps(config.parameters)),  # as it reads back
        "seed": config.seed,
        "alpha": config.alpha,
        "timeout": config.timeout,
        "noise": NOISE_NOTE,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    if old is not None:
        if manifest["seed"] is None:
            manifest["seed"] = old.get("seed")
        try:
            old_identity = _identity(old)
        except (KeyError, TypeError):
            raise DprmError(f"{out_dir / _MANIFEST_NAME}: not a complete experiment manifest") from None
        new_identity = _identity(manifest)
        if old_identity != new_identity:
            raise DprmError(f"{out_dir}: holds another experiment ({_describe_difference(old_identity, new_identity)}); "
                            "choose another --out")
    if manifest["seed"] is None:
        manifest["seed"] = secrets.randbits(63)
    manifest = _merge_manifest(old, manifest)
    from dprm import __version__

    manifest["dprm_version"] = __version__
    return manifest


class _DirectoryLock:
    """An exclusive ``flock`` on ``DIR/.lock`` (released when the process ends).

    ``made``: the run made ``DIR``. When it then fails (a full disk, a refusal under the
    lock) and nothing but the lock is in ``DIR``, the lock file is removed, and so is
    ``DIR``: a failed first run leaves no folder holding only ``.lock``. A lock file
    this run created in a folder that existed (one copied without it) is removed as well
    when the run fails before :meth:`claim` (a finished run's document refused under the
    lock): a refused folder is left as it was found. A lock file that was there is left:
    it is the folder's.

    Removing a lock file while holding it is safe: a runner that opened the file before
    it was removed and took the lock after finds, once it holds it, that the file's name
    no longer leads to the file it locked, and takes the lock again on the file the name
    now leads to (:meth:`__enter__`), so two runners never hold two locks of one folder.
    """

    def __init__(self, out_dir: Path, made: bool = False) -> None:
        self.path = out_dir / _LOCK_NAME
        self.handle = None
        self.made = made
        self.created = False
        self.claimed = False

    def __enter__(self) -> "_DirectoryLock":
        for _ in range(100):
            with naming(self.path):
                try:
                    fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
                    created = True
                except FileExistsError:
                    fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
                    created = False
            handle = open(fd, "a+", encoding="utf-8")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                raise DprmError(f"{self.path.parent}: another dprm evaluate is running in this directory") from None
            if self._still_named(handle):
                self.handle, self.created = handle, created
                return self
            handle.close()  # removed by the runner that held it: lock the file the name leads to now
        raise DprmError(f"{self.path}: the lock file keeps being replaced; is another dprm evaluate running?")

    def _still_named(self, handle: Any) -> bool:
        """Whether ``self.path`` still names the file ``handle`` holds open."""
        try:
            named = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return False
        held = os.fstat(handle.fileno())
        return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)

    def claim(self) -> None:
        """Write this process's id into the lock file: once the checks under the lock passed.

        Taking the lock writes nothing, so that a directory refused under the lock is
        left as it was found.
        """
        self.claimed = True
        with naming(self.path):  # a full disk: the error names the lock
            self.handle.seek(0)
            self.handle.truncate()
            self.handle.write(f"{os.getpid()}\n")
            self.handle.flush()

    def __exit__(self, *exc: Any) -> None:
        failed = bool(exc) and exc[0] is not None
        # the folder this run made holds nothing but the lock: remove both (not when another
        # runner wrote an experiment into it between its making and this run's lock)
        bare = failed and self.made and self._only_the_lock()
        if bare or (failed and self.created and not self.claimed):
            self.path.unlink(missing_ok=True)  # while still held: no other run took it
        if self.handle is not None:
            fcntl.flock(self.handle, fcntl.LOCK_UN)
            self.handle.close()
            self.handle = None
        if bare:
            try:
                self.path.parent.rmdir()  # only when empty: what the run wrote stays
            except OSError:
                pass

    def _only_the_lock(self) -> bool:
        try:
            return all(p.name == _LOCK_NAME for p in self.path.parent.iterdir())
        except OSError:
            return False


def _prepare_directory(out_dir: Path) -> dict[str, Any] | None:
    """Check ``out_dir`` before any work; the existing manifest, if any."""
    if out_dir.exists() and not out_dir.is_dir():
        raise DprmError(f"{out_dir}: exists and is not a directory")
    if not out_dir.exists():
        if not out_dir.parent.exists():
            raise DprmError(f"{out_dir}: directory {out_dir.parent} does not exist")
        return None
    if (out_dir / _MANIFEST_NAME).exists():
        return read_manifest(out_dir)
    leftovers = [p.name for p in out_dir.iterdir() if p.name != _LOCK_NAME]
    if leftovers:
        raise DprmError(f"{out_dir}: not empty and holds no experiment ({_MANIFEST_NAME}); choose another --out")
    return None


def _run_path(out_dir: Path, algorithm: str, label: str, run: int) -> Path:
    """``out_dir/runs/ALGORITHM/LABEL/RUN.json``; refused unless each part is one plain name.

    The manifest's algorithms are known names (:func:`check_manifest`), and this keeps
    it so: a run's document (and its ``.failed.json``, its work folder) is never written
    outside ``out_dir/runs`` (``../../x`` or an absolute path as an algorithm's name).
    """
    for part in (algorithm, label):
        if not isinstance(part, str) or part in ("", ".", "..") or "/" in part or os.sep in part or "\0" in part:
            raise DprmError(f"{out_dir / _MANIFEST_NAME}: {short_repr(part)} is not a folder name under runs/")
    if isinstance(run, bool) or not isinstance(run, int) or run < 0:
        raise DprmError(f"{out_dir / _MANIFEST_NAME}: run {short_repr(run)} is not a whole number")
    return out_dir / "runs" / algorithm / label / f"{run}.json"


def _failed_path(path: Path) -> Path:
    return path.with_name(f"{path.stem}.failed.json")


def _plan(manifest: Mapping[str, Any], out_dir: Path) -> list[RunRecord]:
    """Every run of the experiment, in a stable order (algorithm, budget, run)."""
    budgets = parse_budgets(manifest["budgets"], option="experiment.json budgets")
    seed = int(manifest["seed"])
    plan: list[RunRecord] = []
    for algorithm in manifest["algorithms"]:
        if is_private(algorithm):
            for budget in budgets:
                for run in range(budget.runs):
                    plan.append(RunRecord(algorithm, budget.epsilon, run, run_seed(seed, algorithm, budget.label, run)))
        else:
            plan.append(RunRecord(algorithm, None, 0, run_seed(seed, algorithm, NO_EPSILON, 0)))
    return plan


def _unfinished_algorithms(manifest: Mapping[str, Any], out_dir: Path,
                           finished: Mapping[Path, Any] | None = None) -> list[str]:
    """The algorithms of ``manifest`` with a run not finished in ``out_dir`` (in the manifest's order).

    ``finished``: each run's document read and checked under the lock (None: not
    finished), as the runner's look returns them. Without it (a first look, before
    the lock) a run is finished when its document's file is there: the documents are
    read once, under the lock.
    """
    try:
        plan = _plan(manifest, out_dir)
    except (KeyError, TypeError, ValueError, DprmError):
        return []  # an incomplete manifest is refused later, with its own message
    unfinished = set()
    for p in plan:
        path = _run_path(out_dir, p.algorithm, p.label, p.run)
        if (finished.get(path) is None) if finished is not None else not path.is_file():
            unfinished.add(p.algorithm)
    return [a for a in manifest.get("algorithms", []) if a in unfinished]


def _finished(path: Path, planned: RunRecord, *, master_seed: int | None = None,
              rows: int | None = None) -> dict[str, Any] | None:
    """The document of the finished run ``planned``, or None (no file, or a document without its run block).

    The document is read as ``dprm report --run`` reads one
    (:func:`~dprm.evaluation.run_documents.read_run_document`), as a run of
    ``planned.algorithm`` whose budget is ``planned.epsilon``: a file dprm could not
    have written there (not JSON, NaN, a repeated key, a privacy block that contradicts
    itself, another algorithm's or budget's run) is refused in one line naming it, since
    its statistics would go into the tables as the run's. So is a run block that is
    another run's (:func:`_check_planned`): another master seed, seed, number of rows
    (``master_seed``, ``rows``: the experiment's, when given), algorithm, budget or run
    number. Deleting the file has the run redone.

    Raises
    ------
    DprmError
        When the file is not such a document.
    """
    from dprm.evaluation.run_documents import read_run_document
    from dprm.queries import run_budget

    if not path.is_file():
        return None
    document, _ = read_run_document(path, algorithm=planned.algorithm)
    budget = run_budget(document["privacy"])
    if planned.epsilon is not None and not (budget is not None and math.isclose(budget, planned.epsilon,
                                                                                 rel_tol=1e-9)):
        raise DprmError(f"{path}: the run's budget (privacy.epsilon {_shown(budget)}) is not its folder's "
                        f"epsilon {planned.epsilon:g} (a run of another budget); delete the file to have the "
                        "run redone")
    if not isinstance(document.get("run"), dict):
        return None
    _check_planned(document["run"], path, planned, master_seed, rows)
    return document


def _check_planned(run: Mapping[str, Any], path: Path, planned: RunRecord, master_seed: int | None,
                   rows: int | None) -> None:
    """Refuse a run block (its types checked by the reader) that records another run than ``planned``.

    A document left by another experiment in the same folder (another master seed, or
    data of another size) or moved from another run's place would be skipped as this
    run and its statistics counted as this run's.
    """
    what = f"run {planned.run} of {planned.algorithm} at ε {planned.label}"
    expected: list[tuple[str, Any, str]] = [
        ("master_seed", master_seed, "the experiment's master seed"),
        ("seed", planned.seed, f"the seed of {what}"),
        ("rows", rows, "the rows of the data"),
        ("algorithm", planned.algorithm, "its folder's algorithm"),
        ("run", planned.run, "its file's run number"),
    ]
    for key, value, meaning in expected:
        if value is None or key not in run:
            continue
        if run[key] != value:
            raise DprmError(f"{path}: run.{key} is {short_repr(run[key])}, not {value!r} ({meaning}): a run of "
                            "another experiment; delete the file to have the run redone")
    if "epsilon" in run:
        given = run["epsilon"]
        same = (given is None if planned.epsilon is None
                else given is not None and math.isclose(given, planned.epsilon, rel_tol=1e-9))
        if not same:
            raise DprmError(f"{path}: run.epsilon is {short_repr(given)}, not {planned.label} (its folder's "
                            "epsilon): a run of another experiment; delete the file to have the run redone")


def _shown(value: float | None) -> str:
    return "null" if value is None else f"{value:g}"


def _record_from(document: Mapping[str, Any], planned: RunRecord) -> RunRecord:
    run = document["run"]
    return RunRecord(planned.algorithm, planned.epsilon, planned.run, int(run.get("seed", planned.seed)),
                     float(run.get("seconds", math.nan)), float(run.get("peak_mb", math.nan)),
                     int(run.get("returned", len(document["redescriptions"]))),
                     int(run.get("kept", sum(not r.get("pruned", False) for r in document["redescriptions"]))),
                     run.get("rows"), "ok", "")
