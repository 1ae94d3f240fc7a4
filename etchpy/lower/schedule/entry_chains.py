"""Entry chains, switched by tuning.entry_chains (and walk_chains; entry_chain_count
accumulators, < 2: off): the walk of every stored entry of a coo-like input (streams.Scatter: a
non-unique level read one entry at a time, the levels below it one child per parent)
whose only work is a float or complex sum into one accumulator (a total,
`Σ_ijk T[i,j,k]`, or a sum of products with dense operands read at the entry's
coordinates) adds into that many accumulators (walk_chains.chained), not one: the
walk is all of the input's entries, long enough for the chains to pay (a csr row's
walk takes walk_chain_count, fewer, as its rows are short).

Below the split level each level's loop runs over the one position q:

    c := q; e := q + 1; while (c < e) { body; c := c + 1 }

which runs body once with c = q (c < q + 1 always holds: positions are far below
2^63), so `unit` replaces it by body with q for c when body assigns or declares
neither c, e nor a name q reads, and reads e nowhere (it is gone). The walk's body is then straight-line and
walk_chains takes it: only ⊕'s grouping changes (a real sum may round differently,
as a csr total in lanes does; proofs_notes/walk_chains.md, "Entry chains")."""
from __future__ import annotations

import numpy as np

from ... import imp, streams
from ...imp import Assign, Bin, Const, Decl, Seq, Var, While
from . import walk_chains


def run(em, s, parts) -> imp.Stmt | None:
    """The loop pass: s's loop chained, or None where s is not a whole walk of an
    input's entries, chains are off, or its body is not one sum after `unit`."""
    k = em.tuning.entry_chain_count
    if (s.facts.get(streams.Scatter) is None or k < 2 or not em.tuning.walk_chains
            or em.sr is None or np.dtype(em.sr.dtype).kind not in "fc"):
        return None
    gone: set = set()
    body = unit(parts.on_ready, gone)
    still = gone & imp.names_used(_undeclared(body, gone))    # read elsewhere: kept
    body = _undeclared(body, gone - still)
    loop = parts.step(s, s.next, body)
    if not isinstance(loop, While):
        return None
    got = walk_chains.chained(loop, k, em.names, Const(em.sr.zero, "value"))
    return None if got is None else imp.seq(parts.init, got)


def unit(node, gone: set):
    """node with every one-position loop (module docstring) replaced by its body;
    the names of their counters and ends added to `gone`."""
    if isinstance(node, Seq):
        stmts = list(node.stmts)
        out, i = [], 0
        while i < len(stmts):
            got = _one(stmts, i)
            if got is None:
                out.append(unit(stmts[i], gone))
                i += 1
            else:
                gone.update((stmts[i].name, stmts[i + 1].name))
                out.append(unit(got, gone))
                i += 3
        return imp.seq(*out)
    if isinstance(node, While) or not hasattr(node, "__dataclass_fields__"):
        return node
    return imp.map_parts(node, lambda x: unit(x, gone))


def _undeclared(node, names: set):
    """node without the declarations of `names` (read nowhere any more)."""
    if isinstance(node, Seq):
        return imp.seq(*[_undeclared(x, names) for x in node.stmts
                         if not (isinstance(x, Decl) and x.name in names)])
    return node


def _one(stmts, i):
    """The body (c replaced by q) when stmts[i:i+3] is `c := q; e := q + 1;
    while (c < e) { body; c := c + 1 }` as the module docstring asks, else None."""
    if i + 2 >= len(stmts):
        return None
    first, end, loop = stmts[i:i + 3]
    if not (isinstance(first, Assign) and isinstance(end, Assign) and isinstance(loop, While)):
        return None
    c, e, q = first.name, end.name, first.value
    if end.value != imp.add(q, imp.ONE) or loop.cond != Bin("<", Var(c), Var(e)):
        return None
    body = imp.spliced(loop.body)
    if not body or body[-1] != Assign(c, imp.add(Var(c), imp.ONE)):
        return None
    inner = Seq(tuple(body[:-1]))
    changed = imp.scalars_assigned(inner) | imp.declared_in(inner)
    if ({c, e} | imp.names_used(q)) & changed or e in imp.names_used(inner) \
            or c in imp.names_used(q):
        return None
    return imp.substitute(inner, c, q)
