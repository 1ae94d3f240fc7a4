"""The instruction set a `-march=native` build targets, as a part of its disk key.

A shared object built with ``-march=native`` (runtime.build's first flag tiers)
runs only on CPUs with the features of the one that built it. The cache directory
can be shared by hosts of different CPUs (a home directory on a network file
system, a container image carrying its cache), so the key of such a build names
the builder's CPU: a host of another CPU misses and builds its own, instead of
loading code that may stop with an illegal instruction.

    isa_key(flags)   -> "" where no flag asks for the native CPU, else `cpu_identity()`
    cpu_identity()   -> the first processor's identity lines of /proc/cpuinfo (vendor,
                        family, model, stepping and the feature flags on x86; implementer,
                        architecture, variant, part and features on Arm), "" where
                        the file cannot be read (another OS: its key is unchanged)

Read once per process (one block of /proc/cpuinfo).
"""
from __future__ import annotations

import functools

__all__ = ["isa_key", "cpu_identity", "identity_of"]

_FIELDS = ("vendor_id", "cpu family", "model", "stepping", "flags",
           "CPU implementer", "CPU architecture", "CPU variant", "CPU part", "Features")


def isa_key(flags) -> str:
    """`cpu_identity()` when a flag targets the native CPU (`-march=native`,
    `-mcpu=native`, `-mtune=native`), else ""."""
    return cpu_identity() if any(f.endswith("=native") for f in flags) else ""


@functools.cache
def cpu_identity() -> str:
    """The identity lines of this host's first processor (see `identity_of`)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            return identity_of(f)
    except OSError:
        return ""


def identity_of(lines) -> str:
    """The `_FIELDS` lines of the first processor block of a /proc/cpuinfo text
    (an iterable of lines), normalised ("key: value" joined by newlines)."""
    found: dict[str, str] = {}
    for line in lines:
        if not line.strip():
            if found:
                break
            continue
        key, _, value = line.partition(":")
        key = key.strip()
        if key in _FIELDS and key not in found:
            found[key] = " ".join(value.split())
    return "\n".join(f"{k}: {found[k]}" for k in _FIELDS if k in found)
