"""The help text of ep.tensor (`help(ep.tensor)`) and the check of its arguments, kept
here so that expr.nodes stays short; tests/api/test_tensor_help.py checks that the
text has a row for every named format of etchpy.formats.NAMED_FORMATS."""
from __future__ import annotations

import functools

from ..errors import ExpressionTypeError
from ..formats import Format

RESERVED_NAMES = {"out", "dim", "acc"}
IDENTITY_PREFIX, COMPARE_PREFIX = "eq_", "cmp_"  # diagonals' δ, comparisons' 0/1 tensors
RESERVED_PREFIXES = ("tmp", "out_", IDENTITY_PREFIX, COMPARE_PREFIX, "win_")  # win_: windows


@functools.lru_cache(maxsize=1024)
def checked(name, order, fmt) -> Format:
    """The Format of tensor `name` of `order` modes declared `fmt`, checked (raising as
    TensorVar does); kept per (name, order, format name): loops rebuild tensors."""
    if not (isinstance(name, str) and name.isidentifier()):
        raise ExpressionTypeError(f"tensor name must be an identifier, got {name!r}")
    if name in RESERVED_NAMES or name.startswith(RESERVED_PREFIXES):
        raise ExpressionTypeError(f"tensor name {name!r} is reserved for etchpy's "
                                  f"own arrays; choose another name")
    if not isinstance(order, int) or order < 0:
        raise ExpressionTypeError(f"tensor {name}: order must be a non-negative int")
    return Format.parse(fmt, order)


TENSOR_DOC = """A TensorVar: input `name` of `order` indices, stored in `format`.

    tensor(name, order, format="dense", *, iso=False) -> TensorVar

Parameters: name, an identifier (the keyword its input is passed by); order, the
number of indices (0 for a scalar); format, the layout the kernel reads: "dense"
(the default), "csr", "csc", "dcsr", "coo", "csf", "banded", "uniform_band", "blocks", "bsr", "rle",
"sparse_rle", "bytemap", "hash", "ellpack" or an ep.Format(levels, mode_order); iso=True, every stored value is the semiring's one and is never read
(another value is an InputError; ep.Tensor.pattern makes an input checked once).
Raises: ExpressionTypeError for a bad name or order, FormatError for an unknown
format or one the order does not allow.

What a call binds without a copy, per named format (orders: the orders the format
allows; "the semiring's dtype" is float64 for `real`, bool for `boolean`, ...):

    format  orders  bound as it is (no copy, no conversion)
    dense   any     a C-contiguous numpy array of the semiring's dtype; an ep.Tensor
                    in dense
    csr     2       a scipy csr_array or csr_matrix of the semiring's dtype, canonical
                    (sorted indices, no duplicates), indptr and indices both int32 or
                    both int64; an ep.Tensor in csr
    csc     2       a scipy csc_array or csc_matrix, as for csr; an ep.Tensor in csc
    dcsr    2       an ep.Tensor in dcsr
    coo     any     an ep.Tensor in coo
    csf     any     an ep.Tensor in csf
    banded  1, 2, 3, 4  an ep.Tensor in banded (a scipy dia_array is regrouped
                    into row bands, docs/formats.md)
    uniform_band  1, 2, 3, 4  an ep.Tensor in uniform_band (one band shape for
                    every row; a scipy dia_array is regrouped into it; pack once
                    with ep.Tensor.from_scipy(m, "uniform_band"))
    blocks  1, 2, 3, 4  an ep.Tensor in blocks (a scipy bsr_array is regrouped
                    into rows of runs; its values shared when blocks are one row)
    bsr     1, 2, 3, 4  a scipy bsr_array or bsr_matrix of the semiring's dtype,
                    any blocksize, blocks in order within each block row (out of
                    order: moved whole, each call), indptr and indices of one
                    dtype; an ep.Tensor in bsr
    rle     1, 2, 3, 4  an ep.Tensor in rle (runs of equal values per row; pack
                    an image once with ep.Tensor.from_dense(img, "rle"))
    sparse_rle  1, 2, 3, 4  an ep.Tensor in sparse_rle (runs of equal values per
                    row with the fill between them, not stored)
    bytemap  1, 2, 3, 4  an ep.Tensor in bytemap (rows walked sparse, probed
                    in O(1); ep.Tensor.from_dense(x, "bytemap"))
    hash     1, 2, 3, 4  an ep.Tensor in hash (per row a hash table of its stored
                    coordinates, listed in order; an output inserted in any order)
    ellpack  1, 2, 3, 4  an ep.Tensor in ellpack (rows of at most one width:
                    ep.Tensor(shape, "ellpack", ({}, {"elen", "ecrd", "ewidth"}),
                    vals) over a KDTree query's or a GPU library's arrays)

An ep.Tensor binds as it is when its format is the declared one and its values
have the semiring's dtype; it is validated once, when built, and a later call with
the same Tensor reuses its binding. A custom ep.Format binds an ep.Tensor of that
format as it is.

pydata sparse GCXS arrays bind as the scipy csr/csc array of their layout;
python-graphblas matrices are copied (to_csr) on every call.

Everything else is converted on every call, which can cost many times the kernel
itself (a dense numpy array bound to a csr tensor is scanned and packed each
time). When the input's layout is not the declared
format's (numpy for csr, scipy csr for csc or dcsr, an ep.Tensor of another
format), the first such call warns once per input (PerformanceWarning) with the
fix: convert once and pass the result, e.g. `ep.Tensor.from_dense(A, 'csr')`,
`ep.Tensor.from_scipy(A, 'dcsr')` or `A.convert('csc')`. Converted silently, on
every call: a numpy array of another dtype or not C-contiguous (cast or copied),
a scipy csr/csc whose indices are unsorted or duplicated (canonicalised) or of
another dtype, and a scipy coo array bound to coo (sorted into levels: pass
`ep.Tensor.from_scipy(A, 'coo')` instead).

Formats guide (levels, mode orders, custom formats, iso inputs, index types):
docs/formats.md.

    >>> A, P = ep.tensor("A", 2, format="csr"), ep.tensor("P", 2, "csc", iso=True)
    >>> T = ep.tensor("T", 3, format="csf")
"""
