"""A compiled kernel's sparse result read back (no copies): its malloc'ed arrays
as numpy, scipy or a Tensor.

    sparse_output(...)             a sparse result's malloc'ed arrays as numpy/scipy/Tensor
    reader(...)                    the same, made once per kernel (a call plan's output)
    grown_kind(...)                how the C binder makes a csr/csc- or rle-shaped result
    compressed(...)                a scipy csr/csc array over arrays etchpy wrote
    read_output(...)               a sparse result from its arrays, wherever they live
    made(...)                      the output Tensor of a kernel's arrays, not validated again
"""
from __future__ import annotations

from types import MappingProxyType

import numpy as np

from . import inputs as io_
from .tensor import Tensor, _immutable, recorded, truth_values


def sparse_output(out, out_format, sr, lib, name, grown, shape, idx_dtype):
    """Wrap kernel `name`'s malloc'ed output arrays as numpy arrays (no copies);
    `out` is its program's output (runtime.restored.OutputFace).

    Each array owns its C buffer through cffi's gc hook, which frees it with
    the kernel's own free once numpy lets go of it.
    """
    ffi = lib.ffi
    counts = {role: int(grown[var][0]) for role, var in out.counts.items()}
    free = getattr(lib.lib, f"{name}_free")
    owned = {role: ffi.gc(grown[var][0], free) for role, var in out.arrays.items()}

    def take(role, n, dtype):
        if n == 0:
            return np.zeros(0, dtype=dtype)
        return np.frombuffer(ffi.buffer(owned[role], n * np.dtype(dtype).itemsize),
                             dtype=dtype)

    return read_output(out, out_format, sr, take, counts, shape, idx_dtype)


def reader(out, out_format, sr, lib, name, idx_dtype):
    """`read(grown, shape)`: `sparse_output(out, out_format, sr, lib, name, grown,
    shape, idx_dtype)`, with what does not depend on the call worked out once (a
    call plan's output: runtime.call_plans); `read.lib`: `lib`, whose free
    releases the arrays it reads (those lib's build made)."""
    roles = {"vals", "crd1", "pos1"}
    if (out.records or not io_.returns_scipy(out_format, sr)
            or out.arrays.keys() != roles or "count1" not in out.counts):
        def general(grown, shape):
            return sparse_output(out, out_format, sr, lib, name, grown, shape, idx_dtype)
        general.lib = lib
        return general
    import scipy.sparse as sp          # loaded by then: the output is scipy's
    make = sp.csc_array if tuple(out_format.mode_order) == (1, 0) else sp.csr_array
    gc, buffer, free = lib.ffi.gc, lib.ffi.buffer, getattr(lib.lib, f"{name}_free")
    major, count = out_format.mode_order[0], out.counts["count1"]
    parts = [(out.arrays[r], np.dtype(sr.dtype if r == "vals" else idx_dtype))
             for r in ("vals", "crd1", "pos1")]

    def read(grown, shape):
        n = int(grown[count][0])
        arrays = []
        for (var, dt), size in zip(parts, (n, n, shape[major] + 1)):
            owned = gc(grown[var][0], free)     # freed with the array (or now, if empty)
            arrays.append(np.frombuffer(buffer(owned, size * dt.itemsize), dtype=dt)
                          if size else np.zeros(0, dtype=dt))
        return compressed(make, *arrays, shape)
    read.lib = lib
    return read


def grown_kind(out, out_format, sr):
    """How the C binder (runtime.binder) makes a grown result of csr or csc layout
    from its three arrays: (the output variables of pos1, crd1, vals and count1, the
    mode whose size + 1 is pos1's length, the scipy class, the fields `compressed`
    gives it (None: its constructor is called), None), or for a Tensor result
    (inputs.returns_scipy false; rle too, rseg1 and rend1 in pos1's and crd1's
    places) (..., None, None, finish(vals, crd, pos, shape)) making it as
    read_output does, its index arrays kept (`made`, sealed); None for any other
    output. `out`: the program's output (runtime.restored.OutputFace)."""
    roles = _two_arrays(out, out_format)
    if roles is None:
        return None
    names = (out.arrays[roles[0]], out.arrays[roles[1]], out.arrays["vals"],
             out.counts["count1"])
    major = out_format.mode_order[0]
    if not io_.returns_scipy(out_format, sr):
        keys = (roles[0][:-1], roles[1][:-1])        # "pos", "crd" / "rseg", "rend"

        def finish(vals, crd, pos, shape):
            # the binder's index arrays: read-only over the kernel's buffer, which
            # nothing else holds (binder_outputs.c.j2): kept as they are
            return made(shape, out_format, ({}, {keys[0]: pos, keys[1]: crd}), vals,
                        sr.zero, sealed=True)
        return names, major, None, None, finish
    import scipy.sparse as sp          # loaded by then: the output is scipy's
    make = sp.csc_array if tuple(out_format.mode_order) == (1, 0) else sp.csr_array
    if make not in _made:               # learnt from one constructor call
        compressed(make, np.zeros(0), np.zeros(0, np.int32), np.zeros(2, np.int32), (1, 1))
    return names, major, make, _made[make], None


