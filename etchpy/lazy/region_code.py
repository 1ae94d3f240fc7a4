"""A dense element-wise region of a lazy program as one generated Python function:
each numpy call a line of it, no closure per operation (a replayed step runs
one function, not a call chain; etchpy.lazy.regions).

The function computes the region's value from the slots (`env[s]`) of its
materialised operands with numpy's floating-point errors ignored and the same
numpy calls, in the same order, as the operations written: a + (-1·b) as numpy's subtract, -1·b as negative, a map
by etchpy.maps' numpy form. An operation whose operand is a temporary of its
own shape and dtype made by the region (fresh) writes its result over it
(`out=`): one temporary for a chain of operations, the same values.
"""
from __future__ import annotations

import numpy as np

from .. import maps
from .nodes import Add, Binary, Const, LazyArray, Map, Mul, Transpose
from .sample import entrywise


def negated(n: LazyArray) -> bool:
    """Whether n is -1·b (how unary minus and subtraction are built)."""
    match n:
        case Mul(Const(c), b):
            return c == -1 and b.shape == n.shape and b.dtype == n.dtype
    return False


def epilogue_of(n: LazyArray):
    """(p, op, e) when n is one operation of the binder's product epilogue on
    its operand p (binder_blas.c.j2): op 1 maximum(p, c), 2 minimum(p, c), e the
    python float c (a number its dtype holds exactly, not -0.0); 3 p - e, 5 p + e,
    e a node; else None. Which operand is a product is the caller's to check."""
    if isinstance(n, Map):
        c = n.arg
        if n.fn not in ("maximum", "minimum") or type(c) not in (int, float):
            return None
        try:                # exact in the dtype, and not -0.0 (a tie's sign)
            with np.errstate(all="ignore"):
                if np.asarray(c, dtype=n.dtype) != c or (c == 0 and np.signbit(c)):
                    return None
        except (OverflowError, ValueError):
            return None
        return n.a, 1 if n.fn == "maximum" else 2, float(c)
    if not isinstance(n, Add) or isinstance(n.a, Const) or isinstance(n.b, Const):
        return None
    if negated(n.b) or negated(n.a):
        a, b = n.args if negated(n.b) else n.args[::-1]
        return (a, 3, b.b) if not isinstance(b.b, Const) else None
    return n.a, 5, n.b


_OUT_KEYWORD = (np.maximum, np.minimum)     # numpy 2.4 deprecates their positional out


def region_function(root: LazyArray, operand, scalars: bool = True, direct: bool = True):
    """fn(env) -> root's value (a numpy array of root's shape and dtype), root a
    dense element-wise region; operand(n) is the slot of n's value when the
    region reads n from the slots (n materialised), else None. fn.block(env)
    is the same function without the final reshape (its operands may be row
    blocks: etchpy.lazy.rows) nor numpy's errors ignored (its caller ignores
    them), and fn.transposes whether the region transposes an operand;
    scalars: a python number is passed as a 0-d array of the dtype of the
    operation reading it where that holds it exactly (Tuning.lazy_region_scalars);
    direct: a map whose numpy form is one ufunc call is that call, and a ufunc's
    out is passed positionally but to maximum and minimum (Tuning.lazy_region_direct)."""
    code = _Code(operand, root, scalars, direct)
    var, _ = code.emit(root)
    code.space.update(ndarray=np.ndarray, array=np.array, dtype=root.dtype, shape=root.shape)
    text = "\n".join([
        "def region(env):",
        *code.lines,
        f"    v = {var}",
        "    if type(v) is ndarray and v.dtype == dtype and v.base is None:",
        "        return v if v.shape == shape else v.reshape(shape)",
        "    return array(v, dtype=dtype).reshape(shape)",
        "def block(env):",
        *code.lines,
        f"    v = {var}",
        "    if type(v) is ndarray and v.dtype == dtype and v.base is None:",
        "        return v",
        "    return array(v, dtype=dtype)"])
    exec(compile(text, "<lazy numpy region>", "exec"), code.space)   # noqa: S102
    fn = ignoring_errors(code.space["region"])
    fn.block, fn.transposes = code.space["block"], code.transposes
    fn.c_ops = code.c_ops(var)
    fn.text = text          # what runs (read by tests and when debugging)
    return fn


