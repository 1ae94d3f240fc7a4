"""Key codings: the values of a key column mapped to dense codes 0..n-1 and back.

A relation's level holds codes, not key values, so that a join's shared index
ranges over one dense domain. Two relations joined on a key must code it with
the same `Keys` (build it from the union of their columns with `Keys.of`).

    range coding       integer keys whose span max-min+1 is at most `span_limit`
                       times the number of distinct values (default 1: every
                       value of the span occurs): code = value - min
                       (no lookup table; every value of the span has a code)
    dictionary coding  anything else numpy can sort (strings, dates, floats,
                       integers with gaps): code = rank among the distinct
                       values, so the codes are dense however sparse the keys
                       (TPC-H's order keys, a quarter of their span: a level
                       over them spans the orders, not four times as many codes)

Codes keep the order of the values, so a range of key values is a range of
codes. Mappings between codings (a computed index such as the year of a date)
and 0/1 masks (a predicate on the key values, such as a string match) are
relations too: `Keys.mapping` and `Keys.mask` build them (ep.Tensors: relational.filters).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import InputError
from ..runtime.tensor import Tensor
from . import bounds, filters, text
from .columns import as_probe, distinct_ranks, joined, lookup_from, occurring, range_codes


class Keys:
    """A coding of key values (see the module docstring).

    Parameters: values, an array of key values (repeats allowed; the distinct
    values are the domain; NaN and NaT, a SQL NULL, are refused); name, the
    name errors use; span_limit, how sparse an integer domain may be and still
    be range-coded (1: only a domain without gaps; a larger limit leaves codes
    that no key value has, empty positions of a level over them); lookup_span, how sparse a dictionary of integers may be (its
    span against its size, plus 1024) and still be coded through a lookup table
    rather than a binary search (None: always searched; both give the same
    codes).

        >>> k = Keys(np.array([13, 10, 12, 11, 10]), name="orderkey")
        >>> k.code(np.array([12, 13]))
        array([2, 3])
        >>> len(k), k.kind
        (4, 'range')
        >>> gaps = Keys(np.array([1, 2, 3, 4, 9, 10, 11, 12]))    # dense codes
        >>> gaps.kind, len(gaps), gaps.code(np.array([9, 12]))
        ('dictionary', 8, array([4, 7]))
    """

    def __init__(self, values, *, name: str = "keys", span_limit: float = 1.0,
                 lookup_span: float | None = 8.0):
        values = _as_column(values, name)
        if _nulls(values).any():
            raise InputError(f"keys {name!r}: the key column holds NaN/NaT (NULL) values; "
                             f"NULL keys are not supported: drop or fill those rows")
        self.name = str(name)
        self.lookup_span = lookup_span
        if values.dtype.kind in "iu" and len(values):
            lo, hi = int(values.min()), int(values.max())
            span = hi - lo + 1
            seen = occurring(values, lo, span)
            distinct = int(np.count_nonzero(seen)) if seen is not None else \
                len(np.unique(values))
            if span <= span_limit * distinct:
                self.kind, self.low, self.size = "range", lo, span
                self.dtype, self._table = values.dtype, None
                return
            if seen is not None:        # the distinct values and their lookup, no sort
                self.kind, self.low = "dictionary", 0
                self._table = (np.flatnonzero(seen) + lo).astype(values.dtype)
                self.size, self.dtype = distinct, values.dtype
                if lookup_span is not None and span <= lookup_span * distinct + 1024:
                    self._lookup_table = lookup_from(seen)
                return
        self.kind, self.low = "dictionary", 0
        self._table = np.unique(values)
        self.size, self.dtype = len(self._table), self._table.dtype

    @classmethod
    def of(cls, *columns, name: str = "keys", span_limit: float = 1.0,
           lookup_span: float | None = 8.0) -> "Keys":
        """One coding for the union of several `columns` (the key of a join);
        `name`, `span_limit` and `lookup_span` as for the constructor.

            >>> k = Keys.of(np.array(["b", "a"]), np.array(["c"]), name="nation")
            >>> k.decode(np.arange(len(k)))
            array(['a', 'b', 'c'], dtype='<U1')
        """
        cols = [_as_column(c, name) for c in columns]
        return cls(joined(cols, name), name=name, span_limit=span_limit,
                   lookup_span=lookup_span)

    @classmethod
    def coded(cls, values, *, name: str = "keys", span_limit: float = 1.0,
              lookup_span: float | None = 8.0) -> tuple["Keys", np.ndarray]:
        """(the Keys of `values`, the codes of `values` under it) in one pass, as
        Keys(values) and .code(values) give them; a column that is not of
        integers (strings, dates, floats) is coded once per distinct value:
        each row searched among the distinct values (columns.distinct_ranks).
        `name`, `span_limit` and `lookup_span` as for the constructor.

            >>> Keys.coded(np.array(["MAIL", "AIR", "MAIL"]))[1]
            array([1, 0, 1])
        """
        values = _as_column(values, name)
        if values.dtype.kind in "iub" or not len(values):
            keys = cls(values, name=name, span_limit=span_limit, lookup_span=lookup_span)
            return keys, keys.code(values)
        table, codes = distinct_ranks(values)
        return cls(table, name=name, lookup_span=lookup_span), codes

    def __len__(self) -> int:
        return self.size

    def __repr__(self):
        return f"Keys({self.name!r}, {self.kind}, {self.size} codes, dtype={self.dtype})"

    def values(self) -> np.ndarray:
        """Every key value, in code order (decode of 0..n-1); for a dictionary
        coding, a read-only view of its table (no copy: a mask over a large
        dictionary of strings reads it in place).

            >>> Keys(np.array([5, 3])).values()
            array([3, 5])
        """
        if self._table is not None:
            view = self._table.view()
            view.flags.writeable = False
            return view
        return self.decode(np.arange(self.size, dtype=np.int64))

    def code(self, values, *, missing: str = "error"):
        """The codes of `values` (int64). A value outside the domain raises
        InputError naming this coding (`missing="error"`), or, with
        `missing="mask"`, the result is (codes, present) where `present` (bool) says
        which values have a code (the others' codes are 0).

            >>> Keys(np.array(["a", "c"])).code(np.array(["c", "b"]), missing="mask")
            (array([1, 0]), array([ True, False]))
        """
        given = _as_column(values, self.name)
        values, fits = as_probe(given, self.dtype)
        if self.kind == "range":
            codes, present = range_codes(values, self.low, self.size)
        elif (lookup := self._lookup()) is not None and values.dtype.kind in "iu":
            codes, present = look_up(lookup, self._table[0], values)
        else:
            codes = np.searchsorted(self._table, values)
            codes = np.minimum(codes, max(self.size - 1, 0)).astype(np.int64)
            present = (self._table[codes] == values) if self.size else \
                np.zeros(len(values), dtype=bool)
            codes = np.where(present, codes, 0)
        if fits is not None:                # a value its kind cannot hold: no code
            present &= fits
            codes = np.where(present, codes, 0)
        if missing == "mask":
            return codes, present
        if missing != "error":
            raise ValueError(f"missing must be 'error' or 'mask', got {missing!r}")
        if _nulls(given[~present]).any():
            raise InputError(f"keys {self.name!r}: NaN/NaT (NULL) values have no code; "
                             f"NULL keys are not supported: drop or fill those rows")
        if not present.all():
            absent = int((~present).sum())
            raise InputError(f"keys {self.name!r}: value {_show(given[~present][0])} is not "
                             f"in the domain ({absent} value{'s' * (absent != 1)} "
                             f"{'have' if absent != 1 else 'has'} no code)")
        return codes

    def _lookup(self) -> np.ndarray | None:
        """For a dictionary of integers whose span is at most `lookup_span`
        times their number (plus 1024): the code of each value min..max (-1:
        none), made on first use and kept (it depends only on the values), so
        that coding is one gather, not a binary search per value."""
        if getattr(self, "_lookup_table", None) is None:
            self._lookup_table = lookup_of(self._table, self.lookup_span)
        return self._lookup_table if len(self._lookup_table) else None

    def decode(self, codes) -> np.ndarray:
        """The key values of `codes` (InputError for a code outside 0..n-1).

            >>> Keys(np.array(["a", "c"])).decode(np.array([1, 0]))
            array(['c', 'a'], dtype='<U1')
        """
        codes = np.asarray(codes)
        if codes.size and (codes.min() < 0 or codes.max() >= self.size):
            raise InputError(f"keys {self.name!r}: codes must lie in 0..{self.size - 1}")
        if self.kind == "range" and self.dtype.kind == "u":     # low may pass 2**63
            return (codes.astype(np.uint64) + np.uint64(self.low)).astype(self.dtype)
        if self.kind == "range":
            return (codes.astype(np.int64) + self.low).astype(self.dtype)
        return self._table[codes]

    def codes_between(self, lo=None, hi=None) -> tuple[int, int]:
        """The codes (first, end) of the key values v with lo <= v < hi (None: open),
        for ep.between(index, first, end): codes keep the order of the values, so a
        range of values is a range of codes.

            >>> Keys(np.array([3, 9, 20, 41])).codes_between(5, 30)
            (1, 3)

        A bound of another dtype than the keys is compared as the value it is
        (10.5 is above 10; a bound past the keys' dtype is open); InputError
        for a bound that compares with no key value (NaN, a str against
        numbers).
        """
        first = 0 if lo is None else self._rank(lo, "lo")
        end = self.size if hi is None else self._rank(hi, "hi")
        return first, max(first, end)

    def _rank(self, bound, what: str) -> int:
        """The number of key values less than `bound`, compared exactly in a
        common dtype (relational.bounds), not cast to the keys' dtype."""
        where = f"keys {self.name!r}: bound {what}"
        if self.dtype.kind not in "iu":
            return bounds.rank_below(self._table, bound, where)
        t = bounds.int_ceiling(bound, where)
        if not self.size:
            return 0
        first = self.low if self.kind == "range" else int(self._table[0])
        last = self.low + self.size - 1 if self.kind == "range" else int(self._table[-1])
        if t <= first or t > last:
            return 0 if t <= first else self.size
        if self.kind == "range":
            return int(t) - self.low
        return int(np.searchsorted(self._table, self.dtype.type(t), side="left"))

    def mask(self, predicate: Callable[[np.ndarray], np.ndarray], *, sparse: bool | None = None,
             sparse_below: float | None = None, tuning=None) -> Tensor:
        """A 0/1 ep.Tensor over the codes: 1 where `predicate` (a vectorised
        function of the key values) holds. Multiplied into a query on this key's
        index, it is a filter the query applies itself. Stored as the codes that
        pass ("csf", a skip) when at most `sparse_below` of the codes pass (None:
        `tuning`'s Tuning.filter_sparse_below, 1/8 by default), else "dense" (a
        located factor); `sparse=True`/`False` forces either (relational.filters:
        a kernel declared for either format reads both).

            >>> names = Keys(np.array(["forest green", "navy", "green"]))
            >>> names.mask(lambda v: np.char.find(v, "green") >= 0).to_dense()
            array([1., 1., 0.])
            >>> names.mask(lambda v: v == "navy", sparse=True).format.name   # codes in order
            'csf'
        """
        hold = np.asarray(predicate(self.values()), dtype=bool)
        if hold.shape != (self.size,):
            raise InputError(f"keys {self.name!r}: the predicate must give one truth "
                             f"value per key value ({self.size}), got shape {hold.shape}")
        return filters.codes_filter(hold, self.name, sparse, sparse_below, tuning)

    def like(self, pattern: str, *, sparse: bool | None = None, negate: bool = False,
             sparse_below: float | None = None, tuning=None) -> Tensor:
        """A 0/1 ep.Tensor over the codes: 1 where the key value (a string)
        matches SQL's `LIKE pattern`: `%` any run of characters, `_` one
        character, anything else itself (no escapes); its storage (`sparse`,
        `sparse_below`, `tuning`) as for `mask`; `negate`: SQL's NOT LIKE, 1 at the other codes (every code is some
        value of the column). It searches a text index of the values
        (relational.text), made on first use or by `prepare_like` and kept in
        this coding: it depends only on the values. Nothing of the pattern is kept.

            >>> names = Keys(np.array(["forest green", "navy", "green"]))
            >>> [names.like(p).to_dense() for p in ("%green%", "green%", "_avy")]
            [array([1., 1., 0.]), array([0., 1., 0.]), array([0., 0., 1.])]
            >>> names.like("%green%", negate=True).to_dense()
            array([0., 0., 1.])
        """
        if not isinstance(pattern, str):
            raise InputError(f"keys {self.name!r}: a LIKE pattern is a str, got {pattern!r}")
        hold = text.like(self._table, self.prepare_like(), pattern)
        hold = ~hold if negate else hold
        return filters.codes_filter(hold, self.name, sparse, sparse_below, tuning)

    def prepare_like(self) -> text.TextIndex:
        """The text index `like` searches, made now if it was not (a table-build
        step: call it when building, so that the first query does not pay).

            >>> names = Keys(np.array(["forest green", "navy"]))
            >>> names.prepare_like() is names.prepare_like()
            True
        """
        if self._table is None or self.dtype.kind != "U":
            raise InputError(f"keys {self.name!r}: LIKE needs string key values "
                             f"(a dictionary coding of str), not {self.dtype}")
        if getattr(self, "_text_index", None) is None:
            self._text_index = text.TextIndex(self._table)
        return self._text_index

    def carried(self, keys_column, values) -> np.ndarray:
        """The values of a column that depends on this key (a customer's name),
        by code: `values[r]` at the code of `keys_column[r]`, for ep.decode's
        `carry`. Made once when the table is loaded. InputError when one key has
        two values (the column does not depend on the key); a code no row gives
        holds zero (an empty string).

            >>> k = Keys(np.array([20, 10]), name="custkey")
            >>> k.carried(np.array([10, 20, 10]), np.array(["ann", "bo", "ann"]))
            array(['ann', 'bo'], dtype='<U3')
        """
        codes = self.code(keys_column)
        vals = np.asarray(values)
        if vals.shape != codes.shape:
            raise InputError(f"keys {self.name!r}: carried values of shape {vals.shape} "
                             f"for {len(codes)} keys")
        out = np.zeros(self.size, dtype=vals.dtype)
        out[codes] = vals
        if not np.array_equal(out[codes], vals):
            raise InputError(f"keys {self.name!r}: the carried column must give one value "
                             f"per key (a key has two)")
        return out

    def pairs(self, other: "Keys", predicate: Callable, *, format: str = "csr") -> Tensor:
        """A 0/1 ep.Tensor over (this key's codes, `other`'s): 1 where `predicate(x, y)`
        (vectorised, broadcast over every pair of values) holds; `format` "csr" or
        "dcsr". It evaluates every pair: for small dictionaries (nations, regions).

            >>> n = Keys(np.array(["FR", "DE", "US"]))
            >>> n.pairs(n, lambda x, y: (x == "FR") & (y == "DE")).to_dense()[1]  # FR's row
            array([1., 0., 0.])
        """
        return filters.pair_filter(self.values(), other.values(), predicate, self.name,
                                   format)

    def mapping(self, function: Callable[[np.ndarray], np.ndarray], into: "Keys | None" = None,
                *, name: str | None = None) -> tuple[Tensor, "Keys"]:
        """A computed index: `function` (vectorised) maps every key value to a
        value of another coding `into` (built from the function's values when
        None). Returns (M, into), M a 0/1 ep.Tensor ("csr", one stored per row)
        of shape (len(self), len(into)) with M[c, d] = 1 where
        function(decode(c)) == into.decode(d). Summed over this key, `M`
        regroups by the computed key, e.g. a date key to its year; `name` names
        the new coding (and M).

            >>> dates = Keys(np.array(["1994-03-01", "1995-07-02"], dtype="datetime64[D]"))
            >>> m, years = dates.mapping(lambda d: d.astype("datetime64[Y]"), name="year")
            >>> m.to_dense(), years.values()
            (array([[1., 0.],
                   [0., 1.]]), array(['1994', '1995'], dtype='datetime64[Y]'))
        """
        image = np.asarray(function(self.values()))
        if image.shape[:1] != (self.size,):
            raise InputError(f"keys {self.name!r}: the mapping must give one value "
                             f"per key value ({self.size}), got shape {image.shape}")
        into = into if into is not None else Keys(image, name=name or f"{self.name}'")
        cols = into.code(image)       # int32 where they fit: a kernel reading them copies none
        return filters.mapping_tensor(cols, self.size, len(into), into.name), into


def _as_column(values, name) -> np.ndarray:
    a = np.asarray(values)
    if a.ndim != 1:
        raise InputError(f"keys {name!r}: a key column must be one-dimensional, "
                         f"got shape {a.shape}")
    if a.dtype == object:
        raise InputError(f"keys {name!r}: object arrays are not coded; give numbers, "
                         f"numpy strings or datetime64 values")
    return a


def _nulls(values: np.ndarray) -> np.ndarray:
    """Where `values` are NaN or NaT (a SQL NULL), which no key equals."""
    if values.dtype.kind in "fcmM":
        return np.isnan(values)
    return np.zeros(len(values), dtype=bool)


def _show(value) -> str:
    """A key value as an error message shows it: a string quoted, else as printed."""
    return repr(str(value)) if isinstance(value, (str, np.str_)) else str(value)


def lookup_of(table: np.ndarray, lookup_span: float | None) -> np.ndarray:
    """value - table[0] -> code (-1 for a value not in the table), or an empty
    array when `table` (sorted, distinct) is not integers spanning at most
    lookup_span times their number plus 1024 (None: never)."""
    if table.dtype.kind not in "iu" or not len(table) or lookup_span is None:
        return np.empty(0, dtype=np.int64)
    span = int(table[-1]) - int(table[0]) + 1
    if span > lookup_span * len(table) + 1024 or int(table[-1]) >= 2**63:
        return np.empty(0, dtype=np.int64)        # (uint64 past int64: searched)
    lookup = np.full(span, -1, dtype=np.int32 if len(table) < 2**31 else np.int64)
    lookup[table.astype(np.int64) - int(table[0])] = np.arange(len(table))
    return lookup


def look_up(lookup: np.ndarray, low, values: np.ndarray):
    """(codes int64, present) of integer `values` through a lookup table from `low`."""
    big = values > np.iinfo(np.int64).max if values.dtype.kind == "u" else \
        np.zeros(len(values), dtype=bool)
    v = values.astype(np.int64) - int(low)        # (a uint64 past int64 wraps: no code)
    inside = (v >= 0) & (v < len(lookup)) & ~big
    codes = lookup[np.where(inside, v, 0)].astype(np.int64)
    present = inside & (codes >= 0)
    return np.where(present, codes, 0), present

