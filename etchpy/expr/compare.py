"""Comparisons as 0/1 factors: `i < j`, `i >= 3`, `A[i] >= t`, ep.between(i, lo, hi).

A comparison is an access of an implicit tensor, a `CompareVar`, that holds the
semiring's one where the comparison holds and nothing (its zero) elsewhere; a
product with it is a filter, correct in every semiring because one is the unit
of ⊗ and zero annihilates. Being a sparse access, it is planned like any other:
a range on an index is a sparse vector intersected with the relation's level
(the intersection gallops to lo and ends with the range), a value comparison
the operand's stored entries that pass. No caller passes it: the runtime binds
it at call time (runtime.predicates), so the kernel's C text does not depend
on a bound given as a parameter name. proofs_notes/predicates.md.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ..errors import ExpressionTypeError, SemiringError
from ..formats import Format
from . import affine, formula, offsets
from .nodes import COMPARE_PREFIX, Access, Comparable, IdentityVar, Index, TensorVar, show

OPS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


@dataclass(frozen=True)
class CompareVar(TensorVar):
    """The implicit 0/1 tensor of a comparison (see the module docstring).

    kind "range" (order 1): the coordinates c with c `op` bound for each (op,
    bound) of `tests`; "codes" (order 1): the coordinates whose test formula
    `tests` (expr.formula, over the operand ("idx",)) holds: ~ and | of ranges;
    "index" (order 2, "dense": either index may be the outer loop, and nothing
    is stored): c0 `op` c1, tests ((op, None),); "value" (the order and format
    of its first column): a row predicate, the entries that every tensor of
    `columns` ((name, format, at), ...) stores, at the same coordinates, where
    the formula `tests` over their values and the coordinates holds (an absent
    entry is no row); a column with `at` None is read at the entry's position
    (the first column's structure), one with `at` a tuple of index positions
    is a dense tensor read at those indices' coordinates (located). A
    bound is a number or the name of a parameter, a number passed at call time.
    A value predicate is read in place: the kernel walks its first column's
    structure and tests each entry in its loop, reading the other columns'
    values and the bounds from its `companions` (kinds "column" and "slots",
    order 1, dense), which the runtime binds (runtime.predicates). `weights`
    (a value predicate made by expr.shared: a product over one structure):
    the columns whose values multiply into its value where `tests` holds
    (none: the semiring's one there). `keyed` ((column name, mode, format),
    ...): of a value predicate, its columns read in an order keyed by their
    value (`KeyedVar`); of a range, the column whose values its bounds are
    (expr.keyed: the codes of that mode where they pass, bound at call time).
    `bins` ((column, n), ...): of a value predicate made by expr.shared from a
    product with onehots over its structure (expr.bins), its last indices, one
    per pair: the bin 0..n-1 that column's value names (n a number or a
    parameter's name; a formats.Bins level each, below its structure's
    levels; no bin, no entry). `terms` (((columns...), (located columns...),
    test, (numbers...), ((p, c)...)), ...): of one made from a sum of products over its
    structure (expr.sums), its value is also ⊗ the ⊕ of its terms, each,
    where its test (a formula as `tests`) holds, the ⊗ of its numbers, its
    columns' values and its located columns' (dense tensors at the
    structure's indices or at its last indices, a dense level each, below its
    bins), and zero where it fails or where index p is not c for one of its
    pins (ep.eq(i, c), expr.sums.pin); a term's slots follow `tests`' and the
    terms before it (`every_test`). `narrow` ((k, dtype, scale, step), ...):
    of a value predicate's one-walk kernel (runtime.shared, Tuning.narrow_compared),
    columns k >= 1 only compared with bounds, read as integers of `dtype`, each
    standing for k / scale, their companions and their bounds packed into the
    value arrays (runtime.narrow; a bound's slot at element slot * step).
    `through` (k, ...): of a value predicate's one-walk kernel whose columns are
    Tensors of different structures (runtime.shared, Tuning.aligned_in_kernel),
    the columns read at `<name>__w<k>`'s positions among their own values
    (`<name>__c0` column 0's), the alignment runtime.align keeps per Tensors,
    read as integers of `through_view` ("int64", or "int32" for 4-byte values)."""

    kind: str = "range"
    tests: tuple = ()
    source: str = ""
    other: str = ""
    columns: tuple = ()
    weights: tuple = ()
    keyed: tuple = ()
    bins: tuple = ()
    terms: tuple = ()
    narrow: tuple = ()
    through: tuple = ()
    through_view: str = "int64"

    def __post_init__(self):   # its reserved name is made here, never by a user
        object.__setattr__(self, "format", Format.parse(self.format, self.order))

    @property
    def params(self) -> tuple[str, ...]:
        """The names of the parameters its bounds read at call time."""
        if self.kind in ("value", "codes"):
            return (*formula.params(self.every_test),
                    *(n for _, n in self.bins if isinstance(n, str)))
        return tuple(dict.fromkeys(n for _, b in self.tests for n in (
            (b,) if isinstance(b, str) else formula.bound_params(b) if isinstance(b, tuple)
            else ())))

    @property
    def every_test(self):
        """Its tests and then each term's, joined (the order of their slots:
        expr.formula.slots); only that order is meant, not their AND."""
        out = self.tests
        for t in self.terms:
            out = ("and", out, t[2])
        return out

    @property
    def companions(self) -> tuple["CompareVar", ...]:
        """The implicit inputs a value predicate reads besides its structure: the
        values of each further column (aligned with the first's entries) and
        its bounds (one slot each: expr.formula.slots)."""
        if self.kind != "value":
            return ()
        out = [CompareVar(f"{self.name}__c{k}", 1, "dense", kind="column", source=name)
               for k, (name, _, _) in enumerate(self.columns) if k or k in self.through]
        out += [CompareVar(f"{self.name}__w{k}", 1, "dense", kind="positions")
                for k in self.through]
        if formula.slots(self.every_test):
            out.append(CompareVar(f"{self.name}__p", 1, "dense", kind="slots"))
        return tuple(out)


@dataclass(frozen=True, repr=False)
class KeyedVar(TensorVar):
    """A value column read in an order keyed by its value (relational.by_value,
    `Table.var` of such an order's value): at every stored entry its value is
    V[c], c the entry's coordinate at mode `by` (the first storage level), V
    nondecreasing. A comparison of it with bounds is then a range of that
    mode's codes (expr.keyed), worked out at call time from the tensor passed
    (runtime.keyed, which checks that it is so keyed)."""

    by: int = 0


def keyed_of(*accessed) -> tuple:
    """The `keyed` entries of a value predicate over the accesses `accessed`."""
    return tuple(sorted({(a.tensor.name, a.tensor.by, a.tensor.format) for a in accessed
                         if isinstance(a.tensor, KeyedVar)}, key=lambda k: k[:2]))


@dataclass(frozen=True, repr=False)
class Predicate(Access):
    """An access of a CompareVar as built. Python's chained `lo <= i < hi` asks
    the truth of `lo <= i` and then drops it, so a truth value is an error.
    `&` (or `*`) is AND, `|` OR and `~` NOT, with SQL's meaning over rows
    (expr.logic)."""

    def __bool__(self):
        raise ExpressionTypeError(f"{show(self)} has no truth value: for lo <= i < hi "
                                  f"write ep.between(i, lo, hi) or (i >= lo) * (i < hi); "
                                  f"for and, or, not write &, |, ~")


def stores_nothing(tv) -> bool:
    """Is `tv` an index comparison (i < j) or a diagonal's δ (i = i', expr.diagonal),
    whose value is computed from the coordinates, so that no array of it reaches a
    kernel?"""
    return isinstance(tv, CompareVar) and tv.kind == "index" or type(tv) is IdentityVar


def values_as_stored(tv) -> bool:
    """Are `tv`'s values its array's, as stored (not an index comparison nor a
    diagonal's δ, which store nothing, nor a value predicate, whose values its
    kernel tests)?"""
    return not (stores_nothing(tv) or isinstance(tv, CompareVar) and tv.kind == "value")


def token(bound) -> str:
    """A bound as part of an identifier: p_<name> for a parameter, else the number
    (- as n, . as d)."""
    if isinstance(bound, str):
        if not bound.isidentifier():
            raise ExpressionTypeError(f"a comparison's bound is a number or a parameter "
                                      f"name (an identifier), got {bound!r}")
        return f"p_{bound}"
    if isinstance(bound, (bool, np.bool_)) or not isinstance(bound, (numbers.Real, np.number)):
        raise ExpressionTypeError(f"a comparison's bound is a number or a parameter "
                                  f"name, got {bound!r}")
    b = float(bound)
    if not np.isfinite(b):
        raise ExpressionTypeError(f"a comparison's bound must be finite, got {bound!r}")
    text = repr(int(b)) if b == int(b) else repr(b)
    return text.replace("-", "n").replace(".", "d").replace("+", "")


def compare(a, op: str, b) -> Access:
    """`a op b` (op one of < <= > >=) as a 0/1 factor: two indices, an index and a
    bound, a tensor access and a bound (a number or a parameter name), two
    tensor accesses at the same indices (A[i] < B[i]: where both store entries),
    or a tensor access and one of its indices (A[i, j] < j: each value against
    its coordinate, a code). A tensor access may be scaled and offset by
    numbers or parameters (`A[i] < 0.5 * B[i]`, `B[i] + 1 < A[i]`, `2 * A[i] >=
    t`, `A[i] > 0.5 * B[i] + "t"`, `A[i, j] + 2 < j`: expr.affine): a·value +
    b in ordinary arithmetic (not the semiring's ⊗ and ⊕); the offsets are
    moved to the right side, a·x op c·y + (d - b) (exact for integers).

        >>> i, j = ep.indices("i j")
        >>> i < j
        cmp_i_lt_j[i,j]
    """
    sa, sb = affine.affine(a), affine.affine(b)
    if sa is None or sb is None or sa[0] is None and sb[0] is None:
        raise ExpressionTypeError(f"cannot compare {a!r} {op} {b!r}: compare two indices, an "
                                  f"index with a bound, a tensor access with a bound, or two "
                                  f"tensor accesses with the same indices (or one at some "
                                  f"of the other's, dense), each access maybe times a number "
                                  f"or a parameter, plus one")
    if sa[0] is None or isinstance(sb[0], Index) and not isinstance(sa[0], Index):
        (a, b), (sa, sb), op = (b, a), (sb, sa), formula.FLIPPED[op]
    x, y = sa[0], sb[0]
    if isinstance(x, Index):     # (never scaled; offset by integers: expr.offsets)
        d = sb[2] + affine.Lin.of(-1).times(sa[2])     # x op y + d
        if isinstance(y, Index):
            return index_pair(x, op, y, d.number)
        if y is None:
            return between(x, tests=((op, _raw(d, b)),))
        return _index_value(y, formula.FLIPPED[op], x, sb[1], d)
    if not _plain(x) or y is not None and not isinstance(y, Index) and not _plain(y):
        raise ExpressionTypeError(f"cannot compare {a!r} {op} {b!r}: a comparison's tensor "
                                  f"accesses are of inputs (not of a comparison)")
    d = sb[2] + affine.Lin.of(-1).times(sa[2])         # the offsets moved to the right
    if y is not None:
        return _pair(x, op, y, sa[1], sb[1], d)
    return row_predicate(((x.tensor.name, x.tensor.format, None),),
                         ("cmp", op, column(0, sa[1]), affine.operand(d)), x.indices,
                         keyed_of(x))


def index_pair(x: Index, op: str, y: Index, d: int):
    """x op y + d (op one of < <= > >= ==) as an index comparison (kind "index")."""
    if x == y:
        raise ExpressionTypeError(f"{x} {op} {y}{'' if not d else f' + {d}'} compares an "
                                  f"index with itself")
    d = offsets.checked(d, f"{x} {op} {y} + {d}")
    if op == "==" and d == 0:
        raise ExpressionTypeError(f"ep.eq({x}, {y}) of two indices: write one index for "
                                  f"both (A[i, i] is a diagonal)")
    word = f"{COMPARE_PREFIX}{x}_{OPS.get(op, 'eq')}_{y}" + (f"_plus_{token(d)}" if d else "")
    var = CompareVar(word, 2, "dense", kind="index", tests=((op, d if d else None),))
    return Predicate(var, (x, y))


def _raw(lin, b):
    """A bound Lin as a number or a parameter's name (what ranges take)."""
    got = affine.operand(lin)
    if got[0] == "lin":
        raise ExpressionTypeError(f"an index's bound is a number or a parameter's name, got "
                                  f"{b!r}: give the sum as one parameter")
    return got[1]


def column(k: int, scale=1, offset=affine.ZERO) -> tuple:
    """The formula operand of column k (or ("idx", k) when k is a tuple: that
    operand), times `scale` (a number or a Lin), plus `offset` (a Lin)."""
    x = k if isinstance(k, tuple) else ("col", k)
    if isinstance(scale, affine.Lin):
        scale = scale.number if scale.number is not None else affine.operand(scale)
    if isinstance(scale, tuple) or scale != 1:
        x = ("scaled", x, scale if isinstance(scale, tuple) else
             int(scale) if isinstance(scale, numbers.Integral) else float(scale))
    return x if offset == affine.ZERO else ("plus", x, affine.operand(offset))


def operand(b) -> tuple:
    """A bound as a formula operand: ("par", name) or ("num", x)."""
    if isinstance(b, str):
        return ("par", b)
    return ("num", int(b) if isinstance(b, numbers.Integral) else float(b))


def _bound_word(b) -> str:
    return token(b)


def _plain(a) -> bool:
    return type(a) is Access and not isinstance(a.tensor, (CompareVar, IdentityVar))


def _pair(a: Access, op: str, b: Access, ca=1, cb=1, d=affine.ZERO) -> Access:
    """ca·A[idx] op cb·B[idx] + d: the entries both store where it holds.
    A[idx] op B[sub] (sub some of idx, B row-major dense), either side: A's
    entries where A's value op B's value at the entry's coordinates of sub
    (B located, as a row test reads a dense column: a correlated subquery's
    per-group value). ca, cb: scales, d: an offset (Lins or numbers: `compare`)."""
    if a.indices != b.indices and (_located(a, b) or _located(b, a)):
        s, t, o, cs, ct, d = (a, b, op, ca, cb, d) if _located(a, b) else \
            (b, a, formula.FLIPPED[op], cb, ca, affine.Lin.of(-1).times(d))
        pos = tuple(s.indices.index(ix) for ix in t.indices)
        cols = ((s.tensor.name, s.tensor.format, None), (t.tensor.name, t.tensor.format, pos))
        return row_predicate(cols, ("cmp", o, column(0, cs), column(1, ct, d)), s.indices,
                             keyed_of(s))
    if a.indices != b.indices or a.tensor.order != b.tensor.order:
        raise ExpressionTypeError(f"{show(a)} {op} {show(b)}: two tensor accesses are "
                                  f"compared at the same indices, in the same order")
    if a.tensor.name == b.tensor.name:
        raise ExpressionTypeError(f"{show(a)} {op} {show(b)} compares a tensor with itself")
    cols = ((a.tensor.name, a.tensor.format, None), (b.tensor.name, b.tensor.format, None))
    return row_predicate(cols, ("cmp", op, column(0, ca), column(1, cb, d)), a.indices,
                         keyed_of(a, b))


def _located(s: Access, t: Access) -> bool:
    """t can be read at s's entries: its indices are distinct, some of s's, and it
    is row-major dense."""
    return (len(set(t.indices)) == len(t.indices) and set(t.indices) < set(s.indices)
            and t.tensor.format.is_row_major_dense and s.tensor.name != t.tensor.name)


def _index_value(a: Access, op: str, i: Index, scale=1, offset=affine.ZERO) -> Predicate:
    """scale·A[idx] + offset op i, i one of idx: each entry's value against its
    coordinate (a code) at i (the offset moved to the coordinate's side)."""
    if i not in a.indices:
        raise ExpressionTypeError(f"{show(a)} {op} {i}: an index is compared with the "
                                  f"values of a tensor accessed at it; {i} is not among "
                                  f"{', '.join(ix.name for ix in a.indices)}")
    f = ("cmp", op, column(0, scale), column(("idx", a.indices.index(i)), 1,
                                              affine.Lin.of(-1).times(offset)))
    return row_predicate(((a.tensor.name, a.tensor.format, None),), f, a.indices,
                         keyed_of(a))


def row_predicate(columns: tuple, f, indices, keyed: tuple = ()) -> Predicate:
    """The value predicate of formula `f` (expr.formula) over `columns` ((name,
    format, at), ...: the first gives the structure), accessed at `indices`;
    `keyed`, the columns among them keyed by their value (CompareVar)."""
    names = [c[0] for c in columns]
    var = CompareVar(f"{COMPARE_PREFIX}{formula.token(f, names, _bound_word)}", len(indices),
                     columns[0][1], kind="value", tests=f, source=names[0],
                     columns=tuple(columns), keyed=tuple(keyed))
    return Predicate(var, tuple(indices))


def code_predicate(i: Index, f) -> Predicate:
    """The codes of index i where formula `f` over ("idx",) holds: a sparse
    vector of codes bound at call time (runtime.predicates)."""
    word = formula.token(f, [], _bound_word)
    var = CompareVar(f"{COMPARE_PREFIX}{i}_{word}", 1, Format(["compressed"]), kind="codes",
                     tests=f)
    return Predicate(var, (i,))


def between(i: Index, lo=None, hi=None, *, tests: tuple = ()) -> Access:
    """The 0/1 factor of lo <= i < hi over the index i (a None bound is open;
    each bound a number or the name of a parameter passed at call time);
    `tests` adds (op, bound) pairs (how `i >= b` and `i < b` are built).
    Python's chained `lo <= i < hi` cannot build it: write ep.between(i, lo, hi).

        >>> (i,) = ep.indices("i")
        >>> ep.between(i, 3, "hi")
        cmp_i_ge_3_lt_p_hi[i]
    """
    if not isinstance(i, Index):
        raise ExpressionTypeError(f"ep.between takes an index, got {i!r}")
    tests = tuple(tests) + tuple(t for t in ((">=", lo), ("<", hi)) if t[1] is not None)
    if not tests:
        raise ExpressionTypeError(f"ep.between({i}): give lo, hi or both")
    words = [f"{OPS[o]}_{token(b)}" for o, b in tests]
    var = CompareVar("_".join([f"{COMPARE_PREFIX}{i}"] + words), 1, Format(["compressed"]),
                     kind="range", tests=tests)
    return Predicate(var, (i,))


Comparable.build = staticmethod(compare)


def refuse_unordered(accessed, sr) -> None:
    """SemiringError when semiring `sr` has a complex carrier and one of the
    accesses `accessed` is a comparison of values (`A[i] >= t`): complex numbers
    have no order (proofs_notes/complex.md); and when a comparison scales a
    value by a number its carrier does not hold (a fraction of an integer), or
    scales or offsets a boolean."""
    kind = np.dtype(sr.dtype).kind
    for acc in accessed:
        if not (isinstance(acc.tensor, CompareVar) and acc.tensor.kind == "value"):
            continue
        if kind == "c" and acc.tensor.tests != formula.TRUE:
            raise SemiringError(f"{show(acc)} compares values, and the values of "
                                f"semiring {sr.name} are complex numbers, which have no "
                                f"order; compare indices, or a real input")
        for n in formula.walk(acc.tensor.tests):
            for x in _arith(n[2:]) if n[0] == "cmp" else ():
                c = x[2] if x[0] == "scaled" and not isinstance(x[2], tuple) else 1
                if kind == "b" or kind in "iu" and c != int(c):
                    what = f"scales a value by {c}" if c != 1 else "scales or offsets a value"
                    raise SemiringError(f"{show(acc)} {what}, which the values of semiring "
                                        f"{sr.name} ({sr.dtype}) cannot hold; compare "
                                        f"values as they are, or use a semiring over floats")


def _arith(operands):
    """The scaled and plus operands among `operands`, and those inside them."""
    for x in operands:
        if x[0] in ("scaled", "plus"):
            yield x
            yield from _arith((x[1],))
