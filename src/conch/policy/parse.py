"""Shell grammar access: tree-sitter-bash parsing and shell quote removal.

Everything here is pure text handling; nothing is executed or looked up.
"""

from __future__ import annotations

import itertools
import os
import re
import unicodedata
from collections.abc import Iterator, Mapping

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
# The most words brace expansion may make of one command line.
MAX_BRACE_WORDS = 1000
# A character of a word and whether it is unquoted literal text, where braces, globs and a
# leading tilde mean something; quoted text and the values of variables never do.
_Char = tuple[str, bool]


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


def expand_braces(text: str, limit: int = MAX_BRACE_WORDS) -> list[str]:
    """Brace-expand ``text`` the way bash does (``{a,b}`` lists, nested ones, and ``{1..5}``,
    ``{a..e}``, ``{01..10..3}`` sequences), every character read as unquoted; the first
    ``limit`` words."""
    chars = [(ch, True) for ch in text]
    return ["".join(c for c, _ in item) for item in itertools.islice(_braces(chars), limit)]


def _braces(chars: list[_Char]) -> Iterator[list[_Char]]:
    """The words brace expansion makes of ``chars``, lazily: only unquoted (active) braces
    and commas count; what a sequence makes is not expanded again."""
    start = 0
    while True:
        opening = next(
            (i for i in range(start, len(chars)) if chars[i] == ("{", True)),
            None,
        )
        if opening is None:
            yield chars
            return
        closing, commas = _closing(chars, opening)
        if closing is not None:
            head, body, tail = chars[:opening], chars[opening + 1 : closing], chars[closing + 1 :]
            if commas:
                bounds = [opening, *commas, closing]
                parts = [chars[a + 1 : b] for a, b in itertools.pairwise(bounds)]
                for part in parts:
                    for alternative in _braces(part):
                        for rest in _braces(tail):
                            yield head + alternative + rest
                return
            items = _sequence(body)
            if items is not None:
                for item in items:
                    for rest in _braces(tail):
                        yield head + [(c, False) for c in item] + rest
                return
        start = opening + 1


def _closing(chars: list[_Char], opening: int) -> tuple[int | None, list[int]]:
    """The index of the brace that closes ``chars[opening]`` and of the commas at its level."""
    depth = 0
    commas: list[int] = []
    for i in range(opening, len(chars)):
        ch, active = chars[i]
        if not active:
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i, commas
        elif ch == "," and depth == 1:
            commas.append(i)
    return None, []


_NUMBERS = re.compile(r"([-+]?\d+)\.\.([-+]?\d+)(?:\.\.([-+]?\d+))?")
_LETTERS = re.compile(r"([A-Za-z])\.\.([A-Za-z])(?:\.\.([-+]?\d+))?")


def _sequence(body: list[_Char]) -> Iterator[str] | None:
    """The words of a ``{x..y[..step]}`` sequence, or None when ``body`` is not one."""
    if not all(active for _, active in body):
        return None
    text = "".join(c for c, _ in body)
    numbers = _NUMBERS.fullmatch(text)
    letters = None if numbers else _LETTERS.fullmatch(text)
    match = numbers or letters
    if match is None:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text)) if step_text else 1
    if numbers:
        a, b = int(first), int(last)
        padded = any(re.match(r"[-+]?0\d", t) for t in (first, last))
        width = max(len(first), len(last)) if padded else 0
        values = range(a, b + 1, step or 1) if a <= b else range(a, b - 1, -(step or 1))
        return (f"{v:0{width}d}" for v in values)
    a, b = ord(first), ord(last)
    values = range(a, b + 1, step or 1) if a <= b else range(a, b - 1, -(step or 1))
    return (chr(v) for v in values)


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


# Variables the shell sets itself: a shell would not take them from the environment.
SHELL_VARIABLES = frozenset(
    {"RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID", "GROUPS"}
    | {"OLDPWD", "SHLVL", "IFS", "HISTCMD", "FUNCNAME", "EPOCHSECONDS", "EPOCHREALTIME"}
    | {"BASH", "BASHOPTS", "BASH_VERSION", "BASH_SOURCE", "BASH_LINENO", "PIPESTATUS", "REPLY"}
    | {"OPTARG", "OPTIND", "SHELLOPTS"}
)
_SIMPLE_VARIABLE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SPLITTING = frozenset(" \t\n")


