"""numpy-style einsum specs ("ij,j->i") as etchpy expressions over the given operands.

numpy's `einsum` is the specification. A spec names one operand per
comma-separated term, one letter (a-z, A-Z) per dimension; an optional '->'
names the output. Whitespace is ignored.

- A letter repeated within one term takes a diagonal (expr.diagonal): the
  two dimensions must have one size.
- '...' (at most once per term) stands for the dimensions the letters do not
  name. Those of all operands broadcast right-aligned, numpy's way, and become
  the indices `e0, e1, ...` (left to right over the broadcast dimensions).
- A dimension of size 1 broadcasts against a larger size of the same letter (or
  ellipsis position) in another operand: it gets an index of its own, `b0, b1,
  ...`, that is summed (a sum over one coordinate is that coordinate's value).
  Other sizes of one letter must agree.
- Without '->', the output is the ellipsis dimensions, then every letter that
  occurs exactly once in the spec, sorted by character code (upper case first).
  With '->', output letters are distinct and occur in some operand; an output
  without '...' is refused when the operands have ellipsis dimensions.

Each operand becomes the tensor `T<k>`: csr / csc / coo when it is a scipy.sparse
matrix in that layout (csr for scipy's dia, bsr, lil and dok, which runtime.convert
makes csr each call, warned), coo when it is a pydata `sparse` array whose fill value is 0
(any order; the caller reads a 2-d one as scipy's), an `ep.Tensor` keeps its
format, anything else is dense.
A 2-d sparse operand whose layout no loop order could walk together with the
operands before it ('z,mz,zm->' with two csr) is read in the other layout (csr
<-> csc, coo -> csc), which costs one conversion per call.
Operands must be real, complex, integer or bool. Spec errors are `FrontendError`s with a
caret under the offending character; sizes that disagree are `InputError`s.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from . import nodes as ex
from ..errors import ExpressionTypeError, FormatError, InputError
from ..formats import Format
from .lexer import FrontendError, FrontendFormatError
from .nodes import Expr, Index, TensorVar

__all__ = ["Einsum", "einsum_expr", "einsum_parts"]

_SPARSE_FORMATS = {"csr": "csr", "csc": "csc", "coo": "coo", "bsr": "bsr",  # scipy's layouts:
                   "dia": "csr", "lil": "csr", "dok": "csr"}    # as they are, or as csr
ELLIPSIS = "..."

Item = tuple[str, int]   # (a letter or ELLIPSIS, its position in the spec)


@dataclass
class _Operand:
    """One operand: its term, shape and the index name of each dimension."""

    k: int
    term: list[Item]
    start: int
    shape: tuple[int, ...]
    names: list[str]


class Einsum(NamedTuple):
    """A spec over its operands: the expression, its output indices, the operands by
    tensor name ({"T0": operand0, ...}) and each operand's index names in axis
    order (letters; e0, e1, ... for '...' dimensions; b0, b1, ... for size-1
    dimensions that broadcast)."""

    expr: Expr
    out: tuple[Index, ...]
    tensors: dict[str, object]
    names: tuple[tuple[str, ...], ...]
    at: tuple[str, ...] = ()    # the tensor name of each operand, in order (`_product`)


def einsum_expr(spec: str, operands: list) -> tuple[Expr, tuple[Index, ...], dict[str, object]]:
    """Expression, output indices and {"T0": operand0, ...} for a numpy einsum spec.

    The expression is the product T0[...] * T1[...] * ... (left to right) under
    one Σ over the indices not in the output (in order of first appearance, the
    broadcast indices b0, b1, ... last).
    """
    return einsum_parts(spec, operands)[:3]


def einsum_parts(spec: str, operands: list) -> Einsum:
    """`einsum_expr`'s expression, output indices and operands, and each operand's
    index names (see Einsum)."""
    if not isinstance(spec, str):
        raise ExpressionTypeError(f"an einsum spec is a string, got {type(spec).__name__}")
    operands = list(operands)
    arrow = spec.find("->")
    if arrow >= 0 and spec.find("->", arrow + 2) >= 0:
        raise FrontendError("an einsum spec has at most one '->'", spec,
                            spec.find("->", arrow + 2))
    terms, starts = _terms(spec, arrow if arrow >= 0 else len(spec))
    if len(terms) != len(operands):
        raise FrontendError(f"the einsum spec has {len(terms)} operand"
                            f"{'' if len(terms) == 1 else 's'} but {len(operands)} "
                            f"{'was' if len(operands) == 1 else 'were'} given", spec, None)
    for k, x in enumerate(operands):
        _check_dtype(k, x)
    ops = [_operand(spec, k, term, start, x)
           for k, (term, start, x) in enumerate(zip(terms, starts, operands))]
    n_ell = _name_ellipses(ops)
    _broadcast(spec, ops)
    if arrow >= 0:
        out_names = _output_names(spec, arrow, terms, n_ell)
    else:
        counts = Counter(c for term in terms for c, _ in term if c != ELLIPSIS)
        out_names = [f"e{d}" for d in range(n_ell)] + sorted(
            c for c, n in counts.items() if n == 1)
    product, tensors, at = _product(spec, ops, operands)
    order = list(dict.fromkeys(n for op in ops for n in op.names))
    order.sort(key=lambda n: n.startswith("b") and len(n) > 1)     # broadcast last
    summed = tuple(Index(n) for n in order if n not in out_names)
    expr = ex.sum(summed, product) if summed else product
    return Einsum(expr, tuple(Index(c) for c in out_names), tensors,
                  tuple(tuple(op.names) for op in ops), at)


def _terms(spec: str, lhs_end: int) -> tuple[list[list[Item]], list[int]]:
    """The items of each comma-separated term before `lhs_end`, and where each starts."""
    terms: list[list[Item]] = []
    starts: list[int] = []
    start = 0
    while True:
        comma = spec.find(",", start, lhs_end)
        stop = lhs_end if comma < 0 else comma
        terms.append(_items(spec, start, stop))
        starts.append(start)
        if comma < 0:
            return terms, starts
        start = comma + 1


def _items(spec: str, start: int, stop: int) -> list[Item]:
    """Letters and at most one '...' between start and stop; nothing else but spaces."""
    out: list[Item] = []
    pos = start
    while pos < stop:
        c = spec[pos]
        if c == ".":
            if spec[pos:pos + 3] != ELLIPSIS or pos + 3 > stop:
                raise FrontendError("a '.' that is not part of an ellipsis '...'", spec, pos)
            if any(x == ELLIPSIS for x, _ in out):
                raise FrontendError("a term has at most one ellipsis '...'", spec, pos)
            out.append((ELLIPSIS, pos))
            pos += 3
            continue
        if not c.isspace():
            if not ("a" <= c <= "z" or "A" <= c <= "Z"):
                raise FrontendError(f"unknown character {c!r} in einsum spec (subscripts "
                                    f"are letters a-z, A-Z, and '...')", spec, pos)
            out.append((c, pos))
        pos += 1
    return out


def _check_dtype(k: int, x) -> None:
    """Operands are real, complex, integer or bool (numpy kinds f, c, i, u, b)."""
    dtype = getattr(x, "dtype", None)
    if not isinstance(dtype, np.dtype):
        try:
            dtype = np.asarray(x).dtype
        except Exception:       # noqa: BLE001 - any array-like failure means "not numeric"
            dtype = np.dtype(object)
    if dtype.kind not in "fciub":
        raise InputError(f"ep.einsum takes real, complex, integer or bool operands; operand {k} "
                         f"has dtype {dtype}")


def _shape(x) -> tuple[int, ...]:
    shape = getattr(x, "shape", None)
    return tuple(int(n) for n in (np.shape(x) if shape is None else shape))


def _operand(spec: str, k: int, term: list[Item], start: int, x) -> _Operand:
    """The operand's shape checked against its term; ellipsis dimensions unnamed yet."""
    shape = _shape(x)
    letters = [c for c, _ in term if c != ELLIPSIS]
    has_ell = len(letters) < len(term)
    if len(shape) < len(letters) or (not has_ell and len(shape) != len(letters)):
        pos = term[0][1] if term else start
        raise FrontendError(f"operand {k} has {len(shape)} dimensions but the spec gives "
                            f"it {len(letters)} ind{'ex' if len(letters) == 1 else 'ices'}"
                            + (" and '...'" if has_ell else ""), spec, pos)
    names: list[str] = []
    for c, _ in term:
        names += [ELLIPSIS] * (len(shape) - len(letters)) if c == ELLIPSIS else [c]
    return _Operand(k, term, start, shape, names)


