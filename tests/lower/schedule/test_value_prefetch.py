"""Gathered values prefetched (lower.schedule.value_prefetch, Tuning.prefetch_values):
a walk summing vals[q]·x[crd[q]] also prefetches x[crd[q + d]] where the call's far
pick (imp.GatherPick with crd, C's ep_far_pick) finds the rows far and x large.
proofs_notes/gather_sums.md "Gathered values prefetched": the hint read stays in crd, the
prefetched address inside x, and the pick and the prefetch change no result."""
import re

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp
from etchpy.errors import InputError
from tuned import INTEL, INTEL_FACTS, on_interpreter

SPMV = "y[i] = A[i,j] * x[j]"
ON = INTEL.with_(prefetch_values=64,         # the default since session 43; the C an
                 prefetch_values_from=0)    # Intel host's facts shape, on every host
# x of any size large enough, and A too (the copy is made where size_switch's test holds)
SMALL = ON.with_(prefetch_min_bytes=0, run_min_entries=0)


def random_rows(rows=400, cols=3000, k=7, seed=3):
    rng = np.random.default_rng(seed)
    c = np.sort(np.stack([rng.choice(cols, k, replace=False) for _ in range(rows)]), axis=1)
    return sp.csr_array((rng.random(rows * k), c.ravel(), np.arange(0, rows * k + 1, k)),
                        shape=(rows, cols))


def stencil(g):
    one = sp.diags_array([-np.ones(g - 1), 2 * np.ones(g), -np.ones(g - 1)], offsets=[-1, 0, 1])
    return sp.csr_array(sp.kron(one, sp.eye_array(g)) + sp.kron(sp.eye_array(g), one))


def test_the_pick_and_the_prefetch_are_in_the_c_and_switch_off():
    def text(tuning):
        return ep.compile(SPMV, formats={"A": "csr"}, tuning=tuning).c_source
    on = text(ON)
    assert "ep_far_pick(A_pos1, A_crd1, A_dim0, A_dim1, 8, 131072)" in on
    assert "EP_PREFETCH(&x_vals[A_ahead" in on and "(j_q + 64)" in on
    # one more loop nest, not a second body: the scalar way at large sizes, its
    # long and short rows one loop (the lanes' ways and small sizes as they were)
    assert on.count("x_vals[A_ahead") == 1 and "if (A_far) {" in on
    assert on == text({**INTEL_FACTS, "prefetch_values_from": 0})   # the default, Intel's rule
    lanes = text(ON.with_(prefetch_values=0)).count("ep_gather_sum(acc")
    assert on.count("ep_gather_sum(acc") == lanes
    for off in (ON.with_(prefetch_values=0), ON.with_(prefetch=False), "noopt"):
        assert "A_far = ep_far_pick(" not in text(off) and "x_vals[A_ahead" not in text(off)


def test_far_rows_take_the_lanes_from_gather_from_far_entries():
    """The lanes pick reads the far pick declared before it (imp.GatherPick.far,
    Tuning.gather_from_far, session 54): far rows of one length take the lanes
    from 5 entries, near ones from gather_from's 6; 0 keeps gather_from; min/max
    lanes keep their own rule. Both ways give scipy's answer."""
    def text(**kw):
        intel = dict(gather_from=6, gather_from_far=5, gather_ragged_from=0)  # host_facts' Intel
        return ep.compile(SPMV, formats={"A": "csr"}, tuning=ON.with_(**{**intel, **kw})).c_source
    assert "A_far = ep_far_pick(" in text() and \
        "A_gather = ep_gather_pick(A_pos1, A_dim0, A_far ? 5 : 6, 0);" in text()
    assert "A_gather = ep_gather_pick(A_pos1, A_dim0, 6, 0);" in text(gather_from_far=0)
    assert "A_gather = ep_gather_pick(A_pos1, A_dim0, A_far ? 4 : 7, 0);" in text(
        gather_from_far=4, gather_from=7)
    minimum = ep.compile(SPMV, formats={"A": "csr"}, semiring="min_plus").c_source
    assert "A_far ?" not in minimum
    A, x = random_rows(rows=3000, cols=20000, k=5), np.random.default_rng(1).random(20000)
    for kw in ({}, {"gather_from_far": 0}):
        kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=SMALL.with_(**kw))
        np.testing.assert_allclose(kern(A=A, x=x), A @ x, rtol=1e-12)


