"""Imp statements and expressions as C text.

`FunctionBody` renders one lowered program's Imp tree. Scalars of type index
are int64_t, of type coord ep_idx_t (a stored coordinate at its arrays' own
width); arrays of indices are ep_idx_t; values are ep_val_t (the semiring's
carrier); `bits` arrays are uint64_t words. Arrays made by Alloc/Reserve are
heap arrays with a capacity (`{array}_cap`); an allocation failure jumps to
`fail`, which the function's frame provides (c.render).

C-only names (a capacity `{array}_cap`, a loop's `{var}_n`, a fill loop's
`k_`, ...) get underscores appended until they differ from every name they
could shadow or be shadowed by: a name that lives as long as the function
(`c_name`) from every name of the program, a name of one C block (`local`)
from every name used in that block. So a user's index name never collides
with them. Names starting `ep_` belong to kernel.c.j2.
"""
from __future__ import annotations

import math

import numpy as np

from .. import imp, maps
from .. import tuning as _tuning
from ..imp import (Accum, Alloc, Assign, Bin, Bit, Block, Break, Comment, Const, Decl, Fixpoint,
                   ForSorted, GatherPick, GatherSum, Gemm, If, Load, LocalArray, Move, Not,
                   Opaque, ParallelFor, Prefetch, Probe, Reserve, Ring, Seek, Select, Seq, SetBit,
                   ShortIntersect, Store, Var, While)
from . import bool_product, fixpoint, gemm, parallel, sorted_walk, walks

INDENT = "    "

# Entries of a short segment that the SIMD helpers of kernel.c.j2 compare at once
# (ep_short_match): a ShortIntersect of another width is always merged.
SIMD_LANES = 4

_ARRAY_TYPES = {"index": "ep_idx_t", "bool": "int", "value": "ep_val_t", "bits": "uint64_t",
                "byte": "int8_t"}
_SCALAR_TYPES = {"index": "int64_t", "coord": "ep_idx_t", "bool": "int", "value": "ep_val_t"}


def ctype(typ: str) -> str:
    """The C element type of an Imp array of type typ."""
    return _ARRAY_TYPES[typ]


def heap_arrays(s) -> dict[str, str]:
    """The heap arrays of a program (the arrays it Allocs), name -> Imp type."""
    out: dict[str, str] = {}
    for u in imp.statements(s):
        if isinstance(u, Alloc):
            out.setdefault(u.array, u.type)
    return out


def kept_arrays(s) -> dict[str, Const]:
    """The heap arrays C may keep between calls, name -> fill: those every Alloc
    of which is kept (Alloc.kept) with one constant fill."""
    fills: dict[str, object] = {}
    for u in imp.statements(s):
        if isinstance(u, Alloc):
            ok = u.kept and isinstance(u.fill, Const) and fills.get(u.array, u.fill) == u.fill
            fills[u.array] = u.fill if ok else None
    return {arr: f for arr, f in fills.items() if f is not None}


