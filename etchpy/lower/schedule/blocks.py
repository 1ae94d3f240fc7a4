"""Register blocks, switched by tuning.register_blocks: a dense output's last
axis, summed into by a contracted nest, kept in a local block of
tuning.block_sizes values (a constant extent, so C unrolls it into registers)."""
from __future__ import annotations

from dataclasses import replace

from ... import imp
from ...imp import ZERO, Assign, Const, Decl, If, Load, Var, While, add, eq, incr, le, lt, min_, seq
from ... import streams
from ..targets.block import BlockTarget


def block_axis(em, s, ctx) -> str | None:
    """r, when s is a contracted level whose levels below are contracted too
    but for the innermost, a free dense range r that is the last axis of the
    output: every state of these levels adds into the same block
    out[..., 0:n]. Else None.

    * In a fresh block (Context.fresh: a dense output written by one step, or
      a sparse output's tail block appended with its position) one contracted
      level is enough: the flush stores and never reads the output, whose
      memory is fresh. (A flush that added into the fresh output cost more
      than it saved.)
    * Otherwise (out written by several steps, or a contracted level above
      the block) at least two contracted levels, and the flush adds in."""
    if not (em.tuning.register_blocks and em.tuning.block_sizes and s.contracted):
        return None
    levels = streams.levels_of(s)
    inner = levels[-1]
    if (inner.contracted or streams.Full not in inner.facts
            or any(not lv.contracted for lv in levels[:-1])):
        return None
    target = em.target
    if target.dense_axes is not None:
        least = 2 if ctx.fresh else 3
        return (inner.var if len(levels) >= least and target.dense_axes[-1] == inner.var
                else None)
    return inner.var if ctx.fresh and list(target.tail) == [inner.var] else None


def run(em, s, ctx) -> imp.Stmt | None:
    """The pass: s's levels into a register block, where block_axis finds one.
    Not into a target that keeps flags (its flags are set by its writes, not by
    a block's flush)."""
    if em.target.keeps_flags:
        return None
    r = block_axis(em, s, ctx)
    return None if r is None else emit_block(em, s, ctx, r)


def emit_block(em, s, ctx, r) -> imp.Stmt:
    """The levels from s add into a local block blk[0:n], n the extent of r,
    which is then added into out once (stored, in a fresh block): one nest per
    n in tuning.block_sizes, with n a constant; for any other n in strips
    (`_strips`) where a free axis encloses the block (an output row: the strips
    re-walk that row's contracted levels), else as without blocks. A block that
    is the whole output (`Σ_i a[i,j]·b[i,j]`) would re-walk every operand once a
    strip, a band of columns at a time, where one row-order walk reads each once."""
    dim = streams.dim_var(r)
    out = em.emit(s, ctx, blocks=False)
    axes = em.target.dense_axes
    under_a_row = axes is None or len(axes) > 1      # a free axis encloses the block
    for w in sorted(em.tuning.block_strips) if ctx.fresh and under_a_row else ():
        if (strips := _strips(em, s, ctx, r, w)) is not None:
            out = If(le(Const(w), dim), strips, out)
    for n in reversed(em.tuning.block_sizes):
        blk, t = em.names.fresh(f"{r}_blk"), em.names.fresh(f"{r}_t")
        inner = em.with_target(BlockTarget(blk, r))
        flush = seq(Decl(t, "index", ZERO), While(lt(Var(t), dim), seq(
            em.target.write(ctx.bind(r, Var(t)), Load(blk, Var(t)), once=ctx.fresh),
            incr(t))))
        if ctx.made is not None:       # a tentative entry: flushed only when kept
            flush = If(Var(ctx.made), flush)
        body = seq(imp.Comment(f"the block over {r} ({n} values) in registers"),
                   imp.LocalArray(blk, n, Const(em.sr.zero, "value")),
                   inner.emit(s, ctx), flush)
        out = If(eq(dim, Const(n)), imp.substitute(body, dim.name, Const(n)), out)
    return out


def _strips(em, s, ctx, r, w: int) -> imp.Stmt | None:
    """For an extent n >= w of r in a fresh block: the levels from s walked once per
    strip of w values of r, from r = 0 in steps of w, the last strip moved back to
    end at n (it overlaps the one before: its cells are stored again, each the same
    sum in the same order). Each strip is a register block of constant extent w
    whose r loop counts from the strip's start (the operands' rows still n apart). None where r's
    level is not one counted loop this can move or the nest writes more than its
    block (proofs_notes/block_strips.md)."""
    inner = streams.levels_of(s)[-1]
    c = inner.facts.get(streams.Counter)
    if c is None or c.first != ZERO:
        return None
    k0, blk, t = em.names.fresh(f"{r}_s"), em.names.fresh(f"{r}_blk"), em.names.fresh(f"{r}_t")
    body = em.with_target(BlockTarget(blk, r, Var(k0))).emit(s, ctx)
    test = lt(Var(c.name), c.end)
    loops = [x for x in imp.subterms(body) if isinstance(x, While) and x.cond == test]
    if len(loops) != 1 or imp.arrays_written(body) != {blk} or not _shared(body, loops[0]):
        return None
    body = imp.replaced(body, loops[0], _from(loops[0], c.name, Var(k0), w))
    flush = seq(Decl(t, "index", ZERO), While(lt(Var(t), Const(w)), seq(
        em.target.write(ctx.bind(r, add(Var(k0), Var(t))), Load(blk, Var(t)), once=True),
        incr(t))))
    if ctx.made is not None:
        flush = If(Var(ctx.made), flush)
    dim = streams.dim_var(r)
    return seq(Decl(k0, "index", ZERO), While(lt(Var(k0), dim), seq(
        Assign(k0, min_(Var(k0), imp.Bin("-", dim, Const(w)))),
        imp.Comment(f"a strip of {w} values of {r} in registers"),
        imp.LocalArray(blk, w, Const(em.sr.zero, "value")), body, flush,
        Assign(k0, add(Var(k0), Const(w))))))


def _shared(body, inner: While) -> bool:
    """Whether the levels above r's loop read an array (a sparse row's entries, a
    factor r does not index): the work each strip walks again for w columns at once.
    Where every read is in r's loop (`Σ_j A[i,j,k]·B[i,j,k]`), a strip shares nothing
    and reads each operand's rows w values apart; the row-order loop reads them
    in order."""
    outside = imp.replaced(body, inner, imp.Comment("r's loop"))
    return any(isinstance(x, Load) and not x.hint for x in imp.subterms(outside))


def _from(loop: While, c: str, k0, w: int) -> While:
    """`loop` over c = 0, 1, ... run for c < w, reading k0 + c wherever its body reads c
    (but where it steps c)."""
    def moved(x):
        if isinstance(x, imp.Assign) and x.name == c:
            return x
        if x == Var(c):
            return add(k0, x)
        return imp.map_parts(x, moved)
    return replace(loop, cond=lt(Var(c), Const(w)), body=moved(loop.body), walk=None)
