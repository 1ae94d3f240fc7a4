"""One-walk calls by call plans (runtime.walk_plans): from the second call on the
same ep.Tensors, a kernel whose inputs share a structure runs its fused kernel by
a plan over inputs derived once. Its answers are the general path's and dense
numpy's; values written in place between calls are read; a layout changed in
place is refused; other Tensors, a new numpy input each call
and Tuning.walk_plans off are right too."""
import functools

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from tuned import Counted as _Counted, relation_columns

STATEMENTS = {
    "s = A[i,j]*B[i,j]": lambda a, b, x: (a * b).sum(),
    "C[i,j] = A[i,j]*B[i,j]": lambda a, b, x: a * b,
    "y[i] = A[i,j]*B[i,j]*x[j]": lambda a, b, x: (a * b) @ x,
    "C[i,j] = A[i,j]+B[i,j]": lambda a, b, x: a + b,
    "s = A[i,j]": lambda a, b, x: a.sum(),
}


@functools.cache
def kernel(text, fmt, plans=True):
    formats = {n: fmt for n in "ABC" if n in text}
    return ep.compile(text, formats=formats, tuning=ep.Tuning(walk_plans=plans, one_walk_from=0))


def tensor(fmt, seed=0, shape=(40, 30)):
    A = sp.random_array(shape, density=0.2, format="csr", random_state=seed)
    A.sort_indices()
    return ep.Tensor.from_scipy(A, fmt) if fmt in ("csr", "csc") else \
        ep.Tensor.from_coords(np.array(A.tocoo().coords), A.tocoo().data, shape, fmt)


def dense(out):
    return out.toarray() if sp.issparse(out) else np.asarray(
        out.to_dense() if isinstance(out, ep.Tensor) else out)


def args(text, T, x):
    got = {"A": T}
    if "B" in text:
        got["B"] = T
    if "x" in text:
        got["x"] = x
    return got


def held(kern):
    """The plan runtime.walk_plans keeps for the last call's Tensors, or None."""
    memo = kern.__dict__.get("_walk_memo")
    return memo[4][-1] if memo is not None and memo[4] and memo[4][-1] else None


@pytest.mark.parametrize("fmt", ["csr", "dcsr", "coo"])
@pytest.mark.parametrize("text", sorted(STATEMENTS))
def test_planned_calls_agree_with_the_general_path_and_numpy(text, fmt):
    T, rng = tensor(fmt), np.random.default_rng(1)
    a = dense(T)
    kern, off = kernel(text, fmt), kernel(text, fmt, False)
    for _ in range(4):              # the general call, the plan made, the plan twice
        x = rng.random(30)          # a new numpy input each call (passed through)
        want = STATEMENTS[text](a, a, x)
        np.testing.assert_allclose(dense(kern(**args(text, T, x))), want, rtol=1e-12)
        np.testing.assert_allclose(dense(off(**args(text, T, x))), want, rtol=1e-12)
    if "B" in text or fmt != "csr":
        assert kern._walked is not None and held(kern) is not None
    assert held(off) is None


def test_values_written_in_place_and_other_tensors_are_read():
    text = "C[i,j] = A[i,j]*B[i,j]"
    kern = kernel(text, "csr")
    T = tensor("csr", seed=2)
    for _ in range(3):
        kern(A=T, B=T)
    assert held(kern) is not None
    T.vals[:] = np.arange(len(T.vals), dtype=float)      # written in place: read
    np.testing.assert_allclose(dense(kern(A=T, B=T)), dense(T) ** 2)
    U = tensor("csr", seed=3)
    for _ in range(3):                                    # other Tensors: their own plan
        np.testing.assert_allclose(dense(kern(A=U, B=U)), dense(U) ** 2)
    np.testing.assert_allclose(dense(kern(A=T, B=T)), dense(T) ** 2)


