"""The on-disk kernel cache: its directory, keys, atomic publishing and loading entries.

The cache holds data, and one kind of code: the shared objects that etchpy built.
Nothing else read from it is executed or unpickled. Threat model: the directory
checks below stop other users (like ssh's checks of ~/.ssh); the content hashes
catch corruption and mix-ups (truncated, flipped or swapped files); tampering by
the same user, who can run code anyway, is out of scope.

The directory and its checks are in runtime.cachedir.

Layout
------
    <name>-<key[:16]>.c      the exact source that was compiled (kept when compiling fails)
    <name>-<key[:16]>.so     the shared object
    <name>-<key[:16]>.json   its record: the full key, the sha256 of the .so, and cffi's
                             parsed type tables for the cdef (plain data, so a warm load
                             neither parses the cdef nor imports pycparser)
    <name>-req-<request[:24]>.json   a kernel manifest: what one compile request produced
                             (plan, Imp program, C text and cdef per index type), so that
                             a new process asking for the same kernel skips planning,
                             lowering and rendering (see runtime.kernel)
    <name>.same-req-<request[:24]>.json   the size classes whose plan was that
                             kernel's own program (runtime.signature): not planned again
    probe-<hash[:16]>        a remembered compiler probe answer, "1" or "0" (runtime.build)
    compiler-<hash[:16]>     a remembered first line of a compiler's --version (runtime.compiler)
    .<file>.<pid>.<rand>.tmp an in-flight temporary, renamed into place when complete
                             (probe scratch files end in .c / .so and are deleted)

Records and manifests are JSON (runtime.jsondata) under a first line holding the
sha256 of the rest. A ``.so`` is loaded only when the bytes read match the sha256 of
its record, whose key must be the entry's (a symbolic link is not followed). Any mismatch
deletes the entry and the caller rebuilds it (a one-line note under ETCHPY_DEBUG).
Under ETCHPY_DEBUG every load from disk also prints one line (runtime.build): a cache
hit with the .so path and the load time, or a miss with the path, the build time and
the compiler command.

Key
---
``kernel_key`` is a sha256 over, length-prefixed and in this order: the C source, the
cdef, the compiler command (resolved path plus any extra words of ``CC``), the first
line of the compiler's ``--version``, the final flag list, the openmp request,
``etchpy.__version__`` and, where a flag targets the native CPU (``-march=native``), that
CPU's identity (runtime.host_cpu: a cache directory shared by hosts of other CPUs).  Anything that can change the machine code changes the key, so
an entry never needs invalidating; old entries may simply be deleted.

Publishing is atomic: files are written under a unique temporary name in the cache
directory and ``os.replace``-d into place, so concurrent processes building the same
kernel both succeed and nobody sees a half-written file.
"""
from __future__ import annotations

import ast
import hashlib
import io
import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path

import _cffi_backend

from . import cachedir, host_cpu, jsondata
from .cachedir import compile_error
from ..version import __version__

__all__ = ["Entry", "directory", "kernel_key", "open_entry", "publish", "load_verified",
           "dlopen", "read_manifest", "write_manifest",
           "compile_error", "debug_note"]

_keys: dict[tuple, str] = {}


def debug_note(message: str) -> None:
    """One line on stderr under ETCHPY_DEBUG."""
    if os.environ.get("ETCHPY_DEBUG"):
        print(f"etchpy: {message}", file=sys.stderr)


def directory() -> Path:
    """The cache directory: private to the user, or refused (runtime.cachedir)."""
    return cachedir.directory()


# --------------------------------------------------------------------------- keys

