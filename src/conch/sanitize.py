"""The two sanitizers every text passes through before it is spliced into a system prompt.

``one_line`` is for items that must stay one line (a tool's name, its short trigger in the
tools catalogue): every control character goes, newlines and tabs included, whitespace runs
collapse to one space, and the text is capped (64 characters for names, 200 for one-line
texts). ``paragraph`` is for blocks (a tool's system addendum, the operator's appendix):
newlines and tabs stay, terminal escape sequences, DEL and the other control characters go,
and the block is capped in UTF-8 bytes (8 KiB per addendum, 16 KiB for the operator's
appendix). A capped text ends with a mark saying so, and stays within its cap.

``text`` is for what the model reads of the outside world: a tool's result (a file, a web
page, a command's output, an MCP server's answer), a ``--peek`` sample and piped input. It
keeps newlines and tabs and drops the same escape sequences and characters, with no cap (the
caller caps). The sanitizers are the seatbelt for sources that are less trusted (tools
described by an MCP server, files, pages) and keep escape sequences out of a terminal that
shows the prompt or a tool's result. The module sits in the lowest layer so every layer can
use it.
"""

from __future__ import annotations

import re

NAME_CAP = 64
LINE_CAP = 200
ADDENDUM_CAP = 8 * 1024
APPENDIX_CAP = 16 * 1024

LINE_MARK = "…"
PARAGRAPH_MARK = "\n[… truncated]"

# Escape sequences, removed whole so no stray "[31m" is left behind: CSI (colours, cursor
# movement), OSC (window titles, hyperlinks), DCS/PM/APC strings, character set selection,
# and any other ESC sequence.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[P^_X][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[()*+][0-9A-Za-z]"
    r"|\x1b[ -/]*[0-~]?"
    # The 8-bit forms: C1 CSI, and C1 OSC ended by BEL, ST or C1 ST.
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|\x9d[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
)
# Invisible and bidirectional format characters: zero-width spaces and joiners, the LTR/RTL
# marks (U+200B-U+200F), embeddings and overrides (U+202A-U+202E), word joiner and isolates
# (U+2060-U+2069), the Arabic letter mark, the byte order mark and the tag characters. They
# hide or reorder text, so what a reader sees is not what the model is given.
_INVISIBLE = "\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\U000e0000-\U000e007f"
_HIDDEN = re.compile(f"[{_INVISIBLE}]")
# C0 controls, DEL, C1 controls and the Unicode line and paragraph separators.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# What a paragraph keeps of those: newline and tab.
_PARAGRAPH_CONTROLS = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")


def one_line(text: str, cap: int = LINE_CAP) -> str:
    """``text`` as one line: control characters become spaces, whitespace runs one space,
    at most ``cap`` characters (the last one ``…`` when it was cut)."""
    flat = " ".join(_CONTROLS.sub(" ", _HIDDEN.sub("", _ESCAPES.sub("", text))).split())
    if len(flat) <= cap:
        return flat
    return flat[: max(cap - len(LINE_MARK), 0)].rstrip() + LINE_MARK


def name(text: str) -> str:
    """A tool name as one line of at most ``NAME_CAP`` characters."""
    return one_line(text, NAME_CAP)


def paragraph(text: str, cap: int = ADDENDUM_CAP) -> str:
    """``text`` as a block: newlines and tabs kept, escape sequences, DEL and other control
    characters removed, surrounding blank lines trimmed, at most ``cap`` UTF-8 bytes (ending
    with a truncation mark when it was cut)."""
    clean = text.replace("\r\n", "\n").replace("\u2028", "\n").replace("\u2029", "\n\n")
    clean = _PARAGRAPH_CONTROLS.sub("", _ESCAPES.sub("", clean)).strip("\n")
    data = clean.encode("utf-8")
    if len(data) <= cap:
        return clean
    room = max(cap - len(PARAGRAPH_MARK.encode("utf-8")), 0)
    kept = data[:room].decode("utf-8", errors="ignore").rstrip()
    return kept + PARAGRAPH_MARK


def text(value: str) -> str:
    """``value`` with escape sequences, invisible and bidirectional characters and control
    characters removed (newlines and tabs kept, ``\\r\\n`` made ``\\n``); not capped."""
    clean = value.replace("\r\n", "\n").replace("\u2028", "\n").replace("\u2029", "\n\n")
    return _PARAGRAPH_CONTROLS.sub("", _ESCAPES.sub("", clean))


def appendix(text: str) -> str:
    """The operator's appendix: a paragraph of at most ``APPENDIX_CAP`` bytes."""
    return paragraph(text, APPENDIX_CAP)
