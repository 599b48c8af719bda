"""The command lines of ``conch chat``, ``conch run``, ``conch serve`` and ``conch auth``, and
the model flags they share with the one-shot ``conch``.

Only ``argparse`` here: ``conch --help`` and the flag documentation test build these
parsers without loading the agent.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from conch.errors import UsageError

CHAT_USAGE = "conch chat [OPTIONS] [-p PROMPT] [--continue]"
RUN_USAGE = 'conch run [OPTIONS] "INSTRUCTION" | --plan FILE'
SHELL_USAGE = "conch shell [OPTIONS] [--continue] [--model NAME]"
SERVE_USAGE = "conch serve [OPTIONS] [--host HOST] [--port PORT] [--api-key KEY]"
AUTH_USAGE = "conch auth set|show|remove PROVIDER"
MCP_USAGE = "conch mcp [OPTIONS] [--http [--host HOST] [--port PORT] [--no-auth]]"
MCP_KEY_ENV = "CONCH_MCP_API_KEY"
AUTH_ACTIONS = ("set", "show", "remove")
TOOL_MODES = ("split", "unified", "both")
MODES = ("interactive", "restricted", "full", "restricted-autonomous", "full-autonomous")
# Model replies per turn: a chat turn answers one message; a task takes more steps.
CHAT_ITERATIONS = 10
RUN_ITERATIONS = 20
# Model replies one goal of ``conch shell``'s autonomous mode may take.
SHELL_STEPS = 20


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors become one-line ``UsageError``s instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}; see `{self.prog} --help`")


def parse_anywhere(parser: argparse.ArgumentParser, args: list[str]) -> argparse.Namespace:
    """``args`` parsed with options anywhere among the words (``conch jq.yaml -p "names of
    users"``); ``--`` ends the options, and every word after it is a word, however it looks.

    Python 3.11's ``parse_intermixed_args`` takes a word after ``--`` that looks like an
    option for one, so those words are parsed as stand-ins (never option-like) and put back.
    """
    if "--" not in args:
        return parser.parse_intermixed_args(args)
    end = args.index("--")
    after = args[end + 1 :]
    stand_ins = {f"\0word{i}\0": word for i, word in enumerate(after)}
    parsed = parser.parse_intermixed_args([*args[:end], "--", *stand_ins])
    for name, value in vars(parsed).items():
        if isinstance(value, list):
            setattr(parsed, name, [stand_ins.get(v, v) if isinstance(v, str) else v for v in value])
        elif isinstance(value, str) and value in stand_ins:
            setattr(parsed, name, stand_ins[value])
    return parsed


def add_model_flags(p: argparse._ActionsContainer) -> None:
    """``--provider`` and ``--model``: which model answers."""
    p.add_argument("--provider", metavar="NAME", help="override ai.provider")
    p.add_argument("--model", metavar="NAME", help="override ai.model")


def add_daemon_flag(p: argparse._ActionsContainer) -> None:
    """``--no-daemon``: the local model runs in this process (the one-shot parser lists
    ``--no-dry-run`` between it and the model flags)."""
    p.add_argument(
        "--no-daemon",
        action="store_true",
        help="run the local model in this process, not in the warm model service",
    )


def _agent_flags(p: argparse.ArgumentParser, iterations: int) -> None:
    """The flags ``chat`` and ``run`` share: tools, execution mode, model."""
    tools = p.add_argument_group("tools")
    tools.add_argument(
        "--sandbox",
        metavar="DIR",
        help="the directory the file tools, evaluate and bash are confined to (default: .)",
    )
    tools.add_argument(
        "--allow-bash", action="store_true", help="offer the bash tool (commands are checked)"
    )
    tools.add_argument("--no-python", action="store_true", help="no evaluate tool (Python)")
    tools.add_argument("--web", action="store_true", help="offer web_fetch (read web pages)")
    tools.add_argument(
        "--tools-mode",
        choices=TOOL_MODES,
        default="split",
        help="file tools: one per action (split), one fs tool with batches (unified), or both",
    )
    modes = p.add_argument_group("execution mode of the bash tool (`conch help modes`)")
    modes.add_argument(
        "--mode",
        choices=MODES,
        metavar="MODE",
        help="interactive: ask before every command; restricted: read-only commands run, "
        "others ask; full: needs --allow-dangerous",
    )
    modes.add_argument(
        "--allow-dangerous",
        action="store_true",
        help="full-autonomous: commands run without asking (implies --allow-bash); the "
        "denylist still applies",
    )
    if iterations:  # 0: no agent loop (conch mcp)
        p.add_argument(
            "--max-iterations",
            type=int,
            default=iterations,
            metavar="N",
            help=f"model replies per turn before the agent gives up (default: {iterations})",
        )
    else:
        p.set_defaults(max_iterations=1)
    model = p.add_argument_group("model")
    add_model_flags(model)
    add_daemon_flag(model)
    p.add_argument("-q", "--quiet", action="store_true", help="no spinner, status or tool lines")
    p.add_argument("--traceback", action="store_true", help="show tracebacks on errors")


def build_chat_parser() -> argparse.ArgumentParser:
    """The parser of ``conch chat``."""
    p = _Parser(
        prog="conch chat",
        usage=CHAT_USAGE,
        description="Chat with the agent and its tools: a streaming REPL, or one prompt with -p.",
        epilog="`conch help chat` has the REPL's commands and keys.",
    )
    p.add_argument("words", nargs="*", help=argparse.SUPPRESS)
    p.add_argument(
        "-p", "--prompt", metavar="PROMPT", help="send one prompt, print the reply, exit"
    )
    p.add_argument(
        "--continue",
        dest="resume",
        action="store_true",
        help="resume the last chat held in the sandbox directory",
    )
    p.add_argument(
        "--no-local-session",
        action="store_true",
        help="do not save this chat (--continue can still read the saved one)",
    )
    p.add_argument(
        "--show-system-prompt", action="store_true", help="print the system prompt and exit"
    )
    _agent_flags(p, CHAT_ITERATIONS)
    return p


def build_run_parser() -> argparse.ArgumentParser:
    """The parser of ``conch run``."""
    p = _Parser(
        prog="conch run",
        usage=RUN_USAGE,
        description="Let the agent work through a task: progress on stderr, the answer on stdout.",
        epilog="`conch help run` has plan files and exit codes.",
    )
    p.add_argument("instruction", nargs="*", metavar="INSTRUCTION", help="the task, in quotes")
    p.add_argument("--plan", metavar="FILE", help="a task file: YAML, JSON or Markdown")
    _agent_flags(p, RUN_ITERATIONS)
    return p


def build_serve_parser() -> argparse.ArgumentParser:
    """The parser of ``conch serve``."""
    p = _Parser(
        prog="conch serve",
        usage=SERVE_USAGE,
        description="Serve the agent over an OpenAI-compatible HTTP API "
        "(/v1/chat/completions) with a web chat page at /.",
        epilog="`conch help serve` has the API, the extra stream events, keys and limits.",
    )
    p.add_argument("words", nargs="*", help=argparse.SUPPRESS)
    server = p.add_argument_group("server")
    server.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    server.add_argument("--port", type=int, default=8080, help="port to listen on (default: 8080)")
    server.add_argument(
        "--api-key",
        metavar="KEY",
        help="the key clients must send as Authorization: Bearer KEY (default: "
        "$CONCH_SERVER_API_KEY; none: a fresh token, printed in the URL to open); "
        "needed on any address but loopback",
    )
    server.add_argument(
        "--no-auth",
        action="store_true",
        help="no key at all: any local program may use the server (loopback only)",
    )
    server.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="longest a request may take (default: 600)",
    )
    _agent_flags(p, CHAT_ITERATIONS)
    return p


def build_shell_parser() -> argparse.ArgumentParser:
    """The parser of ``conch shell``."""
    p = _Parser(
        prog="conch shell",
        usage=SHELL_USAGE,
        description="A shell where your commands run as usual and plain language goes to "
        "the model, which sees what just happened.",
        epilog="`conch help shell` has the routing rules, the meta commands and the keys.",
    )
    p.add_argument("words", nargs="*", help=argparse.SUPPRESS)
    p.add_argument(
        "--continue",
        dest="resume",
        action="store_true",
        help="take up the last shell session again",
    )
    p.add_argument(
        "--max-steps",
        type=int,
        default=SHELL_STEPS,
        metavar="N",
        help=f"model replies one :auto goal may take (default: {SHELL_STEPS})",
    )
    model = p.add_argument_group("model")
    model.add_argument("--provider", metavar="NAME", help="override ai.provider")
    model.add_argument(
        "--model",
        metavar="NAME",
        help="a model of the models: section (with none configured: override ai.model)",
    )
    add_daemon_flag(model)
    p.add_argument("--traceback", action="store_true", help="show tracebacks on errors")
    return p


def build_mcp_parser() -> argparse.ArgumentParser:
    """The parser of ``conch mcp``."""
    p = _Parser(
        prog="conch mcp",
        usage=MCP_USAGE,
        description="Serve conch's tools to MCP clients: over stdio (the default), or over "
        "streamable HTTP at /mcp with --http. Every command goes through the safety policy "
        "in the execution mode below; nothing is ever asked, what needs a yes is refused.",
        epilog="`conch help mcp` has the tools, the modes, HTTP keys and MCP client config.",
    )
    p.add_argument("words", nargs="*", help=argparse.SUPPRESS)
    http = p.add_argument_group("transport")
    http.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    http.add_argument(
        "--host",
        default="127.0.0.1",
        help="with --http: the address to listen on "
        f"(default: 127.0.0.1; any other needs a key in ${MCP_KEY_ENV})",
    )
    http.add_argument(
        "--port", type=int, default=8765, help="with --http: the port (default: 8765; 0: any)"
    )
    http.add_argument(
        "--api-key-env",
        default=MCP_KEY_ENV,
        metavar="VAR",
        help="with --http: the variable holding the key clients must send "
        f"(default: {MCP_KEY_ENV}; unset: a fresh token, printed)",
    )
    http.add_argument(
        "--no-auth",
        action="store_true",
        help="with --http: no key at all; any local program may call the tools (loopback only)",
    )
    _agent_flags(p, 0)
    return p


def build_auth_parser() -> argparse.ArgumentParser:
    """The parser of ``conch auth``."""
    p = _Parser(
        prog="conch auth",
        usage=AUTH_USAGE,
        description="Keep a provider's API key in the system keyring, show where it comes "
        "from, or remove it.",
    )
    p.add_argument("action", choices=AUTH_ACTIONS, help="what to do with the key")
    p.add_argument(
        "provider", metavar="PROVIDER", help="openai, azure, or a name in the models section"
    )
    p.add_argument("--traceback", action="store_true", help="show tracebacks on errors")
    return p
