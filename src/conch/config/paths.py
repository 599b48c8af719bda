"""Where conch keeps its files, following the platform (and so ``XDG_*`` on Linux)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Paths:
    """The config, state (history, trust) and cache (model, help text) directories."""

    config_dir: Path
    state_dir: Path
    cache_dir: Path

    @classmethod
    def default(cls) -> Paths:
        """The platform's directories for conch, read from the current environment."""
        import platformdirs

        return cls(
            config_dir=Path(platformdirs.user_config_dir("conch")),
            state_dir=Path(platformdirs.user_state_dir("conch")),
            cache_dir=Path(platformdirs.user_cache_dir("conch")),
        )
