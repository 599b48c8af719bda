"""Documentation excerpts for the model: the usage lines and the options that matter."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from conch.validate.config import ValidationSettings
from conch.validate.helptext import CommandHelp, PolicyCheck, collect_help, truncate

_USAGE_LINE = re.compile(r"^\s*(usage:|synopsis)", re.IGNORECASE)
_OPTION_LINE = re.compile(r"^\s*(?:-\w|--\w|\[-)")


def help_for_prompt(
    names: Sequence[str],
    settings: ValidationSettings | Mapping[str, Any] | None = None,
    cache_dir: Path | None = None,
    policy_check: PolicyCheck | None = None,
    per_command: int = 1500,
) -> str:
    """A compact documentation excerpt for ``names``, to give the model before it generates."""
    return render_help(collect_help(names, settings, cache_dir, policy_check), None, per_command)


def render_help(
    helps: Mapping[str, CommandHelp],
    focus: Mapping[str, Sequence[str]] | None = None,
    per_command: int = 1500,
    total: int = 6000,
) -> str:
    """One block per program: usage, the lines about ``focus`` options first, then others."""
    blocks: list[str] = []
    for name, help_ in helps.items():
        if not help_.exists:
            blocks.append(f"## {name}: NOT INSTALLED on this machine (not on PATH)")
            continue
        facts = [f for f in (help_.path, help_.version) if f]
        head = f"## {name}" + (f" ({'; '.join(facts)})" if facts else "")
        body = _excerpt(help_, (focus or {}).get(name, ()), per_command)
        if not body:
            body = (
                "shell builtin"
                if help_.builtin
                else f"no documentation ({help_.note or 'none found'})"
            )
        blocks.append(f"{head}\n{body}")
    return truncate("\n\n".join(blocks), total)


def _excerpt(help_: CommandHelp, focus: Sequence[str], budget: int) -> str:
    source = help_.help_text or help_.man_page or ""
    lines = [ln for ln in source.split("\n") if ln.strip()]
    wanted = _focus_options(focus)
    picked: list[int] = []
    for i, line in enumerate(lines):
        if _USAGE_LINE.match(line):
            picked += [i, i + 1]
    for i, line in enumerate(lines):
        if any(re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", line) for o in wanted):
            picked += [i, i + 1]
    picked += [i for i, line in enumerate(lines) if _OPTION_LINE.match(line)]
    out: list[str] = []
    used = 0
    for i in dict.fromkeys(p for p in picked if p < len(lines)):
        if used + len(lines[i]) + 1 > budget:
            break
        out.append(lines[i])
        used += len(lines[i]) + 1
    if help_.tldr_summary and used < budget - 200:
        out.append("Examples (tldr):\n" + help_.tldr_summary[: budget - used - 20])
    return "\n".join(out)


def _focus_options(words: Sequence[str]) -> list[str]:
    out: list[str] = []
    for word in words:
        out.append(word)
        if not word.startswith("--") and len(word) > 2 and word[1:].isalpha():
            out += [f"-{letter}" for letter in word[1:]]  # -lah is -l, -a, -h
    return list(dict.fromkeys(out))
