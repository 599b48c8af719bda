"""The ``memory`` tool: durable notes the model keeps as markdown files in one directory.

An entry is named by its keywords, sorted and joined by ``_``: the keywords "python async
sockets" name ``async_python_sockets.md``. Entries whose name starts with ``fix-`` are
written by people and never changed by the tool. Appends take a file lock and replace the
file atomically, so two writers or a crash never lose or tear an entry.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from conch.storage.files import atomic_write_text
from conch.tools import caps
from conch.tools.tool import Tool, make_tool

FIXED = "fix-"
MAX_KEYWORDS = 8
MAX_KEYWORD_CHARS = 40
MAX_ENTRY_BYTES = 256 * caps.KIB
_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
_SCAN_BYTES = 64 * caps.KIB  # how much of each entry a search reads


def keywords_of(text: str) -> list[str]:
    """The keywords in ``text``, lowercased, deduplicated and sorted: ``"Python, async
    sockets"`` -> ``["async", "python", "sockets"]``. Underscores separate words, so an
    entry's name gives back its keywords."""
    return sorted({word[:MAX_KEYWORD_CHARS] for word in _WORD.findall(text.lower())})


def entry_name(keywords: list[str], fixed: bool = False) -> str:
    """The file name of the entry with these keywords (``fix-`` first for a fixed one)."""
    return (FIXED if fixed else "") + "_".join(sorted(set(keywords))) + ".md"


def _entry_keywords(path: Path) -> list[str]:
    return keywords_of(path.stem.removeprefix(FIXED))


def _entries(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.glob("*.md") if p.is_file() and not p.is_symlink())


def memory_vocabulary(directory: Path, limit: int = caps.MEMORY_KEYWORDS[0]) -> list[str]:
    """Every keyword the memory in ``directory`` uses, most used first (then alphabetical),
    at most ``limit``: what a system prompt lists so the model knows what it may load."""
    counts = Counter(word for path in _entries(directory) for word in _entry_keywords(path))
    ranked = sorted(counts, key=lambda word: (-counts[word], word))
    return ranked[: max(0, limit)]


