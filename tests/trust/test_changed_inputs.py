"""Inputs changed from Python between calls (issue 20, item 7): whatever is done to
a scipy input's arrays, or to the arrays an ep.Tensor was built from, a call gives
the right answer or an InputError naming the tensor; never a crash, never a wrong
answer. Each kernel runs with the checks fused into its reads (the default) and
with the full check before the call (tuning fused_checks=False).
proofs_notes/validation.md argues why; tests/trust/test_sanitizer.py runs this
file under ASan and UBSan.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from etchpy.runtime import calling

N = M = 36            # square, so that every kernel below takes the same shapes

# (name, expression, formats, compile options, the fused inputs by default); the
# dense outputs below are order-free (lower.schedule.fused_checks.order_free): their kernels need
# no order check, and answer an unsorted input as its canonical form
ORDER_FREE = {"spmv", "spmv_csc", "spmv_threads", "spmm", "spmm_1", "spgemm"}   # spgemm: its B
KERNELS = [
    ("spmv", "y[i] = A[i,j] * x[j]", {"A": "csr"}, {}, {"A"}),          # a linear walk
    ("spmv_csc", "y[i] = A[i,j] * x[j]", {"A": "csc"}, {}, {"A"}),     # a scatter
    ("rowdot", "y[i] = A[i,j] * B[i,j]", {"A": "csr", "B": "csr"}, {}, set()),  # merge
    ("scale_csr", "C[i,j] = A[i,j] * x[j]", {"A": "csr"}, {"output": "csr"}, {"A"}),
    ("add_csr", "C[i,j] = A[i,j] + B[i,j]", {"A": "csr", "B": "csr"}, {"output": "csr"},
     {"A", "B"}),            # a union walks both to their ends: checked as opened
    ("spgemm", "C[i,k] = A[i,j] * B[j,k]", {"A": "csr", "B": "csr"}, {"output": "csr"},
     {"B"}),                      # A's rows are also read by a count pass: not fused
    ("spmm", "Y[i,k] = A[i,j] * X[j,k]", {"A": "csr"}, {}, {"A"}),     # rows of X gathered
    # X of one column: the C runs the SpMV of its unit arm (etchpy.unit_arms), checked too
    ("spmm_1", "Y[i,k] = A[i,j] * X1[j,k]", {"A": "csr"}, {}, {"A"}),
    # split across threads: the walks report through the rows' loop's flag
    ("spmv_threads", "y[i] = A[i,j] * x[j]", {"A": "csr"}, {"threads": 2}, {"A"}),
]
SERIAL = [k for k in KERNELS if "threads" not in k[3]]
# the threaded kernel with its fused checks only (its full check is the serial one's)
CASES = [(k, fused) for k in KERNELS for fused in (True, False) if fused or k in SERIAL]


def matrix(fmt, seed):
    m = sp.random(N, M, density=0.3, format=fmt, random_state=seed, dtype=np.float64)
    m.sort_indices()
    if fmt == "csc":
        return sp.csc_matrix(m)
    return sp.csr_matrix(m)


def inputs_of(kernel_formats, seed):
    rng = np.random.default_rng(seed)
    out = {name: matrix(fmt, seed + k) for k, (name, fmt) in enumerate(kernel_formats.items())}
    out["x"], out["X"], out["X1"] = rng.random(M), rng.random((M, 3)), rng.random((M, 1))
    return out


def mutate(m, how):
    """Change m's arrays in place, as a user could from Python."""
    p, q = m.indptr, m.indices
    row = next(r for r in range(len(p) - 2) if p[r + 1] - p[r] >= 2)
    a = p[row]
    match how:
        case "index_out_of_range":
            q[a] = 10**9
        case "index_negative":
            q[a + 1] = -3
        case "index_at_dim":
            q[p[row + 1] - 1] = m.shape[1 if m.format == "csr" else 0]
        case "unsorted":
            q[a], q[a + 1] = q[a + 1], q[a]
        case "duplicate":
            q[a + 1] = q[a]
        case "indptr_decreasing":
            p[row + 1] = p[row] - 1 if p[row] > 0 else p[row + 2] + 1
        case "indptr_last_beyond_nnz":
            p[-1] = len(q) + 5
        case "indptr_inner_beyond_nnz":
            p[row + 1] = len(q) + 7
        case "indptr_first_nonzero":
            p[0] = 1
        case "shortened_indices":
            m.indices = q[:-2]
        case "shortened_indptr":
            m.indptr = p[:-1]
        case "emptied_row":
            p[row + 1] = p[row]          # well formed, the other row gets its entries


