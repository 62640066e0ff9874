"""Entity ids distinct over all shards: the loader's check of one file, made across the shards.

Loading a file in-process refuses an id that occurs twice (``duplicate_id``, in one
line naming the file, the column and the ids). Each shard of a sharded engine loads
only its part of the files, which checks the ids within that part: an id in two parts
would pass every shard. The shards therefore check together, before the engine
answers anything, without gathering the ids in one place (a billion ids would not fit
the driver):

1. each shard deals its ids into ``N`` buckets by a hash of their text
   (:func:`deal_ids`; the same id always lands in the same bucket, whatever the shard);
2. shard ``j`` receives bucket ``j`` of every shard (shard to shard, through Ray's object
   store) and finds the ids that occur more than once among them (:func:`repeated_ids`):
   how many, and the first few in the order of their second occurrence in the files;
3. the driver merges the shards' findings into the loader's error
   (:func:`duplicate_error`): the same line loading all the rows in-process writes.

What reaches the driver: nothing when the ids are distinct; else at most
:data:`~dprm.data.reading.SHOW` repeated ids per shard and their number, which the
error names anyway (the command line is the data owner's).

A row's place in the files is a *position*: its 0-based row in its file, plus the
number of its part file (a list of part files, :class:`~dprm.engine.sharding.ShardSpec`)
shifted by :data:`ROW_BITS`, so that positions order rows as the files do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dprm.data.loading import duplicate_ids_error
from dprm.data.reading import SHOW
from dprm.errors import DataError

__all__ = ["ROW_BITS", "ShardIds", "RepeatedIds", "deal_ids", "repeated_ids", "duplicate_error", "deal_keys",
           "bucket_facts"]

#: Bits of a position that hold the row within its file; the part file's number is above them.
ROW_BITS = 40


@dataclass(frozen=True)
class ShardIds:
    """Ids of some rows and where those rows are in the files.

    ``keys``: the ids as text (an object array); ``positions``: each row's position
    (``int64``, see the module); ``side`` and ``column``: the view (0 left, 1 right) and
    the column the ids were read from.
    """

    keys: np.ndarray
    positions: np.ndarray
    side: int
    column: str


@dataclass(frozen=True)
class RepeatedIds:
    """The ids of one bucket that occur more than once: how many, and the first few.

    ``first``: up to :data:`~dprm.data.reading.SHOW` pairs (position of the id's second
    occurrence, id), in the order of those positions.
    """

    count: int
    first: tuple[tuple[int, str], ...]
    side: int
    column: str


def deal_ids(ids: ShardIds | None, n_buckets: int) -> list[ShardIds | None]:
    """``ids`` dealt into ``n_buckets`` buckets by a hash of their text (None: a shard without ids).

    The hash is pandas' (SipHash with a fixed key), the same in every process: an id
    goes to the same bucket from every shard.

    Examples
    --------
    >>> ids = ShardIds(np.array(["a", "b", "a"], dtype=object), np.arange(3), 0, "id")
    >>> buckets = deal_ids(ids, 2)
    >>> sorted(len(b.keys) for b in buckets), [b.keys.tolist() for b in buckets if "a" in b.keys.tolist()]
    ([1, 2], [['a', 'a']])
    """
    if ids is None:
        return [None] * n_buckets
    bucket = (pd.util.hash_array(ids.keys) % np.uint64(n_buckets)).astype(np.int64)
    return [ShardIds(ids.keys[bucket == j], ids.positions[bucket == j], ids.side, ids.column)
            for j in range(n_buckets)]


def repeated_ids(buckets: Sequence[ShardIds | None]) -> RepeatedIds | None:
    """The ids that occur more than once in ``buckets`` (one bucket of every shard); None if none does.

    Examples
    --------
    >>> a = ShardIds(np.array(["x", "y"], dtype=object), np.array([0, 1]), 0, "id")
    >>> b = ShardIds(np.array(["y", "z", "x"], dtype=object), np.array([7, 8, 5]), 0, "id")
    >>> repeated_ids([a, b])
    RepeatedIds(count=2, first=((5, 'x'), (7, 'y')), side=0, column='id')
    >>> repeated_ids([a, None]) is None
    True
    """
    present = [b for b in buckets if b is not None]
    if not present:
        return None
    keys = np.concatenate([b.keys for b in present])
    positions = np.concatenate([b.positions for b in present]).astype(np.int64)
    order = np.argsort(positions, kind="stable")
    keys, positions = keys[order], positions[order]
    later = pd.Series(keys).duplicated(keep="first").to_numpy()  # second and later occurrences
    if not later.any():
        return None
    second = ~pd.Series(keys[later]).duplicated(keep="first").to_numpy()  # each id's second occurrence
    found_keys, found_positions = keys[later][second], positions[later][second]
    first = tuple((int(p), str(k)) for p, k in zip(found_positions[:SHOW], found_keys[:SHOW]))
    return RepeatedIds(int(second.sum()), first, present[0].side, present[0].column)


def duplicate_error(found: Sequence[RepeatedIds | None],
                    files: tuple[Sequence[str], Sequence[str]]) -> DataError | None:
    """The loader's error for the repeated ids the shards ``found`` (None when there are none).

    ``files``: the left and the right view's files (one each, or the part files). The
    error names the file of the first repeated id's second occurrence.

    Examples
    --------
    >>> found = [RepeatedIds(1, ((9, "b"),), 0, "id"), None, RepeatedIds(1, ((4, "a"),), 0, "id")]
    >>> str(duplicate_error(found, (["left.csv"], ["right.csv"])))
    "left.csv: 2 id(s) occur more than once in column 'id': a, b"
    >>> duplicate_error([None, None], (["left.csv"], ["right.csv"])) is None
    True
    """
    present = [f for f in found if f is not None]
    if not present:
        return None
    first = sorted(pair for f in present for pair in f.first)
    side, column = present[0].side, present[0].column
    view_files = files[side]
    source = view_files[first[0][0] >> ROW_BITS] if len(view_files) > 1 else view_files[0]
    return duplicate_ids_error(source, column, [key for _, key in first], sum(f.count for f in present))


def deal_keys(keys: tuple[np.ndarray | None, np.ndarray | None] | None,
              n_buckets: int) -> list[tuple[np.ndarray, np.ndarray] | None]:
    """Both views' first-column texts (rows matched by position) dealt into ``n_buckets`` by hash (:func:`deal_ids`).

    None for a shard without rows (a view's None: its column cannot be an id, and is dealt as no texts).
    """
    if keys is None:
        return [None] * n_buckets
    keys = tuple(np.array([], dtype=object) if k is None else k for k in keys)  # type: ignore[assignment]
    dealt = [(pd.util.hash_array(k) % np.uint64(n_buckets)).astype(np.int64) for k in keys]
    return [(keys[0][dealt[0] == j], keys[1][dealt[1] == j]) for j in range(n_buckets)]


def bucket_facts(buckets: Sequence[tuple[np.ndarray, np.ndarray] | None]) -> tuple[bool, bool, bool]:
    """Whether the left texts of one bucket of every shard are distinct, the right ones too, and both the same set.

    Examples
    --------
    >>> a = (np.array(["1", "2"], dtype=object), np.array(["2", "1"], dtype=object))
    >>> b = (np.array(["3"], dtype=object), np.array(["1"], dtype=object))
    >>> bucket_facts([a]), bucket_facts([a, b])
    ((True, True, True), (True, False, False))
    """
    present = [b for b in buckets if b is not None]
    if not present:
        return True, True, True
    left = np.concatenate([b[0] for b in present])
    right = np.concatenate([b[1] for b in present])
    lset, rset = set(left.tolist()), set(right.tolist())
    return len(lset) == left.size, len(rset) == right.size, lset == rset
