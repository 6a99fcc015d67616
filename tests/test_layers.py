"""The packages of ``policysched`` import only downward, and no module imports itself back
through others (no import cycle), lazy imports inside functions included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "policysched"

# lowest first; a layer may import its own package and the layers before it. CEL is a
# language of its own, below the model (whose quantities and int64 bounds are CEL's).
LAYERS = ("errors", "resources", "threads", "cel", "model", "policy", "cache", "framework",
          "cluster",
          "service", "commands", "cli", "__main__")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The ``policysched`` modules ``path`` imports (anywhere in it, functions included)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("policysched"):
                for alias in node.names:  # `from pkg import module` imports the module
                    sub = f"{target}.{alias.name}"
                    found.add(sub if sub in MODULES else target)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("policysched")}
    found.discard(name)
    return found


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}
GRAPH = {name: imports(path) for name, path in MODULES.items()}


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 else -1


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if layer(m) >= 0))
def test_a_module_imports_only_its_layer_and_those_below(module: str) -> None:
    above = sorted(t for t in GRAPH[module] if layer(t) > layer(module))
    assert not above, f"{module} imports higher layers: {above}"


def test_no_import_cycle() -> None:
    seen: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        seen[module] = 1
        for target in sorted(GRAPH.get(module, ())):
            if target not in GRAPH:
                continue
            if seen.get(target) == 1:
                cycle = [*path[path.index(target):], target]
                raise AssertionError("import cycle: " + " → ".join(cycle))
            if target not in seen:
                visit(target, [*path, target])
        seen[module] = 2

    for module in sorted(GRAPH):
        if module not in seen:
            visit(module, [module])


def test_every_module_says_what_it_is_for() -> None:
    missing = [name for name, path in MODULES.items()
               if ast.get_docstring(ast.parse(path.read_text())) is None]
    assert not missing, f"modules without an opening docstring: {sorted(missing)}"
