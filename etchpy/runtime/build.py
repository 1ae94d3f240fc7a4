"""Compile C source to a shared object with the system C compiler; load it with cffi.

    lib = load(c_source, "double dot(const double *, const double *, long);")
    lib.lib.dot(...)

Loading uses cffi's ABI mode (``ffi.dlopen``), so no Python headers are needed.

Cache layout
------------
Every artefact lives in one directory, created private to the user (mode 0o700):
``$ETCHPY_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/etchpy``, else ``~/.cache/etchpy``.

    <name>-<key[:16]>.c    the exact source that was compiled (kept when compiling fails)
    <name>-<key[:16]>.so   the shared object handed to ffi.dlopen
    <name>-<key[:16]>.py   the cdef pre-parsed by cffi (``ffi.emit_python_code``, cffi's
                           out-of-line ABI mode) plus an ``ETCHPY_KEY`` line; a later
                           process imports it and calls ``ffi.dlopen`` without parsing
                           the cdef, so pycparser is never imported on a warm load.  A
                           missing or unusable one is regenerated from the cdef.
    <name>-req-<key[:24]>.pkl   a kernel manifest: what one compile request produced (plan,
                           Imp program, C text and cdef per index type), keyed by the
                           request and a fingerprint of etchpy's files; a new process
                           asking for the same kernel skips planning, lowering and
                           rendering (see runtime.Kernel)
    probe-<hash[:16]>      a remembered compiler probe answer, "1" or "0"
                           (does -march=native work? does -fopenmp build and load?)
    .<file>.<pid>.<rand>.tmp   an in-flight temporary, renamed into place when complete
                           (probe scratch files end in .c / .so and are deleted)

Cache key
---------
``key`` is a sha256 over, length-prefixed and in this order: the C source, the cdef, the
compiler command (resolved path plus any extra words of ``CC``), the first line of the
compiler's ``--version``, the final flag list, the openmp request and
``etchpy.__version__``.  Anything that can change the machine code changes the key, so an
entry never needs invalidating; old entries may simply be deleted.

Publishing is atomic: files are written under a unique temporary name in the cache
directory and ``os.replace``-d into place, so concurrent processes building the same
kernel both succeed and nobody sees a half-written file.  A cached ``.so`` that dlopen
rejects is deleted and rebuilt once.

Within a process, ``load`` memoises its result by its arguments and the relevant
environment, so repeated calls cost a dictionary lookup.

Environment
-----------
``CC``                   compiler command (default: the first of cc, gcc, clang on PATH)
``CFLAGS``               optimisation flags, shlex-split (default: the first of
                         FLAG_TIERS the compiler accepts: ``-O3 -march=native
                         -mprefer-vector-width=256``, ``-O3 -march=native``, ``-O3``)
``ETCHPY_CACHE_DIR``     the cache directory (see above)
``ETCHPY_LOG_COMPILES``  a file to which one line per compiler invocation is appended

``stats`` counts compiler invocations (kernels and probes), disk-cache hits and memo hits.
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import io
import os
import pickle
import re
import secrets
import shlex
import shutil
import struct
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import cffi

from ..errors import CompileError

__all__ = ["Library", "load", "clear_memo", "cache_directory", "find_compiler", "stats"]

COMPILER_CANDIDATES = ("cc", "gcc", "clang")
# Optimisation flags, best first. A tier is used unless the compiler rejects it (a
# probe, remembered on disk), and then the next one. 256-bit vectors: on a core
# with AVX-512, gcc -march=native otherwise vectorises the in-order sum of a
# sparse row with 512-bit gathers, which is slower than the scalar loop for rows
# of ~10 entries (int64 SpMV n=2e4 in cache: 293 -> 266 us), and MTTKRP's rank
# loop ran 12% faster with 256-bit vectors (TTM 4%).
FLAG_TIERS = (("-O3", "-march=native", "-mprefer-vector-width=256"),
              ("-O3", "-march=native"),
              ("-O3",))
DEFAULT_FLAGS = FLAG_TIERS[0]
PORTABLE_FLAGS = FLAG_TIERS[-1]
REQUIRED_FLAGS = ("-shared", "-fPIC", "-std=c99")  # c99 has `restrict`
OPENMP_FLAGS = ("-fopenmp",)
LINK_LIBS = ("-lm",)
INSTALL_HINT = ("install a C compiler (e.g. `apt-get install gcc`, `dnf install gcc`, "
                "or `xcode-select --install` on macOS) or set CC to a compiler's path")

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
_keys: dict[tuple, str] = {}
_versions: dict[tuple[str, ...], str] = {}
_probes: dict[tuple, bool] = {}
_lock = threading.RLock()


@dataclass(frozen=True, eq=False)
class Library:
    """A loaded kernel library.

    ``from_cache`` describes the call that created this object (memo hits return the
    same object): True when that call ran no compiler for the kernel itself.
    """
    ffi: cffi.FFI = field(repr=False)
    lib: object = field(repr=False)
    path: Path
    c_path: Path
    key: str
    from_cache: bool
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Compiler:
    command: tuple[str, ...]  # resolved executable, then any extra words from CC
    version: str              # first line of `--version`


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
    memo_key = (c_source, cdef, name, bool(openmp), _env_signature())
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


def clear_memo() -> None:
    """Forget in-process results, so the next ``load`` consults the disk cache."""
    with _lock:
        _memo.clear()


def cache_directory() -> Path:
    """The cache directory, created with mode 0o700 if it does not exist."""
    path = _cache_directory_path()
    _ensure_private_dir(path)
    return path


# --------------------------------------------------------------------------- loading

_ENV_NAMES = ("CC", "CFLAGS", "ETCHPY_CACHE_DIR", "XDG_CACHE_HOME")


def _make_env_reader():
    """A fast reader of the variables that select a build, for the memo key.

    ``os.environ.get`` costs about 2 us per missing name (it raises KeyError inside);
    CPython keeps the live environment in the plain dict ``os.environ._data`` (updated
    by every ``os.environ`` assignment), which reads in tens of nanoseconds.
    """
    data = getattr(os.environ, "_data", None)
    encode = getattr(os.environ, "encodekey", None)
    if isinstance(data, dict) and encode is not None:
        get, (cc, cflags, cache, xdg) = data.get, map(encode, _ENV_NAMES)
        return lambda: (get(cc), get(cflags), get(cache), get(xdg))
    return lambda: tuple(map(os.environ.get, _ENV_NAMES))


_env_signature = _make_env_reader()


def _load_uncached(c_source: str, cdef: str, name: str, openmp: bool) -> Library:
    if not _NAME_RE.fullmatch(name):
        raise ValueError(f"kernel name {name!r} must match {_NAME_RE.pattern}")
    # The cdef is parsed (which imports pycparser, tens of milliseconds) only when the
    # cache holds no usable pre-parsed module for it; a bad cdef still fails before any
    # compiling, and before a missing compiler is reported.
    parsed: list = []

    def parse_cdef():
        if not parsed:
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
        key = _cache_key(c_source, cdef, compiler, flags, openmp)
        try:
            return _load_or_build(parse_cdef, c_source, cache_dir, name, key, compiler,
                                  flags)
        except CompileError:
            if not _tier_to_blame(compiler, flags, cache_dir):
                raise  # otherwise the next round uses the next tier of flags


def _load_or_build(parse_cdef, c_source, cache_dir, name, key, compiler,
                   flags) -> Library:
    c_path = cache_dir / f"{name}-{key[:16]}.c"
    so_path = cache_dir / f"{name}-{key[:16]}.so"
    py_path = cache_dir / f"{name}-{key[:16]}.py"
    if so_path.exists():
        ffi = _import_ffi(py_path, name, key)
        fresh_ffi = ffi is None
        try:
            if not _looks_complete(so_path):
                raise OSError(f"{so_path} is truncated or not a shared object")
            if fresh_ffi:
                ffi = parse_cdef()
            lib = _dlopen(ffi, so_path)
        except OSError:
            _unlink(so_path)  # corrupt entry: rebuild once, below
        else:
            if not c_path.exists():
                _write_atomic(c_path, c_source)
            if fresh_ffi:
                _write_ffi_module(ffi, py_path, name, key)
            stats["cache_hits"] += 1
            return Library(ffi, lib, so_path, c_path, key, True, flags)
    ffi = parse_cdef()
    _build(c_source, c_path, so_path, compiler, flags)
    try:
        lib = _dlopen(ffi, so_path)
    except OSError as exc:
        raise _error(f"built {so_path} but dlopen rejected it: {exc}", "", c_path) from exc
    _write_ffi_module(ffi, py_path, name, key)
    return Library(ffi, lib, so_path, c_path, key, False, flags)


def _ffi_module_name(name: str, key: str) -> str:
    return f"_etchpy_cdef_{re.sub(r'[^A-Za-z0-9_]', '_', name)}_{key[:16]}"


def _import_ffi(py_path: Path, name: str, key: str):
    """The out-of-line ABI-mode ``ffi`` stored at ``py_path``, or None if unusable."""
    if not py_path.exists():
        return None
    try:
        module_name = _ffi_module_name(name, key)
        spec = importlib.util.spec_from_file_location(
            module_name, py_path, loader=_NoBytecodeLoader(module_name, str(py_path)))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if getattr(module, "ETCHPY_KEY", None) != key:
            return None  # truncated, or not ours
        return module.ffi
    except Exception:  # corrupt entry: parse the cdef, regenerate the module
        return None


class _NoBytecodeLoader(importlib.machinery.SourceFileLoader):
    """Loads a cached cdef module without writing a __pycache__ into the cache dir."""

    def set_data(self, path, data, *, _mode=0o666):
        pass


def _write_ffi_module(ffi, py_path: Path, name: str, key: str) -> None:
    """Store ``ffi``'s parsed cdef as an out-of-line ABI-mode module (best effort)."""
    try:
        # set_source only names the module emitted here; ffi.dlopen is unaffected
        ffi.set_source(_ffi_module_name(name, key), None, compiler_verbose=False)
        text = io.StringIO()
        ffi.emit_python_code(text)  # a file-like target: no file, no "generating" line
        _write_atomic(py_path, f"{text.getvalue().rstrip()}\n\nETCHPY_KEY = {key!r}\n")
    except Exception:
        pass  # only a speed-up for later processes; they will parse the cdef instead


