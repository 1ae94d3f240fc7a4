"""Columns a one-walk row predicate only compares, read as their narrow integer
twins (Tuning.narrow_compared, runtime.narrow, runtime.shared): the sum is the
kernel's as written to the last bit, for every comparison, bound and column
form the rule knows (whole numbers, hundredths, neither), with AND, OR and NOT
of the tests, after values are written in place between calls (the twin made
again, or the column read wide), on the C and on the Imp interpreter, and the
reference's dense value reads the packed columns as the C does."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import tuning
from etchpy.expr.compare import CompareVar
from etchpy.runtime import narrow
from etchpy.runtime.predicates import with_predicates
from etchpy.runtime.shared import walk_inputs
from etchpy.testing.oracles import imp_evaluate

pytestmark = pytest.mark.usefixtures("shared_cache")

OFF = tuning.DEFAULT.with_(call_binder=False, keep_last_call=False)
ON = OFF.with_(narrow_compared=16)      # (a kept last call holds its inputs' values:
# their Tensors' marks are None while it does, and a column is then read wide)
o, ln = ep.indices("o ln")


def _same(a, b) -> bool:
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


def _table(rng, n, wide_ints=False):
    """n lines: a price v (wide), whole days a (int16, or int32 with wide_ints),
    hundredths b (int8), a count c (int8) and a float d no rule narrows."""
    o_ = np.sort(rng.integers(0, max(n // 3, 1), n))
    ln_ = np.arange(n) - np.searchsorted(o_, o_)
    cols = {"o": o_, "ln": ln_, "v": rng.standard_normal(n),
            "a": rng.integers(-70000 if wide_ints else 8000, 70000 if wide_ints else 11000,
                              n).astype(float),
            "b": rng.integers(0, 11, n) / 100.0, "c": rng.integers(1, 51, n).astype(float),
            "d": rng.random(n)}
    return ep.table(cols, ["o", "ln"], values=["v", "a", "b", "c", "d"], name="L"), cols


def _expr(T, shape: int):
    at = (o, ln)
    V, A, B = T.var("v", name="V")[at], T.var("a", name="A")[at], T.var("b", name="B")[at]
    C, D = T.var("c", name="C")[at], T.var("d", name="D")[at]
    tests = {0: ((A >= "p0") & (A < "p1")) * ((B >= "p2") & (B <= "p3")) * (C < "p4"),
             1: ((A > "p0") | ~(B < "p2")) * (C <= "p4") * (D < "p3"),
             2: ~((A <= "p1") & (C >= "p4")) | (B > "p3")}[shape]
    return ep.sum(at, V * tests)


USED = {0: (0, 1, 2, 3, 4), 1: (0, 2, 3, 4), 2: (1, 3, 4)}     # each shape's parameters


def _kernels(T, shape):
    e = _expr(T, shape)
    return {name: ep.compile(e, optimize=False, order=["o", "ln"], tuning=t)
            for name, t in (("off", OFF), ("on", ON))}


def _args(T, shape=0):
    return {n: T.tensor(c) for n, c in zip("VABCD", "vabcd") if n != "D" or shape == 1}


BOUND = st.one_of(st.floats(allow_nan=False), st.integers(-2**40, 2**40),
                  st.integers(-120, 120).map(lambda k: k / 100),
                  st.integers(-120, 120).map(lambda k: k / 100 + 1e-9),
                  st.integers(-120, 120).map(lambda k: k / 100 - 1e-9),
                  st.integers(7990, 11010), st.integers(7990, 11010).map(lambda k: k + 0.5))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 300), st.integers(0, 2**32 - 1), st.sampled_from((0, 1, 2)),
       st.booleans(), st.lists(BOUND, min_size=5, max_size=5))
def test_narrow_columns_give_the_wide_kernels_sum_to_the_last_bit(n, seed, shape, wide, bounds):
    rng = np.random.default_rng(seed)
    T, cols = _table(rng, n, wide)
    kern = _kernels(T, shape)
    params = {f"p{k}": b for k, b in enumerate(bounds) if k in USED[shape]}
    got = {k: kr(**_args(T, shape), **params) for k, kr in kern.items()}
    assert _same(got["on"], got["off"]), (got, params)
    walked = kern["on"]._walked.c_source
    assert ("int32_t *)" if wide else "int16_t *)") in walked and "fm_mask[16]" in walked
    assert "int8_t *)" in walked                       # b and c: int8
    assert "(const int" not in kern["off"]._walked.c_source


def test_values_written_in_place_are_read_by_the_next_call():
    rng = np.random.default_rng(5)
    T, cols = _table(rng, 200)
    kern = _kernels(T, 0)
    params = dict(p0=8500, p1=10500, p2=0.02, p3=0.06, p4=30)
    narrowed = []
    for write in (("b", 3, 0.055), ("c", 7, 300.0), ("a", 9, 2.5e9), ("b", 3, 0.05),
                  ("a", 9, 9000.0), ("v", 1, 0.5)):
        narrowed.append(_narrowed(kern["on"], {**_args(T), **params}))
        got = {k: kr(**_args(T), **params) for k, kr in kern.items()}
        assert _same(got["on"], got["off"]), write
        keep = ((cols["a"] >= 8500) & (cols["a"] < 10500) & (cols["b"] >= 0.02)
                & (cols["b"] <= 0.06) & (cols["c"] < 30))
        assert np.isclose(got["on"], cols["v"][keep].sum(), rtol=1e-12, atol=1e-12)
        col, at, value = write
        T.tensor(col).vals[at] = value                     # a write through vals
        cols[col][at] = value
    got = {k: kr(**_args(T), **params) for k, kr in kern.items()}
    assert _same(got["on"], got["off"])
    assert narrowed == [{"A", "B", "C"}, {"A", "C"}, {"A", "C"}, {"C"}, {"B", "C"}, {"A", "B", "C"}]


def _narrowed(kern, args) -> set:
    """The inputs the one walk of this call reads narrow."""
    fused, read = kern._one_walk(args)
    return {n for n, how in read.items() if how == "narrow"}


def test_a_written_column_no_rule_narrows_is_read_wide():
    rng = np.random.default_rng(6)
    T, _ = _table(rng, 100)
    kern = _kernels(T, 0)
    args = {**_args(T), **dict(p0=8500, p1=10500, p2=0.02, p3=0.06, p4=30)}
    kern["on"](**args)
    assert _narrowed(kern["on"], args) == {"A", "B", "C"}
    T.tensor("b").vals[0] = 0.0123                        # no longer hundredths
    args = {**args, **_args(T)}
    assert _narrowed(kern["on"], args) == {"A", "C"}
    assert _same(kern["on"](**args), kern["off"](**args))


def _narrow_call(seed, shape):
    rng = np.random.default_rng(seed)
    T, _ = _table(rng, 150)
    kern = _kernels(T, shape)["on"]
    bounds = (8700, 10100.5, 0.03, 0.071, 20)
    args = {**_args(T, shape), **{f"p{k}": bounds[k] for k in USED[shape]}}
    want = kern(**args)
    fused, read = kern._one_walk(args)
    assert any(how == "narrow" for how in read.values())
    return fused, walk_inputs(read, args), want


@pytest.mark.parametrize("shape", (0, 1, 2))
def test_the_imp_interpreter_reads_narrow_columns_as_the_c_does(shape):
    fused, inputs, want = _narrow_call(7, shape)
    req = fused.request
    bound = with_predicates(req.expr, inputs, ep.semirings.real)
    got = imp_evaluate(req.expr, bound, order=list(req.order), tuning=req.tuning,
                       optimize=False)
    assert _same(got, want)


@pytest.mark.parametrize("backend", ("reference", "streams"))
@pytest.mark.parametrize("shape", (0, 1, 2))
def test_the_interpreters_read_packed_columns_as_the_c_does(shape, backend):
    """The reference (predicates.dense_value) and the stream interpreter, given
    the one walk's narrow expression and inputs."""
    fused, inputs, want = _narrow_call(8, shape)
    tv, = (t for t in fused.request.tensors.values()
           if isinstance(t, CompareVar) and t.kind == "value")
    assert tv.narrow
    got = ep.evaluate(fused.request.expr, backend=backend, order=list(fused.request.order),
                      **inputs)
    assert np.isclose(got, want, rtol=1e-12, atol=1e-12)


