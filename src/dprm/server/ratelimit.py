"""A per-token rate limit: a token bucket per analyst, in the server's memory.

Each analyst's bucket holds up to ``burst`` requests and refills at ``rate`` per
second; a request finding it empty is answered 429 ``rate_limited`` with a
``Retry-After`` header. One server process holds the buckets (``dprm serve`` runs one
API process), so the limit is exact there; it is not shared between servers.

Examples
--------
>>> limiter = RateLimiter(rate=1.0, burst=2)
>>> [limiter.allow("a", now=0.0) for _ in range(3)]
[0.0, 0.0, 1.0]
>>> limiter.allow("a", now=1.0), limiter.allow("b", now=1.0)
(0.0, 0.0)
"""

from __future__ import annotations

import threading
import time

__all__ = ["RateLimiter"]


class RateLimiter:
    """Token buckets by key.

    Parameters
    ----------
    rate : float
        Requests per second refilled (> 0).
    burst : int
        Bucket size (≥ 1).
    """

    def __init__(self, rate: float, burst: int) -> None:
        if not rate > 0 or burst < 1:
            raise ValueError("the rate limit needs rate > 0 and burst >= 1")
        self.rate = float(rate)
        self.burst = float(burst)
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def allow(self, key: str, now: float | None = None) -> float:
        """0.0 if the request may go on (and count it), else the seconds to wait."""
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, last = self._buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate
