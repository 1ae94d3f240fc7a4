"""An intersection's rows hint the coordinates of the row tuning.met_prefetch
rows on (lower.schedule.met_prefetch): the step is emitted where a full loop
over rows opens the intersection's segments, only with the switch on, and
answers stay scipy's (unchecked build, checked build, and the fused checks)."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep

MUL = "C[i, j] = A[i, j] * B[i, j]"
CSR = {"A": "csr", "B": "csr"}
HINT = "EP_PREFETCH(&A_crd1[ep_min(ep_max(A_pos1[ep_min((i_c + 7), A_dim0)]"


def c_of(formats=CSR, **tuning):
    return ep.compile(MUL, formats=formats, output="csr", tuning=tuning).source().c


def test_the_hint_is_emitted_only_with_the_switch_on():
    assert HINT in c_of(met_prefetch=7)
    assert HINT.replace("A_", "B_") in c_of(met_prefetch=7)
    assert "EP_PREFETCH(&A_crd1" not in c_of()                   # off by default
    assert "EP_PREFETCH(&A_crd1" not in c_of(met_prefetch=7, prefetch=False)
    assert "EP_PREFETCH(&A_crd1" not in c_of({"A": "dcsr", "B": "dcsr"}, met_prefetch=7)


@pytest.mark.parametrize("tuning", [{"met_prefetch": 3}, {"met_prefetch": 3, "met_checks": True,
                                                          "check_block": 4}])
def test_answers_equal_scipys(tuning):
    rng = np.random.default_rng(3)
    A = sp.random_array((40, 30), density=0.2, format="csr", random_state=rng)
    B = sp.random_array((40, 30), density=0.2, format="csr", random_state=rng)
    B = sp.csr_array(B + A[::-1])                       # some rows left early, some met
    kern = ep.compile(MUL, formats=CSR, output="csr", tuning=tuning)
    want = A.multiply(B).toarray()
    for a, b in ((A, B), (ep.Tensor.from_scipy(A, "csr"), ep.Tensor.from_scipy(B, "csr"))):
        got = kern(A=a, B=b)
        got = got.to_scipy() if hasattr(got, "to_scipy") else got
        np.testing.assert_allclose(sp.csr_array(got).toarray(), want)
