"""Size tests switched once, switched by tuning.size_switch: a test inside a
loop that reads only constants and a walked level's entry count (pos[parents],
a fact of the call: `Const(k) <= pos[parents]`, the prefetch passes' "are the
level's arrays large", prefetch.runs_wanted) is made once, before every loop,
and the program becomes

    if (test) { body, the test read as true } else { body, the test read as false }

with each copy's conditions folded (`fold`), for each statement of the body
that holds the test (the statements between keep their declarations in
scope); then each outermost loop that still holds a size test (a later step's,
over another level's count) is switched on its first one the same way. Left
in the loop, the test and its branch ran once per segment, and
short segments (SpMV rows of five entries) paid for it even where neither way
prefetches anything (docs/performance.md, "Size tests switched once").

The entry count is read where the loops read it anyway: a walked level's pos
has parents + 1 entries (the runtime checks pos's length and 0 <= pos[0] <=
pos[parents] <= len(crd) before every call), so the read is in bounds before
any fused check runs. The program's first test is switched over the whole
body when the body has at most tuning.unswitch_limit statements; then each
outermost loop of at most that many that still holds a test is switched on its
own first one, so a loop has at most four copies (two for the body's test, two
for its own). A larger program or loop keeps its tests in place, but for a
block list's mean-block test, which picks the rows' whole loop (left in the
row loop it cost what the flat walk saves). Before session 65 only the
program's first test was switched, none in a program over the limit: a nested
product's two SpMV steps (Σ_j A·(Σ_k B·x)) kept both tests in their row loops.
"""
from __future__ import annotations

from dataclasses import replace

from ... import imp
from ...imp import Bin, Const, Decl, If, Load, ParallelFor, Seq, Var, While
from ...imp.analysis import children
from .fused_checks import candidates

_TESTS = ("<", "<=", ">", ">=", "==", "!=", "<u")
_ARITH = ("+", "-", "*", "max", "min")


def run(prog, tuning):
    """`prog` with each outermost loop's first size test made once (module
    docstring); `prog` itself when the pass is off or no loop holds such a test."""
    if not tuning.size_switch:
        return prog
    counts = {Load(lv.pos, Var(lv.parents)) for lv in candidates(prog).values()}
    blocks = block_counts(prog)
    counts |= blocks
    segs = {c.index for c in blocks}        # a block list's blocks, seg[parents]

    def mean(t):                            # a block list's mean block (pieces.short_mean)
        return _holds_count(t.a, blocks) and _holds_count(t.b, segs)
    found = sorted(size_tests(prog.body, counts), key=lambda t: not mean(t))
    body, limit = prog.body, tuning.unswitch_limit
    if found and (sum(1 for _ in imp.statements(body)) <= limit or mean(found[0])):
        body = Seq(tuple(_switched(s, found[0], counts) for s in imp.seq_parts(body)))
    body = _nests(body, counts, mean, limit)
    return prog if body is prog.body else replace(prog, body=body)


def _switched(stmt, test, counts):
    """stmt as `if (test) stmt[test: true] else stmt[test: false]` when a loop
    of it holds `test`; stmt itself otherwise (its declarations stay in scope for
    the statements after it)."""
    if test not in size_tests(stmt, counts):
        return stmt
    on, off = (_copy(stmt, test, v) for v in (imp.TRUE, imp.FALSE))
    return If(test, on, off)


def _nests(node, counts, mean, limit):
    """node with each outermost loop that still holds a size test switched on its
    first one (a block list's mean test before the others): `if (test) loop[true]
    else loop[false]`, when the loop has at most `limit` statements or the test
    is a mean test; node itself where nothing changes."""
    if isinstance(node, (While, ParallelFor)):
        found = sorted(size_tests(node, counts), key=lambda t: not mean(t))
        if not found or (sum(1 for _ in imp.statements(node)) > limit and not mean(found[0])):
            return node
        return If(found[0], *(_copy(node, found[0], v) for v in (imp.TRUE, imp.FALSE)))
    kids = {id(k) for k in children(node)}
    if not kids:
        return node

    def inner(x):
        if id(x) in kids:
            return _nests(x, counts, mean, limit)
        if isinstance(x, tuple) and any(id(y) in kids for y in x):
            return tuple(inner(y) for y in x)
        return x
    new = imp.map_parts(node, inner)
    return node if new == node else new


