"""This machine's programs, found by what their manual pages say they do.

``man -k .`` lists the one-line description (the whatis line) of every manual page. The
programs on ``PATH`` among them form an index that is right for this machine by
construction: "display a tree of processes" finds ``pstree`` only where it is installed. The
index is built once and cached on disk (keyed by ``PATH``), and searched with BM25 over each
program's name and description (``conch.command.examples.rank``).

With ``generation.program_hints`` above 0, the best matches are named at the end of the
system prompt; it is off by default (see the README's measured table).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import time
from pathlib import Path

from conch.command.examples import rank
from conch.host.process import run_process
from conch.storage.files import atomic_write_text

HINTS_PROMPT = "Programs on this machine whose manual pages match the request:\n"
CACHE_FILE = "whatis.json"
CACHE_TTL_S = 7 * 24 * 3600
_TIMEOUT_S = 10.0
# What is kept of ``man -k .``'s listing (a few hundred kilobytes on a full system).
_MAX_LISTING = 16 * 1024 * 1024
# "pstree (1)           - display a tree of processes"; sections 1 (user commands), 6 and 8.
_LINE = re.compile(r"^(\S+) \(([168])[^)]*\)\s+- (.+)$")
_PLAIN = re.compile(r"[a-z0-9][a-z0-9_+-]*")
# Request words that name a program by accident ("show it as a tree" is not about `as`).
_IGNORE = frozenset({"as"})


def whatis_index(search_path: str, cache_dir: Path | None = None) -> dict[str, str]:
    """Program name -> its whatis description, for the programs on ``search_path``.

    Empty when ``man`` is missing or fails. Cached in ``cache_dir`` for a week.
    """
    key = hashlib.sha256(search_path.encode()).hexdigest()[:16]
    cache = cache_dir / CACHE_FILE if cache_dir is not None else None
    if cache is not None:
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            data = json.loads(cache.read_text(encoding="utf-8"))
            if data["key"] == key and time.time() - float(data["built"]) < CACHE_TTL_S:
                return {str(k): str(v) for k, v in data["programs"].items()}
    programs = _build(search_path)
    if cache is not None and programs:
        payload = {"key": key, "built": time.time(), "programs": programs}
        with contextlib.suppress(OSError):
            atomic_write_text(cache, json.dumps(payload, sort_keys=True) + "\n")
    return programs


def _build(search_path: str) -> dict[str, str]:
    man = shutil.which("man", path=search_path)
    if man is None:
        return {}
    try:
        done = run_process(
            [man, "-k", "."],
            env={**os.environ, "LC_ALL": "C", "MANPAGER": "cat"},
            timeout=_TIMEOUT_S,
            max_stdout=_MAX_LISTING,
            stderr="discard",
        )
    except OSError:
        return {}
    if done.timed_out:
        return {}
    programs: dict[str, str] = {}
    seen: set[str] = set()
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        name, _, description = match.groups()
        description = description.strip().rstrip(".")
        # One name per description: pstree, not also pstree.x11 or a cross-tool alias.
        if name in programs or description in seen or not _PLAIN.fullmatch(name):
            continue
        if shutil.which(name, path=search_path):
            programs[name] = description
            seen.add(description)
    return programs


def program_hints(
    request: str, count: int, search_path: str | None = None, cache_dir: Path | None = None
) -> str:
    """The ``count`` programs whose name and description best match ``request``, one per
    line as ``name - description``, under ``HINTS_PROMPT``; empty when none match."""
    if count <= 0:
        return ""
    programs = whatis_index(search_path or os.environ.get("PATH", os.defpath), cache_dir)
    names = list(programs)
    best = rank([f"{name} {programs[name]}" for name in names], request, count, _IGNORE)
    if not best:
        return ""
    return HINTS_PROMPT + "\n".join(f"{names[i]} - {programs[names[i]]}" for i in best)
