"""A lazy program as one etchpy index expression, and `ep.equivalent` on lazy arrays.

    to_expr(a) -> (expression, output indices)     every node fused, leaves as
                                                     tensors X0, X1, ... (formats
                                                     as stored), axes i0, i1, ...
    equivalent(e1, e2, semiring=None) -> bool       as optimizer.equivalent, for
                                                     expressions or lazy arrays
"""
from __future__ import annotations

from ..expr.nodes import Access, TensorVar
from ..optimizer.optimize import equivalent as expr_equivalent
from .nodes import LazyArray, Leaf
from .translate import Translator


def to_expr(a: LazyArray, names: dict | None = None):
    """The index expression of the whole program of `a` (no step materialised) and
    its output indices (None for an axis of size one). `names` maps a leaf's key
    to its tensor name and is filled in (share it to name two programs alike)."""
    names = {} if names is None else names

    def pre(n: LazyArray, ix):
        if not isinstance(n, Leaf):
            return None
        name = names.setdefault(n.key, f"X{len(names)}")
        kept = tuple(v for v in ix if v is not None)
        fmt = getattr(n.value, "format", "dense") if len(kept) == 2 else "dense"
        return Access(TensorVar(name, len(kept), fmt if fmt in ("csr", "csc") else "dense"),
                      kept)
    tr = Translator(pre)
    ix = tr.names(a)
    return tr.expr(a, ix), tuple(v for v in ix if v is not None)


def equivalent(e1, e2, semiring=None) -> bool:
    """Whether e1 and e2, two expressions or two lazy arrays, denote the same value
    (etchpy.optimizer.equivalent on their index expressions; the leaves of two
    lazy programs are named alike, by identity). Lazy arrays of different shapes
    are not equivalent. semiring: as for optimizer.equivalent (None: real).

        >>> a = ep.lazy(np.ones((2, 3)))
        >>> ep.equivalent((a.T @ a).T, a.T @ a)
        True
    """
    if isinstance(e1, LazyArray) or isinstance(e2, LazyArray):
        if not (isinstance(e1, LazyArray) and isinstance(e2, LazyArray)):
            return False
        if e1.shape != e2.shape:
            return False
        names: dict = {}
        (x1, _), (x2, _) = to_expr(e1, names), to_expr(e2, names)
        return expr_equivalent(x1, x2, semiring)
    return expr_equivalent(e1, e2, semiring)
