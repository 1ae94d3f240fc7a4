"""Hypothesis strategies for the parts of a problem (re-exported by etchpy.testing).

- `semirings_st()`: the built-in semirings and a user-defined one (`max_min`);
- `semiring_values(sr)`: carrier values that keep every backend exact (small
  integers for the float semirings, so reordered sums agree bit for bit), and
  `stored_values(sr)`, those that are not the semiring's zero;
- `sparse_arrays(shape, sr)`: dense arrays whose implicit entries are the zero,
  mostly a random share stored (at least one), sometimes one or none;
- `formats_for(order)`: every named format of that order and random level
  formats (`random_formats`: any level kinds, coo-style runs, permuted modes).

The simplest draw of each is one that can fail: a sparse format, a patterned
array of several values, a permuted custom format.
"""
from __future__ import annotations

import numpy as np

from ..formats import _LEVEL_NAMES, Format
from ..semiring import Semiring, semirings

try:
    from hypothesis import strategies as st
except ImportError as err:  # pragma: no cover - hypothesis is a test extra
    raise ImportError("etchpy.testing needs hypothesis: pip install 'etchpy[test]'") from err


# A user-defined semiring, to keep the machinery honest about non-built-ins:
# (max, min) over the extended reals, the "bottleneck" or capacity semiring.
max_min = Semiring("max_min", np.float64, -np.inf, np.inf,
                   ("({a} > {b} ? {a} : {b})", np.maximum),
                   ("({a} < {b} ? {a} : {b})", np.minimum), idempotent=True)


def semirings_st() -> st.SearchStrategy[Semiring]:
    """A strategy of semirings: every built-in one and `max_min`, a user-defined
    (max, min) "bottleneck" semiring that keeps the machinery honest about
    semirings it does not know.

        @given(semirings_st())
        def test_laws(sr):
            assert ep.check_axioms(sr, [0, 1, 2]) == []
    """
    return st.sampled_from(semirings.all() + [max_min])


def semiring_values(sr: Semiring):
    """Values of the carrier on which every backend computes exactly (the
    semiring's zero among them).

        >>> semiring_values(ep.semirings.integer)      # integers -3..3
    """
    if sr.dtype == np.bool_:
        return st.booleans()
    if sr.dtype.kind in "iu":
        return st.integers(-3, 3)
    if sr.name in ("max_times",):
        return st.integers(0, 3).map(float)
    if sr.dtype.kind == "c":        # Gaussian integers: exact products and sums
        return st.builds(complex, st.integers(-3, 3), st.integers(-2, 2))
    return st.integers(-3, 3).map(float)


def stored_values(sr: Semiring) -> list:
    """Values of the carrier of semiring `sr` other than its zero, exact on every
    backend: what a sparse input stores. The semiring's one comes first, then
    small integers; 0 is among them where it is not the zero (min_plus, max_plus);
    for a complex carrier, small Gaussian integers (1j among them).

        >>> stored_values(ep.semirings.min_plus)
        [0.0, 1.0, 2.0, -1.0, 3.0, -2.0, -3.0]
    """
    if sr.dtype == np.bool_:
        return [True]
    if sr.dtype.kind == "c":        # Gaussian integers, the imaginary unit among them
        return [complex(v) for v in (1, 1j, 2 - 1j, -1, 1 + 1j, -2j, 3, -1 + 2j)]
    pool = [1, 2, -1, 3, -2, -3, 0] if sr.name != "max_times" else [1, 2, 3]
    cast = int if sr.dtype.kind in "iu" else float
    return [cast(sr.one)] + [cast(v) for v in pool if v != sr.one and v != sr.zero]


# How an array is filled: mostly a random share of stored entries (at least one),
# one time in sixteen a single stored entry, one in sixteen none at all.
FILL_KINDS = ("random",) * 14 + ("single", "empty")
# The share of stored entries of a "random" fill, in quarters.
FILL_QUARTERS = (2, 1, 4, 3)


