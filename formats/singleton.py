"""The singleton level kind.

A singleton level stores `crd` with one entry per parent position: the only
child of position p is p itself, with coordinate crd[p]. It sits under a
non-unique level (as in coo), which gives every stored entry its own position.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import FormatError, InputError
from .compressed import check_range, index_array, require_keys


@dataclass(frozen=True)
class Singleton:
    unique: bool = True

    def __str__(self):
        return "singleton" + ("" if self.unique else "-nonunique")

    # -- packing ------------------------------------------------------------
    def pack(self, parent_ids, n_parents, coord, size, split=None):
        """Build crd from sorted entries: every parent position needs exactly one
        coordinate. Returns (arrays, positions of the entries, number of positions).
        """
        parent_ids = np.asarray(parent_ids, dtype=np.int64)
        coord = np.asarray(coord, dtype=np.int64)
        crd = np.zeros(n_parents, dtype=np.int64)
        crd[parent_ids] = coord
        covered = np.zeros(n_parents, dtype=bool)
        covered[parent_ids] = True
        if not covered.all() or np.any(crd[parent_ids] != coord):
            raise FormatError("a singleton level needs exactly one coordinate per "
                              "parent position; put it under a non-unique level")
        return {"crd": crd}, parent_ids, n_parents

    def unpack(self, arrays, parents, size):
        """The child of each position in `parents`: (owner, coord, positions)."""
        parents = np.asarray(parents, dtype=np.int64)
        owner = np.arange(len(parents), dtype=np.int64)
        return owner, arrays["crd"][parents].astype(np.int64), parents

    def check(self, arrays, n_parents, size, where):
        """Validate crd under `n_parents` positions; return the position count."""
        require_keys(arrays, ("crd",), where)
        crd = index_array(arrays["crd"], f"{where}: crd", exact=True)
        if len(crd) != n_parents:
            raise InputError(f"{where}: crd has length {len(crd)} but a singleton "
                             f"level needs one entry per parent position ({n_parents})")
        check_range(crd, size, f"{where}: crd")
        return n_parents
