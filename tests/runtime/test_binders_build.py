"""The binder modules build wherever they can (runtime.binder, graph.binder): where
this is CPython on x86-64 or AArch64 Linux with a C compiler, Python's headers and
numpy's, each module is made, not None. A template edit that does not compile
makes `module()` None, and the tests of the binders then skip themselves (docs/status.md's
table) and the Python plans run: this test fails instead."""
import os
import sysconfig

import pytest

from etchpy.errors import CompileError
from etchpy.graph import binder as graph_binder
from etchpy.runtime import binder
from etchpy.runtime.compiler import find_compiler


def test_the_binders_build_where_a_compiler_and_pythons_headers_are():
    include = sysconfig.get_paths().get("include")
    try:
        find_compiler()
    except CompileError:
        pytest.skip("no C compiler")
    if not binder.available() or not include or not os.path.exists(
            os.path.join(include, "Python.h")):
        pytest.skip("not CPython on x86-64/AArch64 Linux, or no Python headers")
    assert binder.module() is not None, "the call binder's C did not build"
    assert graph_binder.module() is not None, "the graph binder's C did not build"
