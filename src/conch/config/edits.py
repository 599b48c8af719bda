"""Config helpers: --init, --create-prompt, --add-prompt and --list-tools (no printing here)."""

from __future__ import annotations

import io
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from conch.config.settings import (
    AllowedProgram,
    PromptConfig,
    Settings,
    read_yaml_mapping,
    starter_config,
    validate_file_data,
)
from conch.errors import ConchError, ConfigError, UsageError
from conch.storage.files import atomic_write_text


def init_config(path: Path) -> None:
    """Write the starter config; refuse to touch an existing file."""
    if path.exists():
        raise ConchError(f"config file {path} already exists; conch --init never overwrites it")
    try:
        atomic_write_text(path, starter_config(), mode=0o600)
    except OSError as exc:
        raise ConchError(f"cannot write config file {path}: {exc.strerror}") from None


def prompt_template(tool: str) -> str:
    """A prompt config for one tool, ready to edit."""
    return (
        "# A conch prompt config: pass it as the first argument, e.g.\n"
        f'#   conch {tool}.yaml "what you want {tool} to do"\n'
        "# or merge its tools into your config with: conch --add-prompt FILE\n"
        "meta_prompt: >-\n"
        f"  You translate requests into one {tool} command for the user's platform.\n"
        "  Reply with the command only, on one line, without markdown.\n"
        "tools:\n"
        f"  - name: {tool}\n"
        "    config: |\n"
        f"      How to use {tool}: describe the options and patterns the model should prefer.\n"
        "    # force_explain: true   # explain and confirm every command using this tool\n"
    )


def create_prompt(tool: str, path: Path | None, cwd: Path) -> Path:
    """Write a template prompt config for ``tool`` (default ``./TOOL.yaml``); never overwrite."""
    if not tool or "/" in tool or tool.startswith("-"):
        raise UsageError(f"--create-prompt needs a tool name, not '{tool}'")
    target = path if path is not None else cwd / f"{tool}.yaml"
    if target.exists():
        raise ConchError(f"{target} already exists; choose another path")
    try:
        atomic_write_text(target, prompt_template(tool))
    except OSError as exc:
        raise ConchError(f"cannot write {target}: {exc.strerror}") from None
    return target


class Resolution(StrEnum):
    """What to do with an imported tool whose name the config already has."""

    OVERWRITE = "overwrite"
    SKIP = "skip"
    CANCEL = "cancel"


@dataclass(slots=True)
class MergeResult:
    """What --add-prompt did."""

    added: list[str] = field(default_factory=list)
    overwritten: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cancelled: bool = False


Resolver = Callable[[AllowedProgram, AllowedProgram], Resolution]


def merge_tools(
    existing: Sequence[AllowedProgram], incoming: Sequence[AllowedProgram], resolve: Resolver | None
) -> tuple[list[AllowedProgram], MergeResult]:
    """Merge ``incoming`` into ``existing``; ``resolve`` decides each duplicate.

    A duplicate whose incoming ``force_explain`` is unset keeps the existing value.
    ``resolve`` None means nobody can be asked: a duplicate is then an error.
    """
    result = MergeResult()
    merged = list(existing)
    index = {t.name: i for i, t in enumerate(merged)}
    for tool in incoming:
        if tool.name not in index:
            merged.append(tool)
            index[tool.name] = len(merged) - 1
            result.added.append(tool.name)
            continue
        current = merged[index[tool.name]]
        if resolve is None:
            raise UsageError(
                f"tool '{tool.name}' is already in default_prompt and there is no terminal to "
                "ask Overwrite/Skip/Cancel; run conch --add-prompt in a terminal"
            )
        choice = resolve(current, tool)
        if choice is Resolution.CANCEL:
            result.cancelled = True
            return list(existing), result
        if choice is Resolution.SKIP:
            result.skipped.append(tool.name)
            continue
        replacement = tool
        if tool.force_explain is None and current.force_explain is True:
            replacement = tool.model_copy(update={"force_explain": True})
            result.notes.append(f"{tool.name}: (preserving force_explain from global config)")
        merged[index[tool.name]] = replacement
        result.overwritten.append(tool.name)
    return merged, result


def add_prompt(config_path: Path, incoming: PromptConfig, resolve: Resolver | None) -> MergeResult:
    """Merge a prompt file's tools into the config's ``default_prompt``, atomically.

    Nothing is written until every duplicate is resolved; a cancel writes nothing. Comments
    and layout of the config file are kept.
    """
    from ruamel.yaml import YAML

    if not config_path.exists():
        raise ConfigError(f"config file {config_path} does not exist; run conch --init first")
    validate_file_data(Settings, read_yaml_mapping(config_path), config_path)
    yaml = YAML()
    yaml.preserve_quotes = True
    document: Any = yaml.load(config_path.read_text(encoding="utf-8")) or {}
    current = PromptConfig.model_validate(dict(document.get("default_prompt") or {}))
    merged, result = merge_tools(current.tools, incoming.tools, resolve)
    if result.cancelled or not (result.added or result.overwritten):
        return result
    section = document.setdefault("default_prompt", {})
    if section is None:
        section = document["default_prompt"] = {}
    section["tools"] = [t.model_dump(exclude_none=True) for t in merged]
    buffer = io.StringIO()
    yaml.dump(document, buffer)
    try:
        atomic_write_text(config_path, buffer.getvalue())
    except OSError as exc:
        raise ConchError(f"cannot write config file {config_path}: {exc.strerror}") from None
    return result


@dataclass(frozen=True, slots=True)
class ToolRow:
    """One line of --list-tools."""

    source: str
    name: str
    present: bool


def list_tools(sources: Sequence[tuple[str, PromptConfig]]) -> list[ToolRow]:
    """Each tool of each prompt config, with whether it is on PATH."""
    return [
        ToolRow(label, tool.name, shutil.which(tool.name) is not None)
        for label, prompt in sources
        for tool in prompt.tools
    ]


def load_prompt_arg(name: str, cwd: Path) -> tuple[PromptConfig, str]:
    """A prompt config named on the command line: a file, else a built-in of that name.

    Returns the config and a label saying where it came from.
    """
    from conch.config.settings import load_prompt_config

    path = cwd / name
    if path.exists():
        return load_prompt_config(path), str(path)
    from conch.config.prompts import builtin_prompt

    text = builtin_prompt(name)
    if text is None:
        raise ConfigError(
            f"prompt file {path} does not exist (and no built-in prompt has that name; "
            "see `conch help packages`)"
        )
    import yaml

    return PromptConfig.model_validate(yaml.safe_load(text)), f"built-in {name}"
