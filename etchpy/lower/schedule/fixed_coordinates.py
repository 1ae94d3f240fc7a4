"""Fixed coordinates, switched by tuning.fixed_coordinates: a counted loop over
an index k (streams.Counter, its index the counter itself) whose value is a ⊕
of terms each zero unless k = c (a term of a one-walk sum pinned by ep.eq(k,
c), streams.row_test: `select(k == c ∧ …, x, 0)` outermost, maybe under
⊗ or a select by factors that read no state of the loop) is no loop: each
term is recorded once, at k = c when first <= c < end, with c put for k

    Σ_k [k = c]·f(k) = f(c)              (k summed: the record ⊕-s into the sum)
    out[k] ⊕= Σ_t [k = c_t]·f_t(k)  =  out[c_t] ⊕= f_t(c_t), each t in turn

(k free: only into a target that `adds_into`: its write ⊕-s into the cell of its coordinate
and leaves the others as they are: a register block, or a dense output that
is added into, not stored, and keeps no flags). proofs_notes/fixed_coordinates.md.
"""
from __future__ import annotations

from ... import imp, streams
from ...imp import Bin, If, Ring, Select, Var, seq


def run(em, s, parts) -> imp.Stmt | None:
    """The loop pass (schedule.PASSES): the loop of `s` as one record per term,
    or None."""
    counter = s.facts.get(streams.Counter)
    if (counter is None or streams.is_stream(s.value) or s.ready != imp.TRUE
            or s.index != Var(counter.name) or not (s.contracted or em.target.adds_into)):
        return None
    state = {name for name, _ in s.state} | {counter.name}
    zero = imp.Const(em.sr.zero, "value")
    got = _terms(s.value, s.index, state, zero)
    if not got:
        return None
    out = [parts.init]
    for c, x in got:
        x = imp.substitute(x, counter.name, c)
        if imp.names_used(x) & state:
            return None
        inside = imp.and_(imp.le(Var(counter.name), c), imp.lt(c, counter.end))
        out.append(If(inside, parts.record(s.derive(s.facts.keep(), index=c, value=x))))
    return seq(*out)


def _terms(v, k, state: set, zero) -> list | None:
    """[(c, term), ...]: v as a ⊕ of terms each zero unless k = c (c a constant),
    or None."""
    match v:
        case Ring("add", a, b):
            x, y = _terms(a, k, state, zero), _terms(b, k, state, zero)
            return None if x is None or y is None else x + y
        case Ring("mul", a, b) if not imp.names_used(a) & state:
            got = _terms(b, k, state, zero)       # a ⊗ (⊕ t) = ⊕ (a ⊗ t)
            return None if got is None else [(c, Ring("mul", a, t)) for c, t in got]
        case Ring("mul", a, b) if not imp.names_used(b) & state:
            got = _terms(a, k, state, zero)
            return None if got is None else [(c, Ring("mul", t, b)) for c, t in got]
        case Select(cond, a, b) if b == zero:
            c = _pinned(cond, k, state)
            if c is not None:                     # [k = c ∧ g] x at k = c: [g] x
                return [(c, imp.select(_dropped(cond, k), a, zero))]
            if imp.names_used(cond) & state:
                return None
            got = _terms(a, k, state, zero)       # [g] (⊕ t) = ⊕ [g] t
            return None if got is None else [(c, Select(cond, t, zero)) for c, t in got]
    return None


def _pinned(cond, k, state: set):
    """c when cond is k == c (c a constant) or a conjunction holding it."""
    match cond:
        case Bin("==", a, imp.Const() as c) if _is(a, k):
            return c
        case Bin("&&", a, b) | Bin("&", a, b):
            got = _pinned(a, k, state)
            return got if got is not None else _pinned(b, k, state)
    return None


def _is(a, k) -> bool:
    """Is a the coordinate k, as written or as a dense level's position less its
    parent's part, (p + k) - p?"""
    match a:
        case Bin("-", Bin("+", p, b), q) if p == q:
            return _is(b, k)
    return a == k


def _dropped(cond, k):
    """cond with its conjunct k == c (the first `_pinned` finds) made true."""
    match cond:
        case Bin("==", a, imp.Const()) if _is(a, k):
            return imp.TRUE
        case Bin("&&", a, b) | Bin("&", a, b):
            if _has_pin(a, k):
                return imp.and_(_dropped(a, k), b)
            return imp.and_(a, _dropped(b, k))
    return cond


def _has_pin(cond, k) -> bool:
    match cond:
        case Bin("==", a, imp.Const()) if _is(a, k):
            return True
        case Bin("&&", a, b) | Bin("&", a, b):
            return _has_pin(a, k) or _has_pin(b, k)
    return False
