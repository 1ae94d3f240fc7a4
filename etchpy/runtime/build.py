"""Compile C source to a shared object with the system C compiler; load it with cffi.

    lib = load(c_source, "double dot(const double *, const double *, long);")
    lib.lib.dot(...)

Loading uses cffi's ABI mode (``ffi.dlopen``), so no Python headers are needed.

The cache directory, its keys, its records (the sha256 a cached .so must match before
it is loaded) and its atomic publishing are in runtime.cache.  Flags:
the first tier of FLAG_TIERS the compiler accepts (a probe, remembered on disk); a
build that fails with a tier the compiler rejects is retried with the next tier.

Within a process, ``load`` memoises its result by its arguments and the relevant
environment, so repeated calls cost a dictionary lookup.

Environment
-----------
``CC``                   compiler command (default: the first of cc, gcc, clang on PATH)
``CFLAGS``               optimisation flags, shlex-split (default: the first of
                         FLAG_TIERS the compiler accepts: ``-O3 -march=native
                         -mprefer-vector-width=256 -falign-loops=64``, ``-O3
                         -march=native``, ``-O3``)
``ETCHPY_CACHE_DIR``     the cache directory (see runtime.cache)
``ETCHPY_LOG_COMPILES``  a file to which one line per compiler invocation is appended
                         (when it ended, pid, seconds, source bytes, command)
``ETCHPY_SANITIZE``      when set (not 0): kernels are built with SANITIZE_FLAGS (ASan and
                         UBSan). They load only into a process started with the ASan
                         runtime preloaded (``LD_PRELOAD=$(cc -print-file-name=libasan.so)``)

``stats`` counts compiler invocations (kernels and probes), disk-cache hits and memo hits.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import cache
from ..version import __version__
from .cache import compile_error as _error
from .cache import read_manifest, write_manifest
from .fingerprint import compiler_fingerprint
from .compiler import (COMPILER_CANDIDATES, INSTALL_HINT, Compiler,  # noqa: F401 - public here
                       find_compiler, split_env)
from ..errors import CompileError

__all__ = ["Library", "load", "clear_memo", "cache_directory", "find_compiler", "stats",
           "compiler_fingerprint", "read_manifest", "write_manifest"]

# Optimisation flags, best first. A tier is used unless the compiler rejects it (a
# probe, remembered on disk), and then the next one. Why 256-bit vectors and
# loops aligned to 64 bytes: see docs/performance.md.
FLAG_TIERS = (("-O3", "-march=native", "-mprefer-vector-width=256", "-falign-loops=64"),
              ("-O3", "-march=native"),
              ("-O3",))
PORTABLE_FLAGS = FLAG_TIERS[-1]
REQUIRED_FLAGS = ("-shared", "-fPIC", "-std=c99")  # c99 has `restrict`
OPENMP_FLAGS = ("-fopenmp",)
# ETCHPY_SANITIZE=1: AddressSanitizer and UndefinedBehaviorSanitizer, every report fatal
SANITIZE_FLAGS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                  "-fno-omit-frame-pointer", "-g")
LINK_LIBS = ("-lm",)

_PROBE_SOURCES = {
    "native": "int etchpy_probe(void) { return 0; }\n",
    "openmp": ("#include <omp.h>\n"
               "int etchpy_probe(void) {\n"
               "    int s = 0;\n"
               "    #pragma omp parallel for reduction(+:s)\n"
               "    for (int i = 0; i < 4; i++) s += i;\n"
               "    return s + omp_get_max_threads();\n"
               "}\n"),
}
_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")

stats = {"compiles": 0, "cache_hits": 0, "memo_hits": 0}

_memo: dict[tuple, "Library"] = {}
_probes: dict[tuple, bool] = {}
_lock = threading.RLock()


@dataclass(frozen=True, eq=False)
class Library:
    """A loaded kernel library.

    ``from_cache`` describes the call that created this object (memo hits return the
    same object): True when that call ran no compiler for the kernel itself.
    """
    ffi: object = field(repr=False)     # a cffi FFI (_cffi_backend's, when from the cache)
    lib: object = field(repr=False)
    path: Path
    c_path: Path
    key: str
    from_cache: bool
    flags: tuple[str, ...] = ()


# --------------------------------------------------------------------------- public API

def load(c_source: str, cdef: str, *, name: str = "kernel",
         openmp: bool = False) -> Library:
    """Compile ``c_source`` (or reuse a cached build) and dlopen it with ``cdef``.

    ``name`` prefixes the cache file names; ``openmp`` adds -fopenmp when the compiler
    can build and load an OpenMP program (else the kernel is built serially, silently).
    Repeated calls with the same arguments and the same CC / CFLAGS / cache-directory
    environment return the same ``Library`` in about a microsecond.
    Raises CompileError when no compiler is found or compiling fails.
    """
    memo_key = (c_source, cdef, name, bool(openmp), environment())
    library = _memo.get(memo_key)
    if library is not None:
        stats["memo_hits"] += 1
        return library
    with _lock:
        library = _memo.get(memo_key)
        if library is None:
            library = _load_uncached(c_source, cdef, name, bool(openmp))
            _memo[memo_key] = library
        else:
            stats["memo_hits"] += 1
    return library


def load_helper(c_source: str, cdef: str, name: str) -> Library | None:
    """A C helper's library (as load), or None without a working compiler: its
    callers then take their numpy path."""
    try:
        return load(c_source, cdef, name=name)
    except CompileError:
        return None


def clear_memo() -> None:
    """Forget in-process results, so the next ``load`` consults the disk cache."""
    with _lock:
        _memo.clear()


def cache_directory() -> Path:
    """The cache directory, created with mode 0o700 if it does not exist."""
    return cache.directory()


# --------------------------------------------------------------------------- loading

ENV_NAMES = ("CC", "CFLAGS", "ETCHPY_CACHE_DIR", "XDG_CACHE_HOME", "ETCHPY_SANITIZE")


def env_reader(names: tuple):
    """A fast reader of the environment variables `names`: reader() -> their
    values now, None where unset (bytes on POSIX, str elsewhere).

    ``os.environ.get`` costs about 2 us per missing name (it raises KeyError inside);
    CPython keeps the live environment in the plain dict ``os.environ._data`` (updated
    by every ``os.environ`` assignment), which reads in tens of nanoseconds.
    """
    data = getattr(os.environ, "_data", None)
    encode = getattr(os.environ, "encodekey", None)
    if isinstance(data, dict) and encode is not None:
        get, keys = data.get, tuple(map(encode, names))
        if len(keys) == 1:
            key, = keys
            return lambda: (get(key),)
        if len(keys) == 5:      # spelled out: a comprehension or map costs 5-7x the reads
            a, b, c, d, e = keys
            return lambda: (get(a), get(b), get(c), get(d), get(e))
        if len(keys) == 6:
            a, b, c, d, e, f = keys
            return lambda: (get(a), get(b), get(c), get(d), get(e), get(f))
        return lambda: tuple([get(k) for k in keys])
    return lambda: tuple(map(os.environ.get, names))


environment = env_reader(ENV_NAMES)
"""environment() -> the values of CC, CFLAGS, ETCHPY_CACHE_DIR, XDG_CACHE_HOME and
ETCHPY_SANITIZE now (None where unset): what selects a build besides its source, so
that whatever keeps built code in process keys it on this too."""


def _load_uncached(c_source: str, cdef: str, name: str, openmp: bool) -> Library:
    if not _NAME_RE.fullmatch(name):
        raise ValueError(f"kernel name {name!r} must match {_NAME_RE.pattern}")
    # The cdef is parsed (which imports pycparser, tens of milliseconds) only when the
    # cache holds no usable pre-parsed module for it; a bad cdef still fails before any
    # compiling, and before a missing compiler is reported.
    parsed: list = []

    def parse_cdef():
        if not parsed:
            import cffi                 # lazily: a warm load never parses a cdef
            ffi = cffi.FFI()
            ffi.cdef(cdef)
            parsed.append(ffi)
        return parsed[0]

    cache_dir = cache_directory()
    try:
        compiler = find_compiler()
    except CompileError:
        parse_cdef()
        raise
    while True:
        flags = _final_flags(compiler, cache_dir, openmp)
        key = cache.kernel_key(c_source, cdef, compiler, flags, openmp)
        try:
            return _load_or_build(parse_cdef, c_source, cache_dir, name, key, compiler,
                                  flags)
        except CompileError:
            if not _tier_to_blame(compiler, flags, cache_dir):
                raise  # otherwise the next round uses the next tier of flags


def _load_or_build(parse_cdef, c_source, cache_dir, name, key, compiler,
                   flags) -> Library:
    entry, start = cache.Entry.at(cache_dir, name, key), time.perf_counter()
    hit = cache.open_entry(entry, parse_cdef, c_source)
    if hit is not None:
        stats["cache_hits"] += 1
        cache.debug_note(f"cache hit: loaded {entry.so} in "
                         f"{(time.perf_counter() - start) * 1000:.1f} ms")
        return Library(*hit, entry.so, entry.c, key, True, flags)
    ffi = parse_cdef()
    lib = _build(c_source, entry, compiler, flags, ffi)
    return Library(ffi, lib, entry.so, entry.c, key, False, flags)


def _build(c_source, entry, compiler, flags, ffi):
    """Compile to a temporary file, dlopen it, record its sha256, then rename it into
    place (so the record never names bytes that were not built)."""
    cache.write_atomic(entry.c, c_source)
    tmp_so, start = cache.temp_path(entry.so), time.perf_counter()
    try:
        result = _run_compiler(compiler, flags, entry.c, tmp_so)
        if result.returncode != 0:
            raise _error(f"C compiler failed (exit {result.returncode}) on {entry.c}\n"
                         f"command: {shlex.join(result.args)}\n{result.stderr.strip()}",
                         result.stderr, entry.c)
        digest = cache.file_sha256(tmp_so)
        try:
            lib = cache.load_verified(tmp_so, digest, ffi)
        except OSError as exc:
            raise _error(f"built {entry.so} but dlopen rejected it: {exc}{_asan_hint(flags)}",
                         "", entry.c) from exc
        if lib is None:
            raise _error(f"{tmp_so} changed while it was being loaded", "", entry.c)
        cache.publish(entry, digest, ffi)
        os.replace(tmp_so, entry.so)
        cache.debug_note(f"cache miss: built {entry.so} in {time.perf_counter() - start:.2f} s"
                         f" with: {shlex.join(result.args)}")
        return lib
    finally:
        cache.unlink(tmp_so)


def _asan_hint(flags) -> str:
    if not any(f.startswith("-fsanitize=") for f in flags):
        return ""
    return ("; a kernel built under ETCHPY_SANITIZE loads only into a process started "
            "with the sanitizer runtime preloaded, e.g. LD_PRELOAD=$(cc "
            "-print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0")


# --------------------------------------------------------------------------- flags

def _final_flags(compiler: Compiler, cache_dir: Path, openmp: bool) -> tuple[str, ...]:
    cflags = os.environ.get("CFLAGS")
    if cflags is not None:
        base = tuple(split_env("CFLAGS", cflags))
    else:
        base = next(t for t in FLAG_TIERS if t == PORTABLE_FLAGS
                    or _known_probe(compiler, t, "native", cache_dir) is not False)
    flags = REQUIRED_FLAGS + base
    if openmp and _probe(compiler, flags, "openmp", cache_dir):
        flags += OPENMP_FLAGS
    if os.environ.get("ETCHPY_SANITIZE", "") not in ("", "0"):
        flags += SANITIZE_FLAGS
    return flags


def _tier_to_blame(compiler: Compiler, flags, cache_dir: Path) -> bool:
    """After a failed build with a tier of FLAG_TIERS other than the last: does the
    compiler reject that tier itself (so the next one is worth a try)?"""
    if os.environ.get("CFLAGS") is not None:
        return False
    base = tuple(f for f in flags[len(REQUIRED_FLAGS):]
                 if f not in OPENMP_FLAGS and f not in SANITIZE_FLAGS)
    if base not in FLAG_TIERS[:-1]:
        return False
    return not _probe(compiler, base, "native", cache_dir)


def _run_compiler(compiler: Compiler, flags, c_path: Path, out_path: Path):
    cmd = [*compiler.command, *flags, "-o", str(out_path), str(c_path), *LINK_LIBS]
    stats["compiles"] += 1
    start = time.perf_counter()
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    except OSError as exc:
        raise _error(f"cannot run C compiler {cmd[0]}: {exc}; {INSTALL_HINT}",
                     "", c_path) from exc
    finally:
        _record_invocation(cmd, time.perf_counter() - start, c_path)


def _record_invocation(cmd: list[str], seconds: float, c_path: Path) -> None:
    """One line per compiler run: when it ended, the process, the seconds it took, the
    source's size in bytes, the command."""
    log = os.environ.get("ETCHPY_LOG_COMPILES")
    if log:
        try:
            size = c_path.stat().st_size
        except OSError:
            size = -1
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{time.time():.3f} pid={os.getpid()} seconds={seconds:.3f} "
                    f"bytes={size} {shlex.join(cmd)}\n")


