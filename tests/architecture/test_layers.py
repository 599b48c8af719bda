"""The package layers hold: no import cycle, the import-linter contracts pass, modules stay small.

No import cycle means every import counts: at module level, inside a function (a lazy import),
under ``TYPE_CHECKING``, and the names a package exports lazily (a module-level table of
``name -> module`` that ``importlib`` imports on first use). The rule holds for modules
(``conch.agent.session`` <-> ``conch.mcp.client``) and for packages (``conch.agent`` <->
``conch.mcp``, whichever of their modules import each other).

The contracts live in pyproject.toml (``[tool.importlinter]``); docs/architecture.md explains
them. A check that could never fail would prove nothing, so tests break a copy of the tree, or
build a small package, on purpose and check that the check catches it.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "conch"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
MAX_LINES = 500


def _graph(package: str) -> grimp.ImportGraph:
    """Every import between the modules of ``package``: grimp reads every import statement
    (module level, in functions, under ``TYPE_CHECKING``); the lazy export tables are added."""
    graph = grimp.build_graph(package, cache_dir=None)
    for module in sorted(graph.modules):
        for imported in _lazy_exports(graph, module):
            graph.add_import(importer=module, imported=imported)
    return graph


def _lazy_exports(graph: grimp.ImportGraph, module: str) -> Iterator[str]:
    """The modules ``module`` imports by name on first use: the values of a module-level dict
    whose values all name modules of the graph (``_PUBLIC = {"Session": "conch.agent.session"}``)."""
    tree = ast.parse(_file_of(module).read_text(encoding="utf-8"))
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if not isinstance(value, ast.Dict) or not value.values:
            continue
        names = [v.value for v in value.values if isinstance(v, ast.Constant)]
        named = {n for n in names if isinstance(n, str) and n in graph.modules}
        if len(named) == len(set(names)) and len(names) == len(value.values):
            yield from sorted(named - {module})


def _file_of(module: str) -> Path:
    """The source file of ``module``, found from its top package without importing it."""
    top, *rest = module.split(".")
    found = importlib.util.find_spec(top)
    assert found is not None and found.origin is not None, top
    path = Path(found.origin).parent.joinpath(*rest)
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _cycles(nodes: Iterable[str], edges: Callable[[str], Iterable[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node (Tarjan): each is a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges(node)):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return sorted(cycles)


def _package(module: str) -> str:
    """The package ``module`` belongs to, one level under the root: ``conch.agent`` for
    ``conch.agent.session``; the root and its own modules (``conch.errors``) stand alone."""
    return ".".join(module.split(".")[:2])


def module_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Groups of modules that import each other, directly or through others."""
    return _cycles(graph.modules, graph.find_modules_directly_imported_by)


def package_cycles(graph: grimp.ImportGraph) -> list[str]:
    """Groups of packages whose modules import each other, each with the imports between its
    members (``importer -> imported (line N)``), so a failure says what to move."""
    between: dict[str, dict[str, list[tuple[str, str]]]] = {}
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            a, b = _package(module), _package(imported)
            if a != b:
                between.setdefault(a, {}).setdefault(b, []).append((module, imported))
    packages = {_package(m) for m in graph.modules}
    found = []
    for group in _cycles(packages, lambda p: between.get(p, {})):
        lines = [" <-> ".join(group)]
        for a in group:
            for b in group:
                for importer, imported in sorted(between.get(a, {}).get(b, [])):
                    details = graph.get_import_details(importer=importer, imported=imported)
                    where = ", ".join(str(d["line_number"]) for d in details) or "lazy export"
                    lines.append(f"  {importer} -> {imported} (line {where})")
        found.append("\n".join(lines))
    return found


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_no_conch_module_takes_part_in_an_import_cycle() -> None:
    assert module_cycles(_graph("conch")) == []


def test_no_conch_package_takes_part_in_an_import_cycle() -> None:
    found = package_cycles(_graph("conch"))
    assert not found, "\n".join(found)


def test_a_cycle_through_a_function_level_import_or_a_lazy_export_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "cyclic"
    for package in ("front", "core", "base"):
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text("", encoding="utf-8")
    (root / "__init__.py").write_text("", encoding="utf-8")
    files = {
        # front -> core at module level; core -> front only inside a function
        "front/app.py": "from cyclic.core import engine\n",
        "core/engine.py": "def later():\n    from cyclic.front import view\n",
        "front/view.py": "X = 1\n",
        # base.table exports a name lazily from base.impl, which imports base.table
        "base/table.py": '_PUBLIC = {"Thing": "cyclic.base.impl"}\n',
        "base/impl.py": "import cyclic.base.table\n",
    }
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))

    graph = _graph("cyclic")

    assert module_cycles(graph) == [["cyclic.base.impl", "cyclic.base.table"]]
    (found,) = package_cycles(graph)
    assert found.splitlines() == [
        "cyclic.core <-> cyclic.front",
        "  cyclic.core.engine -> cyclic.front.view (line 2)",
        "  cyclic.front.app -> cyclic.core.engine (line 1)",
    ]


def test_the_layer_contracts_hold_for_the_tree() -> None:
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout


def test_a_library_module_importing_the_cli_breaks_the_layer_contract(tmp_path: Path) -> None:
    shutil.copytree(SRC, tmp_path / "src" / "conch", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    model = tmp_path / "src" / "conch" / "policy" / "model.py"
    model.write_text(model.read_text(encoding="utf-8") + "\nimport conch.cli.main\n", "utf-8")

    result = _lint_imports(tmp_path)

    assert result.returncode != 0
    assert "BROKEN" in result.stdout
    assert "conch.policy.model -> conch.cli.main" in result.stdout


def test_a_library_module_importing_a_terminal_library_breaks_a_contract(tmp_path: Path) -> None:
    shutil.copytree(SRC, tmp_path / "src" / "conch", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    errors = tmp_path / "src" / "conch" / "execute" / "__init__.py"
    errors.write_text(errors.read_text(encoding="utf-8") + "\nimport rich\n", "utf-8")

    result = _lint_imports(tmp_path)

    assert result.returncode != 0
    assert "conch.execute -> rich" in result.stdout


def test_no_module_is_over_500_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for path in SRC.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}
