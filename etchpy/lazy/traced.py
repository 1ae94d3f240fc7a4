"""Lazy programs traced once per kind of input: `ep.lazy.function(f)`.

    grad = ep.lazy.function(lambda X, w, y: X.T @ (1 / (1 + ep.exp(-(X @ w))) - y))
    g = grad(X, w, y)          # numpy / scipy arrays in, numpy arrays out

Building a program from operators costs a few microseconds per node on every
call, more than numpy's whole program on small arrays. A traced function
builds it once per kind of input: the first call with arguments of a kind
(each argument's shape and dtype, dense or sparse and what a replay depends
on of a sparse one (etchpy.lazy.replay), and which arguments are the same
object) calls f on lazy wrappings of them and runs the program as
`ep.compute` does, keeping the tape its run recorded and where each of the
tape's leaves comes from (an argument, or an array f read from elsewhere).
Each later call of that kind replays the tape on the new arguments: no node is
built, nothing is looked up but the kind. Numpy arguments of the last kind are
recognised by one generated test (`_entry`); so are scipy csr/csc arguments that
are the last call's objects over the same arrays and shape, beside numpy ones of
their kinds (`_general_entry`, made on the second such call in a row): their
conversion and kind are then not made again, as ep.lazy's own check of a
matrix is not (wrap.checked).

What a replay keeps is what `ep.compute`'s keeps: every argument is converted
and checked as `ep.lazy` does on every call (an array changed in place is
read as it is now), every kernel step checks and binds its inputs, and the
tape's guards are checked (a failed one runs the program afresh and keeps
its new tape). Arrays f reads other than its arguments (a closure's, a
global's) are part of the trace: the same objects are read by every replay
(their contents as they are then), so pass what changes between calls as an
argument.
"""
from __future__ import annotations

import functools
import inspect
import weakref

import numpy as np

from ..errors import InputError
from ..settings import LIMITS
from .array import lazy, leaf_value
from .nodes import LazyArray
from .program import run
from .replay import _leaf_sig, signature
from .wrap import reworded

_NDARRAY = np.ndarray


def _dense_key_function(n: int):
    """fn(args) -> the key of n arguments that are numpy arrays (exactly), none
    the same object: each one's shape and dtype, in order; None for other
    arguments. Generated per n, a line of Python (a loop over the arguments
    costs more than reading their shapes)."""
    a = [f"a{k}" for k in range(n)]
    types = " and ".join(f"type({v}) is nd" for v in a) or "True"
    same = " or ".join(f"{a[i]} is {a[j]}" for i in range(n) for j in range(i + 1, n)) or "False"
    key = "".join(f"{v}.shape, {v}.dtype, " for v in a)
    unpack = f"    {', '.join(a)}, = args\n" if n else ""
    text = (f"def key(args):\n{unpack}"
            f"    if {types} and not ({same}):\n        return ({key})\n    return None\n")
    space = {"nd": _NDARRAY}
    exec(compile(text, f"<lazy traced key, {n} arguments>", "exec"), space)   # noqa: S102
    return space["key"]


# the key functions by number of arguments (few arguments: unrolled; beyond, _kind)
_DENSE_KEYS = [_dense_key_function(n) for n in range(7)]


def _none(args):
    return None


def _entry(key: tuple, run):
    """fn(args) -> run(args) when args are numpy arrays of the kind `key` (a
    _DENSE_KEYS key: each one's shape and dtype, none the same object), else
    None: the kind's test and the replay in one call, without making the key
    (Function.__call__ tries the last such kind first)."""
    n = len(key) // 2
    a = [f"a{k}" for k in range(n)]
    test = [f"type({v}) is nd and {v}.shape == s{k} and {v}.dtype == d{k}"
            for k, v in enumerate(a)]
    test += [f"{a[i]} is not {a[j]}" for i in range(n) for j in range(i + 1, n)]
    text = (f"def entry(args):\n    if len(args) != {n}:\n        return None\n"
            + (f"    {', '.join(a)}, = args\n" if n else "")
            + f"    if {' and '.join(test) or 'True'}:\n        return run(args)\n"
            + "    return None\n")
    space = {"nd": _NDARRAY, "run": run}
    for k in range(n):
        space[f"s{k}"], space[f"d{k}"] = key[2 * k], key[2 * k + 1]
    exec(compile(text, f"<lazy traced entry, {n} arguments>", "exec"), space)   # noqa: S102
    return space["entry"]


