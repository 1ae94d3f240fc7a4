"""The `etchpy` command line: `demo` runs and checks every kernel, `version` prints."""
import os
import re
import subprocess
import sys

import pytest

import etchpy
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
    assert checks == ["PASS"] * len(cli.KERNELS), out
    assert "FAIL" not in out
    # every kernel's block names its expression, formats, semiring and timings
    for word in ("expr", "formats", "semiring", "compile", "time"):
        assert len(re.findall(rf"^\s+{word}\s", out, flags=re.M)) == len(cli.KERNELS)
    assert "Σ_j A[i,j]·x[j]" in out
    assert "min_plus" in out
    assert f"demo: {len(cli.KERNELS)} kernels, all checks passed" in out
    assert cache_dir.is_dir()      # the kernels were built where we asked


def test_demo_reports_failures_and_exits_nonzero(monkeypatch, capsys):
    def good(ep, rng):
        return cli.Result("good one", check="exact match", passed=True, ref_label="ref")

    def bad(ep, rng):
        return cli.Result("bad one", check="max abs err 1", passed=False, ref_label="ref")

    def broken(ep, rng):
        raise RuntimeError("boom")

    monkeypatch.setattr(cli, "KERNELS", (("good", good), ("bad", bad), ("broken", broken)))
    monkeypatch.setitem(cli.SIZES, "small", {"good": {}, "bad": {}, "broken": {}})
    rc = cli.main(["demo"])
    out = capsys.readouterr().out
    assert rc == 1
    assert re.findall(r"^\s+check\s+(PASS|FAIL)\b", out, flags=re.M) == ["PASS", "FAIL", "FAIL"]
    assert "RuntimeError: boom" in out
    assert "demo: 3 kernels, 2 check(s) FAILED: bad one, broken" in out


def test_version_in_process(capsys):
    assert cli.main(["version"]) == 0
    assert capsys.readouterr().out == f"etchpy {etchpy.__version__}\n"


def test_python_dash_m_version(tmp_path):
    env = dict(os.environ, ETCHPY_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-m", "etchpy", "version"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"etchpy {etchpy.__version__}\n"


def test_usage_errors(capsys):
    assert cli.main([]) == 2                      # no command: help, status 2
    assert "demo" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        cli.main(["demo", "--size", "huge"])
    assert info.value.code == 2


def test_console_script_points_at_main():
    from importlib.metadata import entry_points
    scripts = [e for e in entry_points(group="console_scripts") if e.name == "etchpy"]
    if not scripts:
        pytest.skip("etchpy is not installed (no console_scripts metadata)")
    assert scripts[0].value == "etchpy.cli:main"
    assert scripts[0].load() is cli.main
