"""The on-disk kernel cache: its directory, keys, atomic publishing and loading entries.

Layout
------
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
                           rendering (see runtime.kernel)
    probe-<hash[:16]>      a remembered compiler probe answer, "1" or "0" (runtime.build)
    .<file>.<pid>.<rand>.tmp   an in-flight temporary, renamed into place when complete
                           (probe scratch files end in .c / .so and are deleted)

Key
---
``kernel_key`` is a sha256 over, length-prefixed and in this order: the C source, the
cdef, the compiler command (resolved path plus any extra words of ``CC``), the first
line of the compiler's ``--version``, the final flag list, the openmp request and
``etchpy.__version__``.  Anything that can change the machine code changes the key, so
an entry never needs invalidating; old entries may simply be deleted.

Publishing is atomic: files are written under a unique temporary name in the cache
directory and ``os.replace``-d into place, so concurrent processes building the same
kernel both succeed and nobody sees a half-written file.  A cached ``.so`` that fails
the completeness check or that dlopen rejects is deleted (``open_entry`` returns None,
and the caller rebuilds it).
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
import struct
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..errors import CompileError

__all__ = ["Entry", "directory", "kernel_key", "open_entry", "publish_ffi", "dlopen",
           "compiler_fingerprint", "read_manifest", "write_manifest", "compile_error"]

_keys: dict[tuple, str] = {}
_fingerprint: list[str] = []


def compile_error(message: str, stderr: str = "", c_path: Path | None = None) -> CompileError:
    """A CompileError carrying the compiler's ``stderr`` and the C file (both may be empty)."""
    error = CompileError(message)
    error.stderr = stderr
    error.c_path = c_path
    return error


# --------------------------------------------------------------------------- directory

def directory() -> Path:
    """The cache directory, created with mode 0o700 if it does not exist."""
    path = _directory_path()
    _ensure_private_dir(path)
    return path


def _directory_path() -> Path:
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
            raise compile_error(f"cache path {path} exists and is not a directory; "
                                "set ETCHPY_CACHE_DIR to a directory") from None
    except OSError as exc:
        raise compile_error(f"cannot create cache directory {path}: {exc}; "
                            "set ETCHPY_CACHE_DIR to a writable directory") from exc


# --------------------------------------------------------------------------- keys

def kernel_key(c_source: str, cdef: str, compiler, flags: tuple[str, ...],
               openmp: bool) -> str:
    """The cache key of one build (see the module docstring); ``compiler`` has
    ``command`` and ``version``."""
    memo_key = (c_source, cdef, compiler, flags, openmp)
    key = _keys.get(memo_key)
    if key is None:
        key = sha256([c_source, cdef, "\0".join(compiler.command), compiler.version,
                      "\0".join(flags), f"openmp={int(openmp)}", __version__])
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


# --------------------------------------------------------------------------- entries

@dataclass(frozen=True)
class Entry:
    """The files of one cached kernel build."""

    name: str
    key: str
    c: Path
    so: Path
    py: Path

    @classmethod
    def at(cls, cache_dir: Path, name: str, key: str) -> "Entry":
        stem = cache_dir / f"{name}-{key[:16]}"
        return cls(name, key, stem.with_suffix(".c"), stem.with_suffix(".so"),
                   stem.with_suffix(".py"))


def open_entry(entry: Entry, parse_cdef, c_source: str):
    """(ffi, lib) of a usable cached build, or None (absent, or corrupt and now deleted).

    The ffi comes from the pre-parsed module when it is usable, else from
    ``parse_cdef()``; a missing .c or .py file is restored.
    """
    if not entry.so.exists():
        return None
    ffi = _import_ffi(entry)
    fresh_ffi = ffi is None
    try:
        if not looks_complete(entry.so):
            raise OSError(f"{entry.so} is truncated or not a shared object")
        if fresh_ffi:
            ffi = parse_cdef()
        lib = dlopen(ffi, entry.so)
    except OSError:
        unlink(entry.so)  # corrupt entry: the caller rebuilds it
        return None
    if not entry.c.exists():
        write_atomic(entry.c, c_source)
    if fresh_ffi:
        publish_ffi(ffi, entry)
    return ffi, lib


