"""The generated C of every benchmark kernel, written to a folder, and a comparison
of two such folders up to renaming.

    python -m bench.c_snapshot write DIR      # one .c file per kernel and variant
    python -m bench.c_snapshot compare OLD NEW

A refactoring of the compiler that keeps every kernel's C the same up to renaming
keeps its speed; `compare` lists the kernels whose C differs in more than names.
Each kernel is built for every input size (the export path), for int32 and int64
indices, on one thread and on two. Only the public API is used, so a snapshot can
be written from any commit.
"""
from __future__ import annotations

import argparse
import pathlib
import re
import sys

import etchpy as ep

from . import exprs

C_WORDS = frozenset("""auto break case char const continue default do double else enum extern
float for goto if inline int long register restrict return short signed sizeof static struct
switch typedef union unsigned void volatile while bool true false NULL int8_t int16_t int32_t
int64_t uint8_t uint16_t uint32_t uint64_t size_t ptrdiff_t
malloc calloc realloc free memset memcpy memmove qsort INFINITY NAN isnan fmin fmax
__builtin_prefetch __builtin_expect __restrict pragma omp parallel for schedule dynamic
num_threads reduction""".split())


def write(folder: pathlib.Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    count = 0
    for name in exprs.EXPRS:
        expr, kw = exprs.get(name)
        for threads in (1, 2):
            kern = ep.Kernel(expr, threads=threads, every_size=True, **kw)
            for idx in ("int32_t", "int64_t"):
                text = kern.source(idx).c
                (folder / f"{name}-t{threads}-{idx}.c").write_text(text)
                count += 1
    return count


def canonical(text: str) -> list[str]:
    """The C text's tokens with comments dropped and every identifier that is not a
    C word renamed by order of first appearance."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    names: dict[str, str] = {}
    out = []
    for tok in re.findall(r"[A-Za-z_]\w*|\d[\w.]*|\S", text):
        if re.match(r"[A-Za-z_]", tok) and tok not in C_WORDS:
            tok = names.setdefault(tok, f"v{len(names)}")
        out.append(tok)
    return out


def compare(old: pathlib.Path, new: pathlib.Path) -> list[str]:
    """Kernels whose C differs beyond renaming (or exists on one side only)."""
    differ = []
    olds = {p.name for p in old.glob("*.c")}
    news = {p.name for p in new.glob("*.c")}
    for name in sorted(olds | news):
        if name not in olds or name not in news:
            differ.append(f"{name}: only in {'new' if name in news else 'old'}")
        elif canonical((old / name).read_text()) != canonical((new / name).read_text()):
            differ.append(f"{name}: differs beyond renaming")
    return differ


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.c_snapshot")
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("folder", type=pathlib.Path)
    c = sub.add_parser("compare")
    c.add_argument("old", type=pathlib.Path)
    c.add_argument("new", type=pathlib.Path)
    args = p.parse_args(argv)
    if args.cmd == "write":
        print(f"wrote {write(args.folder)} kernels to {args.folder}")
        return 0
    differ = compare(args.old, args.new)
    print("\n".join(differ) if differ else "every kernel's C is the same up to renaming")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
