"""Output targets are asked what they can do, never what class they are: the
driver, the schedule passes and the targets themselves read the capabilities
the Target protocol declares (lower/target.py), so that a new target is one
module that answers them. Counted here: `isinstance(x, <a Target class>)`,
`type(x) is/in ...` other than a class testing `type(self)` against itself,
and `getattr`, which reads an attribute the protocol does not declare."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOWER = ROOT / "etchpy" / "lower"
FILES = sorted([LOWER / "driver.py", LOWER / "target.py",
                *(LOWER / "schedule").glob("*.py"), *(LOWER / "targets").glob("*.py")])


def _target_classes() -> set[str]:
    names = set()
    for p in FILES:
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Target"):
                names.add(node.name)
    return names


def _class_checks(text: str, label: str, targets: set[str]) -> list[str]:
    tree = ast.parse(text)
    owner = {}
    for cls in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]:
        for node in ast.walk(cls):
            owner[id(node)] = cls.name
    bad = []
    for node in ast.walk(tree):
        where = f"{label}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "getattr":
                bad.append(f"{where} getattr")
            if node.func.id == "isinstance" and len(node.args) == 2:
                kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [
                    node.args[1]]
                if any(isinstance(k, ast.Name) and k.id in targets for k in kinds):
                    bad.append(f"{where} isinstance on a target class")
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call) \
                and isinstance(node.left.func, ast.Name) and node.left.func.id == "type":
            own = (isinstance(node.left.args[0], ast.Name) and node.left.args[0].id == "self"
                   and len(node.comparators) == 1
                   and isinstance(node.comparators[0], ast.Name)
                   and node.comparators[0].id == owner.get(id(node)))
            if not own:
                bad.append(f"{where} type(...) comparison")
    return bad


def test_the_lowering_asks_targets_for_capabilities_not_classes():
    targets = _target_classes()
    assert {"DenseTarget", "AppendTarget", "WorkspaceTarget", "BucketTarget"} <= targets
    bad = [b for p in FILES
           for b in _class_checks(p.read_text(), str(p.relative_to(ROOT)), targets)]
    assert not bad, "checks on target classes or undeclared attributes:\n" + "\n".join(bad)


def test_the_counter_sees_a_class_check():
    """The scan is not blind: a check of the kinds it forbids is found."""
    text = ("class DenseTarget:\n    def own(self):\n        return type(self) is DenseTarget\n"
            "def f(t):\n    return isinstance(t, DenseTarget) or type(t) is DenseTarget "
            "or getattr(t, 'has', None)\n")
    assert len(_class_checks(text, "probe", {"DenseTarget"})) == 3