def _name_ellipses(ops: list[_Operand]) -> int:
    """Name every operand's ellipsis dimensions e0, e1, ..., right-aligned across
    operands; the number of broadcast ellipsis dimensions."""
    n_ell = max((op.names.count(ELLIPSIS) for op in ops), default=0)
    for op in ops:
        d = op.names.count(ELLIPSIS)
        if d:
            at = op.names.index(ELLIPSIS)
            op.names[at:at + d] = [f"e{n_ell - d + m}" for m in range(d)]
    return n_ell


def _broadcast(spec: str, ops: list[_Operand]) -> None:
    """Check sizes (one per index within an operand; across operands equal or 1)
    and give each size-1 dimension that broadcasts a summed index b0, b1, ...."""
    size: dict[str, int] = {}
    where: dict[str, int] = {}
    for op in ops:
        mine: dict[str, int] = {}
        for name, n in zip(op.names, op.shape):
            if mine.setdefault(name, n) != n:
                raise InputError(f"einsum {spec!r}: operand {op.k} repeats index {name} "
                                 f"(a diagonal) over dimensions of sizes {mine[name]} and {n}")
        for name, n in mine.items():
            if n == 1 or size.get(name, 1) == n:
                size.setdefault(name, n)
                where.setdefault(name, op.k)
            elif size.get(name, 1) == 1:
                size[name], where[name] = n, op.k
            else:
                raise InputError(f"einsum {spec!r}: operands do not broadcast: index "
                                 f"{_shown(name)} has size {size[name]} in operand "
                                 f"{where[name]} but {n} in operand {op.k}")
    dummies = 0
    for op in ops:
        for m, (name, n) in enumerate(zip(op.names, op.shape)):
            if n == 1 and size[name] != 1:
                op.names[m] = f"b{dummies}"
                dummies += 1


