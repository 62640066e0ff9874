"""Registered datasets: files and their hashes, the complete types file, the public schema.

Registration (``dprm admin dataset add``) loads the two views with the same loader,
types file and checks as ``dprm mine`` and refuses a dataset whose types file is not
complete: a private dataset must declare every column with its public domain
(Boolean; numeric with bounds; categorical with categories), because anything read
off the rows (an inferred type, a domain from the data's minimum and maximum, a
constant column left out) would leak into what analysts see and into the miners'
choices. The database keeps:

* the files' absolute paths and SHA-256 digests: before a job or primitive touches
  the rows, :func:`verify_files` hashes the files again and refuses a file that
  changed (``dataset_changed``) or vanished (``dataset_missing``); and a registration
  of a file that an active registration holds, as either view, is refused unless
  asked (:func:`shared_files`: budgets on both names would add up on its people);
* the types file's content (the loader uses this copy, so editing the types file
  later changes nothing) and its digest;
* the **public schema**: view and attribute names, types and declared domains, all
  taken from the types file and the files' headers. Never a row count, a missing
  share or anything else computed from the rows (the row count is not stored at all).

Examples
--------
>>> schema = {"format": "dprm.schema/1", "id_column": "id", "views": {
...     "left": [{"name": "smoker", "type": "boolean"}],
...     "right": [{"name": "age", "type": "numeric", "bounds": [0, 120]}]}}
>>> attribute_of(schema, "right", "age")["bounds"]
[0, 120]
>>> attribute_of(schema, "left", "age") is None
True
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select, update

from dprm.errors import DataError, ParameterError, short_repr
from dprm.server.accounts import check_name
from dprm.server.errors import ApiError
from dprm.server.tables import datasets

__all__ = ["SCHEMA_FORMAT", "REGISTRATION_LOCK", "DatasetRecord", "SharedFiles", "sha256_file", "register_dataset",
           "remove_dataset", "list_datasets", "active_dataset", "verify_files", "load_registered", "loading_options",
           "public_schema", "check_complete", "attribute_of", "same_files", "shared_files", "describe_shared"]

SCHEMA_FORMAT = "dprm.schema/1"


@dataclass(frozen=True)
class DatasetRecord:
    """A registered dataset as the workers need it."""

    id: int
    name: str
    left_path: str
    right_path: str
    left_sha256: str
    right_sha256: str
    types: dict[str, Any]
    load_options: dict[str, Any]
    schema: dict[str, Any]

    @classmethod
    def from_row(cls, row: Any) -> "DatasetRecord":
        return cls(int(row.id), row.name, row.left_path, row.right_path, row.left_sha256, row.right_sha256,
                   json.loads(row.types_json), json.loads(row.load_options), json.loads(row.public_schema))

    def to_json(self) -> dict[str, Any]:
        """Everything a worker process needs, as plain JSON."""
        return {"id": self.id, "name": self.name, "left_path": self.left_path, "right_path": self.right_path,
                "left_sha256": self.left_sha256, "right_sha256": self.right_sha256, "types": self.types,
                "load_options": self.load_options, "schema": self.schema}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> "DatasetRecord":
        return cls(**obj)


def sha256_file(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _path_text(path: object) -> str:
    """A path as an error names it: whole up to 200 characters, else its start and end."""
    text = str(path)
    return text if len(text) <= 200 else f"{text[:120]}…{text[-60:]}"


def _readable_file(given: str | os.PathLike[str]) -> Path:
    """``given`` resolved, a regular file whose first byte can be read; else a one-line :class:`DataError`.

    A name too long for the system, a device that fails to read (``/proc/self/mem``),
    a directory: each is the owner's input named back to the owner, never a server error.
    """
    try:
        path = Path(given).expanduser().resolve()
        if path.exists() and not path.is_file():  # before: "no such file" for a folder the owner had typed
            kind = "a directory" if path.is_dir() else "not a regular file"
            raise DataError(f"{_path_text(path)}: is {kind}; give the path of a file in it" if path.is_dir()
                            else f"{_path_text(path)}: is {kind}", code="not_a_file", data_dependent=False)
        if not path.is_file():
            raise DataError(f"{_path_text(path)}: no such file", code="file_not_found", data_dependent=False)
        with path.open("rb") as handle:
            handle.read(1)
    except OSError as error:
        raise DataError(f"{_path_text(given)}: cannot be read: {error.strerror or error}", code="unreadable_file",
                        data_dependent=False) from None
    return path


def _named_digest(path: Path) -> str:
    """:func:`sha256_file`, an error naming the file."""
    try:
        return sha256_file(path)
    except OSError as error:
        raise DataError(f"{_path_text(path)}: cannot be read: {error.strerror or error}", code="unreadable_file",
                        data_dependent=False) from None


def _read_types_mapping(path: Path) -> dict[str, Any]:
    """The types file as a mapping (validated by the data layer first)."""
    from dprm.data import read_types_file

    read_types_file(path)  # the data layer's checks and messages
    text = path.read_bytes().decode("utf-8-sig")
    return json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)


def _load_kwargs(options: dict[str, Any]) -> dict[str, Any]:
    """The loading options the data layer's :func:`load_two_view` takes."""
    from dprm.data import load_two_view

    accepted = inspect.signature(load_two_view).parameters
    return {key: value for key, value in options.items() if key in accepted and value is not None}


