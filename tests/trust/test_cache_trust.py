"""The kernel cache as a trust boundary (issue 26, items 1 and 2): it holds data and
the .so files etchpy built, nothing else read from it runs, and a directory other
users could write is refused (explicit) or replaced by a private one (default)."""
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from etchpy import CompileError
from etchpy.runtime import build, cache, cachedir, jsondata

HAVE_CC = bool(os.environ.get("CC")) or any(map(shutil.which, build.COMPILER_CANDIDATES))
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler on PATH")
ROOT_ONLY = pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                               reason="needs root to give a directory to another user")

# A new process: SpMV and SpGEMM (csr output), printed as JSON.
CHILD = textwrap.dedent("""
    import json
    import numpy as np, scipy.sparse as sp, etchpy as ep
    i, j, k = ep.indices("i j k")
    A, B, x = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr"), ep.tensor("x", 1)
    M = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0], [4, 0, 0]]))
    spmv = ep.compile(ep.sum(j, A[i, j] * x[j]))
    spgemm = ep.compile(ep.sum(j, A[i, j] * B[j, k]), output="csr")
    print(json.dumps({"y": spmv(A=M, x=np.arange(3.0)).tolist(),
                      "C": spgemm(A=M, B=M).toarray().tolist(),
                      "manifest": [spmv.from_manifest, spgemm.from_manifest]}))
""")
M = np.array([[1.0, 0, 2], [0, 3, 0], [4, 0, 0]])
WANT = {"y": (M @ np.arange(3.0)).tolist(), "C": (M @ M).tolist()}


