"""The text front end: statements, compared with hand-built expressions, and their errors."""
import math

import pytest

import etchpy as ep
from etchpy.errors import ExpressionTypeError, FormatError
from etchpy.expr.nodes import Access, Add, Lit, Mul, Sum
from etchpy.expr.parse import FrontendError, Statement, parse

i, j, k, l, r = ep.indices("i j k l r")


def neg(e):
    return Mul(Lit(-1, negation=True), e)


# --------------------------------------------------------------------------- statements

def test_spmv():
    st = parse("y[i] = A[i,j] * x[j]", {"A": "csr"})
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    assert isinstance(st, Statement)
    assert st.output == "y"
    assert st.indices == (i,)
    assert st.expr == ep.sum(j, A[i, j] * x[j])
    assert st.tensors == {"A": A, "x": x}
    assert list(st.tensors) == ["A", "x"]
    assert st.output_format is None


def test_whitespace_insensitive():
    a = parse("y[i]=A[i,j]*x[j]")
    b = parse("  y [ i ]  =\n\tA [ i , j ]\n * x[ j ]  ")
    assert a == b


def test_spgemm():
    st = parse("C[i,k] = A[i,j]*B[j,k]", {"A": "csr", "B": "csr", "C": "csr"})
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    assert st.indices == (i, k)
    assert st.expr == ep.sum(j, A[i, j] * B[j, k])
    assert st.output_format == ep.Format.named("csr", 2)


def test_mttkrp():
    st = parse("A[i,r] = B[i,j,k]*C[j,r]*D[k,r]", {"B": "csf"})
    B, C, D = ep.tensor("B", 3, "csf"), ep.tensor("C", 2), ep.tensor("D", 2)
    assert st.indices == (i, r)
    # The parse tree is (B*C)*D: j's occurrences all lie in B*C, k's span the root.
    assert st.expr == ep.sum(k, ep.sum(j, B[i, j, k] * C[j, r]) * D[k, r])
    assert st.expr == Sum(k, Mul(Sum(j, Mul(B[i, j, k], C[j, r])), D[k, r]))
    assert list(st.tensors) == ["B", "C", "D"]


def test_scalar_lhs():
    A, B = ep.tensor("A", 2), ep.tensor("B", 2)
    st = parse("s = A[i,j]*B[i,j]")
    assert st.output == "s" and st.indices == ()
    assert st.expr == ep.sum((i, j), A[i, j] * B[i, j])
    assert parse("s[] = A[i,j]*B[i,j]") == st


def test_order_zero_tensors():
    a = ep.tensor("a", 0)
    st = parse("s = a + a[] * b")
    b = ep.tensor("b", 0)
    assert st.expr == Add(Access(a, ()), Mul(Access(a, ()), Access(b, ())))
    assert st.tensors == {"a": a, "b": b}


def test_subtraction_and_unary_minus():
    x, z = ep.tensor("x", 1), ep.tensor("z", 1)
    assert parse("y[i] = x[i] - z[i]").expr == x[i] - z[i]
    assert parse("y[i] = x[i] - z[i]").expr == Add(x[i], neg(z[i]))
    assert parse("y[i] = -x[i]").expr == -x[i] == neg(x[i])
    assert parse("y[i] = --x[i]").expr == neg(neg(x[i]))
    assert parse("y[i] = +x[i]").expr == x[i]
    # left-associative: a - b - c is (a - b) - c
    assert parse("y[i] = x[i] - z[i] - x[i]").expr == (x[i] - z[i]) - x[i]
    # unary minus binds tighter than *, like Python
    assert parse("y[i] = -x[i]*z[i]").expr == (-x[i]) * z[i]


def test_precedence_and_parentheses():
    x, z, w = ep.tensor("x", 1), ep.tensor("z", 1), ep.tensor("w", 1)
    assert parse("y[i] = x[i] + z[i]*w[i]").expr == x[i] + z[i] * w[i]
    assert parse("y[i] = (x[i] + z[i])*w[i]").expr == (x[i] + z[i]) * w[i]
    assert parse("y[i] = x[i] * (z[i] * w[i])").expr == Mul(x[i], Mul(z[i], w[i]))
    assert parse("y[i] = x[i] * z[i] * w[i]").expr == Mul(Mul(x[i], z[i]), w[i])


