"""Entry point: parse the command line, dispatch, and map errors to exit codes in one place."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from conch.cli.configflag import add_config_flag
from conch.cli.environment import Environment
from conch.cli.parsing import USAGES, Parser, add_daemon_flag, add_model_flags, parse_anywhere
from conch.cli.status import ExitStatus, status_for
from conch.errors import ConchError, UsageError
from conch.version import __version__

Handler = Callable[[list[str], Environment], int]


class Command:
    """A subcommand: the word that selects it, its usage line (``conch.cli.parsing.USAGES``),
    a one-line summary, and the handler that runs it with the words after it.

    A plain class rather than a dataclass: ``dataclasses`` would be most of the import time
    of ``conch --help``.
    """

    __slots__ = ("name", "run", "summary", "usage")

    def __init__(self, name: str, summary: str, run: Handler) -> None:
        self.name, self.usage, self.summary, self.run = name, USAGES[name], summary, run


def _check(rest: list[str], env: Environment) -> int:
    if "--" not in rest and not {"-h", "--help"} & set(rest):
        raise UsageError(
            "`conch check` checks a command written after `--` (conch check -- rm -rf build);"
            f" to ask for a command, write: {_as_request(['check', *rest])}"
        )
    from conch.cli.check import run_check

    parsed = parse_anywhere(build_check_parser(), rest)
    _use_config(parsed, env)
    return run_check(parsed, env)


def _parse(
    parser: argparse.ArgumentParser, word: str, rest: list[str], env: Environment
) -> argparse.Namespace:
    """``rest`` parsed for the subcommand ``word`` (options anywhere, ``--`` ends them); a
    usage error also says how to ask for a command that starts with that word. A
    ``--config PATH`` among them becomes the run's config file."""
    try:
        parsed = parse_anywhere(parser, rest)
    except UsageError as exc:
        raise UsageError(
            f"{exc}; to ask for a command, write: {_as_request([word, *rest])}"
        ) from None
    _use_config(parsed, env, check=word != "doctor")
    return parsed


def _use_config(
    parsed: argparse.Namespace, env: Environment, *, check: bool = True, create: bool = False
) -> None:
    """``--config PATH``, when given, as the run's config file (``conch.cli.configflag``)."""
    if getattr(parsed, "config", None) is not None:
        from conch.cli.configflag import use_config

        use_config(parsed, env, check=check, create=create)


def _daemon(rest: list[str], env: Environment) -> int:
    from conch.cli.daemoncmd import build_daemon_parser, run_daemon

    return run_daemon(_parse(build_daemon_parser(), "daemon", rest, env), env)


def _doctor(rest: list[str], env: Environment) -> int:
    from conch.cli.doctor import build_doctor_parser, run_doctor

    return run_doctor(_parse(build_doctor_parser(), "doctor", rest, env), env)


def _wordless(
    name: str, parser: argparse.ArgumentParser, rest: list[str], instead: str, env: Environment
) -> argparse.Namespace:
    """The flags of ``conch NAME``, a subcommand that takes no words (``instead`` says where
    they go); words after it are a usage error that shows how to ask for a command."""
    parsed = _parse(parser, name, rest, env)
    if parsed.words:
        raise UsageError(
            f"`conch {name}` takes no words ({instead}); to ask for a command, "
            f"write: {_as_request([name, *rest])}"
        )
    parsed.argv = [name, *rest]
    return parsed


def _chat(rest: list[str], env: Environment) -> int:
    from conch.cli.chat import build_chat_parser, run_chat

    return run_chat(
        _wordless("chat", build_chat_parser(), rest, "send one prompt with -p", env), env
    )


def _run(rest: list[str], env: Environment) -> int:
    from conch.cli.runcmd import build_run_parser, run_task

    parsed = _parse(build_run_parser(), "run", rest, env)
    if len(parsed.instruction) > 1:
        raise UsageError(
            f'`conch run` takes one instruction in quotes: conch run "{" ".join(parsed.instruction)}"'
            f"; to ask for a command, write: {_as_request(['run', *rest])}"
        )
    parsed.argv = ["run", *rest]
    return run_task(parsed, env)


def _shell(rest: list[str], env: Environment) -> int:
    from conch.cli.shellrepl import build_shell_parser, run_shell

    return run_shell(
        _wordless("shell", build_shell_parser(), rest, "type them at its prompt", env), env
    )


def _serve(rest: list[str], env: Environment) -> int:
    from conch.cli.servecmd import build_serve_parser, run_serve

    instead = "clients send their requests over HTTP"
    return run_serve(_wordless("serve", build_serve_parser(), rest, instead, env), env)


