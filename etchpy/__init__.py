"""etchpy: named-index contraction expressions over any semiring, compiled to fused C.

    import etchpy as ep
    i, j = ep.indices("i j")
    A = ep.tensor("A", 2, format="csr"); x = ep.tensor("x", 1)
    y = ep.evaluate(ep.sum(j, A[i, j] * x[j]), A=A_scipy, x=x_np)

help() on each public name (ep.compile, ep.evaluate, ep.einsum, ep.export_c,
ep.tensor, ep.indices, ep.sum, ep.map, ep.Kernel, ep.Tensor, ep.Format, ep.Semiring,
ep.semirings, ep.Tuning, ep.optimize, ep.lazy, ep.compute, ep.relation, ep.table, ep.fixpoint,
ep.graph.pagerank, ...) gives its parameters and an example; docs/ has the guide per topic.
"""
import importlib

from .version import __version__

from .errors import (CompileError, EtchpyError, ExpressionTypeError, FormatError,
                     InputError, MapError, OrderError, PerformanceWarning, SemiringError,
                     SketchError)
from .expr.nodes import Expr, Index, TensorVar, indices, tensor
from .runtime.tensor import Tensor
from .expr.nodes import sum  # noqa: A004 - ep.sum is the public name
from .expr.maps import map  # noqa: A004 - ep.map is the public name
from .expr.compare import between
from .expr.logic import eq, ne
from .expr.bins import onehot
from .formats import (Banded, BlockList, ByteMap, Compressed, Dense, Format, Hash, Runs,
                      Singleton)
from .semiring import Op, Semiring, semirings
from .semiring_laws import check_axioms
from .tuning import Tuning
from .api import compile, einsum, evaluate, export_c  # noqa: A004 - ep.compile is the public name
from .runtime.kernel import Kernel

# Loaded on first use (`import etchpy` does not import them): name -> (module, attribute
# or None for the module itself).
_ON_FIRST_USE = {
    "sketch": ("etchpy.optimizer.sketch", None),
    "partition": ("etchpy.distributed", "partition"),
    "Keys": ("etchpy.relational", "Keys"), "Relation": ("etchpy.relational", "Relation"),
    "decode": ("etchpy.relational", "decode"), "relation": ("etchpy.relational", "relation"),
    "table": ("etchpy.relational", "table"), "Table": ("etchpy.relational", "Table"),
    "graph": ("etchpy.graph", None), "fixpoint": ("etchpy.graph", "fixpoint"),
    # lazy arrays: ep.lazy is the package etchpy.lazy, which a call wraps an array
    "lazy": ("etchpy.lazy", None), "LazyArray": ("etchpy.lazy", "LazyArray"),
    "approximate": ("etchpy.lazy", "approximate"), "compute": ("etchpy.lazy", "compute"),
    "equivalent": ("etchpy.lazy", "equivalent"), "explain": ("etchpy.lazy", "explain"),
    "exp": ("etchpy.lazy", "exp"), "log": ("etchpy.lazy", "log"),
    "sqrt": ("etchpy.lazy", "sqrt"), "abs": ("etchpy.lazy", "absolute"),
    "maximum": ("etchpy.lazy", "maximum"), "minimum": ("etchpy.lazy", "minimum"),
    "optimize": ("etchpy.lazy.optimize", "optimize"),      # expressions and lazy arrays
}


def __getattr__(name):
    """The names of _ON_FIRST_USE, imported when first asked for."""
    where = _ON_FIRST_USE.get(name)
    if where is None:
        raise AttributeError(f"module 'etchpy' has no attribute {name!r}")
    module = importlib.import_module(where[0])
    value = module if where[1] is None else getattr(module, where[1])
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_ON_FIRST_USE))
