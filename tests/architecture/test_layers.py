"""The package layers hold: no import cycle, the import-linter contracts pass, modules stay small.

The contracts live in pyproject.toml (``[tool.importlinter]``); docs/architecture.md explains
them. A contract that could never fail would prove nothing, so one test breaks a copy of the
tree on purpose and checks that the contract catches it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "conch"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
MAX_LINES = 500


def _import_cycles() -> list[list[str]]:
    """Strongly connected groups of conch modules (Tarjan), every import counted, lazy ones too."""
    graph = grimp.build_graph("conch")
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if not imported.startswith("conch"):
                continue
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in sorted(m for m in graph.modules if m.startswith("conch")):
        if module not in index:
            visit(module)
    return cycles


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
    assert _import_cycles() == []


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
