"""What the tests of etchpy.runtime.build and runtime.cache share (tests/test_build.py,
tests/runtime/test_build_loads.py): a dot-product kernel, a child process that loads
it, and the autouse fixture `cache_dir` (a fresh private cache, no CC or CFLAGS; a
test module imports it by name)."""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from etchpy.runtime import build

HAVE_CC = bool(os.environ.get("CC")) or any(map(shutil.which, build.COMPILER_CANDIDATES))
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler on PATH")

DOT_CDEF = "double dot(const double *a, const double *b, long n);"
DOT_SOURCE = textwrap.dedent("""\
    double dot(const double *restrict a, const double *restrict b, long n) {
        double s = 0.0;
        for (long i = 0; i < n; i++) s += a[i] * b[i];
        return s;
    }
""")

# Runs in a child process: load argv[1] (source) / argv[2] (cdef) after an optional
# start time argv[3], call dot, report what happened as JSON.
CHILD = textwrap.dedent("""\
    import json, sys, time
    import numpy as np
    from etchpy.runtime import build
    if len(sys.argv) > 3:
        time.sleep(max(0.0, float(sys.argv[3]) - time.time()))
    lib = build.load(sys.argv[1], sys.argv[2], openmp="--openmp" in sys.argv)
    a = np.arange(10.0)
    value = lib.lib.dot(lib.ffi.from_buffer("double[]", a),
                        lib.ffi.from_buffer("double[]", a), len(a))
    print(json.dumps({"from_cache": lib.from_cache, "path": str(lib.path),
                      "compiles": build.stats["compiles"], "value": value}))
""")
DOT_0_TO_9 = float(np.dot(np.arange(10.0), np.arange(10.0)))


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    path = tmp_path / "nested" / "cache"
    monkeypatch.setenv("ETCHPY_CACHE_DIR", str(path))
    for var in ("CC", "CFLAGS", "ETCHPY_LOG_COMPILES"):
        monkeypatch.delenv(var, raising=False)
    build.clear_memo()
    yield path
    build.clear_memo()


def dot_source(tag):
    """DOT_SOURCE made unique, so each test gets a fresh cache key."""
    return f"/* {tag} */\n{DOT_SOURCE}"


def call_dot(library, a, b):
    ffi = library.ffi
    return library.lib.dot(ffi.from_buffer("double[]", a), ffi.from_buffer("double[]", b),
                           len(a))


def spawn_child(*args):
    return subprocess.Popen([sys.executable, "-c", CHILD, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))


def finish_child(proc):
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return json.loads(out)
