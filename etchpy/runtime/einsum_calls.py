"""ep.einsum's calls, prepared once per spec, options and operand signature.

    einsum_key(spec, operands, semiring, output, backend, tuning) -> key or None
    plain_key(spec, operands)     the same for the default options
    Calls()                       {key: prepared call}, at most `limit` entries
    matmul_call(parts, operands, semiring, output, tuning) -> Matmul, numpy.matmul or None
    numpy_call(spec, parts, operands, semiring, output, tuning) -> callable or None
    KernelCall(make, names)       kern(T0=op0, T1=op1, ...) of the kernel make() returns

A call of `ep.einsum` looks its key up once: the spec, the options and, per
operand, its type, dtype, shape (and an ep.Tensor's format). Everything the
front end derives from a spec (index names, ellipsis and size-1 broadcasting,
diagonals, the sizes that must agree, the formats, the semiring inferred from
the dtypes) depends on nothing else, so a hit skips parsing, checking and
finding the kernel. Only numpy arrays (exactly `numpy.ndarray`), scipy.sparse
arrays and matrices, pydata sparse arrays (with their layout and whether their
fill value is 0) and ep.Tensors are keyed; any other operand (python-graphblas,
lists, numpy subclasses) and any backend but "c" take the full path on every
call. Options are keyed by value when None or a string,
else by identity (a Semiring, a Tuning, a Format), the entry holding them so
that their ids stay theirs; a tuning given as a dict is not keyed.

A dense product that is one matrix product (runtime.matmul) of two numpy float64
(float32, complex128, complex64) operands in the real (real32, complex,
complex64) semiring, with a dense output and
`Tuning.blas` on, runs as numpy's matmul: BLAS with numpy's own dispatch and
nothing around it but the transposes and reshapes (with none, `ndarray.dot` for
operands of at most 2 axes, which is matmul there, or matmul for strided ones:
runtime.matmul). Operands of other dtypes that numpy casts safely to the
semiring's carrier (an int64 or float32 operand of a float64 product: the real
semiring the dtypes give) run so too (`Tuning.blas_casts`): `ndarray.dot` casts
them to its result type, the carrier, itself; elsewhere (a product with transposes
or batches, as numpy's matmul casts a transposed operand slowly; float16 operands,
whose semiring is real32; a semiring given) `matmul.Cast` casts them first. With the
default options a call on two numpy operands is keyed in a few steps
(`plain_key`) and looked up in one. One numpy operand under the
default semiring (None: the one its dtype gives, when that computes in the
operand's own dtype: float64, float32, complex, int64, bool) with a dense output
and `Tuning.numpy_einsum` on is numpy's einsum itself: a transpose is
`a.transpose(perm)`, anything else (sums over axes, traces, diagonals)
`np.einsum(spec, a)`. numpy's answer is the spec, its views included: as with
np.einsum, a transpose or a diagonal is a view of the operand (writing to it
writes the operand), and numpy's SIMD pairwise sums beat a kernel's scalar
loop. Everything else runs its compiled kernel, which ETCHPY_NUM_THREADS, read
on each call, selects as ep.compile would.
"""
from __future__ import annotations

from functools import partial
from operator import methodcaller

import numpy as np

from . import build, fixed_calls, foreign, matmul
from .call_plans import MISS
from .inputs import is_scipy_sparse
from .tensor import Tensor
from .. import tuning as tuning_
from ..expr.einsum import same_sparse
from ..semiring import Semiring, semirings

__all__ = ["Calls", "KernelCall", "default_output", "einsum_key", "matmul_call", "numpy_call",
           "plain_key"]

THREADS_VARIABLE = "ETCHPY_NUM_THREADS"


def einsum_key(spec, operands, semiring, output, backend, tuning):
    """The key of one ep.einsum call (see the module docstring), or None when it is
    not keyed. With the default options it holds the spec and the operands only
    (an option's slot never holds a tuple, so the two kinds of key never meet); a
    numpy operand adds its dtype and shape, any other one a tuple led by its type
    (a Python or numpy scalar: its type alone, its value read on each call)."""
    if backend != "c" or type(spec) is not str:
        return None
    if semiring is None and tuning is None and output is None:
        return plain_key(spec, operands)
    if isinstance(tuning, dict):
        return None
    return _with_operands([spec, _option(semiring), _option(output), _option(tuning)],
                          operands)


def plain_key(spec, operands):
    """`einsum_key` with the default options (the caller checked them), in few
    steps for two numpy operands."""
    if len(operands) == 2:
        a, b = operands
        if type(a) is np.ndarray and type(b) is np.ndarray and type(spec) is str:
            return (spec, a.dtype, a.shape, b.dtype, b.shape)
    if type(spec) is not str:
        return None
    return _with_operands([spec], operands)


_SCALARS = (float, int, complex, bool)     # Python scalars (np.generic: by isinstance)


