"""Formats, shapes and arrays that the tests of etchpy.runtime.tensor.Tensor share
(tests/runtime/test_tensor_*.py)."""
from __future__ import annotations

import numpy as np

from etchpy.formats import Format

CUSTOM_CD = Format(["compressed", "dense"], (1, 0))
FORMATS = {
    0: ["dense", "coo", "csf"],
    1: ["dense", "coo", "csf"],
    2: ["dense", "csr", "csc", "dcsr", "coo", "csf", CUSTOM_CD],
    3: ["dense", "coo", "csf", Format(["dense", "compressed", "compressed"], (2, 0, 1)),
        Format(["compressed-nonunique", "singleton", "dense"], (1, 2, 0))],
    4: ["dense", "coo", "csf"],
}
SHAPES = {0: (), 1: (7,), 2: (5, 6), 3: (3, 4, 5), 4: (2, 3, 2, 3)}
ORDER_FORMATS = [(order, fmt) for order, fmts in FORMATS.items() for fmt in fmts]


def sparse_array(shape, density=0.4, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.integers(1, 9, size=shape).astype(float)
    return np.where(rng.random(shape) < density, values, 0.0)
