"""The audit log: every request, with analyst, action, dataset, ε and outcome.

Records are queued by the request handlers and written by one thread in batches
(every 50 ms, and at shutdown), so a request never waits for the audit's write.
``detail`` holds what only the owner may read (the text of a data-dependent error);
``dprm admin audit`` shows the log, and so does the owner's audit page, whose action
filter offers :data:`ACTIONS`: every action a record can name. A record is lost only if the server process
dies within the 50 ms before its batch is written; budgets and ledger rows are
written in their own transactions and never depend on the audit log.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any

from sqlalchemy import insert

from dprm.server.tables import audit

__all__ = ["ACTIONS", "ACTION_GROUPS", "AuditLog"]

log = logging.getLogger("dprm.server")

#: Every action an audit record can name, by who asks (the endpoints' and pages' own names,
#: set in ``request.state.action``; tests/test_web_owner_forms.py checks that the code names no
#: other). ``request`` is a request no endpoint or page took (an unknown address, a static
#: file, a refusal before any handler).
ACTION_GROUPS: dict[str, tuple[str, ...]] = {
    "API": ("health", "list-datasets", "get-dataset", "dummy-rows", "algorithms", "submit-job", "dry-run-job",
            "list-jobs", "job-status", "job-result", "cancel-job", "redescription-statistics",
            "dry-run-redescription-statistics", "leaf-pair-counts", "dry-run-leaf-pair-counts", "budget",
            "ledger"),
    "Pages: signing in": ("ui-home", "ui-signin-page", "ui-signin", "ui-signout"),
    "Pages: analysts": ("ui-datasets", "ui-dataset", "ui-job-cost", "ui-job-form", "ui-statistics-form", "ui-jobs",
                        "ui-ledger", "ui-job", "ui-job-result", "ui-job-queries", "ui-cancel-job"),
    "Pages: data owners": ("ui-owner", "ui-owner-add-dataset", "ui-owner-add-analyst", "ui-owner-disable-analyst",
                           "ui-owner-enable-analyst", "ui-owner-rotate-analyst", "ui-owner-change-analyst",
                           "ui-owner-grant", "ui-owner-audit", "ui-owner-jobs"),
    "Other": ("ui-not-found", "ui-form-address", "favicon", "request"),
}

#: Every action an audit record can name (:data:`ACTION_GROUPS` in one tuple).
ACTIONS: tuple[str, ...] = tuple(action for group in ACTION_GROUPS.values() for action in group)

_FIELDS = ("at", "analyst_id", "action", "method", "path", "dataset", "epsilon_units", "status", "outcome", "detail",
           "client", "duration_ms")


class AuditLog:
    """A queue of audit records and the thread that writes them."""

    def __init__(self, db: Any, *, interval: float = 0.05) -> None:
        self.db = db
        self.interval = interval
        self._queue: "queue.Queue[dict[str, Any]]" = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="dprm-audit", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def record(self, **fields: Any) -> None:
        """Queue one record (unknown fields are ignored, long texts cut)."""
        row = {key: fields.get(key) for key in _FIELDS}
        row["at"] = row["at"] or time.time()
        for key, limit in (("action", 128), ("method", 16), ("path", 512), ("dataset", 128), ("outcome", 64),
                           ("client", 128), ("detail", 8000)):
            if isinstance(row[key], str):
                # PostgreSQL's text refuses NUL, and one such row failed its whole batch
                row[key] = row[key].replace("\x00", "\\x00")[:limit]
        row["action"] = row["action"] or "request"
        row["method"] = row["method"] or ""
        row["path"] = row["path"] or ""
        row["status"] = int(row["status"] or 0)
        row["outcome"] = row["outcome"] or "ok"
        self._queue.put(row)

    def flush(self) -> None:
        """Write every queued record now."""
        rows = []
        while True:
            try:
                rows.append(self._queue.get_nowait())
            except queue.Empty:
                break
        if not rows:
            return
        try:
            with self.db.write() as connection:
                connection.execute(insert(audit), rows)
        except Exception:  # noqa: BLE001 - one bad record must not take its batch with it
            log.exception("could not write %d audit records in one batch; writing them one by one", len(rows))
            for row in rows:
                try:
                    with self.db.write() as connection:
                        connection.execute(insert(audit), [row])
                except Exception:  # noqa: BLE001 - never lose it silently: log it for the owner
                    log.error("audit record not written: %s", row)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.flush()
        self.flush()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self.flush()
