"""The package's layers (issue 25): a module imports only its own layer or lower ones, and no modules
import each other in a circle, nor do sibling packages (issue 40).

Every ``import`` of ``tvrbench.*`` counts, at module level, inside a function (deferred) or under
``TYPE_CHECKING``: a deferred import still ties the lower module to the higher one. An import of
``tvrbench.pkg.sub`` is an edge to ``sub`` alone, not to ``pkg/__init__.py`` that Python runs first:
a package's ``__init__`` re-exporting its own submodules would otherwise put each of them in a circle
with it. So a circle through an ``__init__`` is a submodule importing its own package's namespace,
which is a real circular import. Names a package loads on first use (:mod:`tvrbench.lazy`) are
strings, not imports, and are not seen.

Between packages, an import counts for the siblings that hold its two ends (``tvrbench.mc.build`` →
``tvrbench.generators.records`` is ``mc`` → ``generators``; ``tvrbench.evaluation.fire.ranks`` →
``tvrbench.evaluation.ranking`` is ``fire`` → ``ranking``): siblings that import each other, even
through different files and inside functions, are one concept split in two, and are refused.
"""

from __future__ import annotations

import ast
from pathlib import Path

import tvrbench

PACKAGE = Path(tvrbench.__file__).parent

# Bottom to top; a module may import its own layer or a lower one. Siblings of one layer may import
# each other as long as no circle results.
LAYERS = (
    {"tvrbench", "errors", "signature", "lazy", "progress", "config", "home", "distributed", "numerics"},
    {"io", "results"},
    {"resources", "data", "lm"},
    {"proxies", "generators", "evaluation"},
    {"review"},
    {"mc"},
    {"publish", "report", "doctor"},
    {"cli", "__main__"},
)
LAYER = {name: level for level, names in enumerate(LAYERS) for name in names}


def module_files(root: Path = PACKAGE) -> dict[str, Path]:
    """Dotted name → file of every module under ``root`` (a package is its ``__init__.py``)."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def import_edges(modules: dict[str, Path]) -> list[tuple[str, str, int]]:
    """(importer, imported module, line) for every import of a tvrbench module, relative ones resolved."""
    edges = set()
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                # ``from pkg import sub`` imports the submodule; ``from pkg import name`` the package
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
            else:
                continue
            for target in targets:
                if target.split(".")[0] != "tvrbench":
                    continue
                while target not in modules:  # ``import tvrbench.a.b as c`` and the like: the module named
                    target = target.rpartition(".")[0]
                if target != name:
                    edges.add((name, target, node.lineno))
    return sorted(edges)


def layer_of(module: str) -> int:
    return LAYER[module.split(".")[1] if "." in module else module]


def upward_imports(edges) -> list[str]:
    return [f"{a} (layer {layer_of(a)}) -> {b} (layer {layer_of(b)}), line {line}" for a, b, line in edges if layer_of(b) > layer_of(a)]


def circular_imports(edges) -> list[str]:
    """The edges a → b that lie on a circle: a is reachable again from b."""
    graph: dict[str, set[str]] = {}
    for a, b, _ in edges:
        graph.setdefault(a, set()).add(b)

    def reachable(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    reach = {module: reachable(module) for module in graph}
    return [f"{a} -> {b}, line {line}" for a, b, line in edges if a in reach.get(b, ())]


def sibling_edges(edges) -> list[tuple[str, str, str]]:
    """(sibling a, sibling b, the import) for every import whose two ends lie in different children of
    one package: the children that hold them. An import of a module's own package or of its own
    submodule has no such pair (one end holds the other)."""
    pairs = []
    for a, b, line in edges:
        left, right = a.split("."), b.split(".")
        common = next((k for k, (x, y) in enumerate(zip(left, right)) if x != y), min(len(left), len(right)))
        if common < min(len(left), len(right)):
            pairs.append((".".join(left[: common + 1]), ".".join(right[: common + 1]), f"{a} -> {b}, line {line}"))
    return pairs


def sibling_circles(edges) -> list[str]:
    """The imports that put two siblings (packages or modules of one package) on a circle."""
    pairs = sibling_edges(edges)
    circles = circular_imports([(a, b, 0) for a, b, _ in pairs])
    return [f"{a} -> {b} ({why})" for a, b, why in pairs if f"{a} -> {b}, line 0" in circles]


def test_every_top_level_module_has_a_layer():
    top = {name.split(".")[1] if "." in name else name for name in module_files()}
    assert top <= set(LAYER), f"place these in LAYERS: {sorted(top - set(LAYER))}"


def test_no_module_imports_a_higher_layer():
    offending = upward_imports(import_edges(module_files()))
    assert not offending, "upward imports:\n" + "\n".join(offending)


def test_no_import_circles():
    offending = circular_imports(import_edges(module_files()))
    assert not offending, "imports on a circle:\n" + "\n".join(offending)


def test_no_circles_between_sibling_packages():
    offending = sibling_circles(import_edges(module_files()))
    assert not offending, "sibling packages on a circle:\n" + "\n".join(offending)


def deferred_imports(root: Path = PACKAGE) -> list[str]:
    """``file:line`` of every import of a tvrbench module inside a function, outside ``tvrbench/cli``
    (where deferring keeps ``--help`` fast)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] == "cli":
            continue
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(function):
                    ours = (isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("tvrbench"))) or (
                        isinstance(node, ast.Import) and any(alias.name.startswith("tvrbench") for alias in node.names)
                    )
                    if ours:
                        found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return sorted(set(found))


