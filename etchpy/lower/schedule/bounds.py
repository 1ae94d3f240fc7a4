"""Bounds on an output's entries, read at kernel entry (they size first
allocations and threaded rows), and the slices of stream state they read."""
from __future__ import annotations

from ... import imp
from ...expr.nodes import Access, Add, Mul
from ...formats import Format
from ...formats import level as shapes
from ...imp import ONE, ZERO, Assign, Bin, Const, Decl, Load, Var, While, incr, lt, seq
from ... import streams


def entries_bound(body, axes, tensors: dict, names: imp.Names | None = None,
                  pre: list | None = None) -> imp.Expr | None:
    """An upper bound, computable at kernel entry, on the number of distinct
    coordinates over `axes` (some output axes) at which a Σ-free body is nonzero,
    or None.

    An access whose indices include every one of those axes has at most one such
    coordinate per stored entry of its tensor (the coordinates are a projection
    of its entries); a product has no more than its smallest factor, a sum no
    more than the sum of both sides. A product of two accesses that each miss
    one of the axes is bounded by its join size when that can be counted in one
    pass (`join_size`; its loop goes into `pre`). Literals, and other accesses
    missing one of the axes (broadcast along it), give no bound."""
    out_axes, want = axes, set(axes)
    match body:
        case Access(tensor, indices) if tensor.name in tensors:
            if want <= {ix.name for ix in indices}:
                return stored_entries(tensor.name, tensors[tensor.name].format)
            return None
        case Mul(a, b):
            ba = entries_bound(a, out_axes, tensors, names, pre)
            bb = entries_bound(b, out_axes, tensors, names, pre)
            if ba is None and bb is None and names is not None and pre is not None:
                return (join_size(a, b, want, tensors, names, pre)
                        or join_size(b, a, want, tensors, names, pre))
            return imp.min_bound(ba, bb)
        case Add(a, b):
            return imp.sum_bound(entries_bound(a, out_axes, tensors, names, pre),
                                 entries_bound(b, out_axes, tensors, names, pre))
    return None


def join_size(a, b, want: set, tensors: dict, names: imp.Names, pre: list):
    """|a ⋈ b|, the number of pairs of stored entries of a and b that agree on their
    one shared index j, as a variable that statements appended to `pre` compute;
    None when it cannot be counted that way.

    Every coordinate over `want` (⊆ the indices of a and b) where a·b is nonzero
    is the projection of such a pair, so the join size bounds them: Gustavson's
    product A[i,j]·B[j,k] writes at most Σ over A's entries of the length of B's
    row j. It is counted when j is a's last storage level and that level reads
    as a segment (its crd gives j for every entry), and b's first storage level
    is located over j (j is its position), with at least one level below (the
    entries under j are one range of positions, level.children): one pass over
    a's entries, two loads per level of b below the first."""
    if not (isinstance(a, Access) and isinstance(b, Access)
            and a.tensor.name in tensors and b.tensor.name in tensors):
        return None
    ia, ib = [x.name for x in a.indices], [x.name for x in b.indices]
    shared = set(ia) & set(ib)
    if len(shared) != 1 or not want <= set(ia) | set(ib):
        return None
    (j,) = shared
    fa, fb = tensors[a.tensor.name].format, tensors[b.tensor.name].format
    sa = [ia[m] for m in fa.mode_order]
    sb = [ib[m] for m in fb.mode_order]
    if not (sa[-1] == j and sb[0] == j and fb.levels[0].located and len(fb.levels) > 1):
        return None
    ba = streams.array_names(a.tensor.name, fa)
    bb = streams.array_names(b.tensor.name, fb)
    last = fa.levels[-1].read(ZERO, ONE, ba.dim(len(fa.levels) - 1), ba.levels[-1])
    if not isinstance(last, shapes.Segment):
        return None
    total, q = names.fresh("join_size"), names.fresh("join_q")
    lo: imp.Expr = Load(last.crd, Var(q))
    hi: imp.Expr = imp.add(lo, ONE)
    for lev in range(1, len(fb.levels)):
        lo, hi = fb.levels[lev].children(lo, hi, bb.dim(lev), bb.levels[lev])
    pre += [Decl(total, "index", ZERO), Decl(q, "index", ZERO),
            While(lt(Var(q), stored_entries(a.tensor.name, fa)),
                  seq(Assign(total, imp.add(Var(total), Bin("-", hi, lo))), incr(q)))]
    return Var(total)


def stored_entries(name: str, fmt: Format) -> imp.Expr:
    """The number of values an input tensor stores, read from its level arrays."""
    return streams.array_names(name, fmt).positions(len(fmt.levels) - 1)


def state_decls(v, stmt) -> list:
    """Declarations of the state of stream v that stmt uses."""
    used = imp.names_used(stmt)
    return [Decl(n, t, Const(False, "bool") if t == "bool" else ZERO)
            for n, t in v.state if n in used]


def slice_init(init, expr) -> imp.Stmt:
    """The statements of `init` that the value of expr depends on: a backward
    slice over its top-level assignments (other statements are kept whole). A
    bound read right after a stream's init needs its segment ends, not the
    rest of its state (A∘B's gallop flag), which would be set and never read."""
    need, kept = imp.names_used(expr), []
    for st in reversed(imp.spliced(init)):
        if isinstance(st, Assign) and st.name not in need:
            continue
        kept.append(st)
        need |= imp.names_used(st)
    return seq(*reversed(kept))
