"""The meta commands of ``conch shell``: lines that start with ``:`` and control conch itself.

``parse_meta`` turns what ``conch.shell.route`` found (the text after the colon, such as
``"model fast"``) into a ``Meta``, or says in one line what is wrong with it. ``:exec CMD``
and ``:ask TEXT`` never get here: the router sends them to the shell and to the model.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["META_COMMANDS", "Meta", "MetaError", "meta_names", "parse_meta"]

#: Every meta command with its one-line description, in the order ``:help`` lists them.
META_COMMANDS: tuple[tuple[str, str], ...] = (
    (":help", "this list"),
    (":quit, :q", "leave (so does Ctrl+D on an empty line)"),
    (":exec CMD", "run CMD in the shell, whatever it looks like (also: $ CMD)"),
    (":ask TEXT", "send TEXT to the model, whatever it looks like (also: > TEXT)"),
    (":model [NAME]", "switch to the model NAME of the models: section; alone: the active one"),
    (":models", "the configured models, the active one marked"),
    (":history", "this session's turns and commands"),
    (":clear", "clear the screen (the conversation stays)"),
    (":reset", "forget the conversation and the output waiting for the model"),
    (":cost", "tokens per turn, totals per model and for the session, and their price"),
    (":config show [SECTION]", "the settings in use and where each value came from"),
    (":auto GOAL", "let the agent work toward GOAL with its tools, step by step"),
    (":auto [on|off]", "autonomous mode: plain-language lines become goals for the agent"),
    (":save [FILE]", "where the session is saved; with FILE, also a Markdown transcript"),
    (":mcp", "the MCP servers of the config and their tools (for :auto)"),
)

_ALIASES = {"q": "quit", "exit": "quit", "?": "help"}
_NAMES = frozenset(
    {"help", "quit", "model", "models", "history", "clear", "reset", "cost", "config"}
    | {"auto", "save", "mcp"}
)
_NO_ARGUMENT = frozenset({"help", "quit", "models", "history", "clear", "reset", "cost", "mcp"})


class MetaError(ValueError):
    """A meta command that cannot be carried out as written (the message says why and what to
    write instead)."""


@dataclass(frozen=True, slots=True)
class Meta:
    """One meta command: its ``name`` (aliases resolved: ``q`` is ``quit``) and the text after
    it, stripped."""

    name: str
    argument: str = ""


def meta_names() -> list[str]:
    """The meta commands as typed (``:help``, ``:q``...), for completion."""
    return sorted({f":{name}" for name in _NAMES | _ALIASES.keys()} | {":exec", ":ask"})


def parse_meta(text: str) -> Meta:
    """The meta command in ``text`` (the line without its colon); MetaError when there is no
    such command or its argument does not fit."""
    word, _, rest = text.strip().partition(" ")
    name = _ALIASES.get(word, word)
    argument = rest.strip()
    if name not in _NAMES:
        raise MetaError(f"unknown meta command :{word}; :help lists them")
    if name in _NO_ARGUMENT and argument:
        raise MetaError(f":{word} takes nothing after it (got {argument!r})")
    if name == "config":
        action, _, section = argument.partition(" ")
        if action != "show" or " " in section.strip():
            raise MetaError("write :config show, or :config show SECTION (such as shell)")
    return Meta(name, argument)
