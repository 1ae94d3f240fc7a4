"""C text: the only module that writes C.

A lowered `Program` becomes one C99 function. The jinja2 skeletons in
`codegen_templates/` hold the file around it (includes, typedefs, the exported
prototype, the standalone header and the cffi cdef); all three prototypes come
from one `Prototype` description, so they cannot drift apart. Statements and
expressions are rendered here from the Imp tree. Names are deterministic, so the
same expression, formats and semiring give byte-identical C.

Scalars of type index are int64_t; arrays of indices are idx_t (int32_t or
int64_t, chosen per call from the inputs); values are val_t (the semiring's
carrier). Arrays made by Alloc/Reserve are heap arrays with a capacity, freed
on every exit path except the outputs handed to the caller.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

from .. import imp
from ..tuning import DEFAULT, Tuning
from ..imp import (Accum, Alloc, Assign, Bin, Comment, Const, Decl, If, Load, Not, Reserve,
                  Ring, Select, Seq, Store, Var, While)
from ..lower.core import Program, describe_output

INDENT = "    "
CHUNKS_PER_THREAD = 16   # blocks of rows per thread, taken dynamically (runtime.tunables)


@lru_cache(maxsize=1)
def _templates():
    import jinja2      # only needed when C is rendered, not for every import etchpy
    text = {name: resources.files("etchpy.codegen_templates").joinpath(name).read_text()
            for name in ("kernel.c.j2", "kernel.h.j2", "cdef.j2", "checks.c.j2",
                         "checks.cdef.j2")}
    return jinja2.Environment(loader=jinja2.DictLoader(text), keep_trailing_newline=True,
                              undefined=jinja2.StrictUndefined, autoescape=False)


@dataclass(frozen=True)
class CParam:
    ctype: str      # with idx_t / val_t as placeholders
    name: str
    doc: str


@dataclass(frozen=True)
class Prototype:
    name: str
    params: tuple[CParam, ...]

    def render(self, idx="idx_t", val="val_t", restrict=True) -> str:
        def one(p):
            t = p.ctype.replace("idx_t", idx).replace("val_t", val)
            if not restrict:
                t = t.replace(" restrict", "")
            return f"{t} {p.name}"
        args = ",\n    ".join(one(p) for p in self.params)
        return f"int {self.name}(\n    {args})"


@dataclass(frozen=True)
class CSource:
    name: str
    c: str
    header: str
    cdef: str
    prototype: Prototype


def prototype(prog: Program, name: str) -> Prototype:
    out = []
    for p in prog.params:
        elem = "idx_t" if p.type == "index" else "val_t"
        match p.kind:
            case "dim":
                out.append(CParam("int64_t", p.name, p.doc))
            case "in_array":
                out.append(CParam(f"const {elem} *restrict", p.name, p.doc))
            case "out_dense":
                out.append(CParam(f"{elem} *restrict", p.name, p.doc))
            case "out_zeroed":
                out.append(CParam("int", p.name, p.doc))
            case "out_grown":
                out.append(CParam(f"{elem} **", f"{p.name}_ret", p.doc))
            case "out_count":
                out.append(CParam("int64_t *", f"{p.name}_ret", p.doc))
    return Prototype(name, tuple(out))


def render(prog: Program, semiring, *, name: str, idx_type: str = "int64_t",
           banner: tuple[str, ...] = (), version: str = "", include_header=False,
           tuning: Tuning = DEFAULT) -> CSource:
    proto = prototype(prog, name)
    fb = FunctionBody(prog, semiring)
    body = fb.render()
    val_type = semiring.c_type()
    sparse = prog.output.mode != "dense"
    env = dict(version=version, banner=list(banner), name=name, idx_type=idx_type,
               val_type=val_type, semiring=semiring.name, include_header=include_header,
               uses_sort=_contains(prog.body, imp.ForSorted),
               uses_hash=_uses_op(prog.body, "hash"),
               uses_short=_contains(prog.body, imp.ShortIntersect),
               uses_seek=_contains(prog.body, imp.Seek), seek_linear=imp.SEEK_LINEAR,
               refuses=bool(prog.refuse_above), helpers=fb.helpers)
    t = _templates()
    c = t.get_template("kernel.c.j2").render(prototype=proto.render(), body=body, **env)
    header = t.get_template("kernel.h.j2").render(
        params=[CParam(p.ctype.replace("idx_t", f"{name}_idx_t").replace("val_t", f"{name}_val_t"),
                       p.name, p.doc) for p in proto.params],
        header_prototype=proto.render(f"{name}_idx_t", f"{name}_val_t"),
        guard=f"ETCHPY_{name.upper()}_H", sparse_output=sparse,
        output_doc=describe_output(prog.output), **env)
    cdef = t.get_template("cdef.j2").render(cdef_prototype=proto.render(restrict=False), **env)
    return CSource(name, c, header, cdef, proto)


def checks_source(version: str = "") -> tuple[str, str]:
    """C source and cdef of the compiled structural checks (see etchpy.checks)."""
    t = _templates()
    return (t.get_template("checks.c.j2").render(version=version),
            t.get_template("checks.cdef.j2").render())


class FunctionBody:
    def __init__(self, prog: Program, semiring):
        self.prog = prog
        self.sr = semiring
        self.heap = _heap_arrays(prog.body)          # name -> type
        self.published = {p.name for p in prog.params if p.kind == "out_grown"}
        self.helpers: list[str] = []                 # functions of parallel loops' bodies
        self.arrays, self.scalars = self._kernel_names()

    def _kernel_names(self) -> tuple[dict[str, str], dict[str, str]]:
        """The C element type of every array and the C type of every scalar the
        kernel names: parameters, dimensions, heap arrays and declared scalars."""
        arrays, scalars = {}, {}
        for p in self.prog.params:
            elem = "idx_t" if p.type == "index" else "val_t"
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
            arrays[arr] = self.ctype(typ)
        for u in imp.statements(self.prog.body):
            if isinstance(u, Decl):
                scalars[u.name] = self.scalar_ctype(u.type)
        return arrays, scalars

    def render(self) -> str:
        lines = []
        first: dict[str, str] = {}
        used = imp.names_used(self.prog.body)
        shared = Counter(var for var, _, _ in self.prog.dims)
        for var, tensor, mode in self.prog.dims:
            src = f"{tensor}_dim{mode}"
            if var not in first:
                first[var] = src
                lines.append(f"const int64_t dim_{var} = {src};")
                if f"dim_{var}" not in used and shared[var] == 1:
                    lines.append(f"(void)dim_{var};   /* read by no loop */")
        for var, tensor, mode in self.prog.dims:
            src = f"{tensor}_dim{mode}"
            if first[var] != src:
                lines.append(f"if ({src} != dim_{var}) return 2;")
        for var, most in self.prog.refuse_above:
            lines.append(f"if (dim_{var} > {most}) return 3;   /* needs the hash-table build */")
        for arr, typ in self.heap.items():
            lines.append(f"{self.ctype(typ)} *{arr} = NULL; int64_t {arr}_cap = 0;")
        lines.append(self.stmt(self.prog.body, 0))
        for p in self.prog.params:
            if p.kind in ("out_grown", "out_count"):
                lines.append(f"*{p.name}_ret = {p.name};")
        for arr in self.heap:
            if arr not in self.published:
                lines.append(f"free({arr});")
        lines.append("return 0;")
        if self.heap:
            lines.append("fail:")
            lines += [f"free({arr});" for arr in self.heap]
            lines.append("return 1;")
        return "\n".join(INDENT + ln if ln and not ln.startswith("fail:") else ln
                         for ln in "\n".join(lines).split("\n"))

    def ctype(self, typ: str) -> str:
        return {"index": "idx_t", "bool": "int", "value": "val_t", "bits": "uint64_t"}[typ]

    def scalar_ctype(self, typ: str) -> str:
        return {"index": "int64_t", "bool": "int", "value": "val_t"}[typ]

    # ----------------------------------------------------------- statements
    def stmt(self, s, depth) -> str:
        pad = INDENT * depth
        e = self.expr
        match s:
            case Decl(name, typ, init):
                return f"{pad}{self.scalar_ctype(typ)} {name} = {e(init)};"
            case Assign(name, value):
                return f"{pad}{name} = {e(value)};"
            case Store(arr, i, v):
                return f"{pad}{arr}[{e(i)}] = {e(v)};"
            case Accum(arr, i, v):
                idx = e(i)
                return f"{pad}{arr}[{idx}] = {self.sr.add.render(f'{arr}[{idx}]', e(v))};"
            case While(c, body):
                return f"{pad}while ({_bare(e(c))}) {{\n{self.stmt(body, depth + 1)}\n{pad}}}"
            case If(c, then, else_):
                out = f"{pad}if ({_bare(e(c))}) {{\n{self.stmt(then, depth + 1)}\n{pad}}}"
                if else_ is not None:
                    out += f" else {{\n{self.stmt(else_, depth + 1)}\n{pad}}}"
                return out
            case Seq(stmts):
                return "\n".join(self.stmt(t, depth) for t in stmts if t != imp.SKIP)
            case imp.Block(body):
                return f"{pad}{{\n{self.stmt(body, depth + 1)}\n{pad}}}"
            case Comment(text):
                return f"{pad}/* {text.replace('*/', '* /')} */"
            case Alloc(arr, typ, size, fill):
                t = self.ctype(typ)
                zeroed = fill is not None and _all_zero_bits(fill)
                get = (f"ep_calloc((size_t){arr}_cap, sizeof({t}))" if zeroed
                       else f"ep_malloc((size_t){arr}_cap * sizeof({t}))")
                return "\n".join([
                    f"{pad}{arr}_cap = ep_max({e(size)}, 1);",
                    f"{pad}{arr} = ({t} *){get};",
                    f"{pad}if (!{arr}) goto fail;"] + ([] if fill is None or zeroed else [
                    f"{pad}for (int64_t k_ = 0; k_ < {arr}_cap; k_++) {arr}[k_] = {e(fill)};"]))
            case imp.ParallelFor(var, start, end, body, threads, red) if red:
                return self.parallel_reduce(var, start, end, body, threads, red, depth)
            case imp.ParallelFor(var, start, end, body, threads, None, private) if private:
                return self.parallel_private(var, start, end, body, threads, private, depth)
            case imp.ParallelFor(var, start, end, body, threads):
                call = self.outline(var, body)
                return "\n".join([
                    f"{pad}{{",
                    *self.blocks_decl(var, start, end, threads, pad + INDENT),
                    "#ifdef _OPENMP",
                    f"{pad}{INDENT}#pragma omp parallel for schedule(dynamic, 1) "
                    f"num_threads({threads})",
                    "#endif",
                    *self.block_loop(var, call, pad + INDENT),
                    f"{pad}}}"])
            case imp.Opaque(var):
                return f"{pad}EP_OPAQUE({var});"
            case imp.LocalArray(arr, size, fill):
                return (f"{pad}val_t {arr}[{size}];\n"
                        f"{pad}for (int k_ = 0; k_ < {size}; k_++) {arr}[k_] = {e(fill)};")
            case imp.Prefetch(arr, index, write):
                macro = "EP_PREFETCH_W" if write else "EP_PREFETCH"
                return f"{pad}{macro}(&{arr}[{_bare(e(index))}]);"
            case imp.SetBit(arr, i, on):
                word, bit = f"{arr}[({e(i)}) >> 6]", f"(uint64_t)1 << (({e(i)}) & 63)"
                return f"{pad}{word} |= {bit};" if on else f"{pad}{word} &= ~({bit});"
            case imp.ForSorted(var, arr, n, size, bits, body):
                return self.for_sorted(var, arr, n, size, bits, body, depth)
            case imp.Seek(q, end, crd, t, r):
                return f"{pad}{q} = ep_seek({crd}, {q}, {e(end)}, {e(t)}, {e(r)});"
            case imp.ShortIntersect(qa, ea, crd_a, qb, eb, crd_b, body):
                return self.short_intersect(qa, ea, crd_a, qb, eb, crd_b, body, depth)
            case imp.Move(arr, src):
                return (f"{pad}free({arr}); {arr} = {src}; {arr}_cap = {src}_cap; "
                        f"{src} = NULL; {src}_cap = 0;")
            case Reserve(arr, typ, size, fill):
                t = self.ctype(typ)
                return "\n".join([
                    f"{pad}if ({e(size)} > {arr}_cap) {{",
                    f"{pad}{INDENT}int64_t cap_ = ep_max({e(size)}, 2 * {arr}_cap);",
                    f"{pad}{INDENT}{t} *grown_ = ({t} *)ep_grow({arr}, (size_t){arr}_cap * "
                    f"sizeof({t}), (size_t)cap_ * sizeof({t}));",
                    f"{pad}{INDENT}if (!grown_) goto fail;"] + ([] if fill is None else [
                    f"{pad}{INDENT}for (int64_t k_ = {arr}_cap; k_ < cap_; k_++) "
                    f"grown_[k_] = {e(fill)};"]) + [
                    f"{pad}{INDENT}{arr} = grown_; {arr}_cap = cap_;",
                    f"{pad}}}"])
        raise TypeError(f"cannot render statement {s!r}")

    def for_sorted(self, var, arr, n, size, bits, body, depth) -> str:
        """The list sorted and walked; or, with marks that are dense enough in
        their range, the marks walked in order (summary word, then marked word,
        then bit), so the list is never sorted. The body is emitted once per way."""
        pad, p2, p3, p4, p5 = (INDENT * (depth + d) for d in range(5))
        e = self.expr
        listed = [f"{p2}for (int64_t {var}_t = 0; {var}_t < {var}_n; {var}_t++) {{",
                  f"{p3}const int64_t {var} = {arr}[{var}_t];",
                  self.stmt(body, depth + 2),
                  f"{p2}}}"]
        if bits is None:
            return "\n".join([f"{pad}{{", f"{p2}const int64_t {var}_n = {e(n)};",
                              f"{p2}ep_sort_idx({arr}, {var}_n);", *listed, f"{pad}}}"])
        size_c = e(size)
        return "\n".join([
            f"{pad}{{",
            f"{p2}const int64_t {var}_n = {e(n)};",
            f"{p2}int64_t {var}_lo = 0, {var}_hi = -1;",
            f"{p2}if (ep_marks_walkable({arr}, {var}_n, {bits}, {size_c}, &{var}_lo, "
            f"&{var}_hi)) {{",
            f"{p2}{INDENT}uint64_t *{var}_sum = {bits} + (({size_c}) >> 6) + 1;",
            f"{p2}{INDENT}for (int64_t {var}_s = {var}_lo; {var}_s <= {var}_hi; {var}_s++) {{",
            f"{p3}{INDENT}uint64_t {var}_m = {var}_sum[{var}_s];",
            f"{p3}{INDENT}{var}_sum[{var}_s] = 0;",
            f"{p3}{INDENT}for (; {var}_m; {var}_m &= {var}_m - 1) {{",
            f"{p4}{INDENT}const int64_t {var}_w = ({var}_s << 6) + ep_ctz64({var}_m);",
            f"{p4}{INDENT}uint64_t {var}_x = {bits}[{var}_w];",
            f"{p4}{INDENT}{bits}[{var}_w] = 0;",
            f"{p4}{INDENT}for (; {var}_x; {var}_x &= {var}_x - 1) {{",
            f"{p5}{INDENT}const int64_t {var} = ({var}_w << 6) + ep_ctz64({var}_x);",
            self.stmt(body, depth + 5),
            f"{p4}{INDENT}}}",
            f"{p3}{INDENT}}}",
            f"{p2}{INDENT}}}",
            f"{p2}}} else {{",
            *[INDENT + ln if ln else ln for ln in "\n".join(listed).split("\n")],
            f"{p2}}}",
            f"{pad}}}"])

    def short_intersect(self, qa, ea, crd_a, qb, eb, crd_b, body, depth) -> str:
        """With SIMD (EP_SHORT_SIMD): all pairs of the two segments compared at
        once, the matching lanes of a taken in order, and each one's position in
        b found by one more compare. Without: the two-finger merge."""
        pad, p2, p3 = (INDENT * (depth + d) for d in range(3))
        m, a0, b0 = f"{qa}_m", f"{qa}_0", f"{qb}_0"
        return "\n".join([
            f"{pad}{{",
            "#if EP_SHORT_SIMD",
            f"{p2}const int64_t {a0} = {qa}, {b0} = {qb};",
            f"{p2}int {m} = ep_short_match({crd_a} + {a0}, {ea} - {a0}, {crd_b} + {b0}, "
            f"{eb} - {b0});",
            f"{p2}for (; {m}; {m} &= {m} - 1) {{",
            f"{p3}{qa} = {a0} + ep_ctz64((uint64_t){m});",
            f"{p3}{qb} = {b0} + ep_short_find({crd_b} + {b0}, {crd_a}[{qa}]);",
            self.stmt(body, depth + 2),
            f"{p2}}}",
            "#else",
            f"{p2}while ({qa} < {ea} && {qb} < {eb}) {{",
            f"{p3}if ({crd_a}[{qa}] == {crd_b}[{qb}]) {{",
            self.stmt(body, depth + 3),
            f"{p3}}}",
            f"{p3}const int64_t {qa}_x = {crd_a}[{qa}], {qb}_x = {crd_b}[{qb}];",
            f"{p3}{qa} += {qa}_x <= {qb}_x;",
            f"{p3}{qb} += {qb}_x <= {qa}_x;",
            f"{p2}}}",
            "#endif",
            f"{p2}{qa} = {ea};",
            f"{p2}{qb} = {eb};",
            f"{pad}}}"])

    # --------------------------------------------------------------- threads
    # A loop split across threads is cut into blocks of consecutive rows (about
    # CHUNKS_PER_THREAD per thread) that threads take dynamically, and its body
    # becomes a function of its own (`outline`) called once per block. Inside
    # that function the arrays are restrict parameters and the scalars values,
    # as in a serial kernel; in the function OpenMP outlines, every one of them
    # is read through a pointer to the shared frame, which cost MTTKRP's body 27%
    # on one thread (5.7 against 4.5 ms, the same C otherwise).

    def blocks_decl(self, var, start, end, threads, pad) -> list[str]:
        """{var}_first, {var}_n and {var}_blocks of a loop over [start, end)."""
        e = self.expr
        return [f"{pad}const int64_t {var}_first = {e(start)}, {var}_n = {e(end)} - {var}_first;",
                f"{pad}/* about {CHUNKS_PER_THREAD} blocks of rows per thread */",
                f"{pad}const int64_t {var}_blocks = ep_max(1, ep_min({var}_n, "
                f"{CHUNKS_PER_THREAD * threads}));"]

    def outline(self, var, body, *, result=None, private=()) -> str:
        """Emit `for var in [lo, hi): body` as a static function of the names body
        reads from outside it, and return the call that runs block b_ of the
        loop's {var}_blocks (see blocks_decl). With `result` (a value variable),
        the function starts it at the semiring's zero and returns it. Arrays in
        `private` ((array, type, size, fill), ...) are the calling thread's own."""
        inner = imp.declared_in(body) | {var} | ({result} if result else set())
        free = sorted(imp.names_used(body) - inner)
        changed = imp.scalars_assigned(body) & set(free)
        if changed:
            raise TypeError(f"a parallel loop's body assigns {sorted(changed)}, "
                            "declared outside it")
        own = {arr: self.ctype(typ) for arr, typ, _, _ in private}
        written = imp.arrays_written(body)
        params = []
        for n in free:
            if n in own or n in self.arrays:
                const = "" if n in written else "const "
                params.append(f"{const}{own.get(n) or self.arrays[n]} *restrict {n}")
            elif n in self.scalars:
                params.append(f"const {self.scalars[n]} {n}")
            else:
                raise TypeError(f"a parallel loop's body names {n!r}, of no known type")
        name = f"ep_rows_{len(self.helpers)}"
        ret = "val_t" if result else "void"
        lo, hi = _fresh("lo", {*free, var}), _fresh("hi", {*free, var})
        lines = [f"/* Rows [{lo}, {hi}) of the loop over {var} split across threads. */",
                 f"static EP_NOINLINE {ret} {name}(",
                 f"{INDENT}" + f",\n{INDENT}".join([f"int64_t {lo}", f"int64_t {hi}", *params])
                 + ")",
                 "{"]
        if result:
            lines.append(f"{INDENT}val_t {result} = {self.value_literal(self.sr.zero)};")
        lines += [f"{INDENT}for (int64_t {var} = {lo}; {var} < {hi}; {var}++) {{",
                  self.stmt(body, 2),
                  f"{INDENT}}}"]
        if result:
            lines.append(f"{INDENT}return {result};")
        lines.append("}")
        self.helpers.append("\n".join(lines))
        return _wrap_call(name, [f"{var}_lo", f"{var}_hi", *free])

    def block_loop(self, var, call, pad, guard="") -> list[str]:
        """The loop over the blocks of var's range (block {var}_b), each one's rows
        [{var}_lo, {var}_hi) passed to `call` (by `outline`), which may be
        prefixed by `guard`. Names made from var's are not Imp names."""
        p2, b = pad + INDENT, f"{var}_b"
        return [f"{pad}for (int64_t {b} = 0; {b} < {var}_blocks; {b}++) {{",
                f"{p2}const int64_t {var}_lo = {var}_first + {var}_n * {b} / {var}_blocks;",
                f"{p2}const int64_t {var}_hi = {var}_first + {var}_n * ({b} + 1) / {var}_blocks;",
                *(p2 + ln for ln in f"{guard}{call};".split("\n")),
                f"{pad}}}"]

    def parallel_private(self, var, start, end, body, threads, private, depth) -> str:
        """Rows on threads, each thread with its own scratch arrays. Every thread
        reaches the work-sharing loop (OpenMP requires it); one whose allocation
        failed skips its blocks, and the kernel then fails after the loop."""
        pad, p2, p3, p4 = (INDENT * (depth + d) for d in range(4))
        e = self.expr
        call = self.outline(var, body, private=private)
        lines = [f"{pad}{{",
                 *self.blocks_decl(var, start, end, threads, p2),
                 f"{p2}int {var}_failed = 0;",
                 "#ifdef _OPENMP",
                 f"{p2}#pragma omp parallel num_threads({threads})",
                 "#endif",
                 f"{p2}{{"]
        ok = []
        for arr, typ, size, _ in private:
            t = self.ctype(typ)
            lines.append(f"{p3}const int64_t {arr}_cap = ep_max({e(size)}, 1);")
            lines.append(f"{p3}{t} *{arr} = ({t} *)ep_malloc((size_t){arr}_cap * sizeof({t}));")
            ok.append(f"{arr} != NULL")
        lines.append(f"{p3}const int {var}_ok = {' && '.join(ok)};")
        lines.append(f"{p3}if ({var}_ok) {{")
        for arr, _, _, fill in private:
            lines.append(f"{p4}for (int64_t k_ = 0; k_ < {arr}_cap; k_++) {arr}[k_] = {e(fill)};")
        lines += [f"{p3}}} else {{",
                  "#ifdef _OPENMP",
                  f"{p4}#pragma omp atomic write",
                  "#endif",
                  f"{p4}{var}_failed = 1;",
                  f"{p3}}}",
                  "#ifdef _OPENMP",
                  f"{p3}#pragma omp for schedule(dynamic, 1)",
                  "#endif",
                  *self.block_loop(var, call, p3, guard=f"if ({var}_ok) ")]
        lines += [f"{p3}free({arr});" for arr, *_ in private]
        lines += [f"{p2}}}", f"{p2}if ({var}_failed) goto fail;", f"{pad}}}"]
        return "\n".join(lines)

    def parallel_reduce(self, var, start, end, body, threads, red, depth) -> str:
        """Each block adds into its own partial, starting at zero, and the partials
        are added into the outer `red` in block order. The blocks depend only on
        the range and the thread count, so the result does not depend on timing,
        and a slow core does not hold the others up."""
        pad, p2, p3 = INDENT * depth, INDENT * (depth + 1), INDENT * (depth + 2)
        part, blocks = f"{red}_part", CHUNKS_PER_THREAD * threads
        call = self.outline(var, body, result=red)
        return "\n".join([
            f"{pad}{{",
            *self.blocks_decl(var, start, end, threads, p2),
            f"{p2}val_t {part}[{blocks}];",
            "#ifdef _OPENMP",
            f"{p2}#pragma omp parallel for schedule(dynamic, 1) num_threads({threads})",
            "#endif",
            *self.block_loop(var, call, p2, guard=f"{part}[{var}_b] = "),
            f"{p2}for (int64_t b_ = 0; b_ < {var}_blocks; b_++) "
            f"{red} = {self.sr.add.render(red, f'{part}[b_]')};",
            f"{pad}}}"])

    # ---------------------------------------------------------- expressions
    def expr(self, x) -> str:
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
            case Bin(op, a, b):
                return f"({e(a)} {op} {e(b)})"
            case Not(a):
                return f"!{e(a)}"
            case Load(arr, i):
                return f"{arr}[{e(i)}]"
            case imp.Bit(arr, i):
                return f"(({arr}[({e(i)}) >> 6] >> (({e(i)}) & 63)) & 1)"
            case Select(c, a, b):
                return f"({e(c)} ? {e(a)} : {e(b)})"
            case Ring(op, a, b):
                fn = self.sr.add if op == "add" else self.sr.mul
                return f"({fn.render(e(a), e(b))})"
        raise TypeError(f"cannot render expression {x!r}")

    def value_literal(self, v) -> str:
        return c_literal(v, self.sr.dtype)


