"""Saturated sums (lower/schedule/saturated_sums.py, Tuning saturated_sums): a
boolean Σ over a counted loop stops at the first block holding a true term. It
answers as the plain loop (and numpy) with the pass on and off, on rows true
early, late, in the last term, never, and of no columns; it fires only where
one absorbs ⊕."""
import re

import numpy as np
import pytest

import etchpy as ep
from etchpy.lower.schedule import saturated_sums

i, j = ep.indices("i j")
M, x = ep.tensor("M", 2), ep.tensor("x", 1)
ON, OFF = ep.Tuning(saturated_block=4), ep.Tuning(saturated_sums=False)


def rows(n_cols):
    """Rows true at their first, a middle, their last column, never, and twice."""
    m = np.zeros((6, n_cols), dtype=bool)
    if n_cols:
        m[0, 0] = m[1, n_cols // 2] = m[2, -1] = True
        m[4, [0, -1]] = m[5, n_cols // 3] = True
    return m


@pytest.mark.parametrize("n_cols", [0, 1, 3, 4, 5, 9, 64])
@pytest.mark.parametrize("tuning", [ON, OFF, ep.Tuning(), "noopt", "force"])
def test_row_any_and_a_pull_step_answer_as_numpy(n_cols, tuning):
    m = rows(n_cols)
    f = np.arange(n_cols) % 2 == 0
    any_ = ep.compile(ep.sum(j, M[i, j]), semiring="boolean", tuning=tuning)
    pull = ep.compile(ep.sum(j, M[i, j] * x[j]), semiring="boolean", tuning=tuning)
    np.testing.assert_array_equal(any_(M=m), m.any(1))
    np.testing.assert_array_equal(pull(M=m, x=f), (m & f).any(1))


def _c(tmp_path, tuning, semiring="boolean"):
    src, _ = ep.export_c(ep.sum(j, M[i, j] * x[j]), "pull", tmp_path, semiring=semiring,
                         tuning=tuning)
    return src.read_text()


def test_the_loop_stops_between_blocks_where_on(tmp_path):
    on = _c(tmp_path, ON)
    assert re.search(r"while \(\(j_c < dim_j\) && !\(acc == 1\)\)", on), on
    assert "j_c_upto = ep_min((j_c + 4), dim_j)" in on
    assert "upto" not in _c(tmp_path, OFF) and "upto" not in _c(tmp_path, "noopt")
    assert "upto" not in _c(tmp_path, ep.Tuning(saturated_block=0))


@pytest.mark.parametrize("name", [s.name for s in ep.semirings.all() if s.name != "boolean"])
def test_only_a_semiring_whose_one_absorbs_its_add(tmp_path, name):
    """min_plus's one (0) does not absorb min, real's 1 not +, …: no early stop."""
    sr = ep.semirings.get(name)
    assert not saturated_sums.absorbs(sr)
    assert "upto" not in _c(tmp_path, ON, semiring=sr)


def test_boolean_one_absorbs():
    assert saturated_sums.absorbs(ep.semirings.get("boolean"))