# (numpy's context variable of its floating-point error state, the state ignoring
# every error: what np.errstate(all="ignore") sets on entry, made once), or None
# where numpy has no such variable (before 2.0)
try:
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
    _IGNORED = (_extobj_contextvar, _make_extobj(all="ignore"))
except (ImportError, TypeError):     # pragma: no cover - numpy < 2
    _IGNORED = None


def ignoring_errors(fn):
    """fn with numpy's floating-point errors ignored while it runs, as
    np.errstate(all="ignore")'s decorator does, the state made once (the
    decorator makes it on every call: 0.9 µs against 0.35)."""
    if _IGNORED is None:
        return np.errstate(all="ignore")(fn)
    var, ignored = _IGNORED

    def ignoring(env):
        token = var.set(ignored)
        try:
            return fn(env)
        finally:
            var.reset(token)
    return ignoring


def _exact(c, dtype) -> bool:
    """Whether the python number c converts to dtype exactly (not -0.0 from 0)."""
    try:
        with np.errstate(all="ignore"):
            return bool(np.asarray(c, dtype=dtype) == c) and np.isfinite(c)
    except (OverflowError, ValueError):
        return False


def _fresh(n: LazyArray, m: LazyArray, fresh: bool) -> bool:
    """Whether n's result may be written over its operand m's value (fresh)."""
    return fresh and m.shape == n.shape and m.dtype == n.dtype and n.ndim > 0