def _with_operands(key: list, operands):
    """key and each operand's kind, dtype and shape; a sparse one's also the first
    position of its object (expr.einsum.same_sparse: read twice, one tensor)."""
    for k, x in enumerate(operands):
        kind = type(x)
        if kind is np.ndarray:
            key += (x.dtype, x.shape)
        elif kind is Tensor:
            key.append((kind, x.format, x.dtype, x.shape, same_sparse(operands, k)))
        elif kind.__module__.startswith("scipy.sparse") and hasattr(x, "format"):
            key.append((kind, x.dtype, x.shape, same_sparse(operands, k)))
        elif kind in _SCALARS or isinstance(x, np.generic):    # its type: its dtype
            key.append((kind,))
        elif kind.__module__.startswith("sparse.") and hasattr(x, "fill_value"):   # pydata:
            key.append((kind, x.dtype, x.shape, getattr(x, "compressed_axes", None),  # its
                        bool(x.fill_value == 0), same_sparse(operands, k)))   # layout, fill
        else:
            return None
    return tuple(key)


def default_output(parts) -> str:
    """ep.einsum's output where none is given: "csr" for a result with two indices
    when every operand is sparse (a scipy.sparse array or matrix, a pydata sparse
    array whose fill value is 0, or an ep.Tensor with a level that is not dense),
    as scipy's product of two sparse matrices is,
    or when a sparse operand holds exactly the result's indices (the result is
    zero wherever it is: `A.multiply(d)`, a row or column scaling, SDDMM's
    `ij,ik,jk->ij`); else "dense" (`A @ X` with X dense, and a vector or scalar
    out of sparse operands, as scipy's `A @ x` and `A.sum(axis=1)` are dense).

        >>> import scipy.sparse as sp
        >>> from etchpy.expr.einsum import einsum_parts
        >>> A, X = sp.eye_array(3, format="csr"), np.ones((3, 3))
        >>> [default_output(einsum_parts(s, ops)) for s, ops in [("ij,jk->ik", [A, A]),
        ...     ("ij,j->ij", [A, X[0]]), ("ij,jk->ik", [A, X]), ("ij,j->i", [A, X[0]])]]
        ['csr', 'csr', 'dense', 'dense']
    """
    if len(parts.out) != 2 or not parts.at:
        return "dense"
    out = {ix.name for ix in parts.out}
    sparse = [_sparse(parts.tensors[t]) for t in parts.at]
    if all(sparse) or any(s and set(n) == out for s, n in zip(sparse, parts.names)):
        return "csr"
    return "dense"


def _sparse(x) -> bool:
    """A scipy.sparse operand, a pydata one whose fill value is 0, or an ep.Tensor
    with a level that is not dense."""
    if type(x) is Tensor:
        return not x.format.is_dense
    if foreign.kind(x) == "pydata":
        return bool(x.fill_value == 0)
    return is_scipy_sparse(x) and hasattr(x, "format")


def _option(value):
    return value if value is None or type(value) is str else id(value)


class Calls:
    """Prepared calls by key: `get(key)` (None for no entry or key None),
    `calls.get(key)` the same in one lookup, and `put(key, call, *held)`; `held`
    are the option objects keyed by identity, kept alive with the entry. At most
    `limit` entries: a full table is emptied before it takes another.
    `dots`: the `matmul.Dot` by (spec, dtypes, numbers of axes) of two numpy
    operands under the default options, put with `dot_key`: a plain product of
    at most two axes each is that call whatever the sizes (numpy raises
    ValueError for sizes that disagree; the caller then takes the full path).
    The caller calls `ndarray.dot` itself on contiguous operands."""

    def __init__(self, limit: int = 256):
        self.limit = limit
        self.calls: dict = {}
        self.dots: dict = {}
        self._held: dict = {}

    def get(self, key):
        return self.calls.get(key) if key is not None else None

    def put(self, key, call, *held, dot_key=None) -> None:
        if len(self.calls) >= self.limit:
            self.clear()
        self.calls[key] = call
        self._held[key] = held
        if dot_key is not None and type(call) is matmul.Dot:
            self.dots[dot_key] = call

    def clear(self) -> None:
        self.calls.clear()
        self.dots.clear()
        self._held.clear()

    def __len__(self):
        return len(self.calls)


_FIELDS = (semirings.real, semirings.real32, semirings.complex, semirings.complex64)


