"""The config helpers' front end: --init, --create-prompt, --add-prompt, --list-tools."""

from __future__ import annotations

import argparse
from pathlib import Path

from conch.cli import ui
from conch.cli.environment import Environment
from conch.cli.status import ExitStatus
from conch.errors import ConchError, UsageError


def run_ops(args: argparse.Namespace, env: Environment) -> int:
    """Run the one helper the flags ask for."""
    from conch.config.paths import Paths
    from conch.config.settings import config_path

    path = config_path(env.environ, Paths.default())
    if args.init:
        from conch.config.edits import init_config

        init_config(path)
        env.stdout.write(f"wrote {path}\n")
        return ExitStatus.OK
    if args.create_prompt:
        return _create_prompt(args.create_prompt, env)
    if args.add_prompt:
        return _add_prompt(Path(args.add_prompt), path, env)
    return _list_tools(args.list_tools, path, env)


def _create_prompt(values: list[str], env: Environment) -> int:
    from conch.config.edits import create_prompt

    if len(values) > 2:
        raise UsageError("--create-prompt takes a tool name and an optional path")
    target = env.cwd / values[1] if len(values) == 2 else None
    written = create_prompt(values[0], target, env.cwd)
    env.stdout.write(f"wrote {written}\n")
    return ExitStatus.OK


def _add_prompt(prompt_path: Path, config: Path, env: Environment) -> int:
    from conch.config.edits import Resolution, add_prompt
    from conch.config.settings import AllowedProgram, load_prompt_config

    incoming = load_prompt_config(env.cwd / prompt_path)
    can_ask = env.open_terminal() is not None

    def resolve(current: AllowedProgram, new: AllowedProgram) -> Resolution:
        env.stderr.write(f"tool '{current.name}' is already in default_prompt\n")
        env.stderr.write(f"  current:  {_describe(current)}\n  imported: {_describe(new)}\n")
        answer = ui.ask(env, "[O]verwrite, [S]kip, [C]ancel the import? [c] ", "osc", "c")
        return {"o": Resolution.OVERWRITE, "s": Resolution.SKIP}.get(answer, Resolution.CANCEL)

    result = add_prompt(config, incoming, resolve if can_ask else None)
    if result.cancelled:
        env.stderr.write(f"import cancelled; {config} is unchanged\n")
        return ExitStatus.NEEDS_CONFIRMATION
    for note in result.notes:
        env.stdout.write(note + "\n")
    for label, names in (
        ("added", result.added),
        ("overwrote", result.overwritten),
        ("skipped", result.skipped),
    ):
        if names:
            env.stdout.write(f"{label}: {', '.join(names)}\n")
    if not (result.added or result.overwritten):
        env.stdout.write(f"nothing to change in {config}\n")
    return ExitStatus.OK


def _describe(tool: object) -> str:
    from conch.config.settings import AllowedProgram

    assert isinstance(tool, AllowedProgram)
    text = " ".join(tool.config.split())
    text = text[:70] + ("…" if len(text) > 70 else "")
    flag = (
        "" if tool.force_explain is None else f" [force_explain: {str(tool.force_explain).lower()}]"
    )
    return f"{text or '(no instructions)'}{flag}"


def _list_tools(prompt_arg: str, config: Path, env: Environment) -> int:
    from conch.config.edits import list_tools, load_prompt_arg
    from conch.config.paths import Paths
    from conch.config.settings import PromptConfig, load_settings

    loaded = load_settings(env.environ, Paths.default(), env.cwd)
    sources: list[tuple[str, PromptConfig]] = [
        (f"default_prompt ({config})", loaded.settings.default_prompt)
    ]
    if prompt_arg:
        sources.append(load_prompt_arg(prompt_arg, env.cwd)[::-1])
    rows = list_tools(sources)
    for label, prompt in sources:
        env.stdout.write(f"{label}:\n")
        if not prompt.tools:
            env.stdout.write("  (no tools: any program may be used, every command is confirmed)\n")
        for row in rows:
            if row.source == label:
                env.stdout.write(f"  [{'x' if row.present else ' '}] {row.name}\n")
    return ExitStatus.OK


__all__ = ["ConchError", "run_ops"]
