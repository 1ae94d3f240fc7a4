"""A unit arm: the kernel as it runs when its output's last index has extent 1
(Tuning.unit_arms).

SpMM `Y[i,k] = Σ_j A[i,j]·X[j,k]` called with X of one column walks each row of A
into a register block of one value: one chain of adds, no lanes, no gathers, while
the same call written as an SpMV (`y[i] = Σ_j A[i,j]·x[j]`) takes every pass made
for SpMV. When the output's last index r is, in every access that reads it, the
last index of a row-major dense operand, an extent of 1 changes no memory: a
C-contiguous array of shape (..., 1) is the array of shape (...) (its strides
but the last are the same), and so is the output. The kernel's C then holds the
request with r dropped from every access, compiled as its own request, as a
function of its own (`{name}_unit`, c.render), and the exported function calls
it, with the same arguments, when every operand's extent of r is 1
(proofs_notes/unit_arms.md).

    arm(compiled, compile_request)   (the unit request's Compiled, the C test of
                                      its extents), or None where none applies
"""
from __future__ import annotations

from dataclasses import replace

from .errors import EtchpyError
from .expr.nodes import Access, Add, Lit, Map, Mul, Sum, TensorVar, tensor
from .expr.walk import accesses


def arm(compiled, compile_request):
    """(the Compiled of compiled's request with its output's last index dropped,
    the C condition under which the exported function runs it), or None: off
    (Tuning.unit_arms), no such index, an expression this does not rewrite, a
    threaded or sparse-output kernel, or a unit program whose parameters are not
    among the kernel's."""
    req = compiled.request
    if not (req.tuning.unit_arms and req.threads == 1 and req.out_indices
            and (req.out_format is None or req.out_format.is_row_major_dense)):
        return None
    r = req.out_indices[-1]
    read = []
    expr = _dropped(req.expr, r, read)
    if expr is None or not read or all(t.format.is_dense for t in req.tensors.values()) \
            or any(a.tensor.name in {t.name for t in read} and r not in a.indices
                   for a in accesses(req.expr)):    # (a tensor read with r and without)
        return None
    order = None if req.order is None else tuple(v for v in req.order if v != r.name)
    options = dict(req.options)
    if isinstance(options.get("dims"), dict):
        options["dims"] = {k: v for k, v in options["dims"].items() if str(k) != r.name}
    unit = replace(req, expr=expr, out_indices=req.out_indices[:-1], order=order,
                   name=f"{req.name}_unit", options=options)
    try:
        got = compile_request(unit)
    except EtchpyError:
        return None
    mine = {(p.name, p.kind, p.type) for p in compiled.program.params}
    if got.program.output.mode != "dense" or got.program.refuse_above or \
            any((p.name, p.kind, p.type) not in mine for p in got.program.params):
        return None
    return got, " && ".join(f"{t.name}_dim{t.order - 1} == 1" for t in read)


def _dropped(e, r, read: list):
    """e with index r dropped from each access (an access reading r must be a plain
    row-major dense tensor of order >= 2 with r last, its tensor then in `read`);
    None where e holds anything else, or sums over r."""
    match e:
        case Access(t, idx) if r not in idx:
            return e
        case Access(t, idx):
            if (type(t) is not TensorVar or t.iso or t.order < 2 or idx[-1] != r
                    or idx.count(r) != 1 or not t.format.is_row_major_dense):
                return None
            if t not in read:
                read.append(t)
            return tensor(t.name, t.order - 1)[idx[:-1]]
        case Lit():
            return e
        case Mul(a, b) | Add(a, b):
            a, b = _dropped(a, r, read), _dropped(b, r, read)
            return None if a is None or b is None else type(e)(a, b)
        case Sum(index, body) if index != r:
            body = _dropped(body, r, read)
            return None if body is None else Sum(index, body)
        case Map(fn, a, arg):
            a = _dropped(a, r, read)
            return None if a is None else Map(fn, a, arg)
    return None


def build(compiled, prog):
    """(the unit program to run beside `prog`, a build of compiled's program, the
    C test), or None. Where prog checks inputs as it reads them (prog.fused, and
    their NaNs: fused_nan), the runtime binds those inputs unchecked, so the unit
    build must check each of them too (its checked variant); otherwise its
    unchecked program."""
    got = compiled.unit
    if got is None:
        return None
    unit, test = got
    mine = unit.build(bool(prog.fused))
    if not (prog.fused <= mine.fused and prog.fused_nan <= mine.fused_nan):
        return None
    return mine, test