class Memory:
    """The entries in one directory and the actions the tool offers on them."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def search(self, query: str, limit: int | None) -> str:
        """Entries ranked by how many query words are among their keywords or in their text."""
        terms = keywords_of(query)
        if not terms:
            raise ValueError("memory search: give a query with some words")
        count = _cap(limit, caps.MEMORY_SEARCH)
        scored: list[tuple[int, str, Path]] = []
        for path in _entries(self.directory):
            words = _entry_keywords(path)
            head = _read(path, _SCAN_BYTES).lower()
            score = sum(
                3 if t in words else (1 if any(t in w for w in words) else 0) for t in terms
            )
            score += sum(min(head.count(t), 3) for t in terms)
            if score:
                scored.append((-score, path.name, path))
        if not scored:
            return f"no memory entries match {query!r}"
        lines = [f"{len(scored)} entries match {query!r}, best first:"]
        for rank, (_, name, path) in enumerate(sorted(scored)[:count], 1):
            lines.append(f"{rank}. {name} ({caps.human_size(path.stat().st_size)}): {_gist(path)}")
        if len(scored) > count:
            lines.append(f"[showing {count}; limit goes up to {caps.MEMORY_SEARCH[1]}]")
        lines.append('load one with {"action": "load", "keywords": "<its keywords>"}')
        return "\n".join(lines)

    def list_entries(self, limit: int | None) -> str:
        """Entry names with their sizes, alphabetical."""
        count = _cap(limit, caps.MEMORY_LIST)
        entries = _entries(self.directory)
        if not entries:
            return "memory is empty"
        lines = [f"{len(entries)} memory entries:"]
        lines += [f"{p.name} ({caps.human_size(p.stat().st_size)})" for p in entries[:count]]
        if len(entries) > count:
            lines.append(f"[showing {count}; limit goes up to {caps.MEMORY_LIST[1]}]")
        return "\n".join(lines)

    def keywords(self, limit: int | None) -> str:
        """The vocabulary: every keyword in use, most used first."""
        words = memory_vocabulary(self.directory, _cap(limit, caps.MEMORY_KEYWORDS))
        if not words:
            return "memory is empty"
        return "keywords: " + ", ".join(words)

    def load(self, keywords: str) -> str:
        """One entry's text, found by its keywords or its file name."""
        text = keywords.strip()
        text = text[:-3] if text.lower().endswith(".md") else text
        fixed = text.lower().startswith(FIXED)
        words = keywords_of(text[len(FIXED) :] if fixed else text)
        if not words:
            raise ValueError('memory load: give keywords, like {"keywords": "python async"}')
        names = (
            [entry_name(words, fixed)] if fixed else [entry_name(words), entry_name(words, True)]
        )
        for name in names:
            path = self.directory / name
            if path.is_file() and not path.is_symlink():
                text = _read(path, caps.MEMORY_LOAD_MAX_BYTES + 1)
                return f"# {name}\n" + caps.clip_note(
                    text, caps.MEMORY_LOAD_MAX_BYTES, "the rest of this entry is not shown"
                )
        near = [p.name for p in _entries(self.directory) if set(words) & set(_entry_keywords(p))]
        hint = f"; entries with some of these keywords: {', '.join(near[:10])}" if near else ""
        raise FileNotFoundError(f"memory load: no entry {names[0]}{hint}")

    def append(self, keywords: str, content: str) -> str:
        """Add ``content`` to the entry named by ``keywords``, creating it if needed."""
        from filelock import FileLock, Timeout

        words = keywords_of(keywords)
        if not words:
            raise ValueError('memory append: give keywords, like {"keywords": "python async"}')
        if len(words) > MAX_KEYWORDS:
            raise ValueError(f"memory append: at most {MAX_KEYWORDS} keywords, not {len(words)}")
        if any(w.startswith(FIXED) for w in words):
            raise PermissionError("memory append: keywords starting 'fix-' are reserved")
        body = content.strip()
        if not body:
            raise ValueError("memory append: content is empty")
        if len(body.encode("utf-8")) > caps.MEMORY_APPEND_MAX_BYTES:
            raise ValueError(
                f"memory append: content is over {caps.human_size(caps.MEMORY_APPEND_MAX_BYTES)}"
            )
        name = entry_name(words)
        if (self.directory / entry_name(words, True)).exists():
            raise PermissionError(
                f"memory append: {entry_name(words, True)} is fixed (immutable), cannot append"
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / name
        try:
            with FileLock(self.directory / ".memory.lock", timeout=10):
                return self._append_locked(path, name, body)
        except Timeout:
            raise TimeoutError("memory append: the memory is busy; try again") from None

    def _append_locked(self, path: Path, name: str, body: str) -> str:
        if path.is_symlink():
            raise PermissionError(f"memory append: {name} is a symlink; not written")
        if not path.exists():
            atomic_write_text(path, body + "\n")
            return f'created "{name}" ({len(body.encode("utf-8")) + 1} bytes)'
        old = path.read_text(encoding="utf-8")
        new = old.rstrip("\n") + "\n\n---\n\n" + body + "\n"
        before, after = len(old.encode("utf-8")), len(new.encode("utf-8"))
        if after > MAX_ENTRY_BYTES:
            raise ValueError(
                f"memory append: {name} would pass {caps.human_size(MAX_ENTRY_BYTES)}; "
                "use more specific keywords for a new entry"
            )
        atomic_write_text(path, new)
        return f'updated "{name}" (+{after - before} B → {caps.human_size(after)} total)'


def _cap(limit: int | None, bounds: tuple[int, int]) -> int:
    return bounds[0] if limit is None else max(1, min(limit, bounds[1]))


def _read(path: Path, size: int) -> str:
    with path.open("rb") as handle:
        return handle.read(size).decode("utf-8", errors="replace")


def _gist(path: Path) -> str:
    for line in _read(path, 2048).splitlines():
        text = line.strip().lstrip("#").strip()
        if text and text != "---":
            return text[:120]
    return ""


def memory_tool(directory: Path) -> Tool:
    """The ``memory`` tool over the markdown entries in ``directory`` (created on the first
    append)."""
    memory = Memory(directory)

    def memory_(
        action: Literal["search", "list", "keywords", "append", "load"],
        query: str | None = None,
        keywords: str | None = None,
        content: str | None = None,
        limit: Annotated[int, Field(ge=1)] | None = None,
    ) -> str:
        """Your long-term memory: notes kept between conversations, each named by a few
        keywords. Search memory before answering a question of fact, and save durable new
        facts you learn (from the web, from the user) with append.

        - search: {"action": "search", "query": "python sockets timeout"}
        - load: {"action": "load", "keywords": "async python sockets"} shows one entry.
        - append: {"action": "append", "keywords": "async python sockets", "content": "..."}
          adds to that entry, or creates it. Use 2 to 4 keywords.
        - list: {"action": "list"} names the entries; keywords: {"action": "keywords"} lists
          every keyword in use.
        Entries whose name starts with "fix-" cannot be changed.
        """
        if action == "search":
            return memory.search(query or keywords or "", limit)
        if action == "list":
            return memory.list_entries(limit)
        if action == "keywords":
            return memory.keywords(limit)
        if action == "load":
            return memory.load(keywords or query or "")
        return memory.append(keywords or "", content or "")

    return make_tool(
        memory_,
        name="memory",
        trigger="Search, load and save long-term notes kept between conversations.",
        system=(
            "Knowledge loop: for a question of fact, first search memory and load what "
            "matches; when web tools are available, also search the web, even if memory had "
            "an answer; combine both, preferring the more recent and authoritative source; "
            "then save durable new facts with memory append."
        ),
    )