def matmul_call(parts, operands, semiring, output, tuning, kernel=None):
    """The product running einsum `parts` (an expr.einsum.Einsum) on `operands`
    when it is one dense real product (see the module docstring): numpy's product
    itself when it needs nothing around it (runtime.matmul's `direct`), else a
    Matmul; either behind a `matmul.Cast` for operands of other dtypes, and behind
    a `matmul.InOrder` running `kernel()`'s call for operands not in C order where
    the product has a vector side and an operand more than two axes. None
    otherwise."""
    if output not in (None, "dense") or len(operands) != 2:
        return None
    a, b = operands
    if type(a) is not np.ndarray or type(b) is not np.ndarray:
        return None
    tuned = tuning_.of(tuning)
    carrier = _carrier(semiring, a.dtype, b.dtype, tuned)
    if carrier is None or not tuned.blas:
        return None
    made = matmul.recipe(parts.names, [ix.name for ix in parts.out], [a.shape, b.shape])
    if made is None:
        return None
    call = made.direct((a.ndim, b.ndim), tuned.strided_copy_bytes)
    if not (a.dtype == b.dtype == carrier or (
            type(call) is matmul.Dot and np.result_type(a.dtype, b.dtype) == carrier)):
        # cast first (numpy's matmul casts a transposed or strided operand slowly),
        # then numpy's matmul itself (no Python frame of a Dot's own; an operand
        # left as it is read in place when strided)
        call = matmul.Cast(carrier, np.matmul if type(call) is matmul.Dot else call)
    if made.vector and max(a.ndim, b.ndim) > 2 and kernel is not None:
        return matmul.InOrder(call, kernel)
    return call             # (ndarray.dot casts the operands to the carrier itself)


def _carrier(semiring, da, db, tuned):
    """The dtype a product over the real, real32, complex or complex64 field of
    operands of dtypes da and db computes in: the semiring's (None: the one numpy's
    result type gives, as ep.einsum infers it). Operands of another dtype need
    `Tuning.blas_casts` and a cast numpy makes safely (bool, integers, floats,
    complex); None when the product is not so."""
    sr = _semiring(semiring, da if da == db else np.result_type(da, db))
    if sr not in _FIELDS:
        return None
    dt = sr.dtype
    if da == db == dt:
        return dt
    if not tuned.blas_casts or not all(d.kind in "biufc" and np.can_cast(d, dt)
                                       for d in (da, db)):
        return None
    return dt


try:        # np.einsum without its Python wrapper, which calls it for optimize=False
    from numpy._core.multiarray import c_einsum as _c_einsum
except ImportError:             # numpy 1.x, or a numpy that moved it: the wrapper
    _c_einsum = np.einsum


def numpy_call(spec, parts, operands, semiring, output, tuning):
    """numpy's einsum of `spec` on one numpy operand, for the default semiring in
    the operand's own dtype (see the module docstring), else None: numpy's C function
    (`c_einsum`, what np.einsum runs for optimize=False; one operand has nothing to
    optimise) where numpy keeps it in numpy._core.multiarray, else np.einsum."""
    if semiring is not None or output not in (None, "dense") or len(operands) != 1:
        return None
    (a,) = operands
    scalar = isinstance(a, np.generic)          # a numpy scalar: np.einsum's own result
    if (type(a) is not np.ndarray and not scalar) or not tuning_.of(tuning).numpy_einsum:
        return None
    if a.dtype.kind not in "fciub" or semirings.for_dtype(a.dtype).dtype != a.dtype:
        return None
    (names,) = parts.names
    out = [ix.name for ix in parts.out]
    if len(set(names)) == len(names) == len(out) and not scalar:
        return methodcaller("transpose", tuple(names.index(c) for c in out))
    return partial(_c_einsum, spec)


def _semiring(semiring, dtype):
    """The semiring a kernel over operands of `dtype` computes in (None: not a
    float or complex one)."""
    if semiring is None:
        return semirings.for_dtype(dtype) if dtype.kind in "fc" else None
    if isinstance(semiring, Semiring):
        return semiring
    return getattr(semirings, semiring, None) if isinstance(semiring, str) else None


_threads = build.env_reader((THREADS_VARIABLE,))    # (its value now,), compared
_UNTRIED = object()


class KernelCall:
    """kern(T0=op0, T1=op1, ...) of the kernel `make()` returns; made again when
    ETCHPY_NUM_THREADS changes (ep.compile keys its kernels by it). After its
    first call it keeps a fixed call and tries it first (runtime.fixed_calls): on
    numpy operands `make`'s (the operands' shapes and dtypes are the key's), on
    others (scipy, ep.Tensor) the C binder's plan taking them in order (`in_c`),
    which checks each operand's kind and sizes on every call."""

    __slots__ = ("make", "names", "kern", "threads", "fixed")

    def __init__(self, make, names):
        self.make, self.names = make, tuple(names)
        self.kern, self.threads, self.fixed = make(), _threads(), _UNTRIED

    def __call__(self, *operands):
        threads = _threads()
        if threads != self.threads:
            self.kern, self.threads, self.fixed = self.make(), threads, _UNTRIED
        fixed = self.fixed
        if fixed is not None and fixed is not _UNTRIED:
            res = fixed(*operands)
            if res is not MISS:
                return res
        kern, inputs = self.kern, dict(zip(self.names, operands))
        if (first := kern._first) is None or (res := first(inputs)) is MISS:
            res = kern(**inputs)        # (else the plan its keyword call tries first)
        if fixed is _UNTRIED:       # numpy operands: written out; others: the binder's plan
            self.fixed = (fixed_calls.make(self.kern, self.names, operands)
                          if all(type(v) is np.ndarray for v in operands)
                          else fixed_calls.in_c(self.kern, self.names, operands))
        return res
