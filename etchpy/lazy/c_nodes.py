"""Lazy arrays' operators in C (`Tuning.lazy_c_nodes`).

etchpy.lazy.operators builds a node met before from one probe of its pattern
tables, in about a microsecond of Python per operation: on a dense program of
100² numpy's whole program (5-30 µs) costs less than building its nodes. The
C binder's extension (runtime.binder, codegen_templates/binder_lazy.c.j2) makes
the same nodes in C: LazyArray's `+ - * / @` (reflected too), unary `-` and
`.T`, `.sum`, `ep.exp`/`log`/`sqrt`/`abs`, `ep.maximum`/`minimum` of a python
number and `ep.lazy` of a numpy array. Each builds,
on a pattern met before, the node the Python operator builds (class, fields,
keys, leaves: the same tables probed with the same keys, the leaves merged as
etchpy.lazy.keys.merge does; a numpy array operand, `A @ x`, made a leaf as the
C `ep.lazy` makes it) and calls that Python operator for anything else
(first meetings included), so the nodes never depend on which runs
(proofs_notes/lazy_operators.md). Their node memo (Tuning.lazy_node_bytes,
codegen_templates/binder_nodes.c.j2) gives the same leaf for the same small
array wrapped again and the same node for an operator on the same operand
objects, so a loop passing the same arrays makes and frees no node.

They are installed on LazyArray by `use(True)`, which ep.compute calls when its
tuning has `lazy_c_nodes` on (the default) and they are not installed yet, and
removed by `use(False)`, as a compute with it off calls: the operators of the
arrays built after a compute are the ones its tuning chose. Where the binder
cannot be built the Python operators stay.

    use(True)        # C operators on LazyArray (when the binder builds)
    use(True, True, 0)   # ... without the node memo
    INSTALLED[0]     # the last choice made (True or False)
"""
from __future__ import annotations

import sys
import threading

from ..runtime import binder, blas
from ..tuning import Tuning
from . import array, keys, operators as ops
from .nodes import LazyArray, Leaf, Map, MatMul, Mul, Add, Div, Pair, Transpose, Unary

# the last choice use() made; None before the first
INSTALLED: list = [None]
# the last (lazy_c_nodes, lazy_c_memo, lazy_node_bytes, lazy_node_large) use() was
# given; None before the first
CHOSEN: list = [None]
DEFAULT = (True, True, Tuning().lazy_node_bytes, Tuning().lazy_node_large)  # tuning=None's
# [lookup(node, tapes, optimize, threads)]: a program met before replayed in one C
# frame (ep.compute's, with tuning=None), or [None] where the binder cannot be built
LOOKUP: list = [None]
# [the replayed tapes' OrderedDict] (etchpy.lazy.program sets it): ep.compute's C
# entry looks programs up in it (the binder's lazy_compute)
TAPES: list = [None]
# [(replay.sparse_kinds, program's replay of one tape's single)] (etchpy.lazy.program
# sets it): the lookup covers a program with sparse leaves (the binder's lazy_sparse)
SPARSE: list = [None]
_lock = threading.Lock()
# (dtype address, shape) -> (skey, dtype) of the leaves the C `ep.lazy` built from
# a pattern, emptied with the keys' table
_WRAPS: dict = {}
# emptied with the keys' table: the C memo of patterns (Tuning.lazy_c_memo) finds
# it empty and empties itself
_GUARD: dict = {}
keys.DERIVED += [_WRAPS, _GUARD]
_PYTHON = {}            # the Python operators, as etchpy.lazy.operators set them
_MADE: list = []        # [the C operators by name, or None], made once per process
_PRODUCT: list = []     # [the binder's lazy_product with BLAS bound, or None], once
_DUNDERS = ("__add__", "__radd__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
            "__matmul__", "__rmatmul__", "__sub__", "__rsub__", "__neg__")


def _made():
    """The C operators by name (the dunders, "map_op", "T", "wrap"), or None where
    the binder cannot be built."""
    if not _MADE:
        mod = binder.module()
        _MADE.append(None if mod is None else _setup(mod))
    return _MADE[0]


