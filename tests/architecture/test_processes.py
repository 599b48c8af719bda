"""The only places in conch that start a process, held by a list.

A short captured run (a probe, a help text, the user's aliases, a dry run, a command run for
the model) goes through ``conch.host.process.run_process``: its own process group, caps, a
timeout that kills the group. The few modules that need something it cannot give (the user's
terminal, a pseudo-terminal, a process that outlives the call) are listed in ``ALLOWED`` with
the reason. The scan reads every module of src/conch with ``ast`` (imports inside functions
and ``import ... as`` names included), so a new call site anywhere fails the test until it is
routed through the runner or added here with its reason.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "conch"

# module -> why it starts processes itself instead of through run_process.
ALLOWED = {
    "conch.host.process": "run_process itself: the runner of every short captured process",
    "conch.execute.run": "the command runner's live run: the child inherits the user's terminal",
    "conch.execute.stages": "the plan runner: each pipeline stage spawned on its own descriptors",
    "conch.shell.run": "conch shell's lines run on a pseudo-terminal the child takes as its own",
    "conch.daemon.process": "the model service: a detached process that outlives the call",
    "conch.mcp.client": "the MCP SDK's stdio_client starts a configured MCP server",
}

# Functions that start a process, by the module that defines them.
STARTERS = {
    "subprocess": {
        "Popen",
        "run",
        "call",
        "check_call",
        "check_output",
        "getoutput",
        "getstatusoutput",
    },
    "os": {
        "system",
        "popen",
        "fork",
        "forkpty",
        "posix_spawn",
        "posix_spawnp",
        *(f"exec{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
        *(f"spawn{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
    },
    "pty": {"spawn", "fork"},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "asyncio.subprocess": {"create_subprocess_exec", "create_subprocess_shell"},
    "anyio": {"run_process", "open_process"},
    "mcp.client.stdio": {"stdio_client"},
}
# Event-loop methods that start a process, whatever the loop object is called.
LOOP_METHODS = {"subprocess_exec", "subprocess_shell"}


def _starter(qualified: str) -> bool:
    module, _, name = qualified.rpartition(".")
    return name in STARTERS.get(module, ())


def process_calls(source: str) -> list[tuple[int, str]]:
    """(line, what it calls) for each call in ``source`` that starts a process, in order."""
    return sorted(_process_calls(source))


def _process_calls(source: str) -> Iterator[tuple[int, str]]:
    tree = ast.parse(source)
    names: dict[str, str] = {}  # local name -> what it stands for, from every import
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    names[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        parts: list[str] = []
        func = node.func
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        if parts and parts[0] in LOOP_METHODS:
            yield node.lineno, parts[0]
            continue
        if not isinstance(func, ast.Name) or func.id not in names:
            continue
        qualified = ".".join([names[func.id], *reversed(parts)])
        if _starter(qualified):
            yield node.lineno, qualified


def modules_starting_processes(src: Path) -> dict[str, list[str]]:
    """Each module under ``src`` (the ``conch`` package directory) that starts a process,
    with its call sites as ``line: call``."""
    found: dict[str, list[str]] = {}
    for path in sorted(src.rglob("*.py")):
        relative = path.relative_to(src.parent).with_suffix("")
        module = ".".join(relative.parts).removesuffix(".__init__")
        calls = [f"{line}: {call}" for line, call in process_calls(path.read_text("utf-8"))]
        if calls:
            found[module] = calls
    return found


def test_only_the_listed_modules_start_processes() -> None:
    found = modules_starting_processes(SRC)
    unlisted = {module: calls for module, calls in found.items() if module not in ALLOWED}
    assert unlisted == {}, "start it through conch.host.process.run_process, or list it here"
    assert sorted(found) == sorted(ALLOWED), "a listed module no longer starts a process"


def test_every_listed_module_has_a_reason() -> None:
    assert all(reason.strip() for reason in ALLOWED.values())


def test_the_scan_finds_each_way_of_starting_a_process() -> None:
    source = """
import os
import subprocess as sp
from subprocess import check_output
from os import execvp as replace_me
import asyncio.subprocess

def later():
    import pty
    pty.spawn(["sh"])

sp.Popen(["ls"])
sp.run("ls", shell=True)
check_output(["ls"])
os.system("ls")
os.popen("ls")
replace_me("ls", ["ls"])
os.posix_spawn("/bin/ls", ["ls"], {})
asyncio.create_subprocess_exec("ls")
asyncio.subprocess.create_subprocess_shell("ls")
loop.subprocess_exec(factory, "ls")
"""
    assert [call for _, call in process_calls(source)] == [
        "pty.spawn",
        "subprocess.Popen",
        "subprocess.run",
        "subprocess.check_output",
        "os.system",
        "os.popen",
        "os.execvp",
        "os.posix_spawn",
        "asyncio.create_subprocess_exec",
        "asyncio.subprocess.create_subprocess_shell",
        "subprocess_exec",
    ]


def test_the_scan_passes_over_what_starts_nothing() -> None:
    source = """
import os
import subprocess
from conch.host.process import run_process

def wait(proc: subprocess.Popen[bytes]) -> None:
    try:
        proc.wait(1)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
run_process(["ls"])
os.path.join("a", "b")
"""
    assert process_calls(source) == []


def test_a_new_call_site_in_an_unlisted_module_fails_the_check(tmp_path: Path) -> None:
    copy = tmp_path / "conch"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    whatis = copy / "command" / "whatis.py"
    text = whatis.read_text(encoding="utf-8")
    whatis.write_text(text + "\n\ndef _more() -> None:\n    os.system('man -k .')\n", "utf-8")

    found = modules_starting_processes(copy)

    assert set(found) - set(ALLOWED) == {"conch.command.whatis"}
    assert found["conch.command.whatis"][0].endswith(": os.system")
