"""An einsum of two dense operands that is one matrix product, run by numpy's matmul.

    recipe(names, out, shapes) -> Matmul | None
    Matmul.direct(ndims) -> numpy's product itself where nothing surrounds it, else
                            the Matmul

Each index of a two-operand product is a batch index (in both operands and the
output), a contracted one (in both, not in the output) or a free one (in one
operand and the output). The product is one `numpy.matmul` (BLAS's gemm or gemv
for float64 and float32) when

- some index is contracted, no index is summed within one operand,
- no operand repeats an index (a diagonal) or broadcasts a size-1 dimension
  (einsum's names b0, b1, ...),
- the output is the batch indices, then one operand's free indices, then the
  other's (the operands are swapped when the second's come first),
- a product where one side has no free index (matrix times vector) needs no
  copy: merging axes that are apart in an operand (`ijk,j->ik`'s i and k, `ijk,ik->j`'s
  i and k) copies it, which reads and writes it whole before a product that reads it
  once; the compiled kernel walks it in place,
- the product has a free index: one without (a batch of dot products, `ij,ij->i`,
  `ij,ij->j`) runs the compiled kernel, whose one row-order walk beats matmul's
  batch of 1×k by k×1 products and its strided columns where the batch trails
  (docs/performance.md, session 93).

A matrix times a tensor along a middle mode (`ijk,jl->ilk`: the output is the
tensor's free axes with the matrix's one before the last) is matmul of the matrix,
turned to (free, contracted) by a transpose view, by the tensor as it lies, whose
leading free axes matmul broadcasts (`_between`).

A left operand (free..., contracted) of several free axes times a right matrix
(contracted, free) or vector, both as they are, is `numpy.matmul` of the two as
given: matmul broadcasts the left's leading free axes as a batch of small
products (`a @ b` as a numpy user writes it), which OpenBLAS runs faster than the
one tall product of the merged axes where the small ones fit its small-matrix
kernels (docs/performance.md, "Other forms a user writes", session 91).
Otherwise each operand is transposed to (batch, free, contracted), respectively
(batch, contracted, free), each group's indices merged into one axis (a reshape:
a view when the strides allow it, else a copy), and the product reshaped to the
output's shape: a fresh C-contiguous array, or a numpy scalar for no output
index, as a compiled kernel returns. An operand without free indices and no
batch stays a vector (matmul's matrix-vector and dot forms). A recipe is made
for fixed shapes; the caller keys it by them.

A product with a vector side over an operand of more than two axes runs as
matmul only where both operands are C-contiguous (`InOrder`): otherwise its reshape
copies an operand the product reads once, and the compiled kernel, reading it in
place, runs instead.

A product of at most two axes each with nothing around it is `ndarray.dot`
(numpy's matmul there, dispatched for less) through `Dot`, which turns to
`numpy.matmul` for a matrix operand that is neither C- nor F-contiguous (a
strided view) of more than `Tuning.strided_copy_bytes`: ndarray.dot copies such
an operand before BLAS, while matmul passes BLAS its leading dimension (a unit
stride), or reads it once in its own strided loop; past that size the copy costs
more than it saves (below it, the copy is cheap and dot's dispatch cheaper). `Cast` runs a
product of operands of other dtypes after casting each to the carrier, as numpy's
matmul does for mixed dtypes (`Tuning.blas_casts`).
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np

__all__ = ["Cast", "Dot", "InOrder", "Matmul", "dot", "recipe"]


class Matmul:
    """matmul(left, right) of two operands prepared by transposes and reshapes
    (each None when not needed); `swap`: the second operand is the left one;
    `vector`: one side has no free index (a matrix-vector product or a dot)."""

    __slots__ = ("swap", "perm_l", "shape_l", "perm_r", "shape_r", "shape_out", "vector")

    def __init__(self, swap, perm_l, shape_l, perm_r, shape_r, shape_out, vector=False):
        self.swap = swap
        self.perm_l, self.shape_l = perm_l, shape_l
        self.perm_r, self.shape_r = perm_r, shape_r
        self.shape_out, self.vector = shape_out, vector

    def __call__(self, a, b):
        if self.swap:
            a, b = b, a
        if self.perm_l is not None:
            a = a.transpose(self.perm_l)
        if self.shape_l is not None:
            a = a.reshape(self.shape_l)
        if self.perm_r is not None:
            b = b.transpose(self.perm_r)
        if self.shape_r is not None:
            b = b.reshape(self.shape_r)
        c = np.matmul(a, b)
        return c if self.shape_out is None else c.reshape(self.shape_out)

    def direct(self, ndims=(3, 3), limit: int = 1 << 20):
        """numpy's product itself when it needs no transpose, reshape or swap (a
        call then costs numpy's dispatch alone), else this Matmul. `ndims`: the
        operands' numbers of axes. With none above 2 that is a `Dot` (`limit`):
        `ndarray.dot`, which is matmul there (the same BLAS gemm or gemv, the same
        result types) and is dispatched without the ufunc machinery (about 0.25 µs
        less), but for strided operands (see the module docstring); else
        `numpy.matmul`."""
        plain = (self.perm_l, self.shape_l, self.perm_r, self.shape_r, self.shape_out)
        if self.swap or plain != (None,) * 5:
            return self
        return Dot(dot, limit) if max(ndims) <= 2 else np.matmul


class Dot(partial):
    """`Dot(dot, limit)(a, b)` is `dot(limit, a, b)` (a partial, called without a
    Python frame of its own): ndarray.dot or, for strided matrix operands, matmul."""

    __slots__ = ()

    @property
    def limit(self) -> int:
        return self.args[0]


def dot(limit: int, a, b):
    """a·b of two numpy operands of at most two axes each: `numpy.matmul` when a
    matrix operand of more than `limit` bytes is neither C- nor F-contiguous (see
    the module docstring) and both are of one dtype (matmul casts a strided operand
    slowly; dot's cast is its copy), else `ndarray.dot`. Both compute numpy's
    matmul of a and b."""
    if a.dtype == b.dtype and ((a.nbytes > limit and a.ndim == 2 and not a.flags.forc)
                               or (b.nbytes > limit and b.ndim == 2 and not b.flags.forc)):
        return np.matmul(a, b)
    return np.ndarray.dot(a, b)


class Cast:
    """`product(a', b')` of the operands cast to `dtype` (a no-op for an operand of
    that dtype), a product of operands of other dtypes as numpy's matmul runs it."""

    __slots__ = ("dtype", "product")

    def __init__(self, dtype, product):
        self.dtype, self.product = dtype, product

    def __call__(self, a, b):
        dt = self.dtype
        if a.dtype != dt:
            a = a.astype(dt)
        if b.dtype != dt:
            b = b.astype(dt)
        return self.product(a, b)


class InOrder:
    """`product(a, b)` where both operands are C-contiguous, else `kernel()(a, b)`
    (the compiled kernel, made on first need, reads them in place): the product of
    a Matmul that reshapes an operand of more than two axes, where one side has no
    free index. A reshape copies an operand in another order (Fortran order, a
    transposed or strided view), and such a product reads each operand once, so
    the copy costs about as much again (a product of free indices on both sides
    reads its operands many times and keeps the copy)."""

    __slots__ = ("product", "kernel", "made")

    def __init__(self, product, kernel):
        self.product, self.kernel, self.made = product, kernel, None

    def __call__(self, a, b):
        if a.flags.c_contiguous and b.flags.c_contiguous:
            return self.product(a, b)
        if self.made is None:
            self.made = self.kernel()
        return self.made(a, b)


def recipe(names, out, shapes) -> Matmul | None:
    """The Matmul computing einsum over two operands with index names `names`
    (one tuple per operand, axis order), output index names `out` and operand
    shapes `shapes`; None when the product is not one matmul (see the module
    docstring)."""
    if len(names) != 2 or any(_unfit(n) for n in names):
        return None
    n0, n1 = names
    both = set(n0) & set(n1)
    out = list(out)
    if (set(n0) | set(n1)) - both - set(out):
        return None                              # summed within one operand
    batch = [c for c in out if c in both]
    contracted = [c for c in n0 if c in both and c not in out]
    free = [[c for c in out if c in n and c not in both] for n in (n0, n1)]
    if not contracted or out[:len(batch)] != batch:
        return None
    rest = out[len(batch):]
    if rest == free[0] + free[1]:
        swap = False
    elif rest == free[1] + free[0]:
        swap = True
    else:
        return None if batch else _between(names, shapes, out, contracted, free)
    if batch and not free[0] and not free[1]:
        return None                 # a batch of dot products: the kernel's walk
    size = {c: n for nm, sh in zip(names, shapes) for c, n in zip(nm, sh)}
    left, right = (1, 0) if swap else (0, 1)
    fl, fr = free[left], free[right]
    if (not fl or not fr) and (_merged_apart(names[left], (fl, contracted), size)
                               or _merged_apart(names[right], (contracted, fr), size)):
        return None                 # a matrix-vector product of a copied operand
    k = math.prod(size[c] for c in contracted)
    perm_l, shape_l = _prepared(names[left], shapes[left], batch + fl + contracted,
                                [size[c] for c in batch], math.prod(size[c] for c in fl), k,
                                vector=not batch and not fl, free_first=True)
    perm_r, shape_r = _prepared(names[right], shapes[right], batch + contracted + fr,
                                [size[c] for c in batch], math.prod(size[c] for c in fr), k,
                                vector=not batch and not fr, free_first=False)
    if (not batch and len(fl) > 1 and len(fr) <= 1 and len(contracted) == 1 and perm_l is None
            and perm_r is None and shape_r is None):
        return Matmul(swap, None, None, None, None, None, not fr)  # matmul broadcasts fl[:-1]
    made = _product_shape(batch, fl, fr, size)
    want = tuple(size[c] for c in out)
    return Matmul(swap, perm_l, shape_l, perm_r, shape_r, None if made == want else want,
                  not fl or not fr)


def _between(names, shapes, out, contracted, free) -> Matmul | None:
    """A matrix's free index between a tensor's (`ijk,jl->ilk`, `ijkl,jm->imkl`: a
    product along a middle mode): matmul of the matrix, turned to (free,
    contracted), by the tensor as it lies, (lead..., contracted, trail...), its
    trailing axes merged (a view) and its leading ones broadcast as a batch; None
    for any other form."""
    for m, t in ((0, 1), (1, 0)):
        fm, ft = free[m], free[t]
        if len(fm) != 1 or len(contracted) != 1 or sorted(names[m]) != sorted(fm + contracted):
            continue
        for p in range(1, len(ft)):
            lead, trail = ft[:p], ft[p:]
            if out != lead + fm + trail or list(names[t]) != lead + contracted + trail:
                continue
            perm = None if list(names[m]) == fm + contracted else (1, 0)
            sizes = shapes[t]
            if len(trail) == 1:
                return Matmul(m == 1, perm, None, None, None, None)
            rows = tuple(sizes[:p + 1]) + (math.prod(sizes[p + 1:]),)
            want = (*sizes[:p], shapes[m][names[m].index(fm[0])], *sizes[p + 1:])
            return Matmul(m == 1, perm, None, None, rows, want)
    return None


def _unfit(names) -> bool:
    """A repeated index (a diagonal) or a broadcast size-1 dimension (b0, b1, ...)."""
    return len(set(names)) != len(names) or any(
        len(c) > 1 and c[0] == "b" for c in names)


def _prepared(names, shape, order, batch_sizes, free, k, vector, free_first):
    """(transpose or None, reshape or None) taking an operand to (batch..., free, k)
    (`free_first`) or (batch..., k, free), or to the vector (k,) when `vector`."""
    perm = tuple(names.index(c) for c in order)
    moved = tuple(shape[p] for p in perm)
    if vector:
        target = (k,)
    else:
        target = (*batch_sizes, free, k) if free_first else (*batch_sizes, k, free)
    return (None if perm == tuple(range(len(perm))) else perm,
            None if moved == target else target)


def _merged_apart(names, groups, size) -> bool:
    """Whether merging a group of `names`' axes into one (the reshape after the
    transpose) copies a C-contiguous operand: the group's axes of more than one
    element are not consecutive, in order, in `names`."""
    for group in groups:
        at = [names.index(c) for c in group if size[c] > 1]
        if at and at != list(range(at[0], at[0] + len(at))):
            return True
    return False


def _product_shape(batch, fl, fr, size) -> tuple:
    """The shape matmul gives: a vector side contributes no axis."""
    if not batch:
        return tuple(math.prod(size[c] for c in f) for f in (fl, fr) if f)
    return (*(size[c] for c in batch), math.prod(size[c] for c in fl),
            math.prod(size[c] for c in fr))
