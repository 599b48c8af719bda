"""Task files for ``conch run --plan``: a goal, its context and instructions, as a prompt.

A task file is YAML, JSON or Markdown::

    goal: Generate API documentation
    context:
      directory: src/api/
    instructions:
      - List all API endpoint files
      - Extract function signatures

In Markdown the goal is the first heading (or a ``## Goal`` section), ``## Context`` holds
``- key: value`` lines and ``## Instructions`` a list. ``task_prompt`` turns a task into the
instruction the agent starts from: the instructions guide it, they do not bind it. The
prompt is the conversation's first user message, so pruning always keeps it and the system
prompt stays the same from one task to the next.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from conch.errors import InputError


@dataclass(frozen=True, slots=True)
class Task:
    """What a task file asks for."""

    goal: str
    context: dict[str, str] = field(default_factory=dict)
    instructions: tuple[str, ...] = ()


def load_task(path: Path) -> Task:
    """The task in ``path`` (``.md``/``.markdown`` as Markdown, ``.json`` as JSON, anything
    else as YAML); InputError naming the file when it cannot be read or holds no goal."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read task file {path}: {exc}") from None
    suffix = path.suffix.lower()
    try:
        if suffix in (".md", ".markdown"):
            return parse_markdown(text)
        return task_from_data(json.loads(text) if suffix == ".json" else yaml.safe_load(text))
    except (ValueError, yaml.YAMLError) as exc:
        raise InputError(f"task file {path}: {' '.join(str(exc).split())}") from None


def task_from_data(data: Any) -> Task:
    """The task in parsed YAML or JSON; ValueError when there is no goal."""
    if not isinstance(data, dict) or not str(data.get("goal") or "").strip():
        raise ValueError("a task needs a `goal`")
    context = data.get("context") or {}
    if not isinstance(context, dict):
        context = {"notes": str(context)}
    steps = data.get("instructions") or []
    if isinstance(steps, str):
        steps = [line for line in steps.splitlines() if line.strip()]
    return Task(
        str(data["goal"]).strip(),
        {str(k): str(v) for k, v in context.items()},
        tuple(str(step).strip() for step in steps if str(step).strip()),
    )


_HEADING = re.compile(r"^(#+)\s*(.+?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)\s*$")


def parse_markdown(text: str) -> Task:
    """The task in a Markdown file; ValueError when there is no goal."""
    sections: dict[str, list[str]] = {}
    title = ""
    current: list[str] | None = None
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            name = heading.group(2).strip().rstrip(":").lower()
            if not title and name not in ("goal", "context", "instructions"):
                title = heading.group(2).strip()
            current = sections.setdefault(name, [])
        elif current is not None:
            current.append(line)
    goal = " ".join(line.strip() for line in sections.get("goal", []) if line.strip()) or title
    context: dict[str, str] = {}
    for line in sections.get("context", []):
        item = _ITEM.match(line)
        if item:
            key, _, value = item.group(1).partition(":")
            context[key.strip()] = value.strip()
    steps = [m.group(1) for m in map(_ITEM.match, sections.get("instructions", [])) if m]
    return task_from_data({"goal": goal, "context": context, "instructions": steps})


def task_prompt(task: Task) -> str:
    """The instruction the agent starts a task from."""
    lines = ["You are assisting with the following task:", "", f"GOAL: {task.goal}"]
    if task.context:
        lines += ["", "CONTEXT:"]
        lines += [f"- {key.replace('_', ' ').capitalize()}: {v}" for key, v in task.context.items()]
    if task.instructions:
        lines += ["", "INSTRUCTIONS (follow as guidance):"]
        lines += [f"{n}. {step}" for n, step in enumerate(task.instructions, start=1)]
    lines += [
        "",
        "Use the available tools to accomplish this goal. You may adapt your approach as "
        "needed, but try to follow the instructions provided.",
    ]
    return "\n".join(lines)
