"""What a partitioned input keeps on the client to send a lost block again.

A block cut on the client and scattered lives on one worker only: when that
worker dies, the cluster has no copy of it. `Source` keeps what rebuilds exactly
the blocks that were partitioned, without a second copy of the data:

- a reference to the value they were cut from (a numpy array, a scipy sparse
  matrix/array or an ep.Tensor), with the mode and the bounds of each block;
- a fingerprint of each block: SHA-256 over its arrays' bytes, shapes and
  dtypes (32 bytes a block).

`Source.block(b)` cuts block b again and returns it only when its fingerprint is
the one taken at partition time; a value written in place since then (or resized)
raises InputError, so a call never mixes old and new blocks.

Cost: one pass of SHA-256 over the blocks when partitioning and again over each
block sent again (measured in docs/distributed.md); the value stays alive as long
as the Partitioned does.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from . import blocks as blocks_
from ..errors import InputError
from ..runtime.tensor import Tensor


def _arrays(piece) -> list:
    """The arrays holding a block's data, in a fixed order."""
    if isinstance(piece, Tensor):
        return [piece.vals] + [lv[k] for lv in piece.levels for k in sorted(lv)]
    if type(piece).__module__.startswith("scipy.sparse"):
        if piece.format == "coo":
            return [piece.data, *piece.coords]
        return [piece.data, piece.indices, piece.indptr]
    return [np.asarray(piece)]


def fingerprint(piece) -> bytes:
    """SHA-256 of a block (numpy array, scipy sparse or ep.Tensor): its kind,
    shape, format and every array's dtype, shape and bytes."""
    h = hashlib.sha256()
    fmt = getattr(piece, "format", None)
    h.update(repr((type(piece).__name__, tuple(piece.shape), str(fmt))).encode())
    for a in _arrays(piece):
        a = np.ascontiguousarray(a)
        h.update(repr((a.dtype.str, a.shape)).encode())
        h.update(memoryview(a.reshape(-1)).cast("B"))
    return h.digest()


@dataclass(frozen=True, eq=False)
class Source:
    """The value a partitioned input was cut from, and its blocks' fingerprints
    (see the module docstring)."""

    value: object
    mode: int
    bounds: tuple
    prints: tuple
    name: str

    @classmethod
    def cut(cls, value, mode: int, bounds, name: str):
        """(Source, blocks): `value` cut at `bounds` along `mode`, each block
        fingerprinted as it is cut."""
        pieces = [blocks_.cut(value, (mode,), lo, hi) for lo, hi in bounds]
        prints = tuple(fingerprint(p) for p in pieces)
        return cls(value, mode, tuple(bounds), prints, name), pieces

    def block(self, b: int):
        """Block b cut again from the value, as it was when partitioned; InputError
        when the value was written in place (or resized) since then."""
        lo, hi = self.bounds[b]
        try:
            piece = blocks_.cut(self.value, (self.mode,), lo, hi)
            same = fingerprint(piece) == self.prints[b]
        except (IndexError, ValueError, TypeError):
            same = False
        if not same:
            raise InputError(
                f"block {b} of partitioned input {self.name} (entries {lo}:{hi} along mode "
                f"{self.mode}) was lost with its worker, and the value it was cut from has "
                f"been written in place since ep.partition: sending it again would mix old "
                f"and new blocks; partition the value again")
        return piece
