"""Lazy linear-algebra programs, optimised whole: `ep.lazy(x)` wraps an array,
numpy-style operators build a program, `ep.compute(a, b, ...)` runs several
results as one program and `ep.explain(a, b, ...)` shows it (docs/lazy.md).

    a = ep.lazy(X); u = ep.lazy(U); v = ep.lazy(V)
    loss = ((a - u @ v.T) ** 2).sum()
    loss.compute()            # never forms u @ v.T
"""
from .array import LazyArray, lazy, map_node
from .program import compute, explain
from .ra import equivalent, to_expr


def exp(a) -> LazyArray:
    """Element-wise e**a of a lazy array (or an array, wrapped)."""
    return map_node("exp", a)


def log(a) -> LazyArray:
    """Element-wise natural logarithm of a lazy array."""
    return map_node("log", a)


def sqrt(a) -> LazyArray:
    """Element-wise square root of a lazy array."""
    return map_node("sqrt", a)


def absolute(a) -> LazyArray:
    """Element-wise |a| of a lazy array (exported as ep.abs)."""
    return map_node("abs", a)


def maximum(a, c) -> LazyArray:
    """Element-wise max(a, c) of a lazy array and a scalar c (ReLU: maximum(a, 0))."""
    return map_node("maximum", a, c)


def minimum(a, c) -> LazyArray:
    """Element-wise min(a, c) of a lazy array and a scalar c."""
    return map_node("minimum", a, c)


__all__ = ["LazyArray", "lazy", "compute", "explain", "equivalent", "to_expr", "exp", "log", "sqrt", "absolute",
           "maximum", "minimum"]
