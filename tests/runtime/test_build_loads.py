"""Tests of etchpy.runtime.build and runtime.cache: compiling and loading C kernels,
the memo and disk caches across processes, and damaged cache files rebuilt."""
import os
import subprocess
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from etchpy.runtime import build, cache
from build_cases import (DOT_0_TO_9, DOT_CDEF, DOT_SOURCE, call_dot, dot_source,
                         finish_child, needs_cc, spawn_child)
from build_cases import cache_dir  # noqa: F401  (autouse: every test a fresh cache)


@needs_cc
def test_compile_and_call(cache_dir):
    library = build.load(DOT_SOURCE, DOT_CDEF, name="dot")
    a, b = np.arange(1000.0), np.linspace(0.0, 1.0, 1000)
    assert call_dot(library, a, b) == pytest.approx(np.dot(a, b))
    assert not library.from_cache
    assert library.path == cache_dir / f"dot-{library.key[:16]}.so"
    assert library.c_path == cache_dir / f"dot-{library.key[:16]}.c"
    assert library.c_path.read_text() == DOT_SOURCE
    assert len(library.key) == 64


@needs_cc
def test_memo_then_disk_cache():
    first = build.load(DOT_SOURCE, DOT_CDEF)
    before = dict(build.stats)
    assert build.load(DOT_SOURCE, DOT_CDEF) is first
    assert build.stats["memo_hits"] == before["memo_hits"] + 1

    build.clear_memo()
    again = build.load(DOT_SOURCE, DOT_CDEF)
    assert again is not first and again.from_cache
    assert again.key == first.key and again.path == first.path
    assert build.stats["compiles"] == before["compiles"]
    assert build.stats["cache_hits"] == before["cache_hits"] + 1
    assert call_dot(again, np.ones(3), np.ones(3)) == 3.0


@needs_cc
def test_other_process_uses_disk_cache(tmp_path, monkeypatch):
    log = tmp_path / "compiles.log"
    monkeypatch.setenv("ETCHPY_LOG_COMPILES", str(log))
    library = build.load(DOT_SOURCE, DOT_CDEF)
    assert len(log.read_text().splitlines()) == 1

    child = finish_child(spawn_child(DOT_SOURCE, DOT_CDEF))
    assert child == {"from_cache": True, "path": str(library.path), "compiles": 0,
                     "value": DOT_0_TO_9}
    assert len(log.read_text().splitlines()) == 1  # the child ran no compiler


OPENMP_SOURCE = DOT_SOURCE.replace(
    "    for", "    #pragma omp parallel for reduction(+:s)\n    for") + textwrap.dedent("""\
    int uses_openmp(void) {
    #ifdef _OPENMP
        return 1;
    #else
        return 0;
    #endif
    }
""")


def compiler_is_gcc():
    command = build.find_compiler().command
    out = subprocess.run([*command, "--version"], capture_output=True, text=True).stdout
    return "Free Software Foundation" in out and "clang" not in out


@needs_cc
def test_openmp_kernel_reused_by_other_process(tmp_path, monkeypatch):
    log = tmp_path / "compiles.log"
    monkeypatch.setenv("ETCHPY_LOG_COMPILES", str(log))
    cdef = DOT_CDEF + " int uses_openmp(void);"
    library = build.load(OPENMP_SOURCE, cdef, openmp=True)
    a = np.arange(10.0)
    assert call_dot(library, a, a) == DOT_0_TO_9
    assert library.lib.uses_openmp() == ("-fopenmp" in library.flags)
    if compiler_is_gcc():
        assert "-fopenmp" in library.flags  # gcc ships libgomp: the probe must say yes
    lines = len(log.read_text().splitlines())  # the kernel, plus the OpenMP probe

    child = finish_child(spawn_child(OPENMP_SOURCE, cdef, "0", "--openmp"))
    assert child["from_cache"] and child["compiles"] == 0  # probe answer was on disk
    assert child["value"] == DOT_0_TO_9
    assert len(log.read_text().splitlines()) == lines


