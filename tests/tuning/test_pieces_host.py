"""The host's facts on the counted pieces of block lists and bands
(lower/schedule/pieces.py, prefetch.py): Tuning.sum_lanes (16; 4 on AMD Zen
3/4) and Tuning.run_mean_below reaching a block list's and a uniform band's
rows (their entries counted as pos[seg[rows]] and rows · width). Every setting
gives the dense product; the C shows which ran."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import host_facts

i, j = ep.indices("i j")
x = ep.tensor("x", 1)


def spmv(fmt, **tuning):
    return ep.compile(ep.sum(j, ep.tensor("A", 2, fmt)[i, j] * x[j]), tuning=ep.Tuning(**tuning))


def banded(n, h, seed):
    """A dense n×n matrix with diagonals -h..h of random values."""
    a = np.random.default_rng(seed).random((n, n))
    return np.triu(np.tril(a, h), -h)


def test_sum_lanes_is_the_hosts_and_explicit_values_win():
    for facts, lanes in [(("GenuineIntel", 6), 16), (("AuthenticAMD", 25), 4),
                         (("AuthenticAMD", 26), 4), (("AuthenticAMD", 23), 16), (("", 0), 16)]:
        assert host_facts.sum_lanes(facts) == lanes
    assert ep.Tuning().sum_lanes == -1
    assert host_facts.resolved(ep.Tuning()).sum_lanes == host_facts.sum_lanes()
    assert host_facts.resolved(ep.Tuning(sum_lanes=1)).sum_lanes == 1
    with pytest.raises(ep.EtchpyError, match="sum_lanes"):
        spmv("blocks", sum_lanes=-2).c_source


def test_the_lanes_each_setting_gives_the_dense_product():
    """A block list's runs of 1 to 41 entries (bands of 3 to 41 entries a row),
    summed over 4 lanes: the dense product (floats reassociated: to rounding).
    The C has 16 accumulators only where asked, and the host's value when none
    is given (a uniform band's and a banded level's runs take the same pass:
    tests/lower/schedule/test_band_rows.py)."""
    kern = spmv("blocks", sum_lanes=4)        # 16 (Intel's) is the old default's
    assert "acc_lane_3" in kern.c_source and "acc_lane_4" not in kern.c_source
    assert "acc_lane_15" in spmv("blocks", sum_lanes=16).c_source
    for h in (1, 2, 7, 20):
        a = banded(60, h, h)
        v = np.random.default_rng(h).random(60)
        np.testing.assert_allclose(kern(A=ep.Tensor.from_dense(a, "blocks"), x=v), a @ v,
                                   rtol=1e-13)
    for fmt in ("blocks", "uniform_band", "banded"):
        host = spmv(fmt).c_source
        assert ("acc_lane_15" in host) == (host_facts.sum_lanes() == 16), fmt


@pytest.mark.parametrize("fmt, entries", [("blocks", "A_bpos1[A_bseg1[A_dim0]]"),
                                          ("uniform_band", "(A_dim0 * A_ushape1[1])")])
def test_run_mean_below_reaches_block_lists_and_uniform_bands(fmt, entries):
    """With run_mean_below > 0 a block list's (or a uniform band's) rows prefetch
    their runs only where their mean length, entries over rows, is below it: one
    test on the level's entries against mean · rows; 0 keeps the old test on the
    entries alone (Intel's C). With every run prefetched from the first entry
    (run_min_entries=0), a block list's rows of a mean above and below the line
    give the dense product."""
    for mean in (0, 16):
        kern = spmv(fmt, run_mean_below=mean, run_min_entries=0, piece_ahead=1, piece_short=1,
                    short_mean=0)         # (short blocks prefetch at any mean)
        src = kern.c_source
        if mean:
            assert f"(uint64_t)({entries} - 0) < (uint64_t)(ep_max((16 * A_dim0), 0) - 0)" in src
        else:
            assert f"(0 <= {entries})" in src
        if fmt != "blocks" or not mean:            # compiled: the new test, a block list's
            continue
        for h in (2, 12):                          # rows of about 5 and 25 entries
            a = banded(80, h, h + mean)
            v = np.random.default_rng(h).random(80)
            np.testing.assert_allclose(kern(A=ep.Tensor.from_dense(a, fmt), x=v), a @ v,
                                       rtol=1e-13)
