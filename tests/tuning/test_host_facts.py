"""etchpy.host_facts: Tuning.gather_from's (gather_ragged_from's, gather_from_far's)
AUTO default resolved from the CPU's vendor and family at compile time, in the
kernel's key and banner; explicit values win."""
import pytest

import etchpy as ep
from etchpy import host_facts
from etchpy.runtime.request import make_request, request_key

i, j = ep.indices("i j")
A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
SPMV = ep.sum(j, A[i, j] * x[j])


def test_the_table():
    for facts, near, ragged, far in [(("GenuineIntel", 6), 6, 0, 5),  # ragged 0: half of from
                                     (("AuthenticAMD", 25), 24, 36, 0),
                                     (("AuthenticAMD", 26), 24, 36, 0),
                                     (("AuthenticAMD", 23), 6, 0, 5),  # Zen 2: not measured
                                     (("", 0), 6, 0, 5)]:              # no /proc/cpuinfo
        assert (host_facts.gather_from(facts), host_facts.gather_ragged_from(facts),
                host_facts.gather_from_far(facts)) == (near, ragged, far)


def test_the_row_checks_table():
    """Tuning.row_checks: 1 (scalar rows tested as each opens, the start carried)
    on Intel, on AMD Zen 3/4 (since session 70) and where the CPU is not read;
    explicit values win."""
    for facts, on in [(("GenuineIntel", 6), 1), (("AuthenticAMD", 25), 1),
                      (("AuthenticAMD", 26), 1), (("", 0), 1)]:
        assert host_facts.row_checks(facts) == on
    assert ep.Tuning().row_checks == -1
    assert host_facts.resolved(ep.Tuning()).row_checks == host_facts.row_checks()
    assert host_facts.resolved(ep.Tuning(row_checks=0)).row_checks == 0


def test_the_lazy_row_block_l2_table_and_its_default():
    """Tuning.lazy_row_block_l2: 0 (the L2 rule off) on AMD Zen 3/4, 1 MiB
    elsewhere; -1 by default, resolved by the lazy plan (not a kernel's)."""
    for facts, l2 in [(("GenuineIntel", 6), 1 << 20), (("AuthenticAMD", 25), 0),
                      (("AuthenticAMD", 23), 1 << 20), (("", 0), 1 << 20)]:
        assert host_facts.lazy_row_block_l2(facts) == l2
    assert ep.Tuning().lazy_row_block_l2 == -1
    assert host_facts.row_block_l2(ep.Tuning()) == host_facts.lazy_row_block_l2()
    assert host_facts.row_block_l2(ep.Tuning(lazy_row_block_l2=7)) == 7
    assert host_facts.resolved(ep.Tuning()).lazy_row_block_l2 == -1


def test_the_default_is_auto_and_explicit_values_win():
    assert ep.Tuning().gather_from == ep.Tuning().gather_from_far == -1
    assert host_facts.resolved(ep.Tuning()).gather_from == host_facts.gather_from()
    assert host_facts.resolved(ep.Tuning(gather_from=9)).gather_from == 9
    assert make_request(SPMV, tuning={"gather_from": 9}).tuning.gather_from == 9
    assert ep.Tuning().gather_ragged_from == -1
    assert host_facts.resolved(ep.Tuning()).gather_ragged_from == host_facts.gather_ragged_from()
    for pinned in (0, 7):                       # 0 (half of gather_from) is a value, not AUTO
        assert host_facts.resolved(ep.Tuning(gather_ragged_from=pinned)).gather_ragged_from == pinned
    for bad in ("a", -2, 1.5, True):            # written into the C: refused, named
        with pytest.raises(ep.EtchpyError, match="gather_ragged_from"):
            ep.compile(SPMV, tuning=ep.Tuning(gather_ragged_from=bad)).c_source
    given = ep.Tuning(seek_linear=2)            # a kernel keeps the Tuning it was given
    assert ep.compile(SPMV, tuning=given).tuning is given


def test_the_resolved_value_is_in_the_key_and_the_c():
    req = make_request(SPMV)
    host = host_facts.gather_from()
    assert req.tuning.gather_from == -1         # resolved in the key, the passes, the banner
    assert request_key(req) == request_key(make_request(SPMV, tuning={"gather_from": host}))
    assert request_key(req) != request_key(make_request(SPMV, tuning={"gather_from": host + 1}))
    kern = ep.compile(SPMV)
    ragged = host_facts.gather_ragged_from()
    assert (f"A_dim0, {host}, {ragged});" in kern.c_source
            or f"? 5 : {host}, {ragged});" in kern.c_source                   # `from`, ragged
            or f"A_dim0, {host}, A_far_rows ? " in kern.c_source and f" : {ragged});" in
            kern.c_source)                  # far ragged rows' own (tests/c/test_gather_mild.py)
    assert f"gather_from={host}" in kern.explain()
    assert f"gather_ragged_from={ragged}" in kern.explain()
    assert request_key(req) != request_key(make_request(SPMV, tuning={"gather_ragged_from": 99}))


def test_every_arm_of_the_pick_agrees_with_scipy():
    """Rows of one length and ragged rows under the Intel and the Zen values
    (ragged rows take the lanes from a mean of gather_ragged_from): the pick only
    chooses between two computations of the same sum."""
    import numpy as np
    import scipy.sparse as sp
    rng = np.random.default_rng(5)
    n = 400
    for lens in (np.full(n, 10), rng.integers(1, 10, n), rng.integers(1, 40, n),
                 rng.integers(1, 80, n)):                    # ragged of a mean of 40: Zen lanes
        ptr = np.concatenate([[0], np.cumsum(lens)])
        crd = np.concatenate([np.sort(rng.choice(n, k, replace=False)) for k in lens])
        M = sp.csr_array((rng.standard_normal(ptr[-1]), crd, ptr), shape=(n, n))
        v = rng.standard_normal(n)
        for facts in (("GenuineIntel", 6), ("AuthenticAMD", 25)):
            t = ep.Tuning(gather_from=host_facts.gather_from(facts),
                          gather_ragged_from=host_facts.gather_ragged_from(facts),
                          gather_from_far=host_facts.gather_from_far(facts))
            kern = ep.compile(SPMV, tuning=t)
            for given in (M, ep.Tensor.from_scipy(M, "csr")):
                np.testing.assert_allclose(kern(A=given, x=v), M @ v, rtol=1e-12, atol=1e-12)


