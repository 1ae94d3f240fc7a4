"""help(ep.tensor) says, for every named format of the format registry, which orders
it allows and which inputs bind without a copy (a format added to the registry fails
here until the help text has its row); the inputs it names bind without the
conversion warning, and its example of a conversion warns."""
import inspect
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import FormatError, PerformanceWarning
from etchpy.formats import NAMED_FORMATS

DOC = inspect.getdoc(ep.tensor)


def _rows() -> dict:
    """{format: (orders column, zero-copy text)} from the help text's table."""
    rows, name = {}, None
    for line in DOC.splitlines():
        m = re.match(r"    (\w+)\s{2,}(any|[\d, ]+?)\s{2,}(\S.*)$", line)
        if m and m.group(1) != "format":
            name = m.group(1)
            rows[name] = (m.group(2), m.group(3))
        elif name and line.startswith(" " * 20):
            rows[name] = (rows[name][0], rows[name][1] + " " + line.strip())
        else:
            name = None
    return rows


def _orders(name) -> str:
    """The orders 0..4 that Format.named allows, as the table writes them."""
    allowed = []
    for order in range(5):
        try:
            ep.Format.named(name, order)
            allowed.append(order)
        except FormatError:
            pass
    return "any" if allowed == list(range(5)) else ", ".join(map(str, allowed))


@pytest.mark.parametrize("name", NAMED_FORMATS)
def test_help_names_each_formats_orders_and_zero_copy_inputs(name):
    rows = _rows()
    assert name in rows, f"help(ep.tensor) has no row for format {name!r}"
    orders, inputs = rows[name]
    assert orders == _orders(name)
    assert f"ep.Tensor in {name}" in inputs
    if name == "dense":
        assert "C-contiguous numpy array" in inputs
    if name in ("csr", "csc"):
        assert f"scipy {name}_array or {name}_matrix" in inputs


def test_help_says_what_is_converted_how_it_warns_and_where_the_guide_is():
    for words in ("converted on every call", "PerformanceWarning",
                  "ep.Tensor.from_dense(A, 'csr')", "docs/formats.md"):
        assert words in DOC


def _total(fmt):
    i, j = ep.indices("i j")
    return ep.compile(ep.sum((i, j), ep.tensor("A", 2, fmt)[i, j]))


@pytest.mark.parametrize("name", [n for n in NAMED_FORMATS if "2" in _orders(n)
                                  or _orders(n) == "any"])
def test_the_zero_copy_inputs_named_bind_without_a_warning(name):
    M = sp.random(300, 200, density=0.01, format="csr", random_state=1)   # not tiny:
    # a tiny input may be planned to be read dense, which binds numpy as it is
    kern = _total(name)
    zero_copy = [ep.Tensor.from_scipy(M, name) if name != "dense"
                 else ep.Tensor.from_dense(M.toarray(), "dense")]
    if name == "dense":
        zero_copy.append(np.ascontiguousarray(M.toarray()))
    if name in ("csr", "csc"):
        zero_copy.append(sp.csr_array(M) if name == "csr" else sp.csc_array(M))
    for value in zero_copy:
        with warnings.catch_warnings():
            warnings.simplefilter("error", PerformanceWarning)
            assert np.isclose(kern(A=value), M.sum())
    if name == "csr":            # the help text's example of a conversion on every call
        with pytest.warns(PerformanceWarning, match=r"ep.Tensor.from_dense\(A, 'csr'\)"):
            _total(name)(A=M.toarray())
