"""The name supply: every generated Imp (and so C) name comes from one `Names`."""
from __future__ import annotations


# Type names of the C the program becomes: never generated (an index named
# `size` makes a stream state `size_t` otherwise).
C_TYPE_NAMES = ("size_t", "int64_t", "int32_t", "uint64_t", "uint32_t", "uint8_t",
                "int8_t", "uint16_t", "int16_t", "ptrdiff_t", "ep_idx_t", "ep_val_t")


class Names:
    """Deterministic fresh names: the first request for `q` gets `q`, then `q_1`, …

    `fresh` never returns a name twice, nor one that was requested before as a
    base (so `fresh("q_1")` after `fresh("q")` twice gives `q_1_1`). A name that
    must not be generated (a user's index or tensor name) is kept out by
    requesting it first; the C type names (C_TYPE_NAMES) are kept out from the start.
    """

    def __init__(self):
        self.used: dict[str, int] = {name: 0 for name in C_TYPE_NAMES}

    def fresh(self, base: str) -> str:
        n = self.used.get(base)
        if n is None:
            self.used[base] = 0
            return base
        while True:
            n += 1
            cand = f"{base}_{n}"
            if cand not in self.used:
                self.used[base] = n
                self.used[cand] = 0
                return cand