def _shown(name: str) -> str:
    return f"'...' dimension {name[1:]}" if len(name) > 1 else name


def _output_names(spec: str, arrow: int, terms: list[list[Item]], n_ell: int) -> list[str]:
    """The index names after '->': distinct letters that occur in some operand, and
    the ellipsis dimensions where '...' stands (required when there are some)."""
    used = {c for term in terms for c, _ in term}
    out: list[str] = []
    items = _items(spec, arrow + 2, len(spec))
    for c, pos in items:
        if c == ELLIPSIS:
            out += [f"e{d}" for d in range(n_ell)]
            continue
        if c in out:
            raise FrontendError(f"output index {c} appears twice", spec, pos)
        if c not in used:
            raise FrontendError(f"output index {c} does not occur in any operand", spec, pos)
        out.append(c)
    if n_ell and not any(c == ELLIPSIS for c, _ in items):
        raise FrontendError(f"the operands have {n_ell} dimension"
                            f"{'' if n_ell == 1 else 's'} under '...' but the output has "
                            f"no '...' to keep them", spec, arrow)
    return out


def _product(spec: str, ops: list[_Operand], operands: list):
    """(T0[...] * T1[...] * ..., the operands by tensor name, each operand's name). A
    sparse operand that is an earlier one's object, read in its layout, is that
    operand's tensor again (`same_sparse`): A[i,j]·A[i,j] is then one walk."""
    tensors: dict[str, object] = {}
    product: Expr | None = None
    formats = _walkable([op.names for op in ops], [_infer_format(x) for x in operands])
    at, made = [], []
    for op, x, fmt in zip(ops, operands, formats):
        k = same_sparse(operands, op.k)
        if k != op.k and formats[k] == fmt:        # an earlier operand's object again
            name, tv = f"T{k}", made[k]
        else:
            name = f"T{op.k}"
            try:
                tv = TensorVar(name, len(op.names), fmt)
            except FormatError as e:
                raise FrontendFormatError(f"operand {op.k} ({e})", spec,
                                          op.term[0][1] if op.term else None) from e
        made.append(tv)
        at.append(name)
        acc = tv[tuple(Index(n) for n in op.names)]
        product = acc if product is None else product * acc
        tensors[name] = x
    if product is None:
        raise FrontendError("einsum needs at least one operand", spec, None)
    return product, tensors, tuple(at)


def same_sparse(operands, k: int) -> int:
    """The first position of operand k's object among the operands when it is a
    sparse array (scipy or pydata, an ep.Tensor) seen before, else k. Part of an
    einsum call's key (runtime.einsum_calls), so that a kernel made for one
    operand read twice is never run on two."""
    x = operands[k]
    for m in range(k):          # (identity first: a call's key pays a loop of `is` only)
        if operands[m] is x:
            sparse = not type(x).__module__.startswith("numpy") and hasattr(x, "format")
            return m if sparse else k
    return k


def _walkable(names: list[list[str]], formats: list) -> list:
    """`formats` with a 2-d sparse operand read in the other layout (csr <-> csc,
    coo -> csc) when its storage order, taken after those of the operands before
    it, would leave no loop order that walks them all (as 'z,mz,zm->' would)."""
    after: dict[str, set[str]] = {}      # index -> the indices some layout puts after it

    def reaches(a, b, seen=()):
        return a == b or any(reaches(c, b, seen + (a,)) for c in after.get(a, ())
                             if c not in seen)

    out = []
    for idx, fmt in zip(names, formats):
        if fmt in _SPARSE_FORMATS and len(set(idx)) == 2:
            first, second = idx if fmt != "csc" else idx[::-1]
            if reaches(second, first):
                fmt = "csr" if fmt == "csc" else "csc"
                first, second = second, first
            after.setdefault(first, set()).add(second)
        out.append(fmt)
    return out


def _infer_format(operand):
    if type(operand).__module__.startswith("scipy"):
        import scipy.sparse   # lazily: scipy.sparse is heavy to import
        if scipy.sparse.issparse(operand):
            return _SPARSE_FORMATS.get(operand.format, "dense")
    if _pydata_zero_fill(operand):      # pydata sparse (2-d ones came as scipy arrays)
        return "coo"
    fmt = getattr(operand, "format", None)
    return fmt if isinstance(fmt, Format) else "dense"


def _pydata_zero_fill(operand) -> bool:
    """A pydata `sparse` array (COO, GCXS, DOK) of at least one axis whose implicit
    entries are 0: read as a coo tensor over its coordinates. Any other fill value
    stays dense (its implicit entries are values), as does a scalar."""
    return (type(operand).__module__.partition(".")[0] == "sparse"
            and len(getattr(operand, "shape", ())) > 0
            and bool(getattr(operand, "fill_value", None) == 0))
