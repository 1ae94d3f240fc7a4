"""Plans per input signature (runtime.signature): a kernel plans again for each
size class of its inputs from the sizes measured on them, agrees with the
reference at every size, shares a shared object between classes whose C is the
same, and keeps each class's plan in memory and on disk (JSON manifests)."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import etchpy as ep
from etchpy.expr.walk import accesses
from etchpy.runtime import build, signature
from etchpy.testing import assert_same, problems, semiring_values

i, j, k, r, c = ep.indices("i j k r c")
U, V, X = ep.tensor("U", 2), ep.tensor("V", 2), ep.tensor("X", 2, format="csr")
ALS = ep.sum(k, (ep.sum(r, U[i, r] * V[k, r]) - X[i, k]) * V[k, c])
A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
SPMV = ep.sum(j, A[i, j] * x[j])


def als_inputs(n, rank, density, seed=0):
    rng = np.random.default_rng(seed)
    Xs = sp.random(n, n, density=density, format="csr", random_state=seed)
    return {"U": rng.random((n, rank)), "V": rng.random((n, rank)), "X": Xs}


def als_reference(d):
    return d["U"] @ (d["V"].T @ d["V"]) - d["X"] @ d["V"]


def test_two_sizes_plan_apart_and_each_agrees_with_numpy():
    """The ALS update: on tiny inputs the written expression; on tall ones with a
    small rank the factorisation U·(VᵀV) − X·V, which explain() says was
    chosen from measured sizes; back on tiny inputs, the first plan again."""
    kern = ep.Kernel(ALS, out_indices=(i, c), name="als_sizes")
    before = kern.explain()
    assert "sizes guessed" in before and "planned before any input" in before
    tiny, tall = als_inputs(4, 12, 0.5), als_inputs(300, 2, 0.02)
    np.testing.assert_allclose(kern(**tiny), als_reference(tiny), rtol=1e-10)
    tiny_plan = kern.plan
    assert kern.expr == ALS
    np.testing.assert_allclose(kern(**tall), als_reference(tall), rtol=1e-10)
    assert kern.plan != tiny_plan and kern.plan_costs[2]       # the rewrite compiled
    text = kern.explain()
    assert "sizes measured on the inputs: |c|=2, |i|=300, |k|=300, |r|=2, nnz(X)=" in text
    assert "sizes guessed" not in text and "compiling the optimized expression" in text
    np.testing.assert_allclose(kern(**tiny), als_reference(tiny), rtol=1e-10)
    assert kern.plan == tiny_plan and len(kern._planned) == 2


def test_hints_win_over_measured_sizes():
    """optimizer_options dims override what is measured: told that the rank is
    1000, the kernel keeps the written ALS plan on tall inputs."""
    kern = ep.Kernel(ALS, out_indices=(i, c), name="als_hinted",
                     optimizer_options={"dims": {"r": 1000, "c": 1000}})
    tall = als_inputs(300, 2, 0.02)
    np.testing.assert_allclose(kern(**tall), als_reference(tall), rtol=1e-10)
    assert kern.expr == ALS
    text = kern.explain()
    assert "sizes given: |c|=1000, |r|=1000" in text
    assert "sizes measured on the inputs: |i|=300, |k|=300, nnz(X)=" in text


def test_a_size_class_is_planned_once_and_equal_programs_share_one_build():
    """Sizes within one power of two share a plan; SpMV plans the same at every
    size, so each class runs the kernel's own shared object (no second build)."""
    kern = ep.Kernel(SPMV, name="spmv_classes")
    for n in (300, 400, 5):
        M = sp.random(n, n, density=0.05, format="csr", random_state=n)
        v = np.arange(n, dtype=float)
        np.testing.assert_allclose(kern(A=M, x=v), M @ v)
    assert len(kern._planned) == 2
    assert all(runner is kern for _, runner in kern._planned.values())
    assert list(kern._libs) == ["int32_t"]