def run_child(cache_dir, **extra):
    env = dict(os.environ, ETCHPY_CACHE_DIR=str(cache_dir), **extra)
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                         text=True, timeout=300)
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A cache that one new process filled (the kernels compiled once for the
    module's tests; each test takes its own copy)."""
    cache_dir = tmp_path_factory.mktemp("built") / "c"
    first = run_child(cache_dir)
    assert first.returncode == 0, first.stderr
    return cache_dir


def copy_of(built, tmp_path):
    cache_dir = tmp_path / "c"
    shutil.copytree(built, cache_dir, symlinks=True)
    return cache_dir


class Planted:
    """A pickle that prints when it is unpickled."""

    def __reduce__(self):
        return (print, ("PLANTED-PICKLE",))


@needs_cc
def test_nothing_read_from_the_cache_is_executed_but_the_so(built, tmp_path):
    """Every cached file but the .so files replaced by Python code and by a pickle
    whose __reduce__ prints: the next process runs neither, and answers right."""
    cache_dir = copy_of(built, tmp_path)
    files = [f for f in cache_dir.iterdir() if f.suffix != ".so" and f.is_file()]
    assert files and not [f for f in files if f.suffix in (".py", ".pkl", ".pyc")]
    for n, f in enumerate(files):
        if n % 2:
            f.write_text('print("PLANTED-PY")\n')
        else:
            f.write_bytes(pickle.dumps(Planted()))
    again = run_child(cache_dir)
    assert again.returncode == 0, again.stderr
    assert "PLANTED" not in again.stdout + again.stderr
    assert {k: v for k, v in json.loads(again.stdout).items() if k in WANT} == WANT


@needs_cc
def test_manifests_survive_a_new_process_as_json(built, tmp_path):
    cache_dir = copy_of(built, tmp_path)
    second = run_child(cache_dir)
    assert json.loads(second.stdout)["manifest"] == [True, True]
    manifests = list(cache_dir.glob("etchpy_kernel-req-*.json"))
    assert len(manifests) == 4          # each kernel's, and its inputs' size class's
    for f in manifests:
        digest, _, body = f.read_bytes().partition(b"\n")
        assert "request" in dict(json.loads(body)["~d"])


def test_the_codec_names_only_etchpy_dataclasses():
    """A class outside etchpy, or not a dataclass, cannot be named in a manifest."""
    for name in ("os:system", "builtins:eval", "subprocess:Popen", "etchpy.runtime.build:load",
                 "etchpy.runtime.build:Compiler.__init__", "pickle:loads"):
        text = json.dumps({"~c": [name, {"~d": []}]})
        with pytest.raises(jsondata.DataError):
            jsondata.loads(text)
    with pytest.raises(TypeError):
        jsondata.dumps(Planted())
    value = {"a": (1, 2.5, float("inf"), None, True), 3: [b"\x00", frozenset({1})],
             "n": np.float32(1.5), "c": build.Compiler(("cc",), "v")}
    assert jsondata.loads(jsondata.dumps(value)) == value


def test_a_stored_format_carries_no_fact_worked_out_in_the_writing_process():
    """A Format's hash and dense facts are worked out once per process; a manifest
    stores only its fields (as pickle does), and the reader works them out again."""
    from etchpy import Format
    for fmt in (Format.named("csr", 2), Format.named("dense", 3), Format.named("coo", 2)):
        hash(fmt), fmt.is_dense, fmt.is_row_major_dense        # worked out here
        text = jsondata.dumps(fmt)
        assert '"_' not in text
        back = jsondata.loads(text)
        assert back == fmt and hash(back) == hash(fmt)
        assert back.is_row_major_dense == fmt.is_row_major_dense


# --------------------------------------------------------------------------- the directory

@pytest.fixture
def fresh_env(monkeypatch):
    for var in ("ETCHPY_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    build.clear_memo()
    yield monkeypatch
    build.clear_memo()


def refused(path, monkeypatch) -> str:
    monkeypatch.setenv("ETCHPY_CACHE_DIR", str(path))
    with pytest.raises(CompileError) as info:
        cache.directory()
    message = str(info.value)
    assert str(path) in message and "fix:" in message and "chmod 700" in message
    return message


def test_world_writable_explicit_directory_is_refused(tmp_path, fresh_env):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    assert "writable by every user" in refused(shared, fresh_env)
    os.chmod(shared, 0o1777)       # the sticky bit does not make the directory itself private
    assert "writable by every user" in refused(shared, fresh_env)
    os.chmod(shared, 0o700)
    fresh_env.setenv("ETCHPY_CACHE_DIR", str(shared))
    assert cache.directory() == shared


def test_symlinked_explicit_directory_is_refused(tmp_path, fresh_env):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    assert "symbolic link" in refused(link, fresh_env)


def test_a_file_is_refused(tmp_path, fresh_env):
    f = tmp_path / "file"
    f.write_text("")
    assert "not a directory" in refused(f, fresh_env)


def test_parent_writable_by_others_without_sticky_bit_is_refused(tmp_path, fresh_env):
    parent = tmp_path / "open"
    (parent / "cache").mkdir(parents=True, mode=0o700)
    os.chmod(parent, 0o777)
    assert "parent" in refused(parent / "cache", fresh_env)
    os.chmod(parent, 0o1777)       # like /tmp: others cannot rename what is not theirs
    fresh_env.setenv("ETCHPY_CACHE_DIR", str(parent / "cache"))
    assert cache.directory() == parent / "cache"


@ROOT_ONLY
def test_directory_of_another_user_is_refused(tmp_path, fresh_env):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 54321, 54321)
    assert "owned by uid 54321" in refused(theirs, fresh_env)


@ROOT_ONLY
def test_group_writable_only_for_the_users_private_group(tmp_path, fresh_env):
    d = tmp_path / "group"
    d.mkdir()
    os.chmod(d, 0o770)
    os.chown(d, 0, 54321)          # a group that is not the user's own
    assert "not your own private group" in refused(d, fresh_env)
    os.chown(d, 0, os.getgid())
    fresh_env.setenv("ETCHPY_CACHE_DIR", str(d))
    assert cachedir._private_group(os.getgid(), 0) == (cache.directory() == d)


def test_unsafe_default_location_falls_back_to_a_private_directory(tmp_path, fresh_env):
    base = tmp_path / "xdg"
    (base / "etchpy").mkdir(parents=True)
    os.chmod(base / "etchpy", 0o777)
    fresh_env.setenv("XDG_CACHE_HOME", str(base))
    with pytest.warns(RuntimeWarning, match="writable by every user") as caught:
        first = cache.directory()
    assert first != base / "etchpy" and (first.stat().st_mode & 0o777) == 0o700
    assert str(first) in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")             # once per process, not per call
        assert cache.directory() == first
    shutil.rmtree(first)


@needs_cc
def test_refused_cache_fails_the_kernel_with_the_reason(tmp_path):
    shared = tmp_path / "team-cache"
    shared.mkdir()
    os.chmod(shared, 0o777)
    out = run_child(shared)
    assert out.returncode != 0
    assert "refusing the cache directory" in out.stderr and "writable by every user" in out.stderr
    assert not list(shared.iterdir())              # nothing written there, nothing read


def test_new_directory_is_created_private(tmp_path, fresh_env):
    fresh_env.setenv("ETCHPY_CACHE_DIR", str(tmp_path / "a" / "b"))
    path = cache.directory()
    assert path == tmp_path / "a" / "b" and (path.stat().st_mode & 0o777) == 0o700
    assert Path(path).is_dir()