def test_only_columns_compared_with_bounds_are_narrow_candidates():
    f = ("and", ("cmp", "<", ("col", 1), ("par", "a")),
         ("or", ("cmp", ">=", ("col", 2), ("num", 3)), ("cmp", "<", ("col", 3), ("col", 4))))
    cols = tuple((c, None, None) for c in "VABCD")
    tv = CompareVar("p", 2, "dense", kind="value", tests=f, columns=cols, weights=(0,))
    assert narrow.compared_only(tv) == {1, 2}                   # C and D compared together
    scaled = ("cmp", "<", ("scaled", ("col", 1), 2.0), ("par", "a"))
    assert narrow.compared_only(CompareVar("q", 2, "dense", kind="value", tests=scaled,
                                           columns=cols)) == set()
    located = cols[:2] + (("B", None, (0,)),) + cols[3:]
    assert narrow.compared_only(CompareVar("r", 2, "dense", kind="value", tests=f,
                                           columns=located, weights=(0,))) == {1}


@pytest.mark.parametrize("values,form", [
    (np.array([8000.0, 11000.0]), ("int16", 1)), (np.array([0.0, 0.1]), ("int8", 100)),
    (np.array([1.0, 50.0]), ("int8", 1)), (np.array([0.5, 0.25001]), None)])
def test_a_tensors_twin_is_kept_until_its_values_are_handed_out(values, form):
    T = ep.table({"k": np.arange(len(values)), "x": values}, ["k"], values=["x"])
    t = T.tensor("x")
    made = narrow.twin(t)
    if form is None:
        assert made is None
        return
    assert (made[0].dtype.name, made[0].scale) == form
    assert narrow.twin(t) is made                           # kept
    assert made[1].dtype == np.float64
    got = made[1].view(made[0].dtype)[:len(values)]
    assert np.array_equal(got / made[0].scale, values)
    t.vals[0] = values[1]                                   # handed out: made again
    again = narrow.twin(t)
    assert again is not made and again[1].view(again[0].dtype)[0] == got[1]