def test_the_signature_reads_layouts_index_dtypes_and_powers_of_two():
    M = sp.random(40, 30, density=0.1, format="csr", random_state=0)
    kern = ep.Kernel(SPMV, name="spmv_sig")
    kern(A=M, x=np.ones(30))
    kern(A=M.tocsc(), x=np.ones(30))                 # another layout given
    M64 = sp.csr_array((M.data, M.indices.astype(np.int64), M.indptr.astype(np.int64)),
                       shape=M.shape)
    kern(A=M64, x=np.ones(30))                       # another index dtype
    classes = list(kern._planned)
    assert len(classes) == 3
    dims, stored, idx32, layouts = classes[0]
    assert dims == (("i", 6), ("j", 5)) and stored == (("A", M.nnz.bit_length()),)
    assert idx32 and layouts == (("A", "csr"), ("x", "dense"))
    assert classes[1][3] == (("A", "csc"), ("x", "dense")) and not classes[2][2]


def test_measured_statistics_of_compressed_levels():
    M = sp.csr_array(np.array([[1.0, 0, 2], [0, 0, 0], [4, 0, 0], [0, 0, 5]]))
    kern = ep.Kernel(SPMV, name="spmv_stats")
    kern(A=M, x=np.ones(3))
    measured = kern._current().request.measured
    assert measured.dims == (("i", 4), ("j", 3)) and measured.nnz == (("A", 4),)
    assert measured.fibers == (("A", 1, 4, 3, 2, 4 / 3),)
    assert measured.given == (("A", "csr"), ("x", "dense"))


def test_build_plans_for_the_example_inputs():
    tall = als_inputs(300, 2, 0.02)
    kern = ep.Kernel(ALS, out_indices=(i, c), name="als_build").build(**tall)
    (planned, runner), = kern._planned.values()
    assert runner is planned and "int32_t" in planned._libs


CHILD = textwrap.dedent("""
    import json
    import numpy as np, scipy.sparse as sp, etchpy as ep
    i, k, r, c = ep.indices("i k r c")
    U, V, X = ep.tensor("U", 2), ep.tensor("V", 2), ep.tensor("X", 2, format="csr")
    als = ep.sum(k, (ep.sum(r, U[i, r] * V[k, r]) - X[i, k]) * V[k, c])
    rng = np.random.default_rng(0)
    kern = ep.compile(als, out_indices=(i, c))
    n = 300
    d = dict(U=rng.random((n, 2)), V=rng.random((n, 2)),
             X=sp.random(n, n, density=0.02, format="csr", random_state=0))
    y = kern(**d)
    (planned, runner), = kern._planned.values()
    print(json.dumps({"restored": planned.from_manifest, "factorised": kern.plan_costs[2],
                      "measured": "sizes measured on the inputs" in kern.explain(),
                      "ok": bool(np.allclose(y, d["U"] @ (d["V"].T @ d["V"]) - d["X"] @ d["V"]))}))
""")


def test_a_size_class_plan_is_kept_on_disk_as_json(tmp_path):
    env = dict(os.environ, ETCHPY_CACHE_DIR=str(tmp_path / "c"))

    def child():
        out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)
    first, second = child(), child()
    assert first == {"restored": False, "factorised": True, "measured": True, "ok": True}
    assert second == {**first, "restored": True}
    for f in (tmp_path / "c").glob("*-req-*.json"):
        digest, _, body = f.read_bytes().partition(b"\n")
        json.loads(body)                         # plain JSON under its hash line


def test_class_keys_differ_by_class_and_need_a_request_key():
    assert signature.class_key("a", (1,)) != signature.class_key("a", (2,))
    assert signature.class_key(None, (1,)) is None


