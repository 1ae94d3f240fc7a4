"""Loading once: codes worked out once per column serve every relation of the
table (`ep.relation(..., codes=)`), checked against the coding; masks and LIKE
as sparse vectors of codes (`sparse=True`), the skips a query multiplies in."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError


@settings(max_examples=20, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["a", "b", "cc"]), st.integers(0, 5),
                               st.floats(-3, 3)), min_size=1, max_size=15))
def test_relations_built_from_given_codes_equal_those_coded_again(rows):
    cols = {"s": np.array([r[0] for r in rows]), "k": np.array([r[1] for r in rows]),
            "v": np.array([r[2] for r in rows])}
    coding = {"s": ep.Keys(cols["s"]), "k": ep.Keys(cols["k"])}
    codes = {c: coding[c].code(cols[c]) for c in ("s", "k")}
    for order in (["s", "k"], ["k", "s"]):
        a = ep.relation(cols, ["s", "k"], values="v", coding=coding, order=order)
        b = ep.relation(cols, ["s", "k"], values="v", coding=coding, order=order, codes=codes)
        np.testing.assert_array_equal(a.tensor.to_dense(), b.tensor.to_dense())


def test_given_codes_outside_the_coding_are_refused():
    cols = {"k": np.array([3, 5, 3])}
    keys = ep.Keys(cols["k"])
    with pytest.raises(InputError, match="codes given for key column 'k'"):
        ep.relation(cols, ["k"], coding={"k": keys}, codes={"k": np.array([0, 9, 0])})
    with pytest.raises(InputError, match="codes given"):
        ep.relation(cols, ["k"], coding={"k": keys}, codes={"k": np.array([0, 1])})


def test_sparse_masks_hold_the_codes_that_pass():
    names = ep.Keys(np.array(["forest green", "navy", "green tea", "red"]))
    dense = names.mask(lambda v: np.char.find(v, "e") >= 0).to_dense()
    sparse = names.mask(lambda v: np.char.find(v, "e") >= 0, sparse=True)
    assert sparse.format.name == "csf" and sparse.nnz == int(dense.sum())
    np.testing.assert_array_equal(sparse.to_dense(), dense)
    np.testing.assert_array_equal(names.like("%green%", sparse=True).to_dense(),
                                  names.like("%green%").to_dense())
    i = ep.indices("i")[0]
    G = ep.tensor("G", 1, "csf")
    x = np.arange(1.0, 5.0)
    got = ep.evaluate(ep.sum(i, G[i] * ep.tensor("X", 1)[i]), G=sparse, X=x)
    assert got == x[dense > 0].sum()


def test_decode_carries_columns_that_depend_on_a_key():
    """SELECT c_custkey, c_name, sum(price) GROUP BY c_custkey ORDER BY c_name:
    the name is carried by the customer's code (made once), not looked up."""
    customer = {"c_custkey": np.array([7, 3, 9]), "c_name": np.array(["Zoe", "Al", "Mo"])}
    orders = {"o_custkey": np.array([3, 9, 9, 7]), "price": np.array([1.0, 2.0, 4.0, 8.0])}
    cust = ep.Keys(customer["c_custkey"], name="c_custkey")
    O = ep.relation(orders, ["o_custkey"], values="price", coding={"o_custkey": cust})
    names = cust.carried(customer["c_custkey"], customer["c_name"])
    out = ep.decode(O.tensor, [cust], columns=["c_custkey"],
                    carry={"c_name": ("c_custkey", names)}, order_by="c_name")
    assert out["c_name"].tolist() == ["Al", "Mo", "Zoe"]
    assert out["c_custkey"].tolist() == [3, 9, 7] and out["value"].tolist() == [1.0, 6.0, 8.0]
    top = ep.decode(O.tensor, [cust], columns=["c_custkey"], order_by="value",
                    descending=True, limit=2, carry={"c_name": ("c_custkey", names)})
    assert top["c_name"].tolist() == ["Zoe", "Mo"]    # carried for the rows kept only
    assert list(top) == ["c_custkey", "value", "c_name"]
    with pytest.raises(InputError, match="fewer than the codes"):
        ep.decode(O.tensor, [cust], order_by="value", limit=1,
                  carry={"n": ("c_custkey", names[:2])})
    with pytest.raises(InputError, match="one value per key"):
        cust.carried(np.array([7, 7, 3, 9]), np.array(["a", "b", "c", "d"]))
    with pytest.raises(InputError, match="must be \\(a key column"):
        ep.decode(O.tensor, [cust], columns=["c_custkey"], carry={"n": ("x", names)})
