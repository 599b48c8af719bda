"""A ``for`` loop read as its words: what the policy judges of a loop that runs in a shell.

A loop over literal words, globs and brace sequences is read with its variable replaced by
each word (``for f in *.log; do rm "$f"; done`` is judged as ``rm *.log``), so the denylist,
the sandbox root and the classifier see what the loop names (``conch.policy.shell``).

The variable may be used as it is or through the expansions a rename loop needs, with
literal patterns: a suffix or prefix taken off (``${f%.txt}``), the case changed (``${f,,}``)
and text replaced (``${f// /_}``). A literal word is read exactly. A glob is read with the
expansion applied to its text, which names the same directories as the names it matches
would (``_fits`` says when that holds). Where bash could read an expansion otherwise, it is
not followed: case changes of non-ASCII text, any expansion under shell options set in the
command; a replacement is read both as written and in any case (``nocasematch`` may come
from the environment). Any other expansion leaves the word only known at run time.

Text handling only: nothing is executed.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from conch.errors import PolicyRejection
from conch.policy.parse import (
    GLOB_CHARS,
    ParseFailure,
    expand_braces,
    literal_word,
    node_text,
    parse_tree,
)

__all__ = [
    "BINDERS",
    "MAX_READINGS",
    "MAX_WORDS",
    "descendants",
    "loop_name",
    "readings",
    "split_at_run_time",
]

# Builtins that set the variables their arguments name.
BINDERS = frozenset(
    {"read", "readarray", "mapfile", "getopts", "unset", "declare", "typeset", "local"}
    | {"export", "readonly", "printf", "let", "eval"}
)

# The most readings of one command (the loops' words multiplied), and the most words of one
# loop read one by one; a brace sequence longer than that is read by its first and last
# words, which have the same form as those between.
MAX_READINGS = 32


MAX_WORDS = 16


@dataclass(frozen=True, slots=True)
class _Value:
    """One word a loop variable takes: its text and whether it is a glob (its values are the
    names the pattern matches)."""

    text: str
    glob: bool


@dataclass(frozen=True, slots=True)
class _Edit:
    """Where a loop variable is used: the bytes to replace and how the value goes there."""

    start: int
    end: int
    quoted: bool  # inside double quotes: one word, no splitting
    whole: bool  # the whole word (a leading ``~`` of the value still means home)
    # The expansion's operator and its literal operands: ``${name%.txt}`` is ``("%", ".txt")``
    # (also ``%%``, ``#``, ``##``), ``${name,,}`` is ``(",,",)`` (also ``^^``, ``,``, ``^``),
    # ``${name// /_}`` is ``("//", " ", "_")`` (also ``/``, ``/#``, ``/%``).
    op: tuple[str, ...] | None = None


def readings(command: str) -> list[str]:
    """``command`` with each ``for`` loop's variable replaced by the words it takes, one
    reading per combination; empty when no loop can be read so (its words are only known at
    run time, the variable is set elsewhere, or there would be too many readings)."""
    if "for" not in command:
        return []
    try:
        root = parse_tree(command)
    except ParseFailure:
        return []
    if root.has_error:
        return []
    nodes = list(descendants(root))
    loops = [n for n in nodes if n.type == "for_statement"]
    names = [loop_name(loop) for loop in loops]
    bound: list[tuple[list[_Value], list[_Edit]]] = []
    for loop, name in zip(loops, names, strict=True):
        if name is None or names.count(name) > 1 or _set_elsewhere(name, loop, nodes):
            continue
        values = _values(loop.children_by_field_name("value"))
        edits = _uses(name, loop, nodes)
        if values is None or edits is None or not edits:
            continue
        if _OPTIONS.search(command) and any(e.op is not None for e in edits):
            continue  # shell options may change what the expansions do
        if not all(_fits(e.op, v, command) for v in values for e in edits):
            continue  # its words stay only known at run time
        bound.append((values, edits))
    total = 1
    for values, _ in bound:
        total *= len(values)
    if not bound or total > MAX_READINGS:
        return []
    source = command.encode("utf-8")
    # bash's nocasematch option (set by shopt, or BASHOPTS in the environment) makes a
    # replacement's pattern match in any case: each reading is made both ways.
    replacing = any(e.op is not None and e.op[0].startswith("/") for _, es in bound for e in es)
    found: list[str] = []
    for combination in itertools.product(*(values for values, _ in bound)):
        replaced = [
            (edit, value)
            for value, (_, edits) in zip(combination, bound, strict=True)
            for edit in edits
        ]
        for nocase in (False, True) if replacing else (False,):
            text = source
            for edit, value in sorted(replaced, key=lambda r: -r[0].start):
                word = _render(value, edit, nocase).encode("utf-8")
                text = text[: edit.start] + word + text[edit.end :]
            found.append(text.decode("utf-8"))
    return list(dict.fromkeys(found))


def split_at_run_time(command: str) -> bool:
    """Whether a loop of ``command`` over a glob uses its variable unquoted: a name the glob
    matches splits at its blanks into words the reading does not show (``for f in *.log; do
    rm $f; done`` removes ``a`` and ``b.log`` for ``a b.log``)."""
    if "for" not in command:
        return False
    try:
        root = parse_tree(command)
    except ParseFailure:
        return False
    nodes = list(descendants(root))
    for loop in (n for n in nodes if n.type == "for_statement"):
        name = loop_name(loop)
        values = _values(loop.children_by_field_name("value"))
        if name is None or values is None or not any(v.glob for v in values):
            continue
        if not all(edit.quoted for edit in _uses(name, loop, nodes) or ()):
            return True
    return False


def descendants(node: Node) -> Iterator[Node]:
    yield node
    for child in node.children:
        yield from descendants(child)


def loop_name(loop: Node) -> str | None:
    variable = loop.child_by_field_name("variable")
    return None if variable is None else node_text(variable)


def _set_elsewhere(name: str, loop: Node, nodes: list[Node]) -> bool:
    """Whether anything but ``loop`` may set ``name``: an assignment, arithmetic, a builtin
    that binds the names it is given (``read f``), or a use before the loop."""
    own = loop.child_by_field_name("variable")
    for node in nodes:
        if node.type == "variable_name" and node_text(node) == name:
            parent = node.parent
            if own is not None and node.id == own.id:
                continue
            if parent is not None and parent.type in ("simple_expansion", "expansion"):
                if node.start_byte < loop.start_byte:
                    return True
                continue
            return True
        if node.type == "command":
            head = node.child_by_field_name("name")
            if head is None or node_text(head) not in BINDERS:
                continue
            for arg in node.named_children[1:]:
                text = node_text(arg).strip("'\"")
                if text == name or text.startswith((f"{name}=", f"{name}[", f"{name}+=")):
                    return True
    return False


def _values(nodes: list[Node]) -> list[_Value] | None:
    """The words a loop over ``nodes`` takes, or None when one is only known at run time."""
    found: list[_Value] = []
    for node in nodes:
        raw = node_text(node)
        if node.type == "brace_expression":
            sequence = expand_braces(raw)
            if len(sequence) > MAX_WORDS:
                sequence = [sequence[0], sequence[-1]]
            found += [_Value(text, False) for text in sequence]
            continue
        try:
            text, glob = literal_word(node, first=True)
        except PolicyRejection:
            return None
        found.append(_Value(text, glob))
    if not found or len(found) > MAX_WORDS * 2:
        return None
    return found


# Shell options that change how patterns match and globs expand (nocasematch, dotglob...).
_OPTIONS = re.compile(r"\bshopt\b|BASHOPTS|\bset\s+[-+]o\b")
_NAME = r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
# ``${name%.txt}`` and its kin with a literal pattern: a suffix or prefix taken off the value.
_TRIM = re.compile(r"\$\{" + _NAME + r"(?P<op>%%|%|##|#)(?P<pattern>[\w./+-]+)\}")
# ``${name,,}`` and its kin: the case of the value, or of its first letter, changed.
_CASE = re.compile(r"\$\{" + _NAME + r"(?P<op>,,|\^\^|,|\^)\}")
# ``${name// /_}`` and its kin with a literal pattern and replacement.
_SUB = re.compile(
    r"\$\{" + _NAME + r"(?P<op>//|/#|/%|/)(?P<pattern>[\w .+-]+)/(?P<replacement>[\w .+-]*)\}"
)


def _operator(text: str, name: str) -> tuple[str, ...] | None:
    """The operator and operands of the expansion ``text`` of ``name``, or None when it is
    not one the loop can be read through."""
    for pattern in (_TRIM, _CASE, _SUB):
        found = pattern.fullmatch(text)
        if found is not None and found["name"] == name:
            return tuple(v for k, v in found.groupdict().items() if k != "name")
    return None


def _uses(name: str, loop: Node, nodes: list[Node]) -> list[_Edit] | None:
    """Where ``$name``, ``${name}`` and the expansions the module names are used after the
    start of ``loop``; any other operator leaves the word only known at run time."""
    edits: list[_Edit] = []
    for node in nodes:
        if node.type not in ("simple_expansion", "expansion") or node.start_byte < loop.start_byte:
            continue
        names = [c for c in node.named_children if c.type == "variable_name"]
        if not names or node_text(names[0]) != name:
            continue
        op: tuple[str, ...] | None = None
        if node.type == "expansion" and node_text(node) != f"${{{name}}}":
            op = _operator(node_text(node), name)
            if op is None:
                continue  # stays a word only known at run time
        parent = node.parent
        quoted = parent is not None and parent.type == "string"
        whole = _alone(node) if not quoted else parent is not None and _alone_in_string(parent)
        if quoted and whole and parent is not None:
            edits.append(_Edit(parent.start_byte, parent.end_byte, True, True, op))
        else:
            edits.append(_Edit(node.start_byte, node.end_byte, quoted, whole, op))
    return edits


def _fits(op: tuple[str, ...] | None, value: _Value, command: str) -> bool:
    """Whether the reading of the expansion ``op`` of ``value`` in ``command`` names what
    bash would.

    Case is changed only in ASCII text (glibc's and Python's case maps differ elsewhere:
    bash lowers ``İ`` to ``i``, Python to ``i`` and a combining dot). For a glob, the
    expansion applied to its text must name the directories it would name applied to each
    name the glob matches: a replacement holds no ``/``, is not dots alone and, unless the
    command ends its options with ``--``, does not start with ``-`` (a name made ``..`` or an
    option); a first-match replacement's pattern, where the glob's text holds it, lies before
    the first wildcard, unless every wildcard is in the last path part (else a directory's
    own text may match first). A prefix or suffix taken off a glob is followed as before:
    ``${f#a}`` of a file named ``a..`` is ``..``, a move one directory up, which a contained
    run keeps inside the workspace and a question shows as written."""
    if op is None:
        return True
    if op[0] in (",,", "^^", ",", "^"):
        if not value.text.isascii():
            return False
        if not value.glob:
            return True
        return "[" not in value.text and (op[0] in (",,", "^^") or value.text[:1] not in GLOB_CHARS)
    if not value.glob:
        return True
    text = value.text
    if op[0] in ("#", "##", "%", "%%"):
        # A pattern that spans a directory is followed only where the glob's own text holds
        # it at that end (``${f#photos/}`` of ``photos/*.jpg``), so every name loses it.
        if "/" not in op[1]:
            return True
        return text.startswith(op[1]) if op[0].startswith("#") else text.endswith(op[1])
    pattern, replacement = op[1], op[2]
    if "/" in pattern + replacement or replacement.strip(".") == "":
        return False
    if replacement.startswith("-") and " -- " not in command:
        return False
    if op[0] == "/" and pattern.lower() in text.lower():
        wild = min((text.index(c) for c in GLOB_CHARS if c in text), default=len(text))
        in_name = "/" not in text[wild:]  # every wildcard in the last path part
        return in_name or text.lower().index(pattern.lower()) + len(pattern) <= wild
    return True


def _changed(value: _Value, op: tuple[str, ...] | None, nocase: bool = False) -> _Value:
    """``value`` through the expansion ``op``, as bash would change it; a glob keeps its text
    where a suffix or prefix to take off may or may not lie in what it matches (``${f%.txt}``
    of ``*`` reads as ``*``: names in the same place)."""
    if op is None:
        return value
    text = value.text
    match op:
        case ("%" | "%%", pattern) if text.endswith(pattern):
            text = text[: -len(pattern)]
        case ("#" | "##", pattern) if text.startswith(pattern):
            text = text[len(pattern) :]
        case (",,",):
            text = text.lower()
        case ("^^",):
            text = text.upper()
        case (",",):
            text = text[:1].lower() + text[1:]
        case ("^",):
            text = text[:1].upper() + text[1:]
        case ("/" | "//" | "/#" | "/%", pattern, replacement):
            text = _replaced(text, op[0], pattern, replacement, nocase)
    return _Value(text, value.glob)


def _replaced(text: str, op: str, pattern: str, replacement: str, nocase: bool) -> str:
    """``text`` with the literal ``pattern`` replaced as ``${f<op>pattern/replacement}``
    would: the first match, every match, a prefix or a suffix; in any case with ``nocase``."""
    found = re.escape(pattern)
    found = {"/#": f"^{found}", "/%": f"{found}$"}.get(op, found)
    return re.sub(
        found,
        lambda _: replacement,
        text,
        count=0 if op == "//" else 1,
        flags=re.IGNORECASE if nocase else 0,
    )


def _alone(node: Node) -> bool:
    parent = node.parent
    return parent is None or parent.type not in ("concatenation", "string", "heredoc_body")


def _alone_in_string(string: Node) -> bool:
    named = [c for c in string.named_children if c.type != "string_content" or node_text(c)]
    return len(named) == 1 and _alone(string)


def _render(value: _Value, edit: _Edit, nocase: bool = False) -> str:
    """``value`` written where ``edit`` says, as shell text that reads back the same."""
    value = _changed(value, edit.op, nocase)
    if edit.quoted:
        word = _word(value.text, value.glob, edit.whole)
        return word if edit.whole else f'"{word}"'
    # Unquoted, the value splits at blanks and each field is a glob pattern.
    fields = value.text.split()
    return " ".join(_word(f, True, edit.whole and i == 0) for i, f in enumerate(fields))


def _word(text: str, glob: bool, whole: bool) -> str:
    head = ""
    if whole:
        text = _home_folded(text)
        if text == "~" or text.startswith("~/"):
            head, text = text[:2], text[2:]
    if not glob:
        return head + (shlex.quote(text) if text or not head else "")
    pieces = re.split(r"([*?\[\]])", text)
    return head + "".join(p if p in GLOB_CHARS or p == "]" else shlex.quote(p) for p in pieces if p)


def _home_folded(text: str) -> str:
    home = os.path.expanduser("~").rstrip("/")
    if home and home != "~" and (text == home or text.startswith(home + "/")):
        return "~" + text[len(home) :]
    return text