def kernel_key(c_source: str, cdef: str, compiler, flags: tuple[str, ...],
               openmp: bool, cpu: str | None = None) -> str:
    """The cache key of one build (see the module docstring); ``compiler`` has
    ``command`` and ``version``; ``cpu``: the CPU a native build targets (default
    this host's, runtime.host_cpu.isa_key: "" without a native flag)."""
    memo_key = (c_source, cdef, compiler, flags, openmp, cpu)
    key = _keys.get(memo_key)
    if key is None:
        isa = host_cpu.isa_key(flags) if cpu is None else cpu
        key = sha256([c_source, cdef, "\0".join(compiler.command), compiler.version,
                      "\0".join(flags), f"openmp={int(openmp)}", __version__]
                     + ([f"cpu={isa}"] if isa else []))
        _keys[memo_key] = key
    return key


def sha256(parts) -> str:
    """Hex sha256 over the length-prefixed UTF-8 encodings of ``parts``."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


# --------------------------------------------------------------------------- publishing

def temp_path(final: Path, suffix: str = ".tmp") -> Path:
    """A unique sibling of ``final``; compilers need a real suffix (.c) on sources."""
    return final.parent / f".{final.name}.{os.getpid()}.{secrets.token_hex(4)}{suffix}"


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write ``text`` to a temporary sibling, then rename it onto ``path``."""
    tmp = temp_path(path)
    try:
        if isinstance(text, bytes):
            tmp.write_bytes(text)
        else:
            tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        unlink(tmp)


def unlink(path: Path) -> None:
    """Remove ``path`` if it exists."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def write_data(path: Path, obj, defer=()) -> None:
    """Store ``obj`` (see runtime.jsondata) under a line holding the sha256 of its JSON;
    ``defer``: as for jsondata.dumps."""
    body = jsondata.dumps(obj, defer).encode("utf-8")
    write_atomic(path, hashlib.sha256(body).hexdigest().encode("ascii") + b"\n" + body)


def read_data(path: Path, defer=()):
    """The object ``write_data`` stored at ``path``, or None (missing, or failing its
    hash or the decoder); ``defer``: as for jsondata.loads."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    digest, _, body = data.partition(b"\n")
    if hashlib.sha256(body).hexdigest().encode("ascii") != digest:
        return None
    try:
        return jsondata.loads(body, defer)
    except jsondata.DataError:
        return None


# --------------------------------------------------------------------------- entries

@dataclass(frozen=True)
class Entry:
    """The files of one cached kernel build."""

    name: str
    key: str
    c: Path
    so: Path
    record: Path

    @classmethod
    def at(cls, cache_dir: Path, name: str, key: str) -> "Entry":
        stem = cache_dir / f"{name}-{key[:16]}"
        return cls(name, key, stem.with_suffix(".c"), stem.with_suffix(".so"),
                   stem.with_suffix(".json"))


def open_entry(entry: Entry, parse_cdef, c_source: str):
    """(ffi, lib) of a cached build that passes its checks, or None: absent, or failing
    a check (then deleted, and the caller rebuilds it). A missing .c file is restored."""
    if not entry.so.exists():
        return None
    record = read_data(entry.record)
    if not (isinstance(record, dict) and record.get("key") == entry.key
            and isinstance(record.get("so_sha256"), str)):
        return _discard(entry, "its record is missing or damaged")
    ffi = _ffi_from_tables(record.get("ffi"))
    try:
        lib = load_verified(entry.so, record["so_sha256"], ffi or parse_cdef())
    except OSError as exc:
        return _discard(entry, f"dlopen rejected it ({exc})")
    if lib is None:
        return _discard(entry, "its bytes do not match the sha256 recorded when it was built")
    if not entry.c.exists():
        write_atomic(entry.c, c_source)
    return ffi or parse_cdef(), lib


def _discard(entry: Entry, why: str) -> None:
    debug_note(f"cached {entry.so.name} is not loaded: {why}; rebuilding it")
    unlink(entry.so)
    unlink(entry.record)
    return None


