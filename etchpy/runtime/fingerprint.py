"""etchpy's own fingerprint: what makes a kernel manifest of an older compiler unreachable.

A manifest (runtime.cache) is keyed by the request and by ``compiler_fingerprint()``:
a sha256 of the (path, size, mtime) of every .py and .j2 file of the package, its
subpackages, formats and templates. Any edit of any of them changes the fingerprint
(an edit writes the file, which sets its mtime), so no old manifest is read again.

It is computed once per process: one directory scan and one ``stat`` per file.

    fingerprint.compiler_fingerprint() -> "3f2a..."  (64 hex digits)
    fingerprint.package_files()        -> every file it covers, sorted
    fingerprint.stats_of(paths)        -> their (path, size, mtime) as hashed
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

__all__ = ["compiler_fingerprint", "package_files", "stats_of", "template_folder"]

_SUFFIXES = (".py", ".j2")
_stats: list[tuple[str, int, int]] = []       # once per process, sorted by path
_fingerprint: list[str] = []
_folders: dict[str, list[Path]] = {}          # subpackage -> its folders, once per process


def compiler_fingerprint() -> str:
    """Hash of the (path, size, mtime) of every file of `package_files` (once per
    process)."""
    if not _fingerprint:
        text = "".join([f"{path}|{size}|{mtime}\n" for path, size, mtime in _package_stats()])
        _fingerprint.append(hashlib.sha256(text.encode()).hexdigest())
    return _fingerprint[0]


def package_files() -> list[Path]:
    """Every .py and .j2 file of the etchpy package, its subpackages, formats and
    templates, sorted."""
    return [Path(path) for path, _, _ in _package_stats()]


def stats_of(paths) -> tuple:
    """The (path, size, mtime in ns) the fingerprint hashed for each of ``paths``
    (files of `package_files`), in their order: a key part for what is made from
    those files alone (the call binder from its templates) that reads none of them."""
    known = {path: (path, size, mtime) for path, size, mtime in _package_stats()}
    return tuple(known[str(path)] for path in paths)


def template_folder() -> Path:
    """The folder of codegen_templates (found without importing it)."""
    return _subpackage_folders("codegen_templates")[0]


def _package_folders() -> list[Path]:
    """etchpy's folder, then formats' and codegen_templates' (separate folders when
    not installed)."""
    return [Path(__file__).resolve().parent.parent, *_subpackage_folders("formats"),
            *_subpackage_folders("codegen_templates")]


def _subpackage_folders(pkg: str) -> list[Path]:
    """The folders of etchpy.<pkg> (found without importing it; once per process)."""
    found = _folders.get(pkg)
    if found is None:
        spec = importlib.util.find_spec(f"etchpy.{pkg}")
        found = _folders[pkg] = ([Path(d) for d in spec.submodule_search_locations]
                                 if spec is not None and spec.submodule_search_locations
                                 else [])
    return found


def _package_stats() -> list[tuple[str, int, int]]:
    """(path, size, mtime in ns) of every file of `package_files`, sorted by path."""
    if not _stats:
        found: dict[str, tuple] = {}
        for folder in _package_folders():
            _scan(str(folder), found)
        _stats.extend(sorted(found.values()))
    return _stats


def _scan(folder: str, found: dict) -> None:
    """Add the .py and .j2 files under `folder` to `found`, not descending into
    __pycache__ (nothing of ours lives there: a walk through its bytecode took most
    of a warm load's fingerprint)."""
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir():
                if entry.name != "__pycache__":
                    _scan(entry.path, found)
            elif entry.name.endswith(_SUFFIXES):
                st = entry.stat()
                found[entry.path] = (entry.path, st.st_size, st.st_mtime_ns)
