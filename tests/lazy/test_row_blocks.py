"""Xᵀ·f(X·W) with X a dense input larger than two row blocks runs by blocks of
X's rows on replays (etchpy.lazy.rows): each program equals numpy on its first
run and on replays, with new arrays, with arrays written in place between
evaluations, and when a value the blocks recompute is also a result."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import host_facts
from etchpy.lazy import rows as row_blocks
from etchpy.lazy.replay import PROGRAMS

pytestmark = pytest.mark.usefixtures("shared_cache")

# blocks of 16 rows of a 200-column X, of any size
SMALL = ep.Tuning(lazy_row_block_bytes=16 * 200 * 8, lazy_row_block_min=0)


def logistic(F, X, w, y):
    return X.T @ (1 / (1 + F.exp(-(X @ w))) - y),


def least_squares(F, X, w, y):
    return X.T @ (X @ w - y),


def gram(F, X, w, y):
    return X.T @ (X @ w),


def scaled(F, X, W, Y, b):
    """A 2-d W, an operand broadcast along the rows (b) and one cut by them (Y)."""
    return X.T @ (F.exp(X @ W) * b - Y),


def shared(F, X, w, y):
    """X·w is a result too: it stays computed whole."""
    s = X @ w
    return s, X.T @ (s - y)


def transposed(F, X, W, Z):
    """The region transposes an operand: not computed by rows."""
    return X.T @ (X @ W - Z.T),


def _arrays(seed, m=300, n=200, k=3):
    rng = np.random.default_rng(seed)
    return dict(X=rng.random((m, n)) / n, w=rng.standard_normal(n), y=rng.random(m),
                W=rng.standard_normal((n, k)), Y=rng.random((m, k)), b=rng.random(k),
                Z=rng.random((k, m)))


def _run(prog, arrays, tuning=SMALL):
    names = prog.__code__.co_varnames[1:prog.__code__.co_argcount]
    args = [arrays[k] for k in names]
    got = ep.compute(*prog(ep, *(ep.lazy(a) for a in args)), tuning=tuning)
    got = got if isinstance(got, tuple) else (got,)
    for g, want in zip(got, prog(np, *args)):
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-12)
    return got


def _blocked_tapes() -> int:
    return sum(any(getattr(fn, "replaces", None) for _, fn in tape.steps)
               for tape in list(PROGRAMS._d.values()))


@pytest.mark.parametrize("prog", [logistic, least_squares, gram, scaled, shared, transposed])
def test_row_blocked_programs_equal_numpy_on_new_and_rewritten_arrays(prog):
    arrays = _arrays(0)
    for seed in range(1, 4):
        _run(prog, arrays)                          # first run, then replays
        _run(prog, _arrays(seed))                   # new arrays, the same kinds
        for a in arrays.values():                   # the same arrays written in place
            a *= -1.5
    arrays["X"][5:140] = 0.0
    _run(prog, arrays)


@pytest.mark.parametrize("prog, blocked", [(logistic, True), (least_squares, True),
                                           (scaled, True), (shared, False), (transposed, False)])
def test_a_replay_runs_by_blocks_only_where_the_region_goes_by_rows(prog, blocked):
    PROGRAMS.clear()
    arrays = _arrays(5, m=301)                      # the last block is short
    _run(prog, arrays)
    _run(prog, arrays)
    assert _blocked_tapes() == (1 if blocked else 0)


@pytest.mark.parametrize("tuning, m", [(ep.Tuning(lazy_row_block_bytes=0), 300), (SMALL, 31),
                                      (SMALL.with_(lazy_row_block_min=300 * 200 * 8 + 1), 300)])
def test_no_blocks_when_switched_off_or_x_is_under_two_blocks_or_the_least_bytes(tuning, m):
    PROGRAMS.clear()
    arrays = _arrays(2, m=m)
    for _ in range(2):
        _run(logistic, arrays, tuning)
    assert _blocked_tapes() == 0


@pytest.mark.parametrize("prog, blocked", [(least_squares, True), (transposed, False)])
def test_explain_says_which_product_is_replayed_by_row_blocks(prog, blocked):
    arrays = _arrays(3)
    names = prog.__code__.co_varnames[1:prog.__code__.co_argcount]
    text = ep.explain(*prog(ep, *(ep.lazy(arrays[k]) for k in names)), tuning=SMALL)
    assert ("replayed by blocks of 16 rows of X0" in text) == blocked


@pytest.mark.parametrize("layout", ["float32", "int64", "fortran", "strided"])
def test_row_blocks_of_other_dtypes_and_layouts_equal_numpy(layout):
    """X of another dtype (the products' dtype promoted as numpy's), in Fortran
    order, or a strided view: the blocks are row slices numpy's @ reads as
    they are."""
    arrays = _arrays(7)
    X = arrays["X"]
    if layout == "float32":
        arrays["X"] = X.astype(np.float32)
    elif layout == "int64":
        arrays["X"] = (X * 1000).astype(np.int64)
    elif layout == "fortran":
        arrays["X"] = np.asfortranarray(X)
    else:
        arrays["X"] = np.repeat(X, 2, axis=1)[:, ::2]
    for prog in (least_squares, scaled):
        names = prog.__code__.co_varnames[1:prog.__code__.co_argcount]
        args = [arrays[k] for k in names]
        want = prog(np, *args)[0]
        for _ in range(3):
            got = ep.compute(*prog(ep, *(ep.lazy(a) for a in args)), tuning=SMALL)
            np.testing.assert_allclose(got, want, rtol=1e-5 if layout == "float32" else 1e-12)


@pytest.mark.parametrize("layout", ["float64", "float32", "fortran"])
def test_the_least_bytes_cut_an_x_of_that_many_and_not_one_byte_fewer(layout):
    """Tuning.lazy_row_block_min: X of exactly that many bytes is cut, of one
    byte fewer it is not; both equal numpy, X written in place between calls."""
    arrays = _arrays(9)
    X = arrays["X"]
    arrays["X"] = (X.astype(np.float32) if layout == "float32"
                   else np.asfortranarray(X) if layout == "fortran" else X)
    for least, blocked in ((arrays["X"].nbytes, 1), (arrays["X"].nbytes + 1, 0)):
        PROGRAMS.clear()
        tuning = SMALL.with_(lazy_row_block_min=least)
        for k in range(3):
            args = [arrays[n] for n in ("X", "w", "y")]
            got = ep.compute(*least_squares(ep, *(ep.lazy(a) for a in args)), tuning=tuning)
            np.testing.assert_allclose(got, least_squares(np, *args)[0],
                                       rtol=1e-5 if layout == "float32" else 1e-12)
            arrays["X"][k::7] *= -0.5
        assert _blocked_tapes() == blocked



@pytest.mark.parametrize("l2, least, rows", [
    (64 << 10, 64 << 10, (32 << 10) // 1600),      # X (480 KB) over the L2: its halves
    (64 << 10, 0, 0),                              # Tuning.lazy_row_block_l2 off
    (64 << 10, 128 << 10, 0),                      # the L2 under the least
    (1 << 20, 64 << 10, 0),                        # X within the L2
    (0, 64 << 10, 0)])                             # no L2 reported
def test_an_x_larger_than_the_l2_is_cut_into_its_halves(l2, least, rows):
    x = _arrays(11)["X"]
    assert row_blocks.block_rows(x, 0, 1 << 40, l2_least=least, l2=l2) == rows


L2 = row_blocks.host_l2()


@pytest.mark.skipif(not L2 or L2 > 8 << 20, reason="no L2 reported, or one too large to pass")
@pytest.mark.parametrize("prog, least, blocked", [
    (least_squares, 1, True), (logistic, 1, True),
    (scaled, 1, False),                            # a matrix W: not by this rule
    (least_squares, 0, False), (least_squares, L2 + 1, False)])
def test_a_replay_over_an_x_larger_than_the_hosts_l2_goes_by_blocks(prog, least, blocked):
    PROGRAMS.clear()
    tuning = ep.Tuning(lazy_row_block_l2=least)
    arrays = _arrays(11, m=L2 // (200 * 8) + 40)
    for _ in range(3):
        _run(prog, arrays, tuning)
        arrays["X"][::5] *= -0.5
    assert _blocked_tapes() == blocked


@pytest.mark.skipif(not L2 or L2 > 8 << 20, reason="no L2 reported, or one too large to pass")
@pytest.mark.parametrize("tuning", [ep.Tuning(), ep.Tuning(lazy_row_block_l2=-1)])
def test_the_default_l2_rule_is_the_hosts(tuning):
    """Tuning.lazy_row_block_l2's default (-1) is the host's, read where the plan
    cuts X (etchpy.host_facts: 0, off, on AMD Zen 3/4; 1 MiB elsewhere): an X
    over this host's L2 is cut on replays exactly when that value asks."""
    host = host_facts.lazy_row_block_l2()
    PROGRAMS.clear()
    arrays = _arrays(11, m=L2 // (200 * 8) + 40)
    for _ in range(3):
        _run(least_squares, arrays, tuning)
        arrays["X"][::5] *= -0.5
    assert _blocked_tapes() == (0 < host <= L2)


def test_the_hosts_l2_is_read_as_bytes_or_zero():
    assert isinstance(L2, int) and L2 >= 0