def test_powers():
    x, z = ep.tensor("x", 1), ep.tensor("z", 1)
    assert parse("y[i] = x[i]**1").expr == x[i]
    assert parse("y[i] = x[i]**3").expr == x[i] ** 3 == Mul(Mul(x[i], x[i]), x[i])
    assert parse("y[i] = (x[i] + z[i])**2").expr == (x[i] + z[i]) ** 2
    # ** binds tighter than unary minus and *
    assert parse("y[i] = -x[i]**2").expr == -(x[i] ** 2)
    assert parse("y[i] = 2*x[i]**2").expr == Mul(Lit(2), x[i] ** 2)
    # e ** n stands for e * ... * e, so a summed index in the base is summed around
    # the whole power: s = x[i]**2 is a sum of squares, like s = x[i]*x[i]
    A = ep.tensor("A", 2)
    assert parse("s = x[i]**2").expr == ep.sum(i, x[i] * x[i]) == parse("s = x[i]*x[i]").expr
    assert parse("y[i] = A[i,j]**2").expr == ep.sum(j, A[i, j] ** 2)
    assert parse("y[i] = (A[i,j]*x[j])**2").expr == ep.sum(j, (A[i, j] * x[j]) ** 2)
    # to square a sum, sum explicitly
    assert parse("y[i] = sum(j, A[i,j]*x[j])**2").expr == ep.sum(j, A[i, j] * x[j]) ** 2
    assert parse("y[i] = (A[i,j]*x[j])**1").expr == ep.sum(j, A[i, j] * x[j])


def test_literals():
    x = ep.tensor("x", 1)
    assert parse("y[i] = 2*x[i]").expr == Mul(Lit(2), x[i])
    assert parse("y[i] = 2.5*x[i]").expr == Mul(Lit(2.5), x[i])
    assert parse("y[i] = x[i] + 1e3").expr == Add(x[i], Lit(1000.0))
    assert parse("y[i] = x[i] + .5").expr == Add(x[i], Lit(0.5))
    assert parse("y[i] = x[i] + 1.5E-2").expr == Add(x[i], Lit(0.015))
    e = parse("y[i] = x[i] + inf").expr
    assert e == Add(x[i], Lit(math.inf))
    # unary minus on a literal is a negative literal, as -5 is a number in Python
    assert parse("y[i] = x[i] + -inf").expr == Add(x[i], Lit(-math.inf))
    assert parse("y[i] = -3*x[i]").expr == Mul(Lit(-3), x[i]) == -3 * x[i]
    assert parse("y[i] = x[i] - 3").expr == x[i] - 3
    assert type(parse("s = 7").expr.value) is int
    assert parse("s = 7").expr == Lit(7)


def test_explicit_sum():
    A, x, B = ep.tensor("A", 2), ep.tensor("x", 1), ep.tensor("B", 2)
    st = parse("y[i] = sum(j, A[i,j]*x[j])")
    assert st.expr == Sum(j, Mul(A[i, j], x[j]))
    st = parse("y[i] = sum((j, k), A[i,j]*B[j,k]*x[k])")
    assert st.expr == ep.sum((j, k), A[i, j] * B[j, k] * x[k])
    assert parse("y[i] = sum((j,), A[i,j])").expr == ep.sum(j, A[i, j])
    # two separate sums may reuse a name
    st = parse("y[i] = sum(j, A[i,j]) + sum(j, B[i,j])")
    assert st.expr == ep.sum(j, A[i, j]) + ep.sum(j, B[i, j])
    # explicit and implicit summation together
    st = parse("y[i] = sum(j, A[i,j]*B[j,k]) * x[k]")
    assert st.expr == ep.sum(k, ep.sum(j, A[i, j] * B[j, k]) * x[k])


def test_sum_as_tensor_name():
    s = ep.tensor("sum", 1)
    assert parse("y[i] = sum[i]").expr == s[i]


def test_sum_placement_smallest_subtree():
    A, x, b = ep.tensor("A", 2), ep.tensor("x", 1), ep.tensor("b", 1)
    st = parse("y[i] = A[i,j]*x[j] + b[i]")
    assert st.expr == Add(ep.sum(j, A[i, j] * x[j]), b[i])
    assert st.expr != ep.sum(j, A[i, j] * x[j] + b[i])
    # each addend gets its own sum
    D, E = ep.tensor("D", 2), ep.tensor("E", 2)
    B = ep.tensor("B", 2)
    st = parse("C[i,k] = A[i,j]*B[j,k] + D[i,l]*E[l,k]")
    assert st.expr == ep.sum(j, A[i, j] * B[j, k]) + ep.sum(l, D[i, l] * E[l, k])
    # an index used once is summed right at its access
    assert parse("y[i] = A[i,j] + b[i]").expr == ep.sum(j, A[i, j]) + b[i]
    # an index spanning the addition is summed around the whole sum
    st = parse("s = A[i,j]*x[j] + x[j]")
    assert st.expr == ep.sum(j, ep.sum(i, A[i, j]) * x[j] + x[j])


