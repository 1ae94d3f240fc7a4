"""Cases paired with semirings, for the property tests whose every (case,
semiring) pair compiles a kernel: by default each case runs on the semirings
named in `always` and on `per_case` of the others, taken in turn (so each
other semiring meets about len(cases) * per_case / len(others) cases), and the
count of compiled kernels grows with the cases, not with their product. The
rest of the product is marked slow: `python -m pytest --runslow` runs all of
it."""
import pytest


def paired(cases, semirings, always=("real",), per_case=2) -> list:
    """pytest.param(case, semiring) for every case and semiring, the cases in
    order, those outside the pairing marked slow."""
    semirings = list(semirings)
    others = [sr for sr in semirings if sr.name not in always]
    out = []
    for n, case in enumerate(cases):
        turn = {others[(per_case * n + k) % len(others)].name for k in range(per_case)} \
            if others else set()
        for sr in semirings:
            chosen = sr.name in always or sr.name in turn
            out.append(pytest.param(case, sr, id=f"{case}-{sr.name}",
                                    marks=() if chosen else pytest.mark.slow))
    return out
