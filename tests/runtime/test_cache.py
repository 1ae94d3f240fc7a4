"""The disk cache: a second process reuses the built library, and restores its
kernels from their manifests without planning, rendering or parsing."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_second_process_reuses_disk_cache(tmp_path):
    env = dict(os.environ, ETCHPY_CACHE_DIR=str(tmp_path / "c"),
               ETCHPY_LOG_COMPILES=str(tmp_path / "log"))
    script = textwrap.dedent("""
        import numpy as np, scipy.sparse as sp, etchpy as ep
        i, j = ep.indices("i j")
        A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
        y = ep.compile(ep.sum(j, A[i, j] * x[j]))(A=sp.csr_array(np.eye(4)), x=np.arange(4.0))
        assert y.tolist() == [0.0, 1.0, 2.0, 3.0]
    """)
    subprocess.run([sys.executable, "-c", script], env=env, check=True)
    first = (tmp_path / "log").read_text().count("\n")
    assert first >= 1
    subprocess.run([sys.executable, "-c", script], env=env, check=True)
    assert (tmp_path / "log").read_text().count("\n") == first


MANIFEST_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np, scipy.sparse as sp, etchpy as ep
    i, j, k = ep.indices("i j k")
    A, B, x = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr"), ep.tensor("x", 1)
    M = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0], [4, 0, 0]]))
    spmv = ep.compile(ep.sum(j, A[i, j] * x[j]))
    y = spmv(A=M, x=np.arange(3.0))
    spgemm = ep.compile(ep.sum(j, A[i, j] * B[j, k]), output="csr")
    C = spgemm(A=M, B=M)
    print(json.dumps({"manifest": [spmv.from_manifest, spgemm.from_manifest],
                      "y": y.tolist(), "C": C.toarray().tolist(),
                      "jinja2": "jinja2" in sys.modules, "pycparser": "pycparser" in sys.modules,
                      "explains": "optimizer:" in spmv.explain()}))
""")


def test_new_process_restores_kernels_from_their_manifests(tmp_path):
    """A second process asking for the same kernels neither plans, lowers nor renders
    (no jinja2) nor parses a cdef (no pycparser); a corrupt manifest is rebuilt."""
    env = dict(os.environ, ETCHPY_CACHE_DIR=str(tmp_path / "c"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def child():
        out = subprocess.run([sys.executable, "-c", MANIFEST_CHILD], env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)
    M = np.array([[1.0, 0, 2], [0, 3, 0], [4, 0, 0]])
    want = {"y": (M @ np.arange(3.0)).tolist(), "C": (M @ M).tolist(), "explains": True}
    first = child()
    assert first["manifest"] == [False, False] and first["jinja2"]
    assert {k: first[k] for k in want} == want
    second = child()
    assert second["manifest"] == [True, True]
    assert not second["jinja2"] and not second["pycparser"]
    assert {k: second[k] for k in want} == want
    for f in (tmp_path / "c").glob("*-req-*.json"):
        f.write_bytes(b"not a pickle")
    third = child()
    assert third["manifest"] == [False, False]
    assert {k: third[k] for k in want} == want
    assert child()["manifest"] == [True, True]