GUARD = re.compile(r"\(uint64_t\)\w*_end\w* < \(uint64_t\)\w*_q")   # a segment's own guard


@pytest.mark.parametrize("options", [{}, {"semiring": "integer"}, {"threads": 2},
                                     {"tuning": {"gather_sums": False}}])
def test_each_way_of_the_far_pick_keeps_its_rows_checked_ahead(options):
    """A row loop checked a block ahead (lower.schedule.segment_checks) with the
    knob off is checked ahead in both ways of the far pick with it on: the copy
    is one more full loop (the pick assigns nothing), not a loop whose segments
    fall back to a guard each (proofs_notes/gather_sums.md)."""
    def kernel(values):
        o = {"formats": {"A": "csr"}, **options}
        o["tuning"] = {**INTEL_FACTS, **o.get("tuning", {}), "prefetch_values": values,
                       "check_block": 1024}
        c = ep.compile(SPMV, **o).source("int32_t").c
        c = c[min(c.find(f) % len(c) for f in ("static EP_NOINLINE", "int etchpy_kernel(")):]
        return c, len(re.findall(r"\bint \w+_bad\w* = ", c))     # a block's scan flag each
    (off, blocks), (on, more) = kernel(0), kernel(64)
    assert re.search(r"if \(\w+_far\) \{", on) and "_ahead" in on and "_far)" not in off
    assert blocks >= 1 and more == blocks + 1, (blocks, more)
    assert not GUARD.search(off) and not GUARD.search(on)


@pytest.mark.parametrize("case", ["random rows", "stencil", "rows of one", "empty"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_prefetching_kernels_agree_with_scipy(case, dtype):
    A = {"random rows": random_rows(), "stencil": stencil(20),
         "rows of one": sp.csr_array(sp.eye_array(500) * 3.0),
         "empty": sp.csr_array((40, 3000))}[case].astype(dtype)
    rng = np.random.default_rng(1)
    x = (rng.random(A.shape[1]) + (1j if dtype == np.complex128 else 0) * rng.random(A.shape[1]))
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=SMALL,
                      semiring="complex" if dtype == np.complex128 else None)
    np.testing.assert_allclose(kern(A=A, x=x.astype(dtype)), A @ x, rtol=1e-12)
    T = ep.Tensor.from_scipy(A, "csr")
    np.testing.assert_allclose(kern(A=T, x=x.astype(dtype)), A @ x, rtol=1e-12)


@pytest.mark.parametrize("bad", [-1, 3000, 2**31 - 1])
def test_a_bad_coordinate_ahead_or_here_is_refused_not_read(bad):
    """The checked build reads crd[q + 64] as a hint before it checks it: a bad
    coordinate there is prefetched at x[0] and refused where the walk reads it."""
    A = random_rows()
    A.indices[A.indptr[100] + 2] = bad
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=SMALL)
    with pytest.raises(InputError, match="A"):
        kern(A=A, x=np.ones(A.shape[1]))


def test_a_decreasing_indptr_is_refused_on_the_far_way():
    """The far way's row loop checks its blocks of indptr ahead as the other
    way does (random rows: the pick takes the far way)."""
    A = random_rows().astype(np.int64)
    x = np.arange(A.shape[1], dtype=A.dtype)
    kern = ep.compile(SPMV, formats={"A": "csr"}, semiring="integer", tuning=SMALL)
    np.testing.assert_array_equal(kern(A=A, x=x), A @ x)
    A.indptr[200] = A.indptr[201] + 1
    with pytest.raises(InputError, match="A"):
        kern(A=A, x=x)


def test_the_interpreter_runs_the_prefetching_walk_in_bounds():
    """The interpreter sets every pick (the prefetching walks run) and checks every
    read's bounds, hints included."""
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    M = random_rows(rows=50, cols=300)
    v = np.linspace(-1, 1, 300)
    final, prog, _ = on_interpreter(ep.sum(j, A[i, j] * x[j]), ep.semirings.real, None,
                                    {"A": ep.Tensor.from_scipy(M, "csr"), "x": v},
                                    tuning=SMALL.with_(gather_sums=False))   # no lanes way
    assert any(isinstance(s, imp.GatherPick) and s.crd is not None
               for s in imp.statements(prog.body))
    np.testing.assert_allclose(final["out"], M @ v, rtol=1e-12)