def _general_entry(args: tuple, values: list, trace, forget):
    """fn(args) -> trace.replay(values) for a call on the arguments of the last
    general call (`args`, some of them scipy csr/csc: `values` what ep.lazy's
    checks made of them) when each scipy argument is the same object holding the
    same arrays and shape, its canonical flag still set (what those checks depend
    on: wrap.checked checks a matrix again only when an array is rebound or its
    shape changes), and each numpy argument has the shape and dtype it had, none
    the same object; else None. None (no entry) when an argument is of another
    type, or its value is a copy (of entries that were not canonical: made from
    the arrays' contents). A scipy argument is held by a weak reference whose
    death calls `forget`; its arrays are held while it lives."""
    n, test, take = len(args), [], []
    space = {"nd": _NDARRAY, "replay": trace.replay}
    for k, (x, v) in enumerate(zip(args, values)):
        if type(x) is _NDARRAY and v is x:
            space[f"s{k}"], space[f"d{k}"] = x.shape, x.dtype
            test.append(f"type(a{k}) is nd and a{k}.shape == s{k} and a{k}.dtype == d{k}")
            take.append(f"a{k}")
        elif getattr(x, "format", None) in ("csr", "csc") and getattr(v, "indptr", 0) is x.indptr:
            space.update({f"x{k}": weakref.ref(x, forget), f"p{k}": x.indptr,
                          f"i{k}": x.indices, f"v{k}": x.data, f"s{k}": x.shape,
                          f"w{k}": None if v is x else v})     # a matrix's array view
            test.append(f"a{k} is x{k}() and a{k}.indptr is p{k} and a{k}.indices is i{k} "
                        f"and a{k}.data is v{k} and a{k}.shape == s{k} "
                        f"and a{k}.has_canonical_format")
            take.append(f"a{k}" if v is x else f"w{k}")
        else:
            return None
    dense = [k for k, x in enumerate(args) if type(x) is _NDARRAY]
    if len({id(args[k]) for k in dense}) < len(dense):
        return None                     # the same array twice: another kind
    test += [f"a{i} is not a{j}" for i in dense for j in dense if i < j]
    text = (f"def entry(args):\n    if len(args) != {n}:\n        return None\n"
            f"    {', '.join(f'a{k}' for k in range(n))}, = args\n"
            f"    if {' and '.join(test)}:\n        return replay([{', '.join(take)}])\n"
            "    return None\n")
    exec(compile(text, f"<lazy traced entry, {n} arguments>", "exec"), space)   # noqa: S102
    return space["entry"]


def _aliased(values) -> bool:
    """Whether two of values are the same object."""
    n = len(values)
    if n < 3:
        return n == 2 and values[0] is values[1]
    if n == 3:
        a, b, c = values
        return a is b or a is c or b is c
    return len(set(map(id, values))) < n


def _kind(values: list) -> tuple:
    """What a trace depends on of the argument arrays `values` (see the module
    doc), a hashable key: numpy arrays none the same object, each array's
    shape and dtype (the key Function.__call__ reads at once); otherwise
    "general", then a dense array's shape and dtype, a sparse one's replay
    signature, and which are the same object."""
    if len(values) < len(_DENSE_KEYS):
        key = _DENSE_KEYS[len(values)](values)
        if key is not None:
            return key
    elif not _aliased(values) and all(type(v) is _NDARRAY for v in values):
        return tuple([x for v in values for x in (v.shape, v.dtype)])
    kinds, sparse = ["general"], []
    for v in values:
        kinds.append(("dense", v.shape, v.dtype) if type(v) is _NDARRAY
                     else _leaf_sig(v, sparse))
    ids = [id(v) for v in values]
    kinds.append(tuple([ids.index(i) for i in ids]))
    return tuple(kinds)