def _mcp(rest: list[str], env: Environment) -> int:
    from conch.cli.mcpcmd import build_mcp_parser, run_mcp

    return run_mcp(
        _wordless("mcp", build_mcp_parser(), rest, "MCP clients send the requests", env), env
    )


def _auth(rest: list[str], env: Environment) -> int:
    from conch.cli.authcmd import build_auth_parser, run_auth

    return run_auth(_parse(build_auth_parser(), "auth", rest, env), env)


def _integration(rest: list[str], env: Environment) -> int:
    from conch.cli.integrationcmd import build_integration_parser, run_integration

    parsed = _parse(build_integration_parser(), "integration", rest, env)
    return run_integration(parsed, env, completion_parser)


def _help(rest: list[str], env: Environment) -> int:
    if len(rest) > 1:
        raise UsageError(
            f"`conch help` takes one topic; to ask for a command, write: "
            f"{_as_request(['help', *rest])}"
        )
    from conch.cli.help import render_help

    env.stdout.write(render_help(rest[0] if rest else None).rstrip("\n") + "\n")
    return ExitStatus.OK


# Every word that selects a subcommand, and what runs it. A request that starts with one of
# them is written ``conch -- WORDS`` or ``conch ask WORDS``.
COMMANDS = {
    c.name: c
    for c in (
        Command("check", "judge a command with the safety policy; run nothing", _check),
        Command("daemon", "start, inspect or stop the warm model service", _daemon),
        Command("doctor", "what works here, what is missing", _doctor),
        Command("help", "the manual; `conch help topics` lists it", _help),
        Command("chat", "chat with the agent and its tools", _chat),
        Command("shell", "a shell where plain language goes to the model", _shell),
        Command("run", "let the agent work through a task or a plan file", _run),
        Command("serve", "an OpenAI-compatible HTTP API and a web chat page", _serve),
        Command("mcp", "serve conch's tools to MCP clients (stdio or HTTP)", _mcp),
        Command("auth", "keep a provider's API key in the system keyring", _auth),
        Command(
            "integration", "conch in bash, zsh or fish: a key, history, completions", _integration
        ),
    )
}
# Words kept for subcommands still to come.
RESERVED: tuple[str, ...] = ()
# The word that always starts a request.
ASK = "ask"

USAGE = "\n       ".join(
    [
        "conch [OPTIONS] [PROMPT_FILE.yaml] REQUEST...",
        "conch [OPTIONS] -- REQUEST...   (or: conch ask [OPTIONS] REQUEST...)",
        *(c.usage for c in COMMANDS.values()),
    ]
)
DESCRIPTION = """\
Turn a request in plain language into one shell command for this machine,
check it with the safety policy, show it, and run it on your say-so.
`conch help topics` lists the manual's topics."""
_WIDTH = max(len(name) for name in COMMANDS) + 2
EPILOG = "\n".join(
    [
        "subcommands:",
        *(f"  {c.name:<{_WIDTH}}{c.summary}" for c in COMMANDS.values()),
        "",
        *([f"Reserved for subcommands to come: {', '.join(RESERVED)}."] if RESERVED else []),
        "A request that starts with a subcommand word is written",
        "`conch -- run the tests` or `conch ask run the tests`.",
    ]
)


def build_parser() -> argparse.ArgumentParser:
    """The one-shot parser (also used by the test that every flag is documented)."""
    p = Parser(
        prog="conch",
        usage=USAGE,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=True,
    )
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
    # What kind of reply: a command, an answer, a diagnosis; one at a time.
    kind = p.add_mutually_exclusive_group()
    kind.add_argument("--analyze", action="store_true", help="diagnose the latest history entry")
    kind.add_argument(
        "--command",
        dest="force_task",
        action="store_true",
        help="treat the request as a task: always make a command",
    )
    kind.add_argument(
        "--answer",
        dest="force_answer",
        action="store_true",
        help="treat the request as a question: answer it in prose",
    )
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
    add_model_flags(p)
    p.add_argument(
        "--no-dry-run",
        action="store_true",
        help="do not try candidate commands in the read-only sandbox",
    )
    add_daemon_flag(p)
    add_config_flag(p)
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
    p = Parser(prog="conch check", usage=USAGES["check"])
    p.add_argument("command", nargs="*", metavar="COMMAND")
    p.add_argument(
        "--unsafe", action="store_true", help="allow what needs a shell (forces confirmation)"
    )
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    p.add_argument("--tools", metavar="LIST", help="comma-separated whitelist of programs")
    p.add_argument(
        "--allow-pipelines",
        action="store_true",
        help="with --tools: pipes, lists and redirections, as allow_pipelines: true",
    )
    p.add_argument(
        "--mode",
        choices=["interactive", "restricted-autonomous", "full-autonomous"],
        default="restricted-autonomous",
        help="execution mode the verdict is for",
    )
    add_config_flag(p)
    p.add_argument("--traceback", action="store_true", help="show tracebacks on errors")
    return p


