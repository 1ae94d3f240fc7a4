"""Imp: the small imperative language that streams are staged into.

This package is Imp's face: every layer imports Imp through `etchpy.imp`, so
the modules inside may be split or renamed without touching the importers.

    nodes      the syntax (its docstring has the grammar) and its constants
    construct  smart constructors that fold constants
    names      the name supply every generated name comes from
    analysis   facts read off a program's syntax, the rewrites they allow, and the
               one walk over a node's parts (`parts`, `map_parts`) passes build on
    interp     the interpreter (`Machine`), the oracle between streams and C
    show       a readable listing, for debugging
    params     a kernel function's parameters (`Param`: its C ABI)
"""
from .analysis import (arrays_loaded_at, arrays_written, assume, declared_in, loose_breaks,
                       most_on_a_path,
                       map_parts, names_used, parts, rename, replaced, scalars_assigned,
                       seq_parts, spliced, statements, substitute, subterms)
from .construct import (add, and_, eq, if_, incr, le, lt, max_, min_, min_bound, mul, not_,
                        or_, select, seq, sort_bits_words, sum_bound)
from .interp import ImpRuntimeError, Machine
from .names import Names
from .params import Param
from .nodes import (FALSE, ONE, SKIP, TRUE, ZERO, Accum, Alloc, Assign, Bin, Bit, Block, Break,
                    Comment,
                    Const, Decl, Expr, Fixpoint, ForSorted, GatherPick, GatherSum, Gemm, If, Load,
                    LocalArray, Move, Not, Opaque, ParallelFor, Prefetch, Probe, Reserve, Ring,
                    Seek,
                    Select, Seq, SetBit, ShortIntersect, Stmt, Store, Var, While)
from .show import show

__all__ = [
    # syntax
    "Expr", "Stmt", "Var", "Const", "Bin", "Not", "Load", "Bit", "Probe", "Select", "Ring",
    "Decl", "Assign", "Store", "Accum", "While", "If", "Break", "Seq", "Block", "Comment", "Alloc",
    "Reserve", "Move", "Prefetch", "SetBit", "ForSorted", "LocalArray", "Opaque",
    "ShortIntersect", "Seek", "ParallelFor", "Gemm", "GatherSum", "GatherPick", "Fixpoint",
    "TRUE", "FALSE", "ZERO", "ONE", "SKIP",
    # smart constructors
    "seq", "if_", "and_", "or_", "not_", "add", "mul", "lt", "le", "eq", "max_", "min_",
    "select", "incr", "min_bound", "sum_bound", "sort_bits_words",
    # names, analysis, interpreter, listing
    "Names", "Param", "statements", "seq_parts", "spliced", "most_on_a_path", "subterms", "parts", "map_parts", "substitute", "rename", "replaced", "assume", "arrays_loaded_at",
    "names_used", "declared_in", "loose_breaks", "scalars_assigned", "arrays_written", "Machine", "ImpRuntimeError", "show",
]
