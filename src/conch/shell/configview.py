"""``:config show``: every setting in use and where its value came from.

A value comes from a command-line flag, the environment, the trusted project overlay
(``.conch.yaml``), the user config file, or the built-in defaults: the first of those, in
that order, that sets it. (Mappings merge key by key, so each leaf has its own source.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from conch.config.settings import ENV_OVERRIDES, LoadedSettings, read_yaml_mapping
from conch.errors import ConfigError

__all__ = ["Sourced", "config_lines", "sourced_values"]

VALUE_WIDTH = 48


@dataclass(frozen=True, slots=True)
class Sourced:
    """One setting: its dotted key, its value, and where the value came from."""

    key: str
    value: Any
    source: str


def sourced_values(
    loaded: LoadedSettings,
    environ: Mapping[str, str],
    flags: Mapping[str, Any] | None = None,
) -> list[Sourced]:
    """Every leaf setting of ``loaded`` with its source. ``flags`` are the dotted keys given
    on the command line (their values None when not given)."""
    given = {key for key, value in (flags or {}).items() if value is not None}
    env_keys: dict[str, str] = {}
    for variable, dotted in ENV_OVERRIDES:
        if environ.get(variable):
            env_keys[dotted] = f"environment ${variable}"
    user = _file_data(str(loaded.config_path)) if loaded.config_exists else {}
    overlay: dict[str, Any] = {}
    if loaded.overlay_path is not None and loaded.overlay_trusted:
        overlay = _file_data(str(loaded.overlay_path))
    values = []
    for key, value in _leaves(loaded.settings.model_dump(mode="json")):
        if key in given:
            source = "command-line flag"
        elif key in env_keys:
            source = env_keys[key]
        elif _sets(overlay, key):
            source = f"project overlay {loaded.overlay_path}"
        elif _sets(user, key):
            source = f"user config {loaded.config_path}"
        else:
            source = "default"
        values.append(Sourced(key, value, source))
    return values


def config_lines(values: list[Sourced], section: str = "") -> list[str]:
    """``key = value  (source)`` lines, values clipped; only ``section``'s when given."""
    chosen = [v for v in values if not section or v.key.split(".", 1)[0] == section]
    if not chosen:
        sections = sorted({v.key.split(".", 1)[0] for v in values})
        return [f"no section {section!r}; the sections: {', '.join(sections)}"]
    lines = []
    for item in chosen:
        text = json.dumps(item.value, ensure_ascii=False)
        if len(text) > VALUE_WIDTH:
            text = text[: VALUE_WIDTH - 1] + "…"
        lines.append(f"{item.key} = {text}  ({item.source})")
    return lines


def _file_data(path: str) -> dict[str, Any]:
    from pathlib import Path

    try:
        return read_yaml_mapping(Path(path))
    except ConfigError:
        return {}


def _leaves(data: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(data, dict) and data:
        for key, value in data.items():
            yield from _leaves(value, f"{prefix}{key}.")
    else:
        yield prefix.rstrip("."), data


def _sets(data: Mapping[str, Any], dotted: str) -> bool:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True
