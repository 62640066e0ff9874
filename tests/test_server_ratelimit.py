"""Token buckets: one process's (RateLimiter) and the ones shared by forked API processes (SharedRateLimiter)."""

from __future__ import annotations

import os

import pytest

from dprm.server.ratelimit import RateLimiter, SharedRateLimiter


@pytest.mark.parametrize("kind", [RateLimiter, SharedRateLimiter])
def test_a_bucket_allows_its_burst_then_its_rate_and_keys_are_apart(kind: type) -> None:
    limiter = kind(rate=2.0, burst=3)
    assert [limiter.allow("a", now=10.0) for _ in range(4)] == [0.0, 0.0, 0.0, 0.5]
    assert limiter.allow("b", now=10.0) == 0.0  # another token has its own bucket
    assert [limiter.allow("a", now=11.0) for _ in range(3)] == [0.0, 0.0, 0.5]  # 1 s refilled 2
    assert limiter.allow("a", now=100.0) == 0.0


@pytest.mark.parametrize("bad", [(0.0, 1), (-1.0, 5), (1.0, 0)])
def test_a_rate_limit_that_allows_nothing_is_refused(bad: tuple[float, int]) -> None:
    for kind in (RateLimiter, SharedRateLimiter):
        with pytest.raises(ValueError, match="rate > 0 and burst >= 1"):
            kind(*bad)


def test_processes_forked_after_the_shared_limiter_draw_from_one_bucket() -> None:
    limiter = SharedRateLimiter(rate=1.0, burst=5)
    read, write = os.pipe()
    children = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            allowed = sum(limiter.allow("token-7", now=50.0) == 0.0 for _ in range(10))
            os.write(write, bytes([allowed]))
            os._exit(0)
        children.append(pid)
    for pid in children:
        assert os.waitpid(pid, 0)[1] == 0
    os.close(write)
    counts = list(os.read(read, 16))
    os.close(read)
    assert len(counts) == 4 and sum(counts) == 5  # 40 tries in four processes: the one burst of 5
    assert limiter.allow("token-7", now=50.0) > 0 and limiter.allow("token-7", now=52.0) == 0.0


def test_a_full_table_gives_a_new_key_the_slot_refilled_longest_ago() -> None:
    limiter = SharedRateLimiter(rate=1.0, burst=1, slots=2, probe=2)
    assert limiter.allow("a", now=0.0) == 0.0
    assert limiter.allow("b", now=4.5) == 0.0
    assert limiter.allow("c", now=5.0) == 0.0  # takes a's slot (a's bucket was full again: nothing lost)
    assert limiter.allow("b", now=5.0) == 0.5  # b kept its slot and its nearly empty bucket
    assert limiter.allow("c", now=5.0) == 1.0


def test_a_process_limiter_holds_a_bounded_number_of_buckets() -> None:
    # the guesses of tokens are keyed by address: callers from ever new addresses must not grow it without bound
    limiter = RateLimiter(rate=1.0, burst=2, max_keys=8)
    assert limiter.allow("busy", now=0.0) == 0.0 and limiter.allow("busy", now=0.0) == 0.0
    for i in range(100):
        limiter.allow(f"address-{i}", now=0.01 * i)
        assert len(limiter._buckets) <= 8
    assert "busy" not in limiter._buckets  # past the bound the buckets used longest ago go
    assert {"address-98", "address-99"} <= set(limiter._buckets)  # the newest stay
    limiter = RateLimiter(rate=1.0, burst=1, max_keys=4)
    for key in "abc":
        limiter.allow(key, now=0.0)
    limiter.allow("d", now=10.0)  # a, b and c are full again by now: forgotten, nothing lost
    limiter.allow("e", now=10.0)
    assert set(limiter._buckets) == {"d", "e"} and limiter.allow("d", now=10.0) == 1.0
