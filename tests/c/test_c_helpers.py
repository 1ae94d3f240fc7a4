"""The C helpers of kernel.c.j2 (ep_seek, ep_seek_at, ep_sort_idx, ep_marks_walkable), called
directly, under the Tuning values that shape them, against their meaning."""
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import imp, tuning
from etchpy.c import render as c
from etchpy.imp import ONE, ZERO
from etchpy.runtime import build

WRAPPERS = """
int64_t seek_for_test(const ep_idx_t *crd, int64_t q, int64_t end, int64_t t, int r)
{ return ep_seek(crd, q, end, t, r); }
int64_t seek_at_for_test(const ep_idx_t *crd, int64_t q, int64_t end, int64_t t, int r)
{ return ep_seek_at(crd, q, end, t, r); }
void sort_for_test(ep_idx_t *a, int64_t n) { ep_sort_idx(a, n); }
int marks_for_test(ep_idx_t *a, int64_t n, int8_t *marks, uint64_t *bits, int64_t size,
                   int64_t *lo, int64_t *hi)
{ return ep_marks_walkable(a, n, marks, bits, size, lo, hi); }
#ifdef EP_SORT_NET
int net_for_test(void) { return 1; }
#else
int net_for_test(void) { return 0; }
#endif
"""
CDEF = """typedef int32_t idx_t;
int64_t seek_for_test(const idx_t *crd, int64_t q, int64_t end, int64_t t, int r);
int64_t seek_at_for_test(const idx_t *crd, int64_t q, int64_t end, int64_t t, int r);
void sort_for_test(idx_t *a, int64_t n);
int marks_for_test(idx_t *a, int64_t n, int8_t *marks, uint64_t *bits, int64_t size,
                   int64_t *lo, int64_t *hi);
int net_for_test(void);
"""


def helpers(t: tuning.Tuning):
    """A kernel that needs ep_seek and the sorted walk, with exported wrappers."""
    body = imp.seq(imp.Alloc("a", "index", ONE, ZERO),
                   imp.Alloc("b", "bits", imp.sort_bits_words(ONE), ZERO),
                   imp.Alloc("m", "byte", ONE, ZERO),
                   imp.Decl("q", "index", ZERO),
                   imp.Seek("q", ZERO, "a", ZERO, imp.TRUE),
                   imp.ForSorted("v", "a", ZERO, ONE, "b", imp.SKIP, marks="m"))
    prog = SimpleNamespace(params=(), body=body, dims=(), refuse_above=(), error=None,
                           output=SimpleNamespace(mode="dense", axes=(), arrays={"vals": "out_vals"}))
    src = c.render(prog, ep.semirings.get("real"), name="helpers", idx_type="int32_t",
                   tuning=t)
    return build.load(src.c + WRAPPERS, CDEF, name="helpers_test")


def _ptr(lib, arr, ctype="idx_t *"):
    return lib.ffi.cast(ctype, arr.ctypes.data)


@pytest.mark.parametrize("linear", [0, 1, 8])
@settings(max_examples=100)
@given(st.integers(0, 400), st.integers(1, 12), st.data())
def test_seek_in_c_equals_its_imp_meaning(linear, n, gap, data):
    """ep_seek (seek_linear steps, then a gallop and a binary search), and ep_seek_at
    (two steps in line, then ep_seek), against the
    meaning of imp.Seek: q moves past exactly the positions of crd[q..end) behind
    (t, r). Targets land before, on, between and past the coordinates, near and far."""
    rng = np.random.default_rng(n * 13 + gap)
    crd = np.cumsum(rng.integers(1, gap + 1, n)).astype(np.int32)
    q = data.draw(st.integers(0, n), label="q")
    end = data.draw(st.one_of(st.just(n), st.integers(q, n)), label="end")
    inside = [int(x) for x in crd[q:end]] or [0]
    t = data.draw(st.one_of(st.sampled_from(inside), st.sampled_from(inside).map(lambda x: x + 1),
                            st.integers(-2, 12 * 400 + 2)), label="t")
    r = data.draw(st.booleans(), label="r")
    lib = helpers(tuning.DEFAULT.with_(seek_linear=linear))
    got = lib.lib.seek_for_test(_ptr(lib, crd, "const idx_t *"), q, end, t, int(r))
    assert got == q + np.searchsorted(crd[q:end], t, side="right" if r else "left")
    assert lib.lib.seek_at_for_test(_ptr(lib, crd, "const idx_t *"), q, end, t, int(r)) == got
    machine = imp.Machine(ep.semirings.get("real"), {"crd": crd.astype(np.int64), "q": q})
    machine.exec(imp.Seek("q", imp.Const(end), "crd", imp.Const(t), imp.Const(r, "bool")))
    assert machine.env["q"] == got


