"""Dense GEMM-shaped steps run as imp.Gemm (BLAS in C), up to a permutation of
their indices; everything else, every other semiring, and tuning.blas off keep
their loops. The Imp interpreter (numpy), the C kernel (BLAS) and numpy agree."""
import math

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp, pipeline
from etchpy.expr.einsum import einsum_expr
from etchpy.imp import Gemm, ImpRuntimeError, Machine, Var
from etchpy.runtime.kernel import make_request
from etchpy.testing import check_backends, imp_evaluate
from etchpy.tuning import DEFAULT, FORCE, NOOPT

pytestmark = pytest.mark.usefixtures("shared_cache")

r = np.random.default_rng(5).random

GEMMS = [
    ("ij,jk->ik", (r((5, 6)), r((6, 7)))),
    ("ij,kj->ik", (r((5, 6)), r((4, 6)))),            # B transposed
    ("ji,jk->ki", (r((5, 6)), r((5, 3)))),            # A transposed, C as Cᵀ = Bᵀ·Aᵀ
    ("ij,jk->ki", (r((5, 6)), r((6, 7)))),            # C transposed
    ("bij,bjk->bik", (r((2, 3, 4)), r((2, 4, 5)))),   # batched
    ("ibj,jbk->bik", (r((3, 2, 4)), r((4, 2, 5)))),   # batch index in the middle
    ("ij,j->i", (r((5, 6)), r(6))),                   # GEMV
    ("ji,j->i", (r((6, 5)), r(6))),                   # GEMV, A transposed
    ("j,jk->k", (r(6), r((6, 7)))),
    ("j,kj->k", (r(6), r((7, 6)))),
    ("j,j->", (r(5), r(5))),                          # a dot product
    ("i,j->ij", (r(3), r(4))),                        # an outer product (K empty)
    ("ijk,jkl->il", (r((3, 4, 5)), r((4, 5, 2)))),    # K is two indices
    ("ij,jk->ijk", (r((3, 4)), r((4, 5)))),           # j a batch index: outer products
]
LOOPS = [
    ("ijb,jkb->kbi", (r((3, 4, 2)), r((4, 5, 2)))),   # no group innermost in A
    ("ikj,jkl->il", (r((3, 4, 5)), r((5, 4, 2)))),    # K in two orders
    ("ii,ij->ij", (r((4, 4)), r((4, 5)))),            # a diagonal
]


def program(spec, ops, tuning=DEFAULT, semiring=None):
    expr, out, _ = einsum_expr(spec, list(ops))
    req = make_request(expr, out_indices=out, tuning=tuning, semiring=semiring)
    return pipeline.compile_request(req).program


def gemms(prog):
    return [s for s in imp.statements(prog.body) if isinstance(s, Gemm)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("spec,ops", GEMMS, ids=[s for s, _ in GEMMS])
def test_gemm_shaped_steps_call_blas_and_agree(spec, ops, dtype):
    ops = [x.astype(dtype) for x in ops]
    want = np.einsum(spec, *ops)
    assert len(gemms(program(spec, ops, semiring="real32" if dtype == np.float32 else None))) == 1
    expr, out, inputs = einsum_expr(spec, ops)
    for tuning in (DEFAULT, NOOPT, FORCE):
        got_c = ep.einsum(spec, *ops, tuning=tuning)
        got_imp = imp_evaluate(expr, inputs, out_indices=out, tuning=tuning,
                               semiring="real32" if dtype == np.float32 else None)
        for got in (got_c, got_imp):
            assert got.dtype == dtype
            np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("spec,ops", LOOPS, ids=[s for s, _ in LOOPS])
def test_other_layouts_keep_their_loops(spec, ops):
    assert not gemms(program(spec, ops))
    np.testing.assert_allclose(ep.einsum(spec, *ops), np.einsum(spec, *ops), rtol=1e-12)


def test_a_chain_factored_by_the_optimizer_is_two_gemms():
    ops = (r((3, 4)), r((4, 5)), r((5, 2)))
    assert len(gemms(program("ij,jk,kl->il", ops))) == 2
    np.testing.assert_allclose(ep.einsum("ij,jk,kl->il", *ops), np.einsum("ij,jk,kl->il", *ops),
                               rtol=1e-12)


def test_blas_off_other_semirings_and_sparse_operands_keep_loops():
    a, b = r((5, 6)), r((6, 7))
    assert gemms(program("ij,jk->ik", (a, b)))
    assert not gemms(program("ij,jk->ik", (a, b), tuning=NOOPT))
    assert not gemms(program("ij,jk->ik", (a, b), tuning=DEFAULT.with_(blas=False)))
    for sr in ("min_plus", "integer", "max_times"):
        assert not gemms(program("ij,jk->ik", (a, b), semiring=sr))
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2)
    req = make_request(ep.sum(j, A[i, j] * B[j, k]))
    assert not gemms(pipeline.compile_request(req).program)


