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
    return build.load(src.c + WRAPPERS, CDEF, name=f"spares_test_{t.spare_age}")


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
