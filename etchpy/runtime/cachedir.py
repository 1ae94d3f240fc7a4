"""The kernel cache's directory: private to the user, or refused.

``$ETCHPY_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/etchpy``, else ``~/.cache/etchpy``;
created with mode 0o700. The shared objects in it are loaded as code, so it is
checked the way ssh checks ~/.ssh: an existing directory must be a real directory
(not a symbolic link) owned by the user and writable by nobody else (not by others,
and by its group only when that is the user's own private group), and each of its
ancestors must be owned by the user or root and be writable by nobody else unless it
has the sticky bit (as /tmp has). An explicit ``ETCHPY_CACHE_DIR`` that fails is
refused with a CompileError that says why and how to fix it; the default location
falls back to a fresh private directory for the process, with a warning.
"""
from __future__ import annotations

import os
import stat
import tempfile
import warnings
from pathlib import Path

from ..errors import CompileError

try:
    import grp
    import pwd
except ImportError:          # not a POSIX system: no ownership to check
    grp = pwd = None

__all__ = ["directory", "compile_error"]

_fallbacks: dict[tuple, Path] = {}
_checked: dict[Path, tuple] = {}    # a directory found private -> its _identity then
_FIX = ("fix: `chmod 700` a directory you own, or set ETCHPY_CACHE_DIR to a new path "
        "(etchpy creates it private)")


def compile_error(message: str, stderr: str = "", c_path: Path | None = None) -> CompileError:
    """A CompileError carrying the compiler's ``stderr`` and the C file (both may be empty)."""
    error = CompileError(message)
    error.stderr = stderr
    error.c_path = c_path
    return error


def directory() -> Path:
    """The cache directory: private to the user, or refused (see the module docstring)."""
    explicit = os.environ.get("ETCHPY_CACHE_DIR")
    path = Path(explicit).expanduser() if explicit else _default_path()
    known = _checked.get(path)
    if known is not None and known == _identity(path):
        return path
    problem = _make_private(path)
    if problem is None:
        _checked[path] = _identity(path)
        return path
    if explicit:
        raise compile_error(f"refusing the cache directory ETCHPY_CACHE_DIR={explicit}: "
                            f"{problem}. Its shared objects are loaded as code, so it "
                            f"must be private to you; {_FIX}")
    return _fallback(path, problem)


def _identity(path: Path):
    """What a directory found private keeps while it is the same one, private: its
    device, inode, mode and owner (None when it cannot be read). Its ancestors are
    checked once per process: each is owned by the user or by root, who alone can
    change its mode (the user's own acts are outside the threat model)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mode, st.st_uid)


def _default_path() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "etchpy"


def _fallback(path: Path, problem: str) -> Path:
    """A fresh private directory for this process, made once, with a warning."""
    fresh = _fallbacks.get((path, problem))
    if fresh is None or _make_private(fresh) is not None:
        fresh = Path(tempfile.mkdtemp(prefix="etchpy-cache-"))
        _fallbacks[(path, problem)] = fresh
        warnings.warn(f"etchpy: not using the kernel cache {path}: {problem}; this process "
                      f"uses the fresh private directory {fresh} instead ({_FIX})",
                      RuntimeWarning, stacklevel=3)
    return fresh


def _make_private(path: Path) -> str | None:
    """Create ``path`` (mode 0o700) if missing; None when it is safe, else why not."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(path, 0o700)
            os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask
        except FileExistsError:
            pass                   # made meanwhile by another process: check it below
        except OSError as exc:
            return f"it cannot be created ({exc})"
        try:
            st = os.lstat(path)
        except OSError as exc:
            return f"it cannot be inspected ({exc})"
    except OSError as exc:
        return f"it cannot be inspected ({exc})"
    return _unsafe(path, st)


def _unsafe(path: Path, st) -> str | None:
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "it exists and is not a directory"
    if not hasattr(os, "getuid"):
        return None
    uid = os.getuid()
    if st.st_uid != uid:
        return f"it is owned by uid {st.st_uid}, not by you (uid {uid})"
    problem = _writable_by_others(st, uid, sticky_ok=False)
    if problem:
        return f"it is {problem} (mode {stat.S_IMODE(st.st_mode):o})"
    for parent in path.resolve().parents:
        try:
            pst = os.stat(parent)
        except OSError as exc:
            return f"its parent {parent} cannot be inspected ({exc})"
        if pst.st_uid not in (uid, 0):
            return f"its parent {parent} is owned by uid {pst.st_uid}, not by you or root"
        problem = _writable_by_others(pst, uid, sticky_ok=True)
        if problem:
            return (f"its parent {parent} is {problem} "
                    f"(mode {stat.S_IMODE(pst.st_mode):o}), so others can replace it")
    return None


def _writable_by_others(st, uid: int, sticky_ok: bool) -> str | None:
    if sticky_ok and st.st_mode & stat.S_ISVTX:
        return None
    if st.st_mode & stat.S_IWOTH:
        return "writable by every user"
    if st.st_mode & stat.S_IWGRP and not _private_group(st.st_gid, uid):
        return f"writable by group {st.st_gid}, which is not your own private group"
    return None


def _private_group(gid: int, uid: int) -> bool:
    """Is ``gid`` the user's own group: their primary group, named after them, with no
    other member?"""
    if pwd is None:
        return False
    try:
        user, group = pwd.getpwuid(uid), grp.getgrgid(gid)
    except KeyError:
        return False
    return (gid == user.pw_gid and group.gr_name == user.pw_name
            and set(group.gr_mem) <= {user.pw_name})