# --------------------------------------------------------------------------- probes

def _probe(compiler: Compiler, flags, probe: str, cache_dir: Path) -> bool:
    """Does ``probe`` build and load with ``flags``? Remembered in-process and on disk
    (in every cache directory used, so that a later process finds it there too)."""
    known = _known_probe(compiler, flags, probe, cache_dir)
    if known is None:
        known = _run_probe(compiler, flags, probe, cache_dir)
        _probes[(compiler, tuple(flags), probe)] = known
    path = _probe_path(compiler, flags, probe, cache_dir)
    if not path.exists():          # also when the answer came from another directory
        cache.write_atomic(path, "1" if known else "0")
    return known


def _known_probe(compiler, flags, probe, cache_dir) -> bool | None:
    memo_key = (compiler, tuple(flags), probe)
    if memo_key not in _probes:
        try:
            text = _probe_path(compiler, flags, probe, cache_dir).read_text().strip()
        except OSError:
            return None
        if text not in ("0", "1"):
            return None
        _probes[memo_key] = text == "1"
    return _probes[memo_key]


def _probe_path(compiler, flags, probe, cache_dir: Path) -> Path:
    digest = cache.sha256([*compiler.command, compiler.version, *flags, probe, __version__])
    return cache_dir / f"probe-{digest[:16]}"


def _run_probe(compiler: Compiler, flags, probe: str, cache_dir: Path) -> bool:
    extra = OPENMP_FLAGS if probe == "openmp" else ()
    flags = tuple(flags) + extra
    if "-shared" not in flags:
        flags = REQUIRED_FLAGS + flags
    c_path = cache.temp_path(cache_dir / f"probe-{probe}", ".c")
    so_path = cache.temp_path(cache_dir / f"probe-{probe}", ".so")
    try:
        c_path.write_text(_PROBE_SOURCES[probe])
        if _run_compiler(compiler, flags, c_path, so_path).returncode != 0:
            return False
        import cffi                     # lazily, as in load
        ffi = cffi.FFI()
        ffi.cdef("int etchpy_probe(void);")
        try:
            lib = cache.dlopen(ffi, so_path)
            lib.etchpy_probe()
        except (OSError, AttributeError):
            return False
        return True  # never dlclose: unloading libgomp under its idle threads crashes
    finally:
        cache.unlink(c_path)
        cache.unlink(so_path)
