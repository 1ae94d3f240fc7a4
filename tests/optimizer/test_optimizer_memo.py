"""The optimizer's results kept in process (optimizer.optimize.remembered): equal
arguments give the same result object; anything the result depends on, including
a literal's text, gives another."""
import numpy as np

import etchpy as ep
from etchpy.optimizer.optimize import remembered
from etchpy.tuning import DEFAULT

i, j, k = ep.indices("i j k")
A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2)
x = ep.tensor("x", 1)
REAL = ep.semirings.real


def chain(lit=1.0):
    return ep.sum((j, k), A[i, j] * B[j, k] * x[k] * lit)


def test_equal_arguments_share_one_result():
    first = remembered(chain(), REAL, DEFAULT, {"dims": {"i": 50, "j": 60}})
    again = remembered(chain(), REAL, DEFAULT, {"dims": {"j": 60, "i": 50}})
    assert again is first
    assert remembered(chain(), REAL, DEFAULT, {"dims": {"i": 50, "j": 61}}) is not first
    assert remembered(chain(), ep.semirings.min_plus, DEFAULT,
                      {"dims": {"i": 50, "j": 60}}) is not first
    other = ep.Tuning(default_dim=DEFAULT.default_dim + 1)
    assert remembered(chain(), REAL, other, {"dims": {"i": 50, "j": 60}}) is not first


def test_equal_literals_of_other_text_are_kept_apart():
    pos, neg = remembered(chain(0.0), REAL, DEFAULT, {}), remembered(chain(-0.0), REAL,
                                                                     DEFAULT, {})
    assert pos is not neg
    assert np.signbit(next(v for v in _literals(neg.original)))


def test_nested_option_dicts_are_keys_and_the_result_is_the_optimizers():
    opts = {"limits": {"iterations": 3}, "nnz": {"A": 7}}
    first = remembered(chain(), REAL, DEFAULT, opts)
    assert remembered(chain(), REAL, DEFAULT, {"nnz": {"A": 7},
                                               "limits": {"iterations": 3}}) is first
    assert first.expr == ep.optimize(chain(), limits={"iterations": 3}, nnz={"A": 7}).expr


def test_a_compiled_kernel_gives_the_reference_after_the_memo_served_it():
    M = np.arange(12.0).reshape(3, 4)
    N, v = np.ones((4, 5)), np.arange(5.0)
    for _ in range(2):
        got = ep.evaluate(chain(), A=M, B=N, x=v)
        np.testing.assert_allclose(got, M @ N @ v)


def _literals(e):
    from etchpy.expr.nodes import Lit
    from etchpy.expr.walk import subexprs
    return [s.value for s in subexprs(e) if isinstance(s, Lit)]
