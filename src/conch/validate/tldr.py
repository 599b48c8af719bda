"""tldr pages, read straight from an installed client's local cache.

tldr clients differ in whether (and how) they can be kept offline, and some update their cache
over the network on their own. Reading the cached page file instead guarantees no network
access and no subprocess; a page that is not cached is simply absent.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

_CLIENTS = ("tldr", "tealdeer", "tldr-py")
_MAX_CHARS = 1500
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_PAGE_DIRS = (
    "pages",
    "pages.en",
    "tldr-pages/pages",
    "tldr-pages/pages.en",
    "tldr-master/pages",
    "cache/pages",
    "tldr/pages",
)


def _roots(env: Mapping[str, str]) -> list[Path]:
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    cache = Path(env.get("XDG_CACHE_HOME") or home / ".cache")
    data = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
    roots = [cache / "tealdeer", cache / "tldr", home / ".tldr", home / ".tldrc" / "tldr"]
    roots += [data / "tldr", home / "Library" / "Caches" / "tealdeer"]
    if env.get("TEALDEER_CACHE_DIR"):
        roots.insert(0, Path(env["TEALDEER_CACHE_DIR"]))
    return [r for r in roots if r.is_dir()]


def tldr_page(name: str, env: Mapping[str, str]) -> str | None:
    """The cached tldr page for ``name`` as plain text, or None (no client, no cached page)."""
    if not _SAFE_NAME.fullmatch(name) or not any(shutil.which(c) for c in _CLIENTS):
        return None
    system = "osx" if sys.platform == "darwin" else "linux"
    for root in _roots(env):
        for pages in _PAGE_DIRS:
            for section in (system, "common"):
                page = root / pages / section / f"{name}.md"
                try:
                    text = page.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                return _plain(text)
    return None


def _plain(markdown: str) -> str:
    """The page without markdown noise, capped."""
    lines: list[str] = []
    for raw in markdown.split("\n"):
        line = raw.strip()
        if not line:
            continue
        line = line.lstrip("#> ").replace("{{", "").replace("}}", "")
        if line.startswith("`") and line.endswith("`"):
            line = "  " + line.strip("`")
        lines.append(line)
    text = "\n".join(lines)
    return text if len(text) <= _MAX_CHARS else text[:_MAX_CHARS].rstrip() + "\n[...]"
