"""``--config PATH``: the config file of one run, on every command that reads the config.

It names the file as ``CONCH_CONFIG`` would (and wins over it): the flag sets that variable in
the run's environment, so every place that reads the user config (the settings loader,
``conch doctor``, ``--init``) reads this file instead. The file is checked before anything
else happens, so a missing or malformed one is one error naming it, whatever the command.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from conch.cli.environment import Environment
from conch.errors import ConfigError

VARIABLE = "CONCH_CONFIG"


def add_config_flag(p: argparse._ActionsContainer) -> None:
    """``--config PATH`` on a parser."""
    p.add_argument(
        "--config",
        metavar="PATH",
        help=f"the config file to read instead of the user config (as ${VARIABLE})",
    )


def use_config(
    args: argparse.Namespace, env: Environment, *, check: bool = True, create: bool = False
) -> None:
    """Make ``--config PATH`` (when given) the run's config file.

    ``check``: read and validate it now (``conch doctor`` passes False: a file that is not
    valid is what its report is for). ``create``: it may be missing (``--init`` writes it).
    ConfigError naming the file when it is missing, unreadable or not valid."""
    given = getattr(args, "config", None)
    if given is None:
        return
    if not given.strip():
        raise ConfigError("--config needs a file name: --config PATH")
    path = (env.cwd / Path(given).expanduser()).resolve()
    if not path.is_file() and not (create and not path.exists()):
        what = "is not a file" if path.exists() else "does not exist"
        raise ConfigError(f"--config {given}: {path} {what}; give an existing config file")
    if check and path.is_file():
        from conch.config.settings import Settings, read_yaml_mapping, validate_file_data

        validate_file_data(Settings, read_yaml_mapping(path), path)
    env.environ = {**env.environ, VARIABLE: str(path)}
