"""Helpers shared by the tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from conch.execute.dryrun import bwrap_available
from conch.host.platform import PlatformContext


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

# For tests that dry-run commands in the real sandbox.
needs_bwrap = pytest.mark.skipif(bwrap_available() is None, reason="bubblewrap is not usable")