def _build(c_source, c_path, so_path, compiler, flags) -> None:
    _write_atomic(c_path, c_source)
    tmp_so = _temp_path(so_path)
    try:
        result = _run_compiler(compiler, flags, c_path, tmp_so)
        if result.returncode != 0:
            raise _error(f"C compiler failed (exit {result.returncode}) on {c_path}\n"
                         f"command: {shlex.join(result.args)}\n{result.stderr.strip()}",
                         result.stderr, c_path)
        os.replace(tmp_so, so_path)
    finally:
        _unlink(tmp_so)


# --------------------------------------------------------------------------- compiler

def find_compiler() -> Compiler:
    """The compiler named by ``CC``, else the first of cc, gcc, clang on PATH."""
    cc = os.environ.get("CC")
    if cc is not None and cc.strip():
        words = _split_env("CC", cc)
        exe = shutil.which(words[0])
        if exe is None:
            raise _error(f"CC={cc!r} is not an executable program; {INSTALL_HINT}")
        command = (exe, *words[1:])
    else:
        exe = next(filter(None, map(shutil.which, COMPILER_CANDIDATES)), None)
        if exe is None:
            raise _error(f"no C compiler found (looked for {', '.join(COMPILER_CANDIDATES)}"
                         f" on PATH); {INSTALL_HINT}")
        command = (exe,)
    return Compiler(command, _compiler_version(command))


