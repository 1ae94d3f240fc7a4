"""A onehot's number of bins given at call time (expr.bins: `ep.onehot(b, A[i],
"nbins")`): one kernel serves every count; the result has that many bins and
equals numpy's bincount cut to them on every backend; in a product that walks
a relation once (expr.shared) the parameter reaches the fused predicate's
bins too; a missing or non-positive-integer count is an InputError naming
the parameter, a name that is no identifier an ExpressionTypeError."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.errors import ExpressionTypeError
from etchpy.testing import check_backends

c, k, o, n, f = ep.indices("c k o n f")
CNT = np.array([0, 3, 3, 1, 7, 2.5, -1, 3, 0, 12], dtype=float)


def counts(nbins: int, fill: bool) -> np.ndarray:
    """numpy's bincount of CNT's whole values in 0..nbins-1 (its zeros too where
    the format stores them: a sparse level's fill is in no bin)."""
    whole = CNT[(CNT >= 0) & (CNT == np.floor(CNT)) & (fill | (CNT != 0))].astype(int)
    return np.bincount(whole[whole < nbins], minlength=nbins).astype(float)


@pytest.mark.parametrize("fmt", ["dense", "coo", "sparse_rle"])
def test_one_kernel_serves_every_number_of_bins(fmt):
    expr = ep.sum(c, ep.onehot(k, ep.tensor("Cnt", 1, format=fmt)[c], "nbins"))
    kern = ep.compile(expr)
    seen = set()
    for nbins in (1, 4, 8, 13, 40):
        got = kern(Cnt=CNT, nbins=nbins)
        assert got.shape == (nbins,)
        np.testing.assert_array_equal(got, counts(nbins, fmt == "dense"))
        seen.add(kern.c_source)
    assert len(seen) == 1                       # the same C for every count
    check_backends(expr, {"Cnt": CNT, "nbins": 6})


def test_the_parameter_reaches_a_relation_walked_once():
    cols = {"o": np.array([0, 0, 1, 2, 2]), "n": np.array([0, 1, 1, 0, 1]),
            "f": np.array([0.0, 2, 1, 2, 5]), "q": np.array([1.0, 2, 3, 4, 5])}
    keys = ep.Keys(np.arange(3), name="k")
    rel = ep.relation(cols, ["o", "n"], values=["f", "q"], coding={"o": keys, "n": keys},
                      name="L")
    at = (o, n)
    body = ep.onehot(f, rel["f"].var("F")[at], "nf") * rel["q"].var("Q")[at]
    kern = ep.compile(ep.sum(at, body), order=["o", "n", "f"], optimize=False)
    for nf, want in ((3, [1.0, 3, 6]), (2, [1.0, 3]), (6, [1.0, 3, 6, 0, 0, 5])):
        np.testing.assert_array_equal(kern(F=rel["f"].tensor, Q=rel["q"].tensor, nf=nf), want)


@pytest.mark.parametrize("levels", [["dense", "compressed"], ["compressed", "compressed"]])
def test_a_group_by_over_one_relation_follows_each_calls_count(levels):
    """Kept calls (runtime.kept_rows) are not reused across counts: the same
    columns with another number of bins bind again (they gave the last call's)."""
    cols = {"o": np.array([0, 0, 1, 2, 2]), "n": np.array([0, 1, 1, 0, 1]),
            "f": np.array([0.0, 2, 1, 2, 5]), "q": np.array([1.0, 2, 3, 4, 5])}
    keys = ep.Keys(np.arange(3), name="k")
    rel = ep.relation(cols, ["o", "n"], values=["f", "q"], levels=levels,
                      coding={"o": keys, "n": keys}, name="L")
    body = ep.onehot(f, rel["f"].var("F")[o, n], "nf") * rel["q"].var("Q")[o, n]
    kern = ep.compile(ep.sum(n, body), optimize=False)
    for nf in (3, 2, 6, 6, 1):
        want = np.zeros((3, nf))
        for oo, ff, qq in zip(cols["o"], cols["f"], cols["q"]):
            if ff < nf:
                want[oo, int(ff)] += qq
        np.testing.assert_array_equal(kern(F=rel["f"].tensor, Q=rel["q"].tensor, nf=nf), want)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, np.array([3]), "4", None])
def test_a_bad_count_names_its_parameter(bad):
    kern = ep.compile(ep.sum(c, ep.onehot(k, ep.tensor("Cnt", 1)[c], "nbins")))
    with pytest.raises(ep.InputError, match="nbins"):
        kern(Cnt=CNT, nbins=bad)
    with pytest.raises(ep.InputError, match="missing parameter nbins; the expression's "
                                            "tensors are Cnt and its parameters nbins"):
        kern(Cnt=CNT)


@pytest.mark.parametrize("name", ["", "2x", "n bins", "a-b"])
def test_a_count_named_by_no_identifier_is_refused(name):
    with pytest.raises(ExpressionTypeError, match="identifier"):
        ep.onehot(k, ep.tensor("Cnt", 1)[c], name)
