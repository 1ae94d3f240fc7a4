"""A kernel compiled for compressed levels, called with a table's Tensors whose
levels are singletons where its rows allow (ep.table), reads its summed levels
as one run (expr.collapse, runtime.shared) in the format it was compiled for:
the Tensor is converted to it first, never its singleton levels read as
compressed ones (which crashed, or summed the wrong positions), against a
pure-Python reference over the rows, with values written in place between
calls."""
import numpy as np
from hypothesis import example, given, settings, strategies as st

import etchpy as ep
from etchpy.expr.compare import KeyedVar
from etchpy.formats import Format
from lines import lines

BY_DAY = ("day", "order", "line", "part")
d, o, ln, p = ep.indices("d o ln p")
GENERAL = Format(["dense", "compressed", "compressed", "compressed"])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 14), hi=st.sampled_from([0, 2, 3, 6]))
@example(seed=12, n=6, hi=3)
@example(seed=17, n=4, hi=3)
def test_runs_of_levels_read_in_the_format_the_kernel_declares(seed, n, hi):
    R, D = ep.tensor("R", 4, GENERAL), KeyedVar("D", 4, GENERAL, by=0)
    kern = ep.compile(ep.sum((d, ln, p), R[d, o, ln, p] * (D[d, o, ln, p] < "hi")),
                      order=["d", "o", "ln", "p"])
    cols = lines(np.random.default_rng(seed), n)
    T = ep.table(cols, ["order", "line"], keys=["part"], values=["rev", "day"], name="L")
    T.add_order(BY_DAY)
    order = ep.Keys(cols["order"]).code(cols["order"])
    for step in range(2):
        got = kern(R=T.tensor("rev", order=BY_DAY), D=T.tensor("day", order=BY_DAY), hi=hi)
        keep = cols["day"] < hi
        want = np.bincount(order[keep], cols["rev"][keep], minlength=5)
        m = min(len(got), len(want))
        np.testing.assert_array_equal(got[:m], want[:m])
        assert not got[m:].any() and not want[m:].any(), step
        T.tensor("rev").vals[:] += 1.0        # in place, then read again in BY_DAY
        cols["rev"] = cols["rev"] + 1.0
