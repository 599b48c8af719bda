"""Entry point: parse the command line, dispatch, and map errors to exit codes in one place."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from conch import __version__
from conch.cli.environment import Environment
from conch.cli.status import ExitStatus, status_for
from conch.errors import ConchError, UsageError

USAGE = (
    "conch [OPTIONS] [PROMPT_FILE.yaml] REQUEST...\n"
    "       conch check [--unsafe] [--json] -- COMMAND\n"
    "       conch daemon start|status|stop [--json]\n"
    "       conch help [TOPIC]"
)
DAEMON_ACTIONS = ("start", "status", "stop")
DESCRIPTION = (
    "Turn a request in plain language into one shell command for this machine, check it with "
    "the safety policy, show it, and run it on your say-so. `conch help topics` lists the "
    "manual's topics."
)


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors become one-line ``UsageError``s instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}; see `conch --help`")


def build_parser() -> argparse.ArgumentParser:
    """The one-shot parser (also used by the test that every flag is documented)."""
    p = _Parser(prog="conch", usage=USAGE, description=DESCRIPTION, add_help=True)
    p.add_argument("words", nargs="*", metavar="REQUEST", help="what you want, in plain language")
    p.add_argument(
        "-s", "--scope", metavar="SCOPE", help='paths, globs or a description; "." lists the cwd'
    )
    p.add_argument(
        "--peek",
        nargs="+",
        action="extend",
        metavar="FILE",
        help="send a 16 KiB sample of each file",
    )
    p.add_argument(
        "-u",
        "--unsafe",
        action="store_true",
        help="allow pipes, redirects and chaining; always asks",
    )
    p.add_argument("-c", "--confirm", action="store_true", help="always ask before running")
    p.add_argument(
        "-e", "--explain", action="store_true", help="explain the command before confirming"
    )
    p.add_argument("--analyze", action="store_true", help="diagnose the latest history entry")
    p.add_argument("-y", "--yes", action="store_true", help="answer yes to the confirmation")
    p.add_argument(
        "-p",
        "--print",
        dest="print_only",
        action="store_true",
        help="print the command only; run nothing",
    )
    p.add_argument(
        "--json", action="store_true", help="print the command and verdict as JSON; run nothing"
    )
    p.add_argument("--provider", metavar="NAME", help="override ai.provider")
    p.add_argument("--model", metavar="NAME", help="override ai.model")
    p.add_argument(
        "--no-dry-run",
        action="store_true",
        help="do not try candidate commands in the read-only sandbox",
    )
    p.add_argument(
        "--no-daemon",
        action="store_true",
        help="run the local model in this process, not in the warm model service",
    )
    p.add_argument("--no-history", action="store_true", help="write no history entry")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.add_argument("--traceback", action="store_true", help="show tracebacks on errors")
    p.add_argument("--version", action="version", version=f"conch {__version__}")
    ops = p.add_argument_group("config helpers")
    ops.add_argument("--init", action="store_true", help="write a starter config")
    ops.add_argument(
        "--create-prompt", nargs="+", metavar=("TOOL", "PATH"), help="write a prompt template"
    )
    ops.add_argument(
        "--add-prompt", metavar="PATH", help="merge a prompt file's tools into the config"
    )
    ops.add_argument(
        "--list-tools", nargs="?", const="", metavar="PROMPT", help="list tools and PATH presence"
    )
    return p


def build_check_parser() -> argparse.ArgumentParser:
    """The parser of ``conch check``."""
    p = _Parser(
        prog="conch check",
        usage="conch check [--unsafe] [--json] [--tools LIST] [--mode MODE] -- COMMAND",
    )
    p.add_argument("command", nargs="*", metavar="COMMAND")
    p.add_argument("--unsafe", action="store_true", help="allow operators (forces confirmation)")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    p.add_argument("--tools", metavar="LIST", help="comma-separated whitelist of programs")
    p.add_argument(
        "--mode",
        choices=["interactive", "restricted-autonomous", "full-autonomous"],
        default="restricted-autonomous",
        help="execution mode the verdict is for",
    )
    p.add_argument("--traceback", action="store_true", help="show tracebacks on errors")
    return p


def build_daemon_parser() -> argparse.ArgumentParser:
    """The parser of ``conch daemon``."""
    p = _Parser(prog="conch daemon", usage="conch daemon start|status|stop [--json]")
    p.add_argument("action", choices=DAEMON_ACTIONS, help="what to do with the model service")
    p.add_argument("--json", action="store_true", help="print the service's status as JSON")
    p.add_argument("--traceback", action="store_true", help="show tracebacks on errors")
    return p


def main(argv: Sequence[str] | None = None, env: Environment | None = None) -> int:
    """Run conch and return its exit status (the console script exits with it)."""
    args = list(sys.argv[1:] if argv is None else argv)
    env = env or Environment()
    debug = "--traceback" in args or env.environ.get("CONCH_DEBUG") == "1"
    try:
        return _dispatch(args, env)
    except KeyboardInterrupt:
        _say(env, "interrupted")
        return ExitStatus.INTERRUPTED
    except ConchError as exc:
        if debug:
            raise
        _say(env, str(exc))
        return status_for(exc)
    except BrokenPipeError:
        return ExitStatus.ERROR
    except Exception as exc:  # a bug: one line, and the way to see more
        if debug:
            raise
        _say(env, f"internal error: {type(exc).__name__}: {exc} (run with --traceback for details)")
        return ExitStatus.ERROR


def _dispatch(args: list[str], env: Environment) -> int:
    if args and args[0] == "help" and len(args) <= 2:
        return _help(args[1:], env)
    if args and args[0] == "check" and len(args) > 1 and args[1].startswith("-"):
        from conch.cli.check import run_check

        return run_check(build_check_parser().parse_args(args[1:]), env)
    if _is_daemon_command(args):
        from conch.cli.daemoncmd import run_daemon

        return run_daemon(build_daemon_parser().parse_args(args[1:]), env)
    parsed = build_parser().parse_args(args)
    parsed.argv = args
    from conch.cli.oneshot import run

    return run(parsed, env)


def _is_daemon_command(args: list[str]) -> bool:
    """``conch daemon start`` is the subcommand; ``conch daemon status of nginx`` a request.

    The subcommand is ``daemon`` followed by nothing but its actions and its own flags.
    """
    known = (*DAEMON_ACTIONS, "--json", "--traceback", "-h", "--help")
    return len(args) >= 2 and args[0] == "daemon" and all(arg in known for arg in args[1:])


def _help(rest: list[str], env: Environment) -> int:
    from conch.cli.help import render_help

    env.stdout.write(render_help(rest[0] if rest else None).rstrip("\n") + "\n")
    return ExitStatus.OK


def _say(env: Environment, message: str) -> None:
    env.stderr.write(f"conch: {message}\n")
    env.stderr.flush()
