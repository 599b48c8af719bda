"""``conch integration install|uninstall|show|completions bash|zsh|fish``: conch inside the
user's own shell.

``show`` prints the block (``eval "$(conch integration show bash)"`` loads it, or paste it);
``install`` puts it in the shell's rc file, after showing it and asking (``--yes`` skips the
question; without a terminal and without ``--yes`` nothing changes); installing again
replaces it; ``uninstall`` removes exactly it; ``completions`` prints only the completion
script of conch's command line. The code, the block editing and the completions are the
library's (``conch.integration``); this module parses, shows and asks.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from conch.cli import ui
from conch.cli.environment import Environment
from conch.cli.parsing import USAGES, Parser
from conch.cli.status import ExitStatus
from conch.errors import ConfirmationRequired, UsageError
from conch.integration.shellcode import SHELLS

ACTIONS = ("install", "uninstall", "show", "completions")
# The flags each action takes (the others are a usage error, not silently ignored).
_TAKES = {
    "install": {"key", "rc", "yes"},
    "uninstall": {"rc", "yes"},
    "show": {"key"},
    "completions": set(),
}


def build_integration_parser() -> argparse.ArgumentParser:
    """The parser of ``conch integration``."""
    p = Parser(
        prog="conch integration",
        usage=USAGES["integration"],
        description="Put conch in your own shell: a key that turns the command line into a "
        "command, the commands conch runs in the shell's history, and completions.",
    )
    p.add_argument("action", choices=ACTIONS, help="what to do")
    p.add_argument("shell", choices=SHELLS, help="which shell")
    p.add_argument(
        "--key",
        metavar="KEY",
        help=r"the key that sends the line to conch: alt-e (\ee, the default), ctrl-x, ...",
    )
    p.add_argument(
        "--rc",
        metavar="FILE",
        help="the rc file to change (default: ~/.bashrc, ~/.zshrc, ~/.config/fish/config.fish)",
    )
    p.add_argument("-y", "--yes", action="store_true", help="install without asking")
    p.add_argument("--traceback", action="store_true", help="show tracebacks on errors")
    return p


def run_integration(
    args: argparse.Namespace, env: Environment, everything: Callable[[], argparse.ArgumentParser]
) -> int:
    """Dispatch one ``conch integration`` action; ``everything`` builds the parser of conch's
    whole command line, for the completions (``conch.cli.main.completion_parser``)."""
    from conch.integration.completion import completion_script
    from conch.integration.keys import DEFAULT_KEY, parse_key
    from conch.integration.shellcode import build_block

    given = {"key": args.key is not None, "rc": args.rc is not None, "yes": args.yes}
    for flag, on in given.items():
        if on and flag not in _TAKES[args.action]:
            raise UsageError(f"--{flag} has no effect with `conch integration {args.action}`")
    shell: str = args.shell
    if args.action == "completions":
        env.stdout.write(completion_script(everything(), shell))
        return ExitStatus.OK
    if args.action == "uninstall":
        return _uninstall(shell, _rc(args, env), env)
    key = parse_key(DEFAULT_KEY if args.key is None else args.key)
    block = build_block(shell, key, completion_script(everything(), shell))
    if args.action == "show":
        env.stdout.write(block)
        return ExitStatus.OK
    return _install(shell, _rc(args, env), block, key.name, args.yes, env)


def _rc(args: argparse.Namespace, env: Environment) -> Path:
    """The rc file: ``--rc`` (``~`` expanded, relative to the working directory), or the
    shell's own."""
    from conch.integration.shellcode import rc_path

    home = Path(env.environ.get("HOME") or Path.home())
    if args.rc is None:
        return rc_path(args.shell, env.environ, home)
    given = Path(args.rc)
    if args.rc == "~" or args.rc.startswith("~/"):
        given = home / args.rc[2:]
    return given if given.is_absolute() else env.cwd / given


def _install(shell: str, path: Path, block: str, key: str, yes: bool, env: Environment) -> int:
    from conch.integration.rcfile import RcFile, current_block, with_block

    rc = RcFile.read(path)
    new = with_block(rc.text, block, str(path))
    if new == rc.text:
        env.stdout.write(f"conch integration for {shell}: already up to date in {path}\n")
        return ExitStatus.OK
    if not yes:
        if env.open_terminal() is None:
            raise ConfirmationRequired(
                f"no terminal to ask before changing {path}; nothing changed "
                "(add --yes to install without the question)"
            )
        if not rc.exists:
            where = f"a new file, {path}"
        elif current_block(rc.text, str(path)) is not None:
            where = f"{path}, in place of the conch block there"
        else:
            where = f"the end of {path}"
        target = f" (a link to {rc.target})" if rc.exists and rc.target != path.absolute() else ""
        env.stderr.write(f"conch: this block goes into {where}{target}:\n\n")
        env.stderr.write("".join(f"  {line}" for line in block.splitlines(keepends=True)))
        env.stderr.write("\n")
        if ui.ask(env, f"Change {path}? [y/N] ", "yn", "n") != "y":
            raise ConfirmationRequired(f"{path} left unchanged")
    rc.write(new)
    env.stdout.write(
        f"conch integration for {shell}: installed in {path}; {key} turns the command line "
        f"into a command. Open a new shell, or run: source {path}\n"
    )
    return ExitStatus.OK


def _uninstall(shell: str, path: Path, env: Environment) -> int:
    from conch.integration.rcfile import RcFile, current_block, without_block

    rc = RcFile.read(path)
    if current_block(rc.text, str(path)) is None:
        env.stdout.write(f"conch integration for {shell}: not in {path}; nothing to remove\n")
        return ExitStatus.OK
    rc.write(without_block(rc.text, str(path)))
    env.stdout.write(
        f"conch integration for {shell}: removed from {path} (shells open now keep it "
        "until they exit)\n"
    )
    return ExitStatus.OK