def check_complete(data: Any, spec: Any) -> None:
    """Refuse a types file that does not declare every column with its public domain.

    Raises
    ------
    DataError
        Naming the columns (names are public: they are in the files' headers) and
        what each lacks.
    """
    from dprm.data.attributes import AttributeKind

    problems: list[str] = []
    for view in data.views:
        for attribute in view:
            declared = spec.get(attribute.name)
            if declared is None or declared.type.kind is None:
                problems.append(f"{attribute.name!r} ({view.name}) is not declared")
            elif attribute.kind is AttributeKind.NUMERIC and declared.bounds is None:
                problems.append(f"{attribute.name!r} ({view.name}) is numeric without bounds")
            elif attribute.kind is AttributeKind.CATEGORICAL and declared.categories is None:
                problems.append(f"{attribute.name!r} ({view.name}) is categorical without categories")
            elif attribute.kind is not AttributeKind.BOOLEAN and not attribute.domain.declared:
                problems.append(f"{attribute.name!r} ({view.name}) has no declared domain")
        for name in view.constant:
            problems.append(f"{name!r} ({view.name}) is not declared (left out as constant)")
    if problems:
        shown = "; ".join(problems[:8]) + (f"; and {len(problems) - 8} more" if len(problems) > 8 else "")
        raise DataError(
            f"a private dataset needs a complete types file: every column declared with its public domain "
            f"(boolean; numeric with bounds; categorical with categories), or 'ignore'; {len(problems)} "
            f"column(s) are not: {shown}", code="bad_types_file", data_dependent=False)


def public_schema(data: Any, id_column: str | None) -> dict[str, Any]:
    """The public schema of loaded data whose types file is complete (:func:`check_complete`).

    Each attribute's entry has its name, type and declared domain (``bounds``,
    ``categories``), and ``"complete": true`` where the types file declares that it has
    no missing value (:mod:`dprm.server.public_domain` uses it).
    """
    from dprm.data.attributes import AttributeKind

    views: dict[str, list[dict[str, Any]]] = {}
    for view in data.views:
        attributes = []
        for a in view:
            entry: dict[str, Any] = {"name": a.name, "type": a.kind.value}
            if a.kind is AttributeKind.NUMERIC:
                entry["bounds"] = [_number(b) for b in a.domain.bounds]
            elif a.kind is AttributeKind.CATEGORICAL:
                entry["categories"] = list(a.domain.categories)
            if a.domain.complete:  # declared without missing values (public): said only where true
                entry["complete"] = True
            attributes.append(entry)
        views[view.name] = attributes
    return {"format": SCHEMA_FORMAT, "id_column": id_column, "views": views}


def _number(x: float) -> int | float:
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x)