def _setup(mod) -> dict:
    for name in _DUNDERS:
        _PYTHON[name] = LazyArray.__dict__[name]
    _PYTHON["T"] = LazyArray.__dict__["T"]
    _PYTHON["map_op"], _PYTHON["wrap"] = LazyArray._map_op, ops.wrap
    classes = (LazyArray, Leaf, Map, Transpose, Add, Add, Mul, Mul, Div, Div, MatMul, MatMul)
    fields = (*(LazyArray.__dict__[f] for f in ("shape", "dtype", "key", "skey", "lkeys",
                                                 "_leaves")),
              Pair.__dict__["a"], Pair.__dict__["b"], Unary.__dict__["a"],
              Map.__dict__["fn"], Map.__dict__["arg"], Leaf.__dict__["value"],
              Leaf.__dict__["constant"])
    tables = (ops._PAIRS, ops._UNARY, array._INTS, _WRAPS, keys.BUILT, ops._RECIP, _GUARD,
              array._FLOATS)
    _PYTHON["sum"] = LazyArray.__dict__["sum"]
    _PYTHON["map_arg"] = LazyArray._map_arg
    fallbacks = (*(_PYTHON[name] for name in _DUNDERS), ops.map_op, ops._transposed, ops.wrap,
                 _PYTHON["sum"], ops.map_arg)
    made = mod.lazy_setup(classes, fields, tables, fallbacks)
    keys.COUNTS.append(mod.lazy_built)
    out = dict(zip(_DUNDERS, made))
    out["map_op"], out["T"], out["wrap"], out["sum"], out["map_arg"], LOOKUP[0] = \
        made[len(_DUNDERS):]
    out["T"] = property(out["T"], doc=_PYTHON["T"].__doc__)
    if hasattr(mod, "lazy_sparse") and SPARSE[0] is not None:
        mod.lazy_sparse(*SPARSE[0])
    _PYTHON["compute"] = type(_package().compute).__wrapped__
    out["compute"] = mod.lazy_compute(_PYTHON["compute"], INSTALLED, TAPES[0]) \
        if hasattr(mod, "lazy_compute") and TAPES[0] is not None else _PYTHON["compute"]
    return out


def use(on: bool, memo: bool = True, nodes: int = DEFAULT[2], large: int = DEFAULT[3]) -> None:
    """Install the C operators on LazyArray (on), or the Python ones back; memo:
    whether they find a pattern met before by its operands' identity first and
    leave a node's key to be made when read (Tuning.lazy_c_memo); nodes: the
    most bytes of an array their node memo keeps (Tuning.lazy_node_bytes, 0:
    off, what it kept let go); large: the most bytes of the one larger array it
    keeps besides (Tuning.lazy_node_large, 0: none)."""
    with _lock:
        made = _made() if on else None
        again = INSTALLED[0] is bool(on)
        chosen = (bool(on), bool(memo), int(nodes), int(large))
        INSTALLED[0], CHOSEN[0] = bool(on), DEFAULT if chosen == DEFAULT else chosen
        array.keep_leaves(int(nodes) > 0)      # a scipy matrix's leaf kept as C keeps arrays
        if made is not None:
            binder.module().lazy_memo(bool(memo))
            binder.module().lazy_node_memo(int(nodes))
            if hasattr(binder.module(), "lazy_node_large"):
                binder.module().lazy_node_large(int(large))
        elif _MADE and _MADE[0] is not None:    # the Python operators: what C kept let go
            binder.module().lazy_node_memo(0)
        source = made if made is not None else _PYTHON
        if again and source is made:    # installed: not again (a class's attribute set
            return                      # empties the method caches)
        if not source:          # no binder, and the Python operators never replaced
            return
        for name in (*_DUNDERS, "T", "sum"):
            setattr(LazyArray, name, source[name])
        LazyArray._map_op = staticmethod(source["map_op"])
        LazyArray._map_arg = staticmethod(source["map_arg"])
        type(_package()).__call__ = staticmethod(source["wrap"])
        type(_package().compute).__call__ = staticmethod(source["compute"])


def _package():
    return sys.modules[__name__.rpartition(".")[0]]


def product():
    """The binder's `lazy_product(a, b, flip)` (a dense product step by one BLAS
    call, or None when not covered: codegen_templates/binder_blas.c.j2), with the
    BLAS the kernels call bound to it; None without the binder or a BLAS
    (Tuning.lazy_c_blas: etchpy.lazy.fast_replay)."""
    if not _PRODUCT:
        with _lock:
            if not _PRODUCT:
                _PRODUCT.append(_bound_product())
    return _PRODUCT[0]


def _bound_product():
    mod = binder.module()
    pointers = None if mod is None or not hasattr(mod, "lazy_product") else \
        blas.gemm_pointers()
    if pointers is None or not all(pointers[:4]):
        return None
    mod.lazy_blas(*(int(p) for p in pointers))
    return mod.lazy_product
