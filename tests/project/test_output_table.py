"""Output targets register by one line (issue 41): each module of lower/targets/
declares its mode, rank, predicate and constructor (`@output(...)`,
lower/target.py), lower/outputs.py runs the table, and nothing else in the
package names a registered mode: no comparison with one, no `case` on one, no
function returning one, no Output record built with one. The runtime asks an
Output whether it is records (`Output.records`), not which mode it is.

"dense" is left out of the count: it is also a format's name, and the Output of
a dense array is what the schedule passes specialise (`prog.output.mode ==
"dense"`, a question about the record's layout, not a branch over targets)."""
import ast
import pathlib

import etchpy as ep
from etchpy import pipeline
from etchpy.lower import outputs
from etchpy.runtime.request import make_request
from etchpy.tuning import DEFAULT

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "etchpy"
TARGETS = PKG / "lower" / "targets"
SCANNED = sorted(p for p in PKG.rglob("*.py") if TARGETS not in p.parents)


def _modes() -> set[str]:
    return {row.mode for row in outputs.table()} - {"dense"}


def _is_mode(node) -> bool:
    return (isinstance(node, ast.Name) and node.id == "mode"
            or isinstance(node, ast.Attribute) and node.attr == "mode")


def _named(text: str, label: str, modes: set[str]) -> list[str]:
    bad = []
    for node in ast.walk(ast.parse(text)):
        where = f"{label}:{getattr(node, 'lineno', '?')}"
        strings = lambda nodes: [n.value for n in nodes if isinstance(n, ast.Constant)
                                 and n.value in modes]  # noqa: E731
        if isinstance(node, ast.Compare) and any(map(_is_mode, [node.left, *node.comparators])):
            bad += [f"{where} compares with {s!r}" for s in
                    strings([node.left, *node.comparators])]
        elif isinstance(node, ast.Match):
            bad += [f"{where} case {s!r}" for c in node.cases for s in
                    strings(n.value for n in ast.walk(c.pattern)
                            if isinstance(n, ast.MatchValue))]
        elif isinstance(node, ast.Return) and node.value is not None:
            bad += [f"{where} returns {s!r}" for s in strings([node.value])]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "Output" and node.args):
            bad += [f"{where} Output({s!r}, ...)" for s in strings(node.args[:1])]
    return bad


def test_nothing_outside_the_targets_names_a_mode():
    modes = _modes()
    assert {"append", "coords", "spans", "bucket", "insert", "workspace"} <= modes
    bad = [b for p in SCANNED for b in _named(p.read_text(), str(p.relative_to(ROOT)), modes)]
    assert not bad, "mode strings named outside lower/targets/:\n" + "\n".join(bad)


def test_the_counter_sees_each_kind_of_naming():
    """The scan is not blind: the old chain's forms are found (outputs.py's
    returns and match, the runtime's `out.mode == "coords"`)."""
    text = ('def f(t, out, mode):\n    if out.mode == "coords":\n        return "append"\n'
            '    match mode:\n        case "bucket":\n            pass\n'
            '    return Output("spans", (), None)\n')
    assert len(_named(text, "probe", {"coords", "append", "bucket", "spans"})) == 4


def test_the_table_starts_dense_and_ends_with_records():
    rows = outputs.table()
    assert rows[0].mode == "dense" and rows[-1].mode == "coords"
    assert [row.mode for row in rows if row.records] == ["coords"]
    assert all(row.make.__module__.startswith("etchpy.lower.targets.") for row in rows)


# The mode each named format's output gets for csr A[i,j], csc A[i,j], dense D[i,j]
# and Σ_k A[i,k]·B[k,j]; then with tuning.workspaces and tuning.counting_sort off.
# The if-chain the table replaced (lower/outputs.py before it) gave these.
CHOSEN = {
    "dense": "dense dense dense dense", "csr": "append bucket append workspace",
    "csc": "bucket append bucket workspace", "dcsr": "append coords append workspace",
    "coo": "listed coords listed coords", "csf": "append coords append workspace",
    "blocks": "coords coords coords coords", "bsr": "coords coords coords coords", "banded": "coords coords coords coords",
    "bytemap": "insert insert insert insert", "hash": "insert insert insert insert",
    "rle": "spans dense spans dense", "sparse_rle": "spans coords spans coords",
    "uniform_band": "coords coords coords coords", "ellpack": "coords coords coords coords"}
SWITCHED_OFF = {"csr": "append coords append coords", "csc": "coords append coords coords"}


def _chosen(fmt, tuning) -> str:
    i, j, k = ep.indices("i j k")
    A, B, D = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr"), ep.tensor("D", 2)
    exprs = (A[i, j], ep.tensor("A", 2, "csc")[i, j], D[i, j], ep.sum(k, A[i, k] * B[k, j]))
    return " ".join(pipeline.compile_request(make_request(e, output=fmt, tuning=tuning))
                    .program.output.mode for e in exprs)


def test_the_table_chooses_as_the_chain_did():
    assert {f: _chosen(f, DEFAULT) for f in ep.formats.NAMED_FORMATS} == CHOSEN
    off = DEFAULT.with_(workspaces=False, counting_sort=False)
    assert {f: _chosen(f, off) for f in SWITCHED_OFF} == SWITCHED_OFF
