"""The `etchpy` command line: `demo` runs and checks every kernel, `version` and `--version`
print, a bare `etchpy` prints help."""
import os
import re
import subprocess
import sys
from importlib.metadata import entry_points

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import cli


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    path = tmp_path / "etchpy-cache"
    monkeypatch.setenv("ETCHPY_CACHE_DIR", str(path))
    return path


def test_demo_small_passes_every_check(cache_dir, capsys):
    rc = cli.main(["demo", "--size", "small"])
    out = capsys.readouterr().out
    assert rc == 0, out
    checks = re.findall(r"^\s+check\s+(PASS|FAIL)\b", out, flags=re.M)
    assert checks == ["PASS"] * len(cli.CASES), out
    assert "FAIL" not in out
    # every kernel's block names its expression, formats, semiring and timings
    for word in ("expr", "formats", "semiring", "compile", "time"):
        assert len(re.findall(rf"^\s+{word}\s", out, flags=re.M)) == len(cli.CASES)
    assert "Σ_j A[i,j]·x[j]" in out
    assert "min_plus" in out
    assert f"demo: {len(cli.CASES)} kernels, all checks passed" in out
    assert cache_dir.is_dir()      # the kernels were built where we asked


def _scaled(title, factor):
    """A case computing 2·x whose reference is factor·x."""
    def make(rng, size):
        i, = ep.indices("i")
        x = ep.tensor("x", 1)
        xv = rng.random(5)
        return cli.Setup(title, 2 * x[i], "y[i]", "x dense 5", {"x": xv},
                         lambda: factor * xv, f"numpy {factor} * x")
    return make


def test_demo_reports_failures_and_exits_nonzero(cache_dir, capsys):
    def broken(rng, size):
        raise RuntimeError("boom")

    rc = cli.demo("small", 0, cases=(_scaled("good one", 2), _scaled("bad one", 3), broken))
    out = capsys.readouterr().out
    assert rc == 1
    assert re.findall(r"^\s+check\s+(PASS|FAIL)\b", out, flags=re.M) == ["PASS", "FAIL", "FAIL"]
    assert "RuntimeError: boom" in out
    assert "demo: 3 kernels, 2 check(s) FAILED: bad one, broken" in out


def test_bench_demo_adds_how_built_ratio_and_summary(cache_dir):
    """bench/demo.py runs the same cases with more detail (bench is not installed: it
    imports etchpy.cli, never the other way)."""
    demo = pytest.importorskip("bench.demo")
    r = demo.run_one(_scaled("twice", 2), "small", 0, 1, 2)
    assert r.passed, r.lines
    rows = dict(r.lines)
    assert rows["compile"].endswith(("cold C build)", "disk-cached .so)",
                                     "library already loaded in this process)"))
    assert rows["ratio"].startswith("etchpy/ref ")
    table = demo.summary([r], 2)
    assert table[-1].startswith("twice") and "PASS" in table[-1]


def test_compare_sparse_dense_and_infinite_results():
    a = sp.csr_array(np.array([[1.0, 0.0], [0.0, 2.0]]))
    assert cli.compare(a, a.copy()) == (True, "exact match")
    passed, message = cli.compare(a, 2 * a)
    assert not passed and "max abs err 2" in message
    assert not cli.compare(a, sp.csr_array((3, 2)))[0]
    inf = np.array([0.0, np.inf])
    assert cli.compare(inf, inf.copy()) == (True, "exact match")
    assert cli.compare(inf, np.array([0.0, 1.0])) == (False, "infinite entries differ")
    assert cli.compare(np.array([1.0]), np.array([1.0 + 1e-12]))[0]


def test_version_in_process(capsys):
    assert cli.main(["version"]) == 0
    assert capsys.readouterr().out == f"etchpy {ep.__version__}\n"


@pytest.mark.parametrize("command", ["version", "--version"])
def test_python_dash_m_version(tmp_path, command):
    env = dict(os.environ, ETCHPY_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-m", "etchpy", command], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"etchpy {ep.__version__}\n"


def test_bare_command_prints_help_and_succeeds(capsys):
    assert cli.main([]) == 0
    out = capsys.readouterr().out
    assert "demo" in out and "version" in out


def test_dash_dash_version(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"etchpy {ep.__version__}\n"


def test_usage_errors(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["demo", "--size", "huge"])
    assert info.value.code == 2


def test_console_script_points_at_main():
    scripts = [e for e in entry_points(group="console_scripts") if e.name == "etchpy"]
    if not scripts:
        pytest.skip("etchpy is not installed (no console_scripts metadata)")
    assert scripts[0].value == "etchpy.cli:main"
    assert scripts[0].load() is cli.main
