"""A compiled kernel's sparse result read back (no copies): its malloc'ed arrays
as numpy, scipy or a Tensor.

    sparse_output(...)             a sparse result's malloc'ed arrays as numpy/scipy/Tensor
    read_output(...)               a sparse result from its arrays, wherever they live
"""
from __future__ import annotations

import numpy as np

from . import inputs as io_
from .tensor import Tensor


def sparse_output(program, out_format, sr, lib, name, grown, shape, idx_dtype):
    """Wrap kernel `name`'s malloc'ed output arrays as numpy arrays (no copies).

    Each array owns its C buffer through cffi's gc hook, which frees it with
    the kernel's own free once numpy lets go of it.
    """
    out = program.output
    ffi = lib.ffi
    counts = {role: int(grown[var][0]) for role, var in out.counts.items()}
    free = getattr(lib.lib, f"{name}_free")
    owned = {role: ffi.gc(grown[var][0], free) for role, var in out.arrays.items()}

    def take(role, n, dtype):
        if n == 0:
            return np.zeros(0, dtype=dtype)
        return np.frombuffer(ffi.buffer(owned[role], n * np.dtype(dtype).itemsize),
                             dtype=dtype)

    return read_output(out.mode, out_format, sr, take, counts, shape, idx_dtype)


def read_output(mode, out_format, sr, take, counts, shape, idx_dtype):
    """A sparse result from its arrays: `take(role, n, dtype)` gives the first n
    entries of the array of that role ("vals", "pos1", "crd1", ...), `counts`
    the lengths by role ("count", "count1", ...); `mode` is the program's
    output mode (lower.Output). A scipy array when inputs.returns_scipy says
    so, else a Tensor carrying the semiring's zero as its fill."""
    scipy = io_.returns_scipy(out_format, sr)
    if mode == "coords":
        n = counts["count"]
        coords = np.stack([take(f"crd{m}", n, idx_dtype).astype(np.int64)
                           for m in range(len(shape))]) if shape else \
            np.zeros((0, n), dtype=np.int64)
        t = Tensor.from_coords(coords, take("vals", n, sr.dtype), shape, out_format,
                               semiring=sr, name="output")
    elif scipy:
        # csr / csc: straight into scipy (sorted and canonical by construction)
        import scipy.sparse as sp      # loaded by then; not at `import etchpy`
        n = counts["count1"]
        make = sp.csc_array if tuple(out_format.mode_order) == (1, 0) else sp.csr_array
        major = shape[out_format.mode_order[0]]
        return make((take("vals", n, sr.dtype), take("crd1", n, idx_dtype),
                     take("pos1", major + 1, idx_dtype)), shape=shape)
    else:
        t = _assemble(out_format, sr, take, counts, shape, idx_dtype)
    return t.to_scipy() if scipy else t


def _assemble(fmt, sr, take, counts, shape, idx_dtype) -> Tensor:
    storage_sizes = [shape[m] for m in fmt.mode_order]
    levels, parents = [], 1
    for k, lv in enumerate(fmt.levels):          # each level takes its own arrays
        arrays, parents = lv.assemble(lambda key, n: take(key, n, idx_dtype), k, parents,
                                      storage_sizes[k], counts.get(f"count{k}"))
        levels.append(arrays)
    vals = take("vals", parents, sr.dtype)
    # canonical and in bounds by construction (sorted, no duplicates; the tests check
    # it): built without validating again, its index arrays frozen as any Tensor's
    return Tensor._made(shape, fmt, tuple(levels), vals, sr.zero)
