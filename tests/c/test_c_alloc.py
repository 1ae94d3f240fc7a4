"""The heap arrays of kernel.c.j2 (ep_malloc, ep_calloc, ep_grow, ep_release):
arrays of `Tuning.map_bytes` or more are mapped directly and kept for reuse,
smaller ones come from malloc; with map_bytes=0 every array comes from malloc.
Called directly through wrappers, and through kernels run many times, on
several Python threads at once (cffi releases the GIL during a call), with the
path on and off."""
import pathlib
import re
import threading
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp, tuning
from etchpy.c import render as c
from etchpy.imp import ONE, ZERO
from etchpy.runtime import build

from tuned import tuned_kernel

WRAPPERS = """
void *malloc_for_test(size_t n) { return ep_malloc(n); }
void *calloc_for_test(size_t n) { return ep_calloc(n, 1); }
void *grow_for_test(void *q, size_t had, size_t n) { return ep_grow(q, had, n); }
void release_for_test(void *p) { ep_release(p); }
"""
CDEF = """
void *malloc_for_test(size_t n);
void *calloc_for_test(size_t n);
void *grow_for_test(void *q, size_t had, size_t n);
void release_for_test(void *p);
"""

# every array mapped; mapped above 64 KiB with huge pages from 256 KiB; off
SETTINGS = {"all_mapped": tuning.DEFAULT.with_(map_bytes=1),
            "mapped_large": tuning.DEFAULT.with_(map_bytes=1 << 16, huge_page_bytes=1 << 18),
            "off": tuning.DEFAULT.with_(map_bytes=0)}


def helpers(t: tuning.Tuning):
    """The allocation helpers under `t`, with exported wrappers."""
    prog = SimpleNamespace(params=(), body=imp.seq(imp.Alloc("a", "index", ONE, ZERO)),
                           dims=(), refuse_above=(), error=None,
                           output=SimpleNamespace(mode="dense", axes=(), arrays={"vals": "v"}))
    src = c.render(prog, ep.semirings.get("real"), name="alloc", idx_type="int64_t", tuning=t)
    return build.load(src.c + WRAPPERS, CDEF, name="alloc_test")


def _view(lib, p, n):
    return np.frombuffer(lib.ffi.buffer(p, n), dtype=np.uint8)


@pytest.mark.parametrize("setting", SETTINGS)
def test_zeroed_arrays_are_zero_after_reuse_and_grow_keeps_contents(setting):
    """Blocks of many sizes (below, at and above the thresholds) are written
    with garbage and released; each later ep_calloc is all zeros, each ep_malloc
    writable over its length, and ep_grow keeps the first `had` bytes while the
    array crosses from malloc to a mapping and from mapping to mapping."""
    lib = helpers(SETTINGS[setting])
    f = lib.lib
    sizes = [1, 100, 4095, 4096, 60_000, 1 << 16, 70_000, 1 << 18, 300_000, 1 << 20, 1 << 21]
    for _ in range(3):
        for n in sizes:
            p = f.malloc_for_test(n)
            assert p != lib.ffi.NULL
            _view(lib, p, n)[:] = 0xAB
            f.release_for_test(p)
            z = f.calloc_for_test(n)
            assert z != lib.ffi.NULL
            assert not _view(lib, z, n).any(), n
            _view(lib, z, n)[:] = 0xCD
            f.release_for_test(z)
    q, had = f.malloc_for_test(10), 10
    _view(lib, q, had)[:] = np.arange(had) % 251
    for n in (100, 5000, 70_000, 300_000, 1 << 20, 3 << 20):
        q = f.grow_for_test(q, had, n)
        assert q != lib.ffi.NULL
        assert (_view(lib, q, had) == np.arange(had) % 251).all(), n
        _view(lib, q, n)[had:] = np.arange(had, n) % 251
        had = n
    f.release_for_test(q)
    f.release_for_test(lib.ffi.NULL)


def spgemm():
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    return ep.sum(j, A[i, j] * B[j, k])


