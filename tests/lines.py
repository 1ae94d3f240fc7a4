"""A small lineitem-like table for the relational tests: orders sorted, a
line number counting within each order, a part, a revenue and a day."""
import numpy as np


def lines(rng, n=12, days=6):
    """Columns of n rows drawn from rng: order in [0, 5) sorted, line 0, 1, ...
    within an order, part in [0, 4), rev in [1, 9) and day in [0, days) as floats."""
    order = np.sort(rng.integers(0, 5, n))
    line = np.zeros(n, dtype=np.int64)
    for k in range(1, n):
        line[k] = line[k - 1] + 1 if order[k] == order[k - 1] else 0
    return {"order": order, "line": line, "part": rng.integers(0, 4, n),
            "rev": rng.integers(1, 9, n).astype(float),
            "day": rng.integers(0, days, n).astype(float)}
