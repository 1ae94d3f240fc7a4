"""Relations: tables loaded into tensors keyed by coded columns (docs/relational.md).

    keys    Keys: key values <-> dense codes; masks and mappings over a coding
    bounds  the bounds of a range of key values, compared exactly with the keys
    columns key columns of mixed dtypes (int64 with uint64) joined and probed exactly
    table   relation(): a table to a tensor (a trie in a chosen level order);
            decode(): a result over codes back to key columns, sorted and cut
    stored  table(): a table loaded once, one trie in its storage order (primary key
            first) plus at most one secondary order, shared by every query
    secondary  that secondary order: given at load, or the order the queries'
            planned conversions were paid to most (Table.keep_wanted_order)
"""
from .keys import Keys
from .table import Relation, decode, relation
from .stored import Table, table

__all__ = ["Keys", "Relation", "Table", "decode", "relation", "table"]