def c_literal(v, dtype) -> str:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "1" if v else "0"
    if dtype.kind in "iu":
        return f"INT64_C({int(v)})"
    f = float(v)
    if math.isnan(f):
        return "NAN"
    if math.isinf(f):
        return "INFINITY" if f > 0 else "(-INFINITY)"
    text = repr(f)
    if "e" not in text and "." not in text:
        text += ".0"
    return text + ("f" if dtype == np.float32 else "")


def _fresh(base: str, taken) -> str:
    """base, or base with underscores appended, whichever is first not in taken."""
    while base in taken:
        base += "_"
    return base


def _wrap_call(name: str, args: list[str], width: int = 88) -> str:
    """name(args), broken after a comma where a line would pass `width`."""
    lines, line = [], f"{name}("
    for k, a in enumerate(args):
        piece = a + (", " if k < len(args) - 1 else ")")
        if len(line) + len(piece) > width and line.strip():
            lines.append(line.rstrip())
            line = INDENT + INDENT
        line += piece
    return "\n".join(lines + [line])


def _all_zero_bits(c) -> bool:
    """Is this constant stored as all-zero bytes (so calloc already provides it)?"""
    return (isinstance(c, Const) and not isinstance(c.value, str) and c.value == 0
            and math.copysign(1.0, float(c.value)) > 0)


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


def _uses_op(node, op: str) -> bool:
    """Does any expression inside node apply the binary operator op?"""
    if isinstance(node, Bin) and node.op == op:
        return True
    if isinstance(node, (tuple, list)):
        return any(_uses_op(x, op) for x in node)
    fields = getattr(node, "__dataclass_fields__", ())
    return any(_uses_op(getattr(node, f), op) for f in fields)


def _contains(s, kind) -> bool:
    return any(isinstance(u, kind) for u in imp.statements(s))


def _heap_arrays(s) -> dict[str, str]:
    out: dict[str, str] = {}
    for u in imp.statements(s):
        if isinstance(u, Alloc):
            out.setdefault(u.array, u.type)
    return out