class Trace:
    """A recorded program for one kind of input: its tape, where each of the
    tape's leaves comes from (`take`: an argument's position, or -1 for an
    array f read elsewhere, held in `fixed`) and whether f returned one array."""

    __slots__ = ("tape", "take", "fixed", "single", "fixed_kind", "direct", "_entry")

    def __init__(self, tape, leaves, arg_keys: list, single: bool):
        self.tape, self.single = tape, single
        self.take = [arg_keys.index(lf.key) if lf.key in arg_keys else -1 for lf in leaves]
        self.fixed = [None if i >= 0 else lf.value for i, lf in zip(self.take, leaves)]
        self.fixed_kind = _kind([v for v in self.fixed if v is not None])
        self.direct = self.take == list(range(len(arg_keys)))   # the arguments, in order
        self._entry = None

    def entry(self, key: tuple):
        """_entry of this trace's kind `key` (made once): its test and replay in one
        call."""
        if self._entry is None:
            run = self.replay
            if self.direct:
                made = self.tape.entries[self.single]    # the test written into the replay
                if made is not None:
                    self._entry = made
                    return made
                run = self.tape.single if self.single else self.tape.run
            self._entry = _entry(key, run)
        return self._entry

    def replay(self, values):
        """The results on the argument arrays `values` (a list or tuple), or None
        when a guard fails or an array f reads from elsewhere changed kind."""
        run = self.tape.single if self.single else self.tape.run
        if self.direct:
            return run(values)
        fixed = self.fixed
        leaves = [values[i] if i >= 0 else fixed[k] for k, i in enumerate(self.take)]
        if self.fixed_kind and _kind([v for v in fixed if v is not None]) != self.fixed_kind:
            return None
        return run(leaves)


