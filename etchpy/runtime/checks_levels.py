"""The structural validation of a runtime.tensor.Tensor: each level's own check
(formats.level `check`), the runs a singleton level orders, and the values'
count against the last level's positions."""
from __future__ import annotations

import numpy as np

from ..errors import InputError


def validate(t, order=True):
    """Check every structural invariant of tensor `t`; raise InputError naming the
    problem (Tensor.validate). With ``order=False`` only the bounds."""
    where = f"tensor {t.name!r}"
    if len(t.levels) != t.order:
        raise InputError(f"{where}: format {t.format} has {t.order} levels "
                         f"but {len(t.levels)} level dicts were given")
    if t.vals.ndim != 1 or t.vals.dtype.kind not in "biufc":
        raise InputError(f"{where}: vals must be a 1-d numeric array, got shape "
                         f"{t.vals.shape} and dtype {t.vals.dtype}")
    # Runs (positions with equal coordinates at every level so far) are
    # tracked down to the last singleton level, which checks its order
    # within each run of its parent; `trail` keeps (owner, coord) per level
    # to name the coordinates of a bad entry.
    last_singleton = max((k for k, lv in enumerate(t.format.levels)
                          if lv.one_per_parent), default=-1)
    run_id = np.zeros(1, dtype=np.int64)
    run_starts = np.ones(1, dtype=bool)
    trail = []
    n_positions = 1
    for k, mode, level in t.format.storage_modes():
        level_where = f"{where} level {k} ({level}, mode {mode})"
        n_parents = n_positions
        n_positions = level.check(
            t.levels[k], n_parents, t.shape[mode], level_where, order=order,
            parent_runs=run_starts, coords_above=lambda p: _coords_of(trail, p))
        if order and k < last_singleton:
            run_id, run_starts = _runs(level, t.levels[k], n_parents,
                                       t.shape[mode], run_id, trail)
    if len(t.vals) != n_positions:
        raise InputError(f"{where}: vals has {len(t.vals)} entries but the last "
                         f"level has {n_positions} positions")


def _runs(level, arrays, n_parents, size, parent_run_id, trail):
    """Runs of a (validated) level's positions: consecutive positions with equal
    coordinates at this level and every level above. Returns (run id, run start
    flag) per position and appends (owner, coord) to `trail`."""
    owner, coord, _ = level.unpack(arrays, np.arange(n_parents, dtype=np.int64), size)
    above = parent_run_id[owner]
    starts = np.ones(len(coord), dtype=bool)
    starts[1:] = (above[1:] != above[:-1]) | (coord[1:] != coord[:-1])
    trail.append((owner, coord))
    return np.cumsum(starts, dtype=np.int64) - 1, starts


def _coords_of(trail, p):
    """Storage coordinates of position p of the last level in `trail`."""
    coords = []
    for owner, coord in reversed(trail):
        coords.append(int(coord[p]))
        p = owner[p]
    return tuple(reversed(coords))
