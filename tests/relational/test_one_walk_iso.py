"""An iso operand over a relation's own structure (its pattern, the semiring's one at
every stored entry) joins the one walk of its columns (expr.shared; proofs_notes/
constant_sums.md), its values never read: `a·1 = a`."""
import numpy as np
import pytest

import etchpy as ep
from tests.relational.test_one_walk import fused_ran, load

o, n = ep.indices("o n")


@pytest.mark.parametrize("sr", ["real", "min_plus"])
def test_an_iso_pattern_of_the_structure_joins_the_walk_unread(sr):
    """A column times an iso operand over the same arrays (its pattern: a table's
    row count) is walked once; the iso one's values are not read (`a·1 = a`)."""
    rows = [(0, 0, 1, 2, 0), (0, 1, 3, 1, 2), (2, 1, 2, 5, 4), (3, 3, 2, 2, 1)]
    rel, _ = load(rows, ["dense", "compressed"])
    A = rel["a"].var("A")
    ones = ep.semirings.get(sr).one
    I = ep.tensor("I", 2, A.format, iso=True)
    kern = ep.compile(ep.sum(n, A[o, n] * I[o, n] + I[o, n]), semiring=sr,
                      tuning=ep.Tuning(one_walk_from=0))
    read = ep.compile(ep.sum(n, A[o, n] * rel["b"].var("I")[o, n] + rel["b"].var("I")[o, n]),
                      semiring=sr)
    pattern = rel["a"].tensor.pattern(ones)
    got = kern(A=rel["a"].tensor, I=pattern)
    assert fused_ran(kern)
    assert np.array_equal(np.asarray(got), np.asarray(read(A=rel["a"].tensor, I=pattern)))
    src = kern.c_source
    assert "I_vals[" not in src[src.index("int etchpy_kernel("):]
