"""A readable, C-like listing of Imp, for debugging (`ETCHPY_DEBUG=imp`).

It is for people, not for a compiler: the format may change at any time.
Constants print as plain numbers (`0.0`, `3`, `true`), whatever numpy type
holds them.
"""
from __future__ import annotations

from .nodes import (Accum, Alloc, Assign, Bin, Bit, Block, Break, Comment, Const, Decl, Fixpoint,
                    ForSorted, GatherPick, GatherSum, Gemm, If, Load, LocalArray, Move, Not,
                    Opaque, ParallelFor, Prefetch, Probe, Reserve, Ring, Seek, Select, Seq, SetBit,
                    ShortIntersect, Store, Var, While)


def show(node, indent: int = 0) -> str:
    """node (an Imp statement or expression), statements indented by `indent` levels."""
    pad = "  " * indent
    match node:
        case Var(name):
            return name
        case Const(v, _):
            return _number(v)
        case Bin(op, a, b) if op in ("max", "min", "hash", "keep", "gap"):
            return f"{op}({show(a)}, {show(b)})"
        case Bin(op, a, b):
            return f"({show(a)} {op} {show(b)})"
        case Not(a):
            return f"!{show(a)}"
        case Load(arr, i, _, view) if view:
            return f"({view}){arr}[{show(i)}]"
        case Load(arr, i):
            return f"{arr}[{show(i)}]"
        case Bit(arr, i):
            return f"bit({arr}, {show(i)})"
        case Probe(arr, table, mask, key):
            return f"probe({arr}, {show(table)}, {show(mask)}, {show(key)})"
        case Select(c, a, b):
            return f"({show(c)} ? {show(a)} : {show(b)})"
        case Ring("repeat", a, n):                      # the n-fold ⊕
            return f"⊕^{show(n)}({show(a)})"
        case Ring(op, a, b) if op not in ("add", "mul"):       # a map (etchpy.maps)
            return f"{op}({show(a)}, {show(b)})"
        case Ring(op, a, b):
            return f"{'⊕' if op == 'add' else '⊗'}({show(a)}, {show(b)})"
        case Decl(name, t, init):
            return f"{pad}{t} {name} = {show(init)};"
        case Assign(name, v):
            return f"{pad}{name} = {show(v)};"
        case Store(arr, i, v):
            return f"{pad}{arr}[{show(i)}] = {show(v)};"
        case Accum(arr, i, v):
            return f"{pad}{arr}[{show(i)}] ⊕= {show(v)};"
        case While(c, body):
            return _nest(f"{pad}while {show(c)}", body, indent)
        case If(c, t, e, rare):
            head = f"{pad}if {'rarely ' if rare else ''}{show(c)}"
            return _nest(head, t, indent) + ("" if e is None else _nest(" else", e, indent))
        case Break():
            return f"{pad}break;"
        case Seq(stmts):
            return "\n".join(show(t, indent) for t in stmts)
        case Block(body):
            return f"{pad}{{\n{show(body, indent + 1)}\n{pad}}}"
        case Comment(text):
            return f"{pad}// {text}"
        case Alloc(arr, t, n, fill, kept):
            return f"{pad}{'kept ' if kept else ''}{t} {arr}[{show(n)}]{_fill(fill)};"
        case Reserve(arr, _, n, fill):
            return f"{pad}reserve {arr}[{show(n)}]{_fill(fill)};"
        case Move(arr, src):
            return f"{pad}{arr} = move {src};"
        case SetBit(arr, i, on):
            return f"{pad}{'set' if on else 'clear'} bit({arr}, {show(i)});"
        case ForSorted(var, arr, n, _, bits, body, _, marked):
            marks = f" marked in {marked} (walk bits {bits})" if marked else ""
            return _nest(f"{pad}for {var} in sorted {arr}[0..{show(n)}]{marks}", body, indent)
        case Opaque(var):
            return f"{pad}opaque {var};"
        case LocalArray(arr, size, fill):
            return f"{pad}local {arr}[{size}] = {show(fill)};"
        case Prefetch(arr, i, write, ahead):
            return (f"{pad}prefetch{' for writing' if write else ''} {arr}[{show(i)}]"
                    f"{f' + {ahead} (may be past its end)' if ahead else ''};")
        case Seek(q, end, crd, t, r):
            return f"{pad}{q} = seek({crd}[{q}..{show(end)}] past ({show(t)}, {show(r)}));"
        case ShortIntersect(qa, ea, crd_a, qb, eb, crd_b, body, width):
            return _nest(f"{pad}for ({qa}, {qb}) in {crd_a}[{qa}..{ea}) ∩ {crd_b}[{qb}..{eb}) "
                         f"(≤{width} each)", body, indent)
        case ParallelFor(var, a, b, body, threads, red, private, flag, when):
            flag = f", flag {flag}" if flag else ""
            flag += f", if {show(when)}" if when is not None else ""
            return _nest(f"{pad}{_parallel(threads, red, private)[:-1]}{flag}) for {var} in "
                         f"[{show(a)}, {show(b)})", body, indent)
        case Gemm():
            return _gemm(node, indent)
        case GatherSum(acc, q, end, vals, crd, dense, fallback, pick, dim, _, (add, mul)):
            checked = f", coordinates < {dim}" if dim else ""
            red, times = ("Σ ", "·") if (add, mul) == ("+", "*") else (f"{add} ", f" {mul} ")
            term = f"{times}{dense}[{crd}[p]]" if dense else ""
            head = f"{pad}if {pick}: {acc} {add}= gathered {red}{vals}[p]{term}"
            return _nest(f"{head} for p in [{q}, {end}){checked} else", fallback, indent)
        case GatherPick(var, pos, parents, None, _, _, least, far, far_least, ragged, rows_far,
                        far_ragged, far_mild, far_spread):
            least = f"{far} ? {far_least} : {least}" if far else least
            ragged = f", ragged from {ragged}" if ragged else ""
            if rows_far:
                ragged += (f"; if {rows_far}: ragged from {far_ragged or 'that'}, or "
                           f"{far_mild or '∞'} when their spread ≤ 1/{far_spread}")
            return f"{pad}index {var} = gather pick({pos}[0..{parents}], from {least}{ragged});"
        case GatherPick(var, pos, parents, crd, dim, share, least):
            return (f"{pad}index {var} = far pick({pos}[0..{parents}], {crd}, {dim}, "
                    f"1/{share}, from {least});")
        case Fixpoint(steps, limit, body, pairs, until):
            swaps = ", ".join(f"{a} ⇄ {b}" for a, b, _ in pairs)
            return _nest(f"{pad}{steps} = fixpoint ≤ {show(limit)} steps, {swaps} after each, "
                         f"until {show(until)}:", body, indent)
    return repr(node)


