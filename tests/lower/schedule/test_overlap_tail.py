"""Dense stores' last block overlapped (lower.schedule.overlap_tail,
Tuning.overlap_tail): a boolean program's loop that only stores a pure value
into a dense output runs in blocks of overlap_values, its last block starting
that many values before the end; results equal the plain loop's at every row
length around the block (shorter than a block, one, one and a part, several),
and loops that read what they write, fill a constant, count to a constant or
compute wider values are left as they were."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import etchpy as ep
from etchpy import imp
from etchpy.imp.interp import Machine
from etchpy.imp.names import Names
from etchpy.lower.schedule import overlap_tail
from etchpy.tuning import DEFAULT

i, j = ep.indices("i j")
OFF = DEFAULT.with_(overlap_tail=False)

pytestmark = pytest.mark.usefixtures("shared_cache")


def erosion(img, h, w):
    e = None
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            a = img[i[di:di + h], j[dj:dj + w]]
            e = a if e is None else e * a
    return e


@pytest.mark.parametrize("w", [1, 5, 31, 32, 33, 34, 63, 64, 65, 66, 97, 130])
def test_erosion_at_every_row_length_around_the_block(w):
    """The 3×3 erosion of a w-wide image through nine shifted windows (rows of
    w - 2 values inside the border) equals scipy.ndimage's with the block on,
    off, and with blocks of 4 (several blocks and a last one in small rows)."""
    rng = np.random.default_rng(w)
    im = rng.random((7, w)) < 0.85
    want = ndi.binary_erosion(im, structure=np.ones((3, 3), bool), border_value=0)
    img = ep.tensor("img", 2)
    for tuning in (DEFAULT, OFF, DEFAULT.with_(overlap_values=4)):
        kern = ep.compile(erosion(img, 7, w), semiring=ep.semirings.boolean, tuning=tuning)
        assert np.array_equal(kern(img=im), want), tuning.overlap_values
    kern = ep.compile(erosion(img, 7, w), semiring=ep.semirings.boolean)
    assert "_k < 32)" in kern.c_source        # the rows' lengths are the call's
    assert "_k < 32)" not in ep.compile(erosion(img, 7, w), semiring=ep.semirings.boolean,
                                        tuning=OFF).c_source


@pytest.mark.parametrize("shape", [(3, 40), (2, 31), (5, 100), (1, 1)])
def test_a_boolean_product_of_dense_operands(shape):
    A, B = ep.tensor("A", 2), ep.tensor("B", 2)
    rng = np.random.default_rng(1)
    a, b = rng.random(shape) < 0.7, rng.random(shape) < 0.7
    for tuning in (DEFAULT, OFF, DEFAULT.with_(overlap_values=2)):
        kern = ep.compile(A[i, j] * B[i, j], semiring=ep.semirings.boolean, tuning=tuning)
        assert np.array_equal(kern(A=a, B=b), a & b)


def test_wider_values_and_accumulations_keep_their_loops():
    """A float program is not blocked; a boolean Σ reads the output it adds to."""
    A, B = ep.tensor("A", 2), ep.tensor("B", 2)
    assert "_last" not in ep.compile(A[i, j] * B[i, j]).c_source
    assert "_last" in ep.compile(A[i, j] * B[i, j], semiring=ep.semirings.boolean).c_source
    summed = ep.compile(ep.sum(j, A[i, j] * B[i, j]), semiring=ep.semirings.boolean)
    assert "_k < 32)" not in summed.c_source


def _loop(store_value, end=imp.Var("n")):
    body = imp.seq(imp.Decl("t", "index", imp.Var("v")),
                   imp.Store("out", imp.Var("t"), store_value), imp.incr("v"))
    return imp.While(imp.lt(imp.Var("v"), end), body)


def test_the_shapes_it_takes():
    read = imp.Load("a", imp.Var("t"))
    assert overlap_tail._shape(_loop(read)) == ("v", imp.Var("n"))
    assert overlap_tail._shape(_loop(imp.Load("out", imp.Var("t")))) is None   # reads out
    assert overlap_tail._shape(_loop(imp.Const(0))) is None                    # a fill
    assert overlap_tail._shape(_loop(read, imp.Const(64))) is None             # a known count
    assert overlap_tail._shape(_loop(read, imp.Var("t"))) is None              # end changes
    probe = imp.Probe("h", imp.Var("t"), imp.Const(7), imp.Var("t"))
    assert overlap_tail._shape(_loop(imp.Bin("+", read, probe))) is None       # not a plain read


def test_the_blocks_run_on_the_interpreter():
    """The rewritten loop run by the Imp interpreter stores what the loop does,
    for every count from 0 to 3 blocks and a part."""
    loop = _loop(imp.Bin("+", imp.Load("a", imp.Var("t")), imp.Const(1)))
    new = overlap_tail._overlapped(loop, 4, Names())
    for n in range(15):
        outs = []
        for stmt in (loop, new):
            m = Machine(ep.semirings.integer,
                        {"a": np.arange(20) * 3, "out": np.zeros(20, np.int64), "n": n, "v": 0})
            m.exec(stmt)
            outs.append((m.env["out"].copy(), m.env["v"]))
        assert np.array_equal(outs[0][0], outs[1][0]) and outs[0][1] == outs[1][1] == n
