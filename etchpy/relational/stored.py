"""Tables loaded once: one trie per table, shared by every query.

`table(columns, primary, keys=..., values=...)` codes each key column once
(`Keys.coded`: a column of strings once per distinct value, integers by their
span or an integer sort) and stores the table as one trie whose levels are
the primary key columns, then the other key columns: its storage order, a
clustered index on the primary key. Every value column, and the row count,
lies over that one structure. `secondary=` names at most one other order of
the key columns, made at load too, for the joins that walk the table by
another key (lineitem by part); a key column that depends on the ones above
it is a singleton level (`_singletons`; in another order, each level with one
child per parent position: relational.secondary). Queries read these tries:

    T.var(value, order=None)     the expression variable of a value column (None:
                                 the row count), in storage order or `order`
    T.tensor(value, order=None)  the Tensor to pass for it
    T.relation(value)            the Relation of a value column (storage order)
    T.add_order(order)           store another order too, made once, kept and shared
    T.add_values(columns, names) value columns added over the stored rows (relational.added)
    T.explain(kernel=None)       the stored orders, their level kinds and sizes (and
                                 the one a compiled query reads: relational.orders)
    T.orders                     the orders stored (storage order first)
    T.value_keys(order)          the Keys of an order keyed by a value column
    T.wanted()                   the orders queries were converted to, not stored
    T.keep_wanted_order()        the one wanted most kept as the secondary order
                                 (relational.secondary)

An order the table does not store is refused by `var` and `tensor`, naming
the orders it stores and `add_order` (which converts the structure once, as
the secondary order, or keys an order by a value column: relational.by_value);
a query compiled without `order=` may read the table in another order by the
planner's priced conversion (plan/convert.py), which finds the secondary
order's structure made (runtime.planned.converted_structure).

Values are written in place into the storage-order trie (`T.tensor(v).vals`).
The other orders hold a copy of them, every column's over one structure
(runtime.shared walks it once), checked against the storage order's on each
`T.tensor(v, order)` (one sequential comparison) and gathered again when they
differ, so a query after a write reads the written values (a copy's own
values cannot be written: numpy refuses). With `ep.table(..., skip_unwritten=True)` the comparison is skipped
when the storage Tensor's `unwritten_mark` is what it was at the last check
(no Python reference to the values existed since, so no write through one;
a raw address kept past its array is not covered: proofs_notes/unwritten.md).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from . import added, by_value as value_keyed, orders, secondary as second
from ..runtime.bits import same_bits as _same_bits
from .keys import Keys
from .table import Relation, codings, relation
from ..errors import InputError
from ..expr.compare import KeyedVar
from ..expr.nodes import TensorVar, tensor as tensor_var
from ..formats import Format
from ..formats import singleton
from ..runtime import keyed as keyed_copy
from ..runtime.tensor import Tensor


class Table:
    """A table stored once (module docstring), built by `ep.table`: its `name`,
    `by_value` (value column, None for the row count, -> its Relation, over one
    structure), `secondary` (or None), `skip_unwritten` (ep.table's).

        >>> T = ep.table({"o": np.array([2, 1]), "p": np.array([7, 9]),
        ...               "q": np.array([3.0, 4.0])}, ["o"], keys=["p"], values=["q"],
        ...              secondary=["p", "o"])
        >>> T.order, T.secondary
        (('o', 'p'), ('p', 'o'))
    """

    def __init__(self, name: str, by_value: dict, secondary: tuple | None,
                 skip_unwritten: bool = False):
        first = by_value[None]
        self.name = name
        self.skip_unwritten = skip_unwritten
        self.order: tuple[str, ...] = first.columns
        self.keys: tuple[Keys, ...] = first.keys
        self.values: tuple = tuple(v for v in by_value if v is not None)
        self._relations = by_value
        self.secondary = secondary
        self._orders: dict = {}            # order -> (Format, levels, where, missing)
        self._copies: dict = {}     # (order, value) -> (Tensor, values it holds, mark)
        self._keyed: dict = {}      # value-keyed order -> (Keys, values it was built of, mark)
        if secondary is not None:
            self._orders[secondary] = second.stored_order(self, secondary, first.tensor)
            for v in sorted(by_value, key=lambda v: v is not None):   # None first
                self._copies[secondary, v] = self._copy(secondary, v)

    def __repr__(self):
        return (f"Table({self.name!r}, order={self.order}, secondary={self.secondary}, "
                f"values={self.values}, rows={self._relations[None].tensor.nnz})")

    @property
    def orders(self) -> tuple:
        """The orders stored: the storage order, then the others as added."""
        return (self.order, *self._orders)

    def relation(self, value: str | None = None) -> Relation:
        """The Relation holding value column `value` (None: the row count) over
        the storage-order trie.

            >>> T.relation("q").keys[0].values()
            array([1, 2])
        """
        if value not in self._relations:
            raise InputError(f"table {self.name!r} has no value column {value!r}; it holds "
                             f"{list(self.values)} (None: the row count)")
        return self._relations[value]

    def var(self, value: str | None = None, order: Sequence[str] | None = None,
            name: str | None = None) -> TensorVar:
        """The variable (named `name`, default the table's name) of value column
        `value` stored in `order` (default the storage order); its indices are
        the key columns in storage order, whatever `order` (after the value's
        code, in an order keyed by a value; that value's own column there is a
        KeyedVar, whose comparisons with bounds are ranges of its codes:
        expr.keyed).

            >>> o, p = ep.indices("o p")
            >>> ep.sum(o, T.var("q", order=["p", "o"], name="Q")[o, p])
        """
        fmt = self._format(order)
        self.relation(value)
        if order is not None and tuple(order) in self._keyed and value == order[0]:
            return KeyedVar(name or self.name, fmt.order, fmt, by=0)    # expr.keyed
        return tensor_var(name or self.name, fmt.order, fmt)

    def tensor(self, value: str | None = None, order: Sequence[str] | None = None) -> Tensor:
        """The Tensor of value column `value` in `order` (as `var`): the
        storage-order trie itself, or the secondary order's, its values checked
        against the storage order's and gathered again if they were written.

            >>> T.tensor("q").vals[0] = 5.0          # written in place
            >>> T.tensor("q", order=["p", "o"]).to_dense().sum()
            8.0
        """
        fmt = self._format(order)
        t = self.relation(value).tensor
        if fmt == t.format:
            return t
        self._current(tuple(order))
        key = (tuple(order), value)
        kept = self._copies.get(key)
        mark = t.unwritten_mark()
        if self.skip_unwritten and kept is not None and mark is not None and mark == kept[2]:
            return kept[0]                 # nothing could write the values since
        t.check_layout()            # its values read here, not handed out (the marks)
        if kept is None or not _same_bits(t._vals, kept[1]):
            kept = self._copy(key[0], value)
        self._copies[key] = (*kept[:2], t.unwritten_mark())
        return kept[0]

    def add_order(self, order: Sequence[str]) -> tuple[str, ...]:
        """Store the table in `order` too (all the key columns, once each), for
        queries that walk it by another key (lineitem supplier first): converted
        once (the planner's conversion) and kept, shared by every query; each value
        column's copy made at its first `tensor(value, order)`, then checked as
        the secondary order's. Returns the order (a stored one: nothing changes).

        An order whose first column is a value column, then every key column
        (lineitem by receipt date, then order and line), is keyed by that
        value (relational.by_value): one more mode than the keys, first, the
        value's code under `value_keys(order)`; a range of the value is a
        range of codes of its first level, a search and a stop. It is built
        again when the value column's values were written.

            >>> T.add_order(["p", "o"]) == T.secondary
            True
        """
        order = tuple(order)
        if order and order[0] in self.values:
            self._keyed.setdefault(order, None)
            self._current(order)
            return order
        if sorted(order) != sorted(self.order):
            raise InputError(f"table {self.name!r}: order {order} must list the key "
                             f"columns {self.order} once each (or a value column, "
                             f"then the key columns)")
        if order != self.order and order not in self._orders:
            self._orders[order] = second.stored_order(self, order, self._relations[None].tensor)
        return order

    def add_values(self, columns: Mapping[str, object], values) -> tuple:
        """Add value columns `values` (names) of `columns`, a mapping also holding
        the key columns of the rows the table was loaded from (in any order);
        InputError when those rows are not the table's. Returns the table's
        value columns (relational.added).

            >>> T.add_values({"o": np.array([1, 2]), "p": np.array([9, 7]),
            ...               "w": np.array([0.5, 2.0])}, "w")
            ('q', 'w')
        """
        return added.add_values(self, columns, values)

    def value_keys(self, order: Sequence[str]) -> Keys:
        """The Keys of a value-keyed order's first level (its value's distinct
        values, in order), current: the order is built again first if its
        value column was written. `value_keys(order).codes_between(lo, hi)`
        are the bounds of `ep.between` for lo <= value < hi.

            >>> T.value_keys(T.add_order(["q", "o", "p"])).values()
            array([3., 4.])
        """
        order = tuple(order)
        if order not in self._keyed:
            raise InputError(f"table {self.name!r}: {order} is not a value-keyed order "
                             f"it stores; add_order([value column, *key columns]) "
                             f"stores one")
        return self._current(order)

    def _current(self, order: tuple):
        """The Keys of value-keyed `order` (None for another order), after building
        the order again if its value column differs from the values it was made
        of (the same test, and `skip_unwritten` shortcut, as the copies')."""
        if order not in self._keyed:
            return None
        kept = self._keyed[order]
        t = self._relations[order[0]].tensor
        mark = t.unwritten_mark()
        t.check_layout()                 # its values read here, not handed out
        if kept is not None and (self.skip_unwritten and mark is not None
                                 and mark == kept[2] or _same_bits(t._vals, kept[1])):
            self._keyed[order] = (*kept[:2], t.unwritten_mark())
            return kept[0]
        before = self._orders.get(order, (None,))[0]
        *structure, keys, values = value_keyed.build(self, order, before)
        self._orders[order] = tuple(structure)
        for key in [k for k in self._copies if k[0] == order]:
            del self._copies[key]           # over the old structure
        self._keyed[order] = (keys, values, t.unwritten_mark())
        return keys

    def wanted(self) -> dict:
        """order -> the calls that paid the planner's conversion of a column to it,
        for the orders the table does not store, most first (relational.secondary).

            >>> T.wanted()
            {}
        """
        return second.wanted(self)

    def keep_wanted_order(self, least: int = 1, replace: bool = False):
        """Store the order `wanted()` names first, paid for at least `least` times,
        as the table's one secondary order (made as `secondary=` makes one); a
        secondary order already stored stays unless `replace` (then dropped).
        Returns the secondary order then (relational.secondary).

            >>> T.keep_wanted_order(least=2)     # nothing wanted: the one it has
            ('p', 'o')
        """
        return second.keep(self, least, replace)

    def explain(self, kernel=None, name: str | None = None) -> str:
        """The orders stored, their level kinds and sizes; with a compiled `kernel`
        (after a call: its plan for those inputs), the order it reads input
        `name` (default the table's name) in, or would want (relational.orders).

            >>> print(T.explain())
            table table: 2 rows, values ['q']
              storage order ('o', 'p'): dense, singleton
              secondary order ('p', 'o'): dense, singleton
        """
        t = self._relations[None].tensor
        lines = [f"table {self.name}: {t.nnz} rows, values {list(self.values)}",
                 f"  storage order {self.order}: {_kinds(t.format)}"]
        for order, (fmt, *_) in self._orders.items():
            what = "secondary order" if order == self.secondary else (
                "order keyed by a value" if order in self._keyed else "order added")
            lines.append(f"  {what} {order}: {_kinds(fmt)}")
        lines += second.lines(self)
        if kernel is not None:
            lines += orders.lines(self, kernel, name or self.name)
        return "\n".join(lines)

    def _format(self, order) -> Format:
        primary = self._relations[None].tensor.format
        if order is None or tuple(order) == self.order:
            return primary
        if tuple(order) in self._orders:
            return self._orders[tuple(order)][0]
        stored = [self.order, *self._orders]
        raise InputError(f"table {self.name!r} is stored in the orders {stored}, not "
                         f"{tuple(order)}; compile without order= to let the planner "
                         f"convert it (explain() lists the conversion), or store it "
                         f"with add_order({list(order)}) (or secondary= in ep.table)")

    def _copy(self, order: tuple, value):
        """(`order`'s Tensor of `value`, the storage values it holds, their mark), over the
        order's one structure (the same index arrays for every column)."""
        t = self._relations[value].tensor
        fmt, levels, where, missing = self._orders[order]
        shape = t.shape if order not in self._keyed else (
            len(self._keyed[order][0]), *t.shape)
        if value is not None:                # the row count's copy made first: its
            if (order, None) not in self._copies:    # frozen arrays, one structure
                self._copies[order, None] = self._copy(order, None)
            levels = self._copies[order, None][0].levels
        vals = t._vals[where]
        if missing is not None:
            vals[missing] = t.fill
        vals = np.frombuffer(vals.tobytes(), dtype=vals.dtype)   # immutable: a write to
        copy = Tensor._of((shape, fmt, levels, vals, t.fill), t.name)    # a copy is refused
        if order in self._keyed and value == order[0]:
            keyed_copy.mark(copy, 0)         # its values sorted, by its first level
        return copy, t._vals.copy(), t.unwritten_mark()


def table(columns: Mapping[str, object], primary: Sequence[str], *,
          keys: Sequence[str] = (), values: Sequence[str] = (),
          coding: Mapping[str, Keys] | None = None, secondary: Sequence[str] | None = None,
          levels: Sequence[str] | None = None, semiring=None, name: str = "table",
          skip_unwritten: bool = False) -> Table:
    """Load a table once (columns: name -> 1-d array, as for ep.relation) into a
    Table: one trie in the storage order `primary` (the primary key columns)
    then `keys` (the other key columns a query joins or filters on), each
    column of `values` over it, and the row count.

    Parameters: coding, the Keys of some key columns (one Keys for the columns
    of a join; the others are coded here, once per column); secondary, at most
    one other order of all the key columns, made now; levels, the level kinds
    of the storage order (default: dense first when its domain is at most
    twice the rows, four times above other levels, then compressed; the
    secondary order has the same kinds, compressed first when its first key's
    domain is larger); semiring (default real) combines rows with one key
    tuple; name, the variables' default name; skip_unwritten, True to skip
    the comparison of the other orders' copies with the values when nothing
    could have written them since the last one (Tensor.unwritten_mark: sound
    for writes through Python references, not through a raw address kept
    past its array, proofs_notes/unwritten.md; by default every read of
    another order compares).

        >>> L = ep.table({"order": np.array([1, 1, 2]), "part": np.array([5, 6, 5]),
        ...               "rev": np.array([1.0, 2.0, 4.0])}, ["order"], keys=["part"],
        ...              values=["rev"], secondary=["part", "order"], name="L")
        >>> L.tensor("rev", order=["part", "order"]).to_dense()[:, 0]
        array([0., 1., 4.])
    """
    primary = [primary] if isinstance(primary, str) else list(primary)
    order = primary + ([keys] if isinstance(keys, str) else list(keys))
    values = [values] if isinstance(values, str) else list(values)
    if not primary or len(set(order)) != len(order):
        raise InputError(f"table {name!r}: primary {primary} and keys {order[len(primary):]} "
                         f"must name one key column or more, each once")
    if None in values or len(set(values)) != len(values):
        raise InputError(f"table {name!r}: values {values} must name value columns once each")
    second = None if secondary is None else tuple(secondary)
    if second is not None and sorted(second) != sorted(order):
        raise InputError(f"table {name!r}: secondary {second} must list the key columns "
                         f"{tuple(order)} once each")
    coding, codes = _coded(columns, order, codings(coding, name), name)
    by_value = relation(columns, order, values=[None] + values, coding=coding, codes=codes,
                        levels=levels, semiring=semiring, name=name)
    if levels is None:
        by_value = _singletons(by_value)
    out = Table(name, by_value, None if second == tuple(order) else second, skip_unwritten)
    out.semiring = semiring                 # (add_values combines rows by it)
    return out


def _singletons(by_value: dict) -> dict:
    """The relations (over one structure) with each unique compressed level below
    the first whose every parent position has exactly one child (a key column
    that depends on the ones above, as an order's date on its key) a singleton
    level (formats.singleton.dependent): read at its parent's position, with no
    pos array to load (the same entries, one structure still)."""
    t = by_value[None].tensor
    kinds, levels = singleton.dependent(t.format.levels, t.levels)
    if kinds == list(t.format.levels):
        return by_value
    fmt = Format(kinds, mode_order=t.format.mode_order)
    first = Tensor._of((t.shape, fmt, tuple(levels), t.vals, t.fill), t.name)
    return {v: replace(r, tensor=Tensor._of((first.shape, fmt, first.levels, r.tensor.vals,
                                                   r.tensor.fill), r.tensor.name))
            for v, r in by_value.items()}


def _coded(columns, order, coding: dict, name) -> tuple[dict, dict]:
    """The Keys and the codes of each key column, each column coded once."""
    codes = {}
    for k in order:
        try:
            col = columns[k]
        except (KeyError, IndexError, TypeError):
            raise InputError(f"table {name!r}: no column {k!r}") from None
        if k in coding:
            codes[k] = coding[k].code(col)
        else:
            coding[k], codes[k] = Keys.coded(col, name=k)
    return coding, codes


def _kinds(fmt: Format) -> str:
    return ", ".join(str(lv) for lv in fmt.levels)
