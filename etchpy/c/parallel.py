"""Loops split across threads (imp.ParallelFor) as C with OpenMP.

A loop split across threads is cut into blocks of consecutive rows (about
`tuning.chunks_per_thread` per thread) that threads take dynamically, and its
body becomes a function of its own (`outline`) called once per block. Inside
that function the arrays are restrict parameters and the scalars values, as
in a serial kernel, rather than reads through a pointer to the shared frame
(docs/performance.md, "Threads"). Without OpenMP the same C runs the blocks
in order.

Each function here takes the `FunctionBody` (c.statements) that renders the
loop's body and collects the outlined functions.
"""
from __future__ import annotations

from .. import imp

INDENT = "    "


def parallel_for(fb, s: imp.ParallelFor, depth: int) -> str:
    """The loop, with its per-thread arrays when it has them. With a reduction,
    each block adds into its own partial, starting at zero, and the partials are
    added into the outer `reduce` variable in block order. The blocks depend
    only on the range and the thread count, so the result does not depend on
    timing, and a slow core does not hold the others up. With a `flag`, each
    block sets its own slot (`_flag_slots`)."""
    if s.private:
        return _private(fb, s, depth)
    pad, p2 = INDENT * depth, INDENT * (depth + 1)
    red, var = s.reduce, s.var
    call = outline(fb, var, s.body, result=red, flag=s.flag)
    partials, add_up, guard = [], [], ""
    if red:
        part, b, blocks = fb.c_name(f"{red}_part"), fb.c_name("b_"), fb.c_name(f"{var}_blocks")
        partials = [f"{p2}ep_val_t {part}[{fb.tuning.chunks_per_thread * s.threads}];"]
        add_up = [f"{p2}for (int64_t {b} = 0; {b} < {blocks}; {b}++) "
                  f"{red} = {fb.sr.add.render(red, f'{part}[{b}]')};"]
        guard = f"{part}[{fb.c_name(f'{var}_b')}] = "
    slots, raise_ = _flag_slots(fb, s, p2)
    pragma = ["#ifdef _OPENMP",
              f"{p2}#pragma omp parallel for schedule(dynamic, 1) num_threads({s.threads})",
              "#endif"]
    if s.parallel_if is None:
        loops = [*pragma, *_block_loop(fb, var, call, p2, guard)]
    else:                   # the same blocks in order where threads would not pay
        p3 = p2 + INDENT
        loops = [f"{p2}if ({fb.expr(s.parallel_if)}) {{",
                 *(ln if ln.startswith("#") else INDENT + ln for ln in pragma),
                 *_block_loop(fb, var, call, p3, guard),
                 f"{p2}}} else {{", *_block_loop(fb, var, call, p3, guard), f"{p2}}}"]
    return "\n".join([f"{pad}{{", *_blocks_decl(fb, s, p2), *partials, *slots, *loops,
                      *add_up, *raise_, f"{pad}}}"])


def _if(fb, s: imp.ParallelFor) -> str:
    """The pragma's `if` clause of a loop with per-thread arrays: it runs on
    threads only where s.parallel_if holds, else its blocks run in order on the
    calling thread (the same partials and slots: a result does not depend on it).
    `parallel_for` branches instead, with no OpenMP call on the serial side."""
    return "" if s.parallel_if is None else f" if({fb.expr(s.parallel_if)})"


def _flag_slots(fb, s: imp.ParallelFor, pad) -> tuple[list[str], list[str]]:
    """(the declaration of one slot per block for s.flag, the statement raising
    the flag after the loop when a block set its slot): each block's outlined
    call writes its own slot, so no two threads write one place."""
    if not s.flag:
        return [], []
    slots, b = fb.c_name(f"{s.flag}_slots"), fb.c_name("b_")
    n = fb.tuning.chunks_per_thread * s.threads
    return ([f"{pad}int64_t {slots}[{n}];"],
            [f"{pad}for (int64_t {b} = 0; {b} < {fb.c_name(f'{s.var}_blocks')}; {b}++) "
             f"if ({slots}[{b}]) {s.flag} = {slots}[{b}];"])


def _blocks_decl(fb, s: imp.ParallelFor, pad) -> list[str]:
    """{var}_first, {var}_n and {var}_blocks of the loop's range."""
    var, e, chunks = s.var, fb.expr, fb.tuning.chunks_per_thread
    first, n, blocks = (fb.c_name(f"{var}_{x}") for x in ("first", "n", "blocks"))
    return [f"{pad}const int64_t {first} = {e(s.start)}, {n} = {e(s.end)} - {first};",
            f"{pad}/* about {chunks} blocks of rows per thread */",
            f"{pad}const int64_t {blocks} = ep_max(1, ep_min({n}, {chunks * s.threads}));"]


