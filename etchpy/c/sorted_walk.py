"""The C of imp.ForSorted (c.statements prints the rest): a touched list walked
in ascending order.

- Without marks: the list sorted (ep_sort_idx), then walked.
- With marks (a byte per index) and `bits`: ep_marks_walkable chooses; when
  the listed indices are dense enough in their range, their bits set and
  walked in order (summary word, then marked word, then bit), so the list is
  never sorted; else the list sorted and walked. Either way it clears the
  marks.
- With a `place` as well (the counter the body appends at) and
  Tuning.sort_place: ep_marks_ranked chooses, and its third way ranks a short
  list and runs the body over it in list order, the counter at each index's
  rank: each entry goes straight to its place.

The body is printed once per way. `printer` is the c.statements.FunctionBody.
"""
from __future__ import annotations


def for_sorted(printer, fs, depth: int, indent: str) -> str:
    """The C of ForSorted `fs` at `depth`, `indent` one level of indentation."""
    var, arr, bits, body = fs.var, fs.array, fs.bits, fs.body
    pad, p2, p3 = (indent * (depth + d) for d in range(3))
    count, t = printer.derived(fs, var, "n", "t")
    listed = [f"{p2}for (int64_t {t} = 0; {t} < {count}; {t}++) {{",
              f"{p3}const int64_t {var} = {arr}[{t}];",
              printer.stmt(body, depth + 2),
              f"{p2}}}"]
    head = [f"{pad}{{", f"{p2}const int64_t {count} = {printer.expr(fs.n)};"]
    if bits is None:
        return "\n".join([*head, f"{p2}ep_sort_idx({arr}, {count});", *listed, f"{pad}}}"])
    tuning, size_c = printer.tuning, printer.expr(fs.size)
    ranked = []
    if fs.place is not None and tuning.sort_place and tuning.rank_sort_max:
        ranked = _ranked(printer, fs, size_c, depth, indent)
    return "\n".join([
        *head, *ranked, *_marks_walk(printer, fs, size_c, depth, indent, bool(ranked)),
        f"{p2}}} else {{",
        *[indent + ln if ln else ln for ln in "\n".join(listed).split("\n")],
        f"{p2}}}",
        f"{pad}}}"])


def place_max(tuning) -> int:
    """The longest touched list ep_marks_ranked ranks into its places: one the
    list would otherwise sort by rank (below marks_walk_min, at most
    rank_sort_max), at least a block of 16."""
    return min(max(16, tuning.marks_walk_min - 1), tuning.rank_sort_max)


def _ranked(printer, fs, size_c, depth, indent) -> list[str]:
    """The opening of the ranked way (ep_marks_ranked's 2): each index of the
    list in turn, the body's counter at the index's rank, then n further on."""
    var, arr, bits, place = fs.var, fs.array, fs.bits, fs.place
    p2, p3, p4 = (indent * (depth + d) for d in range(1, 4))
    count, lo, hi, r, way, base, t = printer.derived(fs, var, "n", "lo", "hi", "r", "way",
                                                     "base", "t")
    return [
        f"{p2}int64_t {lo} = 0, {hi} = -1;",
        f"{p2}ep_idx_t {r}[{-(-place_max(printer.tuning) // 16) * 16}];",
        f"{p2}const int {way} = ep_marks_ranked({arr}, {count}, {fs.marks}, {bits}, {size_c}, "
        f"&{lo}, &{hi}, {r});",
        f"{p2}if ({way} == 2) {{",
        f"{p3}const int64_t {base} = {place};",
        f"{p3}for (int64_t {t} = 0; {t} < {count}; {t}++) {{",
        f"{p4}{place} = {base} + {r}[{t}];",
        f"{p4}const int64_t {var} = {arr}[{t}];",
        printer.stmt(fs.body, depth + 3),
        f"{p3}}}",
        f"{p3}{place} = {base} + {count};"]


def _marks_walk(printer, fs, size_c, depth, indent, ranked=False) -> list[str]:
    """The opening `if` of the walk over marks, and its walk (`ranked`: after
    _ranked's, on its way 1)."""
    var, arr, bits, body = fs.var, fs.array, fs.bits, fs.body
    p2, p3, p4, p5 = (indent * (depth + d) for d in range(1, 5))
    count, lo, hi, sums, s, m, w, x, way = printer.derived(
        fs, var, "n", "lo", "hi", "sum", "s", "m", "w", "x", "way")
    opening = ([f"{p2}}} else if ({way} == 1) {{"] if ranked else [
        f"{p2}int64_t {lo} = 0, {hi} = -1;",
        f"{p2}if (ep_marks_walkable({arr}, {count}, {fs.marks}, {bits}, {size_c}, &{lo}, "
        f"&{hi})) {{"])
    return [
        *opening,
        f"{p2}{indent}uint64_t *{sums} = {bits} + (({size_c}) >> 6) + 1;",
        f"{p2}{indent}for (int64_t {s} = {lo}; {s} <= {hi}; {s}++) {{",
        f"{p3}{indent}uint64_t {m} = {sums}[{s}];",
        f"{p3}{indent}{sums}[{s}] = 0;",
        f"{p3}{indent}for (; {m}; {m} &= {m} - 1) {{",
        f"{p4}{indent}const int64_t {w} = ({s} << 6) + ep_ctz64({m});",
        f"{p4}{indent}uint64_t {x} = {bits}[{w}];",
        f"{p4}{indent}{bits}[{w}] = 0;",
        f"{p4}{indent}for (; {x}; {x} &= {x} - 1) {{",
        f"{p5}{indent}const int64_t {var} = ({w} << 6) + ep_ctz64({x});",
        printer.stmt(body, depth + 5),
        f"{p4}{indent}}}",
        f"{p3}{indent}}}",
        f"{p2}{indent}}}"]
