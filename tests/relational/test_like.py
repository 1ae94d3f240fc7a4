"""Keys.like (SQL LIKE over a dictionary of strings, through relational.text's
index) against a pure-Python LIKE on each value: patterns with %, _ and
spaces, values with repeated words, whitespace of every kind, non-ASCII text;
and its refusals."""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep

LETTERS = "ab c\tgé"          # a space, a tab and a non-ASCII letter among the letters


def sql_like(value: str, pattern: str) -> bool:
    """LIKE by its definition: % any run, _ one character, the rest itself."""
    body = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    return re.fullmatch(body, value, re.DOTALL) is not None


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.text(LETTERS, max_size=8), min_size=1, max_size=25),
       patterns=st.lists(st.text(LETTERS + "%_", max_size=6), min_size=1, max_size=4),
       ascii_only=st.booleans())
def test_like_matches_sql_like_on_every_value(values, patterns, ascii_only):
    if ascii_only:
        values = [v.replace("é", "e") for v in values]
    k = ep.Keys(np.array(values), name="v")
    for pattern in patterns:
        want = [sql_like(v, pattern) for v in k.values().tolist()]
        assert k.like(pattern).to_dense().tolist() == [float(w) for w in want], pattern
        # NOT LIKE: the other codes (as a skip too)
        assert k.like(pattern, sparse=True, negate=True).to_dense().tolist() == \
            [float(not w) for w in want]


def test_the_text_index_is_made_once_and_each_pattern_is_evaluated():
    k = ep.Keys(np.array(["dark green", "green tea", "navy", "sea green green"]))
    index = k.prepare_like()
    assert k.prepare_like() is index
    assert k.like("%green%").to_dense().tolist() == [1, 1, 0, 1]
    assert k.like("%een t%").to_dense().tolist() == [0, 1, 0, 0]
    assert k.like("%blue%").to_dense().tolist() == [0, 0, 0, 0]
    assert k.like("green%").to_dense().tolist() == [0, 1, 0, 0]


def test_like_refuses_what_it_cannot_search():
    with pytest.raises(ep.InputError, match="LIKE needs string key values"):
        ep.Keys(np.array([3, 1, 2])).like("%1%")
    with pytest.raises(ep.InputError, match="a LIKE pattern is a str"):
        ep.Keys(np.array(["a"])).like(b"a")