def block_counts(prog) -> set:
    """The entry counts pos[seg[parents]] of block lists (formats.blocks) read in
    `prog`'s tests, pos and seg input arrays, parents a dimension: validated with
    the input before the call (seg has parents + 1 entries, pos seg[parents] + 1),
    so read in bounds before any loop. A test of a block list's mean block (its
    entries against its blocks: pieces.short_mean) is switched before the others:
    it picks the rows' whole loop, a prefetch test only hints."""
    arrays = {p.name for p in prog.params if p.kind == "in_array"}
    dims = {p.name for p in prog.params if p.kind == "dim"}
    found = set()

    def visit(e):
        match e:
            case Load(str() as pos, Load(str() as seg, Var(d))) if (
                    pos in arrays and seg in arrays and d in dims):
                found.add(e)
        if not isinstance(e, (Var, Const, Load)):
            imp.map_parts(e, lambda c: (visit(c), c)[1])
    for node in imp.statements(prog.body):
        if isinstance(node, If):
            visit(node.cond)
    return found


def _copy(stmt, test, value):
    """stmt with `test` read as `value` and folded, less the declarations the fold
    left constant and unread (a prefetch's `far = test && ...` whose reads were
    folded away: C warns of an unused variable)."""
    out = fold(imp.replaced(stmt, test, value))
    for d in [u for u in imp.statements(out) if isinstance(u, Decl) and isinstance(u.init, Const)]:
        rest = imp.replaced(out, d, imp.SKIP)
        if d.name not in imp.names_used(rest, kept=False):
            out = rest
    return out


def size_tests(body, counts: set) -> list:
    """The size tests over `counts` (`is_size_test`) that are conjuncts of an
    If's condition inside a loop of `body`, in order, each once."""
    out = []

    def visit(node, looped: bool):
        if isinstance(node, If) and looped:
            out.extend(c for c in conjuncts(node.cond) if is_size_test(c, counts))
        inner = looped or isinstance(node, (While, ParallelFor))
        for child in children(node):
            visit(child, inner)
    visit(body, False)
    return list(dict.fromkeys(out))


def conjuncts(e) -> list:
    """The operands of a chain of &&, e itself when it is not one."""
    if isinstance(e, Bin) and e.op == "&&":
        return conjuncts(e.a) + conjuncts(e.b)
    return [e]


def is_size_test(e, counts: set) -> bool:
    """A comparison of constants and entry counts (`counts`), one at least, or
    of sums, differences, products and maxima of them and the counts' parents
    (prefetch.large_runs' mean row length: C parameters, fixed for the call)."""
    if not (isinstance(e, Bin) and e.op in _TESTS):
        return False
    sides = (e.a, e.b)
    parents = {c.index for c in counts if isinstance(c, Load)}
    return (all(_call_fixed(s, counts, parents) for s in sides)
            and any(_holds_count(s, counts) for s in sides))


def _call_fixed(e, counts, parents) -> bool:
    if isinstance(e, Const) or e in counts or e in parents:
        return True
    return (isinstance(e, Bin) and e.op in _ARITH and _call_fixed(e.a, counts, parents)
            and _call_fixed(e.b, counts, parents))


def _holds_count(e, counts) -> bool:
    return e in counts or (isinstance(e, Bin) and e.op in _ARITH and (
        _holds_count(e.a, counts) or _holds_count(e.b, counts)))


def fold(node):
    """node with &&, || and If over the constants true and false folded away."""
    if isinstance(node, (Var, Const, Load)):
        return node
    node = imp.map_parts(node, fold)
    match node:
        case Bin("&&", a, b):
            return imp.and_(a, b)
        case Bin("||", a, b):
            return imp.or_(a, b)
        case If(cond, then, else_):
            return imp.if_(cond, then, else_)
    return node
