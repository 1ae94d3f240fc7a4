"""ep_gather_pick (kernel.c.j2) called directly on given row lengths: rows of one
length take the lanes from `from` (Tuning.gather_from), ragged rows from a mean
of `ragged_from` (Tuning.gather_ragged_from; 0: half of `from`, the rule before
session 56), min and max lanes (`from` 0) by their chunk rule."""
import numpy as np
import pytest

from tests.c.spmv_source import with_wrapper

WRAPPER = """
int64_t pick_for_test(const ep_idx_t *pos, int64_t n, int64_t from, int64_t ragged_from)
{ return ep_gather_pick(pos, n, from, ragged_from); }
"""
CDEF = "int64_t pick_for_test(const int32_t *pos, int64_t n, int64_t from, int64_t ragged_from);"


@pytest.fixture(scope="module")
def pick():
    lib = with_wrapper(WRAPPER, CDEF, "gather_pick_test")

    def call(lengths, start, ragged_from):
        pos = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        return lib.lib.pick_for_test(lib.ffi.cast("int32_t *", pos.ctypes.data),
                                     len(lengths), start, ragged_from)
    if call(np.full(64, 40), 1, 0) == 0:
        pytest.skip("no AVX-512 gathers in this C (ep_gather_pick is 0)")
    return call


def ragged(mean, n=400):
    """Lengths mean-4, mean+4, mean-4, ... : each differs from its successor, of the mean."""
    return np.where(np.arange(n) % 2 == 0, mean - 4, mean + 4)


def test_ragged_rows_take_the_lanes_from_gather_ragged_from(pick):
    assert pick(ragged(14), 24, 0) == 1         # half rule (Intel's 0): 2 * 14 >= 24
    assert pick(ragged(14), 24, 36) == 0        # Zen's 36: a mean of 14 keeps the loop
    assert pick(ragged(31), 24, 36) == 0        # a mean above `from` too
    assert pick(ragged(36), 24, 36) == 1
    assert pick(ragged(12), 24, 10) == 1        # a ragged_from below half of `from`
    assert pick(ragged(11), 24, 0) == 0         # below half
    assert pick(ragged(3), 6, 0) == 1 and pick(ragged(3), 5, 0) == 1   # Intel near, far


def test_rows_of_one_length_and_min_max_lanes_ignore_it(pick):
    for ragged_from in (0, 32, 1000):
        assert pick(np.full(400, 24), 24, ragged_from) == 1
        assert pick(np.full(400, 23), 24, ragged_from) == 0
        assert pick(np.full(400, 8), 0, ragged_from) == 1      # chunk rule: 6 * 1 <= 8
        assert pick(np.full(400, 9), 0, ragged_from) == 0      # 6 * 2 > 9
        assert pick(ragged(14), 0, ragged_from) == 1           # min/max: every ragged row
    assert pick(np.full(400, 40), 24, 1000) == 1                # one length: `from` only
    assert pick(ragged(40), 24, 1000) == 0                      # ragged: ragged_from only
