"""Built-in prompt configs: ``conch jq.yaml "..."`` works without a jq.yaml of your own.

Each ``<name>.yaml`` here has the shape of ``default_prompt`` (a meta prompt and its tools).
Only the standard library is imported, so looking a name up stays cheap.
"""

from __future__ import annotations

from importlib import resources

_SUFFIXES = (".yaml", ".yml")


def builtin_prompt_names() -> list[str]:
    """The names of the built-in prompt configs, sorted, without the ``.yaml`` suffix."""
    return sorted(
        entry.name.removesuffix(".yaml")
        for entry in resources.files(__name__).iterdir()
        if entry.name.endswith(".yaml") and entry.is_file()
    )


def builtin_prompt(name: str) -> str | None:
    """The YAML text of the built-in prompt ``name`` (``jq`` or ``jq.yaml``), or None."""
    stem = name
    for suffix in _SUFFIXES:
        stem = stem.removesuffix(suffix)
    if stem not in builtin_prompt_names():
        return None
    return resources.files(__name__).joinpath(f"{stem}.yaml").read_text(encoding="utf-8")