def load_verified(so_path: Path, sha256_hex: str, ffi):
    """dlopen ``so_path`` if its bytes have the sha256 ``sha256_hex``, else None.

    The file is not read through a symbolic link. OSError when dlopen rejects it.
    (dlopen is given the path: the directory is private, and a path of the form
    /proc/self/fd/N would not do, as the loader takes a name it has seen before for
    the library it loaded then.)
    """
    if not has_sha256(so_path, sha256_hex):
        return None
    return dlopen(ffi, so_path)


def has_sha256(path: Path, sha256_hex: str) -> bool:
    """Whether the bytes of ``path``, read without following a symbolic link, have the
    sha256 ``sha256_hex`` (the check before any built object is loaded)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest() == sha256_hex


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def publish(entry: Entry, so_sha256: str, ffi) -> None:
    """Write the record of ``entry``: its key, the .so's sha256, ``ffi``'s type tables."""
    write_data(entry.record, {"key": entry.key, "so_sha256": so_sha256,
                              "ffi": _ffi_tables(ffi, entry)})


def dlopen(ffi, so_path):
    """dlopen, never to be unloaded: a library built with OpenMP leaves libgomp's
    worker threads parked in its code, and unloading it under them (when the last
    reference goes, or at interpreter exit) made a process crash now and then."""
    return ffi.dlopen(str(so_path), ffi.RTLD_NOW | getattr(ffi, "RTLD_NODELETE", 0))


def _ffi_tables(ffi, entry: Entry):
    """cffi's parsed form of ``ffi``'s cdef as plain data (the arguments of an
    out-of-line ABI-mode ``_cffi_backend.FFI``), or None when cffi offers none.

    They are read from the module text cffi emits, which is parsed here as a Python
    syntax tree of literals, never executed; the text itself is not stored.
    """
    try:
        ffi.set_source(f"_etchpy_cdef_{entry.key[:16]}", None, compiler_verbose=False)
        text = io.StringIO()
        ffi.emit_python_code(text)  # a file-like target: no file, no "generating" line
        call = next(node for node in ast.walk(ast.parse(text.getvalue()))
                    if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "FFI")
        tables = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
        tables["name"] = ast.literal_eval(call.args[0])
    except Exception:   # only a speed-up: a later process parses the cdef instead
        return None
    return None if "_includes" in tables else tables


def _ffi_from_tables(tables):
    """An out-of-line ABI-mode ffi from ``_ffi_tables``' data, or None."""
    if not isinstance(tables, dict):
        return None
    try:
        kwargs = {k: v for k, v in tables.items() if k != "name"}
        if not set(kwargs) <= _FFI_ARGUMENTS:
            return None
        return _cffi_backend.FFI(tables["name"], **kwargs)
    except Exception:
        return None


_FFI_ARGUMENTS = frozenset({"_version", "_types", "_globals", "_struct_unions", "_enums",
                            "_typenames"})


# --------------------------------------------------------------------------- manifests
# A manifest remembers what compiling one request produced (plan, Imp program, C
# text per index type), so that a new process asking for the same kernel skips
# planning, lowering and rendering; build.load then finds the .so. It is keyed by
# the request and by a fingerprint of etchpy's own files (runtime.fingerprint), so any change to the
# compiler makes old manifests unreachable. It is data (runtime.jsondata): reading
# one runs no code from the file.

def manifest_path(name: str, request: str) -> Path:
    return directory() / f"{name}-req-{request[:24]}.json"


def read_manifest(name: str, request: str, defer=()):
    """The dict stored for ``request``, or None (missing, damaged, or for another
    request); the values of its keys in ``defer`` are jsondata.Deferred."""
    obj = read_data(manifest_path(name, request), defer)
    return obj if isinstance(obj, dict) and obj.get("request") == request else None


def write_manifest(name: str, request: str, obj: dict, defer=()) -> None:
    """Best effort: a manifest only speeds up later processes. ``defer``: the keys a
    reader defers (read_manifest), written as text (jsondata.dumps)."""
    try:
        write_data(manifest_path(name, request), {**obj, "request": request}, defer)
    except (TypeError, ValueError, OSError, RecursionError):
        pass