def outline(fb, var, body, *, result=None, private=(), flag=None) -> str:
    """Emit `for var in [lo, hi): body` as a static function of the names body
    reads from outside it, and return the call that runs the current block of
    the loop (see _block_loop). With `result` (a value variable), the function
    starts it at the semiring's zero and returns it. Arrays in `private`
    ((array, type, size, fill), ...) are the calling thread's own. With `flag`
    (an index variable), the function starts its own copy at zero and writes it
    to the block's slot ({flag}_slots[{var}_b], `_flag_slots`) at its end."""
    inner = imp.declared_in(body) | {var} | ({result} if result else set())
    inner |= {flag} if flag else set()
    free = sorted(imp.names_used(body) - inner)
    changed = imp.scalars_assigned(body) & set(free)
    if changed:
        raise TypeError(f"a parallel loop's body assigns {sorted(changed)}, "
                        "declared outside it")
    name = f"ep_rows_{len(fb.helpers)}"
    lo, hi, slot = fb.c_name("lo"), fb.c_name("hi"), fb.c_name(f"{flag}_slot")
    own = [f"int64_t *restrict {slot}"] if flag else []
    lines = [f"/* Rows [{lo}, {hi}) of the loop over {var} split across threads. */",
             f"static EP_NOINLINE {'ep_val_t' if result else 'void'} {name}(",
             INDENT + f",\n{INDENT}".join([f"int64_t {lo}", f"int64_t {hi}", *own,
                                           *_params(fb, body, free, private)]) + ")",
             "{"]
    if result:
        lines.append(f"{INDENT}ep_val_t {result} = {fb.value_literal(fb.sr.zero)};")
    if flag:
        lines.append(f"{INDENT}int64_t {flag} = 0;")
    lines += [f"{INDENT}for (int64_t {var} = {lo}; {var} < {hi}; {var}++) {{",
              fb.stmt(body, 2),
              f"{INDENT}}}"]
    if flag:
        lines.append(f"{INDENT}*{slot} = {flag};")
    if result:
        lines.append(f"{INDENT}return {result};")
    lines.append("}")
    fb.helpers.append("\n".join(lines))
    at = [f"&{fb.c_name(f'{flag}_slots')}[{fb.c_name(f'{var}_b')}]"] if flag else []
    return _wrap_call(name, [fb.c_name(f"{var}_lo"), fb.c_name(f"{var}_hi"), *at, *free])


def _params(fb, body, free, private) -> list[str]:
    """The outlined function's parameters for the names its body reads from
    outside: arrays as restrict pointers (const unless written), scalars by value."""
    own = {arr: fb.ctype(typ) for arr, typ, _, _ in private}
    written = imp.arrays_written(body)
    params = []
    for n in free:
        if n in own or n in fb.arrays:
            const = "" if n in written else "const "
            params.append(f"{const}{own.get(n) or fb.arrays[n]} *restrict {n}")
        elif n in fb.scalars:
            params.append(f"const {fb.scalars[n]} {n}")
        else:
            raise TypeError(f"a parallel loop's body names {n!r}, of no known type")
    return params


def _block_loop(fb, var, call, pad, guard="") -> list[str]:
    """The loop over the blocks of var's range, each block's rows
    [{var}_lo, {var}_hi) passed to `call` (from `outline`), which may be
    prefixed by `guard`."""
    first, n, blocks, b, lo, hi = (fb.c_name(f"{var}_{x}")
                                   for x in ("first", "n", "blocks", "b", "lo", "hi"))
    p2 = pad + INDENT
    return [f"{pad}for (int64_t {b} = 0; {b} < {blocks}; {b}++) {{",
            f"{p2}const int64_t {lo} = {first} + {n} * {b} / {blocks};",
            f"{p2}const int64_t {hi} = {first} + {n} * ({b} + 1) / {blocks};",
            *(p2 + ln for ln in f"{guard}{call};".split("\n")),
            f"{pad}}}"]


def _private(fb, s: imp.ParallelFor, depth: int) -> str:
    """Rows on threads, each thread with its own scratch arrays. Every thread
    reaches the work-sharing loop (OpenMP requires it); one whose allocation
    failed skips its blocks, and the kernel then fails after the loop."""
    pad, p2, p3, p4 = (INDENT * (depth + d) for d in range(4))
    e, var = fb.expr, s.var
    failed, ok = fb.c_name(f"{var}_failed"), fb.c_name(f"{var}_ok")
    fb.fails = True
    call = outline(fb, var, s.body, private=s.private, flag=s.flag)
    slots, raise_ = _flag_slots(fb, s, p2)
    lines = [f"{pad}{{",
             *_blocks_decl(fb, s, p2), *slots,
             f"{p2}int {failed} = 0;",
             "#ifdef _OPENMP",
             f"{p2}#pragma omp parallel num_threads({s.threads}){_if(fb, s)}",
             "#endif",
             f"{p2}{{"]
    for arr, typ, size, _ in s.private:
        t, cap = fb.ctype(typ), fb.cap(arr)
        lines += [f"{p3}const int64_t {cap} = ep_max({e(size)}, 1);",
                  f"{p3}{t} *{arr} = ({t} *)ep_malloc((size_t){cap} * sizeof({t}));"]
    lines += [f"{p3}const int {ok} = {' && '.join(f'{arr} != NULL' for arr, *_ in s.private)};",
              f"{p3}if ({ok}) {{"]
    for arr, _, _, fill in (a for a in s.private if a[3] is not None):
        cap = fb.cap(arr)
        k = fb.local("k_", arr, cap, fill)
        lines.append(f"{p4}for (int64_t {k} = 0; {k} < {cap}; {k}++) {arr}[{k}] = {e(fill)};")
    lines += [f"{p3}}} else {{",
              "#ifdef _OPENMP",
              f"{p4}#pragma omp atomic write",
              "#endif",
              f"{p4}{failed} = 1;",
              f"{p3}}}",
              "#ifdef _OPENMP",
              f"{p3}#pragma omp for schedule(dynamic, 1)",
              "#endif",
              *_block_loop(fb, var, call, p3, guard=f"if ({ok}) "),
              *(f"{p3}ep_release({arr});" for arr, *_ in s.private),
              f"{p2}}}", f"{p2}if ({failed}) goto fail;", *raise_, f"{pad}}}"]
    return "\n".join(lines)


def _wrap_call(name: str, args: list[str], width: int = 88) -> str:
    """name(args), broken after a comma where a line would pass `width`."""
    lines, line = [], f"{name}("
    for k, a in enumerate(args):
        piece = a + (", " if k < len(args) - 1 else ")")
        if len(line) + len(piece) > width and line.strip():
            lines.append(line.rstrip())
            line = INDENT + INDENT
        line += piece
    return "\n".join(lines + [line])
