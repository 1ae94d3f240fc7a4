"""Kernels restored from their manifests (runtime.restored): a call reads only the
kernel's call face; the plan, the program and the expression are decoded when
something asks for them, and are then those the kernel was compiled with."""
import hashlib
import json
import gc
import re
import time
import weakref
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import jsondata
from etchpy.runtime.restored import CallFace, Restored, stored_parts
from in_threads import run_threads

pytestmark = pytest.mark.usefixtures("shared_cache")

i, j, k = ep.indices("i j k")


def _cases():
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    B, C = ep.tensor("B", 2), ep.tensor("C", 2)
    M = sp.random_array((60, 50), density=0.1, format="csr", random_state=1)
    rng = np.random.default_rng(1)
    b, c = rng.random((30, 20)), rng.random((20, 10))
    return [(ep.sum(j, A[i, j] * x[j]), {}, {"A": M, "x": np.arange(50.0)}, M @ np.arange(50.0)),
            (ep.sum(j, B[i, j] * C[j, k]), {}, {"B": b, "C": c}, b @ c),
            (ep.sum(j, A[i, j] * x[j]), {"output": "csr"}, None, None)]


@pytest.mark.parametrize("case", range(3))
def test_a_restored_kernel_decodes_its_program_only_when_asked(case):
    expr, options, inputs, want = _cases()[case]
    if inputs is None:                         # a sparse output: read by its face
        A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
        expr, inputs = A[i, j] * x[j], {"A": sp.eye_array(5, format="csr"), "x": np.ones(5)}
        want = sp.eye_array(5).toarray()
    first = ep.Kernel(expr, **options)
    got = first(**inputs)
    again = ep.Kernel(expr, **options)
    assert again.from_manifest and not again.compiled.decoded
    for _ in range(2):
        out = again(**inputs)
        out = out.toarray() if hasattr(out, "toarray") else out
        np.testing.assert_allclose(out, want, rtol=1e-12)
    shown = again._current()              # the kernel planned for the call's size class
    assert not again.compiled.decoded and not shown.compiled.decoded
    np.testing.assert_allclose(got.toarray() if hasattr(got, "toarray") else got, want,
                               rtol=1e-12)
    assert again.program == first.program and again.plan == first.plan
    assert again.expr == first.expr and shown.compiled.decoded
    timeless = lambda text: re.sub(r"[0-9.]+ ms", "ms", text)     # noqa: E731
    assert timeless(again.explain()) == timeless(first.explain())


@pytest.mark.parametrize("case", range(3))
def test_a_kernel_compiled_here_lets_its_program_go_once_encoded(case):
    """A kernel compiled in this process keeps its program as its stored encoding
    once its first build is rendered (the Compiled's objects freed), for itself
    and the kernel planned for its calls; asking for the program decodes the same
    program, which the next build rendered lets go again."""
    expr, options, inputs, want = _cases()[case]
    if inputs is None:
        A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
        expr, inputs = A[i, j] * x[j] * 3.5, {"A": sp.eye_array(7, format="csr"),
                                              "x": np.ones(7)}
        want = 3.5 * sp.eye_array(7).toarray()
    kern = ep.Kernel(expr, **options, tuning=ep.Tuning(fused_checks=False))
    program, first = kern.compiled.program, weakref.ref(kern.compiled)
    for _ in range(2):
        out = kern(**inputs)
        np.testing.assert_allclose(out.toarray() if hasattr(out, "toarray") else out, want,
                                   rtol=1e-12)
    gc.collect()
    shown = kern._current()
    assert isinstance(kern.compiled, Restored) and not kern.compiled.decoded
    assert isinstance(shown.compiled, Restored) and not shown.compiled.decoded
    assert first() is None
    stored = jsondata.dumps((shown.program, shown.expr)).encode()
    assert hashlib.sha256(stored).hexdigest() == shown._face.digest
    assert shown.compiled.decoded
    other = "int64_t" if "int32_t" in kern._libs else "int32_t"
    kern.library(other)                   # rendered from the shown kernel's program
    assert not shown.compiled.decoded
    assert kern.compiled.program == program and kern.compiled.decoded


def test_kernels_compiled_and_called_here_hold_few_objects():
    """Kernels compiled and called in this process, kept in the kernel store, hold
    a few hundred tracked objects each (measured 263 a kernel by bench.held_objects;
    2914 when each kept its Compiled), not their programs' thousands: whatever comes
    to hold a program again (a new cache, a call path reading it) fails here."""
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    M = sp.random_array((60, 50), density=0.1, format="csr", random_state=2)
    inputs = {"A": M, "x": np.ones(50)}
    kernels = [ep.compile(ep.sum(j, A[i, j] * x[j]) * 0.5)]     # imports, first-use tables
    kernels[0](**inputs)
    gc.collect()
    before = len(gc.get_objects())
    for c in (1.5, 2.5, 3.5, 4.5):
        kern = ep.compile(ep.sum(j, A[i, j] * x[j]) * c)
        np.testing.assert_allclose(kern(**inputs), c * (M @ np.ones(50)), rtol=1e-12)
        kernels.append(kern)
    gc.collect()
    held = (len(gc.get_objects()) - before) / 4
    assert held < 1000, held


