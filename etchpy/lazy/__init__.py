"""Lazy linear-algebra programs, optimised whole: `ep.lazy(x)` wraps an array,
numpy-style operators build a program, `ep.compute(a, b, ...)` runs several
results as one program and `ep.explain(a, b, ...)` shows it (docs/lazy.md).

    a = ep.lazy(X); u = ep.lazy(U); v = ep.lazy(V)
    loss = ((a - u @ v.T) ** 2).sum()
    loss.compute()            # never forms u @ v.T
"""
import sys
import types

from .array import lazy
from .nodes import LazyArray
from .operators import wrap   # LazyArray's operators, made fast (lazy.operators)
from .program import compute as _compute, explain
from .approx import Approximation, approximate
from .ra import equivalent, to_expr
from .traced import Function, function

# ep.lazy.function(f): f traced once per kind of input, then replayed (lazy.traced)
lazy.function = function


class _Package(types.ModuleType):
    """This package is `ep.lazy` (etchpy loads it on first use): calling it
    wraps an array, as `lazy.array.lazy` does; its attributes are the package's
    (`ep.lazy.function`, ...)."""

    __call__ = staticmethod(wrap)      # ep.lazy(x, constant=False), without a frame


# the package's module object becomes a _Package (a module type may be changed
# to a subclass of ModuleType), so that `ep.lazy(x)` calls it
setattr(sys.modules[__name__], "__class__", _Package)


class _Compute:
    """ep.compute: etchpy.lazy.program.compute (its __wrapped__, whose docstring
    and signature these are), called through this class's __call__, which
    etchpy.lazy.c_nodes sets to the binder's C entry over it while the C
    operators are installed (the lookup of a program met before without the
    Python function's frame; anything else is that function's)."""

    __call__ = staticmethod(_compute)
    __wrapped__ = staticmethod(_compute)
    __doc__ = _compute.__doc__
    __name__ = "compute"

    def __repr__(self) -> str:
        return "<function etchpy.lazy.compute>"


compute = _Compute()


def exp(a) -> LazyArray:
    """Element-wise e**a of a lazy array (or an array, wrapped).

    Parameters: a, a lazy array, an array (wrapped) or an index expression
    (then it is ep.map("exp", a)). Returns: a lazy array.

        >>> ep.exp(ep.lazy(x))
    """
    return LazyArray._map_op("exp", a)


def log(a) -> LazyArray:
    """Element-wise natural logarithm of a lazy array.

    Parameters: a, a lazy array, an array (wrapped) or an index expression
    (then it is ep.map("log", a)). Returns: a lazy array.

        >>> (X * ep.log(W @ H)).sum()
    """
    return LazyArray._map_op("log", a)


def sqrt(a) -> LazyArray:
    """Element-wise square root of a lazy array.

    Parameters: a, a lazy array, an array (wrapped) or an index expression
    (then it is ep.map("sqrt", a)). Returns: a lazy array.

        >>> ep.sqrt(ep.lazy(x))
    """
    return LazyArray._map_op("sqrt", a)


def absolute(a) -> LazyArray:
    """Element-wise |a| of a lazy array (exported as ep.abs).

    Parameters: a, a lazy array, an array (wrapped) or an index expression.
    Returns: a lazy array.

        >>> ep.abs(ep.lazy(x) - 1)
    """
    return LazyArray._map_op("abs", a)


def maximum(a, c) -> LazyArray:
    """Element-wise max(a, c) of a lazy array and a scalar c (ReLU: maximum(a, 0)).

    Parameters: a, a lazy array, an array (wrapped) or an index expression; c, a
    number. Returns: a lazy array. Raises: InputError when c is not a scalar.

        >>> relu = ep.maximum(ep.lazy(x) @ ep.lazy(w), 0)
    """
    return LazyArray._map_arg("maximum", a, c)


def minimum(a, c) -> LazyArray:
    """Element-wise min(a, c) of a lazy array and a scalar c.

    Parameters: a, a lazy array, an array (wrapped) or an index expression; c, a
    number. Returns: a lazy array. Raises: InputError when c is not a scalar.

        >>> clipped = ep.minimum(ep.lazy(x), 1.0)
    """
    return LazyArray._map_arg("minimum", a, c)


__all__ = ["LazyArray", "Function", "function", "Approximation", "approximate", "lazy", "compute", "explain", "equivalent", "to_expr", "exp", "log", "sqrt", "absolute",
           "maximum", "minimum"]
