"""Facts about Imp programs, read off their syntax, and the rewrites they allow."""
from __future__ import annotations

import dataclasses
import operator
import weakref

from .construct import and_, not_, or_, select
from .nodes import (FALSE, TRUE, Accum, Alloc, Assign, Bin, Block, Break, Decl, Expr, Fixpoint,
                    ForSorted,
                    GatherPick, GatherSum, Gemm, If, Load, LocalArray, Move, Not, ParallelFor,
                    Reserve, Ring, Seek, Select, Seq, SetBit, ShortIntersect, Store, Var, While)

# The fields of statements that hold a name (of an array or a scalar) as a str.
_NAME_FIELDS = ("array", "bits", "var", "qa", "ea", "crd_a", "qb", "eb", "crd_b", "q", "crd",
                "source", "a_array", "b_array", "c_array", "acc", "end", "vals", "dense",
                "dim", "error", "pos", "parents", "pick", "steps", "flag", "place",
                "marks")


def statements(s):
    """Every statement inside s, s included, outermost first."""
    stack = [s]
    while stack:
        s = stack.pop()
        yield s
        kids = children(s)
        if kids:
            stack.extend(reversed(kids))


def children(s) -> tuple:
    """The statements directly inside the statement s, in order."""
    get = _CHILDREN.get(type(s))
    return () if get is None else get(s)


def _body(s) -> tuple:
    return (s.body,)


_CHILDREN = {Seq: lambda s: s.stmts, While: _body, ParallelFor: _body, Block: _body,
             ForSorted: _body, ShortIntersect: _body, Fixpoint: _body,
             Gemm: lambda s: (s.fallback,), GatherSum: lambda s: (s.fallback,),
             If: lambda s: (s.then,) if s.else_ is None else (s.then, s.else_)}


def loose_breaks(s, inside: bool = False) -> list:
    """The imp.Break statements of s that leave no While of s through If, Seq and
    Block only (nodes.Break: each must; `inside`: s itself is in such a loop)."""
    match s:
        case Break():
            return [] if inside else [s]
        case While(_, body):
            return loose_breaks(body, True)
        case If() | Seq() | Block():
            return [b for u in children(s) for b in loose_breaks(u, inside)]
    return [b for u in children(s) for b in loose_breaks(u, False)]


def seq_parts(s) -> tuple:
    """The statements s runs one after another at its own level: a Seq's parts
    (as they are, not flattened further), else s alone."""
    return s.stmts if isinstance(s, Seq) else (s,)


def spliced(s) -> list:
    """The statements s runs one after another, nested Seqs spliced (a Seq's parts'
    own parts, all the way down), else [s]."""
    return [u for part in s.stmts for u in spliced(part)] if isinstance(s, Seq) else [s]


def most_on_a_path(s, hit) -> int:
    """The most statements inside s (s included) for which hit(statement) holds
    that one pass through s's structure runs: a Seq adds its parts', an If
    takes the larger of its branches', a loop's body counts once."""
    own = 1 if hit(s) else 0
    match s:
        case Seq(stmts):
            return own + sum(most_on_a_path(u, hit) for u in stmts)
        case (While(_, body) | ParallelFor(_, _, _, body, _) | Block(body)
              | ForSorted(_, _, _, _, _, body) | ShortIntersect(_, _, _, _, _, _, body)
              | Gemm(fallback=body) | GatherSum(fallback=body) | Fixpoint(body=body)):
            return own + most_on_a_path(body, hit)
        case If(_, then, else_):
            return own + max(most_on_a_path(then, hit),
                             0 if else_ is None else most_on_a_path(else_, hit))
    return own


def _fields(cls) -> tuple[str, ...] | None:
    """The fields subterms walks of a node class (a dataclass's, `walk` left out), or
    None for anything that is not a node; looked up once per class."""
    fields = _FIELDS.get(cls, _UNSEEN)
    if fields is _UNSEEN:
        names = getattr(cls, "__dataclass_fields__", None)
        fields = None if names is None else tuple(f for f in names if f != "walk")
        _FIELDS[cls] = fields
    return fields


_FIELDS: dict[type, tuple[str, ...] | None] = {}
_UNSEEN = object()


