"""A full loop's coordinates checked before each block of its rows
(Tuning.check_first, check_first_block; lower.schedule.checks_first,
fused_checks.fuse; law in proofs_notes/validation.md, "Coordinates checked
before a block"): the checked build of a scipy operand walked by a serial loop
over all its rows in the far copy (value_prefetch: random rows, the call's far
pick true; small operands here: run_min_entries 0, prefetch_min_bytes 8), its
segments summed in no SIMD lanes, tests each block's coordinates in one flat
pass first, then walks the block reading them unclamped, with no count.
Against scipy: rows of one length (the scalar loop) and lanes off, a bad
coordinate (-5, the dimension, 10**6) in the first, a middle and the last block, unsorted and repeated coordinates (order-free sums);
the switch off restores the clamped walks."""
import pytest

import etchpy as ep
from checked_rows import answers_or_refuses, rows_of
from etchpy import imp

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
SMALL = {"check_first_block": 4, "run_min_entries": 0, "prefetch_min_bytes": 8,   # far copy
         "check_first_from": 0}   # near rows clamped whatever their mean (the host's: Zen 20)
TUNINGS = (SMALL, {**SMALL, "gather_sums": False})


def _names(prog, part):
    return [n.name for n in imp.statements(prog.body) if isinstance(n, imp.Decl)
            and part in n.name]


@pytest.mark.parametrize("tuning", TUNINGS)
def test_coordinates_checked_before_each_block_answer_or_refuse(tuning):
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]), tuning=tuning)
    for length in (3, 5, 9):
        answers_or_refuses(kern, rows_of(length), length, (1, 21, 39), (-5, 50, 10**6),
                           descending=False)


def test_the_switch_restores_the_clamped_walks():
    """check_first on: the checked program's far copy of its scalar loop over
    rows tests each block's coordinates first (`_fmax`, one such pass) and its
    walks clamp none; off: no such pass. The near loops and the lanes' arm
    keep their clamp (`_at`) either way; the default sizes (the far copy only
    from run_min_entries entries) too."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    expr = ep.sum(j, A[i, j] * x[j])
    for first in (True, False):
        checked = ep.compile(expr, tuning={**SMALL, "gather_sums": False,
                                           "check_first": first}).compiled.checked
        assert len(_names(checked, "_fmax")) == first
        assert _names(checked, "_at")
    lanes = ep.compile(expr, tuning=SMALL).compiled.checked
    sums = [s for s in imp.statements(lanes.body) if isinstance(s, imp.GatherSum)]
    assert sums and all(s.lanes_max for s in sums)              # the lanes' arm: clamped
    assert len(_names(lanes, "_fmax")) == 1                     # the far copy: tested first


NEAR = {"check_first_near": True, "check_first_block": 4}
NEAR_TUNINGS = (NEAR, {**NEAR, "gather_from": 1, "gather_ragged_from": 1},   # lanes taken
                {**NEAR, "gather_sums": False}, {**NEAR, **SMALL})           # far copy too


@pytest.mark.parametrize("tuning", NEAR_TUNINGS)
def test_near_rows_and_lanes_checked_first_answer_or_refuse(tuning):
    """check_first_near: every serial full loop's walks, near rows' scalar loops
    and SIMD lanes (an unchecked imp.GatherSum) included, read their coordinates
    unclamped after their block's pass; a bad coordinate anywhere, a bad row
    pointer, or an unsorted row: the same answers and refusals as the clamp's."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]), tuning=tuning)
    checked = kern.compiled.checked
    assert _names(checked, "_fmax") and not _names(checked, "_at")
    assert all(s.dim is None for s in imp.statements(checked.body)
               if isinstance(s, imp.GatherSum))
    for length in (3, 9, 40):
        answers_or_refuses(kern, rows_of(length, cols=60), length, (0, 21, 39),
                           (-1, 60, 2**31 - 1), repeated=False)


def test_near_switch_off_keeps_the_clamp():
    """check_first_near off (the default): the near loops and the lanes' arm
    keep their clamp (`_at`, GatherSum.lanes_max); on: neither, in the same
    program; the far copy's pass is there either way."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    expr = ep.sum(j, A[i, j] * x[j])
    for near in (False, True):
        checked = ep.compile(expr, tuning={**SMALL, "check_first_near": near}).compiled.checked
        sums = [s for s in imp.statements(checked.body) if isinstance(s, imp.GatherSum)]
        assert sums and all(bool(s.lanes_max) != near for s in sums)
        assert bool(_names(checked, "_at")) != near
        assert _names(checked, "_fmax")
