"""Tables to tries: a relation tensor keyed by coded columns, and results decoded back.

`relation(columns, keys)` codes each key column (etchpy.relational.keys), then
stores one entry per distinct key tuple in a level format whose storage order
is `order` (the trie's level order), duplicates combined with the semiring's
add (under the real semiring: summed values, or row counts when no value
column is given). `decode` turns a query's result (over codes) back into
columns of key values, sorted and cut as an ORDER BY ... LIMIT would.
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from . import counted
from .keys import Keys
from ..errors import InputError
from ..expr.nodes import TensorVar, tensor as tensor_var
from ..formats import Format
from ..runtime.tensor import Tensor
from ..semiring import semirings


@dataclass(frozen=True)
class Relation:
    """A table stored as a `tensor`: mode k is key column `columns[k]`, coded by
    `keys[k]`; `value` names the value column (None: each key tuple's count, or
    1 under a semiring whose add is idempotent). `var()` gives the tensor
    variable to use in expressions. Built by `ep.relation`.

        >>> R = ep.relation({"n": np.array([3, 1, 3])}, ["n"])
        >>> R.tensor.to_dense(), R.keys[0].values()
        (array([1., 0., 2.]), array([1, 2, 3]))
    """

    tensor: Tensor
    columns: tuple[str, ...]
    keys: tuple[Keys, ...]
    value: str | None

    @property
    def shape(self) -> tuple[int, ...]:
        """The tensor's shape: the size of each key's coding."""
        return self.tensor.shape

    def var(self, name: str | None = None) -> TensorVar:
        """An expression variable of this relation's order and format, named
        `name` (default the tensor's name).

            >>> i, j = ep.indices("i j")
            >>> expr = ep.sum(j, L.var("L")[i, j])
        """
        return tensor_var(name or self.tensor.name, len(self.columns), self.tensor.format)


def relation(columns: Mapping[str, object], keys: Sequence[str], *, values=None,
             coding: Mapping[str, Keys] | None = None, order: Sequence[str] | None = None,
             levels: Sequence[str] | None = None, semiring=None, name: str = "relation",
             codes: Mapping[str, np.ndarray] | None = None):
    """Load a table (a mapping of column name to a 1-d array, e.g. a dict of numpy
    arrays or a pandas DataFrame) into a Relation keyed by `keys`. The key and
    value columns have one length, the rows, and the values are numbers
    (InputError naming the column otherwise).

    Parameters: keys, the key columns (the tensor's modes, in this order);
    values, None (counts), a value column's name (or a 1-d array), or a list of
    names (then a dict name -> Relation, all sharing one structure); coding, the
    Keys per key column (the same Keys for every relation joined on that key;
    built from this table's column when absent); order, the key columns in
    storage (trie level) order, default `keys`; levels, a level kind per storage
    level, default dense first when its domain is at most `dense_span` times
    the rows, else compressed, then compressed (a dense last level stores every
    cell, those of no row holding zero, and a value comparison tests them as entries);
    semiring, its add combines duplicate keys (default real); name, the
    tensor's name; codes, for some key columns their codes under `coding`
    already worked out (a table loaded once codes each column once for all
    its relations), checked to lie in the coding's range.

        >>> t = {"o": np.array([7, 7, 9]), "s": np.array([1, 2, 1]),
        ...      "price": np.array([1.0, 2.0, 4.0])}
        >>> L = relation(t, ["o", "s"], values="price", name="L")
        >>> L.tensor.to_dense()
        array([[1., 2.],
               [0., 0.],
               [4., 0.]])
    """
    keys = _key_names(columns, keys, name)
    coding = codings(coding, name, columns, keys)
    rows = len(_column(columns, keys[0], name)) if keys else 1
    codes = np.stack([_codes(columns, k, coding[k], (codes or {}).get(k), rows, name)
                      for k in keys]) if keys else np.zeros((0, rows), dtype=np.int64)
    fmt = _format(keys, order, levels, coding, rows, name)
    sr = semirings.get(semiring if semiring is not None else semirings.real)
    ks = tuple(coding[k] for k in keys)
    shape = tuple(len(k) for k in ks)
    several = isinstance(values, (list, tuple))
    names = list(values) if several else [values]
    tensors = Tensor.from_coords_columns(
        codes, [_values(columns, v, rows, sr, name) for v in names], shape, fmt,
        semiring=sr, name=name)
    tensors = _one_structure(tensors, names, name)
    out = {v: Relation(t, keys, ks, v) for v, t in zip(names, tensors)} if several else None
    return out if several else Relation(tensors[0], keys, ks,
                                        values if isinstance(values, str) else None)


def _one_structure(tensors: list, names: list, name: str) -> list:
    """The tensors over the first one's index arrays (the same objects), so that
    comparing two value columns finds them aligned by identity, in O(1)
    (runtime.predicates). Other levels' structures are the codes' alone, equal
    by construction; a last level that merges equal neighbouring values (run
    lengths: Format.writes_runs) gives each column its own, compared here:
    InputError where two differ, since their values do not lie over one."""
    first = tensors[0]
    for t, v in zip(tensors[1:], names[1:]):
        if first.format.writes_runs and not _same_levels(t.levels, first.levels):
            raise InputError(
                f"relation {name!r}: its last level ({first.format.levels[-1]}) "
                f"merges equal neighbouring values, and the value columns {names[0]!r} "
                f"and {v!r} change at different keys, so they cannot share one structure "
                f"(values=[...]); load them as separate relations, or with a level "
                f"that stores each row (levels=[..., 'compressed'])")
    return [first] + [Tensor._of((t.shape, t.format, first.levels, t.vals, t.fill), name)
                      for t in tensors[1:]]


def _same_levels(a, b) -> bool:
    return all(x.keys() == y.keys() and all(np.array_equal(x[r], y[r]) for r in x)
               for x, y in zip(a, b))


def decode(result, keys: Sequence[Keys], *, columns: Sequence[str] | None = None,
           value: str = "value", order_by=None, descending: bool = False,
           limit: int | None = None, fill=0,
           carry: Mapping[str, tuple] | None = None, count=None) -> dict[str, np.ndarray]:
    """A query `result` over codes as decoded columns: one array per key of `keys`
    (the Keys of each result mode; named by `columns`, default the Keys' names;
    InputError when two columns, the value column included, have one name) and
    `value`, one row per entry that is not `fill` (a numpy array, a scipy sparse
    array or an ep.Tensor's stored entries). `order_by`: None (code order), `value`,
    or a key column's name, or a list of them (first is major); `descending`
    applies to all, or a list of one bool per `order_by` column (ORDER BY a DESC,
    b); `limit` (None, or an int >= 0) keeps the first rows. `carry`: {name: (key
    column, values by code)}, columns that depend on a key (a customer's name:
    `Keys.carried` makes the values by code once), added to the rows before they
    are sorted (so `order_by` may name them; when it names none, only the rows
    `limit` keeps are gathered). `count`: COUNT(*)
    of each cell of `result` (its shape): the rows are the cells with rows, whatever
    their value, and no keys over no rows is NaN, as SQL (relational.counted).

        >>> k = Keys(np.array(["x", "y", "z"]), name="n")
        >>> decode(np.array([0.0, 5.0, 2.0]), [k], order_by="value", descending=True)
        {'n': array(['y', 'z'], dtype='<U1'), 'value': array([5., 2.])}
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, numbers.Integral)
                              or limit < 0):
        raise InputError(f"decode: limit must be None or a count of rows (int >= 0), got {limit!r}")
    names = list(columns) if columns is not None else [k.name for k in keys]
    if len(names) != len(keys):
        raise InputError(f"decode: {len(keys)} key codings but {len(names)} column names")
    if len(set(names + [value])) != len(names) + 1:
        raise InputError(f"decode: the columns {names + [value]} (key columns, then the "
                         f"value) repeat a name, and one would replace the other; name "
                         f"the key columns with columns=[...] (a Keys is named by "
                         f"ep.Keys(..., name=...), default 'keys') and the value with "
                         f"value=...")
    coords, vals = _entries(result, len(keys), fill) if count is None else \
        counted.entries(result, count, len(keys), fill, _entries)
    out = {**dict(zip(names, coords)), value: vals}    # codes: decoded once sorted, cut
    carry = carry or {}
    by = [order_by] if isinstance(order_by, str) else list(order_by or ())
    first = any(c in carry for c in by)         # else carried for the kept rows only
    if first:
        out.update(_carried(carry, dict(zip(names, coords)), set(out)))
    rows = _sorted_rows(out, order_by, descending, value, len(vals), set(names))
    rows = rows if limit is None else rows[:limit]
    decoded = dict(zip(names, keys))
    out = {n: decoded[n].decode(a[rows]) if n in decoded else a[rows] for n, a in out.items()}
    if not first:
        out.update(_carried(carry, dict(zip(names, coords)), set(out), rows))
    return out


def _carried(carry, codes: dict, taken: set, rows=None) -> dict:
    """The carried columns of decode: each one's values at its key's codes (at
    `rows` of them only, when given: a sort by keys and value and a limit
    need not gather the others)."""
    out = {}
    for name, spec in carry.items():
        if not (isinstance(spec, tuple) and len(spec) == 2 and spec[0] in codes):
            raise InputError(f"decode: carry[{name!r}] must be (a key column of the "
                             f"result, one of {list(codes)}; its values by code)")
        if name in taken:
            raise InputError(f"decode: the carried column {name!r} repeats a column name")
        by_code = np.asarray(spec[1])
        c = codes[spec[0]]
        if len(c) and int(c.max()) >= len(by_code):
            raise InputError(f"decode: carry[{name!r}] holds {len(by_code)} values, fewer "
                             f"than the codes of {spec[0]!r}")
        out[name] = by_code[c if rows is None else c[rows]]
    return out


def _key_names(columns, keys, name) -> tuple[str, ...]:
    keys = (keys,) if isinstance(keys, str) else tuple(keys)
    if len(set(keys)) != len(keys):
        raise InputError(f"relation {name!r}: key columns repeat: {keys}")
    rows = {k: len(_column(columns, k, name)) for k in keys}
    if len(set(rows.values())) > 1:
        shown = ", ".join(f"{k!r} has {n}" for k, n in rows.items())
        raise InputError(f"relation {name!r}: the key columns have different lengths "
                         f"({shown} rows); every column of a table has one value per row")
    return keys


def codings(coding, name, columns=None, keys=()) -> dict:
    """`coding` (None or a mapping of key column names to ep.Keys, None for a
    column coded from its values) as a new dict without the Nones, plus a Keys
    coded from its values for each column of `keys` it lacks; an InputError
    naming the relation and the column whose coding is not a Keys."""
    if coding is not None and not isinstance(coding, Mapping):
        raise InputError(f"relation {name!r}: coding= is a dict of key column names to "
                         f"ep.Keys, got {type(coding).__name__}")
    for k, ks in (coding or {}).items():
        if ks is not None and not isinstance(ks, Keys):
            raise InputError(f"relation {name!r}: the coding of column {k!r} must be an "
                             f"ep.Keys, got {type(ks).__name__}")
    given = {k: ks for k, ks in (coding or {}).items() if ks is not None}
    return given | {k: Keys(_column(columns, k, name), name=k) for k in keys if k not in given}


def _codes(columns, k, keys: Keys, given, rows, name) -> np.ndarray:
    """Key column k's codes: `given` (checked) or coded by `keys` now."""
    if given is None:
        return keys.code(_column(columns, k, name))
    a = np.asarray(given)
    if a.shape != (rows,) or a.dtype.kind not in "iu" or \
            len(a) and (int(a.min()) < 0 or int(a.max()) >= len(keys)):
        raise InputError(f"relation {name!r}: the codes given for key column {k!r} must "
                         f"be {rows} integers in 0..{len(keys) - 1} (its coding's)")
    return a


def _column(columns, key, name) -> np.ndarray:
    try:
        col = columns[key]
    except (KeyError, IndexError, TypeError):
        raise InputError(f"relation {name!r}: no column {key!r}") from None
    a = np.asarray(col)
    if a.ndim != 1:
        raise InputError(f"relation {name!r}: column {key!r} must be 1-d, got shape {a.shape}")
    return a


def _values(columns, v, rows, sr, name) -> np.ndarray:
    if v is None:
        return np.ones(rows, dtype=sr.dtype)
    a = _column(columns, v, name) if isinstance(v, str) else np.asarray(v)
    what = f"relation {name!r}: value column " + (repr(v) if isinstance(v, str)
                                                   else "(an array)")
    if a.shape != (rows,):
        raise InputError(f"{what} has shape {a.shape}, the key columns have {rows} rows")
    if a.dtype.kind not in "biufO":
        raise InputError(f"{what} has dtype {a.dtype}; values are numbers (semiring "
                         f"{sr.name} holds {sr.dtype})")
    try:
        return a.astype(sr.dtype, copy=False)
    except (TypeError, ValueError):        # an object column of other things than numbers
        raise InputError(f"{what} holds values that are not numbers (semiring {sr.name} "
                         f"holds {sr.dtype})") from None


def _format(keys, order, levels, coding, rows, name) -> Format:
    order = tuple(keys) if order is None else tuple(order)
    if sorted(order) != sorted(keys):
        raise InputError(f"relation {name!r}: order {order} must list the key columns "
                         f"{tuple(keys)} once each")
    if levels is None:
        first = "dense" if keys and len(coding[order[0]]) <= dense_span(len(keys)) * max(
            rows, 1) else "compressed"
        levels = [first] + ["compressed"] * (len(keys) - 1)
    if len(levels) != len(keys):
        raise InputError(f"relation {name!r}: {len(levels)} level kinds for {len(keys)} keys")
    return Format(levels, mode_order=tuple(keys.index(k) for k in order))


def dense_span(levels: int) -> int:
    """How many codes a row a first level may span and still be dense by default:
    2 for a relation of one key (a dense last level stores a cell of zero for
    every code no row gave, and value comparisons test those cells), 4 above
    other levels (a code no row gave is an empty fibre, one `pos` entry: at most
    32 bytes a row, and a join locates into the level instead of searching it)."""
    return 2 if levels == 1 else 4


def _entries(result, order, fill):
    if isinstance(result, Tensor):
        coords, vals = result.to_coords()
    elif hasattr(result, "tocoo"):
        m = result.tocoo()                  # coords: one array per mode (1-d arrays too)
        coords = m.coords if hasattr(m, "coords") else (m.row, m.col)
        coords, vals = np.stack(coords).astype(np.int64), np.asarray(m.data)
    else:
        a = np.asarray(result)
        coords = np.stack(np.nonzero(a != fill)) if a.ndim else np.zeros((0, 1), np.int64)
        vals = a[tuple(coords)] if a.ndim else a.reshape(1)
    if coords.shape[0] != order:
        raise InputError(f"decode: the result has order {coords.shape[0]}, "
                         f"but {order} key codings were given")
    keep = vals != fill
    return coords[:, keep], vals[keep]


def _sorted_rows(out, order_by, descending, value, n, coded: set) -> np.ndarray:
    """The rows of `out` in the order `order_by` asks. The columns named in
    `coded` hold codes, which keep the order of their Keys' values: they are
    ordered as they are, so that decoded strings are never compared."""
    if order_by is None:
        by = [c for c in out if c != value]
    else:
        by = [order_by] if isinstance(order_by, str) else list(order_by)
    for c in by:
        if c not in out:
            raise InputError(f"decode: cannot order by {c!r}; columns are {list(out)}")
    if not by:
        return np.arange(n)
    if isinstance(descending, (bool, np.bool_)):
        rows = np.lexsort([out[c] for c in reversed(by)])
        return rows[::-1] if descending else rows
    down = list(descending)
    if len(down) != len(by) or not all(isinstance(x, (bool, np.bool_)) for x in down):
        raise InputError(f"decode: descending must be a bool or one bool per order_by "
                         f"column ({by}), got {descending!r}")
    ranks = [np.asarray(out[c], dtype=np.int64) if c in coded else _rank(out[c])
             for c in by]                     # ORDER BY a DESC, b: -rank(a), rank(b)
    return _by_ranks([-r if d else r for r, d in zip(ranks, down)], n)


def _by_ranks(ranks: list, n: int) -> np.ndarray:
    """The rows in the order of `ranks` (integer arrays, first is major; ties
    keep the row order, as np.lexsort): one sort of one integer key per row
    (the ranks and the row number, mixed radix) when it fits in 62 bits, else
    np.lexsort."""
    key, span = np.zeros(n, dtype=np.int64), 1
    for r in ranks:
        lo = int(r.min(initial=0))
        width = int(r.max(initial=0)) - lo + 1
        span *= width
        if span * max(n, 1) >= 1 << 62:
            return np.lexsort(ranks[::-1])
        key = key * width + (r - lo)
    return np.argsort(key * n + np.arange(n), kind="quicksort")


def _rank(column: np.ndarray) -> np.ndarray:
    """An integer per row that orders the rows as `column` does (any sortable
    dtype; equal values, equal integers): a column of whole numbers (a count)
    spanning at most four times its length less its least value, with no sort;
    otherwise each row's rank among the distinct values."""
    c = np.asarray(column).ravel()
    if c.dtype.kind in "iuf" and len(c):
        lo, hi = c.min(), c.max()
        if (np.isfinite(lo) and np.isfinite(hi) and float(hi) - float(lo) <= 4 * len(c)
                and (c.dtype.kind != "f" or bool(np.all(c == np.floor(c))))):
            return (c - lo).astype(np.int64)
    return np.unique(c, return_inverse=True)[1].astype(np.int64).ravel()