# Where each subcommand's parser is built, for the completion scripts (``check``'s is built
# here; ``help`` has none, its one word is a topic); a test holds that none is missing.
PARSERS = {
    "daemon": ("conch.cli.daemoncmd", "build_daemon_parser"),
    "doctor": ("conch.cli.doctor", "build_doctor_parser"),
    "chat": ("conch.cli.chat", "build_chat_parser"),
    "shell": ("conch.cli.shellrepl", "build_shell_parser"),
    "run": ("conch.cli.runcmd", "build_run_parser"),
    "serve": ("conch.cli.servecmd", "build_serve_parser"),
    "mcp": ("conch.cli.mcpcmd", "build_mcp_parser"),
    "auth": ("conch.cli.authcmd", "build_auth_parser"),
    "integration": ("conch.cli.integrationcmd", "build_integration_parser"),
}


def completion_parser() -> argparse.ArgumentParser:
    """conch's whole command line as one parser, for the completion scripts (``conch
    integration completions``): the request's options, and every subcommand's parser as a
    subparser (``help`` with its topics, ``ask`` with the request's options)."""
    import importlib

    from conch.cli.help import TOPICS

    oneshot = build_parser()
    root = argparse.ArgumentParser(prog="conch", add_help=False, description=DESCRIPTION)
    for action in oneshot._actions:
        if action.option_strings:  # the request's words are free text
            root._add_action(action)
    subparsers = root.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    for name, command in COMMANDS.items():
        if name == "help":
            topic = subparsers.add_parser(name, help=command.summary)
            topic.add_argument("topic", nargs="?", choices=TOPICS, help="the topic to read")
            continue
        if name == "check":
            parser = build_check_parser()
        else:
            module, builder = PARSERS[name]
            parser = getattr(importlib.import_module(module), builder)()
        subparsers.add_parser(name, parents=[parser], add_help=False, help=command.summary)
    subparsers.add_parser(
        ASK, parents=[oneshot], add_help=False, help="a request, whatever its first word"
    )
    return root


def main(argv: Sequence[str] | None = None, env: Environment | None = None) -> int:
    """Run conch and return its exit status (the console script exits with it).

    The one place errors become what the user sees: a ``ConchError`` is one line on stderr
    and its exit status, Ctrl+C is exit 130, anything else is an internal error (one line,
    or the traceback with ``--traceback`` or ``CONCH_DEBUG=1``).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    env = env or Environment()
    debug = "--traceback" in args or env.environ.get("CONCH_DEBUG") == "1"
    try:
        return raw_main(args, env)
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


def raw_main(args: Sequence[str], env: Environment) -> int:
    """Run the command line ``args``; errors propagate (``main`` turns them into exit codes).

    The first word decides: a subcommand in ``COMMANDS`` runs with the words after it, a word
    in ``RESERVED`` is a usage error that says how to ask instead, and anything else is a
    one-shot request (``ask`` first: always a request, options after it apply as usual).
    """
    args = list(args)
    first = args[0] if args else ""
    if first in COMMANDS:
        return COMMANDS[first].run(args[1:], env)
    if first in RESERVED:
        raise UsageError(
            f"`conch {first}` is not available in this version; to ask for a command that "
            f"starts with '{first}', write: {_as_request(args)}"
        )
    request = args[1:] if first == ASK else args
    parsed = parse_anywhere(build_parser(), request)
    words: list[str] = parsed.words
    command_word = bool(words) and (words[0] in COMMANDS or words[0] in RESERVED)
    if command_word and first != ASK and "--" not in request[: request.index(words[0])]:
        raise UsageError(
            f"'{words[0]}' is a subcommand word; write the request as: {_as_request(words)}"
        )
    parsed.argv = args
    _use_config(parsed, env, create=bool(parsed.init))
    from conch.cli.oneshot import run

    return run(parsed, env)


def _as_request(words: Sequence[str]) -> str:
    """How ``words`` are written as a request when they start with a subcommand word."""
    return f"conch -- {' '.join(words)}  (or: conch ask {' '.join(words)})"


def _say(env: Environment, message: str) -> None:
    env.stderr.write(f"conch: {message}\n")
    env.stderr.flush()