@pytest.mark.parametrize("run, rank", [(2, 0), (3, 0), (16, 0), (16, 128), (2, 5), (16, 1)])
@settings(max_examples=40)
@given(st.lists(st.integers(0, 10**6), unique=True, max_size=300))
def test_sort_in_c_sorts_distinct_indices(run, rank, xs):
    """Quicksort down to runs of max(sort_run, rank_sort_max), then rows of at most
    rank_sort_max indices by rank (0: none), the others by insertion."""
    lib = helpers(tuning.DEFAULT.with_(sort_run=run, rank_sort_max=rank))
    a = np.array(xs, dtype=np.int32)
    lib.lib.sort_for_test(_ptr(lib, a), len(a))
    assert list(a) == sorted(xs)


@pytest.mark.parametrize("rank", [0, 128])
@settings(max_examples=40)
@given(st.lists(st.integers(0, 10**6), unique=True, max_size=150),
       st.lists(st.tuples(st.integers(0, 149), st.integers(0, 149)), max_size=12))
def test_sort_in_c_sorts_nearly_sorted_indices(rank, xs, swaps):
    """A sorted row with a few swaps (a grid operator's touched row): the
    insertion pass finishes it, or gives up part way and the rank sort does."""
    a = np.array(sorted(xs), dtype=np.int32)
    for u, v in swaps:
        if u < len(a) and v < len(a):
            a[[u, v]] = a[[v, u]]
    lib = helpers(tuning.DEFAULT.with_(rank_sort_max=rank))
    lib.lib.sort_for_test(_ptr(lib, a), len(a))
    assert list(a) == sorted(xs)


