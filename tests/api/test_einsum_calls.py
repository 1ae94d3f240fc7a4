"""ep.einsum's prepared calls (runtime.einsum_calls) and its matmul dispatch
(runtime.matmul): a call that hits its prepared entry gives what the full path
gives and what numpy gives; dense real products that are one matrix product run
as numpy's matmul, nothing else does."""
import json
import pathlib

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import api
from etchpy.expr.einsum import einsum_parts
from etchpy.runtime import einsum_calls
from etchpy.runtime.matmul import Cast, Dot, InOrder, Matmul, dot as matmul_dot, recipe

pytestmark = pytest.mark.usefixtures("shared_cache")

CORPUS = json.loads((pathlib.Path(__file__).parent.parent / "expr" /
                     "einsum_specs.json").read_text())
PAIRS = [(s, [tuple(x) for x in sh]) for s, sh, ok in CORPUS if ok and len(sh) == 2]


def entry(spec, *ops, **options):
    """The prepared call of ep.einsum(spec, *ops, **options), or None: its own
    entry, or the `ndarray.dot` kept by spec, dtypes and numbers of axes that such
    a call hits first (an earlier call of other sizes, as another test file's,
    puts only that)."""
    key = einsum_calls.einsum_key(spec, ops, options.get("semiring"),
                                  options.get("output"), "c", options.get("tuning"))
    found = api._einsum_calls.get(key)
    if found is None and not options and len(ops) == 2 and all(
            type(x) is np.ndarray for x in ops):
        a, b = ops
        found = api._einsum_calls.dots.get((spec, a.dtype, b.dtype, a.ndim, b.ndim))
    return found


def dense(x):
    if isinstance(x, ep.Tensor):
        return x.to_dense()
    return x.toarray() if hasattr(x, "toarray") else np.asarray(x)


@pytest.mark.parametrize("spec, shapes", PAIRS, ids=[repr(s) for s, _ in PAIRS])
def test_matmul_recipes_agree_with_numpy_on_the_corpus(spec, shapes):
    """Every two-operand spec of the corpus: where a recipe exists it computes
    numpy's einsum, as a fresh C-contiguous array (a numpy scalar for no index)."""
    rng = np.random.default_rng(1)
    ops = [rng.random(s) for s in shapes]
    parts = einsum_parts(spec, ops)
    made = recipe(parts.names, [ix.name for ix in parts.out], shapes)
    if made is None:
        return
    got, want = made(*ops), np.einsum(spec, *ops)
    assert np.shape(got) == np.shape(want) and np.allclose(got, want)
    if np.ndim(want):
        assert got.flags.c_contiguous and not any(np.shares_memory(got, x) for x in ops)
    else:
        assert isinstance(got, np.float64)


def test_the_corpus_has_matmul_recipes():
    found = 0
    for spec, shapes in PAIRS:
        parts = einsum_parts(spec, [np.ones(s) for s in shapes])
        found += recipe(parts.names, [ix.name for ix in parts.out], shapes) is not None
    assert found >= 20


