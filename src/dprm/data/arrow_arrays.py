"""Arrow arrays to and from numpy without pandas.

pyarrow imports pandas (about 0.2 s, more than reading a small file) the first time
it converts Python values or an array to numpy: ``pa.array(list)``, ``pa.scalar``,
``Array.to_numpy``, and every compute function given a Python number (``pc.equal(a,
0)``, ``pc.fill_null(a, -1)``). The data layer converts through the functions here
instead, which read and write the arrays' buffers directly (Arrow's columnar layout:
a validity bitmap, least significant bit first, then the values), so reading and
encoding a file never imports pandas. They cover what the loader needs: fixed-width
numbers and Booleans out, short lists of text in, and typed null scalars.

Examples
--------
>>> import pyarrow.csv as pacsv, io
>>> table = pacsv.read_csv(io.BytesIO(b"x,b\\n1.5,true\\n,false\\n"))
>>> to_numpy(table.column("x"), fill=-1.0).tolist(), to_numpy(table.column("b")).tolist()
([1.5, -1.0], [True, False])
>>> string_array(["yes", "no"]).to_pylist()
['yes', 'no']
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["to_numpy", "string_array", "null_scalar"]

#: numpy's type for each fixed-width Arrow type :func:`to_numpy` converts.
_NUMPY_TYPES: dict[pa.DataType, type] = {
    pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
    pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.uint64(): np.uint64,
    pa.float16(): np.float16, pa.float32(): np.float32, pa.float64(): np.float64,
}


def to_numpy(array: pa.Array | pa.ChunkedArray, *, fill: Any = None) -> np.ndarray:
    """The values of a number or Boolean ``array`` as numpy, nulls replaced by ``fill``.

    The same values and numpy type as ``array.to_numpy(zero_copy_only=False)`` after
    ``pyarrow.compute.fill_null(array, fill)``, without importing pandas. An array of
    one chunk and no nulls is returned as a read-only view of its buffer.

    Parameters
    ----------
    array : pyarrow.Array or pyarrow.ChunkedArray
        Integers, floating-point numbers or Booleans.
    fill : scalar, optional
        The value of null entries; needed when the array has any.

    Raises
    ------
    TypeError
        For another type (text, dictionaries, decimals: cast or encode them first).
    ValueError
        When the array has nulls and no ``fill`` is given.

    Examples
    --------
    >>> to_numpy(pa.nulls(2, pa.int8()), fill=-1).tolist()
    [-1, -1]
    >>> to_numpy(pa.chunked_array([pa.nulls(1, pa.bool_())], pa.bool_()), fill=True).tolist()
    [True]
    """
    if isinstance(array, pa.ChunkedArray):
        parts = [_chunk_to_numpy(chunk, fill) for chunk in array.chunks]
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return np.empty(0, dtype=_numpy_type(array.type))
        return np.concatenate(parts)
    return _chunk_to_numpy(array, fill)


def _numpy_type(typ: pa.DataType) -> type:
    if pa.types.is_boolean(typ):
        return np.bool_
    if typ not in _NUMPY_TYPES:
        raise TypeError(f"to_numpy converts numbers and Booleans, not {typ}")
    return _NUMPY_TYPES[typ]


def _bits(buffer: pa.Buffer, offset: int, length: int) -> np.ndarray:
    """Bits ``offset .. offset + length`` of a bitmap (least significant first) as Booleans."""
    packed = np.frombuffer(buffer, dtype=np.uint8)
    return np.unpackbits(packed, count=offset + length, bitorder="little")[offset:].view(np.bool_)


def _chunk_to_numpy(chunk: pa.Array, fill: Any) -> np.ndarray:
    dtype = _numpy_type(chunk.type)
    length, offset = len(chunk), chunk.offset
    validity, data = chunk.buffers()[:2]
    if length == 0:
        return np.empty(0, dtype=dtype)
    if dtype is np.bool_:
        values = _bits(data, offset, length)
    else:
        values = np.frombuffer(data, dtype=dtype, count=length, offset=offset * np.dtype(dtype).itemsize)
    if chunk.null_count == 0:
        return values
    if fill is None:
        raise ValueError("the array has nulls: give the value that replaces them (fill)")
    values = values.copy()
    values[~_bits(validity, offset, length)] = fill
    return values


def string_array(texts: list[str] | tuple[str, ...]) -> pa.Array:
    """An Arrow ``string`` array of ``texts`` (no nulls), built from its buffers.

    Examples
    --------
    >>> string_array(("NA", "", "n/a")).to_pylist()
    ['NA', '', 'n/a']
    >>> len(string_array([]))
    0
    """
    encoded = [text.encode("utf-8") for text in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    offsets[1:] = np.cumsum(np.array([len(e) for e in encoded], dtype=np.int64))
    data = pa.py_buffer(b"".join(encoded))
    return pa.Array.from_buffers(pa.string(), len(encoded), [None, pa.py_buffer(offsets), data])


def null_scalar(typ: pa.DataType) -> pa.Scalar:
    """The null scalar of type ``typ`` (what ``pa.scalar(None, typ)`` gives).

    Examples
    --------
    >>> null_scalar(pa.float64()).is_valid, null_scalar(pa.float64()).type
    (False, DataType(double))
    """
    return pa.nulls(1, typ)[0]
