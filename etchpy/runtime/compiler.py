"""The C compiler: which one (`CC`, else the first of cc, gcc, clang on PATH) and
its version, the first line of `--version`, which keys the kernel cache.

Running `--version` costs a process start (about 3 ms), so the answer for a
one-word command is also remembered in the cache directory, in a file named by
the resolved executable's path, device, inode, size and mtime
(`compiler-<hash[:16]>`): a new process that loads a known kernel starts no
compiler at all. Replacing or upgrading the executable changes its name.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import cache
from .cache import compile_error as _error
from ..errors import CompileError
from ..version import __version__

__all__ = ["COMPILER_CANDIDATES", "INSTALL_HINT", "Compiler", "find_compiler", "forget_versions",
           "split_env"]

COMPILER_CANDIDATES = ("cc", "gcc", "clang")
INSTALL_HINT = ("install a C compiler (e.g. `apt-get install gcc`, `dnf install gcc`, "
                "or `xcode-select --install` on macOS) or set CC to a compiler's path")

_versions: dict[tuple[str, ...], str] = {}
_found: dict[tuple, Compiler] = {}    # (CC, PATH) -> the compiler they name


@dataclass(frozen=True)
class Compiler:
    command: tuple[str, ...]  # resolved executable, then any extra words from CC
    version: str              # first line of `--version`


def find_compiler() -> Compiler:
    """The compiler named by ``CC``, else the first of cc, gcc, clang on PATH;
    looked up once per process for each value of CC and PATH (a lookup searches
    PATH, about 0.15 ms a word)."""
    cc, path = os.environ.get("CC"), os.environ.get("PATH")
    found = _found.get((cc, path))
    if found is None:
        found = _found[(cc, path)] = _find(cc)
    return found


def _find(cc: str | None) -> Compiler:
    if cc is not None and cc.strip():
        words = split_env("CC", cc)
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


def forget_versions() -> None:
    """Forget the compilers found and versions asked in this process (the records
    on disk stay), as a new process starts."""
    _versions.clear()
    _found.clear()


def split_env(variable: str, value: str) -> list[str]:
    try:
        return shlex.split(value)
    except ValueError as exc:
        raise _error(f"cannot parse {variable}={value!r}: {exc}") from exc


def _compiler_version(command: tuple[str, ...]) -> str:
    """The first line of `command --version`: once per process, and remembered on
    disk by the executable's identity (see `_version_path`), so that a new process
    loading a known kernel starts no compiler."""
    version = _versions.get(command)
    if version is None:
        remembered = _version_path(command)
        version = _read_version(remembered) if remembered is not None else None
        if version is None:
            version = _run_version(command)
            if remembered is not None:
                try:
                    cache.write_atomic(remembered, version)
                except OSError:
                    pass
        _versions[command] = version
    return version


def _version_path(command: tuple[str, ...]) -> Path | None:
    """Where a one-word compiler command's version is remembered: a file of the
    cache named by the executable's path and by the device, inode, size and mtime
    of the file it resolves to (replacing or upgrading it changes them); None for
    a command of several words (`ccache gcc`: the version is the wrapped
    compiler's) or no usable cache."""
    if len(command) != 1:
        return None
    try:
        st = os.stat(command[0])        # follows links: the identity of what runs
        folder = cache.directory()
    except (OSError, CompileError):
        return None
    digest = cache.sha256([command[0], str(st.st_dev), str(st.st_ino), str(st.st_size),
                           str(st.st_mtime_ns), __version__])
    return folder / f"compiler-{digest[:16]}"


def _read_version(path: Path) -> str | None:
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return None
    return text if text and "\n" not in text and len(text) < 500 else None


def _run_version(command: tuple[str, ...]) -> str:
    try:
        result = subprocess.run([*command, "--version"], capture_output=True,
                                text=True, errors="replace", timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _error(f"cannot run C compiler {command[0]}: {exc}; {INSTALL_HINT}") from exc
    lines = (result.stdout + "\n" + result.stderr).strip().splitlines()
    return lines[0].strip() if lines else f"unknown (exit {result.returncode})"