@pytest.mark.parametrize("n_free", [0, 1, 2])
def test_an_index_comparison_is_no_gemm_operand(n_free):
    """i < j stores no array: a dense step with it as a factor keeps its loops
    (a GEMM over it failed to compile), and agrees with numpy."""
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2), ep.tensor("B", 2)
    a, b = r((5, 5)), r((5, 4))
    e, want = [(ep.sum((i, j), A[i, j] * (i < j)), np.triu(a, 1).sum()),
               (ep.sum(j, A[i, j] * (j >= i)), np.triu(a).sum(1)),
               (ep.sum(j, A[i, j] * (i < j) * B[j, k]), np.triu(a, 1) @ b)][n_free]
    assert not gemms(pipeline.compile_request(make_request(e)).program)
    for backend in ("c", "streams"):
        assert np.allclose(ep.evaluate(e, backend=backend, A=a, B=b) if n_free == 2 else
                           ep.evaluate(e, backend=backend, A=a), want)


def test_a_temporary_with_presence_flags_keeps_its_loops():
    """Into a sparse output, a temporary whose cells may get no product keeps
    flags; BLAS would write its values but no flags, and the output would lose
    every entry that reads them (a wrong answer seen on a sketched chain)."""
    sk = ep.sketch
    i, j, k, l = ep.indices("i j k l")
    A, B = ep.tensor("A", 2), ep.tensor("B", 2)
    S, M = ep.tensor("S", 2, format="csr"), ep.tensor("M", 2, format="csr")
    n = 12
    ins = {"A": r((n, n)), "B": r((n, n)), "S": sp.random(n, n, 0.2, format="csr",
                                                          random_state=2),
           "M": sp.random(n, n, 0.3, format="csr", random_state=1)}
    e = ep.sum((j, k), M[i, l] * A[i, j] * S[j, k] * B[k, l])
    want = sk.mul("M", sk.sum("j", sk.mul("A", sk.materialised(sk.sum("k", sk.mul("S", "B"))))))
    ref = ins["M"].toarray() * (ins["A"] @ (ins["S"].toarray() @ ins["B"]))
    for blas in (True, False):
        kern = ep.compile(e, output="csr", tuning={"rewrite_margin": math.inf, "blas": blas},
                          optimizer_options={"sketch": want, "dims": dict.fromkeys("ijkl", n)})
        assert "tmp_1[i,l] ⊕= Σ_{j} A[i,j]·tmp[j,l]" in kern.explain()
        got = kern(**ins)
        np.testing.assert_allclose(got.todense(), ref, rtol=1e-12)
        assert got.nnz == ins["M"].nnz


def test_column_major_operand_is_read_transposed():
    i, j, k = ep.indices("i j k")
    A = ep.tensor("A", 2, format=ep.Format(["dense", "dense"], mode_order=(1, 0)))
    B = ep.tensor("B", 2)
    e = ep.sum(j, A[i, j] * B[j, k])
    g = gemms(pipeline.compile_request(make_request(e)).program)
    assert len(g) == 1 and g[0].a_trans
    a, b = r((5, 6)), r((6, 7))
    np.testing.assert_allclose(ep.evaluate(e, A=a, B=b), a @ b, rtol=1e-12)
    np.testing.assert_allclose(imp_evaluate(e, {"A": a, "B": b}), a @ b, rtol=1e-12)


