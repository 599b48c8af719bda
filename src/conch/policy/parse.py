"""Shell grammar access: tree-sitter-bash parsing and shell quote removal.

Everything here is pure text handling; nothing is executed or looked up.
"""

from __future__ import annotations

import os
import re
import unicodedata

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from conch.errors import PolicyRejection

_LANGUAGE = Language(tree_sitter_bash.language())
_PARSER = Parser(_LANGUAGE)

GLOB_CHARS = frozenset("*?[")
_UNUSABLE = frozenset({"Cn", "Co", "Cs"})
# Control characters other than tab and newline (C0, DEL, C1), the line and paragraph
# separators, and the invisible format characters: zero-width spaces and joiners, bidi marks,
# embeddings, overrides and isolates, the byte order mark, tag characters.
_HIDDEN = re.compile(
    "[\x01-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
# Unquoted `{a,b}` or `{1..3}` is brace expansion: one word becomes several.
_BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")


class ParseFailure(Exception):
    """The text is not something the shell grammar (as we understand it) accepts."""


def node_text(node: Node) -> str:
    """The source text of ``node``."""
    raw = node.text or b""
    return raw.decode("utf-8", "replace")


def parse_tree(source: str) -> Node:
    """Parse ``source`` and return the root node; tree-sitter never raises, so callers check
    ``has_error`` themselves."""
    if "\x00" in source:
        raise ParseFailure("the command contains a NUL byte")
    # tree-sitter-bash 0.25 segfaults on some unassigned and private-use code points (e.g.
    # "{\U0010d136"); no real command contains them, and lone surrogates cannot reach a shell.
    if any(ord(ch) > 0x7F and unicodedata.category(ch) in _UNUSABLE for ch in source):
        raise ParseFailure("the command contains unassigned or private-use characters")
    hidden = _HIDDEN.search(source)
    if hidden is not None:
        # A carriage return, an escape sequence or a bidi override changes what the user
        # sees when asked about the command; tree-sitter also reads some of them as blanks
        # where bash does not (vertical tab, form feed).
        raise ParseFailure(
            f"the command contains the invisible or control character U+{ord(hidden.group()):04X}"
        )
    return _PARSER.parse(source.encode("utf-8")).root_node


def unquoted_word(text: str) -> tuple[str, bool, bool]:
    """Quote removal for an unquoted word: ``(value, has_glob, has_brace)``.

    A backslash makes the next character literal, which is how ``\\rm`` names ``rm`` and
    ``\\*`` stops being a glob.
    """
    out: list[str] = []
    glob = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":  # backslash-newline is a line continuation
                out.append(text[i + 1])
            i += 2
            continue
        if ch in GLOB_CHARS:
            glob = True
        out.append(ch)
        i += 1
    return "".join(out), glob, bool(_BRACE.search(text))


def double_quoted(text: str) -> str:
    """Quote removal for the literal content of a double-quoted string."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_ANSI_SIMPLE = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "e": "\x1b",
    "E": "\x1b",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def ansi_c(text: str) -> str:
    """Decode the body of a ``$'...'`` string, so ``$'\\x72m'`` is seen as ``rm``."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "\\" or i + 1 >= len(text):
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
        elif nxt in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[nxt]
            digits = re.match(rf"[0-9a-fA-F]{{1,{width}}}", text[i + 2 :])
            if digits is None:
                out.append("\\" + nxt)
                i += 2
            else:
                out.append(chr(min(int(digits.group(), 16), 0x10FFFF)))
                i += 2 + len(digits.group())
        elif nxt in "01234567":
            digits_o = re.match(r"[0-7]{1,3}", text[i + 1 :])
            assert digits_o is not None
            out.append(chr(int(digits_o.group(), 8)))
            i += 1 + len(digits_o.group())
        elif nxt == "c" and i + 2 < len(text):
            out.append(chr(ord(text[i + 2]) & 0x1F))
            i += 3
        else:
            out.append("\\" + nxt)
            i += 2
    return "".join(out)


def expand_braces(text: str, limit: int = 256) -> list[str]:
    """Brace-expand ``text`` the way bash would for ``{a,b}`` lists (ranges stay as they are)."""
    results = [text]
    for _ in range(8):
        expanded: list[str] = []
        changed = False
        for item in results:
            match = re.search(r"\{([^{}]*,[^{}]*)\}", item)
            if match is None:
                expanded.append(item)
                continue
            changed = True
            head, tail = item[: match.start()], item[match.end() :]
            expanded.extend(head + part + tail for part in match.group(1).split(","))
        results = expanded[:limit]
        if not changed:
            break
    return results


def literal_word(node: Node, first: bool) -> tuple[str, bool]:
    """The value of a word that needs no expansion, or PolicyRejection."""
    kind = node.type
    raw = node_text(node)
    if kind in ("word", "number"):
        value, glob, brace = unquoted_word(raw)
        if brace:
            raise PolicyRejection(f"Brace expansion in {raw!r} needs a shell.")
        if first and (value == "~" or value.startswith("~/")):
            value = os.path.expanduser("~") + value[1:]
        return value, glob
    if kind == "raw_string":
        return raw[1:-1], False
    if kind == "ansi_c_string":
        return ansi_c(raw[2:-1]), False
    if kind == "string" and all(c.type == "string_content" for c in node.named_children):
        return double_quoted(raw[1:-1]), False
    if kind == "concatenation":
        unquoted = "".join(node_text(c) if c.type == "word" else "\0" for c in node.named_children)
        if _BRACE.search(unquoted):
            raise PolicyRejection(f"Brace expansion in {raw!r} needs a shell.")
        parts = [literal_word(c, first and i == 0) for i, c in enumerate(node.named_children)]
        return "".join(p[0] for p in parts), any(p[1] for p in parts)
    raise PolicyRejection(f"The word {raw!r} expands at run time, which needs a shell.")
