"""Histograms in the language: `ep.onehot(b, A[i, j], n)`, an index taken from a value.

`ep.onehot(b, A[idx], n)` is the 0/1 tensor over (idx..., b) that holds the
semiring's one at (idx, b) where A stores an entry at idx whose value is b,
an integer in 0..n-1, and nothing (zero) elsewhere: entries whose value is
not such an integer fall in no bin, and A's unstored cells (a sparse
level's fill) in none. A 256-bin histogram of an image is then a sum:

    H[b] = Σ_ij onehot(b, I[i, j], 256)

The values become the coordinates of one more storage level below A's
(formats.bins: A's own arrays, read in place, no copy), so b is walked after
A's indices, one state per stored entry, and the output is written at the
value. Below a run-length level a run is one entry (formats.runs), so a Σ
over a run adds its length to its bin once (Semiring.repeat). In the real
and integer semirings H[b] counts the entries of value b; where ⊕ is
idempotent (boolean, min-plus, max-plus) it is the semiring's one exactly
where some entry has value b (which values occur); with a semiring ⊕ of no
closed n-fold sum each entry adds one. Complex values have no order and are
refused (runtime.predicates). proofs_notes/bins.md.
"""
from __future__ import annotations

import numbers

from ..errors import ExpressionTypeError
from ..formats import Bins, Format
from .compare import CompareVar, Predicate, _plain
from .nodes import COMPARE_PREFIX, Access, Index, TensorVar, show


def onehot(b: Index, acc, n: int | str) -> Access:
    """The one-hot of the values of `acc` (a tensor access) over the new index
    `b` of size n (see the module docstring); n may be the name of a parameter
    passed at call time (`kernel(A=..., nbins=40)`), so that one kernel serves
    every number of bins:

        >>> i, j, b = ep.indices("i j b")
        >>> I = ep.tensor("I", 2, format="rle")
        >>> ep.sum((i, j), ep.onehot(b, I[i, j], 256))     # its histogram
        Σ_{i,j} cmp_I_bins_256[i,j,b]
    """
    if not isinstance(b, Index):
        raise ExpressionTypeError(f"ep.onehot's first argument is the index of the bins, "
                                  f"got {b!r}")
    if not _plain(acc) or type(acc.tensor) is not TensorVar:      # not a window
        raise ExpressionTypeError(f"ep.onehot takes a tensor accessed at distinct indices "
                                  f"(A[i, j]), got {acc!r}")
    if b in acc.indices:
        raise ExpressionTypeError(f"ep.onehot({b}, {show(acc)}, ...): the index of the bins "
                                  f"must be a new one, not one of {show(acc)}'s")
    if isinstance(n, str):
        if not n.isidentifier() or n.startswith(COMPARE_PREFIX):
            raise ExpressionTypeError(f"ep.onehot({b}, {show(acc)}, n): a parameter n is "
                                      f"named by an identifier, got {n!r}")
    elif isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ExpressionTypeError(f"ep.onehot({b}, {show(acc)}, n): n, the number of bins, "
                                  f"is a positive int or a parameter's name, got {n!r}")
    else:
        n = int(n)
    t = acc.tensor
    fmt = Format((*t.format.levels, Bins()), (*t.format.mode_order, t.order))
    var = CompareVar(f"{COMPARE_PREFIX}{t.name}_bins_{n}", t.order + 1, fmt,
                     kind="bins", tests=(("bins", n),), source=t.name,
                     columns=((t.name, t.format, None),))
    return Predicate(var, (*acc.indices, b))


def is_bins(tv) -> bool:
    """Is `tv` the tensor of a onehot (its bins read off a source's values)?"""
    return isinstance(tv, CompareVar) and tv.kind == "bins"


def bins_count(tv) -> int | str:
    """The number of bins of a onehot's tensor, or the name of the parameter
    that gives it at call time."""
    return tv.tests[0][1]


def levels_below(tv) -> int:
    """The levels of a value predicate below its structure's (expr.shared): a
    bins level per bin, a dense level per index its terms add; 0 for others."""
    if not isinstance(tv, CompareVar) or tv.kind != "value":
        return 0
    structure = len(tv.columns[0][1].levels) if tv.columns else 0
    over = {p for t in tv.terms for k in t[1] for p in tv.columns[k][2] if p >= structure}
    return len(tv.bins) + len(over)