def attribute_of(schema: dict[str, Any], view: str, name: str) -> dict[str, Any] | None:
    """The schema entry of attribute ``name`` in ``view``, or None."""
    for entry in schema["views"].get(view, []):
        if entry["name"] == name:
            return entry
    return None


VIEWS = ("left", "right")

#: The key of the transaction-level advisory lock (PostgreSQL) under which a registration
#: checks its name and files and inserts its row (the migrations take 748201).
REGISTRATION_LOCK = 748202


@dataclass(frozen=True)
class SharedFiles:
    """A registration holding files of a new one (the same SHA-256: the same rows).

    ``views`` pairs each view of the new registration with the view of ``name`` whose
    file has the same digest, e.g. ``(("left", "right"),)``: the new left file is the
    right view of ``name``.
    """

    name: str
    views: tuple[tuple[str, str], ...]

    @property
    def whole(self) -> bool:
        """Both files of the new registration are the two files of this one (in either order)."""
        return {v for v, _ in self.views} == set(VIEWS) and {w for _, w in self.views} == set(VIEWS)


def shared_files(connection: Any, left_sha256: str, right_sha256: str, *, removed: bool = False
                 ) -> list[SharedFiles]:
    """The registrations holding either file (by SHA-256, on either side), by name.

    The active ones, or with ``removed`` the removed ones (one entry per name). The protected
    unit is a person, a row of both views: a registration that holds the file of one view
    of another holds its people, and budgets are per (analyst, dataset name), so an analyst
    with a budget on each would spend both on these people. :func:`register_dataset` refuses
    a new registration sharing a file with an active one unless asked (``same_files_ok``).

    Only identical files are found: a copy re-encoded, reordered, with columns or rows
    added or left out, or another export of the same people has another digest. Keeping
    those apart is the data owner's responsibility.
    """
    from sqlalchemy import or_

    digests = (left_sha256, right_sha256)
    state = datasets.c.active_name.is_(None) if removed else datasets.c.active_name.is_not(None)
    rows = connection.execute(select(datasets.c.name, datasets.c.left_sha256, datasets.c.right_sha256).where(
        state, or_(datasets.c.left_sha256.in_(digests), datasets.c.right_sha256.in_(digests)))
        .order_by(datasets.c.name, datasets.c.id)).all()
    found: dict[str, list[tuple[str, str]]] = {}
    for row in rows:
        pairs = found.setdefault(row.name, [])
        for view, digest in zip(VIEWS, digests):
            for theirs, held in zip(VIEWS, (row.left_sha256, row.right_sha256)):
                if digest == held and (view, theirs) not in pairs:
                    pairs.append((view, theirs))
    return [SharedFiles(name, tuple(pairs)) for name, pairs in found.items()]


def same_files(connection: Any, left_sha256: str, right_sha256: str) -> list[str]:
    """The names of the active registrations holding either file (:func:`shared_files`), sorted."""
    return [shared.name for shared in shared_files(connection, left_sha256, right_sha256)]


def describe_shared(shared: list[SharedFiles], *, when: str = "already") -> str:
    """What ``shared`` holds, as a clause naming the registrations and views.

    ``when`` is ``"already"`` (an error: ``the same files are registered already as 'tiny'``,
    ``the left file is registered already as the right view of 'tiny'; the right file as
    ...``), ``"too"`` (a note after ``--same-files-ok``: ``... registered as tiny``) or
    ``"before"`` (removed registrations: ``... was registered before as the left view of
    tiny (removed)``).

    Examples
    --------
    >>> describe_shared([SharedFiles("tiny", (("left", "left"), ("right", "right")))])
    "the same files are registered already as 'tiny'"
    >>> describe_shared([SharedFiles("a", (("left", "right"),)), SharedFiles("b", (("right", "right"),))])
    "the left file is registered already as the right view of 'a'; the right file as the right view of 'b'"
    >>> describe_shared([SharedFiles("a", (("right", "left"),))], when="before")
    'the right file was registered before as the left view of a (removed)'
    """
    plural, singular, label = {"already": ("are registered already", "is registered already", repr),
                               "too": ("are registered", "is registered", str),
                               "before": ("were registered before", "was registered before",
                                          lambda n: f"{n} (removed)")}[when]
    if all(s.whole for s in shared):
        return f"the same files {plural} as {', '.join(label(s.name) for s in shared)}"
    clauses = []
    for view in VIEWS:
        held = [f"the {theirs} view of {label(s.name)}" for s in shared for mine, theirs in s.views if mine == view]
        if held:
            clauses.append(f"the {view} file{'' if clauses else ' ' + singular} as {' and '.join(held)}")
    return "; ".join(clauses)


