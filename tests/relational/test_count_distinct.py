"""COUNT(DISTINCT x) GROUP BY g in its kernel form (docs/relational.md,
"COUNT(DISTINCT)"): a first kernel sums the rows that pass into a sparse output
over (g, x), one stored entry per distinct (g, x), its value the rows' count;
a second counts each group's entries whose count is positive, Σ_x (D[g,x] > 0),
so an entry a dense 0/1 factor made 0 (stored, with the value 0) is no value.
Against a pure-Python reference (rows as tuples, a set per group), with the
groups as key levels ahead of the rows (the output written in order) and as
value columns read by `ep.onehot` (the cells in no order: a hash last level)."""
import numpy as np
from hypothesis import given, settings, strategies as st

import etchpy as ep

G, H, X = 3, 2, 5
g, h, r, x = ep.indices("g h r x")
row = st.tuples(st.integers(0, G - 1), st.integers(0, H - 1), st.integers(0, X - 1),
                st.integers(0, 4))
rows_st = st.lists(row, min_size=1, max_size=14)
mask_st = st.lists(st.sampled_from([0.0, 1.0]), min_size=X, max_size=X)


def reference(rows, most, xmask) -> np.ndarray:
    """Per (g, h): the distinct x of the rows with d <= most and xmask[x] = 1."""
    seen = {}
    for gv, hv, xv, d in rows:
        if d <= most and xmask[xv]:
            seen.setdefault((gv, hv), set()).add(xv)
    out = np.zeros((G, H))
    for k, xs in seen.items():
        out[k] = len(xs)
    return out


def columns(rows) -> dict:
    cols = {c: np.array([t[m] for t in rows]) for m, c in enumerate("ghxd")}
    cols["r"] = np.arange(len(rows))
    cols["d"] = cols["d"].astype(float)
    return cols


def count(pairs, order: int, fmt):
    """Σ_x (D[..., x] > 0): the entries per group whose count is positive."""
    idx = (g, x) if order == 2 else (g, h, x)
    D = ep.tensor("D", order, fmt)
    return ep.evaluate(ep.sum(x, D[idx] > 0), D=pairs,
                       output=ep.Format(["compressed"] * (order - 1)))


@settings(max_examples=12, deadline=None)
@given(rows=rows_st, most=st.integers(0, 4), xmask=mask_st)
def test_groups_as_levels_ahead_of_the_rows(rows, most, xmask):
    codes = {c: ep.Keys(np.arange(n), name=c) for c, n in (("g", G), ("h", H), ("x", X))}
    codes["r"] = ep.Keys(np.arange(len(rows)), name="r")
    T = ep.table(columns(rows), ["g", "h", "r", "x"], values=["d"], coding=codes, name="T")
    Xm = ep.tensor("Xm", 1)                           # dense: its 0s are multiplied in
    body = T.var("d", name="Td")[g, h, r, x] <= "most"
    pairs = ep.evaluate(ep.sum(r, body * Xm[x]), Td=T.tensor("d"), Xm=np.array(xmask),
                        most=float(most), order=["g", "h", "r", "x"],
                        output=ep.Format(["compressed"] * 3))
    got = count(pairs, 3, ep.Format(["compressed"] * 3)).to_dense()
    np.testing.assert_array_equal(got, reference(rows, most, xmask))


@settings(max_examples=12, deadline=None)
@given(rows=rows_st, most=st.integers(0, 4), xmask=mask_st)
def test_groups_as_value_columns_into_a_hash(rows, most, xmask):
    cols = columns(rows)
    cols["gh"] = (cols["g"] * H + cols["h"]).astype(float)    # one group code
    cols["xv"] = cols["x"].astype(float)
    T = ep.table(cols, ["r"], values=["gh", "xv", "d"], name="T")
    Xm = ep.tensor("Xm", 1)
    body = (ep.onehot(g, T.var("gh", name="Tg")[r], G * H)
            * ep.onehot(x, T.var("xv", name="Tx")[r], X)
            * (T.var("d", name="Td")[r] <= "most") * Xm[x])
    pairs = ep.evaluate(ep.sum(r, body), Tg=T.tensor("gh"), Tx=T.tensor("xv"),
                        Td=T.tensor("d"), Xm=np.array(xmask), most=float(most),
                        order=["r", "g", "x"], output="hash")
    got = count(pairs, 2, "hash").to_dense().reshape(G, H)
    np.testing.assert_array_equal(got, reference(rows, most, xmask))
