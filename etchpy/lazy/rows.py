"""Xᵀ·f(X·W) over row blocks of a dense X: each block of rows read twice while
it is in cache, not the whole of X twice (etchpy.lazy.regions).

A gradient of a model linear in X (least squares, logistic, ...) is
`X.T @ R` where R is computed row by row from `X @ W` (and arrays with a row
per row of X). Run as written it is two BLAS products that each stream all of
X from memory, X being larger than the cache. Cut into blocks of rows,
    Xᵀ·R = Σ_b X_bᵀ · R_b,   R_b = f(X_b·W, the operands' rows b)
(proofs_notes/lazy_row_blocks.md): the block X_b is read by the second product
while the first left it in cache.

`chain` decides from the steps already made whether a product step can run
so; `blocked_step` makes that step. The steps it replaces (X·W and the
region) are dropped from a replay's tape (`replaces`; replay.Tape), so each
replay runs the blocks; the first run, whose X·W and R are computed already,
multiplies them as written.
"""
from __future__ import annotations

import os

import numpy as np


def region_rows(shape: tuple, reads: list, rowwise: bool):
    """For a numpy region of `shape` reading `reads` [(slot, operand shape)]:
    the slots to cut into rows and the slots read whole, or None when the
    region is not computed row by row (a transpose inside it, an operand
    broadcast along the rows)."""
    if not rowwise or not shape:
        return None
    m, cut, whole = shape[0], [], []
    for slot, s in reads:
        if len(s) == len(shape) and s[0] == m and m != 1:
            cut.append(slot)
        elif len(s) < len(shape) or (len(s) == len(shape) and s[0] == 1):
            whole.append(slot)
        else:
            return None
    return cut, whole


def chain(x_slot: int, b_slot: int, steps: dict, single: set):
    """(X·W's slot, its step, the region's step or None) when the slot
    b_slot (read by Xᵀ·b) holds X·W itself or a region computing row by row
    from it, both read only there (their nodes in `single`); steps maps a slot
    to its step function; None otherwise."""
    fn = steps.get(b_slot)
    if fn is None or b_slot not in single:
        return None
    mm = getattr(fn, "product", None)
    if mm is not None:
        return (b_slot, fn, None) if mm[0] == x_slot and not mm[2] else None
    rows = getattr(fn, "rows", None)
    if rows is None:
        return None
    for slot in rows[0]:
        first = steps.get(slot)
        mm = getattr(first, "product", None)
        if mm is not None and mm[0] == x_slot and not mm[2] and slot in single:
            return slot, first, fn
    return None


_L2: list = []      # [host_l2's answer], read once per process


def host_l2() -> int:
    """The bytes of one core's level-2 cache as the OS reports it (Linux's
    /sys/devices/system/cpu/cpu0/cache), or 0 where it does not; read once."""
    if not _L2:
        _L2.append(_read_l2())
    return _L2[0]


def _read_l2() -> int:
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in sorted(os.listdir(base)):
            if not entry.startswith("index"):
                continue
            with open(os.path.join(base, entry, "level")) as f:
                level = f.read().strip()
            with open(os.path.join(base, entry, "type")) as f:
                kind = f.read().strip()
            if level == "2" and kind in ("Unified", "Data"):
                with open(os.path.join(base, entry, "size")) as f:
                    size = f.read().strip().upper()
                scale = {"K": 1 << 10, "M": 1 << 20}.get(size[-1:], 1)
                return int(size.rstrip("KM")) * scale
    except (OSError, ValueError):
        return 0
    return 0


def block_rows(x: np.ndarray, block_bytes: int, min_bytes: int = 0, min_rows: int = 16,
               l2_least: int = 0, l2: int | None = None) -> int:
    """Rows per block of the 2-d array x (0: do not cut it): blocks of about
    block_bytes, at least min_rows rows, and x at least two blocks and at least
    min_bytes (Tuning.lazy_row_block_min: a smaller X stays in the last-level
    cache from the first product to the second, and blocks then only add calls).
    Where the host's level-2 cache (host_l2) holds at least l2_least bytes
    (Tuning.lazy_row_block_l2; 0: not asked), an x larger than it is cut into
    blocks of half of it: the second product then reads each block from that
    cache, not from the last level (l2: that cache's bytes, None: host_l2())."""
    l2 = (host_l2() if l2 is None else l2) if l2_least > 0 else 0
    if l2 >= l2_least > 0 and x.ndim == 2 and x.nbytes > l2:
        block_bytes, min_bytes = l2 // 2, 0
    if block_bytes <= 0 or x.ndim != 2 or x.nbytes < min_bytes:
        return 0
    rows = block_bytes // max(x.shape[1] * x.itemsize, 1)
    return rows if rows >= min_rows and x.shape[0] >= 2 * rows else 0


def blocked_step(plain, x_slot: int, s0: int, first, region, rows: int, blas=None):
    """fn(env): Xᵀ·b by blocks of `rows` rows of X (slot x_slot) when b's value
    is not in env (its steps dropped by a replay), else plain(env). first is
    the step of X·W (slot s0; its `product` (x, w, flip) attribute), region the step of
    b from X·W or None (its `rows` attribute: the slots cut and read whole;
    its `block` attribute: the region's function on row blocks); blas, the
    binder's product (lazy.c_nodes.product: a block's products by one BLAS
    call each, numpy's matmul where it declines) or None."""
    w_slot, b_slot = first.product[1], plain.product[1]
    add = np.add
    if blas is None:
        def matmul(a, b, flip):
            return np.matmul(a.T if flip else a, b)
    else:
        def matmul(a, b, flip):
            v = blas(a, b, flip)
            return np.matmul(a.T if flip else a, b) if v is None else v
    cut = () if region is None else tuple(s for s in region.rows[0] if s != s0)
    block = None if region is None else region.block

    @np.errstate(all="ignore")      # as the region's own function
    def step(env):
        if env[b_slot] is not None:
            return plain(env)
        x, w = env[x_slot], env[w_slot]
        total = None
        benv = list(env)
        for i in range(0, x.shape[0], rows):
            xb = x[i:i + rows]
            r = matmul(xb, w, False)
            if block is not None:
                benv[s0] = r
                for s in cut:
                    benv[s] = env[s][i:i + rows]
                r = block(benv)
            part = matmul(xb, r, True)
            total = part if total is None else add(total, part, out=total)
        return plain.finish(total)
    step.replaces = (s0, b_slot) if region is not None else (b_slot,)
    step.product = plain.product
    return step


def tape_steps(steps: list, keep: set) -> list:
    """A replay's steps: those of slots a blocked step recomputes in its blocks
    dropped, unless a slot in keep (a result, a guarded value) is among them."""
    drop: set = set()
    for _, fn in steps:
        slots = getattr(fn, "replaces", ())
        if slots and not keep.intersection(slots):
            drop.update(slots)
    return [(s, fn) for s, fn in steps if s not in drop] if drop else list(steps)
