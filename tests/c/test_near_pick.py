"""ep_near_pick (kernel.c.j2), which decides whether a checked SpMV's long rows
are summed in chains (their gathers share cache lines: a mesh's rows) or keep
the SIMD lanes (random rows), called directly: 1 when more than half of the
sampled rows (more than 1/share: 2 there, 4 for lower/schedule/mesh_runs.py's
mesh test) have at least half of their first 16 steps in [0, near]."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import pipeline
from tests.c.spmv_source import with_wrapper

WRAPPER = """
int64_t near_for_test(const int32_t *pos, const int32_t *crd, int64_t n, int64_t near,
                      int64_t share)
{ return ep_near_pick(pos, crd, n, near, share); }
"""
CDEF = ("int64_t near_for_test(const int32_t *pos, const int32_t *crd, int64_t n, int64_t near,"
        " int64_t share);")


@pytest.fixture(scope="module")
def near():
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    tuning = ep.Tuning(walk_chain_count=2, check_first_from=20, walk_chains=True)
    src = pipeline.render_c(ep.compile(ep.sum(j, A[i, j] * x[j]), tuning=tuning).compiled,
                            "int32_t").c
    if "ep_near_pick" not in src:
        pytest.skip("no near pick in this host's C (no SIMD gathers)")
    lib = with_wrapper(WRAPPER, CDEF, "near_pick_test", src)

    def call(steps_of_rows, share=2):
        """The pick over rows whose coordinates step by the given lists."""
        rows = [np.cumsum([3] + list(s)) for s in steps_of_rows]
        pos = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int32)
        crd = np.concatenate(rows).astype(np.int32)
        p = lambda a: lib.ffi.cast("int32_t *", a.ctypes.data)      # noqa: E731
        return lib.lib.near_for_test(p(pos), p(crd), len(rows), 8, share)
    return call


def rows_with(close: int, n: int = 64):
    """n rows of 17 entries whose first `close` of 16 steps are 1, the rest 40."""
    return [[1] * close + [40] * (16 - close)] * n


def test_half_the_steps_near_is_near_a_quarter_is_not(near):
    assert near(rows_with(16)) == 1                      # a mesh's consecutive columns
    assert near(rows_with(8)) == 1                       # half
    assert near(rows_with(7)) == 0
    assert near(rows_with(4)) == 0                       # a k-NN graph's rows (a quarter)
    assert near(rows_with(0)) == 0


def test_rows_too_short_to_step_are_not_counted(near):
    """Rows of one entry are skipped: the pick is the rows with steps'."""
    rows = [[]] * 200 + rows_with(16, 64)
    assert near(rows) == 1
    assert near([[]] * 64) == 0


def test_share_four_asks_a_quarter_of_the_rows(near):
    """mesh_runs' test (share 4): more than a quarter of the sampled rows near, as
    scikit-fem's P1 triangles (13 of 32) are where the majority rule says no."""
    def mix(k):                # rows 1/8, 3/8, 5/8, 7/8 of the way sampled: k of each 8 near
        return [[1] * 16 if i % 8 < k else [40] * 16 for i in range(64)]
    assert near(mix(3), share=4) == 1 and near(mix(3)) == 0
    assert near(mix(2), share=4) == 0
    assert near(rows_with(0), share=4) == 0
