"""A located filter's test and the walked relation's row test at one level are
one test of each entry (streams.hoist.guard_state, Tuning.hoist_row_tests):
TPC-H Q12's shape, Σ_{n,m,c} Modes[m]·(A[o,n,m] < B[o,n,m] ∧ B ≥ t)·O[o,c] in
the loop order o, n, m, c (the mode a sparse filter probed through a marker at
each line, the order's attributes below the line), against a pure-Python
relational reference, on the level kinds that can store the line, compiled with
the switch on and off and on the streams backend, with values written in place
between calls."""
import collections

import numpy as np
from hypothesis import given, settings, strategies as st

import etchpy as ep

o, n, m, c = ep.indices("o n m c")
ORDER = ["o", "n", "m", "c"]
KINDS = (["dense", "compressed", "compressed"], ["compressed", "compressed", "compressed"],
         ["dense", "compressed", "singleton"])
# the planner's choice of a marker for Modes, fixed (else made from the sizes measured
# in earlier calls of the same expression)
ON = ep.Tuning(algorithm_choice=False)
OFF = ep.Tuning(algorithm_choice=False, hoist_row_tests=False)


def _expr():
    A, B = ep.tensor("A", 3, "csf"), ep.tensor("B", 3, "csf")
    Modes, O = ep.tensor("Modes", 1, "csf"), ep.tensor("O", 2, "csr")
    late = (A[o, n, m] < B[o, n, m]) & (B[o, n, m] >= "t")
    return ep.sum((n, m, c), Modes[m] * late * O[o, c])


def _reference(lines, a, b, modes, oc, t):
    got = collections.Counter()
    for (x, _, mode), va, vb in zip(lines, a, b):
        if mode in modes and va < vb and vb >= t:
            for cust, w in oc.get(x, {}).items():
                got[x] += w
    return got


line = st.tuples(st.integers(0, 4), st.integers(0, 3), st.integers(0, 3))


def _problem(lines, seed, kinds, modes):
    """The relation L of the lines (values a, b drawn from seed), the orders'
    customers O (oc: its entries by order), the mode filter Modes, the rng."""
    rng = np.random.default_rng(seed)
    cols = {k: np.array([r[j] for r in lines]) for j, k in enumerate("onm")}
    cols["a"], cols["b"] = (rng.integers(0, 5, len(lines)).astype(float) for _ in "ab")
    L = ep.relation(cols, ["o", "n", "m"], values=["a", "b"], levels=kinds,
                    coding={k: ep.Keys(np.arange(5), name=k) for k in "onm"}, name="L")
    keep = sorted({(x, int(rng.integers(0, 3))) for x in range(5) if rng.random() < 0.8})
    oc = {x: {y: float(rng.integers(1, 3))} for x, y in keep}
    O = ep.Tensor.from_coords(np.array(keep).T.reshape(2, -1),
                              np.array([oc[x][y] for x, y in keep]), (5, 3), "csr")
    sel = sorted(modes)
    Modes = ep.Tensor.from_coords(np.array([sel]).reshape(1, -1), np.ones(len(sel)), (5,),
                                  "csf")
    return rng, L, O, Modes, oc


def _agree(lines, seed, kinds, modes, t, order, off_tuning, streams: bool):
    """Compiled with the switch on and off (and on the streams backend), equal to
    the reference, twice, the values b written in place between the calls."""
    rng, L, O, Modes, oc = _problem(lines, seed, kinds, modes)
    on = ep.compile(_expr(), optimize=False, order=order, tuning=ON)
    off = ep.compile(_expr(), optimize=False, order=order, tuning=off_tuning)
    assert "guarded by the located and row tests" in on.c_source
    assert "guarded by the located and row tests" not in off.c_source
    inputs = {"A": L["a"].tensor, "B": L["b"].tensor, "Modes": Modes, "O": O, "t": t}
    for _ in range(2):
        want = _reference(lines, L["a"].tensor.vals, L["b"].tensor.vals, modes, oc, t)
        want = np.array([want.get(x, 0.0) for x in range(5)])
        np.testing.assert_array_equal(on(**inputs), want)
        np.testing.assert_array_equal(off(**inputs), want)
        if streams:
            got = ep.evaluate(_expr(), **inputs, backend="streams", optimize=False,
                              order=order)
            np.testing.assert_array_equal(got, want)
        L["b"].tensor.vals[:] = rng.integers(0, 5, len(lines))     # written in place


@settings(max_examples=20, deadline=None)
@given(lines=st.lists(line, min_size=1, max_size=14, unique_by=lambda r: r[:2]),
       seed=st.integers(0, 2**16), kinds=st.sampled_from(KINDS),
       modes=st.sets(st.integers(0, 3), max_size=3), t=st.integers(0, 4))
def test_the_joined_test_matches_the_reference(lines, seed, kinds, modes, t):
    _agree(sorted(lines), seed, kinds, modes, t, ORDER, OFF, streams=True)


LEAF_ORDER = ["o", "c", "n", "m"]      # the line's mode and dates at the last level
LEAF_OFF = ep.Tuning(algorithm_choice=False, guard_leaves=False)


@settings(max_examples=5, deadline=None)
@given(lines=st.lists(line, min_size=1, max_size=14, unique_by=lambda r: r[:2]),
       seed=st.integers(0, 2**16), kinds=st.sampled_from(KINDS),
       modes=st.sets(st.integers(0, 3), max_size=3), t=st.integers(0, 4))
def test_at_the_last_level_the_joined_test_guards_the_update(lines, seed, kinds, modes, t):
    """Tuning.guard_leaves: the same sum in the loop order o, c, n, m (the probe
    and the row test at the leaf) tests each line once and adds only where the
    test holds; equal to the reference with the switch on and off, values
    written in place between calls."""
    _agree(sorted(lines), seed, kinds, modes, t, LEAF_ORDER, LEAF_OFF, streams=False)