class FunctionBody:
    """Renders the statements of one program. `helpers` collects the functions
    that the statements need beside the kernel (the bodies of parallel loops),
    in the order they were made; `arrays` and `scalars` give the C type of every
    name the kernel declares. `fails` is set once a statement jumps to `fail`
    without any heap array of the kernel's (a parallel loop's private arrays),
    so that the frame still provides the label."""

    def __init__(self, prog, semiring, tuning: _tuning.Tuning = _tuning.DEFAULT):
        self.prog = prog
        self.sr = semiring
        self.tuning = tuning
        self.heap = heap_arrays(prog.body)               # name -> Imp type
        self.kept = kept_arrays(prog.body)               # name -> fill (Const)
        self.local_arrays = walks.local_arrays(prog.body)
        self.helpers: list[str] = []
        self.fails = False
        self.arrays, self.scalars = self._kernel_names()
        self.taken = frozenset(imp.names_used(prog.body) | set(self.arrays)
                               | set(self.scalars) | {p.name for p in prog.params})

    def c_name(self, base: str) -> str:
        """base, with underscores appended until it is none of the program's names.
        The same base always gives the same name."""
        while base in self.taken:
            base += "_"
        return base

    def local(self, base: str, *scope) -> str:
        """base, with underscores appended until it is none of the names used in
        `scope` (Imp nodes, or names as str): for a C name declared in a block
        where only those names are used."""
        used = set().union(*({x} if isinstance(x, str) else imp.names_used(x) for x in scope))
        while base in used:
            base += "_"
        return base

    def cap(self, array: str) -> str:
        """The C variable holding a heap array's capacity."""
        return self.c_name(f"{array}_cap")

    def ctype(self, typ: str) -> str:
        return ctype(typ)

    def _kernel_names(self) -> tuple[dict[str, str], dict[str, str]]:
        """The C element type of every array and the C type of every scalar the
        kernel names: parameters, dimensions, heap arrays and declared scalars."""
        arrays, scalars = {}, {}
        for p in self.prog.params:
            elem = "ep_idx_t" if p.type == "index" else "ep_val_t"
            match p.kind:
                case "in_array" | "out_dense":
                    arrays[p.name] = elem
                case "dim":
                    scalars[p.name] = "int64_t"
                case "out_zeroed":
                    scalars[p.name] = "int"
        for var, _, _ in self.prog.dims:
            scalars[f"dim_{var}"] = "int64_t"
        for arr, typ in self.heap.items():
            arrays[arr] = ctype(typ)
        for u in imp.statements(self.prog.body):
            if isinstance(u, Decl):
                scalars[u.name] = _SCALAR_TYPES[u.type]
            elif isinstance(u, GatherPick):
                scalars[u.var] = "int64_t"
        return arrays, scalars

    # ----------------------------------------------------------- statements
    def stmt(self, s, depth: int) -> str:
        """Statement s as C lines, each indented by `depth` levels."""
        pad, e = INDENT * depth, self.expr
        match s:
            case Decl(name, typ, init):
                return f"{pad}{_SCALAR_TYPES[typ]} {name} = {e(init)};"
            case Assign(name, value):
                return f"{pad}{name} = {e(value)};"
            case Store(arr, i, v):
                return f"{pad}{arr}[{e(i)}] = {e(v)};"
            case Accum(arr, i, v):
                cell = f"{arr}[{e(i)}]"
                return f"{pad}{cell} = {self.sr.add.render(cell, e(v))};"
            case While() if self.tuning.window_fill_lanes and (
                    hits := walks.fill_hits(s, self.local_arrays)):
                return walks.fill_hits_call(self, hits, depth, INDENT)
            case While(Bin("&&", Bin("<", Var(q), Var()) as a, b), body) if walks.tests_entry(b, q):
                return walks.entry_test_loop(self, _bare(e(a)), _bare(e(b)), body, depth, INDENT)
            case While(c, body):
                return self.nest(f"{pad}while ({_bare(e(c))})", body, depth)
            case If(c, then, else_, rare):
                test = f"EP_RARE({_bare(e(c))})" if rare else _bare(e(c))
                return self.nest(f"{pad}if ({test})", then, depth) + (
                    "" if else_ is None else self.nest(" else", else_, depth))
            case Break():
                return f"{pad}break;"
            case Seq(stmts):
                return "\n".join(self.stmt(t, depth) for t in stmts if t != imp.SKIP)
            case Block(body):
                return f"{pad}{{\n{self.stmt(body, depth + 1)}\n{pad}}}"
            case Comment(text):
                return f"{pad}/* {text.replace('*/', '* /')} */"
            case Alloc(arr, typ, size, fill):
                return self.alloc(arr, typ, size, fill, pad)
            case Reserve(arr, typ, size, fill):
                return self.reserve(arr, typ, size, fill, pad)
            case Move(arr, src):
                return (f"{pad}ep_release({arr}); {arr} = {src}; {self.cap(arr)} = {self.cap(src)}; "
                        f"{src} = NULL; {self.cap(src)} = 0;")
            case ParallelFor():
                return parallel.parallel_for(self, s, depth)
            case Opaque(var):
                return f"{pad}EP_OPAQUE({var});"
            case LocalArray(arr, size, fill, typ):
                k = self.local("k_", arr, fill)
                return (f"{pad}{_ARRAY_TYPES[typ]} {arr}[{size}];\n"
                        f"{pad}for (int {k} = 0; {k} < {size}; {k}++) {arr}[{k}] = {e(fill)};")
            case Prefetch(arr, index, write, ahead) if ahead and not write:
                return f"{pad}EP_PREFETCH_AHEAD(&{arr}[{_bare(e(index))}], {ahead});"
            case Prefetch(arr, index, write):
                macro = "EP_PREFETCH_W" if write else "EP_PREFETCH"
                return f"{pad}{macro}(&{arr}[{_bare(e(index))}]);"
            case SetBit(arr, i, on):
                word, bit = f"{arr}[({e(i)}) >> 6]", f"(uint64_t)1 << (({e(i)}) & 63)"
                return f"{pad}{word} |= {bit};" if on else f"{pad}{word} &= ~({bit});"
            case ForSorted():
                return sorted_walk.for_sorted(self, s, depth, INDENT)
            case Seek(q, end, crd, t, r):
                fn = "ep_seek_at" if self.tuning.seek_linear >= 2 else "ep_seek"
                return f"{pad}{q} = {fn}({crd}, {q}, {e(end)}, {e(t)}, {e(r)});"
            case ShortIntersect():
                return walks.short_intersect(self, s, depth, INDENT, SIMD_LANES)
            case Gemm():
                return gemm.gemm(self, s, depth)
            case GatherSum():
                return walks.gather_sum(self, s, depth, INDENT)
            case GatherPick(var, pos, parents, None, _, _, least, far, far_least, ragged,
                            rows_far, far_ragged, far_mild, far_spread):
                least = f"{far} ? {far_least} : {least}" if far else least
                wide = far_ragged or ragged
                if rows_far and far_mild:
                    wide = f"ep_gather_spread({pos}, {parents}, {wide}, {far_mild}, {far_spread})"
                ragged = f"{rows_far} ? {wide} : {ragged}" if rows_far else ragged
                return (f"{pad}const int64_t {var} = "
                        f"ep_gather_pick({pos}, {parents}, {least}, {ragged});")
            case GatherPick(var=var, pos=pos, parents=parents, crd=crd, share=share,
                            near=near) if near > 0:
                return (f"{pad}const int64_t {var} = "
                        f"ep_near_pick({pos}, {crd}, {parents}, {near}, {share});")
            case GatherPick(var, pos, parents, crd, dim, share, least):
                return (f"{pad}const int64_t {var} = ep_far_pick({pos}, {crd}, {parents}, "
                        f"{dim}, {share}, {least});")
            case Fixpoint():
                return fixpoint.fixpoint(self, s, depth, INDENT)
        raise TypeError(f"cannot render statement {s!r}")

    def nest(self, head: str, body, depth: int) -> str:
        """head { body }, body one level further in."""
        return f"{head} {{\n{self.stmt(body, depth + 1)}\n{INDENT * depth}}}"

    def alloc(self, arr, typ, size, fill, pad) -> str:
        """A fresh heap array; calloc when the fill is all-zero bytes. A kept
        array (self.kept) is first asked of the library's pool of arrays that
        hold nothing but that fill (ep_take_kept), and made only when none fits."""
        t, e, cap = ctype(typ), self.expr, self.cap(arr)
        k = self.local("k_", arr, cap, fill)
        zeroed = fill is not None and _all_zero_bits(fill)
        get = (f"ep_calloc((size_t){cap}, sizeof({t}))" if zeroed
               else f"ep_malloc((size_t){cap} * sizeof({t}))")
        lines = [f"{pad}{arr} = ({t} *){get};",
                 f"{pad}if (!{arr}) goto fail;"]
        if fill is not None and not zeroed:
            lines.append(f"{pad}for (int64_t {k} = 0; {k} < {cap}; {k}++) {arr}[{k}] = {e(fill)};")
        head = f"{pad}{cap} = ep_max({e(size)}, 1);"
        if arr not in self.kept:
            return "\n".join([head, *lines])
        take = f"{pad}{arr} = ({t} *)ep_take_kept((size_t){cap}, {self.fill_bits(arr, typ)});"
        return "\n".join([head, take, f"{pad}if (!{arr}) {{",
                          *(INDENT + ln for ln in lines), f"{pad}}}"])

    def fill_bits(self, arr: str, typ: str) -> str:
        """C text of (element size, the 8 bytes of a kept array's fill repeated),
        the arguments ep_take_kept and ep_give_kept take after the array."""
        t = ctype(typ)
        return f"sizeof({t}), ep_fill_bits(&(const {t}){{{self.expr(self.kept[arr])}}}, sizeof({t}))"

    def reserve(self, arr, typ, size, fill, pad) -> str:
        """Grow a heap array to at least size (and at least double) when it is smaller."""
        t, e, p2 = ctype(typ), self.expr, pad + INDENT
        cap = self.cap(arr)
        scope = (arr, cap, size, fill)
        new, grown, k = (self.local(x, *scope) for x in ("cap_", "grown_", "k_"))
        lines = [f"{pad}if ({e(size)} > {cap}) {{",
                 f"{p2}int64_t {new} = ep_max({e(size)}, 2 * {cap});",
                 f"{p2}{t} *{grown} = ({t} *)ep_grow({arr}, (size_t){cap} * "
                 f"sizeof({t}), (size_t){new} * sizeof({t}));",
                 f"{p2}if (!{grown}) goto fail;"]
        if fill is not None:
            lines.append(f"{p2}for (int64_t {k} = {cap}; {k} < {new}; {k}++) "
                         f"{grown}[{k}] = {e(fill)};")
        return "\n".join(lines + [f"{p2}{arr} = {grown}; {cap} = {new};", f"{pad}}}"])

    def derived(self, s, var: str, *suffixes: str) -> list[str]:
        """The C-only names {var}_{suffix} of a block that renders statement s."""
        return [self.local(f"{var}_{x}", s) for x in suffixes]

    # ---------------------------------------------------------- expressions
    def expr(self, x) -> str:
        """Expression x as C text (parenthesised where it could bind loosely)."""
        e = self.expr
        match x:
            case Var(name):
                return name
            case Const(v, "value"):
                return self.value_literal(v)
            case Const(v, "bool"):
                return "1" if v else "0"
            case Const(v, _):
                return str(int(v))
            case Bin("max", a, b):
                return f"ep_max({e(a)}, {e(b)})"
            case Bin("min", a, b):
                return f"ep_min({e(a)}, {e(b)})"
            case Bin("hash", a, b):
                return f"ep_hash({e(a)}, {e(b)})"
            case Bin("bin", a, b):       # a's bin among 0..b-1, else -1 (imp.nodes)
                return f"ep_bin({e(a)}, {e(b)})"
            case Bin("keep", a, b):      # b where a, else all-zero bytes (imp.interp)
                return f"ep_keep({e(a)}, {e(b)})"
            case Bin("gap", a, b):       # a - b - 1 modulo 2^64, as int64 (imp.interp)
                return f"(int64_t)((uint64_t){e(a)} + ~(uint64_t){e(b)})"
            case Bin("umax", a, b):      # the greater as unsigned coordinates (imp.interp)
                return f"ep_umax({e(a)}, {e(b)})"
            case Bin("<u", a, b):        # a < b as unsigned: 0 <= a < b for b >= 0
                return f"((uint64_t){e(a)} < (uint64_t){e(b)})"
            case Bin(op, a, b):
                return f"({e(a)} {op} {e(b)})"
            case Not(a):
                return f"!{e(a)}"
            case Load(arr, i, _, view) if view:
                return f"((const {view}_t *){arr})[{e(i)}]"
            case Load(arr, i):
                return f"{arr}[{e(i)}]"
            case Bit(arr, i):
                return f"(({arr}[({e(i)}) >> 6] >> (({e(i)}) & 63)) & 1)"
            case Probe(arr, table, mask, key):
                return f"ep_probe({arr}, {e(table)}, {e(mask)}, {e(key)})"
            case Select(c, a, b):
                return f"({e(c)} ? {e(a)} : {e(b)})"
            case Ring(op, a, b) if maps.is_map(op):
                return maps.render(op, e(a), e(b), self.sr.dtype)
            case Ring("repeat", a, n):      # the n-fold ⊕ (Semiring.repeat)
                return f"({self.sr.repeat.render(e(a), e(n))})"
            case Ring("mul", a, b) if bool_product.applies(self.sr, self.tuning):
                return bool_product.render(self, x, e)
            case Ring(op, a, b):
                fn = self.sr.add if op == "add" else self.sr.mul
                return f"({fn.render(e(a), e(b))})"
        raise TypeError(f"cannot render expression {x!r}")

    def value_literal(self, v) -> str:
        return c_literal(v, self.sr.dtype)


