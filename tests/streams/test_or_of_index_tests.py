"""An OR of ANDs of index tests over two indices far apart in the loop order (Q7's
nation pair, `(n1 = a AND n2 = b) OR (n1 = b AND n2 = a)`): its lowering reads a
located operand's value once per level (streams.hoist.once) and keeps a union's
index in a variable (streams.kept_index, Tuning.keep_union_index), so that the
compile grows with the levels, not with their combinations; results equal the
dense reference with the switch on and off, on the stream backend (its
invariants checked) and in C. proofs_notes/kept_index.md."""
import cProfile
import pstats

import numpy as np
import pytest

import etchpy as ep

c, n2, x, n1 = ep.indices("c n2 x n1")
PAIR = (ep.eq(n1, "a") & ep.eq(n2, "b")) | (ep.eq(n1, "b") & ep.eq(n2, "a"))
C, T, U = (ep.tensor(n, 2, "dcsr") for n in "CTU")
EXPR = ep.sum((n2, x, n1), C[c, n2] * T[n2, x] * U[x, n1] * PAIR)
ORDER = [c, n2, x, n1]


def _chain(depth):
    """PAIR over a chain n1 - x0 - ... - n2, walked from n1 to n2."""
    ix = ep.indices("m1 m2 " + " ".join(f"y{k}" for k in range(depth)))
    m1, m2, ys = ix[0], ix[1], ix[2:]
    chain = [m1, *ys, m2]
    body = ep.tensor("T0", 2, "dcsr")[chain[0], chain[1]]
    for k in range(1, len(chain) - 1):
        body = body * ep.tensor(f"T{k}", 2, "dcsr")[chain[k], chain[k + 1]]
    pair = (ep.eq(m1, "a") & ep.eq(m2, "b")) | (ep.eq(m1, "b") & ep.eq(m2, "a"))
    return ep.sum(tuple(ys), body * pair), [m1, *ys, m2]


def test_a_located_value_is_built_once_per_level():
    # before: each level read its located operand's value afresh for the product's
    # value and again for its guard, and so did every level below (809 products of
    # a walked and a located operand for depth 5; 239 now), counted by cProfile
    e, order = _chain(5)
    prof = cProfile.Profile()
    prof.runcall(ep.compile, e, order=order, out_indices=[order[0], order[-1]],
                 tuning={"hoist_probes": True}, name="chain_once")
    calls = [v[1] for (f, _, fn), v in pstats.Stats(prof).stats.items()
             if fn == "iterate_locate" and f.endswith("combinators.py")]
    assert len(calls) == 1 and 0 < calls[0] < 400


def _inputs(rng, n=6):
    dense = {k: (rng.random((n, n)) < 0.5) * rng.integers(1, 5, (n, n)).astype(float)
             for k in "CTU"}
    tensors = {k: ep.Tensor.from_dense(v, "dcsr") for k, v in dense.items()}
    return dense, tensors


def _reference(d, a, b):
    pair = np.zeros((len(d["U"]),) * 2)       # pair[n2, n1]
    pair[b, a] = pair[a, b] = 1
    return np.einsum("ab,bx,xc,bc->a", d["C"], d["T"], d["U"], pair)


@pytest.mark.parametrize("keep", [True, False])
def test_the_pair_equals_the_reference_on_the_stream_backend(keep):
    rng = np.random.default_rng(7)
    d, t = _inputs(rng)
    for a, b in ((1, 4), (4, 1), (2, 2), (0, 5)):
        got = ep.evaluate(EXPR, backend="streams", check=True, order=ORDER,
                          tuning={"keep_union_index": keep}, a=a, b=b, **t)
        np.testing.assert_allclose(got, _reference(d, a, b))


def test_a_kept_union_index_shortens_the_c():
    # the union of the pair's clauses at n2 has levels below that read its index
    # (x, n1): written out at every read, the nested fronts made lines of 18 kB
    src = {keep: ep.compile(EXPR, order=ORDER, out_indices=[c], optimize=False,
                            tuning={"keep_union_index": keep}).c_source for keep in (True, False)}
    longest = {k: max(len(line) for line in s.splitlines()) for k, s in src.items()}
    assert len(src[True]) < 0.75 * len(src[False])
    assert longest[True] < 0.75 * longest[False]


@pytest.mark.slow
def test_the_pair_equals_the_reference_in_c():
    rng = np.random.default_rng(8)
    d, t = _inputs(rng, 9)
    kern = ep.compile(EXPR, order=ORDER, out_indices=[c], optimize=False)
    for a, b in ((1, 4), (4, 1), (3, 3)):
        np.testing.assert_allclose(kern(a=a, b=b, **t), _reference(d, a, b))