MUTATIONS = ["index_out_of_range", "index_negative", "index_at_dim", "unsorted",
             "duplicate", "indptr_decreasing", "indptr_last_beyond_nnz",
             "indptr_inner_beyond_nnz", "indptr_first_nonzero", "shortened_indices",
             "shortened_indptr", "emptied_row"]


def well_formed(m):
    """m's canonical scipy copy when its arrays describe a matrix, else None."""
    p, q = np.asarray(m.indptr), np.asarray(m.indices)
    major, minor = m.shape if m.format == "csr" else m.shape[::-1]
    if (len(p) != major + 1 or p[0] != 0 or np.any(np.diff(p) < 0) or p[-1] != len(q)
            or len(q) != len(m.data) or (len(q) and (q.min() < 0 or q.max() >= minor))):
        return None
    make = sp.csr_matrix if m.format == "csr" else sp.csc_matrix
    c = make((m.data.copy(), q.copy(), p.copy()), shape=m.shape)
    c.sum_duplicates()
    return c


def _numpy(expr, d):
    A, x = d["A"], d.get("x")
    match expr:
        case "y[i] = A[i,j] * x[j]":
            return A @ x
        case "y[i] = A[i,j] * B[i,j]":
            return (A * d["B"]).sum(axis=1)
        case "C[i,j] = A[i,j] * x[j]":
            return A * x[None, :]
        case "C[i,j] = A[i,j] + B[i,j]":
            return A + d["B"]
        case "C[i,k] = A[i,j] * B[j,k]":
            return A @ d["B"]
        case "Y[i,k] = A[i,j] * X[j,k]":
            return A @ d["X"]
        case "Y[i,k] = A[i,j] * X1[j,k]":
            return A @ d["X1"]
    raise AssertionError(expr)


def dense_of(result):
    if sp.issparse(result):
        return result.toarray()
    if isinstance(result, ep.Tensor):
        return result.to_dense()
    return np.asarray(result)


def check_call(kern, expr, values, name):
    """The call's result is right for `values`, or it raised an InputError naming
    `name` because values[name] is not a matrix."""
    given = {n: v for n, v in values.items() if n in kern.tensors}
    fixed = {n: (well_formed(v) if sp.issparse(v) else v) for n, v in given.items()}
    try:
        got = kern(**given)
    except InputError as err:
        assert fixed[name] is None, f"refused a well-formed input: {err}"
        assert f"'{name}'" in str(err) or f"input {name}" in str(err), err
        return "refused"
    assert all(v is not None for v in fixed.values()), "a malformed input was accepted"
    np.testing.assert_allclose(dense_of(got), _numpy(expr, {
        n: (v.toarray() if sp.issparse(v) else v) for n, v in fixed.items()}))
    if sp.issparse(got):          # a sparse result is canonical
        assert well_formed(got) is not None
        assert np.all(np.diff(got.indices)[np.diff(np.repeat(
            np.arange(len(got.indptr) - 1), np.diff(got.indptr))) == 0] > 0)
    return "answered"


def kernel_rc(kern, values):
    """What the kernel's C function itself returns for `values` (bound as a call
    binds them), or None when binding refuses them first."""
    given = {n: v for n, v in values.items() if n in kern.tensors}
    try:
        bound, (shape, idx_type, idx_dtype, kern, _) = kern._bind(given)
    except InputError:
        return None
    key = calling.variant(idx_type, bound, kern._fused)     # kern: the one planned to run
    lib, types, function = kern._entry(key)
    args = [None] * len(kern._slots)
    for name, b in bound.items():
        for pos, arg in calling.input_args(b, kern._in_slots[name], lib, types, idx_dtype):
            args[pos] = arg
    kern._output_args(args, None, shape, bound, lib, types)
    return function(*args)


# changes that cost a pass over the index arrays to notice: a kernel with fused
# checks finds them itself (the O(1) checks before the call cannot)
FOUND_BY_THE_KERNEL = {"index_out_of_range", "index_negative", "index_at_dim", "unsorted",
                       "duplicate", "indptr_decreasing", "indptr_inner_beyond_nnz"}


