"""The knobs of the C text come from the Tuning given to c.render."""
from types import SimpleNamespace

import pytest

import etchpy as ep
from etchpy import imp, tuning
from etchpy.c import render as c
from etchpy.imp import ONE, ZERO, Const, Var

REAL = ep.semirings.get("real")


def render(body, t=tuning.DEFAULT):
    prog = SimpleNamespace(params=(), body=body, dims=(), refuse_above=(), error=None,
                           output=SimpleNamespace(mode="dense", axes=(), arrays={"vals": "out_vals"}))
    return c.render(prog, REAL, name="knobs", tuning=t).c


HELPERS = imp.seq(imp.Alloc("a", "index", ONE, ZERO),
                  imp.Alloc("b", "bits", imp.sort_bits_words(ONE), ZERO),
                  imp.Alloc("m", "byte", ONE, ZERO),
                  imp.Decl("q", "index", ZERO), imp.Seek("q", ZERO, "a", ZERO, imp.TRUE),
                  imp.ForSorted("v", "a", ZERO, ONE, "b", imp.SKIP, marks="m"))


def test_default_text_is_the_golden_text():
    text = render(HELPERS)
    assert "for (int k = 0; k < 8; k++, q++)" in text
    assert "n >= ((size_t)4 << 20)" in text and "Heap arrays of 4 MiB or more" in text
    assert "while (n > 128)" in text and "if (n <= 128) {" in text
    assert "if (n > 16 || !ep_sort_near(a, n)) ep_rank_sort(a, n);" in text
    assert "if (n < 41 || (h >> 12) - (l >> 12) + 1 > 4 * n)" in text
    assert "if (n <= 16 && ep_near_ends(a, n, size / 8)\n        && ep_sort_near(a, n)) {" in text
    assert "k >= i - 2 && a[k] > v" in text


def test_helper_knobs_change_the_text():
    t = tuning.DEFAULT.with_(seek_linear=3, huge_page_bytes=65536, sort_run=5, marks_walk_min=7,
                             marks_walk_spread=9, rank_sort_max=0)
    assert "k >= i - 4 && a[k] > v" in render(HELPERS, tuning.DEFAULT.with_(sort_near_places=4))
    assert "if (n <= 16\n        && ep_sort_near" in render(HELPERS, tuning.DEFAULT.with_(
        sort_near_share=0))
    text = render(HELPERS, t)
    assert "for (int k = 0; k < 3; k++, q++)" in text
    assert "n >= ((size_t)65536)" in text and "Heap arrays of 65536 bytes or more" in text
    assert "while (n > 5)" in text and "runs of 5" in text
    assert "if (n < 7 || (h >> 12) - (l >> 12) + 1 > 9 * n)" in text
    assert render(HELPERS, t) == text                 # deterministic


def test_sort_runs_shorter_than_two_are_refused():
    with pytest.raises(ValueError, match="sort_run"):
        render(HELPERS, tuning.DEFAULT.with_(sort_run=1))
    with pytest.raises(ValueError, match="rank_sort_max"):
        render(HELPERS, tuning.DEFAULT.with_(rank_sort_max=-1))
    with pytest.raises(ValueError, match="sort_near_places"):
        render(HELPERS, tuning.DEFAULT.with_(sort_near_places=0))
    with pytest.raises(ValueError, match="sort_near_share"):
        render(HELPERS, tuning.DEFAULT.with_(sort_near_share=-1))


@pytest.mark.parametrize("chunks", [1, 5, 16])
def test_chunks_per_thread_sizes_the_blocks(chunks):
    body = imp.seq(imp.Alloc("o", "value", Const(10), None),
                   imp.Decl("acc", "value", Const(0.0, "value")),
                   imp.ParallelFor("i", ZERO, Const(10), imp.Store("o", Var("i"), Var("acc")), 2),
                   imp.ParallelFor("j", ZERO, Const(10), imp.Assign("acc", imp.Ring(
                       "add", Var("acc"), imp.Load("o", Var("j")))), 2, reduce="acc"))
    text = render(body, tuning.DEFAULT.with_(chunks_per_thread=chunks))
    assert f"/* about {chunks} blocks of rows per thread */" in text
    assert f"ep_min(i_n, {2 * chunks})" in text and f"ep_val_t acc_part[{2 * chunks}];" in text


def test_short_segment_width_decides_the_simd_helpers():
    def short(width):
        return imp.seq(imp.Alloc("ca", "index", Const(4), ZERO),
                       imp.Alloc("cb", "index", Const(4), ZERO),
                       *(imp.Decl(v, "index", ZERO) for v in ("qa", "qb", "ea", "eb")),
                       imp.ShortIntersect("qa", "ea", "ca", "qb", "eb", "cb", imp.SKIP, width))
    assert "ep_short_match" in render(short(tuning.DEFAULT.short_segment))
    assert "ep_short_match" not in render(short(3))
