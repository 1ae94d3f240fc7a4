"""Replaying a lazy program: the steps of its first run, bound to new arrays.

A program run twice with arrays of the same kind (a training loop) takes the
same steps: only the arrays' values differ. `signature(nodes)` is the
program's structure with the leaves numbered in order of first use (with their
shapes and dtypes: the nodes' skeys, made as they were built, so no walk of the
program), and of each sparse leaf what the steps depend on: its format, sorted
indices, the power of two of its stored entries, and which earlier csr leaf of
its shape stores the same pattern. A run records its steps (`Tape`):
each materialised node's slot and the function computing it from the slots
before it (a compiled kernel's call, a numpy expression); the run's value
checks (whether a materialised node is finite, which chose a dense product)
are its guards. `ep.compute` looks the signature up in a bounded LRU of tapes
(`PROGRAMS`): on a hit the steps run on the new arrays, the guards are checked
on the values they produced, and a guard that no longer holds runs the program
afresh. Work sampled on a sparse pattern is recorded as steps of the slots too
(etchpy.lazy.sample: the pattern's rows and ones, each SDDMM kernel, the
gathers and numpy work on the stored values); a run with a value stored
without its step is not recorded.

What a replay skips is planning; what it keeps is validation: every kernel
call checks and binds its inputs as a first call does (the generated C trusts
what it is given, so the runtime still checks it; docs/api.md).
"""
from __future__ import annotations


import numpy as np

from ..runtime.kernel_cache import KernelCache
from ..settings import LIMITS
from .fast_replay import finite, result, runners
from .keys import merge
from .rows import tape_steps

# the recorded tapes, the most recent LIMITS.lazy_programs (a store of tapes, not
# of kernels: their kernels are in runtime.kernel_cache's one store)
PROGRAMS = KernelCache(LIMITS.lazy_programs)


def _same_pattern(a, b) -> bool:
    """Whether csr arrays a and b hold equal index arrays (np.array_equal's answer,
    most patterns that differ found so by a few entries read first)."""
    pa, ia, pb, ib = a.indptr, a.indices, b.indptr, b.indices
    if pa is pb and ia is ib:
        return True
    n = len(ia)
    if len(ib) != n or len(pa) != len(pb):
        return False
    if n and (ia[0] != ib[0] or ia[n >> 1] != ib[n >> 1] or ia[n - 1] != ib[n - 1]):
        return False
    return np.array_equal(pa, pb) and np.array_equal(ia, ib)


def _leaf_sig(v, sparse_leaves: list, fmt: str | None = None):
    """What the steps depend on of a sparse leaf beyond its shape and dtype (fmt:
    v's format when known, its class's: read then without scipy's properties)."""
    known = fmt is not None
    fmt = fmt if known else v.format
    same = -1
    if sparse_leaves and fmt == "csr":
        same = next((k for k, p in enumerate(sparse_leaves) if p.shape == v.shape
                     and p.format == "csr" and _same_pattern(p, v)), -1)
    sparse_leaves.append(v)
    return ("sparse", v.shape, v.data.dtype if known else v.dtype, fmt,
            bool(v.has_sorted_indices), int(v.indptr[-1]).bit_length(), same)


def _kind_of(v, sparse_leaves: list):
    """_leaf_sig(v, sparse_leaves), its format read off v's class once it is known."""
    fmt = _FORMATS.get(type(v))
    kind = _leaf_sig(v, sparse_leaves, fmt)
    if fmt is None and kind[3] in ("csr", "csc"):
        _FORMATS[type(v)] = kind[3]
    return kind


# the classes of csr and csc values met, and their formats (a class's format is its own)
_FORMATS: dict = {}
_NDARRAY = np.ndarray


