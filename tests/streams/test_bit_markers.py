"""Bit markers (streams.markers, Tuning.bit_markers): a marker every fill of
which stamps 1 (a level's only fibre, or keyed) keeps a bit per cell; its
probes give what the index marker's give (proofs_notes/marker.md)."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.plan import algorithms as algos
from etchpy.plan import plan as planning
from etchpy.testing import run_plan_imp
from etchpy.tuning import Tuning

pytestmark = pytest.mark.usefixtures("shared_cache")

o, c, i, n, t, j = ep.indices("o c i n t j")
O, F = ep.tensor("O", 2, "csr"), ep.tensor("F", 1, ep.Format(["compressed"]))
REAL = ep.semirings.get("real")
SET_BIT = "|= (uint64_t)1 <<"


def _filter_case(seed=1):
    """Σ_c O[o,c]·F[c]: a sparse filter over c probed in each row of O."""
    rng = np.random.default_rng(seed)
    o_ = sp.random_array((150, 700), density=0.02, format="csr", random_state=seed)
    keep = np.flatnonzero(rng.random(700) < 0.1)
    f = ep.Tensor.from_coords(keep[None, :], rng.random(len(keep)), (700,), "csf")
    return ep.sum(c, O[o, c] * F[c]), {"O": o_, "F": f}, o_.toarray() @ f.to_dense()


def test_a_filter_probed_in_every_row_is_one_bit_a_cell():
    """The C source with the switch on and off, and the bit marker's build run
    against numpy (tests/end_to_end/test_tpch_tables.py runs Q7's customer filter,
    a bit marker, in C against DuckDB's rows where duckdb is installed)."""
    e, inputs, want = _filter_case()
    on, off = (ep.compile(e, order=["o", "c"], tuning=Tuning(algorithm_choice=False,
                                                             bit_markers=b))
               for b in (True, False))           # a marker wherever one can be made
    assert SET_BIT in on.c_source and "uint64_t *c_mark" in on.c_source
    assert SET_BIT not in off.c_source and "ep_idx_t *c_mark" in off.c_source
    assert np.allclose(on(**inputs), want)


@pytest.mark.parametrize("bits", [True, False])
def test_bit_markers_on_the_checked_interpreter(bits):
    """The filter's marker (level 0) and a keyed one, forced, on the bounds-checked
    Imp interpreter, with the switch on and off, against numpy."""
    tuning = Tuning(bit_markers=bits)
    e, inputs, want = _filter_case(seed=2)
    plan = planning.make_plan(e, order=("o", "c"))
    got, *_ = run_plan_imp(e, inputs, REAL, plan, algorithms=algos.forced(plan, None, True),
                           tuning=tuning)
    assert np.allclose(got, want)
    rng = np.random.default_rng(5)
    rows, parents, dim = 60, 4, 30
    p = sp.csr_array((np.ones(rows), (np.arange(rows), rng.integers(0, parents, rows))),
                     shape=(rows, parents))
    coords = np.stack([np.repeat(np.arange(rows), 2), np.tile(np.arange(2), rows),
                       rng.integers(0, dim, 2 * rows)])
    lt = ep.Tensor.from_coords(coords, rng.random(2 * rows), (rows, 2, dim), "csf")
    s = sp.random_array((parents, dim), density=0.3, format="csr", random_state=4)
    P, L3, S = ep.tensor("P", 2, "csr"), ep.tensor("L", 3, "csf"), ep.tensor("S", 2, "csr")
    e = ep.sum((n, t, j), P[i, n] * L3[i, t, j] * S[n, j])
    plan = planning.make_plan(e, order=("i", "n", "t", "j"))
    got, *_ = run_plan_imp(e, {"P": p, "L": lt, "S": s}, REAL, plan,
                           algorithms=algos.forced(plan, None, algos.KEYED), tuning=tuning)
    assert np.allclose(got, np.einsum("in,itj,nj->i", p.toarray(), lt.to_dense(),
                                      s.toarray()))
