"""Kept arrays (Imp's Alloc kept): a dense workspace's arrays, which its flush
leaves holding their fill, are kept by the library between calls
(ep_take_kept / ep_give_kept of kernel.c.j2), so a call costs O(touched), not a
fill of the workspace. The helpers called directly; kernels with a kept
workspace called again and again (fills 0 and +inf, sizes up and down) against
the same kernel with tuning.kept_workspaces off; and the interpreter's check of
the promise."""
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp, tuning
from etchpy.c import render as c
from etchpy.imp import ONE, Const
from etchpy.lower import run_program
from etchpy.runtime import build

WRAPPERS = """
void *take_for_test(size_t n, double fill) { return ep_take_kept(n, sizeof(double),
    ep_fill_bits(&fill, sizeof(double))); }
void give_for_test(void *p, size_t n, double fill) { ep_give_kept(p, n, sizeof(double),
    ep_fill_bits(&fill, sizeof(double))); }
void *calloc_for_test(size_t n) { return ep_calloc(n, 1); }
void *malloc_for_test(size_t n) { return ep_malloc(n); }
void release_for_test(void *p) { ep_release(p); }
"""
CDEF = """
void *take_for_test(size_t n, double fill);
void give_for_test(void *p, size_t n, double fill);
void *calloc_for_test(size_t n);
void *malloc_for_test(size_t n);
void release_for_test(void *p);
"""


def _program(body):
    return SimpleNamespace(params=(), body=body, dims=(), refuse_above=(), error=None,
                           output=SimpleNamespace(mode="dense", axes=(), arrays={"vals": "v"}))


def kept_helpers(t: tuning.Tuning):
    """The kept-array helpers under `t` (rendered for a program with a kept
    array), with exported wrappers."""
    prog = _program(imp.seq(imp.Alloc("a", "value", ONE, Const(0.0, "value"), kept=True)))
    src = c.render(prog, ep.semirings.get("real"), name="kept", idx_type="int64_t", tuning=t)
    return build.load(src.c + WRAPPERS, CDEF, name=f"kept_test_{t.map_bytes}")


def spgemm():
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    return ep.sum(j, A[i, j] * B[j, k])


def test_a_given_back_block_is_taken_again_only_for_its_fill_and_about_its_size():
    lib = kept_helpers(tuning.DEFAULT.with_(map_bytes=1 << 16))
    f, null = lib.lib, lib.ffi.NULL
    n = 1 << 16                                   # doubles: 512 KiB, a mapped block
    assert f.take_for_test(n, 0.0) == null        # nothing kept yet
    p = f.calloc_for_test(8 * n)
    f.give_for_test(p, n, 0.0)
    assert f.take_for_test(n, np.inf) == null     # another fill
    assert f.take_for_test(n // 4, 0.0) == null   # far smaller: not this block
    assert f.take_for_test(2 * n, 0.0) == null    # larger: not this block
    q = f.take_for_test(n - 10, 0.0)
    assert q == p
    assert f.take_for_test(n, 0.0) == null        # taken out of the pool
    small = f.calloc_for_test(64)                 # from malloc: released, never kept
    f.give_for_test(small, 8, 0.0)
    assert f.take_for_test(8, 0.0) == null
    f.give_for_test(q, n - 10, 0.0)
    f.give_for_test(null, 0, 0.0)


def test_without_mapping_nothing_is_kept():
    lib = kept_helpers(tuning.DEFAULT.with_(map_bytes=0))
    f, null = lib.lib, lib.ffi.NULL
    p = f.calloc_for_test(1 << 20)
    f.give_for_test(p, 1 << 17, 0.0)
    assert f.take_for_test(1 << 17, 0.0) == null


@pytest.mark.parametrize("fill", [0.0, np.inf, -2.5])
def test_a_kept_block_holds_the_fill_over_every_taken_element(fill):
    """Only the array given back holds the fill, not the rest of its block: a
    block reused by a small ep_calloc after an array left garbage in it, given
    back with its few elements, then taken for many more, holds the fill in all
    of them (the bytes its last array did not cover are filled on taking)."""
    lib = kept_helpers(tuning.DEFAULT.with_(map_bytes=1))       # every array mapped
    f, ffi = lib.lib, lib.ffi
    g = f.malloc_for_test(3000)                  # a 4 KiB block, garbage written over it
    ffi.memmove(g, b"\xab" * 3000, 3000)
    f.release_for_test(g)                        # a spare slot
    z = ffi.cast("double *", f.malloc_for_test(24))   # reuses it: 3 elements
    assert z == ffi.cast("double *", g)
    z[0] = z[1] = z[2] = fill
    f.give_for_test(z, 3, fill)
    for n in (3, 300, 5, 370):                   # up and down within the block
        t = f.take_for_test(n, fill)
        assert t == z
        got = np.frombuffer(ffi.buffer(t, 8 * n), dtype=np.float64)
        assert (got == fill).all(), (n, np.flatnonzero(got != fill)[:5])
        f.give_for_test(t, n, fill)


def _pair(seed, n, per_row):
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), per_row)
    make = lambda: sp.csr_array((rng.random(n * per_row) + 0.5,    # noqa: E731
                                 (rows, rng.integers(0, n, n * per_row))), shape=(n, n))
    return make(), make()


@pytest.mark.parametrize("semiring", ["real", "min_plus"])
def test_a_kept_workspace_gives_the_answers_of_a_fresh_one_call_after_call(semiring):
    """SpGEMM with a dense workspace (fill 0, or +inf in min-plus), called on
    sizes up and down so that kept blocks are taken, passed over and replaced:
    each answer equals the same kernel's with kept_workspaces off."""
    kept = ep.Kernel(spgemm(), output="csr", semiring=semiring)
    fresh = ep.Kernel(spgemm(), output="csr", semiring=semiring,
                      tuning=tuning.DEFAULT.with_(kept_workspaces=False))
    assert "ep_take_kept((size_t)" in kept.c_source
    assert "ep_take_kept((size_t)" not in fresh.c_source
    for seed, (n, per_row) in enumerate([(20000, 2), (20000, 3), (300, 4), (40000, 1),
                                         (20000, 2), (9000, 2)]):
        A, B = _pair(seed, n, per_row)
        got, want = _entries(kept(A=A, B=B)), _entries(fresh(A=A, B=B))
        assert got[0].shape == want[0].shape and (got[0] == want[0]).all()
        assert np.allclose(got[1], want[1])


def _entries(r):
    """(coordinates, values) of a csr result, a scipy array or an ep.Tensor."""
    if isinstance(r, ep.Tensor):
        return r.to_coords()
    r = sp.coo_array(r)
    return np.stack([r.row, r.col]), r.data


def test_the_interpreter_refuses_a_kept_array_left_dirty():
    sr = ep.semirings.get("real")
    body = imp.seq(imp.Alloc("w", "value", Const(4), Const(0.0, "value"), kept=True),
                   imp.Store("w", Const(2), Const(1.5, "value")))
    with pytest.raises(imp.ImpRuntimeError,
                       match=r"kept array w ends with 1 cells other than its fill 0.0 \(first at 2\)"):
        run_program(_program(body), sr, {})
    clean = imp.seq(body, imp.Store("w", Const(2), Const(0.0, "value")))
    assert run_program(_program(clean), sr, {})["w"].tolist() == [0.0] * 4
