"""bench plans (bench/nesting.py): every case's four ways agree (no time is asserted)."""
import numpy as np
import pytest

import etchpy as ep

nesting = pytest.importorskip("bench.nesting")

pytestmark = pytest.mark.usefixtures("shared_cache")


@pytest.mark.heavy
def test_every_case_agrees_written_nested_flat_stepwise_and_with_its_peer():
    for name, nested, flat, ins, steps, peer, *out in nesting.cases(quick=True):
        out_ix = out[0] if out else None
        want = np.asarray(peer(ins))
        for got in (ep.compile(nested, out_indices=out_ix)(**ins),
                    ep.compile(flat, out_indices=out_ix)(**ins), steps(ins)):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9, err_msg=name)
