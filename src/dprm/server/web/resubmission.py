"""One-time keys of the pages' forms that charge at once: a form sent again gets its first answer.

A form that is charged as it is answered (the statistics form) carries a hidden
field ``submission``: 24 random hex digits drawn when the form is rendered (the job
form's key, ``submission_key()`` of the templates). The first post of a key runs
and its answer is kept; a second post of the same key (a double click, a reload of
the answer page with JavaScript off) waits for the first to finish and gets the
same answer, charged once. The key with other values is refused
(``idempotency_key_reused``, as a job's). A dry run does not use its key.

The answers are kept in the server process's memory, per analyst, for a session's
lifetime and at most :data:`CAPACITY` of them (the oldest go first); a restart
forgets them.

Examples
--------
>>> answers = OneTimeAnswers()
>>> first, entry = answers.claim(1, "a" * 24, "digest")
>>> first
True
>>> answers.finish(entry, (200, {"stats": "noisy"}))
>>> answers.claim(1, "a" * 24, "digest")[1].outcome
(200, {'stats': 'noisy'})
>>> answers.claim(2, "a" * 24, "digest")[0]  # another analyst's key is another key
True
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dprm.server.errors import ApiError

__all__ = ["CAPACITY", "FIELD", "Entry", "OneTimeAnswers", "form_key"]

#: The hidden field of a form's one-time key.
FIELD = "submission"

#: The most answers kept (over every analyst).
CAPACITY = 4096

_KEY = re.compile(r"[0-9a-f]{24}")


def form_key(form: Mapping[str, Any]) -> str | None:
    """The form's one-time key, or None when it has none (or not one the pages draw)."""
    key = str(form.get(FIELD, "")).strip()
    return key if _KEY.fullmatch(key) else None


@dataclass
class Entry:
    """One key's answer: ``outcome`` is set (and ``done`` set) when the first post has answered."""

    digest: str
    created_at: float
    done: threading.Event = field(default_factory=threading.Event)
    outcome: Any = None


class OneTimeAnswers:
    """The answers of one-time keys, per analyst (thread-safe; the pages call it in worker threads).

    Parameters
    ----------
    lifetime : float
        Seconds an answer is kept (a session's lifetime).
    capacity : int
        The most answers kept; the oldest are forgotten first.
    """

    def __init__(self, lifetime: float = 8 * 3600.0, capacity: int = CAPACITY) -> None:
        self._lifetime = lifetime
        self._capacity = capacity
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[int, str], Entry] = OrderedDict()

    def claim(self, analyst_id: int, key: str, digest: str) -> tuple[bool, Entry]:
        """``(True, entry)`` when this post is the key's first (it must :meth:`finish` or
        :meth:`release` it), else ``(False, entry)`` of the first post.

        Raises ``idempotency_key_reused`` when the key came with other values.
        """
        now = time.time()
        with self._lock:
            while self._entries:
                oldest = next(iter(self._entries.values()))
                if len(self._entries) < self._capacity and oldest.created_at > now - self._lifetime:
                    break
                self._entries.popitem(last=False)
            entry = self._entries.get((analyst_id, key))
            if entry is None:
                entry = self._entries[(analyst_id, key)] = Entry(digest, now)
                return True, entry
        if entry.digest != digest:
            raise ApiError("idempotency_key_reused", "this form was sent already with other values; "
                                                     "reload the page to send new ones")
        return False, entry

    def finish(self, entry: Entry, outcome: Any) -> None:
        """Keep the first post's answer and wake the posts waiting for it."""
        entry.outcome = outcome
        entry.done.set()

    def release(self, analyst_id: int, key: str, entry: Entry) -> None:
        """Forget a key whose first post gave no answer (the next post of it runs anew)."""
        with self._lock:
            if self._entries.get((analyst_id, key)) is entry:
                del self._entries[(analyst_id, key)]
        entry.done.set()

    def replay(self, entry: Entry, timeout: float) -> Any:
        """The first post's answer, waiting up to ``timeout`` seconds; None if it gave none."""
        entry.done.wait(timeout)
        return entry.outcome
