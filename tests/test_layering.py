"""Data flows one way: config -> topology -> traffic / paths -> routing -> engine -> build,
results -> tune -> apps. A module may import its own layer and the layers below, never one above;
registries list their entries explicitly; the engine takes built objects only; code quotes
no measurements."""
import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "jaxnet"
LAYERS = {"core": 0, "topology": 1, "traffic": 2, "paths": 2, "routing": 3, "sim": 4,
          "build": 5, "results": 5, "tune": 6, "cli": 7, "api": 8}
MODULES = sorted(p for p in PACKAGE.rglob("*.py"))
# What the engine may take from the packages below it: records and interfaces, no builders.
ENGINE_MAY_IMPORT = {"jaxnet.routing.base", "jaxnet.topology.base", "jaxnet.traffic.base",
                     "jaxnet.traffic.device"}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "core"


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _imports(path: Path):
    """The jaxnet modules (a package: its __init__) and config libraries a module imports;
    `from package import submodule` counts as the submodule."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "jaxnet":
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                yield dotted if _is_module(dotted) else node.module
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("hydra", "omegaconf"):
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith(("jaxnet.", "hydra", "omegaconf")))


def _own(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def test_every_package_has_a_layer():
    packages = {p.relative_to(PACKAGE).parts[0].removesuffix(".py") for p in MODULES}
    assert packages - {"__init__"} <= set(LAYERS)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path):
    own = _own(path)
    if own == "__init__":
        return
    for module in _imports(path):
        if not module.startswith("jaxnet."):
            continue
        target = _layer(module)
        if target not in LAYERS:  # a name of jaxnet/__init__ (the version)
            continue
        assert LAYERS[target] <= LAYERS[own], f"{own} imports {module} (layer {target} is above)"
        if LAYERS[target] == LAYERS[own] and target != own:
            pytest.fail(f"{own} imports its sibling layer {module}")


@pytest.mark.parametrize("path", [p for p in MODULES if p.name != "__init__.py" and len(p.relative_to(PACKAGE).parts) > 1],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_submodule_imports_its_own_package(path):
    """A package's __init__ lists its registry's entries; its modules never import it back."""
    package = "jaxnet." + path.relative_to(PACKAGE).parts[0]
    assert package not in set(_imports(path)), f"{path.name} imports its own package {package}"


@pytest.mark.parametrize("path", sorted((PACKAGE / "sim").glob("*.py")), ids=lambda p: p.name)
def test_the_engine_takes_built_objects_only(path):
    """jaxnet.sim imports no topology, traffic or routing builder and no config code."""
    for module in _imports(path):
        if module.startswith(("hydra", "omegaconf")) or module == "jaxnet.build":
            pytest.fail(f"sim/{path.name} imports config code: {module}")
        if _layer(module) in ("topology", "traffic", "routing", "paths"):
            assert module in ENGINE_MAY_IMPORT, f"sim/{path.name} imports {module}, not a record or interface"


# A measured figure: a speed ratio, a time, a rate or a size with its unit.
MEASUREMENT = re.compile(r"\b\d+(\.\d+)?\s?(x (slower|faster)|(ms|us|µs|s|seconds|minutes|hours)\b|"
                         r"[MG]B\b|M router-cycles)", re.I)


def _comments_and_docstrings(path: Path):
    source = path.read_text()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield getattr(node, "lineno", 1), doc


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_code_quotes_no_measurements(path):
    """Measured figures belong in the benchmark docs, where they are dated and reproducible."""
    for line, text in _comments_and_docstrings(path):
        found = MEASUREMENT.search(text)
        assert not found, f"{path.name}:{line} quotes a measurement: {found.group(0)!r}"
