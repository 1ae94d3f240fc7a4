"""A hash probe's first slots compared in lanes (Tuning.hash_probe_lanes, a host
fact: 8 on AMD Zen, 0 on Intel): the slot found is the one the one-by-one steps
stop at (proofs_notes/hashed.md, "A probe's first slots in lanes"), on tables
whose clusters run past the lanes and wrap around the table's end."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import host_facts
from etchpy.formats.hashtable import slot_hash

i, j = ep.indices("i j")
N = 4096


def clustered_keys(count: int, cap: int, first: int, width: int) -> np.ndarray:
    """`count` coordinates below N whose hash (a table of `cap` slots) lies in the
    `width` slots from `first` around the end: clusters longer than the lanes,
    and probes that start near the table's end."""
    c = np.arange(N)
    home = slot_hash(c, cap - 1)
    near = np.flatnonzero((home - first) % cap < width)
    return np.sort(np.random.default_rng(cap).choice(near, count, replace=False))


def test_the_host_fact():
    for facts, lanes in [(("GenuineIntel", 6), 0), (("AuthenticAMD", 25), 8),
                         (("AuthenticAMD", 23), 0), (("", 0), 0)]:
        assert host_facts.hash_probe_lanes(facts) == lanes
    assert ep.Tuning().hash_probe_lanes == -1
    assert host_facts.resolved(ep.Tuning()).hash_probe_lanes == host_facts.hash_probe_lanes()
    with pytest.raises(ValueError, match="hash_probe_lanes must be 4 or 8"):
        ep.compile(ep.sum(j, ep.tensor("x", 1, "hash")[j] * ep.tensor("y", 1, "dense")[j]),
                   tuning=ep.Tuning(hash_probe_lanes=6)).c_source


@pytest.mark.parametrize("first, width", [(120, 14), (0, 9), (60, 30)])
def test_lanes_find_the_slot_the_steps_find(first, width):
    """Every coordinate of [0, N) probed in a table of 128 slots holding 40
    coordinates hashed into `width` slots from `first` (clusters of more than 8,
    wrapping at the end): the product equals numpy's with the lanes off, 4 and 8."""
    keys = clustered_keys(40, 128, first, width)
    x = np.zeros(N)
    x[keys] = np.arange(1.0, 41.0)
    xt = ep.Tensor.from_dense(x, "hash")
    assert np.diff(xt.levels[0]["hpos"]).tolist() == [128]
    A = sp.random_array((64, N), density=0.25, format="csr", random_state=1) + \
        sp.csr_array((np.ones(N), (np.arange(N) % 64, np.arange(N))), shape=(64, N))
    want = A @ x
    e = ep.sum(j, ep.tensor("A", 2, "csr")[i, j] * ep.tensor("x", 1, "hash")[j])
    for lanes in (0, 4, 8):
        kern = ep.compile(e, tuning=ep.Tuning(hash_probe_lanes=lanes))
        assert ("_mm512_cmpeq_epi64_mask" in kern.c_source) == (lanes == 8)
        assert ("_mm256_cmpeq_epi64" in kern.c_source) == (lanes > 1)
        np.testing.assert_allclose(kern(A=A, x=xt), want, rtol=1e-12)


def test_small_tables_and_int32_indices_keep_the_steps(tmp_path):
    """Tables of fewer slots than the lanes (a fibre of one or two entries) probe
    one slot a step; an int32 export has no lanes (they compare int64 slots)."""
    a = np.zeros((6, 50))
    a[0, 3], a[1, [7, 11]], a[4, 49], a[5, :4] = 2.0, (3.0, 5.0), 7.0, 1.0
    H = ep.tensor("H", 2, ep.Format(["dense", "hash"]))
    e = ep.sum(j, H[i, j] * ep.tensor("A", 2, "csr")[i, j])      # A walked, H probed
    kern = ep.compile(e, output="dense", tuning=ep.Tuning(hash_probe_lanes=8))
    assert "ep_probe(" in kern.c_source
    b = np.arange(300.0).reshape(6, 50) % 7
    np.testing.assert_allclose(kern(H=ep.Tensor.from_dense(a, H.format),
                                    A=sp.csr_array(b)), (a * b).sum(1))
    c, _ = ep.export_c(e, "probe32", tmp_path, index_type="int32_t",
                       tuning=ep.Tuning(hash_probe_lanes=8))
    text = c.read_text()
    assert "ep_probe(" in text
    assert "_mm512_cmpeq_epi64_mask" not in text and "_mm256_cmpeq_epi64" not in text