class _Code:
    """The lines of a region function and the objects they name (its namespace)."""

    def __init__(self, operand, root: LazyArray, scalars: bool = True, direct: bool = True):
        self.operand, self.root, self.lines, self.space = operand, root, [], {}
        self.scalars, self.direct = scalars, direct
        self.transposes = False
        # the region as ufunc calls on value indices (c_ops), or None once an
        # operation is not one: inputs (slot -> index), consts (0-d arrays), temps
        self.ops: list | None = [] if root.ndim > 0 and root.dtype.kind == "f" else None
        self.inputs: dict = {}
        self.consts: list = []
        self.temps: dict = {}

    def name(self, obj) -> str:
        """A name in the function's namespace standing for obj."""
        key = f"c{len(self.space)}"
        self.space[key] = obj
        return key

    def scalar(self, c, n: LazyArray) -> str:
        """A name standing for the scalar c read by n's ufunc: a 0-d array of n's
        dtype when the operation's other operands are of that dtype and c converts to it
        exactly (the ufunc then skips the type resolution of a python scalar
        against an array, and computes with c in n's dtype, as numpy does for a
        python number), else c itself (a number of another kind, a numpy
        scalar: numpy's promotion of them is kept)."""
        if self.scalars and type(c) in (int, float, bool) and n.dtype.kind in "fc":
            with np.errstate(all="ignore"):
                d = np.asarray(c, dtype=n.dtype)
            if d == c and all(a.dtype == n.dtype for a in n.args if not isinstance(a, Const)):
                return self.name(d)
        return self.name(c)

    def temp(self, expr: str) -> str:
        """A local assigned expr (a line of the function); its name."""
        var = f"v{len(self.lines)}"
        self.lines.append(f"    {var} = {expr}")
        return var

    def emit(self, n: LazyArray) -> tuple:
        """(the local or expression holding n's value, fresh: a new array of n's
        shape and dtype that nothing else holds)."""
        if isinstance(n, Const):
            return self.name(n.value), False
        if n is not self.root:
            slot = self.operand(n)
            if slot is not None:
                return f"env[{slot}]", False
        if negated(n):
            return self.ufunc(n, np.negative, [n.b])
        if isinstance(n, Add) and any(negated(a) for a in n.args):
            a, b = n.args if negated(n.b) else n.args[::-1]
            return self.ufunc(n, np.subtract, [a, b.b])
        match n:
            case Transpose(a):
                self.transposes, self.ops = True, None
                return self.temp(f"{self.emit(a)[0]}.T"), False
            case Binary():
                return self.ufunc(n, n.ufunc, list(n.args))
            case Map(a, fn, arg) if self.direct and maps.MAPS[fn].ufunc is not None:
                u, first = maps.MAPS[fn].ufunc      # the one call its numpy form makes
                if first is not None:       # 1 / a: recip's form
                    return self.ufunc(n, u, [first, a])
                return self.ufunc(n, u, [a], () if arg is None else (self.name(arg),))
            case Map(a, fn, arg) if maps.MAPS[fn].writes_out:     # as a ufunc of a
                py, c = maps.MAPS[fn].py, 0 if arg is None else arg
                return self.ufunc(n, py, [a], (self.name(c),))
        self.ops = None
        args = ", ".join(self.emit(a)[0] for a in n.args)
        return self.temp(f"{self.name(entrywise(n))}([{args}])"), False

    def ufunc(self, n: LazyArray, u, operands: list, extra: tuple = ()) -> tuple:
        """n = u(operands..., *extra), its result written over the first fresh
        operand of n's shape and dtype; a scalar operand (a Const, a python
        number, or extra's objects) that n's dtype holds exactly is passed as a
        0-d array of it."""
        done = [self.emit(m) if isinstance(m, LazyArray) and not isinstance(m, Const)
                else (self.scalar(m.value if isinstance(m, Const) else m, n), False)
                for m in operands]
        extra = tuple(self.scalar(self.space[e], n) for e in extra)
        args = ", ".join([v for v, _ in done] + list(extra))
        fn = self.name(u)
        reuse = [v for m, (v, fresh) in zip(operands, done) if _fresh(n, m, fresh)]
        if reuse:           # a ufunc's out positional (parsed faster than out=)
            positional = self.direct and isinstance(u, np.ufunc) and u not in _OUT_KEYWORD
            out = reuse[0] if positional else f"out={reuse[0]}"
            self.lines.append(f"    {fn}({args}, {out})")
            self.record(n, u, [v for v, _ in done] + list(extra), operands, reuse[0])
            return reuse[0], True
        var = self.temp(f"{fn}({args})")
        self.record(n, u, [v for v, _ in done] + list(extra), operands, var)
        return var, n.ndim > 0

    def c_ops(self, var: str):
        """(lazy_region_make's arguments but the first, the slots of the inputs in
        order) of the region whose value is the local var, when self.ops holds
        it (binder_region.c.j2); else None."""
        if not self.ops or var not in self.temps:
            return None
        nin, nc = len(self.inputs), len(self.consts)
        base = {"in": 0, "const": nin, "temp": nin + nc}
        ops = tuple((u, *(base[kind] + i for kind, i in refs))
                    for u, *refs in self.ops)
        root = self.root
        return ((np.dtype(root.dtype).num, tuple(root.shape), nin, tuple(self.consts),
                 len(self.temps), base["temp"] + self.temps[var], ops),
                tuple(sorted(self.inputs, key=self.inputs.get)))

    def record(self, n: LazyArray, u, args: list, nodes: list, out: str) -> None:
        """Note n = u(args) (locals, env[slot] or names; nodes: the operands
        args begin with) writing the local out in self.ops, or give self.ops up
        when that is not a ufunc of the region's dtype over operands of its
        shape and dtype or 0-d arrays of it."""
        root = self.root
        if self.ops is None:
            return
        if (not isinstance(u, np.ufunc) or u.nout != 1 or u.nin != len(args)
                or n.shape != root.shape or n.dtype != root.dtype):
            self.ops = None
            return
        refs = []
        for k, a in enumerate(args):
            m = nodes[k] if k < len(nodes) else None
            if a.startswith("env[") and (m.shape != root.shape or m.dtype != root.dtype):
                self.ops = None
                return
            if a.startswith("env["):
                refs.append(("in", self.inputs.setdefault(int(a[4:-1]), len(self.inputs))))
            elif a in self.temps:
                refs.append(("temp", self.temps[a]))
            elif (type(self.space.get(a)) is np.ndarray and self.space[a].ndim == 0
                  and self.space[a].dtype == root.dtype):
                self.consts.append(self.space[a])
                refs.append(("const", len(self.consts) - 1))
            elif type(self.space.get(a)) in (int, float) and _exact(self.space[a], root.dtype):
                # a python number (numpy casts it to the other operands' dtype): that
                # value as a 0-d array of the dtype, which holds it exactly
                self.consts.append(np.asarray(self.space[a], dtype=root.dtype))
                refs.append(("const", len(self.consts) - 1))
            else:
                self.ops = None
                return
        self.temps.setdefault(out, len(self.temps))
        self.ops.append((u, ("temp", self.temps[out]), *refs))
