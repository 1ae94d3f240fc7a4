"""BFS levels with a scipy matrix under both settings of Tuning.bfs_check_first
(every index checked in a flat pass before the walk, which then reads them
untested; or each index tested as the walk reads it and the rows not reached
after), a Graph's indices read in that pass or not (Tuning.bfs_warm_bytes),
and the walk's levels int32 or int64 (Tuning.bfs_narrow_levels):
the levels of csgraph on random and pixel-like graphs, whether the
source reaches most vertices or few; a bad index, in a row reached or not,
gives an InputError naming it; arrays written in place between calls are read
again, and kept int32 levels an earlier call left are never read."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as cg

import etchpy as ep
from etchpy import graph
from etchpy.runtime.scratch import SCRATCH

pytestmark = pytest.mark.usefixtures("shared_cache")

SETTINGS = [{}, {"bfs_check_first": False}, {"bfs_warm_bytes": 0, "bfs_narrow_levels": False},
            {"bfs_narrow_levels": True}, {"bfs_check_first": False, "bfs_narrow_levels": True}]
IDS = ["first", "as read", "cold wide", "narrow", "as read narrow"]


def reference(A, s):
    lv = cg.shortest_path(A, unweighted=True, indices=s)
    return np.where(np.isinf(lv), -1, lv).astype(np.int64)


def pixel_graph(side, most, seed):
    """4-neighbour pixels of a random blocky image joined where their grey
    levels differ by at most `most`: components of every size."""
    rng = np.random.default_rng(seed)
    img = np.kron(rng.integers(0, 40, (side // 4, side // 4)), np.ones((4, 4), int))
    img += rng.integers(0, 3, img.shape)
    v = np.arange(img.size).reshape(img.shape)
    r, c = [], []
    for a, b, ia, ib in [(v[:, :-1], v[:, 1:], img[:, :-1], img[:, 1:]),
                         (v[:-1, :], v[1:, :], img[:-1, :], img[1:, :])]:
        keep = np.abs(ia - ib) <= most
        r.append(a[keep])
        c.append(b[keep])
    r, c = np.concatenate(r), np.concatenate(c)
    return sp.csr_array((np.ones(2 * len(r)), (np.r_[r, c], np.r_[c, r])),
                        shape=(img.size,) * 2)


def graphs():
    rng = np.random.default_rng(5)
    for seed in (0, 1):
        n = 300
        dense = rng.random((n, n)) < (0.004 if seed else 0.02)     # few reached / most
        yield f"random {seed}", sp.csr_array(dense.astype(float))
    for most in (0, 3, 40):
        yield f"pixels {most}", pixel_graph(48, most, most)


@pytest.mark.parametrize("tuning", SETTINGS, ids=IDS)
def test_levels_are_csgraphs(tuning):
    for name, A in graphs():
        G = graph.Graph(A)
        _, label = cg.connected_components(A, directed=False)
        sizes = np.bincount(label)
        for s in (0, int(np.argmax(label == np.argmax(sizes))),
                  int(np.argmax(label == np.argmin(sizes)))):
            want = reference(A, s)
            assert np.array_equal(graph.bfs_levels(A, s, tuning=tuning), want), (name, s)
            assert np.array_equal(graph.bfs_levels(G, s, tuning=tuning), want), (name, s)


@pytest.mark.parametrize("tuning", SETTINGS, ids=IDS)
def test_a_bad_index_is_named_wherever_it_is(tuning):
    A = pixel_graph(32, 3, 7)
    s = int(A.indices[0])
    reached = np.flatnonzero(graph.bfs_levels(A, s) >= 0)
    rows = [int(reached[-1]), int(np.flatnonzero(graph.bfs_levels(A, s) < 0)[-1])]
    for row, bad in [(rows[0], A.shape[0]), (rows[1], -1), (rows[1], 10**9)]:
        M = A.copy()
        e = int(M.indptr[row])
        M.indices[e] = bad
        with pytest.raises(ep.InputError, match=rf"A\.indices\[{e}\] is not a vertex"):
            graph.bfs_levels(M, s, tuning=tuning)
    wide = A.copy()
    wide.indptr, wide.indices = wide.indptr.astype(np.int64), wide.indices.astype(np.int64)
    wide.indices[5] = 2**40
    with pytest.raises(ep.InputError, match=r"A\.indices\[5\] is not a vertex"):
        graph.bfs_levels(wide, s, tuning=tuning)


@pytest.mark.parametrize("tuning", SETTINGS, ids=IDS)
def test_arrays_written_in_place_between_calls(tuning):
    A = pixel_graph(32, 3, 8)
    s = int(A.indices[0])
    assert np.array_equal(graph.bfs_levels(A, s, tuning=tuning), reference(A, s))
    far = int(np.flatnonzero(graph.bfs_levels(A, s) < 0)[0])
    A.indices[A.indptr[s]] = far                  # a new edge from the source
    want = reference(sp.csr_array(A), s)
    assert want[far] == 1
    assert np.array_equal(graph.bfs_levels(A, s, tuning=tuning), want)
    A.indices[-1] = A.shape[0]                    # out of range now
    with pytest.raises(ep.InputError, match=rf"A\.indices\[{A.nnz - 1}\]"):
        graph.bfs_levels(A, s, tuning=tuning)


def test_kept_levels_left_by_another_call_are_not_read():
    A = pixel_graph(32, 3, 9)
    n, s = A.shape[0], int(A.indices[0])
    for junk in (0, 7, -1):         # levels an earlier call could leave in a kept int32 array
        SCRATCH.clear()
        SCRATCH.give(np.full(n + 3, junk, dtype=np.int32))
        SCRATCH.give(np.full(n, junk, dtype=np.int32))
        assert np.array_equal(graph.bfs_levels(A, s), reference(A, s))
        assert np.array_equal(graph.bfs_levels(graph.Graph(A), s), reference(A, s))
    SCRATCH.clear()