def test_a_class_planned_to_the_kernels_own_program_is_not_planned_again(tmp_path, monkeypatch):
    """A size class whose plan is the kernel's own program is recorded on disk: a
    kernel restored from its manifest (as in a new process) runs such a class
    without measuring its inputs or reading the class's manifest, until explain()
    asks for that kernel; with the class's manifest gone, explain() shows its own.
    (A cache of its own: the class's manifest it spoils would be read by its next
    run in a kept cache.)"""
    monkeypatch.setenv("ETCHPY_CACHE_DIR", str(tmp_path / "cache"))
    M, v = sp.random(300, 300, density=0.05, format="csr", random_state=1), np.arange(300.0)
    first = ep.Kernel(SPMV, name="spmv_same_class")
    np.testing.assert_allclose(first(A=M, x=v), M @ v)
    key = signature.class_key(first._request, next(iter(first._planned)))
    assert key in first._same_classes()
    again = ep.Kernel(SPMV, name="spmv_same_class")
    assert again.from_manifest
    np.testing.assert_allclose(again(A=M, x=v), M @ v)
    (shown, runner), = again._planned.values()
    assert runner is again and isinstance(shown, signature.PlannedLater)
    assert "sizes measured on the inputs" in again.explain()
    assert again._last is not again and again._last.from_manifest
    build.write_manifest("spmv_same_class", key, {})          # the class's manifest unreadable
    third = ep.Kernel(SPMV, name="spmv_same_class")
    np.testing.assert_allclose(third(A=M, x=v), M @ v)
    assert "planned before any input" in third.explain() and third._last is third


@st.composite
def resized(draw):
    """A random problem and inputs for the same expression at larger sizes."""
    p = draw(problems(max_occurrences=3))
    names = sorted({ix.name for a in accesses(p.expr) for ix in a.indices})
    big = draw(st.sampled_from([9, 12])) if len(names) <= 3 else 6
    size = dict.fromkeys(names, big)      # one size: a tensor may occur transposed
    values = draw(st.lists(semiring_values(p.semiring), min_size=1, max_size=4))
    seed = draw(st.integers(0, 2**16))
    return p, size, values, seed


def larger_inputs(p, size, values, seed):
    rng = np.random.default_rng(seed)
    shapes = {a.tensor.name: tuple(size[ix.name] for ix in a.indices)
              for a in accesses(p.expr) if a.tensor.name in p.inputs}
    out = {}
    for name, shape in shapes.items():
        arr = np.full(shape, p.semiring.zero, dtype=p.semiring.dtype)
        mask = rng.random(shape) < 0.3
        arr[mask] = rng.choice(np.asarray(values, dtype=p.semiring.dtype), mask.sum())
        out[name] = arr
    return out


@settings(max_examples=15, deadline=None)
@given(resized())
def test_one_kernel_agrees_with_the_reference_at_two_sizes(case):
    """One kernel called on tiny inputs, on larger ones, then tiny again: each call
    agrees with the dense reference, whatever each size class planned."""
    p, size, values, seed = case
    kern = ep.compile(p.expr, semiring=p.semiring)
    big = larger_inputs(p, size, values, seed)
    for inputs in (p.inputs, big, p.inputs):
        want = ep.evaluate(p.expr, semiring=p.semiring, backend="reference", **inputs)
        assert_same(kern(**inputs), want, p.semiring, what=f"{p} at {size}")


class RefusingPlans(ep.Kernel):
    """A kernel for which planning from measured sizes fails."""

    @classmethod
    def of_request(cls, req, **kw):
        raise ep.OrderError("no loop order (test)")


def test_a_class_that_cannot_be_planned_runs_the_plan_from_the_hints():
    """Should planning from the measured sizes fail, the call still runs, on the
    plan made when the kernel was (which these inputs fit)."""
    kern = RefusingPlans(SPMV, name="spmv_fallback")
    M = sp.random(50, 40, density=0.1, format="csr", random_state=0)
    np.testing.assert_allclose(kern(A=M, x=np.ones(40)), M @ np.ones(40))
    assert list(kern._planned.values()) == [(None, kern)] and kern.plan is kern.compiled.plan


