"""The settings every front end runs with: files, environment and flags, a project config
trusted on the terminal, and a missing API key asked for."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from conch.cli import ui
from conch.cli.environment import Environment

if TYPE_CHECKING:
    from conch.config.settings import LoadedSettings


def load_for(args: argparse.Namespace, env: Environment) -> LoadedSettings:
    """The settings for a front end whose ``args`` have ``--provider``, ``--model`` and
    ``--no-daemon``; a project config not trusted yet is asked about on the terminal (and
    ignored when there is none)."""
    from conch.cli.authcmd import ask_for_missing_key
    from conch.config.paths import Paths
    from conch.config.settings import load_settings

    flags = {
        "ai.provider": args.provider,
        "ai.model": args.model,
        "daemon.enabled": False if args.no_daemon else None,
    }

    def ask_trust(path: Path) -> bool:
        if env.open_terminal() is None:
            env.stderr.write(
                f"conch: ignoring project config {path} (not trusted yet; run conch in a "
                "terminal there to trust it)\n"
            )
            return False
        ui.show_command(env, path.read_text(encoding="utf-8", errors="replace")[:2000], "unknown")
        return ui.ask(env, f"Trust project config {path}? [y/N] ", "yn", "n") == "y"

    loaded = load_settings(env.environ, Paths.default(), env.cwd, flags, ask_trust)
    ask_for_missing_key(loaded.settings.ai, env)
    return loaded
