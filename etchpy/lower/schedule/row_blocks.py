"""Row blocks, switched by tuning.row_blocks (and tuning.row_block > 1): the
rows of a dense output, each a sum over one counted run (a band: streams.Counter
on the contracted level below the row), `row_block` adjacent rows at a time, so
that one loop over the columns the rows' runs share reads each operand value at
a column once for all of them (x[j] of an SpMV: one load for `row_block`
products, where a row alone makes two loads a product). For rows t .. t+K−1
with runs [lo_k, hi_k):

    mid_lo := max_k lo_k;  mid_hi := max(min_k hi_k, mid_lo)
    if mid_hi − mid_lo >= tuning.row_block_min:
        acc_k := Σ over [lo_k, min(mid_lo, hi_k))                 (head, per row)
               ⊕ Σ over [mid_lo, mid_hi), the K rows in one loop,
                 each over tuning.row_block_lanes accumulators
               ⊕ Σ over [max(mid_hi, min(mid_lo, hi_k)), hi_k)   (tail, per row)
        out[t+k] := acc_k;  t := t + K
    else: row t as without the pass;  t := t + 1

(a block is tried at each t with K rows left). This loop runs where the rows'
mean run (the Runs hint's positions over the rows, one test before it) is at
least tuning.row_block_min long; elsewhere the rows run as row streams do
(or in band rows' ranges, or one by one). Each row's run is split
into three disjoint ranges that cover it (proofs_notes/band.md, "Rows in
blocks"), so each row gets the sum of the same terms; the sum is reassociated
(floats may round differently, as with split sums). Each row is written by its
own body alone, as on threads (the conditions of `threads.parallel_dense_rows`).
A triangle's rows share all but their first few columns; a band's rows of width
w share w − K + 1 columns."""
from __future__ import annotations

from ... import imp, streams
from ...imp import (Assign, Block, Const, Decl, If, Ring, Var, While, incr, le, lt, max_,
                    min_, seq)
from . import band_rows, row_streams
from .threads import plain_counted


def run(em, s) -> imp.Stmt | None:
    """The pass at a step's loop nest: rows in blocks where the rows' mean run
    is at least tuning.row_block_min long, else row streams (or plain rows);
    None where it does not apply."""
    k_rows, tn = em.tuning.row_block, em.tuning
    if k_rows < 2 or em.markers or not plain_counted(s) or s.contracted:
        return None
    v = s.value
    if (em.target.dense_axes is None or em.target.keeps_flags or not _one_run(v)
            or streams.Span in s.facts):
        return None
    runs = v.facts.get(streams.Runs)
    if runs is None or runs.n is None:
        return None
    c, start, end = streams.counter_range(s)
    body = em.row_body(s, em.top())
    t, stride = em.names.fresh(f"{c}_blk"), em.names.fresh(f"{c}_step")

    def plain(at_row):
        return Block(seq(Decl(c, "index", at_row), body))

    whole = _block(em, s, Var(t), k_rows, Assign(stride, Const(k_rows)))
    blocks = seq(imp.Comment(f"{s.var}: {s.search}, rows in blocks of {k_rows} over their "
                             f"shared columns"),
                 Decl(t, "index", start),
                 While(lt(Var(t), end), seq(
                     Decl(stride, "index", Const(1)),
                     If(lt(imp.add(Var(t), Const(k_rows - 1)), end), Block(whole)),
                     If(imp.eq(Var(stride), Const(1)), plain(Var(t))),
                     Assign(t, imp.add(Var(t), Var(stride))))))
    other = band_rows.run(em, s) if tn.band_rows else None
    if other is None and tn.row_streams:
        other = row_streams.run(em, s)
    if other is None:
        other = seq(Decl(t, "index", start), While(lt(Var(t), end), seq(plain(Var(t)), incr(t))))
    rows = imp.Bin("max", imp.Bin("-", end, start), Const(0))
    long_runs = le(imp.Bin("*", Const(tn.row_block_min), rows), runs.n)
    return If(long_runs, Block(blocks), Block(other))


