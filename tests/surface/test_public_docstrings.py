"""help() on every public name shows its parameters and an example (issue 21, Docs).

Every public function, class and method of `etchpy` (and of `etchpy.testing`'s
strategies) has a docstring that names each of its parameters and holds an example
(a `>>>` line or an indented code line); every public property has a docstring.
The level classes' packing protocol (formats.level) is internal and not walked."""
import inspect
import re

import pytest

import etchpy as ep
import etchpy.testing as testing

SKIP_PARAMS = {"self", "cls", "args", "kwargs", "inputs", "changes"}
TESTING = ("problems", "semirings_st", "formats_for", "sparse_arrays", "check_backends",
           "assert_same", "random_formats", "with_formats", "max_min", "stored_values")
LEVEL_CLASSES = (ep.Dense, ep.Compressed, ep.Singleton, ep.Banded, ep.BlockList, ep.Runs,
                 ep.ByteMap, ep.Hash)


def public_names():
    for name in sorted(n for n in dir(ep) if not n.startswith("_")):
        obj = getattr(ep, name)
        if inspect.ismodule(obj):
            continue
        yield f"ep.{name}", obj
        if inspect.isclass(obj) and obj not in LEVEL_CLASSES:
            yield from members(name, obj)
    for name in TESTING:
        yield f"etchpy.testing.{name}", getattr(testing, name)


def members(name, cls):
    """The public methods and properties of `cls`, its etchpy base classes' too."""
    seen = set()
    for base in cls.__mro__:
        if not base.__module__.startswith("etchpy"):
            continue
        for attr, raw in vars(base).items():
            if attr.startswith("_") or attr in seen or not (callable(raw) or isinstance(
                    raw, (property, classmethod, staticmethod))):
                continue
            seen.add(attr)
            yield f"ep.{name}.{attr}", raw if isinstance(raw, property) else getattr(cls, attr)


def parameters(obj) -> list[str]:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return []
    return [p for p in sig.parameters if p not in SKIP_PARAMS and not p.startswith("_")]


def has_example(doc: str) -> bool:
    return ">>>" in doc or bool(re.search(r"\n\n( {4,}).+", doc))


NAMES = list(public_names())


@pytest.mark.parametrize("name, obj", NAMES, ids=[n for n, _ in NAMES])
def test_docstring_names_parameters_and_shows_an_example(name, obj):
    doc = inspect.getdoc(obj) or ""
    assert doc.strip(), f"{name} has no docstring"
    if isinstance(obj, property) or not callable(obj):
        return
    missing = [p for p in parameters(obj) if not re.search(rf"\b{p}\b", doc)]
    assert not missing, f"{name}'s docstring does not mention {missing}"
    assert has_example(doc), f"{name}'s docstring has no example"


def test_the_walk_covers_the_surface():
    names = {n for n, _ in NAMES}
    for must in ("ep.compile", "ep.evaluate", "ep.einsum", "ep.export_c", "ep.tensor",
                 "ep.indices", "ep.sum", "ep.Tensor.from_coords", "ep.Kernel.build",
                 "ep.Kernel.explain", "ep.Format", "ep.Semiring", "ep.semirings",
                 "ep.check_axioms", "ep.Tuning", "ep.optimize", "ep.equivalent",
                 "ep.InputError", "ep.PerformanceWarning", "etchpy.testing.problems"):
        assert must in names


def test_public_signatures_have_type_hints():
    for fn in (ep.compile, ep.evaluate, ep.einsum, ep.export_c, ep.tensor, ep.indices,
               ep.sum, ep.optimize, ep.check_axioms, ep.Tensor.from_coords,
               ep.Kernel.build, ep.Kernel.explain):
        hints = inspect.signature(fn).return_annotation
        assert hints is not inspect.Signature.empty, fn.__qualname__


def test_py_typed_marker_ships():
    from importlib.resources import files
    assert files("etchpy").joinpath("py.typed").is_file()
