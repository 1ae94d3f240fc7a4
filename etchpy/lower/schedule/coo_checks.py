"""Checks of an input's scatter walk (part of fused_checks).

An input whose storage starts with a non-unique level over levels of one child
per parent position (coo), read one entry at a time (lower.schedule.entries),
is walked by one loop `while (q < e) { ...; q = q + 1 }` over all its stored
entries, each read at q alone: the loop the driver built from a stream with
the streams.Scatter fact notes it (imp.While.walk). Its entries' order and
repeats do not change what such a loop computes when its body only
⊕-accumulates (fused_checks.order_free), so the input needs no order check:
only each coordinate inside its mode. `fuse` makes the loop test them as it
reads them,

    while (q < e && (uint64_t)crd0[q] < dim0 && ... && (uint64_t)crd{r-1}[q] < dim{r-1})
        { body }
    if (q < e) error = 4;

so a coordinate out of range is never used, and the kernel returns ERROR_CODE
(the runtime then checks the input in full and raises an InputError naming
it). pos = [0, n] is made by the runtime from the arrays' common length n
(runtime.coo_inputs.roles), so 0 <= q <= e <= n. The loop qualifies only when
every read of the tensor's crd and values arrays is at q itself, or at an
entry counter p of an inner loop `while (p < pe) { ...; p = p + 1 }` whose
p is set only to q and pe only to q + 1 (the one position of a level below);
proofs_notes/entries.md. No format, role or array name is asked.
"""
from __future__ import annotations

from ... import imp
from ...streams import Scatter
from ...imp import Assign, Bin, Decl, If, Load, ParallelFor, Prefetch, Seq, Var, While, and_, lt, seq


def candidates(prog) -> dict[str, Scatter]:
    """The Scatter noted on some loop of `prog` (imp.While.walk) of every input
    whose crd arrays are parameters of it, by name."""
    arrays = {p.name for p in prog.params if p.kind == "in_array"}
    return {w.tensor: w for n in imp.statements(prog.body)
            if isinstance(n, While) and isinstance(w := n.walk, Scatter)
            and all(c in arrays for c in w.crds)}


def walk(body, lv: Scatter, order_free):
    """(the loop, q) when `body` has exactly one loop noted with lv, outside
    parallel loops, holding every read of lv's arrays, each at an entry of q,
    its body order-free; else None."""
    loops = [n for n in imp.statements(body) if isinstance(n, While) and n.walk == lv]
    if len(loops) != 1 or any(isinstance(n, ParallelFor) and loops[0] in imp.statements(n)
                              for n in imp.statements(body)):
        return None
    loop, q = loops[0], lv.q
    reads = {*lv.crds, lv.vals}
    outside = sum(1 for n in _loads(body, reads)) - sum(1 for n in _loads(loop, reads))
    counters = _entry_counters(loop.body, q)
    if outside or counters is None or not _reads_at(loop.body, reads, {q}, counters):
        return None
    plain = _without_setup(loop.body, q, counters)      # its cond reads q and e alone
    return (loop, q) if order_free(plain, Load(lv.crds[0], Var(q))) else None


def _loads(node, arrays):
    """The reads of `arrays` in node (prefetch hints aside)."""
    if isinstance(node, Prefetch):
        return
    if isinstance(node, Load) and node.array in arrays:
        yield node
    for x in imp.parts(node, notes=True):
        yield from _loads(x, arrays)


def _entry_counters(body, q: str) -> dict | None:
    """{p: pe} for every inner loop `while (p < pe)` of body whose last statement
    steps p, where everything else in body sets p only to q and pe only to
    q + 1 (declarations to anything constant); None when some such loop's
    counters are set otherwise."""
    one_past = imp.add(Var(q), imp.ONE)
    out = {}
    for n in imp.subterms(body):
        if isinstance(n, While) and isinstance(n.cond, Bin) and n.cond.op == "<" and \
                isinstance(n.cond.a, Var) and isinstance(n.cond.b, Var):
            stmts = imp.seq_parts(n.body)
            if stmts and stmts[-1] == imp.incr(n.cond.a.name):
                out[n.cond.a.name] = n.cond.b.name
    for p, pe in out.items():
        if sum(1 for s in imp.statements(body) if s == imp.incr(p)) != 1:
            return None             # stepped only as its loop's last statement
        for s in imp.statements(body):
            if isinstance(s, Assign) and s.name == p and s.value != Var(q) and s != imp.incr(p):
                return None
            if isinstance(s, Assign) and s.name == pe and s.value != one_past:
                return None
            if isinstance(s, Decl) and s.name in (p, pe) and not isinstance(s.init, imp.Const):
                return None
    return out


def _reads_at(node, arrays, at: set, counters: dict) -> bool:
    """Whether every read of `arrays` in node is at a variable of `at` (q, or an
    entry counter inside its own loop)."""
    if isinstance(node, Prefetch):
        return True
    if isinstance(node, Load) and node.array in arrays:
        return isinstance(node.index, Var) and node.index.name in at
    if isinstance(node, While) and isinstance(node.cond, Bin) and \
            isinstance(node.cond.a, Var) and node.cond.a.name in counters:
        inner = at | {node.cond.a.name}
        return _reads_at(node.cond, arrays, at, counters) and \
            _reads_at(node.body, arrays, inner, counters)
    return all(_reads_at(x, arrays, at, counters) for x in imp.parts(node, notes=True))


def _without_setup(body, q: str, counters: dict):
    """body with the entry counters' setting (p := q, pe := q + 1) and the
    assignments of variables it never reads dropped: what remains is what
    order_free judges."""
    setup = {Assign(p, Var(q)) for p in counters}
    setup |= {Assign(pe, imp.add(Var(q), imp.ONE)) for pe in counters.values()}
    read = {n.name for n in imp.subterms(body) if isinstance(n, Var)}

    def strip(node):
        if node in setup or (isinstance(node, Assign) and node.name not in read):
            return imp.SKIP
        if isinstance(node, Seq):
            return seq(*[strip(s) for s in node.stmts])
        if isinstance(node, While):
            return While(node.cond, strip(node.body))
        if isinstance(node, If):
            return If(node.cond, strip(node.then), None if node.else_ is None
                      else strip(node.else_))
        return node
    return strip(body)


def checked(loop: While, q: str, lv: Scatter, fail):
    """The loop testing each coordinate at q inside its mode, then `fail` when it
    stopped early."""
    qv, ev = Var(q), loop.cond.b
    cond = lt(qv, ev)
    for crd, dim in zip(lv.crds, lv.dims):
        cond = and_(cond, Bin("<u", Load(crd, qv), Var(dim)))
    return seq(While(cond, loop.body), If(lt(qv, ev), fail))