def _pair(seed, n, per_row):
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), per_row)
    make = lambda: sp.csr_array((rng.random(n * per_row),    # noqa: E731
                                 (rows, rng.integers(0, n, n * per_row))), shape=(n, n))
    return make(), make()


def _same(C, want):
    """C equals the sparse product `want`, compared sparse: a 6000 x 6000 dense copy
    would take 288 MB, and the suite's workers must stay small."""
    C = sp.csr_array(C)
    assert C.shape == want.shape and C.nnz == want.nnz
    diff = abs(C - want)
    assert diff.nnz == 0 or diff.max() <= 1e-12 * max(abs(want).max(), 1.0)


def _check(kern, A, B):
    _same(kern(A=A, B=B), A @ B)


@pytest.mark.parametrize("setting", SETTINGS)
def test_a_kernel_called_again_with_other_sizes(setting):
    """SpGEMM (sparse output grown past the thresholds, a dense workspace)
    called with small and large inputs in turn, keeping some results alive
    while later calls reuse the blocks of the released ones."""
    kern = tuned_kernel(spgemm(), SETTINGS[setting], output="csr")
    kept = []
    for round_ in range(2):
        for seed, (n, per_row) in enumerate([(50, 3), (3000, 8), (200, 20), (6000, 4), (7, 1)]):
            A, B = _pair(seed + 10 * round_, n, per_row)
            _check(kern, A, B)
            if seed % 2:
                kept.append((kern(A=A, B=B), A @ B))
    for C, want in kept:
        _same(C, want)


@pytest.mark.parametrize("setting", ["all_mapped", "off"])
@pytest.mark.parametrize("threads", [1, 2])
def test_concurrent_calls_from_python_threads(setting, threads):
    """Four Python threads call one kernel (on one or two OpenMP threads, with
    per-thread workspaces) at once on inputs of different sizes, and release
    their results on their own threads: every result is right."""
    kern = tuned_kernel(spgemm(), SETTINGS[setting], output="csr", threads=threads)
    inputs = [_pair(100 + s, n, p) for s, (n, p) in enumerate([(400, 6), (2500, 5), (90, 9),
                                                              (1500, 7)])]
    wants = [A @ B for A, B in inputs]
    kern(A=inputs[0][0], B=inputs[0][1])           # built before the threads start
    errors = []
    start = threading.Barrier(len(inputs))

    def work(t):
        try:
            start.wait()
            for r in range(12):
                A, B = inputs[(t + r) % len(inputs)]
                C = kern(A=A, B=B)
                _same(C, wants[(t + r) % len(inputs)])
                del C
        except Exception as exc:                    # reported on the main thread
            errors.append(exc)

    pool = [threading.Thread(target=work, args=(t,)) for t in range(len(inputs))]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    assert not errors, errors[0]


def test_the_switch_shapes_only_the_helpers():
    """map_bytes=0 renders the plain malloc helpers; otherwise the mapped path
    with its threshold. The kernel's own text is the same either way."""
    expr = spgemm()
    on = tuned_kernel(expr, tuning.DEFAULT, output="csr").c_source
    off = tuned_kernel(expr, SETTINGS["off"], output="csr").c_source
    assert "mmap(" in on and "#define EP_MAP_BYTES ((size_t)131072)" in on
    assert "mmap(" not in off and "EP_MAP_BYTES" not in off
    cut = lambda s: s[s.index("int etchpy_kernel("):]        # noqa: E731
    assert cut(on) == cut(off)


def test_the_emitters_free_heap_arrays_only_through_ep_release():
    """A heap array from ep_malloc, ep_calloc or ep_grow starts after a header
    (or is a mapping): C's free would crash on it. No module of etchpy/c emits
    a bare free() of a generated array."""
    folder = pathlib.Path(__file__).resolve().parents[2] / "etchpy" / "c"
    bare = [f"{path.name}:{n}: {line.strip()}"
            for path in sorted(folder.glob("*.py"))
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if re.search(r"(?<![\w.])free\(\{", line)]
    assert not bare, "emit ep_release({arr}) instead of free({arr}):\n" + "\n".join(bare)
