"""The uniform band level kind (formats/uniform_band.py): one band shape for every
parent (an affine first coordinate, one width, clipped), its packing and
checks, the C header's text, real banded operators (scikit-fem), and every
backend on it (beside the central property, which draws it among its formats)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError
from etchpy.testing import check_backends, sparse_arrays
from tests.formats.test_structured_levels import backends_read

i, j = ep.indices("i j")
SR = ep.semirings.get("real")
FORMATS = [ep.Format.named("uniform_band", 2), ep.Format.named("uniform_band", 1),
           ep.Format(["dense", "uniform_band"], (1, 0)), ep.Format(["uniform_band", "dense"]),
           ep.Format(["compressed", "uniform_band"]), ep.Format(["uniform_band", "blocks"])]


def spmv(fmt="uniform_band"):
    A, x = ep.tensor("A", 2, fmt), ep.tensor("x", 1)
    return ep.compile(ep.sum(j, A[i, j] * x[j]))


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(FORMATS), st.data())
def test_pack_and_unpack_give_the_array_back(fmt, data):
    shape = (5, 6) if fmt.order == 2 else (7,)
    a = data.draw(sparse_arrays(shape, SR))
    t = ep.Tensor.from_dense(a, fmt)
    t.validate()
    assert np.array_equal(t.to_dense(), a)
    coords, values = ep.Tensor.from_dense(a, "coo").to_coords()
    assert np.array_equal(ep.Tensor.from_coords(coords, values, a.shape, fmt).to_dense(), a)


@pytest.mark.parametrize("n, h", [(2, 3), (6, 2), (9, 1), (40, 7)])
def test_a_band_matrix_packs_as_its_diagonals(n, h):
    """Rows i - h .. i + h: step 1, offset -h, width 2h + 1 (clipped at the
    edges), unless every row is full (step 0 is narrower then)."""
    d = sum(np.eye(n, k=k) * (k + h + 1) for k in range(-h, h + 1))
    t = ep.Tensor.from_dense(d, "uniform_band")
    want = [-h, 2 * h + 1, 1, n, n] if n > 2 * h else [0, n, 0, n, n]
    assert list(t.levels[1]["ushape"]) == want
    assert t.nnz == np.count_nonzero(d)
    x = np.arange(n, dtype=float)
    assert np.allclose(spmv()(A=t, x=x), d @ x)


def test_a_restriction_packs_with_step_two():
    """Row i of a 1-d full-weighting restriction reads columns 2i .. 2i + 2."""
    n = 8
    r = np.zeros((n, 2 * n + 1))
    for row in range(n):
        r[row, 2 * row:2 * row + 3] = [0.25, 0.5, 0.25]
    t = ep.Tensor.from_dense(r, "uniform_band")
    assert list(t.levels[1]["ushape"]) == [0, 3, 2, n, 2 * n + 1]
    x = np.random.default_rng(0).random(2 * n + 1)
    assert np.allclose(spmv()(A=t, x=x), r @ x)


def _ushape(values, vals=4, shape=(2, 4)):
    return ep.Tensor(shape, "uniform_band", ({}, {"ushape": np.array(values)}),
                     np.ones(vals), name="A")


@pytest.mark.parametrize("make, words", [
    (lambda: _ushape([0, 2, 1, 2]), "ushape has length 4 but needs 5"),
    (lambda: _ushape([0, 2, 1, 3, 4]), "records 3 parents of dimension 4"),
    (lambda: _ushape([0, -1, 1, 2, 4]), "width -1 and step 1"),
    (lambda: _ushape([5, 2, 1, 2, 4]), "offset 5 must lie in [-3, 4]"),
    (lambda: _ushape([0, 2, 1, 2, 4], vals=5), "vals"),
    (lambda: _ushape(np.array([0.0, 2, 1, 2, 4])), "ushape must hold integers"),
])
def test_bad_levels_are_refused_naming_the_array(make, words):
    with pytest.raises(InputError, match="tensor 'A'") as err:
        make()
    assert words in str(err.value)


def test_the_header_describes_the_level(tmp_path):
    A, x = ep.tensor("A", 2, "uniform_band"), ep.tensor("x", 1)
    _, header = ep.export_c(ep.sum(j, A[i, j] * x[j]), "spmv", tmp_path)
    text = " ".join(header.read_text().split())
    assert "level 1 (uniform_band, mode 1): A_ushape1 has 5 entries" in text


def test_explain_shows_the_bands_it_priced():
    d = np.eye(6) + np.eye(6, k=1)
    kern = spmv()
    kern(A=ep.Tensor.from_dense(d, "uniform_band"), x=np.ones(6))
    assert "A level 1: 6 runs read whole" in kern.explain() and "jump" in kern.explain()


@pytest.mark.parametrize("order, n", [(1, 50), (2, 30), (3, 20), (5, 12)])
def test_scikit_fem_operators_on_a_line(order, n):
    """Real banded operators: the stiffness and mass matrices of P1, P2 or Pp
    elements on a line (scikit-fem assembles them; nothing here generates the
    band), numbered by reverse Cuthill-McKee, in the uniform band, equal scipy's
    SpMV on every backend."""
    skfem = pytest.importorskip("skfem")
    from scipy.sparse.csgraph import reverse_cuthill_mckee
    from skfem.models.poisson import laplace, mass
    element = {1: skfem.ElementLineP1(), 2: skfem.ElementLineP2()}.get(order)
    basis = skfem.Basis(skfem.MeshLine(np.linspace(0, 1, n)),
                        element or skfem.ElementLinePp(order))
    for form in (laplace, mass):
        m = form.assemble(basis).tocsr()
        perm = reverse_cuthill_mckee(m, symmetric_mode=True)
        m = m[perm][:, perm]
        t = ep.Tensor.from_scipy(m, "uniform_band")
        assert t.levels[1]["ushape"][1] <= 4 * order + 1 < m.shape[0]
        x = np.random.default_rng(order).random(m.shape[0])
        assert np.allclose(spmv()(A=t, x=x), m @ x)
        check_backends(ep.sum(j, ep.tensor("A", 2, "uniform_band")[i, j] * ep.tensor("x", 1)[j]),
                       {"A": m.toarray(), "x": x}, backends=("streams", "c"))


@pytest.mark.heavy
@settings(max_examples=16, deadline=None)
@given(st.sampled_from(ep.semirings.all()), st.sampled_from(FORMATS[:1] + FORMATS[2:]),
       st.data())
def test_every_backend_reads_it(sr, fmt, data):
    """SpMV, a product with a csr operand (a leapfrog into the band) and a sum,
    on the interpreter, the streams and C; outputs in this format too."""
    backends_read(sr, fmt, data, ["dense", "uniform_band", "csf"])
