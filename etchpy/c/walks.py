"""The C of two forms of a segment walk (c.statements prints the rest).

- A walk whose loop also tests the entry it is at, `while (q < e && test)`
  (the per-entry check that lower.schedule.fused_checks adds), is printed as
  `while (q < e) { if (!test) break; ... }`: the same loop. Compilers schedule
  the per-entry test better in that form, and the walk's leading Opaque marks
  go before the test, so that the entry it loads is not loaded again after them.
- imp.ShortIntersect: all pairs of two short segments compared at once in SIMD,
  else the two-finger merge.
- imp.GatherSum: the call of ep_gather_sum (codegen_templates/kernel.c.j2)
  where its pick is set, its fallback loop otherwise.
- A window walk's fill of window_blocks' buffers (`fill_hits`): the call of
  ep_fill_hits (kernel.c.j2), which runs the same loop, or with AVX-512 the
  window test in lanes and the hits compressed into the buffers
  (tuning.window_fill_lanes).
"""
from __future__ import annotations

from .. import imp
from ..imp import Assign, Bin, Const, Decl, Load, Opaque, Seq, Store, Var, While


def tests_entry(test, q: str) -> bool:
    """Whether `test` reads some array at position q (a walk's entry)."""
    return any(isinstance(x, Load) and x.index == Var(q) for x in imp.subterms(test))


def entry_test_loop(printer, head: str, test: str, body, depth: int, indent: str) -> str:
    """`while (head && test) body` (head and test: C text) as a loop on head that
    breaks on !test; `indent` is one level of indentation."""
    pad = indent * depth
    stmts = imp.seq_parts(body)
    lead = 0
    while lead < len(stmts) and isinstance(stmts[lead], Opaque):
        lead += 1
    lines = [f"{pad}while ({head}) {{"]
    lines += [printer.stmt(s, depth + 1) for s in stmts[:lead]]
    lines.append(f"{pad}{indent}if (!({test})) break;")
    rest = Seq(tuple(stmts[lead:]))
    if rest != imp.SKIP:
        lines.append(printer.stmt(rest, depth + 1))
    return "\n".join(lines + [f"{pad}}}"])


_LANE_OPS = {"min": "EP_LANE_MIN", "max": "EP_LANE_MAX", "*": "EP_LANE_TIMES",
             "+": "EP_LANE_PLUS"}


def gather_sum(printer, s: imp.GatherSum, depth: int, indent: str) -> str:
    """`if (pick) { acc = ep_gather_sum(...); q = end; } else { fallback }`
    (ep_gather_ext, its (⊕, ⊗) as constants, for the semirings other than real;
    ep_gather_clamped where its coordinates' maximum is tested after the program; x NULL
    for a plain sum, no `dense`)."""
    pad = indent * depth
    flags = (1 if s.dim else 0) | (2 if s.square else 0)      # checked; each value squared
    check = f"{flags}, {s.dim}, &{s.error}" if s.dim else f"{flags}, -1, NULL"
    name, ops = "ep_gather_sum", ""
    if s.lanes_max:             # masked lanes, their maximum tested after the program
        name, check = "ep_gather_clamped", f"{s.dim}, &{s.lanes_max}"
    elif s.ops != ("+", "*"):
        name, ops = "ep_gather_ext", ", " + ", ".join(_LANE_OPS[o] for o in s.ops)
    call = (f"{pad}{indent}{s.acc} = {name}({s.acc}, {s.q}, {s.end}, {s.vals}, "
            f"{s.crd}, {s.dense or 'NULL'}, {check}, {s.pick}{ops});\n{pad}{indent}{s.q} = {s.end};")
    return f"{pad}if ({s.pick}) {{\n{call}\n{pad}}}" + printer.nest(" else", s.fallback, depth)


