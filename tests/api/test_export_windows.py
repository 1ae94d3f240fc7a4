"""An exported kernel that reads an operand through a window: the header says what
each of the window's size parameters is (lengths, the operand's own sizes, lo,
step), and a C main that follows it, reading outside the operand too, gets what
the Python call gets."""
import shutil

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from test_export import build_and_run, c_array

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


@pytest.mark.parametrize("lo, hi, step", [(3, 25, 2), (-2, 31, 3)])
def test_a_windowed_spmv_runs_from_c_as_its_header_says(tmp_path, lo, hi, step):
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    expr = ep.sum(j, A[i["lo":"hi":"s"], j] * x[j])
    c_path, h_path = ep.export_c(expr, "wspmv", tmp_path)
    header = h_path.read_text()
    assert "A's window: first coordinate (lo) of the window on mode 0" in header
    assert "size of mode 1 of A (its arrays' own size)" in header
    assert "a mode without a window passes its" in header
    M = sp.random(30, 20, density=0.3, format="csr", random_state=5)
    xv = np.linspace(-1, 1, 20)
    n = max(0, -((lo - hi) // step))
    main = f"""
#include <stdio.h>
#include "wspmv.h"
{c_array("int64_t", "pos", M.indptr)}
{c_array("int64_t", "crd", M.indices)}
{c_array("double", "vals", M.data)}
{c_array("double", "x", xv)}
int main(void) {{
    double y[{n}];
    /* lengths, the operand's sizes, each lo, each step; mode 1 has no window */
    int rc = wspmv({n}, 20, 30, 20, {lo}, 0, {step}, 1, pos, crd, vals, 20, x, y, 0);
    if (rc) return 10 + rc;
    for (int w = 0; w < {n}; w++) printf("%.17g\\n", y[w]);
    return 0;
}}
"""
    got = np.array(build_and_run(tmp_path, "wspmv", main), dtype=float)
    want = ep.evaluate(expr, A=M, x=xv, lo=lo, hi=hi, s=step)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    rows = [lo + w * step for w in range(n)]
    full = M @ xv
    np.testing.assert_allclose(got, [full[r] if 0 <= r < 30 else 0.0 for r in rows],
                               rtol=1e-14, atol=1e-300)
