"""How conch reads its command lines: the parser every subcommand uses, options anywhere among
the words, each subcommand's usage line, and the flag groups several subcommands share.

Each subcommand builds its own parser in its own module (``chat``, ``runcmd``, ``servecmd``,
``mcpcmd``, ``shellrepl``, ``authcmd``, ``daemoncmd``, ``doctor``, ``integrationcmd``; the
one-shot and ``check`` in ``main``). Only ``argparse`` here: ``conch --help`` lists every usage line without loading
a subcommand.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from conch.errors import UsageError

# Each subcommand's usage line: ``conch --help`` lists them all, and the subcommand's own
# ``--help`` shows its line.
USAGES = {
    "check": "conch check [--unsafe] [--json] [--tools LIST] [--mode MODE] -- COMMAND",
    "daemon": "conch daemon start|status|stop [--json]",
    "doctor": "conch doctor [--json]",
    "help": "conch help [TOPIC]",
    "chat": "conch chat [OPTIONS] [-p PROMPT] [--continue]",
    "shell": "conch shell [OPTIONS] [--continue] [--model NAME]",
    "run": 'conch run [OPTIONS] "INSTRUCTION" | --plan FILE',
    "serve": "conch serve [OPTIONS] [--host HOST] [--port PORT] [--api-key KEY]",
    "mcp": "conch mcp [OPTIONS] [--http [--host HOST] [--port PORT] [--no-auth]]",
    "auth": "conch auth set|show|remove PROVIDER",
    "integration": "conch integration install|uninstall|show|completions SHELL [OPTIONS]",
}
TOOL_MODES = ("split", "unified", "both")
MODES = ("interactive", "restricted", "full", "restricted-autonomous", "full-autonomous")
# Model replies per turn of ``conch chat`` and per request of ``conch serve``: a turn
# answers one message.
CHAT_ITERATIONS = 10


class Parser(argparse.ArgumentParser):
    """argparse whose usage errors become one-line ``UsageError``s, pointing at the
    command's ``--help``, instead of exiting."""

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


def add_agent_flags(p: argparse.ArgumentParser, iterations: int, *, act: bool = False) -> None:
    """The flags of the subcommands that give the agent's tools (``chat``, ``run``,
    ``serve``, ``mcp``): tools, execution mode, model replies per turn (``iterations``; 0:
    no agent loop, as in ``conch mcp``), model, quiet and traceback; with ``act``, ``--act``
    (the ``do`` tool, for the subcommands whose agent has a model to write commands with)."""
    tools = p.add_argument_group("tools")
    if act:
        tools.add_argument(
            "--act",
            action="store_true",
            help="steps in plain language: conch's command pipeline writes, tries and runs "
            "each one (the do tool, given each instruction first; implies --allow-bash; the "
            "default wherever commands may run)",
        )
        tools.add_argument(
            "--no-act",
            action="store_true",
            help="with --allow-bash or --allow-dangerous, no do tool: the model writes every "
            "command itself",
        )
    tools.add_argument(
        "--sandbox",
        metavar="DIR",
        help="the directory the file tools, evaluate and bash are confined to (default: .)",
    )
    tools.add_argument(
        "--allow-bash", action="store_true", help="offer the bash tool (commands are checked)"
    )
    tools.add_argument("--no-python", action="store_true", help="no evaluate tool (Python)")
    tools.add_argument(
        "--web",
        action="store_true",
        help="offer web_fetch (read web pages), and web_search where a search service is set",
    )
    tools.add_argument(
        "--search-url",
        metavar="URL",
        help="the SearXNG-style search endpoint web_search asks (implies --web; "
        "default: agent.search_url)",
    )
    tools.add_argument(
        "--memory",
        action="store_true",
        help="offer the memory tool: notes kept between sessions (in agent.memory_dir, "
        "or memory/ in the state directory)",
    )
    tools.add_argument(
        "--memory-dir", metavar="DIR", help="keep the memory tool's notes in DIR (implies --memory)"
    )
    tools.add_argument(
        "--command-timeout",
        type=float,
        metavar="SECONDS",
        help="a bash command running longer is killed (default: agent.terminal.timeout_seconds, 30)",
    )
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
    if iterations:
        p.add_argument(
            "--max-iterations",
            type=int,
            metavar="N",
            help="model replies per turn before the agent gives up (default: "
            f"agent.max_iterations, or {iterations})",
        )
        p.set_defaults(default_iterations=iterations)
    else:
        p.set_defaults(max_iterations=1, default_iterations=1)
    model = p.add_argument_group("model")
    add_model_flags(model)
    add_daemon_flag(model)
    from conch.cli.configflag import add_config_flag

    add_config_flag(model)
    p.add_argument("-q", "--quiet", action="store_true", help="no spinner, status or tool lines")
    p.add_argument("--traceback", action="store_true", help="show tracebacks on errors")


def add_report_flags(p: argparse.ArgumentParser) -> None:
    """``--log-file`` and ``--verbose`` (``conch chat``, ``conch run``): what each model reply
    and tool call took, in a file and on stderr (``conch.cli.agentmetrics``)."""
    report = p.add_argument_group("metrics")
    report.add_argument(
        "--log-file",
        metavar="PATH",
        help="append a line per model reply (tokens, tokens/s, time) and per tool call to PATH",
    )
    report.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="those lines on stderr too, and the context window and where it came from",
    )