def test_mttkrp_plans_khatri_rao_then_gemm():
    x, u, v = r((4, 5, 6)), r((5, 3)), r((6, 3))
    want = np.einsum("ijk,jr,kr->ir", x, u, v)
    expr, out, inputs = einsum_expr("ijk,jr,kr->ir", [x, u, v])
    compiled = pipeline.compile_request(make_request(expr, out_indices=out))
    targets = [s.target for s in compiled.plan.steps]
    assert targets[0].startswith("tmp_kr") and targets[1] == "out"
    assert len(gemms(compiled.program)) == 1
    for tuning in (DEFAULT, NOOPT):
        np.testing.assert_allclose(ep.einsum("ijk,jr,kr->ir", x, u, v, tuning=tuning), want,
                                   rtol=1e-12)
        np.testing.assert_allclose(imp_evaluate(expr, inputs, out_indices=out, tuning=tuning),
                                   want, rtol=1e-12)
    assert len(pipeline.compile_request(make_request(expr, out_indices=out, tuning=NOOPT))
               .plan.steps) == 1
    mp = make_request(expr, out_indices=out, semiring="min_plus")
    assert len(pipeline.compile_request(mp).plan.steps) == 1
    got = ep.einsum("ijk,jr,kr->ir", x, u, v, semiring="min_plus")
    ref = (x[:, :, :, None] + u[None, :, None, :] + v[None, None, :, :]).min(axis=(1, 2))
    np.testing.assert_allclose(got, ref)


def test_khatri_rao_not_taken_when_its_temporary_outgrows_the_factor():
    """KR[j,k,r] holds |j|·|k|·|r| cells; with |r| > |i| it is larger than X."""
    x, u, v = r((2, 5, 6)), r((5, 9)), r((6, 9))
    expr, out, _ = einsum_expr("ijk,jr,kr->ir", [x, u, v])
    dims = {"i": 2, "j": 5, "k": 6, "r": 9}
    req = make_request(expr, out_indices=out, optimizer_options={"dims": dims})
    assert len(pipeline.compile_request(req).plan.steps) == 1
    np.testing.assert_allclose(ep.einsum("ijk,jr,kr->ir", x, u, v),
                               np.einsum("ijk,jr,kr->ir", x, u, v), rtol=1e-12)


def test_interpreter_checks_a_gemm_stays_in_bounds():
    g = Gemm(Var("m"), Var("n"), Var("k"), "a", False, Var("k"), "b", False, Var("n"), "c",
             Var("n"), (), True, imp.SKIP)
    sr = ep.semirings.real
    env = {"m": 2, "n": 2, "k": 3, "a": np.ones(6), "b": np.ones(6), "c": np.zeros(4)}
    m = Machine(sr, env)
    m.exec(g)
    np.testing.assert_array_equal(m.env["c"], np.full(4, 3.0))
    with pytest.raises(ImpRuntimeError, match="out of bounds"):
        Machine(sr, {**env, "a": np.ones(5)}).exec(g)
    assert "gemm c[m×n; ld n] = a[ld k] · b[ld n]" in imp.show(g)


def test_khatri_rao_checks_the_real_sizes_and_runs_fused_otherwise():
    """Planned on guessed sizes, the pair runs only when KR is no larger than X on
    the real ones (here |r| > |i|: the fused step runs), in C and on Imp."""
    x, u, v = r((2, 5, 6)), r((5, 9)), r((6, 9))
    want = np.einsum("ijk,jr,kr->ir", x, u, v)
    expr, out, inputs = einsum_expr("ijk,jr,kr->ir", [x, u, v])
    compiled = pipeline.compile_request(make_request(expr, out_indices=out))
    assert len(compiled.plan.steps) == 2
    has_gemm = lambda s: any(isinstance(u, Gemm) for u in imp.statements(s))
    guard = [s for s in imp.statements(compiled.program.body)
             if isinstance(s, imp.If) and has_gemm(s.then)]
    assert guard and not has_gemm(guard[0].else_)
    np.testing.assert_allclose(ep.einsum("ijk,jr,kr->ir", x, u, v), want, rtol=1e-12)
    np.testing.assert_allclose(imp_evaluate(expr, inputs, out_indices=out), want, rtol=1e-12)


