"""ep.graph on scipy matrices whose index arrays are not int32/int64 (rebound
since scipy built them): integers of another type give the graph's answer
(read as int64), anything else an InputError naming the array, through a
Graph and through the direct path; scipy's own check of the arrays
(has_canonical_format) took only int32 and int64 and raised its ValueError,
and float row pointers a TypeError (graph.adjacency._check_arrays)."""
import numpy as np
import pytest
import scipy.sparse as sp

from etchpy import graph
from etchpy.errors import InputError

D = np.array([[0, 2.0, 5.0, 0], [0, 0, 1.0, 0], [0, 0, 0, 0], [1.0, 0, 0, 0]])
WANT = {"bellman_ford": [0.0, 2.0, 3.0, np.inf], "bfs_levels": [0, 1, 1, -1],
        "connected_components": [0, 0, 0, 0]}


def run(algorithm, A):
    f = getattr(graph, algorithm)
    return f(A) if algorithm == "connected_components" else f(A, 0)


def matrix(array, dtype):
    m = sp.csr_array(D)
    setattr(m, array, getattr(m, array).astype(dtype))
    return m


@pytest.mark.parametrize("through", ["direct", "Graph"])
@pytest.mark.parametrize("algorithm", sorted(WANT))
@pytest.mark.parametrize("array", ["indices", "indptr"])
@pytest.mark.parametrize("dtype", [np.uint64, np.uint32, np.int16, np.uint8])
def test_integer_index_arrays_of_any_type(dtype, array, algorithm, through):
    m = matrix(array, dtype)
    got = run(algorithm, graph.Graph(m) if through == "Graph" else m)
    assert np.array_equal(got, WANT[algorithm])


@pytest.mark.parametrize("through", ["direct", "Graph"])
@pytest.mark.parametrize("array", ["indices", "indptr"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.bool_])
def test_index_arrays_that_are_not_integers(dtype, array, through):
    m = matrix(array, dtype)
    with pytest.raises(InputError, match=rf"A\.{array}"):
        run("bfs_levels", graph.Graph(m) if through == "Graph" else m)


def test_an_unsigned_index_beyond_int64_is_refused():
    m = matrix("indices", np.uint64)
    m.indices[0] = 2**63 + 1
    for A in (m, lambda: graph.Graph(m)):
        with pytest.raises(InputError, match=r"A\.indices"):
            run("bfs_levels", A() if callable(A) else A)
