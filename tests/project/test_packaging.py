"""Packaging follows the layout: every subpackage on disk is listed and lands in the wheel.

In the source tree `formats/` and `codegen_templates/` sit at the top level and
pyproject.toml maps them to `etchpy.formats` / `etchpy.codegen_templates`; every other
subpackage lives under `etchpy/` and is listed in pyproject's package list. These tests
check that the list matches the folders on disk, build a real wheel (from a copy of
the sources, so the project root gets no build/ directory), check that every source
file of every package is in it and that nothing leaks out as a top-level package, and
that an installed etchpy imports and finds its templates from any working directory.
The PEP 561 marker etchpy/py.typed ships too (package data), so type checkers read
the public signatures' hints.
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

import etchpy

ROOT = Path(__file__).resolve().parents[2]

# where each installed package root lives in the source tree (pyproject's package-dir)
SOURCE_ROOTS = {"etchpy": ROOT / "etchpy", "etchpy.formats": ROOT / "formats",
                "etchpy.codegen_templates": ROOT / "codegen_templates"}
SOURCE_SUFFIXES = (".py", ".j2", ".typed")     # .typed: the PEP 561 marker py.typed
FORBIDDEN_TOP = ("formats/", "codegen_templates/", "tests/", "bench/", "proofs_notes/")


def _source_folders() -> list[Path]:
    """Every folder under the source roots, except caches and build leftovers."""
    return [d for root in SOURCE_ROOTS.values()
            for d in [root, *sorted(root.rglob("*"))]
            if d.is_dir() and not any(part in ("__pycache__", "build") or
                                      part.endswith(".egg-info") for part in d.parts)]


def _source_packages() -> dict[str, Path]:
    """Dotted name -> folder of every package on disk (a folder with an __init__.py)."""
    packages = {}
    for base, root in SOURCE_ROOTS.items():
        for folder in _source_folders():
            if folder.is_relative_to(root) and (folder / "__init__.py").is_file():
                name = ".".join((base, *folder.relative_to(root).parts))
                packages.setdefault(name, folder)
    return packages


def _expected_wheel_files() -> list[str]:
    """The wheel path of every .py and .j2 file of every package."""
    return sorted(f"{name.replace('.', '/')}/{f.name}"
                  for name, folder in _source_packages().items()
                  for f in folder.iterdir() if f.suffix in SOURCE_SUFFIXES)


def _unmet_build_requirements() -> list[str]:
    """The [build-system] requires of pyproject.toml not satisfied here."""
    try:
        import tomllib
    except ImportError:          # Python 3.10
        return []
    try:
        from packaging.requirements import Requirement
    except ImportError:
        return []
    with open(ROOT / "pyproject.toml", "rb") as f:
        requires = tomllib.load(f)["build-system"]["requires"]
    unmet = []
    for spec in requires:
        req = Requirement(spec)
        try:
            version = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            unmet.append(spec)
            continue
        if req.specifier and not req.specifier.contains(version, prereleases=True):
            unmet.append(f"{spec} (have {version})")
    return unmet


def _build_command(src: Path, outdir: Path):
    """(route name, argv) for the first available way to build a wheel, or a skip reason."""
    unmet = _unmet_build_requirements()
    if unmet:
        return None, ("build requirements not installed for a --no-isolation build: "
                      + ", ".join(unmet)
                      + " (pip install 'setuptools>=68' wheel build)")
    if importlib.util.find_spec("build") is not None:
        return "python -m build", [sys.executable, "-m", "build", "--wheel", "--no-isolation",
                                   "--outdir", str(outdir), str(src)]
    if importlib.util.find_spec("pip") is not None:
        return "pip wheel", [sys.executable, "-m", "pip", "wheel", "--no-deps",
                             "--no-build-isolation", "--no-cache-dir", "-w", str(outdir),
                             str(src)]
    return None, "neither the `build` module nor pip is importable: cannot build a wheel"


def _copy_sources(dest: Path):
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")
    for name in ("etchpy", "formats", "codegen_templates"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    for path in ROOT.iterdir():
        if path.is_file() and (path.name in ("pyproject.toml", "setup.cfg", "setup.py",
                                             "MANIFEST.in")
                               or path.name.upper().startswith(("README", "LICENSE"))):
            shutil.copy2(path, dest / path.name)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("wheel-build")
    src, outdir = base / "src", base / "dist"
    src.mkdir()
    _copy_sources(src)
    route, cmd = _build_command(src, outdir)
    if route is None:
        if os.environ.get("CI"):   # the test extra installs these: CI must build the wheel
            pytest.fail(cmd)
        pytest.skip(cmd)
    proc = subprocess.run(cmd, cwd=base, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, (f"{route} failed:\n{proc.stdout[-4000:]}\n"
                                  f"{proc.stderr[-4000:]}")
    wheels = sorted(outdir.glob("etchpy-*.whl"))
    assert len(wheels) == 1, f"{route} produced {wheels}"
    return wheels[0]


@pytest.fixture(scope="module")
def wheel_names(wheel) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        assert zf.testzip() is None
        return zf.namelist()


@pytest.fixture(scope="module")
def installed_wheel(wheel, tmp_path_factory) -> Path:
    """The wheel unpacked into a directory: a pure-python wheel installed by hand."""
    target = tmp_path_factory.mktemp("wheel-site")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(target)
    return target


def test_every_source_folder_is_a_package():
    """A folder of modules without __init__.py would be left out of the wheel silently."""
    loose = [str(d.relative_to(ROOT)) for d in _source_folders()
             if any(f.suffix in SOURCE_SUFFIXES for f in d.iterdir())
             and not (d / "__init__.py").is_file()]
    assert not loose, f"folders with modules but no __init__.py: {loose}"


def test_pyproject_lists_exactly_the_packages_on_disk():
    tomllib = pytest.importorskip("tomllib")
    with open(ROOT / "pyproject.toml", "rb") as f:
        config = tomllib.load(f)["tool"]["setuptools"]
    assert sorted(config["packages"]) == sorted(_source_packages())
    assert config["package-dir"] == {name: str(root.relative_to(ROOT))
                                     for name, root in SOURCE_ROOTS.items()}


def test_wheel_contains_every_package_and_source_file(wheel_names):
    expected = _expected_wheel_files()
    for name in _source_packages():
        assert f"{name.replace('.', '/')}/__init__.py" in expected
    assert "etchpy/codegen_templates/kernel.c.j2" in expected
    assert "etchpy/py.typed" in expected          # type checkers read the hints
    missing = [name for name in expected if name not in wheel_names]
    assert not missing, f"missing from the wheel: {missing}"


def test_wheel_has_no_stray_top_level_packages(wheel_names):
    stray = [name for name in wheel_names if name.startswith(FORBIDDEN_TOP)]
    assert not stray, f"unexpected top-level entries: {stray}"
    tops = {name.split("/", 1)[0] for name in wheel_names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"etchpy"}


def test_wheel_metadata(wheel, wheel_names):
    assert wheel.name.startswith(f"etchpy-{etchpy.__version__}-")
    with zipfile.ZipFile(wheel) as zf:
        [top_level] = [n for n in wheel_names if n.endswith(".dist-info/top_level.txt")] \
            or [None]
        if top_level:
            assert zf.read(top_level).decode().split() == ["etchpy"]
        [eps] = [n for n in wheel_names if n.endswith(".dist-info/entry_points.txt")]
        text = zf.read(eps).decode()
    assert "[console_scripts]" in text
    assert "etchpy = etchpy.cli:main" in text


_PROBE = textwrap.dedent("""
    import importlib, importlib.resources, os, sys
    expect = os.environ.get("EXPECT_ETCHPY_UNDER")
    import etchpy, etchpy.formats, etchpy.codegen_templates
    if expect:
        assert os.path.realpath(etchpy.__file__).startswith(os.path.realpath(expect)), \\
            etchpy.__file__
    from etchpy.formats import Compressed, Dense, Singleton
    import etchpy.formats.dense, etchpy.formats.compressed, etchpy.formats.singleton
    for bad in ("formats", "codegen_templates"):
        try:
            importlib.import_module(bad)
        except ImportError:
            pass
        else:
            raise SystemExit(f"import {bad} should fail outside the source tree")
    root = importlib.resources.files("etchpy.codegen_templates")
    for name in ("kernel.c.j2", "kernel.h.j2", "cdef.j2"):
        text = root.joinpath(name).read_text()
        assert text.strip(), name
    if os.environ.get("RUN_KERNEL"):
        import numpy as np
        import scipy.sparse as sp
        import etchpy as ep
        i, j = ep.indices("i j")
        A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
        rng = np.random.default_rng(0)
        a = sp.csr_array(np.where(rng.random((30, 20)) < 0.2, rng.random((30, 20)), 0.0))
        xv = np.arange(20.0)
        y = ep.evaluate(ep.sum(j, A[i, j] * x[j]), A=a, x=xv)
        assert np.allclose(y, a @ xv)
    print("ok", etchpy.__file__)
""")


def _run_probe(cwd: Path, pythonpath: str | None, extra_env=None):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    env.update(extra_env or {})
    proc = subprocess.run([sys.executable, "-c", _PROBE], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("ok ")
    return proc.stdout.split(" ", 1)[1].strip()


def test_installed_wheel_imports_from_elsewhere(installed_wheel, tmp_path):
    where = _run_probe(tmp_path, str(installed_wheel),
                       {"EXPECT_ETCHPY_UNDER": str(installed_wheel), "RUN_KERNEL": "1",
                        "ETCHPY_CACHE_DIR": str(tmp_path / "cache")})
    assert Path(where).resolve().is_relative_to(installed_wheel.resolve())


def test_current_install_imports_from_elsewhere(tmp_path):
    """Whatever etchpy this interpreter has (here: the editable install) behaves the same."""
    if importlib.util.find_spec("etchpy") is None:
        pytest.skip("etchpy is not importable")
    _run_probe(tmp_path, None)
