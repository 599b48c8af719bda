"""The meta commands of ``conch shell`` (``:help`` lists them; ``conch.shell.meta`` parses
them). Each handler gets the shell's parts and the text after the command's name; the
loop ends when a handler returns True."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from conch.cli.shellauto import run_goal
from conch.cli.shellparts import ShellParts
from conch.errors import UsageError
from conch.shell.meta import META_COMMANDS, MetaError, parse_meta

KEYS = (
    "A line whose first word is a command runs in the shell; anything else goes to the "
    "model. Alt+Enter sends a line the other way; Tab completes; Ctrl+R searches earlier "
    "lines. Ctrl+C stops a command or a reply; three in a row leave."
)
HISTORY_WIDTH = 200


def run_meta(parts: ShellParts, text: str) -> bool:
    """Carry out the meta command ``text`` (without its colon); True to leave the shell.
    A command that cannot be carried out is one line on stderr."""
    try:
        meta = parse_meta(text)
    except MetaError as exc:
        parts.warn(str(exc))
        return False
    return _HANDLERS[meta.name](parts, meta.argument) is True


def _help(parts: ShellParts, argument: str) -> None:
    width = max(len(usage) for usage, _ in META_COMMANDS) + 2
    out = parts.env.stdout
    out.write("".join(f"  {usage:<{width}}{what}\n" for usage, what in META_COMMANDS))
    out.write(f"  {KEYS}\n")
    out.flush()


def _quit(parts: ShellParts, argument: str) -> bool:
    return True


def _clear(parts: ShellParts, argument: str) -> None:
    if parts.env.stdout_isatty:
        parts.env.stdout.write("\x1b[H\x1b[2J")
        parts.env.stdout.flush()


def _reset(parts: ShellParts, argument: str) -> None:
    parts.context.reset()
    parts.auto = None
    parts.save({"type": "reset"})
    parts.say("the conversation starts over")


def _model(parts: ShellParts, argument: str) -> None:
    from conch.shell.models import choose_model

    if not argument:
        parts.say(f"the model answering is {parts.choice.name}; :models lists them all")
        return
    try:
        choice = choose_model(parts.loaded.settings, argument, ":model")
    except UsageError as exc:
        parts.warn(str(exc))
        return
    if choice.name == parts.choice.name:
        parts.say(f"{choice.name} is answering already")
        return
    parts.switch(choice)
    parts.say(f"{choice.name} answers from now on (the conversation stays)")


def _models(parts: ShellParts, argument: str) -> None:
    from conch.shell.models import model_lines

    lines = model_lines(parts.loaded.settings, parts.choice.name)
    parts.env.stdout.write("".join(line + "\n" for line in lines))
    parts.env.stdout.flush()


def _history(parts: ShellParts, argument: str) -> None:
    out = parts.env.stdout
    if parts.session is None:
        parts.say("this session is not saved; showing the conversation the model sees")
        records = [
            {"type": "turn", "role": t.role, "content": t.content} for t in parts.context.turns
        ]
    else:
        records = parts.session.records()
    lines = [line for record in records if (line := _history_line(record))]
    out.write("".join(line + "\n" for line in lines) if lines else "nothing yet\n")
    out.flush()


def _history_line(record: Mapping[str, Any]) -> str:
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


def _cost(parts: ShellParts, argument: str) -> None:
    parts.env.stdout.write("".join(line + "\n" for line in parts.book.report()))
    parts.env.stdout.flush()


def _config(parts: ShellParts, argument: str) -> None:
    from conch.shell.configview import config_lines, sourced_values

    section = argument.partition(" ")[2].strip()
    values = sourced_values(parts.loaded, parts.env.environ, parts.flags)
    lines = config_lines(values, section)
    if parts.loaded.overlay_path is not None and not parts.loaded.overlay_trusted:
        lines.append(f"(not used: {parts.loaded.overlay_path}, a project overlay not trusted)")
    parts.env.stdout.write("".join(line + "\n" for line in lines))
    parts.env.stdout.flush()


def _auto(parts: ShellParts, argument: str) -> None:
    if argument in ("", "on"):
        parts.autonomous = True
        parts.say(
            "autonomous mode: plain-language lines are goals for the agent; destructive "
            "steps halt for a typed yes. :auto off ends it"
        )
    elif argument == "off":
        parts.autonomous = False
        parts.say("autonomous mode is off: plain-language lines go to the model")
    else:
        run_goal(parts, argument)


def _save(parts: ShellParts, argument: str) -> None:
    if argument:
        _transcript(parts, Path(parts.state.cwd) / Path(argument).expanduser())
    if parts.session is None:
        parts.say("this session is not saved (its file could not be written)")
    else:
        parts.say(f"every turn is saved as it happens, in {parts.session.path}")


def _transcript(parts: ShellParts, path: Path) -> None:
    from conch.storage.files import atomic_write_text

    blocks = [
        f"## {'You' if t.role == 'user' else 'Model'}\n\n{t.content}\n" for t in parts.context.turns
    ]
    try:
        atomic_write_text(path, "# conch shell\n\n" + "\n".join(blocks))
    except OSError as exc:
        parts.warn(f"cannot write {path}: {exc.strerror or exc}")
        return
    parts.say(f"wrote the conversation to {path}")


def _mcp(parts: ShellParts, argument: str) -> None:
    from conch.cli.mcpuse import mcp_lines

    lines = mcp_lines(parts.loaded.settings, parts.mcp_servers())
    parts.env.stdout.write("".join(line + "\n" for line in lines))
    parts.env.stdout.flush()


_HANDLERS: dict[str, Callable[[ShellParts, str], bool | None]] = {
    "help": _help,
    "quit": _quit,
    "clear": _clear,
    "reset": _reset,
    "model": _model,
    "models": _models,
    "history": _history,
    "cost": _cost,
    "config": _config,
    "auto": _auto,
    "save": _save,
    "mcp": _mcp,
}