def subterms(x):
    """Every node (statement or expression) inside x, x included, outermost first;
    tuples and lists are walked through, a loop's note (While.walk) is not."""
    stack = [x]
    pop, push, known = stack.pop, stack.extend, _FIELDS.get
    while stack:
        x = pop()
        cls = type(x)
        fields = known(cls, _UNSEEN)
        if fields is _UNSEEN:
            fields = _fields(cls)
        if fields is None:
            if isinstance(x, (tuple, list)):
                push(reversed(x))
            continue
        yield x
        push([getattr(x, f) for f in reversed(fields)])


def parts(node, notes: bool = False) -> tuple:
    """What is directly inside node: a tuple's or list's items, or a node's
    fields in order (any dataclass's; a loop's or a comment's note, `walk`,
    only with notes); () for anything else (a name, a number)."""
    if isinstance(node, (tuple, list)):
        return tuple(node)
    names = getattr(node, "__dataclass_fields__", None)
    if names is None:
        return ()
    return tuple(getattr(node, f) for f in names if notes or f != "walk")


def map_parts(node, f, notes: bool = False):
    """node rebuilt with f applied to each of its parts (see parts): a tuple's
    items, or a node's fields (the others, a note without notes, kept);
    anything else, a list included, as it is. Nodes are frozen: the result is
    node itself where f returned each part itself (so a rewrite keeps what it
    left alone, and the facts kept beside a loop node, `names_used`), else a
    new node or tuple."""
    if isinstance(node, tuple):
        new = tuple([f(x) for x in node])
        return node if all(map(operator.is_, new, node)) else new
    names = getattr(node, "__dataclass_fields__", None)
    if names is None:
        return node
    changed = {}
    for k in names:
        if notes or k != "walk":
            v = getattr(node, k)
            if (w := f(v)) is not v:
                changed[k] = w
    return dataclasses.replace(node, **changed) if changed else node


def substitute(node, name: str, value: Expr):
    """node (a statement or expression) with every read of the variable `name`
    replaced by `value`. Sound where `name` holds `value` throughout node and
    node does not assign it."""
    match node:
        case Var(n) if n == name:
            return value
    return map_parts(node, lambda x: substitute(x, name, value), notes=True)


def assume(e: Expr, facts: dict) -> Expr:
    """e where each boolean expression in `facts` has the given value, folded.
    Sound wherever those expressions do have those values when e is evaluated."""
    if e in facts:
        return TRUE if facts[e] else FALSE
    match e:
        case Bin("&&", a, b):
            return and_(assume(a, facts), assume(b, facts))
        case Bin("||", a, b):
            return or_(assume(a, facts), assume(b, facts))
        case Bin(op, a, b):
            return Bin(op, assume(a, facts), assume(b, facts))
        case Not(a):
            return not_(assume(a, facts))
        case Select(c, a, b):
            return select(assume(c, facts), assume(a, facts), assume(b, facts))
        case Ring(op, a, b):
            return Ring(op, assume(a, facts), assume(b, facts))
        case Load(_, i):
            return dataclasses.replace(e, index=assume(i, facts))
    return e


def arrays_loaded_at(node, index) -> list[str]:
    """The arrays read as array[index] inside an Imp statement or expression, in
    order of first appearance; with index None, every array read."""
    return list(dict.fromkeys(x.array for x in subterms(node) if isinstance(x, Load)
                              and (index is None or x.index == index)))


def names_used(node, kept: bool = True) -> set[str]:
    """Every variable or array name read or written inside an Imp statement or
    expression (comments name nothing); a new set each call.

    With `kept`, a loop's names (While, ForSorted, ParallelFor, Fixpoint) are worked out
    once per loop node and kept beside it while it lives (nodes are frozen), so
    walking a nest from the inside out (a loop's state declarations at every
    level, a pass's name supply) reads each loop once; kept=False walks all."""
    if kept and type(node) in _LOOPS:
        return set(_loop_names(node))
    return _walk_names(node, kept)


def _walk_names(node, kept: bool) -> set[str]:
    out: set[str] = set()
    add, stack, plans = out.add, [node], _NAMING.get
    pop, push = stack.pop, stack.extend
    while stack:
        x = pop()
        if kept and type(x) in _LOOPS and x is not node:
            out |= _loop_names(x)
            continue
        plan = plans(type(x))
        if plan is None:
            plan = _naming(type(x))
        if plan is _OTHER:
            if isinstance(x, (tuple, list)):
                push(x)
            continue
        names, kids = plan
        for f in names:
            if type(v := getattr(x, f, None)) is str:
                add(v)
        push([getattr(x, f) for f in kids])
        match x:
            case ParallelFor(private=private):
                out.update(arr for arr, *_ in private)
            case Fixpoint(pairs=pairs):
                out.update(name for a, b, _ in pairs for name in (a, b))
    return out