@st.composite
def sparse_arrays(draw, shape, sr: Semiring):
    """A strategy of dense numpy arrays of `shape` over the carrier of semiring `sr`
    whose implicit entries are the semiring's zero. Seven times in eight a random
    share (a quarter to all) of the entries are stored, at least one; otherwise
    exactly one entry is stored, or none (the all-zero array). Stored values
    (`stored_values`) are never the zero and are exact on every backend. Entry k
    reads its draws shifted by k, so that the simplest array is no constant:
    every other pair of entries stored, with values in turn.
    Turn them sparse with scipy or ep.Tensor.from_dense.

        @given(sparse_arrays((4, 5), ep.semirings.min_plus))
        def test_mine(M): ...
    """
    size = int(np.prod(shape, dtype=np.int64))
    kind = draw(st.sampled_from(FILL_KINDS))
    arr = np.full(size, sr.zero, dtype=sr.dtype)
    values = stored_values(sr)
    pick = st.integers(0, len(values) - 1)
    if size and kind == "random":
        quarters = draw(st.sampled_from(FILL_QUARTERS))
        for k in range(size):
            if (draw(st.integers(0, 3)) + k) % 4 < quarters:
                arr[k] = values[(draw(pick) + k) % len(values)]
    if size and (kind == "single" or (kind == "random" and np.all(arr == sr.zero))):
        arr[draw(st.integers(0, size - 1))] = values[draw(pick)]
    return arr.reshape(shape)


# The level kinds that may sit at any level (neither last_only nor one child per
# parent, as a singleton), read off the registration: a new kind is drawn with no
# edit here. Kinds storing sorted coordinates (segment_roles) first, so that the
# simplest draw is a sparse level.
ANY_LEVEL = sorted((n for n, kind in _LEVEL_NAMES.items()
                    if not getattr(kind, "last_only", None)
                    and not getattr(kind, "one_per_parent", False)),
                   key=lambda n: getattr(_LEVEL_NAMES[n], "segment_roles", None) is None)


@st.composite
def random_formats(draw, order: int):
    """A strategy of level formats of `order` levels beyond the named ones: dense,
    compressed, banded, uniform band and block-list levels in any mix (every level kind of
    formats._LEVEL_NAMES that needs no level above it), sometimes ending in a coo-style run (a
    non-unique compressed level, then singleton levels), else sometimes in a
    level kind that must be last (run-length, sparse run-length, bytemap, hash),
    stored in a permuted mode order two times in three (for two levels or more).

        @given(random_formats(3))
        def test_mine(fmt): ...
    """
    kinds = draw(st.lists(st.sampled_from(ANY_LEVEL), min_size=order, max_size=order))
    last = [n for n, kind in _LEVEL_NAMES.items() if getattr(kind, "last_only", None)]
    if order >= 2 and draw(st.sampled_from([False, False, True])):
        start = draw(st.integers(0, order - 2))
        kinds[start:] = (["compressed-nonunique"] + ["singleton-nonunique"] * (order - start - 2)
                         + ["singleton"])
    elif order and draw(st.sampled_from([False, False, True])):
        kinds[-1] = draw(st.sampled_from(last))    # run lists, bytemap, hash: last only
    identity = list(range(order))
    modes = draw(st.permutations(identity))
    if modes == identity and order >= 2 and draw(st.sampled_from([True, True, False])):
        modes = modes[1:] + modes[:1]             # rotated: permuted, never a filter
    return Format(kinds, modes)


# The formats of each order `formats_for` draws: the named ones, one of each
# structure (csf and coo of one level are one format, csf of two levels is dcsr),
# and "custom" (`random_formats`, its simplest draw permuted); in this order the
# first four tensors of the simplest problem get four different formats.
FORMATS_BY_ORDER = {0: ("dense",),
                    1: ("csf", "dense", "rle", "bytemap", "hash", "sparse_rle"),
                    2: ("csr", "csc", "custom", "coo", "dcsr", "dense", "rle"),
                    3: ("csf", "coo", "custom", "dense", "rle")}


@st.composite
def formats_for(draw, order: int, first: int = 0):
    """A strategy of formats for a tensor of `order` modes: every named format of
    that order (csf, coo, dense and rle, and bytemap, hash and sparse_rle for order 1;
    csr, csc, dcsr, coo, dense and rle for order 2; csf for one level, the same as
    coo; banded, block-list and sparse run levels of higher orders come in through
    random_formats), each as likely as a random level
    format (`random_formats`, permuted ones among them), listed in
    FORMATS_BY_ORDER. The simplest draw is the `first`-th of these (modulo their
    number): `problems` gives each new tensor the next, so that even its
    simplest problem mixes formats.

        @given(formats_for(2))
        def test_mine(fmt):
            A = ep.tensor("A", 2, format=fmt)
    """
    names = FORMATS_BY_ORDER.get(order, FORMATS_BY_ORDER[3])
    k = first % len(names)
    name = draw(st.sampled_from(names[k:] + names[:k]))
    return draw(random_formats(order)) if name == "custom" else Format.named(name, order)