def c_literal(v, dtype) -> str:
    """v as a C literal of the given numpy dtype (exact for floats: repr round-trips)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "1" if v else "0"
    if dtype.kind in "iu":
        return f"INT64_C({int(v)})"
    if dtype.kind == "c":
        part = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        re, im = (c_literal(p, part) for p in (np.real(v), np.imag(v)))
        return re if float(np.imag(v)) == 0 else f"ep_cmplx({re}, {im})"
    f = float(v)
    if math.isnan(f):
        return "NAN"
    if math.isinf(f):
        return "INFINITY" if f > 0 else "(-INFINITY)"
    text = repr(f)
    if "e" not in text and "." not in text:
        text += ".0"
    return text + ("f" if dtype == np.float32 else "")


def _all_zero_bits(c) -> bool:
    """Is this constant stored as all-zero bytes (so calloc already provides it)?"""
    return (isinstance(c, Const) and not isinstance(c.value, str) and c.value == 0
            and all(math.copysign(1.0, float(p)) > 0
                    for p in (np.real(c.value), np.imag(c.value))))


def _bare(text: str) -> str:
    """Drop one pair of redundant outer parentheses (for while/if conditions)."""
    if text.startswith("(") and text.endswith(")"):
        depth = 0
        for k, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and k < len(text) - 1:
                return text
        return text[1:-1]
    return text