class Function:
    """f(*arrays) traced once per kind of input and replayed (the module doc).
    Call it with numpy arrays, scipy.sparse arrays or matrices, ep.Tensors or
    numbers (what ep.lazy takes), positionally or by keyword; it returns what
    ep.compute returns for what f returns (one lazy array: one result; a tuple
    or list of them: a tuple). Options: optimize, threads, tuning, as for
    ep.compute."""

    def __init__(self, fn, optimize: bool = True, threads: int | None = 1, tuning=None):
        if not callable(fn):
            raise InputError(f"ep.lazy.function takes a function, got {type(fn).__name__}")
        self.fn, self.options = fn, (optimize, threads, tuning)
        self.name = getattr(fn, "__name__", "function")
        self.traces: dict = {}
        self._last = _none      # the last numpy-arrays kind replayed: _entry's test and replay
        self._general = _none   # the last scipy arguments replayed: _general_entry's
        self._noted, self._made = None, set()   # the last replay's kind, those tried (_remember)
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        if kwargs:
            args = self._positional(args, kwargs)
        out = self._last(args)
        if out is not None:
            return out
        n = len(args)       # numpy arrays, none twice: _kind's key at once
        key = _DENSE_KEYS[n](args) if n < len(_DENSE_KEYS) else None
        trace = None if key is None else self.traces.get(key)
        out = None if trace is None else trace.replay(args)
        if out is None:
            if key is None:
                try:
                    out = self._general(args)
                except InputError:      # worded for the argument by the general call
                    out = None
            return self._call(args) if out is None else out
        self._last = trace.entry(key)
        return out

    def _forget(self, _ref=None):
        self._general, self._noted, self._made = _none, None, set()

    def _remember(self, args: tuple, values: list, trace):
        """After a replay on arguments not all numpy arrays: a second call in a row
        of one kind (the same scipy objects, numpy arguments' shapes and dtypes, which
        are the same object) makes `_general` (their test and the replay in one
        call, _general_entry); a first is only noted, and a kind is tried once (at
        most 64 remembered), as making an entry costs a compile that a loop over
        new matrices, or kinds in turn, would otherwise pay on every call."""
        if all(type(x) is _NDARRAY for x in args):
            return
        ids = [id(x) for x in args]
        sig = (*(i if type(x) is not _NDARRAY else (x.shape, x.dtype)
                 for i, x in zip(ids, args)), *map(ids.index, ids))
        if sig in self._made:           # an entry made for it (or none can be)
            return
        if sig == self._noted:
            entry = _general_entry(args, values, trace, self._forget)
            if len(self._made) >= 64:
                self._made.clear()
            self._made.add(sig)
            if entry is not None:
                self._general = entry
        self._noted = sig

    def _call(self, args: tuple):
        """A call whose arguments are not all numpy arrays, or not met before:
        each converted and checked as ep.lazy does, then the trace of their kind
        replayed, or f traced."""
        values = list(args)
        for k, x in enumerate(values):
            if not (type(x) is _NDARRAY and x.ndim <= 2 and x.dtype.kind in "iuf"):
                values[k] = self._value(k, x)
        key = _kind(values)
        trace = self.traces.get(key)
        if trace is not None:
            try:
                out = trace.replay(values)
            except InputError as err:   # named for ep.lazy's operand where it is one's
                raise reworded(err, [*values, *trace.fixed])
            if out is not None:
                self._remember(args, values, trace)
                return out
        return self._trace(key, values)

    def _value(self, k: int, x):
        try:
            return leaf_value(x.value if isinstance(x, LazyArray) else x)
        except InputError as e:
            raise InputError(f"{self.name}: argument {self._arg_name(k)}: {e}") from None

    def _trace(self, key, values: list):
        """Run f on lazy wrappings of `values` as ep.compute does; keep its tape."""
        self._forget()
        nodes = [lazy(v) for v in values]
        try:
            out = self.fn(*nodes)
            single = not isinstance(out, (tuple, list))
            outs = [out] if single else list(out)
            if not outs:
                raise InputError("it returned no array")
            outs = [o if isinstance(o, LazyArray) else lazy(o) for o in outs]
        except InputError as e:
            raise InputError(f"{self.name}({self._described(values)}): {e}") from None
        results, tape = run(outs, *self.options)
        if tape is not None:
            if len(self.traces) >= LIMITS.lazy_programs:
                self.traces.clear()
            leaves = signature(outs)[2]
            self.traces[key] = Trace(tape, leaves, [n.key for n in nodes], single)
        return results[0] if single else results

    def _positional(self, args: tuple, kwargs: dict) -> tuple:
        try:
            bound = inspect.signature(self.fn).bind(*args, **kwargs)
        except TypeError as e:
            raise InputError(f"{self.name}: {e}") from None
        if bound.kwargs:
            raise InputError(f"{self.name}: keyword-only arguments {sorted(bound.kwargs)} "
                             f"are not supported; pass arrays by position or name")
        return bound.args

    def _arg_name(self, k: int) -> str:
        try:
            names = list(inspect.signature(self.fn).parameters)
        except (TypeError, ValueError):
            names = []
        return names[k] if k < len(names) else f"#{k}"

    def _described(self, values: list) -> str:
        return ", ".join(f"{self._arg_name(k)}: {type(v).__name__} {v.shape} {v.dtype}"
                         for k, v in enumerate(values))


def function(fn=None, *, optimize: bool = True, threads: int | None = 1, tuning=None):
    """f traced once per kind of input and replayed on later calls
    (`ep.lazy.function`; etchpy.lazy.traced). fn takes lazy arrays and returns
    one or a tuple of them; the result is called with arrays. Usable as a
    decorator, with or without options.

    Parameters: fn, the function; optimize, threads, tuning: as for ep.compute.
    Returns: a Function. Raises: InputError when fn is not callable; its calls
    raise InputError naming an argument that ep.lazy refuses, or naming the
    arguments' shapes when f's operations do not apply to them.

        >>> @ep.lazy.function
        ... def grad(X, w, y):
        ...     return X.T @ (X @ w - y)
        >>> g = grad(X, w, y)
    """
    if fn is None:
        return functools.partial(function, optimize=optimize, threads=threads, tuning=tuning)
    return Function(fn, optimize, threads, tuning)