def dlopen(ffi, so_path: Path):
    """dlopen, never to be unloaded: a library built with OpenMP leaves libgomp's
    worker threads parked in its code, and unloading it under them (when the last
    reference goes, or at interpreter exit) made a process crash now and then."""
    return ffi.dlopen(str(so_path), ffi.RTLD_NOW | getattr(ffi, "RTLD_NODELETE", 0))


def _ffi_module_name(entry: Entry) -> str:
    return f"_etchpy_cdef_{re.sub(r'[^A-Za-z0-9_]', '_', entry.name)}_{entry.key[:16]}"


def _import_ffi(entry: Entry):
    """The out-of-line ABI-mode ``ffi`` stored at ``entry.py``, or None if unusable."""
    if not entry.py.exists():
        return None
    try:
        module_name = _ffi_module_name(entry)
        spec = importlib.util.spec_from_file_location(
            module_name, entry.py, loader=_NoBytecodeLoader(module_name, str(entry.py)))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if getattr(module, "ETCHPY_KEY", None) != entry.key:
            return None  # truncated, or not ours
        return module.ffi
    except Exception:  # corrupt entry: parse the cdef, regenerate the module
        return None


class _NoBytecodeLoader(importlib.machinery.SourceFileLoader):
    """Loads a cached cdef module without writing a __pycache__ into the cache dir."""

    def set_data(self, path, data, *, _mode=0o666):
        pass


def publish_ffi(ffi, entry: Entry) -> None:
    """Store ``ffi``'s parsed cdef as an out-of-line ABI-mode module (best effort)."""
    try:
        # set_source only names the module emitted here; ffi.dlopen is unaffected
        ffi.set_source(_ffi_module_name(entry), None, compiler_verbose=False)
        text = io.StringIO()
        ffi.emit_python_code(text)  # a file-like target: no file, no "generating" line
        write_atomic(entry.py, f"{text.getvalue().rstrip()}\n\nETCHPY_KEY = {entry.key!r}\n")
    except Exception:
        pass  # only a speed-up for later processes; they will parse the cdef instead


# --------------------------------------------------------------------------- file checks

def looks_complete(path: Path) -> bool:
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


# --------------------------------------------------------------------------- manifests
# A manifest remembers what compiling one request produced (plan, Imp program, C
# text per index type), so that a new process asking for the same kernel skips
# planning, lowering and rendering; build.load then finds the .so. It is keyed by
# the request and by a fingerprint of etchpy's own files, so any change to the
# compiler makes old manifests unreachable. It lives in the private cache
# directory beside the shared objects that dlopen trusts anyway.

def compiler_fingerprint() -> str:
    """Hash of the (path, size, mtime) of every file of `package_files` (computed once
    per process)."""
    if not _fingerprint:
        h = hashlib.sha256()
        for f in package_files():
            st = f.stat()
            h.update(f"{f}|{st.st_size}|{st.st_mtime_ns}\n".encode())
        _fingerprint.append(h.hexdigest())
    return _fingerprint[0]


def package_files() -> list[Path]:
    """Every .py and .j2 file of the etchpy package, its subpackages, formats and
    templates, sorted."""
    folders = {Path(__file__).resolve().parent.parent}
    for pkg in ("formats", "codegen_templates"):   # separate folders when not installed
        spec = importlib.util.find_spec(f"etchpy.{pkg}")
        if spec is not None and spec.submodule_search_locations:
            folders.update(Path(d) for d in spec.submodule_search_locations)
    return sorted({f for d in folders for f in d.rglob("*") if f.suffix in (".py", ".j2")})


def manifest_path(name: str, request: str) -> Path:
    return directory() / f"{name}-req-{request[:24]}.pkl"


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
        write_atomic(manifest_path(name, request),
                     pickle.dumps({**obj, "request": request}, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:
        pass