def _q5_inputs(no, seed):
    rng = np.random.default_rng(seed)
    nc, ns, nn = 40, 20, 5
    keys = rng.choice(no, no // 4, replace=False)
    O_ = sp.csr_array((np.ones(len(keys)), (keys, rng.integers(0, nc, len(keys)))),
                      shape=(no, nc))
    C_ = sp.csr_array((np.ones(nc), (np.arange(nc), rng.integers(0, nn, nc))), shape=(nc, nn))
    L_ = sp.random(no, ns, density=0.1, format="csr", random_state=seed)
    S_ = sp.csr_array((np.ones(ns), (np.arange(ns), rng.integers(0, nn, ns))), shape=(ns, nn))
    R_ = ep.Tensor.from_coords([np.array([0, 2, 3])], np.ones(3), (nn,), "csf")
    want = np.asarray(((O_ @ C_).multiply(L_ @ S_)).sum(axis=0)).ravel() * R_.to_dense()
    return {"O": O_, "C": C_, "L": L_, "S": S_, "R": R_}, want


def test_a_size_class_kernel_binds_the_inputs_once_per_call():
    """A join whose plan from the hints converts an input (S to csc) but whose
    size class's plan reads every input as given: from the second call on the
    class's kernel binds the inputs itself (not once for the hint plan and
    again for its own), and a call of another class is planned afresh."""
    o, c, s, n = ep.indices("o c s n")
    O, C, L, S = (ep.tensor(t, 2, format="csr") for t in "OCLS")
    R = ep.tensor("R", 1, format="csf")
    kern = ep.compile(ep.sum((o, c, s), O[o, c] * C[c, n] * L[o, s] * S[s, n] * R[n]))
    assert any(conv for _, _, conv in kern._inputs.values())        # the hint plan converts
    small, want = _q5_inputs(400, 1)
    for _ in range(3):
        np.testing.assert_allclose(kern(**small), want)
    runner = kern._runner
    assert runner is not None and runner is not kern
    assert not any(conv for _, _, conv in runner._inputs.values())
    big, want_big = _q5_inputs(5000, 2)
    np.testing.assert_allclose(kern(**big), want_big)
    np.testing.assert_allclose(kern(**small), want)


def test_a_runner_reading_an_input_reordered_binds_it_once_per_call():
    """A kernel whose size class's plan reads a scipy input through a sparse
    conversion (T1[j,i] of a csr B read as csc: A∘Bᵀ) binds through that plan from
    the second call on: B is transposed once a call, not once for the kernel's own
    binding and again for the plan's; its answers stay scipy's, for a new B of
    another size class too. A dense conversion is no reordering."""
    from etchpy.runtime import signature
    i, j = ep.indices("i j")
    a_, b_ = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csc")
    kern = ep.compile(a_[i, j] * b_[j, i], output="csr")
    rng = np.random.default_rng(5)
    A, B = (sp.random_array((300, 300), density=0.03, format="csr", random_state=rng)
            for _ in range(2))
    for _ in range(3):
        got = kern(A=A, B=B)
        np.testing.assert_allclose(got.toarray(), A.multiply(B.T).toarray())
    runner = kern._runner
    assert runner is not None and runner is not kern
    assert any(conv and signature.reordered(tv) for _, tv, conv in runner._inputs.values())
    calls = []
    scipy_tocsc = type(B).tocsc
    type(B).tocsc = lambda self, *a, **k: calls.append(1) or scipy_tocsc(self, *a, **k)
    try:
        kern(A=A, B=B)
    finally:
        type(B).tocsc = scipy_tocsc
    assert len(calls) == 1
    B2 = sp.random_array((300, 300), density=0.3, format="csr", random_state=rng)
    np.testing.assert_allclose(kern(A=A, B=B2).toarray(), A.multiply(B2.T).toarray())
    assert not signature.reordered(ep.tensor("B", 2, format="dense"))
