"""Helpers shared by the tests."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pexpect
import pytest

from conch.host.platform import PlatformContext
from conch.providers import ScriptedProvider, register_provider


@dataclass
class CliResult:
    """What one in-process CLI run produced."""

    out: str
    err: str
    code: int


def write_config(home: Path, text: str) -> Path:
    """Write the user config file under the test's XDG_CONFIG_HOME."""
    path = home / ".config" / "conch" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# A fixed Debian machine, for tests whose prompts must not depend on where they run.
DEBIAN = PlatformContext(
    os_name="Linux",
    os_version="6.1",
    distro="Debian GNU/Linux 12",
    arch="x86_64",
    shell="/bin/bash",
    shell_name="bash",
    shell_version="5.2",
    userland="GNU",
)


def plain_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal prompt_toolkit knows, no cursor position requests, a plain less and bash:
    for driving conch's REPLs on a pseudo-terminal."""
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("PROMPT_TOOLKIT_NO_CPR", "1")
    monkeypatch.setenv("SHELL", "/bin/bash")
    monkeypatch.setenv("LESS", "")
    monkeypatch.setenv("LESSHISTFILE", "-")
    monkeypatch.delenv("PAGER", raising=False)


def spawn_conch(cwd: Path, *argv: str) -> pexpect.spawn:
    """The CLI as a process of its own on a real pseudo-terminal, as a user at a keyboard
    runs it, with this test's environment."""
    return pexpect.spawn(
        sys.executable,
        ["-m", "conch", *argv],
        cwd=str(cwd),
        env=dict(os.environ),
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 120),
    )


def step(tool: str, **arguments: Any) -> str:
    """A tool call written as the text of a model reply (how the scripted provider of a
    config file calls tools: the agent reads the JSON step)."""
    return json.dumps({"tool": tool, "arguments": arguments})


def script(home: Path, *replies: str) -> Path:
    """A config whose scripted model gives ``replies``, one per request, in order."""
    lines = "".join(f"    - {json.dumps(reply)}\n" for reply in replies)
    return write_config(home, f"ai:\n  provider: scripted\n  script:\n{lines}")


def capture(home: Path, name: str, *replies: str) -> ScriptedProvider:
    """A scripted provider the config selects, kept so the test can read what it was sent."""
    provider = ScriptedProvider.of(*replies)
    register_provider(name, lambda settings: provider)
    write_config(home, f"ai:\n  provider: {name}\n")
    return provider


def dead_server(home: Path) -> Path:
    """A config whose model server does not answer (nothing listens on port 9)."""
    return write_config(
        home,
        "ai:\n  provider: openai\n  base_url: http://127.0.0.1:9/v1\n  model: m\n"
        "  max_retries: 0\n",
    )


def missing_model(home: Path) -> Path:
    """A config whose local model file, /no/m.gguf, does not exist."""
    return write_config(home, "ai:\n  provider: local\n  local:\n    model_path: /no/m.gguf\n")


def one_line_error(result: CliResult, code: int) -> str:
    """The run ended with ``code`` and one ``conch: `` line on stderr, no traceback: that line."""
    assert result.code == code
    assert result.err.startswith("conch: ") and result.err.count("\n") == 1
    assert "Traceback" not in result.err
    return result.err
