"""What is wrong with a settings or prompt file, as lines a user can act on.

Every problem pydantic finds is one line, ``FILE:LINE: KEY: what is wrong``, in the file's
order, so that one run of conch reports every invalid key, not only the first.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails

Loc = tuple[int | str, ...]


def file_problems(path: Path, exc: ValidationError) -> list[str]:
    """One ``FILE:LINE: KEY: what is wrong`` per error in ``path``, in line order, no repeats."""
    root = _compose(path)
    found: list[tuple[int, str]] = []
    for err in exc.errors():
        line = line_of(root, err["loc"])
        where = f"{path}:{line}" if line else str(path)
        found.append((line or 0, f"{where}: {_key(err['loc'])}: {_what_is_wrong(err)}"))
    found.sort(key=lambda item: item[0])
    return list(dict.fromkeys(_single_line(text) for _, text in found))


def value_problems(exc: ValidationError) -> list[str]:
    """One ``KEY: what is wrong`` per error in values that come from no file."""
    return list(
        dict.fromkeys(
            _single_line(f"{_key(err['loc'])}: {_what_is_wrong(err)}") for err in exc.errors()
        )
    )


def listing(problems: list[str], heading: str) -> str:
    """One problem as it is; several under ``heading`` (which counts them), one to a line."""
    if len(problems) == 1:
        return problems[0]
    return heading + "".join(f"\n  {problem}" for problem in problems)


def line_of(root: yaml.Node | None, loc: Loc) -> int | None:
    """The 1-based line of the YAML node at ``loc`` (or its nearest existing parent)."""
    node = root
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if key_node.value == str(part):
                    line = key_node.start_mark.line + 1
                    node = value_node
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return line
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _compose(path: Path) -> yaml.Node | None:
    """The file's YAML node tree (for line numbers), or None if it cannot be read again."""
    try:
        return yaml.compose(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None


def _key(loc: Loc) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


def _what_is_wrong(err: ErrorDetails) -> str:
    if err["type"] == "extra_forbidden":
        return "unknown key; check its spelling against `conch help config`"
    if err["type"] == "missing":
        return "required key is missing"
    if err["type"] == "value_error" and "error" in err.get("ctx", {}):
        return str(err["ctx"]["error"])  # a validator's own sentence, without "Value error, "
    if err["type"] == "string_pattern_mismatch" and err["loc"][-1:] == ("[key]",):
        return "not a valid name: use letters, digits, '_', '-' and '.', starting with a letter or digit"
    return err["msg"]


def _single_line(text: str) -> str:
    return text.replace("\r", "\\r").replace("\n", "\\n")
