"""Register blocks, switched by tuning.register_blocks: a dense output's last
axis, summed into by a contracted nest, kept in a local block of
tuning.block_sizes values (a constant extent, so C unrolls it into registers)."""
from __future__ import annotations

from ... import imp
from ...imp import ZERO, Const, Decl, If, Load, Var, While, eq, incr, lt, seq
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
    n in tuning.block_sizes, with n a constant; for any other n as without
    blocks."""
    dim = streams.dim_var(r)
    out = em.emit(s, ctx, blocks=False)
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