def _refuse_name_in_use(connection: Any, name: str) -> None:
    if connection.execute(select(datasets.c.id).where(datasets.c.active_name == name)).first() is not None:
        raise ParameterError(f"a dataset named {name!r} is registered already (remove it first)")


def _refuse_same_files(connection: Any, name: str, digests: list[str]) -> None:
    shared = shared_files(connection, digests[0], digests[1])
    if shared:
        raise ParameterError(
            f"{describe_shared(shared)} (the same SHA-256: the same rows): budgets on two names of "
            f"the same rows add up (an analyst with a budget on each spends both on these rows); grant more on "
            f"{shared[0].name!r} instead, or register them again on purpose with dprm admin dataset add {name} ... "
            f"--same-files-ok")


def _lock_registrations(connection: Any) -> None:
    """Make a registration's checks and insert one step: one registration at a time.

    PostgreSQL (read committed) would let two transactions each check, see neither's
    row and insert both: a transaction-level advisory lock (:data:`REGISTRATION_LOCK`,
    released at commit or rollback) makes the second wait for the first's end, and its
    checks, statements after the wait, see the first's row. SQLite's write transaction
    began with ``BEGIN IMMEDIATE``: it holds the only write lock already.
    """
    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({REGISTRATION_LOCK})")


def register_dataset(connection_factory: Any, name: str, left: str | os.PathLike[str], right: str | os.PathLike[str],
                     types: str | os.PathLike[str], *, id_column: str | None = None,
                     duplicate_names: str = "rename", same_files_ok: bool = False) -> dict[str, Any]:
    """Load, check and register a dataset; returns its public schema.

    ``connection_factory`` is a :class:`~dprm.server.database.Database`: the files are
    loaded before the (short) write transaction. A file that an active registration holds
    already, as either view (the same SHA-256, :func:`shared_files`), is refused, naming
    it, unless ``same_files_ok``: budgets on the two names would add up on the same
    rows. The name and files are checked again, and the row inserted, under one lock
    (:func:`_lock_registrations`): of two registrations of the same rows at once, one is
    refused.
    """
    from dprm.data import TypesSpec, load_two_view

    check_name(name, "dataset")
    if duplicate_names not in ("rename", "error"):
        raise ParameterError(f"--duplicate-columns must be 'rename' or 'error', not {short_repr(duplicate_names)}")
    paths = [_readable_file(p) for p in (left, right, types)]
    mapping = _read_types_mapping(paths[2])
    spec = TypesSpec.from_mapping(mapping, source=str(paths[2]))
    options = {"id_column": id_column, "duplicate_names": duplicate_names}
    digests = [_named_digest(p) for p in paths]
    with connection_factory.read() as connection:  # before the files are loaded (that can take a while)
        _refuse_name_in_use(connection, name)  # (and both again in the transaction that registers it)
        if not same_files_ok:
            _refuse_same_files(connection, name, digests)
    data = load_two_view(paths[0], paths[1], types=spec, **_load_kwargs(options))
    check_complete(data, spec)
    schema = public_schema(data, id_column if id_column is not None else spec.id_column)
    after = [_named_digest(p) for p in paths]
    if after != digests:
        raise DataError("a file changed while it was being registered; try again", data_dependent=False)
    values = dict(name=name, active_name=name, left_path=str(paths[0]), right_path=str(paths[1]),
                  left_sha256=digests[0], right_sha256=digests[1], types_path=str(paths[2]),
                  types_sha256=digests[2], types_json=json.dumps(mapping), id_column=schema["id_column"],
                  load_options=json.dumps(options), public_schema=json.dumps(schema), created_at=time.time())
    with connection_factory.write() as connection:
        _lock_registrations(connection)  # the checks and the insert as one step (two registrations at once)
        _refuse_name_in_use(connection, name)
        if not same_files_ok:
            _refuse_same_files(connection, name, digests)
        connection.execute(insert(datasets).values(**values))
    return schema


