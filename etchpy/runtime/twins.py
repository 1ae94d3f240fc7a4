"""One check of index arrays two scipy inputs share (Tuning.check_twins_once).

A kernel with fused checks (proofs_notes/validation.md) checks some scipy inputs
as it reads them and others in full before the call. When an input of the first
kind reads the very index arrays of one of the second (`A @ A` written as
Σ_k A[i,k]·B[k,j] and called with one matrix twice), the full pass has checked
them in this call, and the build without fused checks runs. The general path
decides by calling.variant and calling.twin; a call plan by `builds` (which
builds a plan holds, and the twin pairs) and `call_text` (its Python text
choosing per call by the arrays' addresses); the C binder by `chosen` in
codegen_templates/binder.c.j2, the same compares in C.

An input checked in full over the index arrays of one checked in full before it
in the same call (both bound unfused: A ⊙ B over one pattern) has its pass (and
its NaN scan, over the same values) skipped: `sources` names, per step, the one
whose arrays a call compares (Python plan: `sparse_lines`, coo_steps; C: `sparse`
and `coo` in binder_inputs.c.j2; the general path: `seen`, checks.check_once and
coo_inputs.as_is). A coo input likewise, over another coo input's coordinates.
The C binder also skips a compressed input's pass where its index arrays hold the
same bytes as the earlier one's (memcmp: a copy of its pattern); the Python plan
and the general path compare addresses only.
"""
from __future__ import annotations

from .calling import TRUSTED
from .coo_steps import CooFacts
from .plan_steps import Sparse


def builds(owner, kern, function, lib, steps, bound):
    """((the build a plan runs by default, its library), (the trusted build, its
    twin pairs (k, k2, values too), its library) or None). Each library frees the
    arrays its build returns: a block goes back to the spares of the build that
    made it (kernel.c.j2's ep_unmap), not to another's, whose calls would then
    map fresh pages each time. With no input bound unchecked: the build the call
    ran (`function` of `lib`), alone. Else the build with fused checks, and where every
    unchecked input (k2) is a scipy one with fused checks and another scipy input
    checked in full (k) has its layout, the trusted one: a plan runs it on a call
    where each k2 reads k's index arrays, same shape, and its values too where the
    kernel checks them for NaN (Tuning.check_twins_once; proofs_notes/validation.md).
    A build no call has made yet is None here (not compiled for a plan): a call
    that needs it is a MISS, the general path makes it, and its plan has both."""
    key = next((key for key, e in kern._entries.items() if e[2] is function), None)
    loose = [k2 for k2, (name, _) in enumerate(steps) if bound[name].unchecked]
    if key is None or not loose:
        return (function, lib), None
    base = key.removesuffix(TRUSTED)
    checked = kern._entries.get(base)
    pairs = []
    for k2 in loose:
        name, step = steps[k2]
        twin = next((k for k, (_, s) in enumerate(steps) if type(s) is Sparse
                     and type(step) is Sparse and not s.fused and step.fused
                     and s.csr == step.csr and s.idx == step.idx), None)
        if twin is None or not owner.request.tuning.check_twins_once:
            entry = checked or kern._entry(base)
            return (entry[2], entry[0]), None
        pairs.append((twin, k2, int(name in kern._fused_nan)))
    trusted = kern._entries.get(base + TRUSTED)
    return ((checked[2], checked[0]) if checked else (None, lib),
            (trusted and trusted[2], tuple(pairs), trusted and trusted[0]))


def sources(steps, tuning) -> dict:
    """{k: j}: step k an input checked in full (a scipy csr/csc or GCXS one, or a coo
    one), j the first step before it of its kind checked in full with its index dtype
    (their arrays compared per call, and the extents of their compressed levels: csr
    or csc alike; a coo one's shape); empty without Tuning.check_twins_once."""
    if not tuning.check_twins_once:
        return {}
    full = [(k, key) for k, (_, s) in enumerate(steps) if (key := _full(s)) is not None]
    return {k: j for n, (k, key) in enumerate(full)
            for j in [next((j for j, y in full[:n] if y == key), None)] if j is not None}


def _full(step):
    """(kind, index dtype) of a step whose input is checked in full, else None."""
    if type(step) is Sparse:
        return None if step.fused else ("compressed", step.idx)
    facts = getattr(step, "binder", None)
    return (("coo", facts.idx) if type(facts) is CooFacts and facts.check is not None
            and len(facts.dims) == 2 else None)


def source_lines(k, j, o, major, minor, check, nan):
    """Step k's lines of its full check and NaN scan, skipped over the arrays of step
    j (Sparse `o`, its arrays kept as ip{j}, ix{j}, dv{j}): the same objects, or the
    same addresses (cffi compares pointers by address; j's in `args`, contiguous, as
    from_buffer's of k's are) and lengths, and the same extents."""
    mj, nj = (f"s{j}[0]", f"s{j}[1]") if o.csr else (f"s{j}[1]", f"s{j}[0]")
    a, b, c = o.at
    same = (f"(ip is ip{j} or from_buffer(ityp{k}, ip) == args[{a}] and len(ip) == len(ip{j}))"
            f" and (ix is ix{j} or from_buffer(ityp{k}, ix) == args[{b}] and n == len(ix{j}))"
            f" and {major} == {mj} and {minor} == {nj}")
    check = [f"if not ({same}):", *["    " + line for line in check]]
    if nan and o.nan:
        nan = [f"if not (dv is dv{j} or from_buffer(vtyp{k}, dv) == args[{c}] and {same}):",
               "    " + nan[0]]
    return check, nan


def _missing(*args) -> int:
    """A build not made yet, as a plan calls it: nonzero, a MISS."""
    return 1


def call_text(trusted, steps, space) -> str:
    """The Python plan's text naming the build a call runs (see `builds`): the
    trusted one when each twin pair's C arguments (the arrays' addresses: cffi
    compares pointers by address) and shapes agree."""
    if trusted is None:
        return "function"
    space["trusted"] = trusted[0] or _missing               # not made yet: a MISS
    space["function"] = space["function"] or _missing
    same = []
    for k, k2, vals in trusted[1]:
        a, a2 = steps[k][1].at, steps[k2][1].at
        same += [f"args[{a[r]}] == args[{a2[r]}]" for r in range(2 + vals)]
        same.append(f"s{k} == s{k2}")
    return f"(trusted if {' and '.join(same)} else function)"
