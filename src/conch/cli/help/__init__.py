"""Built-in help: ``conch help [TOPIC]``.

The pages are plain text files shipped with the package (``help/topics/<topic>.txt``). This
module is on the fast path of the command line, so it imports nothing beyond the standard
library and ``conch.errors``.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from conch.errors import UsageError

# Every topic in display order, with the one-line summary shown by `conch help topics`.
_SUMMARIES: tuple[tuple[str, str], ...] = (
    ("overview", "what conch is and the commands you will use most"),
    ("quickstart", "install, first run, first commands"),
    ("config", "config files, every key, environment overrides, precedence"),
    ("providers", "the embedded model, OpenAI-compatible servers, Azure OpenAI"),
    ("daemon", "the warm model service: conch daemon, --no-daemon"),
    ("tools", "the agent's tools; prompt configs' tool whitelists"),
    ("scope", "-s/--scope: point the model at paths, globs or a description"),
    ("peek", "--peek: send the start of a file as a data sample"),
    ("safety", "how every command is checked, classified and confirmed"),
    ("validation", "how a command is checked against this machine's programs"),
    ("check", "conch check: run the safety policy alone, without a model"),
    ("doctor", "conch doctor: what works here, what is missing; the sandbox"),
    ("chat", "conch chat: the agent and its tools in a REPL, or one prompt"),
    ("shell", "conch shell: your commands and plain language in one terminal"),
    ("run", "conch run: the agent works through a task or a plan file"),
    ("mcp", "conch mcp: conch's tools for MCP clients; MCP servers' tools"),
    ("serve", "conch serve: an OpenAI-compatible API and a web chat page"),
    ("modes", "execution modes: when the agent's commands need your yes"),
    ("auth", "conch auth: API keys in the system keyring"),
    ("integration", "conch integration: a key in bash, zsh or fish that asks conch"),
    ("unsafe", "-u/--unsafe: pipes, redirects and chaining, always confirmed"),
    ("explain", "-e/--explain and force_explain: understand before you run"),
    ("analyze", "--analyze: what went wrong with the last invocation"),
    ("questions", "questions get answers in prose: --answer, --command"),
    ("history", "the history log: location, fields, rotation"),
    ("packages", "built-in prompt configs (jq, git, find, files, text, ...)"),
    ("ops", "--init, --create-prompt, --add-prompt, --list-tools"),
    ("advanced", "prompt files, flag combinations, scripting, piped input"),
    ("exit-codes", "what each exit status means"),
    ("topics", "this list"),
)

TOPICS: tuple[str, ...] = tuple(name for name, _ in _SUMMARIES)


def render_help(topic: str | None) -> str:
    """The text of one help topic; ``None`` gives the overview page.

    Raises ``UsageError`` for a topic that does not exist.
    """
    name = "overview" if topic is None else topic.strip().lower()
    if name not in TOPICS:
        raise UsageError(f"unknown help topic '{topic}'; run `conch help topics` for the list")
    if name == "topics":
        return _render_topics()
    return _read_topic(name)


@cache
def _read_topic(name: str) -> str:
    text = resources.files(__name__).joinpath("topics", f"{name}.txt").read_text(encoding="utf-8")
    return text.rstrip() + "\n"


def _render_topics() -> str:
    width = max(len(name) for name in TOPICS) + 2
    lines = ["HELP TOPICS", ""]
    lines += [f"  {name:<{width}}{summary}" for name, summary in _SUMMARIES]
    lines += [
        "",
        "Run `conch help TOPIC` to read one, for example `conch help safety`.",
        "`conch help` alone shows the overview; `conch --help` lists every flag.",
    ]
    return "\n".join(lines) + "\n"
