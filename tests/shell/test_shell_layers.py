"""``conch shell``'s decisions live in the library: ``conch.shell`` and ``conch.command`` import
nothing of the command line (also an import-linter contract in pyproject.toml), and no module
of ``conch.shell`` prints, reads stdin or exits (they yield events), but ``run``, which runs
the user's own lines on the terminal."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import conch

SRC = Path(conch.__file__).parent
# The one module that works the terminal itself: the user's lines run on a pseudo-terminal.
ON_THE_TERMINAL = {"run"}
SESSION_MODULES = sorted(
    path.stem for path in (SRC / "shell").glob("*.py") if path.stem not in ON_THE_TERMINAL
)


def test_every_module_of_the_shell_is_checked() -> None:
    assert {"session", "parts", "asking", "fallback", "routing", "turns"} <= set(SESSION_MODULES)
    assert (SRC / "shell" / "run.py").is_file()  # the exception is a module that exists


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


@pytest.mark.parametrize("package", ["shell", "command"])
def test_the_library_never_imports_the_command_line(package: str) -> None:
    found = [
        f"{path.relative_to(SRC)}: {name}"
        for path in sorted((SRC / package).rglob("*.py"))
        for name in _imports(path)
        if name == "conch.cli" or name.startswith("conch.cli.")
    ]
    assert found == []


@pytest.mark.parametrize("module", SESSION_MODULES)
def test_the_session_never_prints_reads_stdin_or_exits(module: str) -> None:
    tree = ast.parse((SRC / "shell" / f"{module}.py").read_text(encoding="utf-8"))
    calls = {
        ast.unparse(node.func)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))
    }
    banned = {"print", "input", "exit", "sys.exit", "os._exit", "sys.stdin.readline"}
    assert calls & banned == set()
    streams = {
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and ast.unparse(node).startswith("sys.std")
    }
    assert streams == set()