def test_the_stored_face_is_the_face_of_the_decoded_program():
    expr, _, inputs, _ = _cases()[0]
    ep.Kernel(expr)(**inputs)
    again = ep.Kernel(expr)
    face = again._face
    full = again.compiled.full()
    assert replace(CallFace.of(full), digest=face.digest) == face
    parts, digest = stored_parts(full)
    assert face.digest == digest
    assert digest == hashlib.sha256(jsondata.dumps((full.program, full.expr)).encode()).hexdigest()
    assert jsondata.loads(jsondata.dumps(parts))["program"] == full.program


def test_text_parts_are_written_as_they_are_and_decode_to_their_values():
    value = {"k": (1, float("nan"), frozenset({"a"}))}
    part = jsondata.Text.of(value)
    for defer in ((), ("p",)):
        text = jsondata.dumps({"p": part, "q": 2}, defer=defer)
        assert text.count(part.text.replace('"', '\\"')) + text.count(part.text) == 1
        back = jsondata.loads(text, defer=defer)
        got = back["p"].value() if defer else back["p"]
        assert repr(got) == repr(value) and back["q"] == 2


def test_deferred_values_decode_to_what_was_stored():
    obj = {"a": (1, 2.5, float("inf")), "plan": {"x": [frozenset({1}), b"\x00"]}, "z": None}
    text = jsondata.dumps(obj)
    lazy = jsondata.loads(text, defer=("plan", "z"))
    assert lazy["a"] == obj["a"]
    assert isinstance(lazy["plan"], jsondata.Deferred) and isinstance(lazy["z"], jsondata.Deferred)
    assert lazy["plan"].value() == obj["plan"] and lazy["z"].value() is None
    assert lazy["plan"].value() is lazy["plan"].value()          # decoded once


def test_values_written_as_text_stay_one_string_until_needed():
    """dumps(defer=...) writes a deferred value as its own JSON text: a reader that
    defers it parses one string (no containers), one that does not decodes it."""
    obj = {"a": (1, 2), "plan": {"x": [frozenset({1}), b"\x00"], "y": (3.5, float("nan"))}}
    text = jsondata.dumps(obj, defer=("plan",))
    assert json.loads(text)["~d"][1][1].keys() == {"~t"}
    lazy = jsondata.loads(text, defer=("plan",))
    assert isinstance(lazy["plan"], jsondata.Deferred) and isinstance(lazy["plan"]._data["~t"], str)
    assert lazy["plan"].value()["x"] == obj["plan"]["x"]
    whole = jsondata.loads(text)
    assert whole["a"] == (1, 2) and whole["plan"]["x"] == obj["plan"]["x"]
    for bad in ('{"~t": 5}', '{"~t": "[1,"}', '{"~t": "{\\"~q\\": 1}"}'):
        with pytest.raises(jsondata.DataError):
            jsondata.loads(bad)
        lazy = jsondata.loads('{"~d": [["plan", %s]]}' % bad, defer=("plan",))
        with pytest.raises(jsondata.DataError):
            lazy["plan"].value()


def test_a_malformed_deferred_value_is_refused_when_decoded():
    text = json.dumps({"~d": [["plan", {"~x": 1}], ["ok", 1]]})
    lazy = jsondata.loads(text, defer=("plan",))
    assert lazy["ok"] == 1
    with pytest.raises(jsondata.DataError):
        lazy["plan"].value()
    with pytest.raises(jsondata.DataError):
        jsondata.loads(text)


class _SlowPart:
    """A stored part whose decoding takes a while and is counted."""

    def __init__(self, value, counts, name):
        self._value, self._counts, self._name = value, counts, name

    def value(self):
        self._counts[self._name] = self._counts.get(self._name, 0) + 1
        time.sleep(0.02)
        return self._value


def test_threads_asking_at_once_share_one_decoding():
    """Several threads ask a restored kernel's program at once (kernels are called
    from Python threads; explain() and a build's rendering read it): it is decoded
    once, every thread gets the same Compiled, and none finds the stored parts
    already cleared by the thread that decoded them (a TypeError before)."""
    counts, parts = {}, {"plan": "P", "costs": None, "expr": "E", "program": "G", "nesting": []}
    saved = {name: _SlowPart(v, counts, name) for name, v in parts.items()}
    restored = Restored("request", saved, face=None)
    got = []
    errors = run_threads(lambda t: got.append(restored.full() if t % 2 else restored.program),
                         4)
    assert not errors, errors[0]
    assert counts == {name: 1 for name in parts}
    full = restored.full()
    assert full.program == "G" and full.plan == "P"
    assert all(g is full or g == "G" for g in got) and len(got) == 4
