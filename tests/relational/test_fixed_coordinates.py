"""An index fixed by an equality in a one-walk sum (expr.sums.pin,
lower.schedule.fixed_coordinates; proofs_notes/fixed_coordinates.md): terms
`col · ep.eq(k, c) · K[k]` over one relation, k an output index (each term
written at k = c) or summed (Σ_k [k = c]·f(k) = f(c)), against a pure-Python
reference over the stored entries, in three semirings, on every level kind,
with constants inside and outside k's range (a term out of range is empty),
two terms fixing one coordinate, and k named as the drawn name; the same
answers with the pass off (`Tuning(fixed_coordinates=False)`: the loop over k
testing k = c) and with no one walk (`one_walk=False`: ep.eq as a range)."""
import collections

import numpy as np
import pytest
from hypothesis import Phase, given, settings, strategies as st

import etchpy as ep
from tests.relational.test_sums_one_walk import load, stored

ADD = {"real": np.add, "min_plus": np.minimum, "max_plus": np.maximum}
MUL = {"real": np.multiply, "min_plus": np.add, "max_plus": np.add}
ZERO = {"real": 0.0, "min_plus": np.inf, "max_plus": -np.inf}
KINDS = (["dense", "compressed"], ["compressed", "compressed"], ["compressed", "dense"],
         ["dense", "dense"])
DIM = 4
row = st.tuples(st.integers(0, 4), st.integers(0, 3), *[st.integers(-2, 4)] * 3)
OFF = ep.Tuning(fixed_coordinates=False)


def expression(rel, name: str, pins: list, summed: bool):
    """Σ_n (Σ_k when summed) of Σ_t col_t · [k = pins[t]] · K[k], col_t cycling
    a, b and [c > 0]·a."""
    o, n, k = ep.indices(f"o n {name}")
    A, B, C = (rel[c].var(c.upper())[o, n] for c in "abc")
    K = ep.tensor("K", 1)[k]
    cols = (A, B, (C > 0.0) * A)
    body = None
    for t, c in enumerate(pins):
        term = cols[t % 3] * ep.eq(k, c) * K
        body = term if body is None else body + term
    return ep.sum((n, k) if summed else (n,), body)


def inputs(rel, pins, K) -> dict:
    """The columns the terms read (a, then b, then c) and K."""
    names = "abc"[:min(len(pins), 3)]
    return {c.upper(): rel[c].tensor for c in names} | {"K": np.asarray(K, dtype=float)}


def reference(entries, pins, summed, K, sr) -> np.ndarray:
    add, mul = ADD[sr], MUL[sr]
    out = collections.defaultdict(lambda: ZERO[sr])
    for (x, _), (a, b, c) in entries.items():
        for t, pin in enumerate(pins):
            if not 0 <= pin < DIM or t % 3 == 2 and not c > 0:
                continue
            at = (x,) if summed else (x, pin)
            out[at] = add(out[at], mul((a, b, a)[t % 3], K[pin]))
    got = np.full((5,) if summed else (5, DIM), ZERO[sr])
    for at, v in out.items():
        got[at] = v
    return got


DRAWN = dict(rows=st.lists(row, min_size=1, max_size=10, unique_by=lambda r: r[:2]),
             pins=st.lists(st.integers(-2, DIM + 1), min_size=1, max_size=4),
             sr=st.sampled_from(sorted(ADD)), summed=st.booleans(),
             name=st.sampled_from(["k", "pos", "b2", "out"]),
             K=st.lists(st.sampled_from([1.0, 2.0, 0.5]), min_size=DIM, max_size=DIM))
QUICK = settings(max_examples=3, deadline=None, phases=(Phase.explicit, Phase.generate))


def check(kinds, rows, pins, sr, summed, name, K, tunings):
    rel = load(rows, kinds)
    e = expression(rel, name, pins, summed)
    want = reference(stored(rows, kinds), pins, summed, K, sr)
    for tuning in tunings:
        got = ep.compile(e, semiring=sr, tuning=tuning)(**inputs(rel, pins, K))
        np.testing.assert_allclose(got, want, err_msg=f"{tuning}")


@QUICK
@given(kinds=st.sampled_from(KINDS), **DRAWN)
def test_terms_fixing_an_index_match_the_reference(kinds, rows, pins, sr, summed, name, K):
    check(kinds, rows, pins, sr, summed, name, K, (None, OFF))


@pytest.mark.slow
@pytest.mark.parametrize("kinds", KINDS, ids=lambda x: "/".join(x))
@settings(max_examples=8, deadline=None, phases=(Phase.explicit, Phase.generate))
@given(**DRAWN)
def test_every_kind_and_the_general_route_match_the_reference(kinds, rows, pins, sr, summed,
                                                              name, K):
    check(kinds, rows, pins, sr, summed, name, K, (None, OFF, ep.Tuning(one_walk=False)))


def loops_over(kern, name: str) -> int:
    """The loops over index `name` in the C of the kernel the last call ran."""
    return (kern._walked or kern).c_source.count(f"while ({name}_c < ")


def test_two_terms_at_one_coordinate_add_and_the_loop_over_k_is_gone(summed=False):
    rows = [(0, 0, 1.0, 2.0, 3.0), (0, 2, 4.0, 5.0, -1.0), (3, 1, 7.0, 8.0, 9.0)]
    rel = load(rows, ["dense", "compressed"])
    pins = [1, 1, 3, 9]
    e = expression(rel, "k", pins, summed)
    args = inputs(rel, pins, np.ones(DIM))
    want = reference(stored(rows, ["dense", "compressed"]), pins, summed, np.ones(DIM), "real")
    on, off = ep.compile(e), ep.compile(e, tuning=OFF)
    np.testing.assert_allclose(on(**args), want)
    np.testing.assert_allclose(off(**args), want)
    assert loops_over(on, "k") == 0 < loops_over(off, "k")
    # a at 1, b at 1, [c > 0]·a at 3, 9 out of range
    assert want[0, 1] == 1.0 + 2.0 + 4.0 + 5.0 and want[0, 3] == 1.0
    for tuning in (ep.Tuning(one_walk=False),):
        np.testing.assert_allclose(ep.compile(e, tuning=tuning)(**args), want)
