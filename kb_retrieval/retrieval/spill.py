"""A snapshot's cold bytes in an unlinked temporary file, memory-mapped read-only.

The exact float32 window vectors (read only to re-score a handful of candidates per query) and
each chunk's row (read only for the candidates) live in the operating system's page cache
instead of the Python heap: they cost the process address space and whatever pages the kernel
keeps resident, not heap memory, and the kernel may drop them under pressure and read them back.
The file is private to the process (created unlinked, mode 0600) and freed with the snapshot.
"""

from __future__ import annotations

import marshal
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np


class SpillFile:
    """Exact vectors (n x dim float32) and marshal-encoded rows, written once, then read-only.

    marshal (Python's own format for constants: None, int, float, str, tuples; private to the
    process, like the file) reads a row back ten times faster than JSON did."""

    def __init__(self, vectors: np.ndarray, rows: Sequence[Sequence[Any]]) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        blobs = [marshal.dumps(tuple(row)) for row in rows]
        lengths = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
        self.offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        self.vector_bytes = int(vectors.nbytes)
        self.file_bytes = self.vector_bytes + int(self.offsets[-1])
        # The mapping outlives the file object: the kernel frees the bytes with the last mapping.
        with tempfile.TemporaryFile(prefix="kb-snapshot-") as handle:
            vectors.tofile(handle)
            handle.write(b"".join(blobs))
            handle.flush()
            if self.file_bytes:
                # copy-on-write: torch accepts the array without a read-only warning; nothing
                # writes to it, so every page stays shared with the file.
                whole = np.memmap(handle, dtype=np.uint8, mode="c", shape=(self.file_bytes,))
            else:
                whole = np.empty(0, dtype=np.uint8)
        # Plain ndarray views (the mapping stays alive through their base): indexing a
        # np.memmap row by row costs a subclass finalisation per row.
        whole = np.asarray(whole)
        self.vectors = whole[: self.vector_bytes].view(np.float32).reshape(vectors.shape)
        self._blobs = whole[self.vector_bytes :]

    def row(self, index: int) -> tuple[Any, ...]:
        """Row `index` as it was given (a tuple of None, int, float, str)."""
        start, end = self.offsets[index], self.offsets[index + 1]
        return marshal.loads(self._blobs[start:end].tobytes())
