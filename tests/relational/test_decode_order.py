"""`ep.decode`'s ORDER BY orders key columns by their codes (a Keys' codes keep
the order of its values) and a column of whole numbers by its value less the
least one, with one integer key per row where it fits: the rows come in the
order a Python sort of the decoded rows gives (ties in code order, as
np.lexsort keeps them), for strings, integers, whole and fractional values,
mixed directions and a span too wide for one key."""
import numpy as np
from hypothesis import given, settings, strategies as st

import etchpy as ep

NAMES = np.array(["ash", "birch", "elm", "fir", "oak", "yew"])
value_st = st.one_of(st.integers(-3, 3).map(float), st.sampled_from([0.5, -1.25, 2.0]),
                     st.sampled_from([1e15, -1e15, 0.0]))


@settings(max_examples=40, deadline=None)
@given(cells=st.dictionaries(st.tuples(st.integers(0, 5), st.integers(0, 3)),
                             value_st.filter(lambda v: v != 0.0), min_size=1, max_size=12),
       by=st.permutations(["tree", "n", "value"]), down=st.lists(st.booleans(), min_size=3,
                                                                max_size=3))
def test_decode_orders_as_a_python_sort(cells, by, down):
    result = np.zeros((6, 4))
    for (a, b), v in cells.items():
        result[a, b] = v
    trees, ns = ep.Keys(NAMES, name="tree"), ep.Keys(np.array([10, 20, 35, 40]), name="n")
    got = ep.decode(result, [trees, ns], order_by=by, descending=down)
    rows = sorted(((NAMES[a], int(ns.decode(np.array([b]))[0]), v)
                   for (a, b), v in sorted(cells.items())),
                  key=lambda r: tuple(_key(r[("tree", "n", "value").index(c)], d)
                                      for c, d in zip(by, down)))
    assert list(zip(got["tree"].tolist(), got["n"].tolist(), got["value"].tolist())) == rows


def _key(v, down):
    if isinstance(v, str):
        return tuple(-ord(ch) for ch in v) + (1,) if down else v   # "elm" before "el..."
    return -v if down else v
