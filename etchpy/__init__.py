"""etchpy: named-index contraction expressions over any semiring, compiled to fused C.

    import etchpy as ep
    i, j = ep.indices("i j")
    A = ep.tensor("A", 2, format="csr"); x = ep.tensor("x", 1)
    y = ep.evaluate(ep.sum(j, A[i, j] * x[j]), A=A_scipy, x=x_np)

help() on each public name (ep.compile, ep.evaluate, ep.einsum, ep.export_c,
ep.tensor, ep.indices, ep.sum, ep.map, ep.Kernel, ep.Tensor, ep.Format, ep.Semiring,
ep.semirings, ep.Tuning, ep.optimize, ep.lazy, ep.compute, ep.relation, ep.fixpoint,
ep.graph.pagerank, ...) gives its parameters and an example; docs/ has the guide per topic.
"""
from .version import __version__

from .errors import (CompileError, EtchpyError, ExpressionTypeError, FormatError,
                     InputError, MapError, OrderError, PerformanceWarning, SemiringError,
                     SketchError)
from .expr.nodes import Expr, Index, TensorVar, indices, tensor
from .runtime.tensor import Tensor
from .expr.nodes import sum  # noqa: A004 - ep.sum is the public name
from .expr.maps import map  # noqa: A004 - ep.map is the public name
from .expr.compare import between
from .formats import Compressed, Dense, Format, Singleton
from .semiring import Op, Semiring, check_axioms, semirings
from .tuning import Tuning
from .optimizer import sketch
from .api import compile, einsum, evaluate, export_c  # noqa: A004 - ep.compile is the public name
from .distributed import partition
from .relational import Keys, Relation, decode, relation
from . import graph
from .graph import fixpoint
from .runtime.kernel import Kernel
from .lazy import (LazyArray, approximate, compute, equivalent, exp, explain, lazy, log, maximum, minimum,
                   sqrt)
from .lazy import absolute as abs  # noqa: A004 - ep.abs is the public name
from .lazy.optimize import optimize    # expressions and lazy arrays