@pytest.mark.parametrize("case, fused", CASES, ids=[f"{k[0]}-{f}" for k, f in CASES])
def test_scipy_inputs_changed_between_calls(case, fused):
    label, expr, formats, options, fused_inputs = case
    kern = ep.compile(expr, formats=formats, tuning={"fused_checks": fused}, **options)
    checked = kern.compiled.checked         # the build with fused checks, if any
    assert (checked.fused if checked is not None else frozenset()) == (
        frozenset(fused_inputs) if fused else frozenset())
    outcomes = set()
    for seed, how in enumerate(MUTATIONS):
        values = inputs_of(formats, seed)
        for name in formats:
            values = inputs_of(formats, seed)
            assert kernel_rc(kern, values) == 0
            assert check_call(kern, expr, values, name) == "answered"
            mutate(values[name], how)
            refusals = kernel_rc(kern, values) == calling.CHECK_FAILED
            outcomes.add((how, check_call(kern, expr, values, name)))
            found = FOUND_BY_THE_KERNEL - ({"unsorted", "duplicate"} if label in ORDER_FREE
                                           else set())
            if name in kern._fused and how in found:
                assert refusals, how
            if refusals:      # an emptied row may leave the next one unsorted
                assert name in kern._fused and how in found | {"emptied_row"}
            assert check_call(kern, expr, values, name) in ("answered", "refused")
    refused = {how for how, outcome in outcomes if outcome == "refused"}
    assert refused >= {"index_out_of_range", "indptr_decreasing", "indptr_last_beyond_nnz",
                       "shortened_indices", "shortened_indptr"}, outcomes
    assert ("unsorted", "answered") in outcomes and ("emptied_row", "answered") in outcomes


@pytest.mark.parametrize("case", SERIAL, ids=[k[0] for k in SERIAL])
def test_tensor_from_scipy_keeps_its_arrays(case):
    """A Tensor's index arrays are its own, so changing the scipy matrix it was built
    from changes nothing; its own arrays cannot be written from Python."""
    label, expr, formats, options, _ = case
    kern = ep.compile(expr, formats=formats, **options)
    for seed, how in enumerate(MUTATIONS):
        values = inputs_of(formats, 100 + seed)
        expected = _numpy(expr, {n: (v.toarray() if sp.issparse(v) else v)
                                 for n, v in values.items()})
        tensors = {n: (ep.Tensor.from_scipy(v, name=n) if sp.issparse(v) else v)
                   for n, v in values.items() if n in kern.tensors}
        np.testing.assert_allclose(dense_of(kern(**tensors)), expected)
        for name in formats:
            mutate(values[name], how)
        np.testing.assert_allclose(dense_of(kern(**tensors)), expected)
        for name in formats:
            crd = tensors[name].levels[1]["crd"]
            with pytest.raises(ValueError):
                crd[0] = 10**6


def test_inputs_checked_before_run_the_build_without_fused_checks():
    """ep.Tensors (checked when built, immutable) run the kernel's second build,
    whose C is the kernel's with fused_checks=False; scipy inputs the first."""
    kern = ep.compile("y[i] = A[i,j] * x[j]", formats={"A": "csr"}, name="two_builds")
    plain = ep.compile("y[i] = A[i,j] * x[j]", formats={"A": "csr"}, name="two_builds",
                       tuning={"fused_checks": False})
    m, x = matrix("csr", 3), np.ones(M)
    kern(A=ep.Tensor.from_scipy(m), x=x)
    assert set(kern._libs) == {"int32_t" + calling.TRUSTED}
    kern(A=m, x=x)
    assert set(kern._libs) == {"int32_t", "int32_t" + calling.TRUSTED}
    # the banner names the Tuning (fused_checks=False in plain's), and how it wraps
    # the host's values follows that line's length: compare the C after it
    strip = lambda text: text.split("\n */\n", 1)[1]
    assert strip(kern._texts["int32_t" + calling.TRUSTED][0]) == strip(
        plain.source("int32_t").c)
    assert "input_error" in kern._texts["int32_t"][0]


def test_fused_kernels_say_so_and_the_switch_removes_the_checks():
    on = ep.compile("y[i] = A[i,j] * x[j]", formats={"A": "csr"})
    off = ep.compile("y[i] = A[i,j] * x[j]", formats={"A": "csr"},
                     tuning={"fused_checks": False})
    c_on, c_off = on.source("int32_t").c, off.source("int32_t").c
    assert "input_error" in c_on and "input_error" not in c_off
    assert "4 when an input's index arrays are malformed" in c_on
    m = matrix("csr", 7)
    x = np.ones(M)
    np.testing.assert_allclose(on(A=m, x=x), off(A=m, x=x))
