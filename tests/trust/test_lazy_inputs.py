"""ep.lazy on scipy operands whose arrays were written or rebound since scipy
built them (lazy.wrap.checked, runtime.scipy_arrays): a program's result is
numpy's on the matrix the arrays describe, or an InputError naming ep.lazy's
operand; never a generic error from inside scipy, never a value read past an
array (an index out of range gave 1e194 where numpy gives 0.2) and never a crash
(scipy's code trusts the arrays)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError

RNG = np.random.default_rng(5)
V = RNG.random((6, 3))
U = RNG.random((6, 3))
LAYOUTS = ["csr", "csc", "coo", "csr_matrix", "dia", "bsr"]
MUTATIONS = ["none", "index_range", "index_negative", "pointer_falls", "pointer_end",
             "short_data", "long_indices", "float_indices", "unsorted", "duplicate"]


def operand(layout, seed):
    dense = sp.random(6, 6, density=0.5, random_state=seed).toarray()
    match layout:
        case "csr_matrix":
            return sp.csr_matrix(dense)
        case "dia":
            return sp.dia_array(dense)
        case "bsr":
            return sp.bsr_array(dense, blocksize=(2, 2))
    return getattr(sp, f"{layout}_array")(dense)


def mutate(m, how, data):
    """Write or rebind m's arrays as a user could; names follow scipy's."""
    idx = {"coo": "col", "dia": "offsets"}.get(m.format, "indices")
    q = getattr(m, idx) if m.format != "coo" else m.coords[1]
    if how in ("pointer_falls", "pointer_end") and not hasattr(m, "indptr"):
        how = "index_range"
    if not len(q) and how != "none":
        how = "long_indices"
    at = data.draw(st.integers(0, max(len(q) - 1, 0)))
    match how:
        case "index_range":
            q[at] = data.draw(st.sampled_from([6, 99, 2**31 - 1]))
        case "index_negative":
            q[at] = -data.draw(st.integers(1, 7))
        case "pointer_falls":
            m.indptr[1] = m.indptr[-1] + 1
        case "pointer_end":
            m.indptr[-1] += 1
        case "short_data":
            m.data = m.data[:-1]
        case "long_indices" if m.format == "coo":
            m.coords = (np.append(m.coords[0], 0), np.append(m.coords[1], 0))
        case "long_indices":
            setattr(m, idx, np.append(q, 0))
        case "float_indices" if m.format == "coo":
            m.coords = (m.coords[0], m.coords[1].astype(float))
        case "float_indices":
            setattr(m, idx, q.astype(float))
        case "unsorted" | "duplicate" if len(q) > 1:
            at = min(at, len(q) - 2)
            q[at], q[at + 1] = (q[at + 1], q[at]) if how == "unsorted" else (q[at], q[at])


def scipy_meaning(m):
    """The dense matrix m's arrays describe (duplicates summed), or None."""
    try:
        m = m.copy()                       # check_format may prune or cast its arrays
        if m.format in ("csr", "csc", "bsr"):
            m.check_format(full_check=True)
        return m.toarray()
    except (ValueError, IndexError, TypeError):
        return None


@settings(max_examples=30)
@given(layout=st.sampled_from(LAYOUTS), how=st.sampled_from(MUTATIONS),
       seed=st.integers(0, 50), data=st.data())
def test_lazy_programs_on_written_scipy_operands(layout, how, seed, data):
    m = operand(layout, seed)
    mutate(m, how, data)
    meaning = scipy_meaning(m)
    try:
        X = ep.lazy(m)
        got = ep.compute(X @ ep.lazy(V), (X * (ep.lazy(U) @ ep.lazy(V).T)).sum())
    except InputError as err:
        assert "ep.lazy's operand" in str(err), err
        return
    assert meaning is not None, f"{how} accepted"
    np.testing.assert_allclose(got[0], meaning @ V)
    np.testing.assert_allclose(got[1], (meaning * (U @ V.T)).sum())


@pytest.mark.parametrize("how", ["index_range", "pointer_falls", "short_data",
                                 "float_indices"])
def test_minimal_cases(how):
    """The cases found by hand: a wrong answer, a RuntimeError from scipy's C++,
    scipy's ValueErrors."""
    m = sp.csr_array(np.eye(6))
    {"index_range": lambda: m.indices.__setitem__(0, 99),
     "pointer_falls": lambda: m.indptr.__setitem__(2, 0),
     "short_data": lambda: setattr(m, "data", m.data[:-1]),
     "float_indices": lambda: setattr(m, "indices", m.indices.astype(float))}[how]()
    with pytest.raises(InputError, match="ep.lazy's operand"):
        (ep.lazy(m) @ ep.lazy(V)).compute()