def _split_env(variable: str, value: str) -> list[str]:
    try:
        return shlex.split(value)
    except ValueError as exc:
        raise _error(f"cannot parse {variable}={value!r}: {exc}") from exc


def _compiler_version(command: tuple[str, ...]) -> str:
    version = _versions.get(command)
    if version is None:
        try:
            result = subprocess.run([*command, "--version"], capture_output=True,
                                    text=True, errors="replace", timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise _error(f"cannot run C compiler {command[0]}: {exc}; {INSTALL_HINT}") from exc
        lines = (result.stdout + "\n" + result.stderr).strip().splitlines()
        version = lines[0].strip() if lines else f"unknown (exit {result.returncode})"
        _versions[command] = version
    return version


def _final_flags(compiler: Compiler, cache_dir: Path, openmp: bool) -> tuple[str, ...]:
    cflags = os.environ.get("CFLAGS")
    if cflags is not None:
        base = tuple(_split_env("CFLAGS", cflags))
    else:
        base = next(t for t in FLAG_TIERS if t == PORTABLE_FLAGS
                    or _known_probe(compiler, t, "native", cache_dir) is not False)
    flags = REQUIRED_FLAGS + base
    if openmp and _probe(compiler, flags, "openmp", cache_dir):
        flags += OPENMP_FLAGS
    return flags


def _tier_to_blame(compiler: Compiler, flags, cache_dir: Path) -> bool:
    """After a failed build with a tier of FLAG_TIERS other than the last: does the
    compiler reject that tier itself (so the next one is worth a try)?"""
    if os.environ.get("CFLAGS") is not None:
        return False
    base = tuple(f for f in flags[len(REQUIRED_FLAGS):] if f not in OPENMP_FLAGS)
    if base not in FLAG_TIERS[:-1]:
        return False
    return not _probe(compiler, base, "native", cache_dir)


def _run_compiler(compiler: Compiler, flags, c_path: Path, out_path: Path):
    cmd = [*compiler.command, *flags, "-o", str(out_path), str(c_path), *LINK_LIBS]
    _record_invocation(cmd)
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    except OSError as exc:
        raise _error(f"cannot run C compiler {cmd[0]}: {exc}; {INSTALL_HINT}",
                     "", c_path) from exc


def _record_invocation(cmd: list[str]) -> None:
    stats["compiles"] += 1
    log = os.environ.get("ETCHPY_LOG_COMPILES")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{time.time():.3f} pid={os.getpid()} {shlex.join(cmd)}\n")


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
        _write_atomic(path, "1" if known else "0")
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
    digest = _sha256([*compiler.command, compiler.version, *flags, probe, _etchpy_version()])
    return cache_dir / f"probe-{digest[:16]}"


def _run_probe(compiler: Compiler, flags, probe: str, cache_dir: Path) -> bool:
    extra = OPENMP_FLAGS if probe == "openmp" else ()
    flags = tuple(flags) + extra
    if "-shared" not in flags:
        flags = REQUIRED_FLAGS + flags
    c_path = _temp_path(cache_dir / f"probe-{probe}", ".c")
    so_path = _temp_path(cache_dir / f"probe-{probe}", ".so")
    try:
        c_path.write_text(_PROBE_SOURCES[probe])
        if _run_compiler(compiler, flags, c_path, so_path).returncode != 0:
            return False
        ffi = cffi.FFI()
        ffi.cdef("int etchpy_probe(void);")
        try:
            lib = _dlopen(ffi, so_path)
            lib.etchpy_probe()
        except (OSError, AttributeError):
            return False
        return True  # never dlclose: unloading libgomp under its idle threads crashes
    finally:
        _unlink(c_path)
        _unlink(so_path)


# --------------------------------------------------------------------------- cache files

def _cache_directory_path() -> Path:
    explicit = os.environ.get("ETCHPY_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "etchpy"


def _ensure_private_dir(path: Path) -> None:
    if path.is_dir():
        return  # existing: leave its permissions alone
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(path, 0o700)
        os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask
    except FileExistsError:
        if not path.is_dir():
            raise _error(f"cache path {path} exists and is not a directory; "
                         "set ETCHPY_CACHE_DIR to a directory") from None
    except OSError as exc:
        raise _error(f"cannot create cache directory {path}: {exc}; "
                     "set ETCHPY_CACHE_DIR to a writable directory") from exc


def _dlopen(ffi, so_path):
    """dlopen, never to be unloaded: a library built with OpenMP leaves libgomp's
    worker threads parked in its code, and unloading it under them (when the last
    reference goes, or at interpreter exit) made a process crash now and then."""
    return ffi.dlopen(str(so_path), ffi.RTLD_NOW | getattr(ffi, "RTLD_NODELETE", 0))


def _looks_complete(path: Path) -> bool:
    """Cheap sanity check before dlopen, which can crash (SIGBUS) on a truncated file.

    For ELF and 64-bit Mach-O, every header table and file-backed segment must lie
    inside the file; other formats are left to dlopen.
    """
    data = path.read_bytes()
    try:
        if data[:4] == b"\x7fELF":
            return _elf_complete(data)
        if data[:4] == b"\xcf\xfa\xed\xfe":
            return _macho64_complete(data)
    except (struct.error, IndexError):
        return False
    return len(data) > 0


def _elf_complete(data: bytes) -> bool:
    wide, order = data[4] == 2, "<" if data[5] == 1 else ">"
    header = order + ("16xHHIQQQIHHHHHH" if wide else "16xHHIIIIIHHHHHH")
    (_, _, _, _, phoff, shoff, _, ehsize, phentsize, phnum, shentsize,
     shnum, _) = struct.unpack_from(header, data)
    size = len(data)
    if ehsize > size or phoff + phnum * phentsize > size or shoff + shnum * shentsize > size:
        return False
    segment = order + ("8xQ16xQ" if wide else "4xI8xI")
    for i in range(phnum):
        offset, filesize = struct.unpack_from(segment, data, phoff + i * phentsize)
        if offset + filesize > size:
            return False
    return True


def _macho64_complete(data: bytes) -> bool:
    ncmds, = struct.unpack_from("<16xI", data)
    position = 32
    for _ in range(ncmds):
        cmd, cmdsize = struct.unpack_from("<II", data, position)
        if cmd == 0x19:  # LC_SEGMENT_64
            fileoff, filesize = struct.unpack_from("<QQ", data, position + 40)
            if fileoff + filesize > len(data):
                return False
        position += max(cmdsize, 8)
    return True


def _cache_key(c_source, cdef, compiler: Compiler, flags, openmp: bool) -> str:
    memo_key = (c_source, cdef, compiler, flags, openmp)
    key = _keys.get(memo_key)
    if key is None:
        key = _sha256([c_source, cdef, "\0".join(compiler.command), compiler.version,
                       "\0".join(flags), f"openmp={int(openmp)}", _etchpy_version()])
        _keys[memo_key] = key
    return key


def _sha256(parts) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _etchpy_version() -> str:
    from .. import __version__  # late: etchpy/__init__ defines it after its imports
    return __version__


def _temp_path(final: Path, suffix: str = ".tmp") -> Path:
    """A unique sibling of ``final``; compilers need a real suffix (.c) on sources."""
    return final.parent / f".{final.name}.{os.getpid()}.{secrets.token_hex(4)}{suffix}"


def _write_atomic(path: Path, text: str | bytes) -> None:
    tmp = _temp_path(path)
    try:
        if isinstance(text, bytes):
            tmp.write_bytes(text)
        else:
            tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        _unlink(tmp)


# ------------------------------------------------------------------ kernel manifests
# A manifest remembers what compiling one request produced (plan, Imp program, C
# text per index type), so that a new process asking for the same kernel skips
# planning, lowering and rendering; build.load then finds the .so. It is keyed by
# the request and by a fingerprint of etchpy's own files, so any change to the
# compiler makes old manifests unreachable. It lives in the private cache
# directory beside the shared objects that dlopen trusts anyway.

_fingerprint: list = []


def compiler_fingerprint() -> str:
    """Hash of the (path, size, mtime) of every file of the etchpy package and its
    formats and templates (computed once per process)."""
    if not _fingerprint:
        root = Path(__file__).resolve().parent
        h = hashlib.sha256()
        dirs = [root, root / "formats", root / "codegen_templates"]
        for pkg in ("formats", "codegen_templates"):
            spec = importlib.util.find_spec(f"etchpy.{pkg}")
            if spec is not None and spec.submodule_search_locations:
                dirs += [Path(d) for d in spec.submodule_search_locations]
        for d in sorted(set(dirs)):
            if not d.is_dir():
                continue
            for f in sorted(d.iterdir()):
                if f.suffix in (".py", ".j2"):
                    st = f.stat()
                    h.update(f"{f}|{st.st_size}|{st.st_mtime_ns}\n".encode())
        _fingerprint.append(h.hexdigest())
    return _fingerprint[0]


def manifest_path(name: str, request: str) -> Path:
    return cache_directory() / f"{name}-req-{request[:24]}.pkl"


def read_manifest(name: str, request: str):
    """The object stored for `request`, or None (missing, unreadable, or stale)."""
    try:
        data = manifest_path(name, request).read_bytes()
        obj = pickle.loads(data)
    except Exception:        # missing, truncated, or from an incompatible version
        return None
    return obj if isinstance(obj, dict) and obj.get("request") == request else None


def write_manifest(name: str, request: str, obj: dict) -> None:
    """Best effort: a manifest only speeds up later processes."""
    try:
        _write_atomic(manifest_path(name, request),
                      pickle.dumps({**obj, "request": request}, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:
        pass


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _error(message: str, stderr: str = "", c_path: Path | None = None) -> CompileError:
    error = CompileError(message)
    error.stderr = stderr
    error.c_path = c_path
    return error