def sparse_kinds(values: list):
    """The kinds `signature` gives the sparse ones of a program's leaf values
    `values` (in order), or None when a value is neither a numpy array nor
    sparse (the C lookup's, lazy.c_nodes).

    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.eye_array(3, format="csc")
    >>> [k[3] for k in sparse_kinds([A, np.ones(3), A])], sparse_kinds([np.ones(3)])
    (['csc', 'csc'], ())
    """
    kinds, sparse = [], []
    for v in values:
        if type(v) is _NDARRAY:
            continue
        fmt = _FORMATS.get(type(v))
        if fmt is not None and not sparse:      # the first: _leaf_sig's, no earlier leaf
            sparse.append(v)
            kinds.append(("sparse", v.shape, v.data.dtype, fmt, bool(v.has_sorted_indices),
                          int(v.indptr[-1]).bit_length(), -1))
        elif hasattr(v, "tocsr"):
            kinds.append(_kind_of(v, sparse))
        else:
            return None
    return tuple(kinds)


def signature(nodes) -> tuple:
    """(the program's structure and leaf kinds, a hashable key; its leaves' values
    in order of first use; those leaf nodes). The structure is read off the
    nodes' skeys, made as they were built (etchpy.lazy.keys); only the sparse
    leaves are read now."""
    n = nodes[0]
    leaves = n._leaves              # n.leaves, without the property's call
    skeys, leaves, lkeys = [n.skey], (n,) if leaves is None else leaves, n.lkeys
    for n in nodes[1:]:
        leaves, lkeys, share = merge(leaves, n.leaves, lkeys, n.lkeys)
        skeys += (n.skey, share)
    values, kinds, sparse = [], [], []     # a loop: a comprehension is a call of its own
    for leaf in leaves:
        v = leaf.value
        values.append(v)
        if type(v) is not _NDARRAY and hasattr(v, "tocsr"):
            kinds.append(_kind_of(v, sparse))
    return (tuple(skeys), tuple(kinds)), values, leaves


class Tape:
    """A run's steps: (slot, fn(env) -> value) in the order they ran, the guards
    (slot, finite) and the results (slot, dtype, shape); slots below `nleaves`
    are the leaves."""

    def __init__(self, ev, outs):
        values = ev.values
        self.nleaves, self.size = values.nleaves, len(values.env)
        self.guards = list(values.guards)
        self.outs = [(values.slots[o.key], o.dtype, o.shape) for o in outs]
        keep = {s for s, _ in self.guards} | {s for s, _, _ in self.outs}
        self.steps = tape_steps(values.steps, keep)
        self.blank = [None] * (self.size - self.nleaves)
        # the replay written out as one function, and the same returning its lone
        # result (a traced function's): etchpy.lazy.fast_replay; else the loop
        knobs = ev.opts.knobs
        made = runners(self, values.env, knobs.lazy_c_blas, knobs.lazy_blas_tall,
                       knobs.lazy_blas_epilogue, knobs.lazy_region_c, knobs.lazy_c_tape) \
            if knobs.lazy_fast_replay else {
            "run": self.replay, "single": self._single}
        self.run, self.single = made["run"], made["single"]
        # the plan the C lookup calls in place of `single` (fast_replay), or None
        self.plan = made.get("plan")
        # the same after a test that the leaves are numpy arrays of the recorded kind
        # (a traced function's kind test and replay in one call), or None
        self.entries = (made.get("entry"), made.get("entry single"))

    def _single(self, leaves: list):
        out = self.replay(leaves)
        return out if out is None else out[0]

    def replay(self, leaves: list):
        """The results on the arrays `leaves` (in the signature's order), or None
        when a guard fails (the steps run in a loop: `run` is the same written out)."""
        env = [*leaves, *self.blank]
        for slot, fn in self.steps:
            env[slot] = fn(env)
        for slot, want in self.guards:
            if finite(env[slot]) != want:
                return None
        nleaves, outs = self.nleaves, self.outs
        if len(outs) == 1:
            s, dtype, shape = outs[0]
            return (result(env[s], dtype, shape, s < nleaves),)
        return tuple([result(env[s], dtype, shape, s < nleaves) for s, dtype, shape in outs])


def tuning_key(tuning):
    """A hashable stand-in for compute's tuning argument, or False (not cached)."""
    if tuning is None or isinstance(tuning, str):
        return tuning
    try:
        hash(tuning)
    except TypeError:
        return False
    return tuning