class Expander:
    """The expansions of a command line that need no shell: ``$NAME`` and ``${NAME}`` from
    ``environ`` (``$PWD`` is ``pwd``, unknown when None), brace expansion, ``~`` and ``~/``.

    ``words`` gives the words one word node becomes, each as ``(text, glob)``, or raises
    PolicyRejection saying what needs a shell: a variable that is unset (or not passed to
    commands), one the shell sets itself, special parameters (``$?``, ``$1``, ``$@``),
    ``${X:-default}`` and other operators, an unquoted value that word splitting or globbing
    would change, substitutions, and brace expansion beyond ``MAX_BRACE_WORDS`` words for the
    whole command line. Single quotes keep ``$`` literal; double quotes make a value one word
    whatever it holds.
    """

    def __init__(self, environ: Mapping[str, str], pwd: str | None) -> None:
        self.environ = environ
        self.pwd = pwd
        self.made = 0  # the words brace expansion made so far

    def words(self, node: Node) -> list[tuple[str, bool]]:
        """The words ``node`` becomes, in order; none for an unquoted empty value."""
        chars, quoted = self._chars(node)
        items = list(itertools.islice(_braces(chars), MAX_BRACE_WORDS + 1))
        self.made += len(items) if len(items) > 1 else 0
        if self.made > MAX_BRACE_WORDS:
            raise PolicyRejection(
                f"Brace expansion making more than {MAX_BRACE_WORDS} words "
                f"({node_text(node)[:40]!r})"
            )
        found: list[tuple[str, bool]] = []
        for item in items:
            text = "".join(c for c, _ in item)
            if not text and not quoted:
                continue  # `ls $EMPTY` is `ls`
            if item[:1] == [("~", True)] and (len(item) == 1 or item[1][0] == "/"):
                text = os.path.expanduser("~") + text[1:]
            found.append((text, any(active and c in GLOB_CHARS for c, active in item)))
        return found

    def _chars(self, node: Node) -> tuple[list[_Char], bool]:
        """The characters of ``node`` and whether any part of it was quoted."""
        kind = node.type
        raw = node_text(node)
        if kind in ("word", "number", "brace_expression"):
            return _unquoted_chars(raw), False
        if kind == "raw_string":
            return [(c, False) for c in raw[1:-1]], True
        if kind == "ansi_c_string":
            return [(c, False) for c in ansi_c(raw[2:-1])], True
        if kind == "string":
            return [(c, False) for c in self._string(node)], True
        if kind in ("simple_expansion", "expansion"):
            value = self._value(node)
            if _SPLITTING & set(value):
                raise PolicyRejection(
                    f"The value of {raw} has blanks that a shell would split into words "
                    f'(quote it: "{raw}")'
                )
            if GLOB_CHARS & set(value):
                raise PolicyRejection(
                    f"The value of {raw} has characters a shell would expand as a pattern "
                    f'(quote it: "{raw}")'
                )
            return [(c, False) for c in value], False
        if kind == "concatenation":
            chars: list[_Char] = []
            quoted = False
            data = node.text or b""
            at = node.start_byte
            for child in node.named_children:
                gap = data[at - node.start_byte : child.start_byte - node.start_byte]
                chars += _unquoted_chars(gap.decode("utf-8", "replace"))
                part, part_quoted = self._chars(child)
                chars += part
                quoted = quoted or part_quoted
                at = child.end_byte
            chars += _unquoted_chars(data[at - node.start_byte :].decode("utf-8", "replace"))
            return chars, quoted
        raise PolicyRejection(f"The word {raw!r} expands at run time, which needs a shell.")

    def _string(self, node: Node) -> str:
        """The value of a double-quoted string: its text, and the variables in it."""
        data = node.text or b""
        out: list[str] = []
        at = node.start_byte + 1  # after the opening quote
        for child in node.named_children:
            if child.type not in ("string_content", "simple_expansion", "expansion"):
                raise PolicyRejection(
                    f"The word {node_text(node)!r} expands at run time, which needs a shell."
                )
            gap = data[at - node.start_byte : child.start_byte - node.start_byte]
            out.append(double_quoted(gap.decode("utf-8", "replace")))
            if child.type == "string_content":
                out.append(double_quoted(node_text(child)))
            else:
                out.append(self._value(child))
            at = child.end_byte
        out.append(double_quoted(data[at - node.start_byte : -1].decode("utf-8", "replace")))
        return "".join(out)

    def _value(self, node: Node) -> str:
        raw = node_text(node)
        match = _SIMPLE_VARIABLE.fullmatch(raw)
        if match is None:
            raise PolicyRejection(f"The expansion {raw!r} needs a shell.")
        name = match.group(1) or match.group(2)
        if name == "PWD":
            if self.pwd is None:
                raise PolicyRejection(
                    "$PWD after a 'cd' (or with no working directory) needs a shell."
                )
            return self.pwd
        if name in SHELL_VARIABLES or name.startswith("BASH_"):
            raise PolicyRejection(f"${name} is set by a shell, which needs one.")
        value = self.environ.get(name)
        if value is None:
            raise PolicyRejection(
                f"${name} is not set, or not passed to commands (execution.pass_env)."
            )
        return value


def _unquoted_chars(text: str) -> list[_Char]:
    """Quote removal for unquoted text, keeping which characters a backslash made literal."""
    out: list[_Char] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":  # backslash-newline is a line continuation
                out.append((text[i + 1], False))
            i += 2
            continue
        out.append((ch, True))
        i += 1
    return out