def remove_dataset(connection: Any, name: str, *, force: bool = False) -> dict[str, int]:
    """Unregister a dataset: analysts no longer see it; its ledger rows stay.

    A dataset with jobs queued or running is refused (:class:`ParameterError` naming it
    and its active jobs), unless ``force``: then they end in the same transaction as
    failed with ``dataset_removed`` (:func:`dprm.server.jobs.fail_dataset_jobs`: a
    charge kept where the job had read rows, else refunded). The dataset's row is locked
    first (PostgreSQL: ``FOR UPDATE``; SQLite's writer holds the database), so no
    worker claims or touches a job between the count and the removal unnoticed; a job
    submitted in that instant is failed by its worker, refunded, as before.

    Returns the numbers of ended jobs and of their charges (``ended``, ``kept``,
    ``refunded``, ``free``).
    """
    from dprm.server.jobs import REMOVED_DATASET, active_jobs, fail_dataset_jobs

    row = connection.execute(select(datasets.c.id).where(datasets.c.active_name == name).with_for_update()).first()
    if row is None:
        raise ParameterError(f"no dataset named {name!r}")
    active = active_jobs(connection, row.id)
    total = active["queued"] + active["running"]
    ended = {"ended": 0, "kept": 0, "refunded": 0, "free": 0}
    if total and not force:
        raise ParameterError(
            f"dataset {name!r} has {total} active job{'s' if total != 1 else ''} ({active['running']} running, "
            f"{active['queued']} queued); wait for them to finish, or remove it with --force, which ends them as "
            f"failed ({REMOVED_DATASET}): a charge is kept where its job has read rows, else refunded")
    if total:
        ended = fail_dataset_jobs(connection, row.id, owner_error=f"the data owner removed the dataset {name!r} "
                                                                  f"(dprm admin dataset remove --force)")
    connection.execute(update(datasets).where(datasets.c.id == row.id)
                       .values(active_name=None, removed_at=time.time()))
    return ended


def list_datasets(connection: Any) -> list[Any]:
    """The registered datasets' rows, by name."""
    return list(connection.execute(select(datasets).where(datasets.c.active_name.is_not(None))
                                   .order_by(datasets.c.name)))


def active_dataset(connection: Any, name: str) -> DatasetRecord | None:
    """The registered dataset called ``name``, or None."""
    row = connection.execute(select(datasets).where(datasets.c.active_name == name)).first()
    return None if row is None else DatasetRecord.from_row(row)


def verify_files(record: DatasetRecord) -> None:
    """Hash the dataset's files again; an :class:`ApiError` if one changed or vanished.

    Called before any row is read: a refusal here has touched no data.
    """
    for path, expected in ((record.left_path, record.left_sha256), (record.right_path, record.right_sha256)):
        try:
            actual = sha256_file(path)
        except OSError:
            raise ApiError("dataset_missing") from None
        if actual != expected:
            raise ApiError("dataset_changed")


def load_registered(record: DatasetRecord) -> Any:
    """The dataset's rows (:class:`~dprm.data.TwoViewData`), loaded as when it was registered.

    The caller has verified the files (:func:`verify_files`).
    """
    from dprm.data import TypesSpec, load_two_view

    spec = TypesSpec.from_mapping(record.types, source=f"types of dataset {record.name}")
    return load_two_view(record.left_path, record.right_path, types=spec, **loading_options(record))


def loading_options(record: DatasetRecord) -> dict[str, Any]:
    """The keyword options of :func:`~dprm.data.load_two_view` the dataset was registered with."""
    return _load_kwargs(record.load_options)
