"""A csr-like sparse output's rows filled on threads (part of the threads pass):
within bounds when each row's entries are bounded by its column stream's
`most` (no workspace) and tuning.bounded_rows is on, else after a pass that
counts them."""
from __future__ import annotations

from ... import imp
from ...imp import (ONE, ZERO, Alloc, Assign, Bin, Decl, If, Load, Move, Reserve, Store, Var,
                    eq, seq)
from ... import streams
from ...streams import is_stream
from ..target import Context
from ..targets.rows import (RowBoundFillTarget, RowCountTarget, RowFillTarget, copy_row,
                            prefix_sums)
from .bounds import slice_init, state_decls


def parallel_rows(em, s) -> imp.Stmt:
    """Fill a csr-like output's rows (the outermost loop s) on threads."""
    col = s.value
    if em.tuning.bounded_rows and bounded_rows_ok(em.target, col):
        return bounded_rows(em, s, col)
    return counted_rows(em, s)


def bounded_rows_ok(target, col) -> bool:
    """Each row's column stream bounds its entries right after its init."""
    return (not target.workspace and is_stream(col)
            and col.var == target.storage[1] and not col.contracted and streams.most_bound(col) is not None)


def row_frame(em, s):
    """How the rows of a sparse output filled on threads are numbered:
    (number of rows, the context that gives row_body the iteration, statements
    before the passes, statements after them). A located first level's rows
    are its indices. An appending first level (in the segment layout of
    formats.level) appends one coordinate per iteration of the outermost loop
    (whose ready is true), so its rows are the iterations, c − start, and its
    arrays are known up front: pos0 = (0, rows), and each row stores its
    coordinate in crd0 in the fill pass."""
    c, start, end = streams.counter_range(s)
    t = em.target
    if t.fmt.levels[0].located:
        return streams.dim_var(t.storage[0]), Context(), imp.SKIP, imp.SKIP
    rows = Bin("-", end, start)
    first = t.fmt.levels[0]
    before = seq(first.room(t.level_arrays(0), rows),
                 Reserve(t.segment(1)[0], "index", imp.add(rows, ONE), ZERO))
    after = seq(first.close(t.level_arrays(0), ZERO, rows), Assign(t.count[0], rows))
    return rows, Context(iteration=Bin("-", Var(c), start)), before, after


def counted_rows(em, s) -> imp.Stmt:
    """Count each row's entries on threads, turn the counts into pos, size the
    output exactly, then fill the rows on threads, each into its own range."""
    c, start, end = streams.counter_range(s)
    t = em.target
    pos, count = t.segment(1)[0], t.count[1]
    rows, it, before, after = row_frame(em, s)
    passes = []
    for target in (RowCountTarget(t, em.names), RowFillTarget(t, em.names)):
        passes.append(imp.ParallelFor(c, start, end, em.with_target(target).row_body(s, it),
                                      em.threads, private=target.private()))
    total = Load(pos, rows)
    return seq(imp.Comment(f"{s.var}: {s.search}; rows counted, then filled, "
                           f"on {em.threads} threads"),
               before, passes[0], prefix_sums(pos, rows, em.names.fresh("out_r")),
               Reserve(t.segment(1)[1], "index", total),
               Reserve(t.vals, "value", imp.mul(total, t.block), t.value_fill()),
               passes[1], Assign(count, total), after)


def bounded_rows(em, s, col) -> imp.Stmt:
    """Each row's column stream, right after its init, bounds the row's entries
    (`most`, O(1) per row: A+B's is the sum of its two segments' lengths). On
    threads: the bounds are summed into ranges of scratch arrays, each row
    fills its range and keeps its count in pos, and after the counts' prefix
    sums each row is copied into place. When every row met its bound (the
    total is the room: a TTM or an SDDMM, whose rows are an operand's
    segments), the scratch arrays already are the output and are moved."""
    c, start, end = streams.counter_range(s)
    t = em.target
    (pos, crd), count = t.segment(1), t.count[1]
    bd = tuple(em.names.fresh(f"bd_{x}") for x in ("starts", "coords", "vals"))
    rows, it, before, after = row_frame(em, s)
    row = it.iteration or Var(em.names.fresh(f"{s.var}_"))
    most = streams.most_bound(col)
    bound = seq(slice_init(col.init, most), Store(bd[0], imp.add(row, ONE), most))
    decls = state_decls(col, bound)
    if isinstance(row, Var):
        decls = [Decl(row.name, "index", s.index), *decls]
    fill = em.with_target(RowBoundFillTarget(t, em.names, bd))
    room, total = Load(bd[0], rows), Load(pos, rows)
    return seq(imp.Comment(f"{s.var}: {s.search}; rows bounded, filled on "
                           f"{em.threads} threads, then moved into place"),
               before, Alloc(bd[0], "index", imp.add(rows, ONE), ZERO),
               imp.ParallelFor(c, start, end, seq(*decls, bound), em.threads),
               prefix_sums(bd[0], rows, em.names.fresh("out_r")),
               Alloc(bd[1], "index", room, None),
               Alloc(bd[2], "value", imp.mul(room, t.block), t.value_fill()),
               imp.ParallelFor(c, start, end, fill.row_body(s, it), em.threads),
               prefix_sums(pos, rows, em.names.fresh("out_r2")),
               # every row met its bound: the ranges are the output's layout
               If(eq(total, room), seq(Move(crd, bd[1]), Move(t.vals, bd[2])),
                  _copy_rows(em, t, bd, rows, total)),
               Assign(count, total), after)


def _copy_rows(em, t, bd, rows, total) -> imp.Stmt:
    crd = t.segment(1)[1]
    r = em.names.fresh("out_c")
    return seq(Reserve(crd, "index", total),
               Reserve(t.vals, "value", imp.mul(total, t.block)),
               imp.ParallelFor(r, ZERO, rows,
                               copy_row(em.names, r, bd, (t.segment(1)[0], crd, t.vals),
                                        t.block), em.threads))