def test_khatri_rao_pairs_are_a_group_pass_and_off_run_as_planned():
    """The size test is the claim of the 'Khatri-Rao pairs' group pass; with its
    switch off both steps run on their own (no test, no fused branch), and the
    answer is the same, whether the temporary is small or not."""
    for shape in ((4, 5, 6, 3), (2, 5, 6, 9)):
        i, j, k, q = shape
        x, u, v = r((i, j, k)), r((j, q)), r((k, q))
        want = np.einsum("ijk,jr,kr->ir", x, u, v)
        expr, out, inputs = einsum_expr("ijk,jr,kr->ir", [x, u, v])
        off = DEFAULT.with_(khatri_rao=False)
        on_c = pipeline.compile_request(make_request(expr, out_indices=out))
        off_c = pipeline.compile_request(make_request(expr, out_indices=out, tuning=off))
        assert [s.target for s in on_c.plan.steps] == [s.target for s in off_c.plan.steps]
        assert "when the temporary is larger" in " ".join(on_c.program.streams_text)
        assert "when the temporary is larger" not in " ".join(off_c.program.streams_text)
        assert len(gemms(off_c.program)) == 1
        np.testing.assert_allclose(ep.einsum("ijk,jr,kr->ir", x, u, v, tuning=off), want,
                                   rtol=1e-12)
        np.testing.assert_allclose(imp_evaluate(expr, inputs, out_indices=out, tuning=off),
                                   want, rtol=1e-12)


def test_two_products_add_into_one_output_and_a_given_out_is_overwritten():
    """Each step of a sum of products adds its gemm into the output; one product
    alone overwrites every cell of an `out=` array (it writes each once)."""
    i, j, k = ep.indices("i j k")
    A, B, C, D = (ep.tensor(n, 2) for n in "ABCD")
    e = ep.sum(j, A[i, j] * B[j, k]) + ep.sum(j, C[i, j] * D[j, k])
    ins = {"A": r((4, 5)), "B": r((5, 3)), "C": r((4, 6)), "D": r((6, 3))}
    req = make_request(e)
    assert len(gemms(pipeline.compile_request(req).program)) == 2
    check_backends(e, ins, backends=("c", "imp", "streams"))
    out = np.full((4, 3), 7.0)
    ep.evaluate(ep.sum(j, A[i, j] * B[j, k]), A=ins["A"], B=ins["B"], out=out)
    np.testing.assert_allclose(out, ins["A"] @ ins["B"], rtol=1e-12)
    ep.evaluate(e, out=out, **ins)
    np.testing.assert_allclose(out, ins["A"] @ ins["B"] + ins["C"] @ ins["D"], rtol=1e-12)


def test_threaded_kernels_keep_threaded_fallback_loops_and_agree():
    i, j, k, q = ep.indices("i j k q")
    A, B, X = ep.tensor("A", 2), ep.tensor("B", 2), ep.tensor("X", 3)
    a, bm, x = r((30, 20)), r((20, 10)), r((6, 7, 8))
    mm = ep.compile(ep.sum(j, A[i, j] * B[j, k]), threads=2)
    np.testing.assert_allclose(mm(A=a, B=bm), a @ bm, rtol=1e-12)
    mttkrp = ep.compile(ep.sum((j, k), X[i, j, k] * A[j, q] * B[k, q]), threads=2)
    u, v = r((7, 5)), r((8, 5))
    np.testing.assert_allclose(mttkrp(X=x, A=u, B=v), np.einsum("ijk,jr,kr->ir", x, u, v),
                               rtol=1e-12)
