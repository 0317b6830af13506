"""A compact table keyed by 64-bit hashes: a few machine integers per key, not Python objects.

A dict of Python ints costs about 100 bytes an entry (the entry, the key object, the value
object); :class:`HashTable` keeps its keys in one sorted numpy array with a column per value
(8 bytes a key and a column), and takes new keys into a small dict of :data:`CHUNK` entries
that is merged into the sorted arrays each time it fills. Memory is the arrays plus that
bounded dict; each merge sorts the table again, O(n log n) every :data:`CHUNK` new keys.

>>> t = HashTable({"count": "q"})
>>> t.insert(7, (1,))
>>> cols, i = t.find(7)
>>> cols["count"][i] += 1
>>> t.freeze()["count"].tolist()
[2]
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["CHUNK", "HashCounts", "HashTable"]

#: New keys held in a dict before they are merged into the sorted arrays.
CHUNK = 4096
_DTYPES = {"q": "int64", "Q": "uint64", "i": "int32"}


class HashTable:
    """Rows of integers (``columns``: name -> array typecode ``q``, ``Q`` or ``i``) keyed by
    unsigned 64-bit ints, in bounded memory overhead (see the module)."""

    def __init__(self, columns: Mapping[str, str], chunk: int = CHUNK) -> None:
        import numpy as np

        self.columns = dict(columns)
        self.chunk = chunk
        self.keys: npt.NDArray[np.uint64] = np.empty(0, dtype=np.uint64)
        self._cols: dict[str, npt.NDArray[Any]] = {
            name: np.empty(0, dtype=_DTYPES[code]) for name, code in self.columns.items()
        }
        self._new: dict[int, int] = {}  # key -> row of the new columns
        self._new_keys = array("Q")
        self._new_cols: dict[str, array[int]] = {n: array(c) for n, c in self.columns.items()}

    def __len__(self) -> int:
        return len(self.keys) + len(self._new)

    def find(self, key: int) -> tuple[Mapping[str, Any], int] | None:
        """The columns holding ``key`` and its row in them (assign through them to update it);
        None when the key is new."""
        i = self._new.get(key)
        if i is not None:
            return self._new_cols, i
        row = self.row(key)
        return None if row is None else (self._cols, row)

    def row(self, key: int) -> int | None:
        """``key``'s row in the sorted arrays (after :meth:`freeze`: in :meth:`freeze`'s
        columns), or None."""
        import numpy as np

        keys = self.keys
        i = int(np.searchsorted(keys, np.uint64(key)))
        return i if i < len(keys) and int(keys[i]) == key else None

    def insert(self, key: int, values: Sequence[int]) -> None:
        """A new key (never one :meth:`find` finds) with its row of ``values``."""
        self._new[key] = len(self._new_keys)
        self._new_keys.append(key)
        for col, v in zip(self._new_cols.values(), values, strict=True):
            col.append(v)
        if len(self._new) >= self.chunk:
            self._merge()

    def _merge(self) -> None:
        import numpy as np

        if not self._new:
            return
        keys = np.concatenate([self.keys, np.frombuffer(self._new_keys, dtype=np.uint64)])
        order = np.argsort(keys, kind="stable")
        self.keys = keys[order]
        for name, code in self.columns.items():
            new = np.frombuffer(self._new_cols[name], dtype=_DTYPES[code])
            self._cols[name] = np.concatenate([self._cols[name], new])[order]
        self._new = {}
        self._new_keys = array("Q")
        self._new_cols = {n: array(c) for n, c in self.columns.items()}

    def freeze(self) -> dict[str, npt.NDArray[Any]]:
        """Merge what is pending and return the columns, row ``i`` of each being ``keys[i]``'s;
        the table then only answers :meth:`row`."""
        self._merge()
        cols, self._cols = self._cols, {}
        return cols


class HashCounts:
    """How many times each 64-bit hash was added, in bounded memory overhead: additions are
    buffered (``pending`` of them, 8 bytes each), then counted (``numpy.unique``) into one
    sorted array of hashes and one of counts (16 bytes a distinct hash)."""

    def __init__(self, pending: int = 1 << 16) -> None:
        import numpy as np

        self.pending = pending
        self.keys: npt.NDArray[np.uint64] = np.empty(0, dtype=np.uint64)
        self.counts: npt.NDArray[np.int64] = np.empty(0, dtype=np.int64)
        self._new = array("Q")

    def add(self, keys: Iterable[int]) -> None:
        """Count each of ``keys`` once more."""
        self._new.extend(keys)
        if len(self._new) >= self.pending:
            self._count()

    def _count(self) -> None:
        import numpy as np

        if not self._new:
            return
        new = np.frombuffer(self._new, dtype=np.uint64)
        keys, inverse = np.unique(np.concatenate([self.keys, new]), return_inverse=True)
        counts = np.bincount(inverse[len(self.keys) :], minlength=len(keys)).astype(np.int64)
        counts[inverse[: len(self.keys)]] += self.counts  # the old keys are distinct
        self.keys, self.counts = keys, counts
        self._new = array("Q")

    def __len__(self) -> int:
        self._count()
        return len(self.keys)

    def count(self, key: int) -> int:
        """How many times ``key`` was added."""
        import numpy as np

        self._count()
        i = int(np.searchsorted(self.keys, np.uint64(key)))
        return int(self.counts[i]) if i < len(self.keys) and int(self.keys[i]) == key else 0