def test_a_layout_changed_in_place_is_refused():
    kern = kernel("s = A[i,j]*B[i,j]", "csr")
    T = tensor("csr", seed=4)
    for _ in range(3):
        kern(A=T, B=T)
    assert held(kern) is not None
    v = T.vals
    v.shape = (len(v) // 2, 2) if len(v) % 2 == 0 else (1, len(v))
    with pytest.raises(InputError, match="changed in place"):
        kern(A=T, B=T)


@pytest.mark.parametrize("in_c", [True, False])
def test_tensors_under_one_walk_from_run_as_written(in_c):
    """Below Tuning.one_walk_from stored entries (distinct Tensors, in all) a kernel
    with no comparison of its own runs as written, by its own plan; from it, the one
    walk. Both answer as numpy. From the second call the plan's guard (shared.apart_first,
    in C or in Python) answers small Tensors itself: no walk is worked out."""
    small, big = tensor("csr", seed=5), tensor("csr", seed=6, shape=(200, 150))
    assert len(small.vals) < 4096 <= len(big.vals) < 2 * 4096
    kern = ep.compile("s = A[i,j]*B[i,j]", formats={"A": "csr", "B": "csr"},
                      tuning=ep.Tuning(apart_in_c=in_c))
    kern(A=small, B=small)
    runs, walks = _Counted(kern, "_run_walk"), _Counted(kern, "_one_walk")
    for T, walked in ((small, 0), (big, 3), (small, 0), (big, 3)):
        before = runs.n, walks.n
        for _ in range(3):
            assert np.isclose(kern(A=T, B=T), (dense(T) ** 2).sum())
        assert (runs.n - before[0], walks.n - before[1]) == (walked, walked)
    kern = ep.compile("s = A[i,j]*B[i,j]", formats={"A": "csr", "B": "csr"},
                      tuning=ep.Tuning(one_walk_from=len(big.vals) + 1))
    assert np.isclose(kern(A=big, B=big), (dense(big) ** 2).sum())
    assert kern._walk_memo[2] is None


@pytest.mark.parametrize("in_c", [True, False])
def test_small_counts_each_distinct_tensor_once(in_c):
    """Two columns of one relation hold m values each: with one_walk_from 2m, a column
    given for both names is small (the guard runs the plan; no walk worked out), the
    two columns are not (the walk)."""
    a, b = relation_columns()
    kern = ep.compile("s = A[i,j]*B[i,j]", formats={"A": "csr", "B": "csr"},
                      tuning=ep.Tuning(one_walk_from=2 * len(a.vals), apart_in_c=in_c))
    kern(A=a, B=a)
    runs, walks = _Counted(kern, "_run_walk"), _Counted(kern, "_one_walk")
    for X, Y, walked in ((a, a, 0), (a, b, 2), (b, b, 0)):
        before = runs.n, walks.n
        for _ in range(2):
            assert np.isclose(kern(A=X, B=Y), (X.to_dense() * Y.to_dense()).sum())
        assert (runs.n - before[0], walks.n - before[1]) == (walked, walked)


@pytest.mark.parametrize("in_c", [True, False])
@pytest.mark.parametrize("fmt", ["coo", "dcsr"])
def test_small_tensors_of_a_flat_read_run_the_plan(fmt, in_c):
    """Σ A of a coo or dcsr Tensor is a flat read that any Tensor changes (no
    inputs apart): the guard of small Tensors alone runs the plan below
    one_walk_from, no walk worked out; a large Tensor still walks."""
    small, big = tensor(fmt, seed=5), tensor(fmt, seed=6, shape=(200, 150))
    kern = ep.compile("s = A[i,j]", formats={"A": fmt}, tuning=ep.Tuning(apart_in_c=in_c))
    for _ in range(2):
        kern(A=small)
    assert not kern._walk[2] and kern._first is not None
    runs, walks = _Counted(kern, "_run_walk"), _Counted(kern, "_one_walk")
    for T, walked in ((small, 0), (big, 3), (small, 0)):
        before = runs.n, walks.n
        for _ in range(3):
            assert np.isclose(kern(A=T), dense(T).sum())
        assert (runs.n - before[0], walks.n - before[1]) == (walked, walked)
