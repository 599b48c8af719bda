"""The CLI's flags are all documented, and the fast paths stay light."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conch.cli.authcmd import build_auth_parser
from conch.cli.chat import build_chat_parser
from conch.cli.daemoncmd import build_daemon_parser
from conch.cli.help import TOPICS, render_help
from conch.cli.integrationcmd import build_integration_parser
from conch.cli.main import build_check_parser, build_parser
from conch.cli.mcpcmd import build_mcp_parser
from conch.cli.runcmd import build_run_parser
from conch.cli.shellrepl import build_shell_parser


def _flags(parser: argparse.ArgumentParser) -> list[str]:
    """Every option the parser's own help lists."""
    return sorted(set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", parser.format_help())))


@pytest.mark.parametrize(
    "flag", _flags(build_parser()) + _flags(build_check_parser()) + _flags(build_daemon_parser())
)
def test_every_cli_flag_is_documented_in_a_help_topic(flag: str) -> None:
    pages = "\n".join(render_help(topic) for topic in TOPICS)
    assert flag in pages, f"{flag} is documented in no `conch help` topic"


@pytest.mark.parametrize(
    ("topic", "flag"),
    [("chat", flag) for flag in _flags(build_chat_parser())]
    + [("run", flag) for flag in _flags(build_run_parser())]
    + [("auth", flag) for flag in _flags(build_auth_parser())]
    + [("shell", flag) for flag in _flags(build_shell_parser())]
    + [("mcp", flag) for flag in _flags(build_mcp_parser())]
    + [("integration", flag) for flag in _flags(build_integration_parser())],
)
def test_every_agent_flag_is_documented_on_its_command_s_page(topic: str, flag: str) -> None:
    assert flag in render_help(topic), f"{flag} is not documented in `conch help {topic}`"


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["help"],
        ["help", "safety"],
        ["help", "daemon"],
        ["help", "chat"],
        ["help", "shell"],
        ["help", "tools"],
        ["help", "mcp"],
        ["help", "integration"],
        ["integration", "show", "bash"],
        ["check", "--", "ls", "-la"],
    ],
)
def test_fast_paths_do_not_import_the_model_stack_or_http(argv: list[str]) -> None:
    code = (
        "import sys; from conch.cli.main import main; rc = main(sys.argv[1:]) "
        "if sys.argv[1] != '--help' else 0\n"
        "if sys.argv[1] == '--help':\n"
        "    try:\n        main(['--help'])\n    except SystemExit:\n        pass\n"
        "heavy = [m for m in ('xllamacpp', 'llama_cpp', 'httpx', 'openai', 'conch.providers.local.provider',"
        " 'conch.providers.openai', 'conch.daemon.client', 'conch.daemon.service', 'prompt_toolkit',"
        " 'conch.agent.session', 'mcp', 'conch.mcp.client')"
        " if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60, check=False
    )
    assert "HEAVY []" in out.stdout, out.stdout + out.stderr


def test_help_and_version_exit_zero() -> None:
    for argv in (["--help"], ["--version"]):
        out = subprocess.run(
            [sys.executable, "-m", "conch", *argv],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert out.returncode == 0, out.stderr
        assert "conch" in out.stdout


def test_library_modules_never_import_front_end_libraries() -> None:
    code = (
        "import sys, conch.command.generate, conch.config.settings, conch.storage.history, conch.providers\n"
        "print([m for m in ('click', 'rich', 'prompt_toolkit', 'starlette', 'conch.cli') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.stdout.strip() == "[]", out.stderr


def test_the_tools_page_lists_every_agent_tool_with_its_trigger(tmp_path: Path) -> None:
    """The table on `conch help tools` is what ``tools_table`` makes of every built-in
    tool; when a tool or its trigger changes, paste the expected table into tools.txt."""
    from conch.agent.builtin import ToolOptions, default_tools
    from conch.agent.lookup import lookup_tool
    from conch.cli.agentview import tools_table
    from conch.execute.sandbox import Sandbox
    from conch.tools.web import SearchHit

    class NoSearch:
        def search(self, query: str, limit: int) -> list[SearchHit]:
            return []

    options = ToolOptions(
        root=tmp_path,
        fs_mode="both",
        bash=True,
        audit=False,
        memory_dir=tmp_path / "memory",
        web=True,
        web_search=NoSearch(),
        evaluate_sandbox=Sandbox("/usr/bin/bwrap", "given"),  # offered as where one works
        act=True,
    )
    from conch.providers import ScriptedProvider

    model = ScriptedProvider.of()
    tools = default_tools(options, None, lambda: model)
    tools.append(lookup_tool(lambda: tools))
    expected = tools_table(tools)
    page = render_help("tools")
    table = page.split("AGENT TOOLS\n", 1)[1].split("\n\n", 1)[0]
    assert table == expected, f"the table in tools.txt should be:\n{expected}"
