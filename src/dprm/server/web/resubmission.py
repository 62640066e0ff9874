"""One-time keys of the pages' forms that charge at once: a form sent again gets its first answer.

A form that is charged as it is answered (the statistics form) carries a hidden
field ``submission``: 24 random hex digits drawn when the form is rendered (the job
form's key, ``submission_key()`` of the templates). The first post of a key runs
and its answer is kept; a second post of the same key (a double click, a reload of
the answer page with JavaScript off) waits for the first to finish and gets the
same answer, charged once. The key with other values is refused
(``409 idempotency_key_reused``, as a job's); the statistics form's posts use the form's
key and a digest of their values
(:func:`dprm.server.web.analyst_pages.statistics_key`), so that other values sent with
the form's key (a field changed after the back button put the key back) are a new
request. A dry run does not use its key.

The answers are kept in the database (:data:`dprm.server.tables.one_time_answers`),
so every process of ``dprm serve --processes N`` and a restarted server see them:

* **First.** A post claims its key in one write transaction: it inserts the row
  (answer NULL) with a random ``claim``. The unique (analyst, key) decides which of
  concurrent posts is first, in one process or several (on PostgreSQL the second
  insert waits for the first's commit and fails; on SQLite the writes are serial).
  The first runs the form and writes its answer (status and page values, JSON)
  into its row.
* **Repeats.** A post that finds the row with the same digest returns its answer,
  or, while it is NULL, polls the row (every 50 ms, growing to 1 s) until it is
  there; it is charged nothing (the audit says ``idempotent_replay``).
* **Failures.** A first post that ends without an answer (an exception: the
  dataset was removed, the database failed) deletes its row, so the next post of the
  key (or one already waiting for it) runs anew, a new request with its own charge
  (what the failed post charged is settled as any failed primitive's: kept if rows
  may have been read, else refunded). A row whose post died with its process keeps
  a NULL answer; after ``stale_after`` seconds (longer than a primitive may run) the
  next post of the key takes it over (a new claim) and runs. Were the first post
  only slow past that, it would answer its own page but not write its answer (its
  claim was replaced), and the key would be charged twice: the primitive pool stops
  a primitive after the primitive timeout, 60 s before a row turns stale. A repeat
  waits at most ``stale_after`` plus 5 s (it takes the row over itself when it
  turns stale); if the row was taken over by yet another post meanwhile it answers
  ``409 submission_pending``.
* **Retention.** Every claim deletes the rows older than a session's lifetime
  (:data:`dprm.server.web.sessions.LIFETIME`: a form's form token dies with its
  session, so no post of an older key is accepted anyway), and the analyst's
  answered rows beyond the newest :data:`CAPACITY` (a repeat of such an old key is
  charged as a new request).

Examples
--------
>>> import tempfile, os
>>> from dprm.server.database import Database
>>> from dprm.server.accounts import add_analyst, find_analyst
>>> path = os.path.join(tempfile.mkdtemp(), "s.db")
>>> db = Database(path)
>>> db.migrate()
>>> with db.write() as connection:
...     _ = add_analyst(connection, "ann")
...     ann = find_analyst(connection, "ann").id
>>> answers = OneTimeAnswers(db)
>>> answers.once(ann, "a" * 24, "digest", lambda: (200, {"stats": "noisy"}))
((200, {'stats': 'noisy'}), False)

Another process on the same database (or the server after a restart) replays it:

>>> other = Database(path)
>>> OneTimeAnswers(other).once(ann, "a" * 24, "digest", lambda: (200, {"stats": "charged again"}))
((200, {'stats': 'noisy'}), True)
>>> try:
...     OneTimeAnswers(other).once(ann, "a" * 24, "other values", lambda: (200, {}))
... except ApiError as error:
...     print(error.status, error.code)
409 idempotency_key_reused
>>> other.dispose(); db.dispose()
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from dprm.server.errors import ApiError
from dprm.server.tables import one_time_answers
from dprm.server.web.sessions import LIFETIME

if TYPE_CHECKING:
    from dprm.server.database import Database

__all__ = ["CAPACITY", "FIELD", "Outcome", "OneTimeAnswers", "form_key"]

log = logging.getLogger("dprm.server")

#: The hidden field of a form's one-time key.
FIELD = "submission"

#: The most answered keys kept per analyst (the oldest go first).
CAPACITY = 4096

#: A form's answer: the HTTP status and the page's values (JSON: str keys, lists, numbers).
Outcome = tuple[int, dict[str, Any]]

_KEY = re.compile(r"[0-9a-f]{24}")

#: Seconds between two looks at a running key's row: the first pause, the longest.
_FIRST_PAUSE, _LONGEST_PAUSE = 0.05, 1.0


def form_key(form: Mapping[str, Any]) -> str | None:
    """The form's one-time key, or None when it has none (or not one the pages draw).

    Examples
    --------
    >>> form_key({"submission": "0123456789abcdef01234567"})
    '0123456789abcdef01234567'
    >>> form_key({"submission": "guessed"}) is None
    True
    """
    key = str(form.get(FIELD, "")).strip()
    return key if _KEY.fullmatch(key) else None


def _reused() -> ApiError:
    return ApiError("idempotency_key_reused", "this form was sent already with other values; "
                                              "reload the page to send new ones")


class OneTimeAnswers:
    """The answers of the one-time keys, per analyst, in the database (thread- and process-safe).

    Parameters
    ----------
    db : dprm.server.database.Database
        The server's database (migrated: the table ``one_time_answers``).
    lifetime : float
        Seconds an answer is kept (a session's lifetime).
    capacity : int
        The most answered keys kept per analyst; the oldest are deleted first.
    stale_after : float
        Seconds after which a key whose first post has not answered is taken to have
        died with its process, and the next post of it runs (the server passes its
        primitive timeout plus 60 s).
    wait : float, optional
        The longest a repeat waits for the first post's answer (default
        ``stale_after`` + 5 s: long enough to take a dead post's key over itself).
    """

    def __init__(self, db: Database, *, lifetime: float = LIFETIME, capacity: int = CAPACITY,
                 stale_after: float = 360.0, wait: float | None = None) -> None:
        wait = stale_after + 5.0 if wait is None else wait
        if capacity < 1 or min(lifetime, stale_after, wait) <= 0:
            raise ValueError("lifetime, capacity, stale_after and wait must be positive")
        self._db = db
        self._lifetime = lifetime
        self._capacity = capacity
        self._stale_after = stale_after
        self._wait_at_most = wait

    def once(self, analyst_id: int, key: str, digest: str, run: Callable[[], Outcome]) -> tuple[Outcome, bool]:
        """``(outcome, replayed)``: ``run()``'s outcome if this post is the key's first, else the first's.

        Raises ``idempotency_key_reused`` when the key came with another digest, and
        ``submission_pending`` when the first post is still running after the wait.
        An exception of ``run()`` frees the key and is raised again.
        """
        deadline = time.monotonic() + self._wait_at_most
        while True:
            state, value = self._claim(analyst_id, key, digest)
            if state == "run":
                return self._run(analyst_id, key, value, run), False
            if state == "answer":
                return value, True
            answer = self._wait(analyst_id, key, digest, deadline)
            if answer is not None:
                return answer, True

    # -- the steps ---------------------------------------------------------------------------------

    def _claim(self, analyst_id: int, key: str, digest: str) -> tuple[str, Any]:
        """``("run", claim)``, ``("answer", outcome)`` or ``("wait", None)``, in one write transaction."""
        table = one_time_answers

        def work(connection: Any) -> tuple[str, Any]:
            now = time.time()
            connection.execute(delete(table).where(table.c.created_at < now - self._lifetime))
            row = connection.execute(select(table).where(
                table.c.analyst_id == analyst_id, table.c.one_time_key == key)).first()
            claim = secrets.token_hex(16)
            if row is None:
                connection.execute(insert(table).values(
                    analyst_id=analyst_id, one_time_key=key, request_digest=digest, claim=claim, answer=None,
                    created_at=now))
                self._cap(connection, analyst_id)
                return "run", claim
            if row.request_digest != digest:
                return "reused", None
            if row.answer is not None:
                return "answer", _decode(row.answer)
            if row.created_at < now - self._stale_after:  # its post died without answering: take it over
                taken = connection.execute(update(table).where(
                    table.c.id == row.id, table.c.claim == row.claim, table.c.answer.is_(None)
                ).values(claim=claim, created_at=now))
                if taken.rowcount == 1:
                    return "run", claim
            return "wait", None

        try:
            state, value = self._db.transaction(work)
        except IntegrityError:  # another post (in another process) inserted the key first
            return "wait", None
        if state == "reused":
            raise _reused()
        return state, value

    def _cap(self, connection: Any, analyst_id: int) -> None:
        """Delete the analyst's answered rows older than its newest ``capacity`` (running ones stay)."""
        table = one_time_answers
        oldest_kept = connection.execute(
            select(table.c.id).where(table.c.analyst_id == analyst_id).order_by(table.c.id.desc())
            .offset(self._capacity - 1).limit(1)).scalar()
        if oldest_kept is not None:
            connection.execute(delete(table).where(table.c.analyst_id == analyst_id, table.c.id < oldest_kept,
                                                   table.c.answer.is_not(None)))

    def _run(self, analyst_id: int, key: str, claim: str, run: Callable[[], Outcome]) -> Outcome:
        """Run the key's first post and write its answer; free the key when it gives none."""
        table = one_time_answers
        mine = (table.c.analyst_id == analyst_id, table.c.one_time_key == key, table.c.claim == claim,
                table.c.answer.is_(None))
        try:
            status, body = run()
        except BaseException:
            try:
                self._db.transaction(lambda connection: connection.execute(delete(table).where(*mine)))
            except Exception:  # noqa: BLE001 - the row turns stale and is taken over; the first error is raised
                log.exception("could not free a one-time key after a failed post")
            raise
        text = json.dumps({"status": int(status), "body": body})
        self._db.transaction(lambda connection: connection.execute(update(table).where(*mine).values(answer=text)))
        return _decode(text)  # what a repeat gets, to the value

    def _wait(self, analyst_id: int, key: str, digest: str, deadline: float) -> Outcome | None:
        """The running key's answer once written; None when the row is gone, changed or stale (claim again)."""
        table = one_time_answers
        pause = _FIRST_PAUSE
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ApiError("submission_pending")
            time.sleep(min(pause, left))
            pause = min(pause * 1.5, _LONGEST_PAUSE)
            with self._db.read() as connection:
                row = connection.execute(select(table).where(
                    table.c.analyst_id == analyst_id, table.c.one_time_key == key)).first()
            if row is None or row.request_digest != digest:
                return None
            if row.answer is not None:
                return _decode(row.answer)
            if row.created_at < time.time() - self._stale_after:
                return None


def _decode(text: str) -> Outcome:
    """An answer as the database keeps it, back to ``(status, values)``."""
    stored = json.loads(text)
    return int(stored["status"]), stored["body"]
