"""A per-token rate limit: a token bucket per analyst, in the server's memory.

Each analyst's bucket holds up to ``burst`` requests and refills at ``rate`` per
second; a request finding it empty is answered 429 ``rate_limited`` with a
``Retry-After`` header. :class:`RateLimiter` holds the buckets of one API process;
:class:`SharedRateLimiter` holds them in shared memory for the API processes that
``dprm serve --processes N`` forks after making it, so that a token gets ``rate`` per
second and ``burst`` at once over all of them, whichever process its connections
reach. Several servers (on other machines) on one PostgreSQL database each hold their
own buckets.

The same buckets, keyed by the caller's address (:func:`client_address`), bound the
guesses of tokens: each request with a token that matches no analyst takes one from
its address's bucket (``guess_burst``, refilled at ``guess_rate``), and while that
bucket is empty every request with a token from that address is answered 429
``rate_limited`` before its token is looked at, valid or not (else the answers
would tell a guess that hits from one that misses).

Examples
--------
>>> limiter = RateLimiter(rate=1.0, burst=2)
>>> [limiter.allow("a", now=0.0) for _ in range(3)]
[0.0, 0.0, 1.0]
>>> limiter.allow("a", now=1.0), limiter.allow("b", now=1.0)
(0.0, 0.0)
"""

from __future__ import annotations

import hashlib
import mmap
import multiprocessing
import threading
import time

__all__ = ["RateLimiter", "SharedRateLimiter", "client_address"]


def _check(rate: float, burst: int) -> None:
    if not rate > 0 or burst < 1:
        raise ValueError("the rate limit needs rate > 0 and burst >= 1")


def _refill(tokens: float, last: float, now: float, rate: float, burst: float) -> float:
    return min(burst, tokens + max(0.0, now - last) * rate)


def _wait(tokens: float, rate: float) -> float:
    return 0.0 if tokens >= 1.0 else (1.0 - tokens) / rate


def client_address(scope: dict) -> str:
    """The address a request came from (the ASGI scope's ``client``), the key of its token guesses.

    Behind a reverse proxy every request comes from the proxy's address: then the
    guesses of all callers share one bucket (docs/server.md).

    Examples
    --------
    >>> client_address({"client": ("127.0.0.1", 50000)}), client_address({})
    ('127.0.0.1', 'unknown')
    """
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