def test_sum_placement_nesting_order():
    # several indices placed at one node nest in order of first appearance
    A, B, x = ep.tensor("A", 3), ep.tensor("B", 2), ep.tensor("x", 2)
    st = parse("y[i] = A[i,k,j] * x[j,k]")
    assert st.expr == Sum(k, Sum(j, Mul(A[i, k, j], x[j, k])))
    st = parse("s = B[j,i] * B[i,j]")
    assert st.expr == Sum(j, Sum(i, Mul(B[j, i], B[i, j])))
    # parse tree ((E*C)*D): j's smallest node is E*C, k's the root, l's the access D
    E, C, D = ep.tensor("E", 2), ep.tensor("C", 2), ep.tensor("D", 2)
    st = parse("y[i] = E[i,j]*C[j,k]*D[k,l]")
    assert st.expr == ep.sum(k, Mul(ep.sum(j, Mul(E[i, j], C[j, k])), ep.sum(l, D[k, l])))
    # parentheses change the tree and so the placement
    st = parse("y[i] = E[i,j]*(C[j,k]*D[k,l])")
    assert st.expr == ep.sum(j, Mul(E[i, j], ep.sum(k, Mul(C[j, k], ep.sum(l, D[k, l])))))
    st = parse("y[i] = E[i,j]*(C[j,k]*D[k,j])")
    assert st.expr == ep.sum(j, Mul(E[i, j], ep.sum(k, Mul(C[j, k], D[k, j]))))
    st = parse("y[i] = E[i,k]*(C[j,k]*D[k,j])")
    assert st.expr == ep.sum(k, Mul(E[i, k], ep.sum(j, Mul(C[j, k], D[k, j]))))


def test_output_on_right_hand_side():
    y, A, x = ep.tensor("y", 1), ep.tensor("A", 2), ep.tensor("x", 1)
    st = parse("y[i] = y[i] + A[i,j]*x[j]")
    assert st.expr == y[i] + ep.sum(j, A[i, j] * x[j])
    assert "y" in st.tensors


def test_formats():
    st = parse("y[i] = A[i,j]*x[j]", {"A": "csc", "x": "dense"})
    assert st.tensors["A"].format == ep.Format.named("csc", 2)
    fmt = ep.Format(["dense", "compressed"])
    st = parse("y[i] = A[i,j]*x[j]", {"A": fmt})
    assert st.tensors["A"] == ep.tensor("A", 2, fmt)


def test_statement_equality():
    assert parse("y[i] = A[i,j]*x[j]") == parse("y[i] = A[i,j]*x[j]")
    assert parse("y[i] = A[i,j]*x[j]") != parse("y[i] = A[i,j]*x[j]", {"A": "csr"})


# --------------------------------------------------------------------------- errors

def caret_column(msg: str) -> int:
    """0-based column of the caret in an error message."""
    last = msg.splitlines()[-1]
    assert last.strip() == "^", msg
    return last.index("^") - 2


def check_error(text, col, fragment, formats=None, exc=FrontendError):
    with pytest.raises(exc) as info:
        parse(text, formats)
    err = info.value
    msg = str(err)
    assert fragment in msg, msg
    assert f"column {col + 1}" in msg.splitlines()[0], msg
    assert caret_column(msg) == col, msg
    assert err.column == col + 1 and err.pos == col
    if "\n" not in text:
        assert msg.splitlines()[1] == "  " + text, msg
    return err


def test_error_message_format():
    err = check_error("y[i] = A[i,j]) * x[j]", 13, "unexpected token ')'")
    assert str(err) == ("unexpected token ')' at column 14\n"
                        "  y[i] = A[i,j]) * x[j]\n"
                        "               ^")
    assert isinstance(err, ExpressionTypeError)
    assert isinstance(err, TypeError)


@pytest.mark.parametrize("text, col, fragment", [
    ("y[i] = A[i,j] x[j]", 14, "unexpected token 'x'"),
    ("y[i] = A[i,j] * * x[j]", 16, "unexpected token '*'"),
    ("y[i] = ", 7, "unexpected end of input"),
    ("y[i] = A[i,j] *", 15, "unexpected end of input"),
    ("y[i] = A[i,]", 11, "unexpected token ']'"),
    ("y[i] = A[i j]", 11, "unexpected token 'j'"),
    ("y[i] = A[2]", 9, "unexpected token '2'"),
    ("2 = x[i]", 0, "unexpected token '2'"),
    ("y[i] = y[i] == x[i]", 12, "unexpected token '='"),
    ("y[i] = sum(j A[i,j])", 13, "unexpected token 'A'"),
    ("y[i] = sum(2, A[i,j])", 11, "unexpected token '2'"),
    ("y[i] = inf[i]", 10, "unexpected token '['"),
])
def test_unexpected_token(text, col, fragment):
    check_error(text, col, fragment)


