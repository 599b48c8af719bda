"""The sanitizers, by their older name: ``conch.sanitize`` (in the lowest layer, so the
command pipeline and the tools can use them too)."""

from __future__ import annotations

from conch.sanitize import (
    ADDENDUM_CAP,
    APPENDIX_CAP,
    LINE_CAP,
    LINE_MARK,
    NAME_CAP,
    PARAGRAPH_MARK,
    appendix,
    name,
    one_line,
    paragraph,
    text,
)

__all__ = [
    "ADDENDUM_CAP",
    "APPENDIX_CAP",
    "LINE_CAP",
    "LINE_MARK",
    "NAME_CAP",
    "PARAGRAPH_MARK",
    "appendix",
    "name",
    "one_line",
    "paragraph",
    "text",
]
