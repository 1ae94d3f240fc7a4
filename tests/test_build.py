"""Tests of etchpy.runtime.build and runtime.cache: compile errors, the compiler and
its flags, the cache directory, loading without pycparser, cache records and the
fingerprint (compiling and loading, and the caches across processes:
tests/runtime/test_build_loads.py)."""
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from etchpy import CompileError
from etchpy.runtime import build, cache, fingerprint
from build_cases import DOT_0_TO_9, DOT_CDEF, DOT_SOURCE, call_dot, dot_source, needs_cc
from build_cases import cache_dir  # noqa: F401  (autouse: every test a fresh cache)


@needs_cc
def test_syntax_error_raises_compile_error():
    with pytest.raises(CompileError) as info:
        build.load("double broken(void) { return 1.0 +; }\n", "double broken(void);",
                   name="broken")
    error = info.value
    assert error.c_path is not None and error.c_path.exists()
    assert str(error.c_path) in str(error)
    assert "error" in error.stderr and error.stderr.strip() in str(error)
    assert not list(error.c_path.parent.glob("broken-*.so"))


def test_missing_compiler_gives_install_hint(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/etchpy-no-such-cc")
    with pytest.raises(CompileError, match="apt-get install gcc") as info:
        build.load(DOT_SOURCE, DOT_CDEF)
    assert "CC" in str(info.value)


def test_no_compiler_on_path_gives_install_hint(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory
    with pytest.raises(CompileError, match="no C compiler found.*apt-get install gcc"):
        build.load(DOT_SOURCE, DOT_CDEF)


@needs_cc
def test_cache_dir_is_private(cache_dir):
    build.load(DOT_SOURCE, DOT_CDEF)
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700


@needs_cc
def test_existing_cache_dir_permissions_untouched(cache_dir):
    cache_dir.mkdir(parents=True, mode=0o755)
    os.chmod(cache_dir, 0o755)
    build.load(DOT_SOURCE, DOT_CDEF)
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o755


@needs_cc
def test_cflags_are_honoured(monkeypatch):
    default = build.load(DOT_SOURCE, DOT_CDEF)
    monkeypatch.setenv("CFLAGS", "-O0 -g")
    debug = build.load(DOT_SOURCE, DOT_CDEF)  # no clear_memo: the env change must count
    assert debug.key != default.key and not debug.from_cache
    assert "-O0" in debug.flags and "-g" in debug.flags
    assert "-march=native" not in debug.flags
    assert call_dot(debug, np.ones(4), np.ones(4)) == 4.0


@needs_cc
@pytest.mark.parametrize("rejected, tier", [("-march=native", ("-O3",)),
                                            ("-mprefer-vector-width=256",
                                             ("-O3", "-march=native"))])
def test_falls_back_to_the_next_tier_of_flags(tmp_path, monkeypatch, rejected, tier):
    """A compiler that rejects a flag of the default tier (-march=native, or the
    vector width, which only x86 compilers know) gets the next tier that holds
    no such flag; the probe's answer is remembered, so a second kernel builds
    at once."""
    real_cc = os.environ.get("CC") or next(filter(None, map(shutil.which,
                                                            build.COMPILER_CANDIDATES)))
    wrapper = tmp_path / "picky-cc"
    wrapper.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        for arg in "$@"; do
            if [ "$arg" = "{rejected}" ]; then
                echo "picky-cc: error: unsupported option '{rejected}'" >&2; exit 1
            fi
        done
        exec {real_cc} "$@"
    """))
    wrapper.chmod(0o755)
    monkeypatch.setenv("CC", str(wrapper))
    library = build.load(DOT_SOURCE, DOT_CDEF)
    base = tuple(f for f in library.flags[len(build.REQUIRED_FLAGS):]
                 if f not in build.OPENMP_FLAGS)
    assert base == tier
    assert call_dot(library, np.ones(2), np.ones(2)) == 2.0

    build.clear_memo()
    compiles = build.stats["compiles"]
    source = dot_source("second kernel")
    assert rejected not in build.load(source, DOT_CDEF).flags
    assert build.stats["compiles"] == compiles + 1  # remembered: no failed attempt first


NO_PYCPARSER_CHILD = textwrap.dedent("""\
    import json, sys
    import numpy as np
    from etchpy.runtime import build
    lib = build.load(sys.argv[1], sys.argv[2])
    loaded_pycparser = "pycparser" in sys.modules
    a = np.arange(10.0)
    ffi = lib.ffi
    value = lib.lib.dot(ffi.from_buffer("double[]", a),
                        ffi.from_buffer(ffi.typeof("double[]"), a), len(a))
    box = ffi.new("long *", 7)
    print(json.dumps({"from_cache": lib.from_cache, "compiles": build.stats["compiles"],
                      "value": value, "pycparser": loaded_pycparser, "box": box[0],
                      "still_no_pycparser": "pycparser" not in sys.modules}))
""")


@needs_cc
def test_other_process_loads_without_pycparser(cache_dir):
    source = dot_source("no pycparser")
    library = build.load(source, DOT_CDEF)
    record = cache.read_data(library.path.with_suffix(".json"))
    assert record["key"] == library.key and record["ffi"]["_types"]
    assert not list(cache_dir.glob("*.py")) and not list(cache_dir.glob("*.pkl"))
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.run([sys.executable, "-c", NO_PYCPARSER_CHILD, source, DOT_CDEF],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    child = json.loads(proc.stdout)
    assert child == {"from_cache": True, "compiles": 0, "value": DOT_0_TO_9,
                     "pycparser": False, "box": 7, "still_no_pycparser": True}
    assert not (cache_dir / "__pycache__").exists()  # no bytecode left in the cache


TYPEDEF_CDEF = ("typedef int32_t idx_t; typedef double val_t;"
                " void *malloc(size_t); void free(void *);"
                " val_t *fill(idx_t n, int64_t *count);")
TYPEDEF_SOURCE = textwrap.dedent("""\
    #include <stdint.h>
    #include <stdlib.h>
    typedef int32_t idx_t; typedef double val_t;
    val_t *fill(idx_t n, int64_t *count) {
        val_t *out = malloc(sizeof(val_t) * (n ? n : 1));
        for (idx_t i = 0; i < n; i++) out[i] = 2.0 * i;
        *count = n;
        return out;
    }
""")


@needs_cc
def test_preparsed_ffi_supports_the_runtime_calls():
    build.load(TYPEDEF_SOURCE, TYPEDEF_CDEF)
    build.clear_memo()
    library = build.load(TYPEDEF_SOURCE, TYPEDEF_CDEF)  # the out-of-line ffi
    assert library.from_cache and type(library.ffi).__module__ == "_cffi_backend"
    ffi, lib = library.ffi, library.lib
    count = ffi.new("int64_t *")
    ptr = ffi.gc(lib.fill(5, count), lib.free)
    assert count[0] == 5
    values = np.frombuffer(ffi.buffer(ptr, 5 * 8), dtype=np.float64)
    assert values.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    idx = np.arange(3, dtype=np.int32)
    view = ffi.from_buffer(ffi.typeof("idx_t[]"), idx)
    assert ffi.typeof(view) is ffi.typeof("idx_t[]") and view[2] == 2
    assert ffi.sizeof("val_t") == 8 and ffi.from_buffer("val_t[]", values)[4] == 8.0


@needs_cc
@pytest.mark.parametrize("damage", ["missing", "garbage", "truncated", "other key",
                                    "edited", "other hash"])
def test_damaged_record_means_a_rebuild(damage):
    """Without its intact record a .so cannot be checked, so it is rebuilt."""
    source = dot_source(f"record {damage}")
    first = build.load(source, DOT_CDEF)
    record = first.path.with_suffix(".json")
    good = record.read_bytes()
    digest, _, body = good.partition(b"\n")
    if damage == "missing":
        record.unlink()
    elif damage == "garbage":
        record.write_bytes(b"this is { not json\n")
    elif damage == "truncated":
        record.write_bytes(good[:len(good) // 2])
    elif damage == "other key":
        cache.write_data(record, {**cache.read_data(record), "key": "0" * 64})
    elif damage == "edited":          # the body changed, its hash line did not
        record.write_bytes(digest + b"\n" + body.replace(b"_types", b"_typez"))
    else:
        cache.write_data(record, {**cache.read_data(record), "so_sha256": "0" * 64})

    build.clear_memo()
    compiles = build.stats["compiles"]
    again = build.load(source, DOT_CDEF)
    assert not again.from_cache and build.stats["compiles"] == compiles + 1
    assert call_dot(again, np.arange(10.0), np.arange(10.0)) == DOT_0_TO_9
    assert cache.read_data(record)["so_sha256"] == cache.file_sha256(first.path)

    build.clear_memo()
    third = build.load(source, DOT_CDEF)  # now through the recorded type tables
    assert third.from_cache and type(third.ffi).__module__ == "_cffi_backend"
    assert call_dot(third, np.arange(10.0), np.arange(10.0)) == DOT_0_TO_9


def test_fingerprint_covers_every_subpackage_and_template():
    """A change to any layer (lower, c, streams, ...) must make old manifests unreachable."""
    files = fingerprint.package_files()
    package = Path(build.__file__).resolve().parents[1]
    subpackages = {d.name for d in package.iterdir() if (d / "__init__.py").is_file()}
    assert subpackages <= {f.parent.name for f in files}
    for needed in ("lower", "c", "streams", "runtime", "expr", "formats", "codegen_templates"):
        assert any(f.parent.name == needed for f in files), needed
    assert any(f.suffix == ".j2" for f in files)
    assert len(fingerprint.compiler_fingerprint()) == 64


def test_manifests_round_trip_and_reject_other_requests():
    cache.write_manifest("m", "a" * 64, {"texts": ("src", "cdef")})
    assert cache.read_manifest("m", "a" * 64) == {"texts": ("src", "cdef"), "request": "a" * 64}
    assert cache.read_manifest("m", "b" * 64) is None



def test_load_helper_is_none_without_a_compiler(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/etchpy-no-such-cc")
    assert build.load_helper(DOT_SOURCE, DOT_CDEF, "probe") is None