def test_bfs_narrow_levels_is_the_hosts_and_explicit_values_win():
    """Tuning.bfs_narrow_levels: -1 is the host's (int32 levels but on AMD Zen 3
    and later), read where a BFS runs; it is in no kernel's key."""
    assert ep.Tuning().bfs_narrow_levels == -1
    for facts, narrow in [(("GenuineIntel", 6), True), (("AuthenticAMD", 25), False),
                          (("AuthenticAMD", 23), True), (("", 0), True)]:
        assert host_facts.bfs_narrow_levels(facts) is narrow
    assert host_facts.narrow_levels(ep.Tuning()) == host_facts.bfs_narrow_levels()
    for v in (True, False, 1, 0):
        assert host_facts.narrow_levels(ep.Tuning(bfs_narrow_levels=v)) is bool(v)
    assert request_key(make_request(SPMV)) == request_key(
        make_request(SPMV, tuning={"bfs_narrow_levels": -1}))


def test_prefetch_values_from_is_the_hosts_and_sets_the_far_picks_least():
    """Tuning.prefetch_values_from: the bytes a gathered x holds from which its
    values are prefetched; 0 (prefetch_min_bytes) on Intel, 4 MiB on AMD Zen 3/4;
    -1 by default, resolved in the key and the C; an explicit value wins."""
    for facts, least in [(("GenuineIntel", 6), 0), (("AuthenticAMD", 25), 4 << 20),
                         (("AuthenticAMD", 23), 0), (("", 0), 0)]:
        assert host_facts.prefetch_values_from(facts) == least
    assert ep.Tuning().prefetch_values_from == -1
    assert (host_facts.resolved(ep.Tuning()).prefetch_values_from
            == host_facts.prefetch_values_from())
    min_bytes = ep.Tuning().prefetch_min_bytes
    for given, elements in ((0, min_bytes // 8), (8 << 20, 1 << 20), (24 << 20, 3 << 20)):
        src = ep.compile(SPMV, tuning={"prefetch_values_from": given}).c_source
        assert f", {elements})" in src and "ep_far_pick" in src, given
    assert (request_key(make_request(SPMV, tuning={"prefetch_values_from": 8 << 20}))
            != request_key(make_request(SPMV, tuning={"prefetch_values_from": 0})))


def test_row_stream_count_is_the_hosts_and_band_rows_keep_theirs():
    """Tuning.row_stream_count: 4 streams on Intel, 1 (rows in order) on AMD Zen
    3/4, resolved into the C; a uniform band's fixed-width rows (band_rows) take
    band_row_streams on every host; either way the product is the same."""
    import numpy as np
    for facts, count in [(("GenuineIntel", 6), 4), (("AuthenticAMD", 25), 1),
                         (("AuthenticAMD", 23), 4), (("", 0), 4)]:
        assert host_facts.row_stream_count(facts) == count
    assert ep.Tuning().row_stream_count == -1
    assert host_facts.resolved(ep.Tuning()).row_stream_count == host_facts.row_stream_count()
    a = np.triu(np.tril(np.arange(1.0, 401.0).reshape(20, 20), 1), -1)      # 3 diagonals
    for fmt, band_rows in (("blocks", False), ("uniform_band", True)):
        B = ep.tensor("B", 2, fmt)
        spmv = ep.sum(j, B[i, j] * x[j])
        for count in (1, 4):
            kern = ep.compile(spmv, tuning=ep.Tuning(row_stream_count=count))
            streams = "4 interleaved streams" in kern.c_source
            assert streams == (band_rows or count == 4), (fmt, count)
            np.testing.assert_allclose(kern(B=ep.Tensor.from_dense(a, fmt), x=np.ones(20)),
                                       a.sum(1))
        host = ep.compile(spmv).c_source
        assert ("4 interleaved streams" in host) == (band_rows or host_facts.row_stream_count() == 4)
    # a uniform band of a width band_rows does not fix (any width at call time) takes
    # row_stream_count: one more set of streams than the fixed widths' own
    fixed = len(ep.Tuning().band_widths)
    U = ep.tensor("U", 2, "uniform_band")
    for count in (1, 4):
        c = ep.compile(ep.sum(j, U[i, j] * x[j]), tuning=ep.Tuning(row_stream_count=count)).c_source
        assert c.count("4 interleaved streams") == fixed + (count == 4)


def test_prefetch_block_from_is_the_hosts_l3_on_zen():
    """Tuning.prefetch_block_from: 32 MiB on AMD Zen 3/4 (a register block's
    narrow gathered rows left to its L3 below that), 0 (prefetch_min_bytes, the C
    as before) elsewhere; explicit values win."""
    for facts, least in [(("GenuineIntel", 6), 0), (("AuthenticAMD", 25), 32 << 20),
                         (("AuthenticAMD", 26), 32 << 20), (("", 0), 0)]:
        assert host_facts.prefetch_block_from(facts) == least
    assert ep.Tuning().prefetch_block_from == -1
    assert host_facts.resolved(ep.Tuning(prefetch_block_from=5)).prefetch_block_from == 5
