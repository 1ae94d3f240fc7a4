"""The name supply: every generated Imp (and so C) name comes from one `Names`."""
from __future__ import annotations


class Names:
    """Deterministic fresh names: the first request for `q` gets `q`, then `q_1`, …

    `fresh` never returns a name twice, nor one that was requested before as a
    base (so `fresh("q_1")` after `fresh("q")` twice gives `q_1_1`). A name that
    must not be generated (a user's index or tensor name) is kept out by
    requesting it first.
    """

    def __init__(self):
        self.used: dict[str, int] = {}

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
