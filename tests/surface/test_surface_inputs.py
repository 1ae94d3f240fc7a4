"""Issue 21, trap 3: a misspelt, missing or mis-shaped input is named, and inputs
passed by position get a TypeError saying they go by tensor name."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep

i, j = ep.indices("i j")
A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
SPMV = ep.sum(j, A[i, j] * x[j])
M = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0]]))
V = np.array([1.0, 2.0, 3.0])


def test_a_misspelt_input_is_named_with_the_close_match():
    kern = ep.compile(SPMV)
    with pytest.raises(ep.InputError) as err:
        kern(A=M, X=V)
    words = str(err.value)
    assert "unknown input X" in words and "did you mean x?" in words
    assert "missing input for tensor x" in words and "A, x" in words
    with pytest.raises(ep.InputError, match="did you mean x"):
        ep.evaluate(SPMV, A=M, xx=V, backend="streams")


def test_an_input_of_the_wrong_order_is_named_with_what_it_is():
    kern = ep.compile(SPMV)
    with pytest.raises(ep.InputError) as err:
        kern(A=M, x=M)
    words = str(err.value)
    assert "input x" in words and "scipy" in words and "order 1" in words
    with pytest.raises(ep.InputError, match="input A .*order 2"):
        ep.evaluate(SPMV, A=V, x=V, backend="reference")


def test_positional_inputs_say_they_go_by_tensor_name():
    kern = ep.compile(SPMV)
    for call in (lambda: kern(M, V), lambda: kern(M), lambda: ep.evaluate(SPMV, M, V),
                 lambda: kern.build(M, V)):
        with pytest.raises(TypeError, match="by tensor name") as err:
            call()
        assert "A=..., x=..." in str(err.value)