def _block(em, s, t, k_rows: int, done: imp.Stmt) -> imp.Stmt:
    """Rows t .. t + k_rows − 1 over their shared columns, then `done`, when
    they share at least tuning.row_block_min columns; else nothing."""
    v, (c, _, _) = s.value, streams.counter_range(s)
    cj, first, stop = streams.counter_range(v)

    def at(k):
        return imp.add(t, Const(k)) if k else t

    los = [em.names.fresh(f"{cj}_lo") for _ in range(k_rows)]
    his = [em.names.fresh(f"{cj}_hi") for _ in range(k_rows)]
    mlo, mhi = em.names.fresh(f"{cj}_mlo"), em.names.fresh(f"{cj}_mhi")
    bounds = [Decl(n, "index", imp.substitute(e, c, at(k)))
              for k in range(k_rows) for n, e in ((los[k], first), (his[k], stop))]
    lo_max, hi_min = Var(los[0]), Var(his[0])
    for k in range(1, k_rows):
        lo_max, hi_min = max_(lo_max, Var(los[k])), min_(hi_min, Var(his[k]))
    accs = [em.names.fresh("acc") for _ in range(k_rows)]
    values = [imp.substitute(v.value, c, at(k)) for k in range(k_rows)]
    blocked = [Decl(a, "value", Const(em.sr.zero, "value")) for a in accs]
    for k in range(k_rows):                        # heads
        blocked.append(_sum(em, cj, Var(los[k]), min_(Var(mlo), Var(his[k])), accs[k],
                            values[k]))
    blocked.append(_middle(em, cj, Var(mlo), Var(mhi), accs, values,
                           em.tuning.row_block_lanes))
    for k in range(k_rows):                        # tails, then the rows' writes
        blocked.append(_sum(em, cj, max_(Var(mhi), min_(Var(mlo), Var(his[k]))),
                            Var(his[k]), accs[k], values[k]))
    for k in range(k_rows):
        iv = em.names.fresh(f"{s.var}_")
        enter, ctx = em.target.enter(s.var, Var(iv), em.top())
        blocked += [Decl(iv, "index", imp.substitute(s.index, c, at(k))), enter,
                    em.target.write(ctx, Var(accs[k])), em.target.after(s.var, ctx)]
    fits = le(Const(em.tuning.row_block_min), imp.Bin("-", Var(mhi), Var(mlo)))
    return seq(*bounds, Decl(mlo, "index", lo_max), Decl(mhi, "index", max_(hi_min, Var(mlo))),
               If(fits, seq(Block(seq(*blocked)), done)))


def _one_run(v) -> bool:
    """v is a Σ over one plain counted run with a leaf value (a band's row)
    that reads counted runs (streams.Pieces, not runs of one value)."""
    return (streams.is_stream(v) and v.contracted and plain_counted(v)
            and not streams.is_stream(v.value) and streams.Pieces in v.facts
            and streams.Flat not in v.facts)


def _sum(em, cj: str, lo, hi, acc: str, value) -> imp.Stmt:
    """acc ⊕= Σ value over cj in [lo, hi), one accumulator (a short head or tail)."""
    j = em.names.fresh(cj)
    return seq(Decl(j, "index", lo), While(lt(Var(j), hi), seq(
        Assign(acc, Ring("add", Var(acc), imp.substitute(value, cj, Var(j)))), incr(j))))


def _middle(em, cj: str, lo, hi, accs, values, lanes: int) -> imp.Stmt:
    """acc_k ⊕= Σ values[k] over cj in [lo, hi) for every k in one loop, `lanes`
    columns a step into lanes·K accumulators added into acc_k after, the
    columns left over one at a time."""
    j = em.names.fresh(cj)
    jv, lanes = Var(j), max(lanes, 1)
    part = [[em.names.fresh(f"{a}_col") for _ in range(lanes)] for a in accs]
    zero = Const(em.sr.zero, "value")
    adds = [Assign(part[k][m], Ring("add", Var(part[k][m]), imp.substitute(
        values[k], cj, imp.add(jv, Const(m)) if m else jv)))
        for k in range(len(accs)) for m in range(lanes)]
    totals = []
    for k, a in enumerate(accs):
        total = [Var(p) for p in part[k]]
        while len(total) > 1:                  # a balanced tree of adds
            total = [Ring("add", total[i], total[i + 1]) if i + 1 < len(total) else total[i]
                     for i in range(0, len(total), 2)]
        totals.append(Assign(a, Ring("add", Var(a), total[0])))
    fits = lt(imp.add(jv, Const(lanes - 1)), hi)
    rest = [Assign(a, Ring("add", Var(a), imp.substitute(values[k], cj, jv)))
            for k, a in enumerate(accs)]
    return seq(Decl(j, "index", lo), *[Decl(p, "value", zero) for ps in part for p in ps],
               While(fits, seq(imp.Opaque(j), *adds, Assign(j, imp.add(jv, Const(lanes))))),
               *totals,
               While(lt(jv, hi), seq(*rest, incr(j))))
