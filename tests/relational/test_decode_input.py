"""ep.decode and ep.relation at the edges of their input: names that collide,
a negative limit, a 1-d scipy sparse result, key columns of different lengths,
a value column that is not numbers. Each was once a raw numpy error or a
silently wrong answer."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError


def test_decode_refuses_columns_of_one_name():
    """Two Keys named alike (both default 'keys'), or a key named like the value
    column, would give one dict entry for two columns: refused, saying how to
    name them; named apart, both columns come back."""
    a, b = ep.Keys(np.array([1, 2, 3])), ep.Keys(np.array([4, 5]))
    with pytest.raises(InputError, match="'keys'.*repeat.*columns=.*name=.*value="):
        ep.decode(np.ones((3, 2)), [a, b])
    with pytest.raises(InputError, match="repeat"):
        ep.decode(np.ones(3), [ep.Keys(np.array([1, 2, 3]), name="value")])
    with pytest.raises(InputError, match="repeat"):
        ep.decode(np.ones(3), [a], columns=["v"], value="v")
    got = ep.decode(np.ones((3, 2)), [a, b], columns=["a", "b"])
    assert got["a"].tolist() == [1, 1, 2, 2, 3, 3] and got["b"].tolist() == [4, 5] * 3


def test_decode_refuses_a_limit_that_is_no_count_of_rows():
    """limit=-1 would drop the last row (a slice), limit=1.5 a raw TypeError."""
    k = ep.Keys(np.array([1, 2, 3]), name="k")
    assert ep.decode(np.ones(3), [k], limit=0)["k"].tolist() == []
    assert ep.decode(np.ones(3), [k], limit=np.int64(2))["k"].tolist() == [1, 2]
    for bad in (-1, 1.5, True):
        with pytest.raises(InputError, match="limit"):
            ep.decode(np.ones(3), [k], limit=bad)


def test_decode_reads_a_one_dimensional_scipy_sparse_array():
    """A 1-d sparse array has one coordinate array, not rows and columns; a 2-d
    one decodes as before."""
    k = ep.Keys(np.array([5, 6, 7]), name="k")
    got = ep.decode(sp.coo_array(np.array([0.0, 1.0, 2.0])), [k])
    assert got["k"].tolist() == [6, 7] and got["value"].tolist() == [1.0, 2.0]
    assert ep.decode(sp.csr_array(np.array([0.0, 3.0, 0.0])), [k])["k"].tolist() == [6]
    two = ep.decode(sp.csr_array(np.array([[0.0, 1.0], [2.0, 0.0]])), [k, k],
                    columns=["a", "b"])
    assert two["a"].tolist() == [5, 6] and two["b"].tolist() == [6, 5]
    with pytest.raises(InputError, match="order 1, but 2"):
        ep.decode(sp.coo_array(np.array([0.0, 1.0, 2.0])), [k, k], columns=["a", "b"])


def test_key_columns_of_different_lengths_are_named():
    with pytest.raises(InputError, match="'T'.*'a' has 3, 'b' has 2 rows"):
        ep.relation({"a": np.array([1, 2, 3]), "b": np.array([1, 2])}, ["a", "b"], name="T")


def test_a_value_column_of_other_things_than_numbers_is_named():
    """A string column would be numpy's 'could not convert string to float';
    numbers stored as objects still load."""
    keys = np.array([1, 2, 3])
    with pytest.raises(InputError, match="'T'.*value column 'v' has dtype <U1"):
        ep.relation({"a": keys, "v": np.array(["x", "y", "z"])}, ["a"], values="v", name="T")
    with pytest.raises(InputError, match="'T'.*value column 'v' holds values that are not"):
        ep.relation({"a": keys, "v": np.array([1.0, "x", None], dtype=object)}, ["a"],
                    values="v", name="T")
    with pytest.raises(InputError, match=r"value column \(an array\) has dtype"):
        ep.relation({"a": keys}, ["a"], values=np.array(["1", "2", "3"]), name="T")
    ok = ep.relation({"a": keys, "v": np.array([1.0, 2, 3], dtype=object)}, ["a"], values="v")
    assert ok.tensor.to_dense().tolist() == [1.0, 2.0, 3.0]
