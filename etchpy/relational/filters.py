"""Filters over a key's codes (Keys.mask, Keys.like) and mappings between codings
(Keys.mapping) as etchpy values: ep.Tensors, read by a kernel as any input.

    codes_filter(hold, name, sparse, sparse_below)   a 0/1 vector over the codes
    mapping_tensor(cols, n, m, name)                 a 0/1 (n, m) "csr" Tensor
    pair_filter(xs, ys, predicate, name, format)     Keys.pairs: a 0/1 (n, m) Tensor

A filter's storage is chosen by how many codes pass: the codes that pass as a
"csf" vector (one stored per code: walked as its index's outer factor it visits
only those codes, a skip; located under another operand, a marker probe) when
at most `sparse_below` of the codes pass (default `Tuning.filter_sparse_below`,
1/8: the field of a Tuning passed, or the default's), else a
"dense" vector of zeros and ones (a located factor, one read per visit).
`sparse=True`/`False` forces either. Either is the same 0/1 function of the
code, so a kernel declared for one format reads the other too: it is converted
when bound (a pass over the codes, not the rows: a key's codes are its
distinct values), without the PerformanceWarning other inputs get
(`is_filter`). Declared in the filter's own format (`ep.tensor(name, 1,
F.format)`) nothing is converted. proofs_notes/filters.md.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from .. import tuning as tuning_
from ..runtime.tensor import Tensor

_FILTER = "_etchpy_filter"


def codes_filter(hold: np.ndarray, name: str, sparse: bool | None = None,
                 sparse_below: float | None = None, tuning=None) -> Tensor:
    """The codes where `hold` is true as a 0/1 ep.Tensor: "csf" (the codes that
    pass) when `sparse`, or when `sparse` is None and they are at most
    `sparse_below` of all codes (None: `tuning`'s filter_sparse_below, an
    ep.Tuning, a preset name or a dict; None: the default's); else "dense"."""
    if sparse_below is None:
        sparse_below = tuning_.of(tuning).filter_sparse_below
    if sparse is not None and not isinstance(sparse, (bool, np.bool_)):
        raise InputError(f"keys {name!r}: sparse is True, False or None (chosen by "
                         f"selectivity), got {sparse!r}")
    if not (isinstance(sparse_below, (int, float)) and 0.0 <= sparse_below <= 1.0):
        raise InputError(f"keys {name!r}: sparse_below is a share of the codes in "
                         f"[0, 1], got {sparse_below!r}")
    on = np.flatnonzero(hold)
    if sparse is None:
        sparse = len(on) <= sparse_below * len(hold)
    idx = np.int32 if len(hold) < 2**31 - 1 else np.int64
    if sparse:
        t = Tensor((len(hold),), "csf", [{"pos": np.array([0, len(on)], dtype=idx),
                                         "crd": on.astype(idx)}], np.ones(len(on)), name=name)
    else:
        t = Tensor((len(hold),), "dense", [{}], hold.astype(np.float64), name=name)
    t.__dict__[_FILTER] = True
    return t


def is_filter(value) -> bool:
    """Whether `value` is a filter made here (bound to a declaration of the other
    format without a PerformanceWarning: see the module docstring)."""
    return isinstance(value, Tensor) and value.__dict__.get(_FILTER, False)


def mapping_tensor(cols: np.ndarray, n: int, m: int, name: str) -> Tensor:
    """The 0/1 (n, m) "csr" Tensor holding one at (c, cols[c]) for each c < n."""
    idx = np.int32 if max(n, m) < 2**31 - 1 else np.int64
    return Tensor((n, m), "csr", [{}, {"pos": np.arange(n + 1, dtype=idx),
                                       "crd": cols.astype(idx)}], np.ones(n), name=name)


def pair_filter(xs: np.ndarray, ys: np.ndarray, predicate, name: str, format: str) -> Tensor:
    """Keys.pairs: the (i, j) where predicate(xs[i], ys[j]) holds, as a 0/1
    Tensor of shape (len(xs), len(ys)) in `format` ("csr" or "dcsr")."""
    if format not in ("csr", "dcsr"):
        raise InputError(f"keys {name!r}: a pair filter is stored \"csr\" or \"dcsr\", "
                         f"got {format!r}")
    hold = np.asarray(predicate(xs[:, None], ys[None, :]), dtype=bool)
    if hold.shape != (len(xs), len(ys)):
        raise InputError(f"keys {name!r}: the predicate must give one truth value per "
                         f"pair of values {(len(xs), len(ys))}, got shape {hold.shape}")
    at = np.nonzero(hold)
    t = Tensor.from_coords(np.array(at), np.ones(len(at[0])), hold.shape, format)
    t.__dict__[_FILTER] = True
    return t