def short_intersect(printer, s: imp.ShortIntersect, depth: int, indent: str,
                    lanes: int) -> str:
    """With SIMD (EP_SHORT_SIMD, and a width of `lanes`): all pairs of the two
    segments compared at once, the matching lanes of a taken in order, and
    each one's position in b found by one more compare. Otherwise the
    two-finger merge."""
    qa, ea, crd_a, qb, eb, crd_b = s.qa, s.ea, s.crd_a, s.qb, s.eb, s.crd_b
    pad, p2, p3 = (indent * (depth + d) for d in range(3))
    (m, a0, xa), (b0, xb) = printer.derived(s, qa, "m", "0", "x"), printer.derived(s, qb, "0", "x")
    merge = [
        f"{p2}while ({qa} < {ea} && {qb} < {eb}) {{",
        f"{p3}if ({crd_a}[{qa}] == {crd_b}[{qb}]) {{",
        printer.stmt(s.body, depth + 3),
        f"{p3}}}",
        f"{p3}const int64_t {xa} = {crd_a}[{qa}], {xb} = {crd_b}[{qb}];",
        f"{p3}{qa} += {xa} <= {xb};",
        f"{p3}{qb} += {xb} <= {xa};",
        f"{p2}}}"]
    simd = [
        "#if EP_SHORT_SIMD",
        f"{p2}const int64_t {a0} = {qa}, {b0} = {qb};",
        f"{p2}int {m} = ep_short_match({crd_a} + {a0}, {ea} - {a0}, {crd_b} + {b0}, "
        f"{eb} - {b0});",
        f"{p2}for (; {m}; {m} &= {m} - 1) {{",
        f"{p3}{qa} = {a0} + ep_ctz64((uint64_t){m});",
        f"{p3}{qb} = {b0} + ep_short_find({crd_b} + {b0}, {crd_a}[{qa}]);",
        printer.stmt(s.body, depth + 2),
        f"{p2}}}",
        "#else", *merge, "#endif"]
    return "\n".join([f"{pad}{{", *(simd if s.width == lanes else merge),
                      f"{p2}{qa} = {ea};", f"{p2}{qb} = {eb};", f"{pad}}}"])


def fill_hits(s, local: frozenset) -> tuple | None:
    """The parts (q, end, crd, vals, off, dim, row, hv, hc, hr, n) when s is the
    fill of window_blocks' buffers (lower.schedule.window_walks._buffered) as
    the trusted build or a check_after checked one has it, every entry's
    coordinate read unclamped:

        while (q < end) { ok := (crd[q] − off) <u dim; hv[n] := vals[q];
                          hc[n] := crd[q] − off; hr[n] := row; n := n + ok; q := q + 1 }

    with off, dim, row and end plain names or constants and hv, hc, hr among
    `local` (the program's LocalArrays: buffers read below n only); else None."""
    if not isinstance(s, While):
        return None
    plain = (Var, Const)
    match s:
        case While(Bin("<", Var(q), Var() as end), Seq((
                Decl(ok, "bool", Bin("<u", Bin("-", Load(crd, Var(q1)), off) as hit, dim)),
                Store(hv, Var(n), Load(vals, Var(q2))), Store(hc, Var(n2), hit2),
                Store(hr, Var(n3), row), Assign(n4, Bin("+", Var(n5), Var(ok2))),
                Assign(q3, Bin("+", Var(q4), Const(1)))))) if (
                q == q1 == q2 == q3 == q4 and n == n2 == n3 == n4 == n5 and ok == ok2
                and hit == hit2 and all(isinstance(x, plain) for x in (off, dim, row))
                and len({hv, hc, hr, crd, vals}) == 5 and n not in (q, end.name)
                and {hv, hc, hr} <= local):
            return q, end, crd, vals, off, dim, row, hv, hc, hr, n
    return None


def fill_hits_call(printer, parts, depth: int, indent: str) -> str:
    """`n = ep_fill_hits(...); q = end;`: the loop `fill_hits` matched."""
    q, end, crd, vals, off, dim, row, hv, hc, hr, n = parts
    e, pad = printer.expr, indent * depth
    return (f"{pad}{n} = ep_fill_hits({crd}, {vals}, {q}, {e(end)}, {e(off)}, {e(dim)}, "
            f"{e(row)}, {hv}, {hc}, {hr}, {n});\n{pad}{q} = {e(end)};")


def local_arrays(body) -> frozenset:
    """The names of the LocalArrays of a program's body."""
    return frozenset(u.array for u in imp.statements(body) if isinstance(u, imp.LocalArray))