def _marked(xs, size: int):
    """A ForSorted's marks (a byte per index, xs marked) and its zeroed bits."""
    marks = np.zeros(size, dtype=np.int8)
    marks[list(xs)] = 1
    return marks, np.zeros(size // 64 + 1 + size // 4096 + 1, dtype=np.uint64)


def _bits_set(words) -> list[int]:
    """The indices whose bits are set in `words`, ascending."""
    return [w * 64 + b for w in np.flatnonzero(words) for b in range(64)
            if int(words[w]) >> b & 1]


def near_sorts(xs, places: int, run: int = 16) -> bool:
    """Whether ep_sort_near sorts xs (at most `run` of them, none more than
    `places` places late), as ep_marks_walkable tries first."""
    a, n = list(xs), len(xs)
    if n > run:
        return False
    for t in range(1, n):
        v, k = a[t], t - 1
        while k >= 0 and k >= t - places and a[k] > v:
            a[k + 1], k = a[k], k - 1
        a[k + 1] = v
        if k >= 0 and a[k] > v:
            return False
    return True


def nearly_sorted(draw_lists, swaps):
    """Sorted distinct indices with a few swaps of neighbours two apart at most."""
    a = sorted(draw_lists)
    for u, d in swaps:
        if u + d < len(a):
            a[u], a[u + d] = a[u + d], a[u]
    return a


@pytest.mark.parametrize("least, spread, places, share", [(32, 4, 2, 8), (8, 4, 2, 0),
                                                          (0, 10**6, 1, 8), (0, 1, 3, 1)])
@settings(max_examples=40)
@given(st.lists(st.integers(0, 20000), unique=True, max_size=200),
       st.lists(st.tuples(st.integers(0, 30), st.integers(1, 3)), max_size=4), st.booleans(),
       st.booleans())
def test_marks_walk_or_sort(least, spread, places, share, xs, swaps, near, narrow):
    """ep_marks_walkable first insertion-sorts a short nearly sorted list (at
    most sort_run, none more than sort_near_places late, its first, middle and
    last within 1/sort_near_share of the size: a stencil product's touched row); else it
    walks the marks when there are at least marks_walk_min indices spread over
    at most marks_walk_spread summary words each; else it clears the marks and
    sorts the list (by rank when short). A list of at most sort_net that is not
    nearly sorted is sorted by a network, walkable or not, where the C is built
    for AVX-512."""
    if narrow:                                   # within 1/8 of the size, or not
        xs = sorted({x // 10 for x in xs})
    xs = nearly_sorted(xs[:16], swaps) if near else xs
    lib = helpers(tuning.DEFAULT.with_(marks_walk_min=least, marks_walk_spread=spread,
                                       sort_near_places=places, sort_near_share=share))
    size = 20001
    a = np.zeros(size, dtype=np.int32)     # room for size indices, as a ForSorted's list
    a[:len(xs)] = xs
    marks, bits = _marked(xs, size)
    lo, hi = lib.ffi.new("int64_t *"), lib.ffi.new("int64_t *")
    walk = lib.lib.marks_for_test(_ptr(lib, a), len(xs), _ptr(lib, marks, "int8_t *"),
                                  _ptr(lib, bits, "uint64_t *"), size, lo, hi)
    words = (max(xs) >> 12) - (min(xs) >> 12) + 1 if xs else 1
    w = size // share if share else 0
    tried = len(xs) < 2 or share == 0 or (abs(xs[-1] - xs[0]) <= w
                                          and abs(xs[len(xs) // 2] - xs[0]) <= w)
    netted = lib.lib.net_for_test() and len(xs) <= tuning.DEFAULT.sort_net   # (built for AVX-512)
    assert walk == (not (tried and near_sorts(xs, places)) and len(xs) >= least
                    and words <= spread * len(xs) and not netted)
    assert not marks.any()                          # cleared either way
    if walk:
        summary = bits[size // 64 + 1:]
        marked = {w for w in range(len(summary) * 64)
                  if int(summary[w // 64]) >> (w % 64) & 1}
        assert marked == {x >> 6 for x in xs} and (lo[0], hi[0]) == (min(xs) >> 12, max(xs) >> 12)
        assert _bits_set(bits[:size // 64 + 1]) == sorted(xs)
    else:
        assert list(a[:len(xs)]) == sorted(xs) and not bits.any()


@pytest.mark.parametrize("net", [32])
@settings(max_examples=30)
@given(st.lists(st.integers(0, 60), unique=True, max_size=34), st.sampled_from([9, 20, 20001]))
def test_short_rows_sorted_by_network_or_rank(net, xs, size):
    """A touched row of at most sort_net indices that is not nearly sorted is
    sorted by a bitonic network of 16 or 32 lanes, walkable or not (written back
    whole when the list has room for the lanes, else index by index: sizes 9 and
    20); longer ones by rank or walked (sort_net 0: the rank sort, tested above)."""
    xs = list(dict.fromkeys(x % size for x in xs))
    lib = helpers(tuning.DEFAULT.with_(sort_net=net, sort_near_share=0, sort_run=2,
                                       marks_walk_min=64 if net == 0 else 17))
    a = np.full(size, -7, dtype=np.int32)
    a[:len(xs)] = xs
    marks, bits = _marked(xs, size)
    lo, hi = lib.ffi.new("int64_t *"), lib.ffi.new("int64_t *")
    walk = lib.lib.marks_for_test(_ptr(lib, a), len(xs), _ptr(lib, marks, "int8_t *"),
                                  _ptr(lib, bits, "uint64_t *"), size, lo, hi)
    assert walk == 0 or (len(xs) > max(net, 2) and net)
    assert not marks.any()
    if walk == 0:
        assert list(a[:len(xs)]) == sorted(xs) and not bits.any()


RANK_WRAPPER = """
void ranks_for_test(const ep_idx_t *a, int64_t n, ep_idx_t *t, ep_idx_t *r)
{ ep_ranks(a, n, t, r); }
int ranked_for_test(ep_idx_t *a, int64_t n, int8_t *marks, uint64_t *bits, int64_t size,
                    int64_t *lo, int64_t *hi, ep_idx_t *r)
{ return ep_marks_ranked(a, n, marks, bits, size, lo, hi, r); }
int lane_bytes_for_test(void) { return EP_LANE_BYTES; }
"""
RANK_CDEF = """void ranks_for_test(const idx_t *a, int64_t n, idx_t *t, idx_t *r);
int ranked_for_test(idx_t *a, int64_t n, int8_t *marks, uint64_t *bits, int64_t size,
                    int64_t *lo, int64_t *hi, idx_t *r);
int lane_bytes_for_test(void);
"""


@pytest.mark.parametrize("loads, idx", [(0, "int32_t"), (1, "int32_t"), (0, "int64_t"),
                                         (1, "int64_t")])
@settings(max_examples=40)
@given(st.lists(st.integers(0, 2**31 - 2), unique=True, max_size=48), st.booleans())
def test_ranks_of_a_row_in_register_wide_lanes(loads, idx, xs, copy):
    """ep_ranks gives each of n distinct indices its count of smaller ones (and
    copies them to t when given one, nothing written past n), 16 at a time, in
    vectors no wider than the target's registers: GCC splits a generic vector
    wider than them into one scalar compare per lane (16 int32 lanes in one
    64-byte vector ran as 16 `setl`s a step on a host without AVX-512). Each
    block put together lane by lane (rank_loads 0) or, under AVX-512, by one
    masked load a register (1), the lanes past n left at the padding."""
    lib = _rank_helpers(loads, idx)
    src = lib.c_source
    assert "ep_lanes_t __attribute__((vector_size(16" not in src
    assert "ep_lanes_t __attribute__((vector_size(EP_LANE_BYTES)))" in src
    assert ("#define EP_RANK_LOADS 1" in src) == bool(loads)
    assert lib.lib.lane_bytes_for_test() in (32, 64)
    dt = np.int32 if idx == "int32_t" else np.int64
    a = np.array(xs + [-7] * (48 - len(xs)), dtype=dt)
    r, t = np.full(48, -1, dtype=dt), np.full(48, -5, dtype=dt)
    lib.lib.ranks_for_test(_ptr(lib, a), len(xs), _ptr(lib, t) if copy else lib.ffi.NULL,
                           _ptr(lib, r))
    assert list(r[:len(xs)]) == [sorted(xs).index(x) for x in xs]
    assert list(t) == (xs if copy else [-5] * len(xs)) + [-5] * (48 - len(xs))


@settings(max_examples=60)
@given(st.lists(st.integers(0, 20000), unique=True, max_size=60),
       st.lists(st.tuples(st.integers(0, 30), st.integers(1, 3)), max_size=4), st.booleans())
def test_rows_up_to_the_place_limit_are_ranked_in_place(xs, swaps, near):
    """ep_marks_ranked answers 2 (marks cleared, each index's rank in r, the list
    as it was) for a list of 2 to place_max indices (below marks_walk_min, at
    most rank_sort_max) unless it is at most sort_run long and its ends are near
    (then ep_marks_walkable's ways); a longer list goes to ep_marks_walkable."""
    from etchpy.c.sorted_walk import place_max
    xs = nearly_sorted(xs[:16], swaps) if near else xs
    lib, t = _rank_helpers(), tuning.DEFAULT
    most, size = place_max(t), 20001
    a = np.zeros(size, dtype=np.int32)
    a[:len(xs)] = xs
    marks, bits = _marked(xs, size)
    r = np.full(-(-most // 16) * 16, -1, dtype=np.int32)
    lo, hi = lib.ffi.new("int64_t *"), lib.ffi.new("int64_t *")
    way = lib.lib.ranked_for_test(_ptr(lib, a), len(xs), _ptr(lib, marks, "int8_t *"),
                                  _ptr(lib, bits, "uint64_t *"), size, lo, hi, _ptr(lib, r))
    assert not marks.any()
    w = size // t.sort_near_share
    near_ends = len(xs) < 2 or (abs(xs[-1] - xs[0]) <= w and abs(xs[len(xs) // 2] - xs[0]) <= w)
    ranked = 1 < len(xs) <= most and (len(xs) > t.sort_run or not near_ends)
    assert (way == 2) == ranked
    if ranked:
        assert list(a[:len(xs)]) == xs and not bits.any()
        assert list(r[:len(xs)]) == [sorted(xs).index(x) for x in xs]
    elif way == 0:
        assert list(a[:len(xs)]) == sorted(xs) and not bits.any()


_RANK = {}


def _rank_helpers(loads: int = -1, idx: str = "int32_t"):
    """The helpers kernel with ep_ranks and ep_marks_ranked (the default tuning,
    Tuning.rank_loads `loads`, indices of C type `idx`), built once each."""
    if (loads, idx) not in _RANK:
        body = imp.seq(imp.Alloc("a", "index", ONE, ZERO),
                       imp.Alloc("b", "bits", imp.sort_bits_words(ONE), ZERO),
                       imp.Alloc("m", "byte", ONE, ZERO),
                       imp.Decl("p", "index", ZERO),
                       imp.ForSorted("v", "a", ZERO, ONE, "b", imp.SKIP, place="p", marks="m"))
        prog = SimpleNamespace(params=(), body=body, dims=(), refuse_above=(), error=None,
                               output=SimpleNamespace(mode="dense", axes=(),
                                                      arrays={"vals": "out_vals"}))
        src = c.render(prog, ep.semirings.get("real"), name="helpers", idx_type=idx,
                       tuning=tuning.DEFAULT.with_(rank_loads=loads))
        cdef = (CDEF + RANK_CDEF).replace("typedef int32_t idx_t", f"typedef {idx} idx_t")
        lib = build.load(src.c + RANK_WRAPPER, cdef, name="helpers_rank_test")
        _RANK[loads, idx] = SimpleNamespace(lib=lib.lib, ffi=lib.ffi, c_source=src.c)
    return _RANK[loads, idx]