BLAS = [("ij,jk->ik", (5, 4), (4, 3)), ("ij,kj->ik", (5, 4), (3, 4)),
        ("ji,jk->ik", (4, 5), (4, 3)), ("ij,jk->ki", (5, 4), (4, 3)),
        ("ij,j->i", (5, 4), (4,)), ("j,jk->k", (4,), (4, 3)), ("i,i->", (6,), (6,)),
        ("bij,bjk->bik", (2, 5, 4), (2, 4, 3)), ("bij,bj->bi", (2, 5, 4), (2, 4)),
        ("ijk,jk->i", (5, 4, 3), (4, 3)), ("ij,ij->", (3, 4), (3, 4)),
        ("...ij,...jk->...ik", (2, 5, 4), (2, 4, 3)), ("ab,bcd->acd", (2, 3), (3, 4, 5)),
        ("jb,bi->ji", (3, 2), (2, 4)), ("ijk,kl->ijl", (2, 3, 4), (4, 5)),
        ("abck,k->abc", (2, 3, 2, 4), (4,)), ("ijk,lk->ijl", (2, 3, 4), (5, 4)),
        ("ijk,jl->ilk", (2, 3, 4), (3, 5)), ("lj,ijk->ilk", (5, 3), (2, 3, 4)),
        ("aijk,jl->ailk", (2, 3, 4, 5), (4, 3)), ("ijkl,jm->imkl", (2, 3, 4, 5), (3, 6)),
        ("mj,aijkl->aimkl", (3, 4), (2, 3, 4, 5, 2))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("spec, s0, s1", BLAS, ids=[b[0] for b in BLAS])
def test_dense_real_products_run_as_matmul(spec, s0, s1, dtype):
    rng = np.random.default_rng(0)
    a, b = rng.random(s0).astype(dtype), rng.random(s1).astype(dtype)
    want = np.einsum(spec, a, b)
    for _ in range(2):                  # prepared, then looked up
        got = ep.einsum(spec, a, b)
        assert np.asarray(got).dtype == dtype
        assert np.allclose(got, want, rtol=1e-5)
    call = entry(spec, a, b)     # numpy's product itself when nothing surrounds it:
    vector = spec in ("bij,bj->bi", "ijk,jk->i", "abck,k->abc")   # (of more than 2 axes)
    assert isinstance(call, InOrder) == vector      # (operands in other orders: the kernel)
    call = call.product if vector else call
    direct = type(call) is Dot or call is np.matmul    # ndarray.dot (matmul up to 2-d)
    assert isinstance(call, Matmul) or direct
    assert direct or spec not in ("ij,jk->ik", "ij,j->i", "bij,bjk->bik", "ijk,kl->ijl",
                                  "abck,k->abc")        # (a @ b: matmul broadcasts ij, abc)
    assert (call is np.matmul) == (max(a.ndim, b.ndim) > 2 and direct)
    assert np.allclose(full_path(spec, a, b), want, rtol=1e-5)


def tuning_fields(tuning) -> dict:
    """The fields of a tuning option, as a dict (the full path's form)."""
    tuned = ep.tuning.of(tuning)
    return {f: getattr(tuned, f) for f in ep.Tuning.__dataclass_fields__}


def full_path(spec, *ops, tuning=None, **options):
    """ep.einsum through the full front end (a tuning given as a dict is not keyed)."""
    return ep.einsum(spec, *ops, tuning=tuning_fields(tuning), **options)


NOT_BLAS = [
    ("ij,jk->ik", dict(semiring="min_plus"), np.float64),
    ("ij,jk->ik", dict(semiring="max_plus"), np.float64),
    ("ij,jk->ik", dict(semiring=ep.semirings.max_times), np.float64),
    ("ij,jk->ik", {}, np.int64),
    ("ij,jk->ik", {}, np.bool_),
    ("ij,jk->ik", dict(tuning="noopt"), np.float64),
    ("ij,jk->ik", dict(tuning=ep.Tuning(blas=False)), np.float64),
    ("ij,jk->ik", dict(output="csr"), np.float64),
    ("ij,jk->ij", {}, np.float64),      # k summed within one operand
    ("ij,ij->ij", {}, np.float64),      # nothing contracted
    ("ij,jkl->kil", {}, np.float64),    # the free indices interleaved
    ("ii,ij->j", {}, np.float64),       # a diagonal
]
SHAPES = {"ij,jk->ik": ((3, 4), (4, 5)), "ij,jk->ij": ((3, 4), (4, 5)),
          "ij,ij->ij": ((3, 4), (3, 4)), "ij,jkl->kil": ((3, 4), (4, 5, 2)),
          "ii,ij->j": ((3, 3), (3, 4))}


@pytest.mark.parametrize("spec, options, dtype", NOT_BLAS,
                         ids=[f"{s} {o} {np.dtype(d)}" for s, o, d in NOT_BLAS])
def test_other_products_run_their_kernel(spec, options, dtype):
    rng = np.random.default_rng(2)
    a, b = (rng.integers(0, 3, s).astype(dtype) for s in SHAPES[spec])
    first = ep.einsum(spec, a, b, **options)
    again = ep.einsum(spec, a, b, **options)
    assert isinstance(entry(spec, a, b, **options), einsum_calls.KernelCall)
    slow = full_path(spec, a, b, **options)
    for got in (first, again):
        assert np.array_equal(dense(got), dense(slow))
    if not options:
        assert np.allclose(dense(again), np.einsum(spec, a, b))


CASES = [
    ("ij,j->i", "csr"), ("ij,jk->ik", "csc"), ("ij,jk->ik", "coo"), ("ij,jk->ik", "tensor"),
    ("ijk,jr,kr->ir", "dense"), ("ii->i", "dense"), ("ij->", "csr"), ("i,j->ij", "dense"),
    ("...ij,...jk->...ik", "dense"), ("ij,kj->ik", "csr"),
]
SEMIRINGS = [None, "min_plus", "max_plus", "boolean", "integer", "real32"]


def _operands(spec, kind, semiring, rng):
    terms = spec.split("->")[0].split(",")
    sizes = {"i": 4, "j": 3, "k": 5, "r": 2}
    shapes = [(2, *(sizes[c] for c in t[3:])) if t.startswith("...") else
              tuple(sizes[c] if t.count(c) == 1 else 4 for c in t) for t in terms]
    dtype = {"boolean": np.bool_, "integer": np.int64, "real32": np.float32}.get(
        semiring, np.float64)
    ops = [(rng.random(s) < 0.6) * rng.integers(1, 4, s) for s in shapes]
    ops = [x.astype(dtype) for x in ops]
    if kind in ("csr", "csc", "coo"):
        ops[0] = sp.coo_array(ops[0]).asformat(kind) if ops[0].ndim == 2 else ops[0]
    elif kind == "tensor":
        ops[0] = ep.Tensor.from_dense(ops[0], "csr")
    return ops


# each case in the real semiring and in one other, the others taken in turn (each
# other semiring meets two cases, a sparse and a dense operand among them)
PAIRED = [(s, k, sr) for n, (s, k) in enumerate(CASES)
          for sr in (None, SEMIRINGS[1 + n % (len(SEMIRINGS) - 1)])]


@pytest.mark.parametrize("spec, kind, semiring", PAIRED,
                         ids=[f"{s} {k} {sr}" for s, k, sr in PAIRED])
def test_prepared_calls_give_the_full_paths_value(spec, kind, semiring):
    """Sparse operands, Tensors and semirings other than real: the looked-up call
    equals the full path (and numpy's einsum in the real semiring)."""
    rng = np.random.default_rng(3)
    ops = _operands(spec, kind, semiring, rng)
    options = {} if semiring is None else {"semiring": semiring}
    first, again = ep.einsum(spec, *ops, **options), ep.einsum(spec, *ops, **options)
    assert entry(spec, *ops, **options) is not None
    slow = full_path(spec, *ops, **options)
    assert np.allclose(dense(first), dense(slow)) and np.allclose(dense(again), dense(slow))
    if semiring is None:
        assert np.allclose(dense(again), np.einsum(spec, *map(dense, ops)))


def test_a_shape_that_disagrees_is_refused_after_a_prepared_call():
    a = np.ones((3, 4))
    ep.einsum("ij,jk->ik", a, np.ones((4, 5)))
    with pytest.raises(ep.InputError, match="size"):
        ep.einsum("ij,jk->ik", a, np.ones((5, 5)))
    # a size-1 dimension broadcasts (numpy's meaning), through the full path
    got = ep.einsum("ij,jk->ik", np.ones((3, 1)), np.ones((4, 5)))
    assert np.allclose(got, np.einsum("ij,jk->ik", np.ones((3, 1)), np.ones((4, 5))))


def test_values_changed_in_place_are_read_again():
    a, b = np.ones((3, 3)), np.ones((3, 3))
    ep.einsum("ij,jk->ik", a, b)
    a[0, 0] = 5.0
    assert ep.einsum("ij,jk->ik", a, b)[0, 0] == 7.0


def test_unkeyed_operands_and_backends_take_the_full_path():
    n = len(api._einsum_calls)
    assert ep.einsum("i,i->", [1.0, 2.0], np.ones(2)) == 3.0
    assert ep.einsum("i,i->", np.ones(2), np.ones(2), backend="reference") == 2.0
    assert ep.einsum("i,i->", np.ones(2), np.ones(2), tuning={}) == 2.0
    assert len(api._einsum_calls) <= n + 1


def test_a_kernel_call_follows_etchpy_num_threads(monkeypatch):
    a = np.ones((3, 3))
    monkeypatch.delenv("ETCHPY_NUM_THREADS", raising=False)
    ep.einsum("ij,jk->ik", a, a, semiring="min_plus")
    call = entry("ij,jk->ik", a, a, semiring="min_plus")
    assert call.kern.threads == 1
    monkeypatch.setenv("ETCHPY_NUM_THREADS", "2")
    assert np.array_equal(ep.einsum("ij,jk->ik", a, a, semiring="min_plus"), 2 * a)
    assert call.kern.threads == 2


def test_the_table_is_bounded():
    calls = einsum_calls.Calls(limit=3)
    for k in range(10):
        calls.put(("k", k), k)
        assert len(calls) <= 3
    assert calls.get(("k", 9)) == 9 and calls.get(None) is None


def test_two_numpy_operands_hit_their_entry_with_new_arrays_each_call():
    """The default options' two-numpy-operand lookup (built inline in ep.einsum):
    new arrays of the kind, values changed in place and another dtype or shape
    each give numpy's answer; a numpy subclass takes the keyed path."""
    rng = np.random.default_rng(5)
    for spec, s0, s1 in [("ij,j->i", (6, 5), (5,)), ("ij,kj->ik", (6, 5), (4, 5)),
                         ("ij,ij->i", (6, 5), (6, 5)), ("i,j->ij", (3,), (4,))]:
        for dtype in (np.float64, np.float32, np.int64):
            for _ in range(3):
                a, b = ((rng.random(s) * 10).astype(dtype) for s in (s0, s1))
                assert np.allclose(ep.einsum(spec, a, b), np.einsum(spec, a, b), rtol=1e-5)
                a *= 2
                assert np.allclose(ep.einsum(spec, a, b), np.einsum(spec, a, b), rtol=1e-5)
            dot_key = (spec, a.dtype, b.dtype, a.ndim, b.ndim)
            assert entry(spec, a, b) is not None or dot_key in api._dots
    class Sub(np.ndarray):
        pass
    m = np.ones((2, 2)).view(Sub)
    assert np.allclose(ep.einsum("ij,jk->ik", m, np.ones((2, 2))), 2 * np.ones((2, 2)))


def test_plain_products_are_found_by_spec_dtypes_and_axes():
    """A product that is ndarray.dot under the default options is kept by spec,
    dtypes and numbers of axes: other sizes reuse it and give numpy's answer;
    sizes that disagree still raise the InputError of the full path; the entry
    goes when the table is emptied."""
    rng = np.random.default_rng(7)
    a, x = rng.random((3, 4)), rng.random(4)
    assert np.allclose(ep.einsum("ij,j->i", a, x), a @ x)
    assert type(api._dots.get(("ij,j->i", a.dtype, x.dtype, 2, 1))) is Dot
    for n, m in [(5, 6), (1, 9), (0, 3)]:
        b, y = rng.random((n, m)), rng.random(m)
        assert np.allclose(ep.einsum("ij,j->i", b, y), b @ y)
    with pytest.raises(ep.InputError, match="size"):
        ep.einsum("ij,j->i", a, np.ones(7))
    assert np.allclose(ep.einsum("ij,j->i", a, np.ones(1)), a.sum(axis=1))   # broadcast
    with pytest.raises(ep.ExpressionTypeError, match="3 dimensions"):
        ep.einsum("ij,j->i", np.ones((2, 3, 4)), x)
    calls = einsum_calls.Calls(limit=1)
    dot = Dot(matmul_dot, 1 << 20)
    calls.put(("k", 1), dot, dot_key=("d", 1))
    assert calls.dots == {("d", 1): dot}
    calls.put(("k", 2), len, dot_key=("d", 2))
    assert calls.dots == {}


MIXED = [("ij,jk->ik", (5, 4), (4, 3), np.int64, np.float64),
         ("ij,j->i", (5, 4), (4,), np.float32, np.float64),
         ("ij,j->i", (5, 4), (4,), np.int32, np.float32),     # numpy: float64
         ("ij,kj->ik", (5, 4), (3, 4), np.float64, np.bool_),
         ("bij,bjk->bik", (2, 5, 4), (2, 4, 3), np.float16, np.float32),
         ("ij,jk->ki", (5, 4), (4, 3), np.uint8, np.float64),
         ("ij,jk->ik", (5, 4), (4, 3), np.complex128, np.float64),
         ("ij,j->i", (5, 4), (4,), np.complex64, np.int64),       # numpy: complex128
         ("ij,jk->ik", (5, 4), (4, 3), np.float16, np.float16)]   # ep: real32, float32


@pytest.mark.parametrize("spec, s0, s1, d0, d1", MIXED, ids=[f"{m[0]} {np.dtype(m[3])} "
                                                             f"{np.dtype(m[4])}" for m in MIXED])
def test_products_of_other_dtypes_cast_then_run_as_matmul(spec, s0, s1, d0, d1):
    """A dense real or complex product of operands of other dtypes that numpy casts
    safely to the carrier (of the semiring numpy's result type gives) runs as
    ndarray.dot, which casts them itself, or after a Cast (transposes or batches
    around the product; float16, whose carrier is not numpy's result type): the
    carrier's dtype and numpy's values, new arrays each call; with
    Tuning.blas_casts off, the kernel gives the same."""
    rng = np.random.default_rng(3)
    for _ in range(3):
        a, b = (rng.random(s0) * 10).astype(d0), (rng.random(s1) * 10).astype(d1)
        want = np.einsum(spec, a, b)
        got = ep.einsum(spec, a, b)
        dtype = ep.semirings.for_dtype(want.dtype).dtype     # the carrier ep.einsum infers
        assert got.dtype == dtype and np.allclose(got, want, rtol=1e-3)
    call = entry(spec, a, b)      # numpy's product, casting itself to its result type
    assert not isinstance(call, einsum_calls.KernelCall)
    assert isinstance(call, Cast) == (np.result_type(a, b) != dtype or type(call) is not Dot)
    no_casts = ep.Tuning(blas_casts=False)        # keyed by identity: the same object
    off = ep.einsum(spec, a, b, tuning=no_casts)
    assert isinstance(entry(spec, a, b, tuning=no_casts), einsum_calls.KernelCall)
    assert off.dtype == dtype and np.allclose(off, want, rtol=1e-3)


def test_products_of_integers_or_other_semirings_keep_their_kernel():
    """A product of two integer operands (the integer semiring) and one under
    min_plus are not cast into a matmul; complex operands run as numpy's matmul."""
    a, b = np.arange(6).reshape(2, 3), np.ones((3, 2), np.complex128)
    assert np.allclose(ep.einsum("ij,jk->ik", b.T, b), b.T @ b)
    assert entry("ij,jk->ik", b.T, b) is not None
    assert not isinstance(einsum_entry("ij,jk->ik", a, np.ones((3, 2)), semiring="min_plus"),
                          Cast)
    c = np.arange(6).reshape(3, 2)
    assert np.array_equal(ep.einsum("ij,jk->ik", a, c), a @ c)
    assert not isinstance(entry("ij,jk->ik", a, c), Cast)


def einsum_entry(spec, a, b, **options):
    ep.einsum(spec, a, b, **options)
    return entry(spec, a, b, **options)


@pytest.mark.parametrize("limit", [0, 1 << 18, 1 << 40])
def test_strided_operands_give_numpys_product(limit):
    """Strided views (columns or rows skipped, transposed slices) of any size,
    below and above Tuning.strided_copy_bytes, of one dtype or two: numpy's
    matmul's answer, through the default options' lookup and through a Tuning."""
    rng = np.random.default_rng(9)
    tuned = ep.Tuning(strided_copy_bytes=limit)
    for n, dtype in [(4, np.float64), (40, np.float64), (200, np.float64), (40, np.int64),
                     (200, np.float16)]:
        a, b, v = (rng.random((n, n)) * 9).astype(dtype), rng.random((n, n)), rng.random(n)
        for x, y, spec in [(a[:, ::2], v[::2], "ij,j->i"), (a[::2, :], v, "ij,j->i"),
                           (a[:, ::2], b[::2, ::3], "ij,jk->ik"), (a[::2].T, b[::2], "ij,jk->ik"),
                           (v[::3], a[::3, ::2], "j,jk->k")]:
            want = x.astype(np.float64) @ y.astype(np.float64)
            for _ in range(2):
                assert np.allclose(ep.einsum(spec, x, y), want, rtol=1e-3)
                assert np.allclose(ep.einsum(spec, x, y, tuning=tuned), want, rtol=1e-3)



@pytest.mark.parametrize("kind", ["csr", "csc", "coo", "tensor"])
def test_one_sparse_operand_given_twice_is_one_tensor_and_keyed_so(kind):
    """ep.einsum("ij,ij->", A, A): the same sparse object twice is one tensor, read
    once (its product with itself one walk); the same spec on two objects, then on
    the first one twice again, each gives its own answer (the key holds which
    positions share an object)."""
    A = sp.random_array((30, 30), density=0.2, random_state=3, format="csr")
    A2 = A.copy()
    A2.data = A2.data * 3
    wrap = ((lambda M: ep.Tensor.from_scipy(M, "csr")) if kind == "tensor"
            else (lambda M: M.asformat(kind)))
    a, a2 = wrap(A), wrap(A2)
    parts = einsum_parts("ij,ij->", [a, a])
    assert parts.at == ("T0", "T0") and set(parts.tensors) == {"T0"}
    assert einsum_parts("ij,ij->", [a, a2]).at == ("T0", "T1")
    D = A.toarray()
    for _ in range(2):
        assert np.isclose(ep.einsum("ij,ij->", a, a), (D * D).sum())
        assert np.isclose(ep.einsum("ij,ij->", a, a2), 3 * (D * D).sum())
        assert np.isclose(ep.einsum("ij,ij->", a2, a2), 9 * (D * D).sum())
        np.testing.assert_allclose(ep.einsum("ij,j,ij->i", a, np.ones(30), a),
                                   (D * D).sum(axis=1))
        assert np.isclose(ep.einsum("ij,ji->", a, a), (D * D.T).sum())     # two layouts
    assert einsum_calls.einsum_key("ij,ij->", (a, a), None, None, "c", None) != \
        einsum_calls.einsum_key("ij,ij->", (a, a2), None, None, "c", None)