def _loop_names(loop) -> frozenset[str]:
    """names_used of a loop node, worked out once while the node lives: kept in
    _KEPT by the node's id beside a weak reference to it (not on the node, so
    nothing of it reaches a pickle or a stored manifest)."""
    key = id(loop)
    hit = _KEPT.get(key)
    if hit is not None and hit[0]() is loop:
        return hit[1]
    names = frozenset(_walk_names(loop, True))
    _KEPT[key] = (weakref.ref(loop, lambda ref: _forget(key, ref)), names)
    return names


def _forget(key: int, ref) -> None:
    """Drop a dead loop's entry (unless its id already names a newer loop's)."""
    hit = _KEPT.get(key)
    if hit is not None and hit[0] is ref:
        _KEPT.pop(key, None)


_LOOPS = frozenset((While, ForSorted, ParallelFor, Fixpoint))
# id of a loop node -> (a weak reference to it, its names), dropped when it dies
_KEPT: dict[int, tuple] = {}


def _naming(cls):
    """How names_used reads a node class: (its fields or attributes that hold a name,
    the fields it walks into), or _OTHER for anything that is not a node; once per
    class."""
    fields = _fields(cls)
    if fields is None:
        plan = _OTHER
    else:
        own = (cls.__match_args__[0],) if cls in (Var, Decl, Assign) else ()
        plan = (own + tuple(f for f in _NAME_FIELDS if f not in own and (
            hasattr(cls, f) or f in fields)), fields)
    _NAMING[cls] = plan
    return plan


_NAMING: dict[type, object] = {}
_OTHER = "not a node"


def declared_in(node) -> set[str]:
    """The names a statement introduces for itself: its Decls, local arrays and
    loop variables. They are not visible outside it."""
    out: set[str] = set()
    for s in statements(node):
        match s:
            case Decl(name, _, _) | LocalArray(name, _, _) | GatherPick(name, _, _):
                out.add(name)
            case ForSorted(var, _, _, _, _, _) | ParallelFor(var, _, _, _, _):
                out.add(var)
    return out


def scalars_assigned(node) -> set[str]:
    """The scalar variables a statement changes after their declaration."""
    out: set[str] = set()
    for s in statements(node):
        match s:
            case Assign(name, _) | Seek(name, _, _, _, _):
                out.add(name)
            case ShortIntersect(qa, _, _, qb, _, _, _):
                out |= {qa, qb}
    return out


def arrays_written(node) -> set[str]:
    """The arrays a statement stores into, grows, clears or replaces."""
    out: set[str] = set()
    for s in statements(node):
        match s:
            case (Store(arr, _, _) | Accum(arr, _, _) | SetBit(arr, _, _)
                  | Alloc(arr, _, _, _) | Reserve(arr, _, _, _)):
                out.add(arr)
            case Move(arr, src):
                out |= {arr, src}
            case Gemm(c_array=arr):
                out.add(arr)
            case ForSorted(_, arr, _, _, bits, _, _, marks):
                out |= {arr} | ({bits, marks} if bits else set())
            case Fixpoint(pairs=pairs):
                out.update(name for a, b, _ in pairs for name in (a, b))
    return out


def rename(node, names: dict):
    """node (a statement or expression) with every variable and array name in
    `names` replaced by its value there. Sound when the new names are unused in
    node (names exchanged, as a Fixpoint's pairs, are not merged)."""
    match node:
        case str():
            return names.get(node, node)
        case tuple():
            return tuple(rename(x, names) for x in node)
        case _ if hasattr(node, "__dataclass_fields__"):
            return dataclasses.replace(node, **{
                f: rename(getattr(node, f), names) for f in node.__dataclass_fields__
                if f in _NAME_FIELDS + ("name",) or not isinstance(getattr(node, f), str)})
    return node


def replaced(node, old, new):
    """node with every subterm equal to `old` (a statement or expression)
    replaced by `new`."""
    if node == old:
        return new
    return map_parts(node, lambda x: replaced(x, old, new), notes=True)