def _two_arrays(out, fmt):
    """The roles of a grown output's segment and index arrays when it is a 2-d
    output of one dense level over one that takes them and vals (count1 counting
    the latter): ("pos1", "crd1") of csr/csc, ("rseg1", "rend1") of rle (row or
    column runs, written in order as runs: lower.targets.runs); else None."""
    if out.records or fmt.order != 2 or "count1" not in out.counts:
        return None
    if fmt in io_.scipy_layouts() and out.arrays.keys() == {"vals", "crd1", "pos1"}:
        return "pos1", "crd1"
    if (out.arrays.keys() == {"vals", "rseg1", "rend1"} and fmt.writes_runs
            and [str(lv) for lv in fmt.levels] == ["dense", "runs"]):
        return "rseg1", "rend1"
    return None


def read_output(out, out_format, sr, take, counts, shape, idx_dtype):
    """A sparse result from its arrays: `take(role, n, dtype)` gives the first n
    entries of the array of that role ("vals", "pos1", "crd1", ...), `counts`
    the lengths by role ("count", "count1", ...); `out` is the program's
    output (a lower.program.Output or its runtime.restored.OutputFace: records,
    or its format's level arrays). A scipy array when inputs.returns_scipy says
    so, else a Tensor carrying the semiring's zero as its fill."""
    scipy = io_.returns_scipy(out_format, sr)
    if out.records:
        n = counts["count"]
        coords = np.stack([take(f"crd{m}", n, idx_dtype).astype(np.int64)
                           for m in range(len(shape))]) if shape else \
            np.zeros((0, n), dtype=np.int64)
        records = io_.records_kept(out_format, coords, take("vals", n, sr.dtype), sr)
        t = Tensor.from_coords(*records, shape, out_format, semiring=sr, name="output")
    elif scipy:
        # csr / csc: straight into scipy (sorted and canonical by construction)
        import scipy.sparse as sp      # loaded by then; not at `import etchpy`
        n = counts["count1"]
        make = sp.csc_array if tuple(out_format.mode_order) == (1, 0) else sp.csr_array
        major = shape[out_format.mode_order[0]]
        return compressed(make, take("vals", n, sr.dtype), take("crd1", n, idx_dtype),
                          take("pos1", major + 1, idx_dtype), shape)
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
    return made(shape, fmt, tuple(levels), vals, sr.zero)


def made(shape: tuple, fmt, levels: tuple, vals, fill, sealed: bool = False) -> Tensor:
    """A kernel's output Tensor "output" from its parts as read here: shape a tuple
    of ints, fmt a Format of its order, levels dicts of 1-d index arrays, vals a
    1-d C-contiguous array, fill a value of its dtype (the semiring's zero). What
    Tensor._of does, less the normalisation and validation those already satisfy
    (a small output's call was mostly this Python; the kernel writes canonical
    arrays: proofs_notes/runs.md law 4, for runs). Each index array becomes an
    immutable copy (tensor._immutable), but with `sealed` one that is read-only is
    kept: the C binder's (`grown_kind`'s finish), over the kernel's own buffer,
    which nothing else holds and whose base has no writable buffer, so that its
    flag cannot be set writeable again (binder_outputs.c.j2)."""
    t = Tensor.__new__(Tensor)
    levels = tuple(MappingProxyType({k: a if sealed and not a.flags.writeable
                                     else _immutable(a) for k, a in lv.items()})
                   for lv in levels)
    vals = truth_values(vals).view()
    t.__dict__.update(name="output", shape=shape, format=fmt, _levels=levels, _vals=vals,
                      fill=vals.dtype.type(fill), **recorded(vals, levels))
    return t


_FIELDS = {"_shape", "maxprint", "data", "indices", "indptr"}
_made: dict = {}          # scipy class -> the fields its constructor set, or None


def compressed(make, data, indices, indptr, shape):
    """scipy's `make((data, indices, indptr), shape=shape)` for arrays etchpy wrote
    (canonical, in bounds, of an index dtype scipy takes), without the
    constructor's checks of them (about 15-25 µs, most of a small call): the object
    gets the fields the constructor sets. Learnt per class from one constructor call
    (the one made here the first time); a scipy whose constructor sets other fields
    gets its constructor always."""
    fields = _made.get(make, False)
    if fields is False:
        obj = make((data, indices, indptr), shape=shape)
        kept = vars(obj)
        _made[make] = {k: kept[k] for k in _FIELDS - {"data", "indices", "indptr", "_shape"}
                       } if kept.keys() == _FIELDS else None
        return obj
    if fields is None:
        return make((data, indices, indptr), shape=shape)
    obj = make.__new__(make)
    vars(obj).update(fields)
    obj.data, obj.indices, obj.indptr = data, indices, indptr
    obj._shape = tuple(map(int, shape))
    return obj

