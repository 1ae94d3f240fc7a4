"""Golden C: codegen changes show up as diffs of these files.

Regenerate after an intended change with
    ETCHPY_REGEN_GOLDEN=1 python -m pytest tests/end_to_end/test_golden.py
and review the diff before committing.
"""
import os
import pathlib

import pytest

from etchpy.runtime.kernel import Kernel
from tuned import INTEL_FACTS, golden_cases

GOLDEN = pathlib.Path(__file__).parent / "golden"
CASES = golden_cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_c(name):
    case = dict(CASES[name])
    # the host's facts pinned (etchpy.host_facts): the golden C is the same on every host
    case["tuning"] = {**INTEL_FACTS, **case.get("tuning", {})}
    src = Kernel(case.pop("expr"), name=name, **case).c_source
    path = GOLDEN / f"{name}.c"
    if os.environ.get("ETCHPY_REGEN_GOLDEN"):
        path.write_text(src)
    assert path.exists(), f"missing golden file {path}; regenerate with ETCHPY_REGEN_GOLDEN=1"
    assert src == path.read_text(), f"generated C for {name} changed; review and regenerate"