def test_deferred_imports_are_few():
    """Issue 40: a deferred import is for a heavy third-party library or the command line's start-up,
    not to hide a circle; at most 40 outside the CLI (218 once, 19 after issue 40)."""
    found = deferred_imports()
    assert len(found) <= 40, "\n".join(found)


def test_the_checks_see_deferred_relative_and_circular_imports(tmp_path):
    """The walker itself: a function-level relative import upward is an edge, and two modules that
    import each other are a circle; a package's ``__init__`` importing its submodule is not."""
    root = tmp_path / "tvrbench"
    (root / "io").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "io" / "__init__.py").write_text("from tvrbench.io.a import x\n")
    (root / "io" / "a.py").write_text("from tvrbench.io import b\nx = 1\n")
    (root / "io" / "b.py").write_text("def f():\n    from ..resources import y\n    from . import a\n")
    (root / "resources.py").write_text("y = 1\n")
    edges = import_edges(module_files(root))
    assert ("tvrbench.io.b", "tvrbench.resources", 2) in edges
    assert upward_imports(edges) == ["tvrbench.io.b (layer 1) -> tvrbench.resources (layer 2), line 2"]
    assert circular_imports(edges) == ["tvrbench.io.a -> tvrbench.io.b, line 1", "tvrbench.io.b -> tvrbench.io.a, line 3"]


def test_a_circle_between_packages_is_seen_though_no_file_is_on_one(tmp_path):
    """``a.x`` imports ``b.y`` and ``b.z`` imports ``a.w`` inside a function: no file is on a circle,
    the packages are; a package importing its own submodule, or a submodule its package, is no pair."""
    root = tmp_path / "tvrbench"
    for package in ("a", "b"):
        (root / package).mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "a" / "__init__.py").write_text("from tvrbench.a.x import x\n")
    (root / "a" / "x.py").write_text("from tvrbench.b.y import y\nx = 1\n")
    (root / "a" / "w.py").write_text("from tvrbench import a\nw = 1\n")
    (root / "b" / "__init__.py").write_text("")
    (root / "b" / "y.py").write_text("y = 1\n")
    (root / "b" / "z.py").write_text("def f():\n    from tvrbench.a.w import w\n")
    edges = import_edges(module_files(root))
    assert circular_imports(edges) == []
    assert sibling_circles(edges) == [
        "tvrbench.a -> tvrbench.b (tvrbench.a.x -> tvrbench.b.y, line 1)",
        "tvrbench.b -> tvrbench.a (tvrbench.b.z -> tvrbench.a.w, line 2)",
    ]


TESTS = Path(__file__).resolve().parent


def untested_modules(package: Path = PACKAGE, tests: Path = TESTS) -> list[str]:
    """The public modules (no part with a leading underscore; ``__main__`` exempt) of ``package`` that
    no file under ``tests`` names in an import statement, at any level (a package counts only when
    imported itself: ``from tvrbench.io import scores`` imports ``tvrbench.io.scores``)."""
    modules = module_files(package)
    test_files = {f"tests:{path.relative_to(tests)}": path for path in sorted(tests.rglob("*.py"))}
    imported = {target for importer, target, _ in import_edges({**modules, **test_files}) if importer.startswith("tests:")}
    public = [name for name in modules if not any(part.startswith("_") for part in name.split("."))]
    return [name for name in public if name not in imported]


def test_every_public_module_is_imported_by_a_test():
    assert untested_modules() == []


def test_the_test_coverage_check_sees_imports_at_any_level_and_only_public_modules(tmp_path):
    root = tmp_path / "tvrbench"
    for name in ("__init__.py", "__main__.py", "_private.py", "a/__init__.py", "a/used.py", "a/deferred.py", "a/unused.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x = 1\n")
    tests = tmp_path / "tests"
    (tests / "sub").mkdir(parents=True)
    (tests / "sub" / "test_a.py").write_text("import tvrbench\nfrom tvrbench.a import used\n\n\ndef test():\n    import tvrbench.a.deferred\n")
    assert untested_modules(root, tests) == ["tvrbench.a", "tvrbench.a.unused"]