@pytest.mark.parametrize("text, col, fragment", [
    ("y[i] = A[i,j]) * x[j]", 13, "unexpected token ')'"),
    ("y[i] = (A[i,j] * x[j]", 7, "unbalanced '('"),
    ("y[i] = A[i,j * x[j]", 8, "unbalanced '['"),
    ("y[i] = A[i,(j] * x[j]", 13, "mismatched ']'"),
    ("y[i] = A[i,j) * x[j]", 12, "mismatched ')'"),
    ("y[i = A[i,j] * x[j]", 1, "unbalanced '['"),
    ("y[i] = x[i]]", 11, "unexpected token ']'"),
])
def test_unbalanced_brackets(text, col, fragment):
    check_error(text, col, fragment)


@pytest.mark.parametrize("text, col", [
    ("y[i] = A[i,j] @ x[j]", 14),
    ("y[i] = A[i,j] / x[j]", 14),
    ("y[i] = A[i,j];", 13),
    ("y[i] = $", 7),
])
def test_unknown_character(text, col):
    check_error(text, col, f"unknown character {text[col]!r}")


@pytest.mark.parametrize("text, col", [
    ("y[i] A[i,j]*x[j]", 5),
    ("A[i,j]*x[j]", 6),
    ("y", 1),
    ("3 * x", 0),
])
def test_missing_equals(text, col):
    check_error(text, col, "missing '='")


def test_order_mismatch():
    err = check_error("y[i] = A[i,j]*x[j] + A[i]", 21, "tensor A has order 2")
    assert "column 8" in str(err)
    check_error("s = a * a[i]", 8, "tensor a has order 0")
    check_error("y[i] = y[i,j]", 7, "tensor y has order 1 on the left-hand side")


@pytest.mark.parametrize("text, col", [
    ("y[i] = x[i]**0", 13),
    ("y[i] = x[i]**-1", 13),
    ("y[i] = x[i]**2.0", 13),
    ("y[i] = x[i]**1e2", 13),
    ("y[i] = x[i]**j", 13),
    ("y[i] = x[i]**(2)", 13),
    ("y[i] = x[i]**", 13),
])
def test_bad_exponent(text, col):
    check_error(text, col, "bad exponent")


def test_chained_power():
    check_error("y[i] = x[i]**2**2", 14, "chained '**'")


def test_sum_of_index_not_free():
    check_error("y[i] = sum(k, A[i,j]*x[j])", 11, "cannot sum over index k")
    check_error("y[i] = sum((j, k), A[i,j]*x[j])", 15, "cannot sum over index k")
    check_error("y[i] = sum((j, j), A[i,j])", 15, "cannot sum over index j")
    check_error("y[i] = sum(j, sum(j, A[i,j]))", 11, "cannot sum over index j")
    check_error("y[i] = sum(i, x[i])", 11, "cannot sum over index i, which is on the left")


def test_bound_index_used_outside_its_sum():
    check_error("y[i] = sum(j, A[i,j]) * x[j]", 26, "index j is bound by the sum")


def test_lhs_index_errors():
    check_error("y[i,j] = A[i,k]", 4, "index j on the left-hand side does not occur")
    check_error("y[i] = 2", 2, "index i on the left-hand side does not occur")
    check_error("y[i,i] = A[i,j]", 4, "index i appears twice on the left-hand side")


def test_diagonal_access():
    """A repeated index on the right is a diagonal, as in the index language."""
    A = ep.tensor("A", 2)
    st = parse("y[i] = A[i,i]")
    assert st.expr == A[i, i] and st.indices == (i,)
    st = parse("s = A[i,i]")                   # the trace: i is summed around A[i,i]
    assert st.expr == ep.sum(i, A[i, i]) and st.indices == ()


def test_format_errors():
    err = check_error("y[i] = A[i,j]*x[j]", 14, "format csr is for order-2", {"x": "csr"},
                      exc=FormatError)
    assert isinstance(err, FrontendError)
    check_error("y[i] = A[i,j]*x[j]", 7, "unknown format", {"A": "nope"}, exc=FormatError)
    check_error("y[i] = A[i,j]*x[j]", 0, "format csr", {"y": "csr"}, exc=FormatError)
    with pytest.raises(FrontendError, match="formats names tensor 'z'"):
        parse("y[i] = A[i,j]*x[j]", {"z": "dense"})


def test_multiline_error_location():
    with pytest.raises(FrontendError) as info:
        parse("y[i] =\n  A[i,j] * * x[j]")
    err = info.value
    assert err.line == 2 and err.column == 12
    lines = str(err).splitlines()
    assert "line 2, column 12" in lines[0]
    assert lines[1] == "    A[i,j] * * x[j]"
    assert caret_column(str(err)) == 11


def test_caret_follows_tabs():
    with pytest.raises(FrontendError) as info:
        parse("y[i] =\tx[i] @")
    assert str(info.value).splitlines()[-1] == "  " + " " * 6 + "\t" + " " * 5 + "^"