@needs_cc
def test_concurrent_builds_both_succeed(cache_dir):
    source = dot_source(f"concurrent {time.time()}")
    start = str(time.time() + 0.6)  # both children start compiling at the same moment
    children = [spawn_child(source, DOT_CDEF, start) for _ in range(2)]
    results = [finish_child(child) for child in children]
    assert all(r["value"] == DOT_0_TO_9 for r in results)
    assert results[0]["path"] == results[1]["path"]
    leftovers = [p.name for p in cache_dir.iterdir() if p.name.startswith(".")]
    assert leftovers == []


@needs_cc
@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_corrupt_shared_object_is_rebuilt(damage):
    source = dot_source(damage)
    # Build in another process: a .so this process has dlopen-ed must not be overwritten.
    path = finish_child(spawn_child(source, DOT_CDEF))["path"]
    data = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(b"not an ELF file" * 10 if damage == "garbage" else data[:len(data) // 3])

    compiles = build.stats["compiles"]
    library = build.load(source, DOT_CDEF)
    assert not library.from_cache and str(library.path) == path
    assert build.stats["compiles"] == compiles + 1
    a = np.arange(10.0)
    assert call_dot(library, a, a) == DOT_0_TO_9


@needs_cc
@pytest.mark.parametrize("damage", ["flipped", "truncated", "swapped", "symlink"])
def test_damaged_shared_object_is_rebuilt_not_loaded(damage, cache_dir, capfd,
                                                      monkeypatch):
    """Bytes flipped in the middle (size kept), a cut, two kernels' .so files swapped,
    or a .so replaced by a link: the sha256 recorded at build time no longer matches,
    so the .so is never dlopen-ed (once a SIGSEGV, an ld.so assertion, or the other
    kernel's code); it is rebuilt, with one line under ETCHPY_DEBUG."""
    source, other = dot_source(f"damage {damage}"), dot_source(f"other {damage}")
    path = Path(finish_child(spawn_child(source, DOT_CDEF))["path"])
    other_path = Path(finish_child(spawn_child(other, DOT_CDEF))["path"])
    data = path.read_bytes()
    if damage == "flipped":
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes(b ^ 0xFF for b in data[middle:middle + 64])
                         + data[middle + 64:])
    elif damage == "truncated":
        path.write_bytes(data[:len(data) // 3])
    elif damage == "swapped":
        tmp = path.with_suffix(".swap")
        os.replace(path, tmp)
        os.replace(other_path, path)
        os.replace(tmp, other_path)
    else:
        path.unlink()
        path.symlink_to(other_path)
    monkeypatch.setenv("ETCHPY_DEBUG", "1")
    compiles = build.stats["compiles"]
    library = build.load(source, DOT_CDEF)
    assert not library.from_cache and build.stats["compiles"] == compiles + 1
    assert library.path == path and not path.is_symlink()
    a = np.arange(10.0)
    assert call_dot(library, a, a) == DOT_0_TO_9
    notes = [ln for ln in capfd.readouterr().err.splitlines() if "is not loaded" in ln]
    assert len(notes) == 1 and path.name in notes[0], notes


@needs_cc
def test_every_truncation_is_caught(cache_dir):
    """Cut at any length (dlopen of a truncated ELF file can die with SIGBUS)."""
    source = dot_source("cuts")
    path = Path(finish_child(spawn_child(source, DOT_CDEF))["path"])
    data = path.read_bytes()
    for cut in [0, 4, 20, 63, 64, 200, len(data) // 2, len(data) - 1]:
        # a new file: the one at `path` is mapped by this process since the last
        # round, and cutting a mapped file short kills the process (SIGBUS)
        path.unlink()
        path.write_bytes(data[:cut])
        build.clear_memo()
        compiles = build.stats["compiles"]
        library = build.load(source, DOT_CDEF)
        assert build.stats["compiles"] == compiles + 1, cut
        record = cache.read_data(library.path.with_suffix(".json"))
        assert record["so_sha256"] == cache.file_sha256(path) and len(path.read_bytes()) > cut
