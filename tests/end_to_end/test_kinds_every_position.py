"""Issue 40's level kinds in every position and mode order, read through windows
with a step and a shift, on every kind of semiring (complex ones included).

The central property (tests/end_to_end/test_backends.py) draws these kinds among
its random formats, but its fifty CI draws reach each kind in only a few
positions (tests/project/test_strategies_reach.py checks that each kind is
drawn, not where). Here each kind is pinned: the banded, uniform band and
block-list levels (which may sit anywhere) as a matrix's first and as its
second level, the last-only kinds (run lists dense and sparse, bytemap, hash)
under a compressed level, each in both mode orders; the semiring rotates over
the formats so that every kind meets several. Each format's matrix is read
through a window of each index (a step of 2 over the rows, a shift of -1 over
the columns: a read past the operand's start gives the fill), and every backend
must give the dense reference's answer. Under --runslow the same runs over more
level pairs (each kind under or over a dense, compressed, banded and
block-list level, and beside itself) and three more expressions (the plain
product, a sum of the matrix with a product of it with itself, a product with a
csr matrix)."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.testing import check_backends

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j, k = ep.indices("i j k")
ANYWHERE = ("banded", "uniform_band", "blocks")       # may be any level
LAST = ("runs", "sparse_runs", "bytemap", "hash")     # last_only kinds
ORDERS = ((0, 1), (1, 0))
SEMIRINGS = ("real", "complex", "min_plus", "boolean", "integer", "max_times", "complex64",
             "real32")


def pinned_formats(wide: bool):
    """The formats: each kind at each position it may take, in both mode orders."""
    pairs = []
    for kind in ANYWHERE:
        pairs += [(kind, "compressed"), ("dense", kind)]
        pairs += [(kind, kind), (kind, "runs")] if wide else []
    for kind in LAST:
        pairs += [("compressed", kind)]
        pairs += [("dense", kind), ("banded", kind), ("blocks", kind)] if wide else []
    return [ep.Format(list(p), order) for p in pairs for order in ORDERS]


def matrix(shape, sr, rng):
    """About half the cells stored, values in runs of two along the rows (so
    that run lists hold runs longer than one), complex ones off the real line."""
    s = ep.semirings.get(sr)
    out = np.full(shape, s.zero, dtype=s.dtype)
    stored = rng.random(shape) < 0.45
    pairs = lambda a: np.repeat(a[:, ::2], 2, axis=1)[:, :shape[1]]
    vals = pairs(rng.integers(1, 4, size=shape))
    if s.dtype.kind == "c":
        vals = vals + 1j * pairs(rng.integers(-2, 3, size=shape))
    elif s.dtype.kind == "b":
        vals = vals > 0
    out[stored] = vals[stored].astype(s.dtype)
    return out


def problems(fmt: ep.Format, sr: str, wide: bool):
    rng = np.random.default_rng(sum(map(ord, str(fmt))))
    A, B, x = ep.tensor("A", 2, format=fmt), ep.tensor("B", 2, format="csr"), ep.tensor("x", 1)
    a, b, v = matrix((7, 9), sr, rng), matrix((9, 6), sr, rng), matrix((1, 9), sr, rng)[0]
    yield ep.sum(j, A[i[1:6:2], j[-1:8]] * x[j]), {"A": a, "x": v}
    if wide:
        yield ep.sum(j, A[i, j] * x[j]), {"A": a, "x": v}
        yield A[i, j] + A[i, j] * A[i, j], {"A": a}
        yield ep.sum(j, A[i, j] * B[j, k]), {"A": a, "B": b}


def _cases(wide: bool):
    fmts = pinned_formats(wide)
    marks = [pytest.mark.slow] if wide else []
    return [pytest.param(f, SEMIRINGS[n % len(SEMIRINGS)], wide, marks=marks,
                         id=f"{'+'.join(map(str, f.levels))}{list(f.mode_order)}")
            for n, f in enumerate(fmts)]


@pytest.mark.parametrize("fmt, sr, wide", _cases(False) + _cases(True))
def test_every_backend_reads_the_kind_here(fmt, sr, wide):
    for expr, inputs in problems(fmt, sr, wide):
        check_backends(expr, inputs, semiring=sr, backends=("streams", "c"))


def test_the_pins_cover_every_kind_in_each_position_and_order():
    """Each kind at every position it may take, both mode orders, and several
    semirings; the complex ones among them."""
    seen = {}
    for case in _cases(False):
        fmt, sr, _ = case.values
        for pos, lv in enumerate(fmt.levels):
            seen.setdefault(str(lv), set()).add((pos, fmt.mode_order, sr))
    for kind in ANYWHERE + LAST:
        where = {(pos, order) for pos, order, _ in seen[kind]}
        positions = (0, 1) if kind in ANYWHERE else (1,)
        assert where == {(p, o) for p in positions for o in ORDERS}, (kind, where)
        assert len({sr for *_, sr in seen[kind]}) >= 2, kind
    assert {"complex", "complex64"} <= {sr for s in seen.values() for *_, sr in s}