def _gemm(g, indent: int) -> str:
    """The product on one line, its batch as loops, its fallback after `else`."""
    pad = "  " * indent
    op = "=" if g.overwrite else "+="
    batch = "".join(f" × batch({show(n)}; {show(sa)}, {show(sb)}, {show(sc)})"
                    for n, sa, sb, sc in g.batch)
    head = (f"{pad}gemm {g.c_array}[{show(g.m)}×{show(g.n)}; ld {show(g.ldc)}] {op} "
            f"{g.a_array}{'ᵀ' if g.a_trans else ''}[ld {show(g.lda)}] · "
            f"{g.b_array}{'ᵀ' if g.b_trans else ''}[ld {show(g.ldb)}] over k = "
            f"{show(g.k)}{batch}")
    return _nest(f"{head} else", g.fallback, indent)


def _nest(head: str, body, indent: int) -> str:
    """head { body } with body one level further in and the brace under head's start."""
    return f"{head} {{\n{show(body, indent + 1)}\n{'  ' * indent}}}"


def _number(v) -> str:
    """A constant as people write it: 3, 0.0, inf, true."""
    if hasattr(v, "item"):             # a numpy scalar
        v = v.item()
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v)


def _fill(fill) -> str:
    return "" if fill is None else f" = {{{show(fill)}...}}"


def _parallel(threads, red, private) -> str:
    return (f"parallel({threads}{', reduce ' + red if red else ''}"
            + "".join(f", private {arr}[{show(n)}]" for arr, _, n, _ in private) + ")")
