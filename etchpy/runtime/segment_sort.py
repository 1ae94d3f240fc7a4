"""The segments of a scipy csr/csc input put in order, and the order kept for equal arrays.

A scipy matrix whose indices are out of order within its segments (scipy's own
`A @ B` leaves them so) is sorted for a kernel whose walks need the order;
scipy's arrays are never touched. `sorted_segments` sorts positions, not values:
compiled code (runtime.checks.sort_segments) orders the coordinates and gives
the position each came from (two stable counting sorts where segments are not
short, a sort of each segment where they are), and the values are then gathered
by that permutation, whatever their dtype.

From a pattern's second sort (a pattern sorted once is only noted, by samples
of its index arrays), the permutation is kept with the sorted indices and a copy
of the index arrays it was made from (at most LIMITS.sorted_inputs orders and
LIMITS.sorted_bytes bytes, the least recently used dropped). A later input of
the same shape whose index arrays equal that copy, compared in full (one pass,
no sort: the arrays may have been written in place since), takes the kept order
and gathers its own values by it: a matrix passed again, or a new one over the
same pattern, costs a comparison and a gather, not a sort.

Where it is used: a Tensor made from such a matrix (runtime.convert); a kernel
that checks the input in a pass before its call, in the general binding
(`in_order`, calling._fast_bind) and in a call plan (its Python text,
plan_steps.sparse_lines, or the C binder calling `ordered`), so that such a
call stays on its plan; a kernel that checks the input as it reads it (fused
checks), whose run refuses an unsorted one: after one refusal it gets the input
in order up front (`presorted`, Kernel._presort), not after a run it would
abandon. proofs_notes/validation.md, "A kept order".
"""
from __future__ import annotations

import collections
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from ..settings import LIMITS
from .checks import check_compressed, sort_segments

_KEPT: collections.OrderedDict = collections.OrderedDict()     # see the module docstring
_SEEN: collections.OrderedDict = collections.OrderedDict()     # sorted once: _seen_before
_LOCK = threading.Lock()


@dataclass(eq=False)
class _Order:
    """A kept order: copies of the index arrays it was made from, the indices in
    order, the permutation, a ref to the indices array it was last matched with
    (held), and, for bindings only (`share`), the values it last gathered with a
    copy of the values they were gathered from."""
    indptr: np.ndarray
    indices: np.ndarray
    ordered: np.ndarray
    perm: np.ndarray
    ref: object = None
    gathered: tuple | None = None

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.indptr, self.indices, self.ordered, self.perm,
                                      *(self.gathered or ())))


def sorted_segments(shape, layout: str, indptr, indices, values, share=False) -> tuple:
    """(True, (indptr, indices, values) with each segment's entries in order: the
    same indptr, new indices and values) for arrays scipy_arrays.compressed_arrays
    validated (pointers and coordinates in range: the compiled sort trusts them);
    (False, the arrays) when a segment repeats a coordinate (from_coords combines
    repeats by the semiring's ⊕, not scipy's +) or scipy cannot order them.
    `share`: the values are read only inside this call (a binding, not a Tensor a
    caller may write into), so values equal to those last gathered may be given
    the very array gathered then.

        >>> ok, (indptr, indices, values) = sorted_segments(m.shape, "csr", *arrays)
    """
    key = (layout, tuple(shape), indptr.dtype.str, len(indptr), indices.dtype.str, len(indices))
    made = again = _match(key, indptr, indices)
    if made is None:
        got = _order(shape, layout, indptr, indices)
        if got is None:
            return False, (indptr, indices, values)
        if not _seen_before(key, indptr, indices):      # met once so far: nothing kept
            return True, (indptr, got[0], values.take(got[1]))
        made = _Order(indptr.copy(), indices.copy(), *got)
    return True, (indptr, made.ordered, _values(key, made, values, indices, share,
                                                  again is not None))


def _seen_before(key, indptr, indices) -> bool:
    """Whether a pattern with this key and these samples of its index arrays was
    sorted among the last LIMITS.sorted_inputs patterns noted (and not kept); it
    is noted now, with a ref to `indices` for `held`. A pattern sorted once is not
    kept: keeping copies of every pattern met once cost the calls after it fresh
    memory (docs/performance.md, "Unsorted segments sorted in C"). Equal samples
    only say the pattern may repeat: a kept order is still taken only for arrays
    equal to its copies in full (_match)."""
    note = (key, _sample(indptr), _sample(indices))
    with _LOCK:
        seen = _SEEN.pop(note, None) is not None
        _SEEN[note] = weakref.ref(indices)
        while len(_SEEN) > LIMITS.sorted_inputs:
            _SEEN.popitem(last=False)
    return seen


