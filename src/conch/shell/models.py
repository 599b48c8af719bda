"""Which model answers in ``conch shell``: the ``ai`` section, or a named entry of ``models:``.

``choose_model`` picks one by name and says in one line what the names are when it cannot.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from conch.config.settings import AISettings, Settings
from conch.errors import UsageError

__all__ = ["ModelChoice", "choose_model", "default_choice", "model_lines", "starting_model"]


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """A model by the name the prompt shows, and its settings. ``named`` is true for an entry
    of the ``models:`` section, false for the ``ai`` section."""

    name: str
    ai: AISettings
    named: bool = False


def default_choice(ai: AISettings) -> ModelChoice:
    """The ``ai`` section, named by its model (or by its provider when it names none)."""
    return ModelChoice(ai.model or ai.provider, ai)


def choose_model(settings: Settings, name: str | None, asked_by: str = "--model") -> ModelChoice:
    """The model called ``name`` in the ``models:`` section (None: the ``ai`` section).

    UsageError naming ``name`` and the known names when there is no such entry.
    """
    if name is None:
        return default_choice(settings.ai)
    if name in settings.models:
        return ModelChoice(name, settings.models[name], named=True)
    raise UsageError(f"{asked_by} {name}: no such model; {_known(settings.models)}")


def starting_model(
    settings: Settings, name: str | None, flags: dict[str, object] | None = None
) -> ModelChoice:
    """The model a shell starts with: ``name`` (``--model``), else ``shell.model``. With no
    ``models:`` section, ``name`` sets ``ai.model`` as it does for ``conch chat`` (recorded
    in ``flags`` as ``ai.model``, for ``:config show``)."""
    if name is None:
        return choose_model(settings, settings.shell.model, "shell.model")
    if settings.models:
        return choose_model(settings, name, "--model")
    settings.ai.model = name
    if flags is not None:
        flags["ai.model"] = name
    return default_choice(settings.ai)


def model_lines(settings: Settings, active: str) -> list[str]:
    """One line per model, the active one marked with ``*``: the ``ai`` section first, then
    the ``models:`` entries by name."""
    choices = [default_choice(settings.ai)]
    choices += [ModelChoice(n, settings.models[n], True) for n in sorted(settings.models)]
    width = max(len(c.name) for c in choices)
    lines = []
    for choice in choices:
        mark = "*" if choice.name == active else " "
        where = f"{choice.ai.provider}" + (f": {choice.ai.model}" if choice.ai.model else "")
        origin = "models:" if choice.named else "ai:"
        lines.append(f"{mark} {choice.name:<{width}}  {where}  ({origin})")
    return lines


def _known(models: Mapping[str, AISettings]) -> str:
    if not models:
        return "no models are configured (add a models: section to the config)"
    return "known models: " + ", ".join(sorted(models))
