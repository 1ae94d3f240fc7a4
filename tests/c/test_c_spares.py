"""The library's spare slots for freed mapped blocks (ep_unmap / ep_reuse of
kernel.c.j2): a block that sits through Tuning.spare_age releases untaken gives
its slot to the next freed block, so larger blocks from an earlier call do not
keep a later call's smaller ones from being kept. The helpers called directly."""
from types import SimpleNamespace

import pytest

import etchpy as ep
from etchpy import imp, tuning
from etchpy.c import render as c
from etchpy.imp import ONE
from etchpy.runtime import build

WRAPPERS = """
void *malloc_for_test(size_t n) { return ep_malloc(n); }
void release_for_test(void *p) { ep_release(p); }
"""
CDEF = """
void *malloc_for_test(size_t n);
void release_for_test(void *p);
"""


def helpers(t: tuning.Tuning):
    """The heap helpers under `t`, with exported wrappers."""
    prog = SimpleNamespace(params=(), body=imp.seq(imp.Alloc("a", "value", ONE, None)), dims=(),
                           refuse_above=(), error=None,
                           output=SimpleNamespace(mode="dense", axes=(), arrays={"vals": "v"}))
    src = c.render(prog, ep.semirings.get("real"), name="spares", idx_type="int64_t", tuning=t)
    return build.load(src.c + WRAPPERS, CDEF, name=f"spares_test_{t.spare_age}_{t.map_bytes}_{t.kept_pages_below}")


def reused_rounds(age: int, rounds: int = 20) -> int:
    """Four slots filled with 1 MiB blocks, then `rounds` of a 128 KiB block taken
    and freed: how many rounds got the block the round before freed (its first
    word, never handed back to the system, still holds that round's mark; a
    fresh mapping reads zero)."""
    lib = helpers(tuning.DEFAULT.with_(map_bytes=1 << 16, spare_age=age))
    f, ffi = lib.lib, lib.ffi
    big = [f.malloc_for_test(1 << 20) for _ in range(4)]
    for p in big:
        f.release_for_test(p)
    reused = 0
    for r in range(1, rounds + 1):
        p = ffi.cast("int64_t *", f.malloc_for_test(1 << 17))
        reused += p[0] == r - 1 and r > 1
        p[0] = r
        f.release_for_test(p)
    return reused


@pytest.mark.parametrize("age", [8, 2])
def test_a_stale_larger_block_gives_its_slot_to_a_smaller_freed_one(age):
    assert reused_rounds(age) >= 20 - (age + 4)


def test_off_a_kept_block_is_replaced_only_by_a_larger_one():
    assert reused_rounds(0) == 0


def lazy_free_kib() -> int:
    """The process's pages handed back with MADV_FREE and not yet reclaimed (KiB)."""
    with open("/proc/self/smaps_rollup") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("LazyFree:"))


@pytest.mark.parametrize("below", [1 << 20, 0])
def test_a_kept_block_below_kept_pages_below_keeps_its_pages(below):
    """A freed mapped block smaller than Tuning.kept_pages_below is kept with its
    pages (no madvise: each release cost a system call and a TLB flush); at 0
    every kept block's pages after the header go back lazily (MADV_FREE), which
    /proc/self/smaps_rollup counts as LazyFree until they are written again."""
    try:
        lazy_free_kib()
    except (OSError, StopIteration):
        pytest.skip("no LazyFree in /proc/self/smaps_rollup (not Linux 4.14+)")
    lib = helpers(tuning.DEFAULT.with_(map_bytes=1 << 15, kept_pages_below=below))   # its own slots
    f, ffi = lib.lib, lib.ffi
    p = ffi.cast("char *", f.malloc_for_test(512 << 10))
    ffi.memmove(p, b"\1" * (512 << 10), 512 << 10)      # every page touched
    before = lazy_free_kib()
    f.release_for_test(p)
    handed = lazy_free_kib() - before
    f.release_for_test(f.malloc_for_test(512 << 10))    # taken back: the slot emptied
    if below:
        assert handed < 64
    elif handed == 0:
        pytest.skip("the kernel answered MADV_FREE by unmapping (no lazy free here)")
    else:
        assert handed >= 400