def _sample(a) -> bytes:
    """About 256 of a's entries, evenly spaced, and its last, as bytes."""
    return a[::max(1, len(a) // 256)].tobytes() + a[-1:].tobytes()


def _match(key, indptr, indices):
    """The kept order of `key` whose copies equal indptr and indices (compared in
    full, after a first look at their heads), else None."""
    with _LOCK:
        hit = _KEPT.get(key)
    if hit is None or not (_equal(hit.indptr, indptr) and _equal(hit.indices, indices)):
        return None
    return hit


def _equal(a, b) -> bool:
    """Whether the 1-d arrays a (contiguous) and b hold the same bytes: compared as
    bytes where small, else a first look at their heads, then in full as unsigned
    integers of their width (so -0.0 is not 0.0, and NaN equals its own bytes)."""
    if a.dtype != b.dtype or a.shape != b.shape or not b.flags.c_contiguous:
        return False
    if a.nbytes <= 1 << 16:
        return a.tobytes() == b.tobytes()
    w = a.itemsize if a.itemsize in (1, 2, 4, 8) else 8 if a.itemsize % 8 == 0 else 1
    a, b = a.view(f"u{w}"), b.view(f"u{w}")
    return a[:256].tobytes() == b[:256].tobytes() and bool((a == b).all())


def _values(key, made: _Order, values, indices, share: bool, again: bool = True):
    """`values` in `made`'s order (the array gathered last time where `share` and
    they hold the same bytes as then), `made` kept as the most recent order. The
    values gathered are kept (with a copy of `values`) from an order's first use
    `again` (matched, not just made), so that orders made once and never met
    again cost no copy."""
    last = made.gathered
    if share and last is not None and _equal(last[0], values):
        got = last[1]
    else:
        got = values.take(made.perm)
        if share and again and last is None:
            made.gathered = (values.copy(), got)
    _keep(key, made, indices)
    return got


def _keep(key, made: _Order, indices) -> None:
    """Keep `made` as the most recent order, its ref naming `indices` (held); the
    least recently used dropped past LIMITS.sorted_inputs orders or
    LIMITS.sorted_bytes bytes (an order larger than that is not kept)."""
    made.ref = weakref.ref(indices)
    with _LOCK:
        _KEPT.pop(key, None)
        if made.nbytes() <= LIMITS.sorted_bytes:
            _KEPT[key] = made
        while len(_KEPT) > LIMITS.sorted_inputs or sum(
                k.nbytes() for k in _KEPT.values()) > LIMITS.sorted_bytes:
            _KEPT.popitem(last=False)


def held(indices) -> bool:
    """Whether a kept order was made from (or last matched) this very array, or
    it was sorted once (not kept).

        >>> held(m.indices)
    """
    if not isinstance(indices, np.ndarray):
        return False
    with _LOCK:
        return any(k.ref() is indices for k in _KEPT.values()) or any(
            r() is indices for r in _SEEN.values())


def _order(shape, layout: str, indptr, indices):
    """(indices in order, the permutation) of validated arrays (their segments,
    so indptr, unchanged); None when a segment repeats a coordinate or the arrays
    cannot be ordered. In C (checks.sort_segments) by two counting sorts where
    they pay (_counting_pays), else per segment; by scipy where the compiled
    helpers are missing."""
    major, minor = shape if layout == "csr" else shape[::-1]
    got = sort_segments(indptr, indices, minor if _counting_pays(
        major, minor, len(indices)) else None)
    if got is not None:
        return got or None
    import scipy.sparse as sp   # lazily: scipy.sparse is heavy to import
    cls = sp.csr_array if layout == "csr" else sp.csc_array
    at = np.arange(len(indices), dtype=np.int64)
    try:
        c = cls((at, indices.copy(), indptr.copy()), shape=shape, copy=False)
        c.sort_indices()
    except (TypeError, ValueError):
        return None
    ix = c.indices.astype(indices.dtype, copy=False)
    repeat = ix[1:] == ix[:-1]
    starts = c.indptr[1:-1]
    repeat[starts[(starts > 0) & (starts < len(ix))] - 1] = False    # across segments
    if repeat.any():
        return None
    return ix, c.data


def _counting_pays(major: int, minor: int, entries: int) -> bool:
    """Whether two counting sorts of every entry (O(entries + both dimensions),
    each entry moved to a scattered place twice) cost less than sorting each
    segment on its own (a rank count, O(k²) vectorised compares for a segment of
    k up to 128, blocks of 128 merged above): for segments of 8 entries or more on
    average where the entries are few enough (2¹⁸) for the scattered moves to
    stay in cache, or the segments longer than 128 on average; never for a
    hypersparse matrix (the other dimension more than 16 times the entries and
    segments). Elsewhere each segment is sorted in place (docs/performance.md,
    "Unsorted segments sorted in C")."""
    return (entries >= 8 * major and (entries <= 1 << 18 or entries > 128 * major)
            and minor <= 16 * (entries + major))


def held_names(names, inputs: dict) -> frozenset:
    """The names among `names` whose input's `indices` array a kept order was made
    from (or last matched): the inputs a kernel's refused run had sorted.

        >>> held_names({"A", "B"}, {"A": scipy_unsorted, "B": other})
    """
    return frozenset(n for n in names if held(getattr(inputs.get(n), "indices", None)))


def in_order(m, own: bool, indptr, indices, data, check):
    """(check's answer and whether it scanned the values for NaN, (indptr, indices,
    data) to bind) for the arrays of scipy csr/csc input `m`, bound in its own
    layout when `own`: where a kept order's copy equals them, that order, and no
    `check` (the copy passed it: answer (0,)); where `check()` finds the segments
    only out of order (code 5), sorted now (and kept); else its answer and the
    arrays as they are.

        >>> (res, nan_seen), arrays = in_order(m, True, m.indptr, m.indices, m.data, check)
    """
    if own and _KEPT and (got := _kept(m, indptr, indices, data)) is not None:
        return ((0,), False), got
    res, nan_seen = check()
    if own and res is not None and res[0] == 5:
        ok, arrays = sorted_segments(m.shape, m.format, indptr, indices, data, share=True)
        return ((0,) if ok else None, nan_seen), arrays
    return (res, nan_seen), (indptr, indices, data)


def ordered(m):
    """(indptr, indices, data) of scipy csr/csc `m` in order (sorted_segments), or
    None: what a call plan's binder asks where its check of m found only the
    order wrong (checks.check_compressed's code 5: pointers and coordinates sound).

        >>> indptr, indices, data = ordered(scipy_unsorted)
    """
    ok, arrays = sorted_segments(m.shape, m.format, m.indptr, m.indices, m.data, share=True)
    return arrays if ok else None


def presorted(names, inputs: dict) -> tuple:
    """(`inputs` with each scipy csr/csc input among `names` whose segments are out
    of order replaced by a scipy array of its class over ordered arrays, noted
    canonical, which the kernel then checks as it reads it, as any scipy input;
    the names replaced) (Kernel._presort). Ordered arrays: a kept order's, where
    its copies equal the input's index arrays (its own values gathered in that
    order), else, where checks.check_compressed finds only the order wrong (code
    5), sorted now; an input in order (or malformed: the kernel's checks refuse
    it) is passed as it is, and its name is not returned.

        >>> got, names = presorted({"A"}, {"A": scipy_unsorted, "x": x})
        >>> got["A"].has_sorted_indices, names
        (True, frozenset({'A'}))
    """
    out, done = inputs, []
    for n in names:
        m = inputs.get(n)
        if getattr(m, "format", None) not in ("csr", "csc") or not all(
                isinstance(a, np.ndarray) for a in (m.indptr, m.indices, m.data)) or (
                m.data.shape != m.indices.shape):
            continue                    # the kernel's own checks word what is wrong
        (res, _), got = in_order(m, True, m.indptr, m.indices, m.data,
                                 lambda: (_check(m), False))
        if res is None or res[0] != 0 or got[1] is m.indices:
            continue                    # in order already, malformed, or repeats
        out = dict(inputs) if out is inputs else out
        out[n] = type(m)(got[::-1], shape=m.shape, copy=False)
        out[n].has_sorted_indices = True        # (and no repeats: _order refused those)
        done.append(n)
    return out, frozenset(done)


def _check(m):
    """checks.check_compressed's answer for scipy csr/csc m (None where it has none)."""
    major, minor = m.shape if m.format == "csr" else m.shape[::-1]
    return check_compressed(m.indptr, m.indices, major, minor)


def _kept(m, indptr, indices, data):
    """(indptr, indices, data) of m in a kept order, where a kept copy equals
    m's index arrays; else None."""
    if not (isinstance(indices, np.ndarray) and isinstance(indptr, np.ndarray)
            and isinstance(data, np.ndarray)) or data.shape != indices.shape:
        return None
    key = (m.format, tuple(m.shape), indptr.dtype.str, len(indptr), indices.dtype.str, len(indices))
    hit = _match(key, indptr, indices)
    return None if hit is None else (indptr, hit.ordered, _values(key, hit, data, indices, True))
