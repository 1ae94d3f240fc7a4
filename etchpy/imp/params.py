"""A kernel function's parameters: the C ABI of an Imp program (lower.Program holds
them). They live here, below lower/, because a kernel loaded from its manifest
(runtime.restored) decodes them to call it, and that must not load lower/."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Param:
    name: str
    kind: str      # dim | in_array | out_dense | out_zeroed | out_grown | out_count
    type: str      # index | value
    doc: str
