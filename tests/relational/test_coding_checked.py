"""A coding that is not an ep.Keys is an InputError naming the relation and the
column (relational.table.codings), for ep.relation and ep.table alike; it was
an AttributeError from inside the coding step. An empty Keys given as a coding
is used, not replaced by one coded from the column."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.errors import InputError

COLUMNS = {"order": np.array([1, 1, 2, 3]), "line": np.array([1, 2, 1, 1]),
           "rev": np.array([10.0, 20.0, 5.0, 7.0])}
LOADERS = {"relation": lambda c: ep.relation(COLUMNS, ["order", "line"], values="rev",
                                             coding=c, name="R"),
           "table": lambda c: ep.table(COLUMNS, ["order", "line"], values=["rev"],
                                       coding=c, name="R")}


@pytest.mark.parametrize("load", sorted(LOADERS))
@pytest.mark.parametrize("coding", [{"order": 3}, {"order": "order"}, [("order", 3)],
                                    {"line": np.arange(3)}])
def test_a_coding_that_is_not_keys_is_refused_by_name(load, coding):
    with pytest.raises(InputError, match=r"relation 'R'"):
        LOADERS[load](coding)


@pytest.mark.parametrize("load", sorted(LOADERS))
def test_a_coding_of_none_codes_the_column_from_its_values(load):
    got = LOADERS[load]({"order": None})
    t = got.tensor if load == "relation" else got.tensor("rev")
    assert t.to_dense().sum() == 42.0


def test_an_empty_keys_coding_is_used():
    empty = ep.Keys.of(np.array([], dtype=np.int64), name="order")
    with pytest.raises(InputError, match="order"):       # its values have no code
        ep.relation(COLUMNS, ["order", "line"], values="rev", coding={"order": empty})
