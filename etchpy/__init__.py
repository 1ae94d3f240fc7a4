"""etchpy: named-index contraction expressions over any semiring, compiled to fused C.

    import etchpy as ep
    i, j = ep.indices("i j")
    A = ep.tensor("A", 2, format="csr"); x = ep.tensor("x", 1)
    y = ep.evaluate(ep.sum(j, A[i, j] * x[j]), A=A_scipy, x=x_np)
"""
__version__ = "0.1.0"   # first: runtime modules imported below read it

from .errors import (CompileError, EtchpyError, ExpressionTypeError, FormatError,
                     InputError, OrderError, SemiringError)
from .expr.nodes import Expr, Index, TensorVar, indices, tensor
from .runtime.tensor import Tensor
from .expr.nodes import sum  # noqa: A004 - ep.sum is the public name
from .formats import Compressed, Dense, Format, Singleton
from .semiring import Op, Semiring, check_axioms, semirings
from .tuning import Tuning

from .api import einsum, evaluate
from .runtime.kernel import Kernel, compile, export_c  # noqa: A004 - ep.compile is the public name


def __getattr__(name):
    """ep.optimize and ep.equivalent load the optimizer only when first used."""
    if name in ("optimize", "equivalent"):
        from .optimizer import optimize as optimizer
        return getattr(optimizer, name)
    raise AttributeError(f"module 'etchpy' has no attribute {name!r}")
