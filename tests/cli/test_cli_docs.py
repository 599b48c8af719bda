"""The CLI's flags are all documented, and the fast paths stay light."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

import pytest

from conch.cli.help import TOPICS, render_help
from conch.cli.main import build_check_parser, build_daemon_parser, build_parser


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
    "argv",
    [["--help"], ["help"], ["help", "safety"], ["help", "daemon"], ["check", "--", "ls", "-la"]],
)
def test_fast_paths_do_not_import_the_model_stack_or_http(argv: list[str]) -> None:
    code = (
        "import sys; from conch.cli.main import main; rc = main(sys.argv[1:]) "
        "if sys.argv[1] != '--help' else 0\n"
        "if sys.argv[1] == '--help':\n"
        "    try:\n        main(['--help'])\n    except SystemExit:\n        pass\n"
        "heavy = [m for m in ('xllamacpp', 'llama_cpp', 'httpx', 'openai', 'conch.providers.local.provider',"
        " 'conch.providers.openai', 'conch.daemon.client', 'conch.daemon.service')"
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
