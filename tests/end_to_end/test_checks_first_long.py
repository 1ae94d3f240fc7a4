"""Near rows checked before their block by their mean length
(Tuning.check_first_from; lower.schedule.checks_first.long_rows; law in
proofs_notes/validation.md, "Near rows checked first by their mean length"):
the checked build of a scipy csr operand whose serial near loop over all its
rows walks them one entry at a time is made twice, switched per call on
`threshold · rows <= pos[rows]`: the copy for long rows tests each block's
coordinates in one pass first and reads them unclamped, the other keeps the
clamp and count. Rows of 4 (the clamp) and of 6 (the pass) against
scipy: a bad coordinate in the first, a middle and the last block, descending
row pointers, unsorted rows; off (0) no switch; the host's value."""
import pytest

import etchpy as ep
from checked_rows import answers_or_refuses, rows_of
from etchpy import host_facts, imp
from etchpy.errors import InputError

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
LONG = {"check_first_from": 5, "check_first_block": 4}
TUNINGS = (LONG, {**LONG, "gather_sums": False}, {**LONG, "run_mean_below": 0})


def _names(stmt, part):
    return [n.name for n in imp.statements(stmt) if isinstance(n, imp.Decl)
            and part in n.name]


def _switches(prog):
    """The Ifs on a mean row length between two row loops: `c * parents <=
    pos[parents]` (not the near pick's, which has no else: walk_chains.md)."""
    return [s for s in imp.statements(prog.body) if isinstance(s, imp.If) and s.else_ is not None
            and isinstance(s.cond, imp.Bin) and s.cond.op == "<="
            and isinstance(s.cond.a, imp.Bin) and s.cond.a.op == "*"
            and isinstance(s.cond.b, imp.Load)]


@pytest.mark.parametrize("tuning", TUNINGS)
def test_long_rows_tested_first_answer_or_refuse(tuning):
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]), tuning=tuning)
    checked = kern.compiled.checked
    switches = _switches(checked)
    assert switches
    for s in switches:                      # long rows: the pass, no clamp; short: the clamp
        assert _names(s.then, "_fmax") and not _names(s.then, "_at")
        assert _names(s.else_, "_at")
    for length in (4, 6):          # one size class: 160 and 240 entries, 40 rows
        answers_or_refuses(kern, rows_of(length, cols=60, seed=5), length, (0, 21, 39),
                           (-1, 60, 2**31 - 1))


def test_off_and_near_make_no_switch():
    """0: no switch, the near loops clamp (`_at`); with
    check_first_near every loop is tested first already: no switch either."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    expr = ep.sum(j, A[i, j] * x[j])
    off = ep.compile(expr, tuning={**LONG, "check_first_from": 0}).compiled.checked
    assert not _switches(off) and _names(off.body, "_at")
    near = ep.compile(expr, tuning={**LONG, "check_first_near": True}).compiled.checked
    assert not _switches(near) and not _names(near.body, "_at")


def test_the_hosts_threshold():
    assert host_facts.check_first_from(("AuthenticAMD", 25)) == 20
    assert host_facts.check_first_from(("GenuineIntel", 6)) == 0
    with pytest.raises(InputError, match="check_first_from"):
        ep.compile(ep.sum(j, ep.tensor("A", 2, "csr")[i, j] * ep.tensor("x", 1)[j]),
                   tuning={"check_first_from": -2}).compiled.checked