class RateLimiter:
    """Token buckets by key.

    Parameters
    ----------
    rate : float
        Requests per second refilled (> 0).
    burst : int
        Bucket size (≥ 1).
    max_keys : int
        Buckets held at most: past it, the buckets full again are forgotten (a full
        bucket is what a new key gets), then, if need be, the ones used longest ago, so
        that callers from ever new addresses cannot grow the table without bound.
    """

    def __init__(self, rate: float, burst: int, *, max_keys: int = 65_536) -> None:
        _check(rate, burst)
        self.rate = float(rate)
        self.burst = float(burst)
        self.max_keys = max(int(max_keys), 1)
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def _forget(self, now: float) -> None:
        """Keep at most half of :attr:`max_keys` buckets: the full ones go first, then the oldest."""
        kept = {key: (tokens, last) for key, (tokens, last) in self._buckets.items()
                if _refill(tokens, last, now, self.rate, self.burst) < self.burst}
        if len(kept) > self.max_keys // 2:
            newest = sorted(kept.items(), key=lambda item: item[1][1])[len(kept) - self.max_keys // 2:]
            kept = dict(newest)
        self._buckets = kept

    def wait(self, key: str, now: float | None = None) -> float:
        """0.0 if a request of ``key`` would be allowed now, else the seconds to wait; counts nothing."""
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, last = self._buckets.get(key, (self.burst, now))
            return _wait(_refill(tokens, last, now, self.rate, self.burst), self.rate)

    def allow(self, key: str, now: float | None = None) -> float:
        """0.0 if the request may go on (and count it), else the seconds to wait."""
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, last = self._buckets.get(key, (self.burst, now))
            tokens = _refill(tokens, last, now, self.rate, self.burst)
            if key not in self._buckets and len(self._buckets) >= self.max_keys:
                self._forget(now)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate


class SharedRateLimiter:
    """Token buckets by key in shared memory: one limit for every process forked after it was made.

    An open-addressing table of ``slots`` buckets (key, tokens, last time) in an
    anonymous shared mapping, guarded by one process-shared lock; the time is
    :func:`time.monotonic`, one clock for every process of the machine. A key's slot is
    found by linear probing from its hash; when the ``probe`` slots from there are all
    taken by other keys, the one refilled longest ago is given to the new key (exact
    when that bucket is full again by now, which is the case unless more than
    ``probe`` keys were all used within the last ``burst / rate`` seconds).

    Parameters
    ----------
    rate : float
        Requests per second refilled (> 0).
    burst : int
        Bucket size (≥ 1).
    slots : int
        Buckets in the table.
    probe : int
        Slots looked at for a key.

    Examples
    --------
    >>> import os
    >>> limiter = SharedRateLimiter(rate=1.0, burst=3)
    >>> pid = os.fork()
    >>> if pid == 0:  # another process takes two of the three
    ...     _ = limiter.allow("a", now=0.0), limiter.allow("a", now=0.0)
    ...     os._exit(0)
    >>> os.waitpid(pid, 0)[0] == pid
    True
    >>> [limiter.allow("a", now=0.0) for _ in range(2)]
    [0.0, 1.0]
    """

    def __init__(self, rate: float, burst: int, *, slots: int = 4096, probe: int = 64) -> None:
        _check(rate, burst)
        self.rate = float(rate)
        self.burst = float(burst)
        self.slots = int(slots)
        self.probe = min(int(probe), self.slots)
        self._memory = mmap.mmap(-1, self.slots * 24)  # anonymous and shared with forked children
        self._keys = memoryview(self._memory)[: self.slots * 8].cast("q")  # 0: an empty slot
        self._values = memoryview(self._memory)[self.slots * 8:].cast("d")  # tokens, last time
        self._lock = multiprocessing.get_context("fork").Lock()

    @staticmethod
    def _hash(key: object) -> int:
        digest = hashlib.blake2b(str(key).encode("utf-8", "replace"), digest_size=8).digest()
        return 1 + int.from_bytes(digest, "little") % (2**63 - 2)

    def _slot(self, code: int) -> tuple[int, bool]:
        """The slot of ``code`` and whether it is already there (else: empty or the stalest of the probe)."""
        start = code % self.slots
        stalest, oldest = start, float("inf")
        for step in range(self.probe):
            index = (start + step) % self.slots
            held = self._keys[index]
            if held == code:
                return index, True
            if held == 0:
                return index, False
            if self._values[2 * index + 1] < oldest:
                stalest, oldest = index, self._values[2 * index + 1]
        return stalest, False

    def wait(self, key: object, now: float | None = None) -> float:
        """0.0 if a request of ``key`` would be allowed now, else the seconds to wait; counts nothing."""
        now = time.monotonic() if now is None else now
        code = self._hash(key)
        with self._lock:
            index, present = self._slot(code)
            if not present:
                return 0.0
            return _wait(_refill(self._values[2 * index], self._values[2 * index + 1], now, self.rate, self.burst),
                         self.rate)

    def allow(self, key: object, now: float | None = None) -> float:
        """0.0 if the request may go on (and count it), else the seconds to wait."""
        now = time.monotonic() if now is None else now
        code = self._hash(key)
        with self._lock:
            index, present = self._slot(code)
            tokens = _refill(self._values[2 * index], self._values[2 * index + 1], now, self.rate, self.burst) \
                if present else self.burst
            self._keys[index] = code
            if tokens >= 1.0:
                self._values[2 * index], self._values[2 * index + 1] = tokens - 1.0, now
                return 0.0
            self._values[2 * index], self._values[2 * index + 1] = tokens, now
            return (1.0 - tokens) / self.rate
