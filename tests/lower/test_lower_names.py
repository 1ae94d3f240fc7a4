"""The name supply: every name a lowered program declares comes from
imp.Names.fresh, after the names of the C ABI are claimed, so no index name and
no name already taken can collide with them."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp
from tuned import run_lowered

POOL = ["pos", "row", "out", "n", "q", "acc", "out_vals", "ws_n", "bk_p", "dim_i", "row_q"]


def declared(prog) -> list[str]:
    """Every name the program's body declares or allocates."""
    out = []
    for u in imp.statements(prog.body):
        match u:
            case imp.Decl():
                out.append(u.name)
            case imp.Alloc() | imp.LocalArray():
                out.append(u.array)
            case imp.ParallelFor():
                out.append(u.var)
    return out


@pytest.mark.parametrize("fmt, threads", [(None, 1), ("csr", 1), ("csr", 2), ("csc", 2),
                                          ("dcsr", 2), ("coo", 1)])
def test_declared_names_never_are_abi_names(fmt, threads):
    names = ep.indices(" ".join(POOL[:3]))
    a, b, c = names
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    rng = np.random.default_rng(1)
    inputs = {"A": sp.random_array((6, 7), density=0.4, format="csr", rng=rng),
              "B": sp.random_array((7, 5), density=0.4, format="csr", rng=rng)}
    e = ep.sum(b, A[a, b] * B[b, c])
    sr = ep.semirings.get("real")
    got, prog = run_lowered(e, sr, None if fmt is None else ep.Format.named(fmt, 2), inputs,
                            threads)
    # the inputs and a dense output are the caller's (a sparse output's arrays
    # and counts are the program's own, so it declares them)
    given = {p.name for p in prog.params if p.kind not in ("out_grown", "out_count")}
    assert not (given | {f"dim_{v}" for v, _, _ in prog.dims}) & set(declared(prog))
    np.testing.assert_allclose(got, (inputs["A"] @ inputs["B"]).toarray(), rtol=1e-12)


def test_names_already_taken_are_never_reused():
    """A supply that already handed out the output's usual names: the program
    takes others, and still computes the product."""
    supply = imp.Names()
    for taken in ("out_vals", "out_pos1", "out_crd1", "out_count1", "ws_n", "ws_vals", "i_",
                  "out", "out_zeroed", "acc"):
        supply.fresh(taken)
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    rng = np.random.default_rng(2)
    inputs = {"A": sp.random_array((6, 7), density=0.4, format="csr", rng=rng),
              "B": sp.random_array((7, 5), density=0.4, format="csr", rng=rng)}
    sr = ep.semirings.get("real")
    got, prog = run_lowered(ep.sum(j, A[i, j] * B[j, k]), sr, ep.Format.named("csr", 2),
                            inputs, names=supply)
    assert prog.output.arrays["vals"] != "out_vals"
    assert "out_vals" not in imp.names_used(prog.body)
    np.testing.assert_allclose(got, (inputs["A"] @ inputs["B"]).toarray(), rtol=1e-12)
