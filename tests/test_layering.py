"""Data flows one way: config -> topology -> traffic / paths -> routing -> engine -> results /
tuning -> apps. A module may import its own layer and the layers below, never one above."""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "jaxnet"
LAYERS = {"core": 0, "topology": 1, "traffic": 2, "paths": 2, "routing": 3, "sim": 4,
          "results": 5, "tune": 5, "cli": 6}
MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "core"


def _imports(path: Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("jaxnet."):
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("jaxnet."))


def test_every_package_has_a_layer():
    packages = {p.relative_to(PACKAGE).parts[0].removesuffix(".py") for p in MODULES}
    assert packages - {"__init__"} <= set(LAYERS)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path):
    own = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
    if own == "__init__":
        return
    for module in _imports(path):
        target = _layer(module)
        assert LAYERS[target] <= LAYERS[own], f"{own} imports {module} (layer {target} is above)"
        if LAYERS[target] == LAYERS[own] and target != own:
            pytest.fail(f"{own} imports its sibling layer {module}")
