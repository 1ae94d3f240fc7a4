"""CPython extension modules built from etchpy's templates into the kernel cache:
runtime.binder's call binder and graph.binder's BFS call. One build and load for
both, under the cache's checks (runtime.cache: a record holding the module's
sha256, checked before it is loaded).

    mod = extension.built(name, key_parts, source)    # None: not here (see `built`)
    module = extension.Once(make)       # module(): make() once per process; .kept()
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import sysconfig
import threading

import numpy as np

from . import cache
from .compiler import find_compiler
from ..errors import CompileError
from ..version import __version__


class Once:
    """`make()`'s value (None too), made on the first call under a lock and kept for
    the process; `kept()` reads it without making it (None before)."""

    def __init__(self, make):
        self._make, self._lock, self._kept = make, threading.Lock(), []

    def __call__(self):
        if self._kept:
            return self._kept[0]
        with self._lock:
            if not self._kept:
                self._kept.append(self._make())
        return self._kept[0]

    def kept(self):
        return self._kept[0] if self._kept else None


def built(name: str, key_parts: list, source):
    """Extension module `name` from the cache, or built into it from `source()` (a
    C text, rendered only for a build); None without a compiler or Python's headers,
    or when the build fails. Its key: `key_parts` (the templates' stats and the
    like), the compiler and flags, the interpreter by its version and prefix (not by
    its headers' folder: sysconfig computes that only where a build needs it, so a
    warm load asks it nothing), numpy's and etchpy's versions. A cached module is
    loaded only when its bytes have the recorded sha256 (else removed: None)."""
    try:
        compiler = find_compiler()
    except CompileError:
        return None
    flags = ("-O2", "-shared", "-fPIC", f"-I{np.get_include()}")
    key = cache.sha256([*key_parts, *compiler.command, compiler.version, *flags,
                        sys.version, sys.base_prefix, sys.abiflags, np.__version__,
                        __version__])
    entry = cache.Entry.at(cache.directory(), name, key)
    record = cache.read_data(entry.record)
    if not (isinstance(record, dict) and record.get("key") == key and entry.so.exists()):
        include = sysconfig.get_paths().get("include")
        if not include or not os.path.exists(os.path.join(include, "Python.h")):
            return None
        if not _build(name, source(), entry, compiler, (*flags, f"-I{include}")):
            return None
        record = cache.read_data(entry.record)
    return _load(name, entry, record["so_sha256"]) if isinstance(record, dict) else None


def _build(name, source, entry, compiler, flags) -> bool:
    """Compile the module into the cache (a temporary, renamed into place once its
    record is written); False when the compiler fails (no headers, ...)."""
    cache.write_atomic(entry.c, source)
    tmp = cache.temp_path(entry.so, ".so")
    try:
        done = subprocess.run([*compiler.command, *flags, str(entry.c), "-o", str(tmp)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            cache.debug_note(f"{name} did not build: {done.stderr.strip()[:400]}")
            return False
        cache.write_data(entry.record, {"key": entry.key,
                                        "so_sha256": cache.file_sha256(tmp)})
        os.replace(tmp, entry.so)
        return True
    finally:
        cache.unlink(tmp)


def _load(name, entry, sha256_hex):
    """The module at entry.so when its bytes have the recorded sha256, else None."""
    if not cache.has_sha256(entry.so, sha256_hex):
        cache.unlink(entry.so)
        return None
    loader = importlib.machinery.ExtensionFileLoader(name, str(entry.so))
    spec = importlib.util.spec_from_file_location(name, str(entry.so), loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod
