"""ep.graph on scipy matrices that scipy converts to csr (csc, coo, dia, bsr) whose
arrays were written or rebound after scipy built them: an InputError naming A,
through a Graph and the direct path (runtime.scipy_arrays.checked_scipy before
scipy's conversion, which trusts them: a dia offset beyond int32 corrupted the
heap, an index out of range was read or written past an array)."""
import numpy as np
import pytest
import scipy.sparse as sp

from etchpy import graph
from etchpy.errors import InputError


def written(layout):
    m = {"csc": sp.csc_array, "coo": sp.coo_array, "dia": sp.dia_array,
         "bsr": lambda a: sp.bsr_array(a, blocksize=(2, 2))}[layout](np.eye(6) + np.eye(6, k=1))
    match layout:
        case "csc" | "bsr":
            m.indices[0] = 99
        case "coo":
            m.coords = (m.coords[0], m.coords[1] + 10)
        case "dia":
            m.offsets = np.array([0, 2**40])
    return m


ALGORITHMS = {"bfs": lambda A: graph.bfs_levels(A, 0), "pagerank": graph.pagerank,
              "bellman_ford": lambda A: graph.bellman_ford(A, 0),
              "components": graph.connected_components}


@pytest.mark.parametrize("through", ["direct", "Graph"])
@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
@pytest.mark.parametrize("layout", ["csc", "coo", "bsr"])
def test_written_arrays_are_refused_naming_a(layout, algorithm, through):
    m = written(layout)
    with pytest.raises(InputError, match=r"\bA\b"):
        ALGORITHMS[algorithm](graph.Graph(m) if through == "Graph" else m)


@pytest.mark.parametrize("through", ["direct", "Graph"])
def test_a_dia_offset_beyond_int32_holds_no_cell(through):
    m = written("dia")              # the diagonal at 2**40 holds nothing: the identity
    levels = graph.bfs_levels(graph.Graph(m) if through == "Graph" else m, 0)
    assert levels.tolist() == [0, -1, -1, -1, -1, -1]
