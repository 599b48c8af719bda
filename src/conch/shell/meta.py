"""The meta commands of ``conch shell``: lines that start with ``:`` and control conch itself.

``META_COMMANDS`` is the one table of them: each row is a name, its arguments as ``:help``
shows them, its help line and its handler (a command may have several rows, one per way of
writing it). ``:help`` lists the rows, completion offers the names (``meta_names``),
``parse_meta`` checks a line against them, and ``run_meta`` calls the handler. Two rows have
no handler: ``:exec CMD`` and ``:ask TEXT`` send the rest of the line to the shell or to the
model, as ``$ CMD`` and ``> TEXT`` do (``routed``).

A handler is a generator of ``ShellEvent``s over the shell's parts and the text after the
command's name; a meta command that cannot be carried out is one ``Said`` warning.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conch.errors import ConchError, UsageError
from conch.shell.auto import run_goal
from conch.shell.events import Help, Left, Listed, McpShown, Said, ScreenCleared, ShellEvent
from conch.shell.parts import ShellParts
from conch.shell.route import Route, Target, route
from conch.shell.sessions import ShellSessionError

__all__ = [
    "META_COMMANDS",
    "Meta",
    "MetaCommand",
    "MetaError",
    "help_lines",
    "meta_names",
    "parse_meta",
    "routed",
    "run_meta",
]

HISTORY_WIDTH = 200

Handler = Callable[[ShellParts, str], Iterator[ShellEvent]]


class MetaError(ValueError):
    """A meta command that cannot be carried out as written (the message says why and what to
    write instead)."""


@dataclass(frozen=True, slots=True)
class Meta:
    """One meta command: its ``name`` (aliases resolved: ``q`` is ``quit``) and the text after
    it, stripped."""

    name: str
    argument: str = ""


@dataclass(frozen=True, slots=True)
class MetaCommand:
    """A row of the table: ``:NAME ARGUMENTS``, what it does (``help``) and its ``handler``.

    ``arguments`` is empty for a command that takes nothing. ``aliases``: other names for
    it. ``pattern``: what its argument must match, with ``error`` saying what to write
    instead. ``forces``: where the rest of the line goes instead of a handler (``:exec``,
    ``:ask``)."""

    name: str
    arguments: str
    help: str
    handler: Handler | None
    aliases: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None
    error: str = ""
    forces: Target | None = None

    @property
    def usage(self) -> str:
        """How ``:help`` names it: ``:quit, :q``, ``:model [NAME]``."""
        names = ", ".join(f":{name}" for name in (self.name, *self.aliases))
        return f"{names} {self.arguments}" if self.arguments else names


def parse_meta(text: str) -> Meta:
    """The meta command in ``text`` (the line without its colon); MetaError when there is no
    such command or its argument does not fit."""
    word, _, rest = text.strip().partition(" ")
    argument = rest.strip()
    rows = _rows(word)
    if not rows:
        raise MetaError(f"unknown meta command :{word}; :help lists them")
    row = rows[0]
    if not any(r.arguments for r in rows) and argument:
        raise MetaError(f":{word} takes nothing after it (got {argument!r})")
    if row.pattern is not None and not row.pattern.fullmatch(argument):
        raise MetaError(row.error)
    return Meta(row.name, argument)


def run_meta(parts: ShellParts, text: str) -> Iterator[ShellEvent]:
    """Carry out the meta command ``text`` (without its colon)."""
    try:
        meta = parse_meta(text)
    except MetaError as exc:
        yield Said(str(exc), warning=True)
        return
    handler = _rows(meta.name)[0].handler
    if handler is None:  # :exec and :ask are routed before they get here
        raise MetaError(f":{meta.name} is routed, not run")
    yield from handler(parts, meta.argument)


def routed(line: str, known: Container[str]) -> Route:
    """Where ``line`` goes (``conch.shell.route.route``), with ``:exec CMD`` and ``:ask
    TEXT`` sent on to the shell and to the model, forced."""
    sent = route(line, known)
    if sent.target != "meta":
        return sent
    word, _, rest = sent.text.partition(" ")
    rows = _rows(word)
    target = rows[0].forces if rows else None
    if target is None:
        return sent
    text = rest.strip()
    if not text:
        return Route("empty", "", True, f"nothing after ':{word}'")
    where = "shell" if target == "shell" else "model"
    return Route(target, text, True, f"forced to the {where} by ':{word}'")


def meta_names() -> list[str]:
    """The meta commands as typed (``:help``, ``:q``...), for completion."""
    return sorted({f":{name}" for row in META_COMMANDS for name in (row.name, *row.aliases)})


def help_lines() -> list[str]:
    """``:help``: every row of the table, its usage and what it does."""
    width = max(len(row.usage) for row in META_COMMANDS) + 2
    return [f"  {row.usage:<{width}}{row.help}" for row in META_COMMANDS]


def _rows(word: str) -> list[MetaCommand]:
    return [row for row in META_COMMANDS if word == row.name or word in row.aliases]


# -- the handlers ------------------------------------------------------------------------------


def _help(parts: ShellParts, argument: str) -> Iterator[ShellEvent]:
    yield Help(tuple(help_lines()))


def _quit(parts: ShellParts, argument: str) -> Iterator[ShellEvent]:
    from conch.shell.remember import write_summary

    try:
        yield from write_summary(parts)  # never keeps the user from leaving
    finally:
        parts.leaving = True
    yield Left()


def _clear(parts: ShellParts, argument: str) -> Iterator[ShellEvent]:
    yield ScreenCleared()


def _reset(parts: ShellParts, argument: str) -> Iterator[ShellEvent]:
    parts.context.reset()
    parts.auto, parts.plan, parts.earlier = None, None, ""
    yield from parts.save({"type": "reset"})
    yield Said("the conversation starts over")


def _model(parts: ShellParts, argument: str) -> Iterator[ShellEvent]:
    from conch.shell.models import choose_model

    if not argument:
        yield Said(f"the model answering is {parts.choice.name}; :models lists them all")
        return
    try:
        choice = choose_model(parts.loaded.settings, argument, ":model")
    except UsageError as exc:
        yield Said(str(exc), warning=True)
        return
    if choice.name == parts.choice.name:
        yield Said(f"{choice.name} is answering already")
        return
    try:
        parts.switch(choice)
    except (ConchError, OSError) as exc:  # the model cannot be opened: the shell goes on
        still = parts.choice.name
        yield Said(f"cannot open {choice.name}: {exc}; {still} answers still", warning=True)
        return
    yield Said(f"{choice.name} answers from now on (the conversation stays)")


def _models(parts: ShellParts, argument: str) -> Iterator[ShellEvent]:
    from conch.shell.models import model_lines

    yield Listed(tuple(model_lines(parts.loaded.settings, parts.choice.name)))


def _history(parts: ShellParts, argument: str) -> Iterator[ShellEvent]:
    if argument:  # list, show N, delete N: the sessions remembered
        from conch.shell.remember import history

        yield from history(parts, argument)
        return
    if parts.saved is None:
        yield Said("this session is not saved; showing the conversation the model sees")
        records: list[dict[str, Any]] = [
            {"type": "turn", "role": t.role, "content": t.content} for t in parts.context.turns
        ]
    else:
        try:
            records = parts.saved.records()
        except ShellSessionError as exc:
            yield Said(str(exc), warning=True)
            return
    lines = [line for record in records if (line := history_line(record))]
    yield Listed(tuple(lines) if lines else ("nothing yet",))


def history_line(record: Mapping[str, Any]) -> str:
    """One saved record as ``:history`` shows it ("" for a record it leaves out)."""
    kind = record.get("type")
    if kind == "exec":
        return f"  $ {record.get('command')}  [exit {record.get('exit_code')}]"
    if kind == "reset":
        return "  -- :reset --"
    if kind == "resume":
        return "  -- resumed --"
    if kind != "turn":
        return ""
    if record.get("role") == "user":
        return "you: " + _clip(str(record.get("text", record.get("content", ""))))
    return "model: " + _clip(str(record.get("content", "")))


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= HISTORY_WIDTH else flat[: HISTORY_WIDTH - 1] + "…"


def _cost(parts: ShellParts, argument: str) -> Iterator[ShellEvent]:
    book = parts.book
    yield Listed(tuple(book.detail() if argument == "detail" else book.report()))


def _config(parts: ShellParts, argument: str) -> Iterator[ShellEvent]:
    from conch.shell.configview import config_lines, sourced_values

    section = argument.partition(" ")[2].strip()
    values = sourced_values(parts.loaded, parts.environ, dict(parts.flags))
    lines = config_lines(values, section)
    if parts.loaded.overlay_path is not None and not parts.loaded.overlay_trusted:
        lines.append(f"(not used: {parts.loaded.overlay_path}, a project overlay not trusted)")
    yield Listed(tuple(lines))


def _auto(parts: ShellParts, argument: str) -> Iterator[ShellEvent]:
    if argument in ("", "on"):
        parts.autonomous = True
        yield Said(
            "autonomous mode: plain-language lines are goals for the agent; destructive "
            "steps halt for a typed yes. :auto off ends it"
        )
    elif argument == "off":
        parts.autonomous = False
        yield Said("autonomous mode is off: plain-language lines go to the model")
    else:
        yield from run_goal(parts, argument)


def _save(parts: ShellParts, argument: str) -> Iterator[ShellEvent]:
    from conch.shell.remember import write_summary

    if argument:
        yield from _transcript(parts, Path(parts.state.cwd) / Path(argument).expanduser())
    if parts.saved is None:
        yield Said("this session is not saved (its file could not be written)")
    else:
        yield Said(f"every turn is saved as it happens, in {parts.saved.path}")
    yield from write_summary(parts)


def _transcript(parts: ShellParts, path: Path) -> Iterator[ShellEvent]:
    from conch.storage.files import atomic_write_text

    blocks = [
        f"## {'You' if t.role == 'user' else 'Model'}\n\n{t.content}\n" for t in parts.context.turns
    ]
    try:
        atomic_write_text(path, "# conch shell\n\n" + "\n".join(blocks))
    except OSError as exc:
        yield Said(f"cannot write {path}: {exc.strerror or exc}", warning=True)
        return
    yield Said(f"wrote the conversation to {path}")


def _mcp(parts: ShellParts, argument: str) -> Iterator[ShellEvent]:
    yield McpShown(parts.mcp_servers())


#: Every meta command, in the order ``:help`` lists them.
META_COMMANDS: tuple[MetaCommand, ...] = (
    MetaCommand("help", "", "this list", _help),
    MetaCommand(
        "quit",
        "",
        "leave, the session's summary remembered (so does Ctrl+D on an empty line)",
        _quit,
        ("q", "exit"),
    ),
    MetaCommand(
        "exec",
        "CMD",
        "run CMD in the shell, whatever it looks like (also: $ CMD)",
        None,
        forces="shell",
    ),
    MetaCommand(
        "ask",
        "TEXT",
        "send TEXT to the model, whatever it looks like (also: > TEXT)",
        None,
        forces="model",
    ),
    MetaCommand(
        "model",
        "[NAME]",
        "switch to the model NAME of the models: section; alone: the active one",
        _model,
    ),
    MetaCommand("models", "", "the configured models, the active one marked", _models),
    MetaCommand(
        "history",
        "",
        "this session's turns and commands",
        _history,
        pattern=re.compile(r"|list|(?:show|delete)\s+\d+"),
        error="write :history, :history list, :history show N or :history delete N",
    ),
    MetaCommand("history", "list", "the sessions remembered: number, date, directory", _history),
    MetaCommand("history", "show N", "the summary of the remembered session N", _history),
    MetaCommand("history", "delete N", "forget the remembered session N", _history),
    MetaCommand("clear", "", "clear the screen (the conversation stays)", _clear),
    MetaCommand(
        "reset", "", "forget the conversation and the output waiting for the model", _reset
    ),
    MetaCommand(
        "cost",
        "",
        "tokens per turn, totals per model and for the session, and their price",
        _cost,
        pattern=re.compile(r"(?:detail)?"),
        error="write :cost, or :cost detail",
    ),
    MetaCommand(
        "cost",
        "detail",
        "per turn, the tokens estimated from the text against those counted",
        _cost,
    ),
    MetaCommand(
        "config",
        "show [SECTION]",
        "the settings in use and where each value came from",
        _config,
        pattern=re.compile(r"show(?:\s+\S+)?"),
        error="write :config show, or :config show SECTION (such as shell)",
    ),
    MetaCommand(
        "auto", "GOAL", "let the agent work toward GOAL with its tools, step by step", _auto
    ),
    MetaCommand(
        "auto",
        "[on|off]",
        "autonomous mode: plain-language lines become goals for the agent",
        _auto,
    ),
    MetaCommand(
        "save",
        "[FILE]",
        "where the session is saved, and its summary remembered; with FILE, also a "
        "Markdown transcript",
        _save,
    ),
    MetaCommand("mcp", "", "the MCP servers of the config and their tools (for :auto)", _mcp),
)
