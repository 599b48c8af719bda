"""Data bash evaluates as code: array subscripts, arithmetic, prompt and indirect expansion.

Bash evaluates a subscript where it takes a variable name (``test -v``, ``printf -v``, ``read``)
and arithmetic where it wants a number (``(( ))``, ``let``, ``[[ a -gt b ]]``, ``${x:offset}``,
``${a[i]}``, ``declare -i``...); a ``$(...)`` there runs, as in ``compgen -W``, ``${x@P}``,
``${!x}``. Literal code there, or a value only known at run time (set by ``read``, ``mapfile``,
a substitution, a loop over one or over file names; a substitution that may print more than
numbers), makes the command ``unknown``, refused in safe mode like ``eval "$x"``; the denylist
judges what of that code the command holds. Text handling only: nothing is executed.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from conch.errors import PolicyRejection
from conch.policy.commands import analyse
from conch.policy.denylist import catastrophes
from conch.policy.loops import loop_name
from conch.policy.model import Analysis
from conch.policy.parse import ParseFailure, literal_word, node_text, parse_tree
from conch.policy.wrappers import SHELLS, WRAPPERS, unwrap

__all__ = ["Evaluation", "evaluated"]

_CODE = re.compile(r"\$\(|`|\$\{")
# Text without any of these has nowhere bash evaluates a word.
_EVALUATING = re.compile(
    r"\(\(|\$\[|\[|\$\{|\b(?:let|test|printf|read|mapfile|readarray|unset|compgen|complete"
    r"|trap|declare|typeset|local|export|readonly)\b"
)
_IDENTIFIER = re.compile(r"(?<![\w#])[A-Za-z_]\w*")
_REFERENCE = re.compile(r"\$\{?!?([A-Za-z_]\w*|[1-9@*])")
_POSITIONAL = frozenset("123456789@*")  # in `sh -c CODE _ ARGS`: file names from find, xargs
_BRACKETS = re.compile(r"\[[^\]]*\]")
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_LITERALS = frozenset({"word", "number", "raw_string", "string", "ansi_c_string", "concatenation"})
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_EXPANSIONS = frozenset({"simple_expansion", "expansion"})
_SHOWN = 40
# What bash evaluates a word as (arithmetic, subscripts, prompts, indirection: bare names too).
_ARITHMETIC, _SUBSCRIPT, _PROMPT = "arithmetic", "an array subscript", "a prompt"
_INDIRECT, _NAME = "the name of a variable", "a variable name"
_WORDS, _CODE_ROLE = "words to expand", "code"
# Options that take a value (a letter in a cluster takes the rest of the word, or the next).
_READ_VALUES = frozenset("adinNptu")
_MAPFILE_VALUES = frozenset("dnOsuCc")
# Programs whose output is numbers (with the literal names they are given), counters that
# print numbers whatever they read, and filters that only pick among the lines they read.
_NUMBER_SOURCES = frozenset({"date", "nproc", "id", "getconf", "tput", "seq", "expr"})
_COUNTERS = frozenset({"wc", "grep", "du", "stat", "find"})
_PICKERS = frozenset({"sort", "head", "tail", "cut", "uniq", "tr", "tac"})
_FORMATS = {"stat": ("-c", "--format", "--printf"), "find": ("-printf",)}
_NUMERIC_FORMAT = re.compile(r"(?:%[-+# \d.]*[TAC]?[@a-zA-Z%+]|\\[nt0]|[\s\d.,:;/+_-])*")
_NAMES_FORMAT = re.compile(r"%[-+# 0-9.]*[nNmCpfhPHlZ]")  # file names, mount points, contexts
_FIND_OUTPUTS = frozenset({"-print", "-print0", "-ls", "-fls", "-fprint", "-fprint0", "-fprintf"})


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Why the policy cannot judge code bash evaluates in a command's data (the command is
    ``unknown``), and the denylist's reasons for the catastrophic code the command holds."""

    hidden: tuple[str, ...] = ()
    denied: tuple[str, ...] = ()


def evaluated(command: str, analysis: Analysis) -> Evaluation:
    """Where ``command`` (or shell code its programs run) has bash evaluate data as code."""
    texts = [command, *_scripts(analysis)]
    if not any(_EVALUATING.search(text) for text in texts):
        return Evaluation()
    roots: list[Node] = []
    for text in texts:
        try:
            roots.append(parse_tree(text))
        except ParseFailure:
            continue
    scan = _Scan(roots)
    for root in roots:
        scan.judge(root)
    if not scan.hidden:
        return Evaluation()
    payloads = scan.payloads
    if scan.runtime:  # the value may come from any literal text of the command
        payloads += [text for root in roots for text in _code_texts(root)]
    denied: list[str] = []
    for payload in dict.fromkeys(payloads):
        try:
            denied += catastrophes(analyse(payload))
        except RecursionError:
            continue
    return Evaluation(tuple(scan.hidden), tuple(dict.fromkeys(denied)))


def _scripts(analysis: Analysis) -> list[str]:
    """The literal shell code the command's programs run (``bash -c``, ``eval``, ``sh <<<``)."""
    found: list[str] = []
    for inv in analysis.invocations:
        if inv.name in WRAPPERS:
            texts = [a.text for a in unwrap(inv.name, list(inv.args)).script]
            if texts and all(t is not None for t in texts):
                found.append(" ".join(t or "" for t in texts))
    for feed in analysis.feeds:
        if feed.text is not None and any(c.name in SHELLS for c in feed.consumers):
            found.append(feed.text)
    return found


class _Scan:
    """The variables only known at run time; then what bash evaluates, and where."""

    def __init__(self, roots: list[Node]) -> None:
        self.nodes = [node for root in roots for node in descendants(root)]
        self.associative = self._declared("A")
        self.integers = self._declared("i")
        self.tainted = self._tainted()
        self.hidden: list[str] = []
        self.payloads: list[str] = []
        self.runtime = False  # a value only known at run time is evaluated
        self.seen: set[str] = set()

    def _declared(self, flag: str) -> set[str]:
        declared = [n for n in self.nodes if n.type == "declaration_command"]
        marked = [n for n in declared if any(flag in f for f in _flags(n))]
        return {_assigned(c) for n in marked for c in n.named_children if not _flag(c)}

    def _tainted(self) -> set[str]:
        tainted: set[str] = set(_POSITIONAL)
        for _ in range(4):  # `y=$x` after `read x`: until nothing more is learnt
            before = len(tainted)
            for node in self.nodes:
                value = node.child_by_field_name("value")
                if node.type == "command":
                    tainted.update(self._read_into(node))
                elif node.type == "variable_assignment" and value is not None:
                    if self._runtime(value, tainted):
                        tainted.add(_assigned(node))
                elif node.type == "for_statement" and (name := loop_name(node)):
                    values = node.children_by_field_name("value")
                    if not values or any(self._runtime(v, tainted, True) for v in values):
                        tainted.add(name)
            if len(tainted) == before:
                break
        return tainted

    def _read_into(self, node: Node) -> set[str]:
        """The variables ``read``, ``mapfile`` or ``printf -v`` set from data."""
        name, args = _command(node)
        texts = [_literal(a) for a in args]
        if name in ("read", "mapfile", "readarray"):
            operands, values = _options(texts, _READ_VALUES if name == "read" else _MAPFILE_VALUES)
            names = [texts[i] or "" for i in operands]
            if name == "read" and "a" in values:
                array = texts[values["a"]] or ""
                names.append(array.split("a", 1)[1] if array.startswith("-") else array)
            found = {n.split("[")[0] for n in names if n}
            return found or {"REPLY" if name == "read" else "MAPFILE"}
        printed = name == "printf" and texts[:1] == ["-v"] and len(texts) > 1
        if printed and any(self._runtime(a, set()) for a in args[2:]):
            return {(texts[1] or "").split("[")[0]}
        return set()

    def _runtime(self, node: Node, tainted: set[str], globs: bool = False) -> bool:
        """Whether the value of ``node`` is only known at run time, or holds code (arithmetic
        makes a number: what it evaluates is judged there)."""
        for sub in descendants(node, into=False, past="arithmetic_expansion"):
            if sub.type in _SUBSTITUTIONS and not _numeric(sub):
                return True
            if sub.type in _EXPANSIONS and _referenced(sub) & tainted:
                return True
            if sub.type in _LITERALS:
                try:
                    text, glob = literal_word(sub, first=False)
                except PolicyRejection:
                    continue
                if _CODE.search(text) or (globs and glob):
                    return True
        return False

    def judge(self, root: Node) -> None:
        for node, where, role in self._places(root):
            self._judge(node, where[:_SHOWN], role)

    def _places(self, root: Node) -> Iterator[tuple[Node, str, str]]:
        """Each word bash evaluates: its node, the construct as written, and what as."""
        for node in descendants(root):
            kind, where = node.type, node_text(node)
            first = node.children[0].type if node.children else ""
            if kind == "arithmetic_expansion" or (kind == "compound_statement" and first == "(("):
                yield node, where, _ARITHMETIC
            elif kind == "c_style_for_statement":
                for field in ("initializer", "condition", "update"):
                    yield from ((p, where, _ARITHMETIC) for p in node.children_by_field_name(field))
            elif kind == "command":
                yield from _builtin(node)
            elif kind in ("declaration_command", "unset_command"):
                integer = any("i" in f for f in _flags(node))
                for child in node.named_children:
                    value = child.child_by_field_name("value")
                    if child.type == "variable_assignment" and integer and value is not None:
                        yield value, where, _ARITHMETIC
                    elif child.type != "variable_assignment" and not _flag(child):
                        yield child, where, _NAME
            elif kind == "variable_assignment" and _assigned(node) in self.integers:
                if (value := node.child_by_field_name("value")) is not None:
                    yield value, where, _ARITHMETIC
            elif kind == "test_command":
                yield from _tests(node, first == "[[")
            elif kind == "expansion":
                yield from _expansion(node)
            elif kind == "subscript":
                index, name = node.child_by_field_name("index"), node.child_by_field_name("name")
                keyed = name is not None and node_text(name) in self.associative
                if index is not None and not keyed and node_text(index) not in ("@", "*"):
                    yield index, where, _SUBSCRIPT

    def _judge(self, node: Node, where: str, role: str) -> None:
        for sub in descendants(node, into=False):
            if sub.type == "command_substitution" and not _numeric(sub):
                self.runtime = True
                self.payloads += [p for p in [_printed(sub)] if p and _CODE.search(p)]
                self._hide(node_text(sub), "the output of {!r}", role, where)
            elif sub.type in _LITERALS and (text := _literal(sub)) and _CODE.search(text):
                self.payloads.append(text)
                self._hide(text, "{!r}", role, where)
        names = self._names(node, arithmetic=role in (_ARITHMETIC, _SUBSCRIPT, _INDIRECT, _PROMPT))
        for name in sorted(names & self.tainted):
            self.runtime = True
            self._hide(name, "{}, only known at run time,", role, where)

    def _hide(self, what: str, subject: str, role: str, where: str) -> None:
        """One reason for each text, variable or substitution evaluated: the first place."""
        if what not in self.seen:
            self.seen.add(what)
            self.hidden.append(
                f"Bash evaluates {subject.format(what[:_SHOWN])} as {role} in {where!r}: "
                "code in it would run where the policy cannot see it."
            )

    def _names(self, node: Node, arithmetic: bool) -> set[str]:
        """The variables ``node`` expands, and its bare names (in a name, in its subscript)."""
        raw = bytearray(node.text or b"")
        for sub in descendants(node):
            blank = sub.type in _SUBSTITUTIONS or sub.type == "raw_string"
            blank = blank or (sub.type == "expansion" and node_text(sub).startswith("${#"))
            name = sub.child_by_field_name("name") if sub.type == "subscript" else None
            if name is not None and node_text(name) in self.associative:
                sub, blank = sub.child_by_field_name("index") or sub, True  # a key, not a number
            if blank and sub is not node:
                start, end = sub.start_byte - node.start_byte, sub.end_byte - node.start_byte
                raw[start:end] = b" " * (end - start)
        text = raw.decode("utf-8", "replace")
        bare = text if arithmetic else " ".join(_BRACKETS.findall(text))
        return set(_REFERENCE.findall(text)) | set(_IDENTIFIER.findall(bare))


def _builtin(node: Node) -> Iterator[tuple[Node, str, str]]:
    """The words the builtins that evaluate them are given."""
    name, args = _command(node)
    texts = [_literal(a) for a in args]
    where = node_text(node)
    if name == "let":
        yield from ((a, where, _ARITHMETIC) for a in args)
    elif name == "test":
        yield from ((args[i + 1], where, _NAME) for i, t in enumerate(texts[:-1]) if t == "-v")
    elif name == "printf" and texts[:1] == ["-v"] and len(args) > 1:
        yield args[1], where, _NAME
    elif name in ("read", "mapfile", "readarray"):
        operands, values = _options(texts, _READ_VALUES if name == "read" else _MAPFILE_VALUES)
        yield from ((args[i], where, _NAME) for i in operands)
        if "a" in values and name == "read":
            yield args[values["a"]], where, _NAME
        if "C" in values and name != "read":
            yield args[values["C"]], where, _CODE_ROLE
    elif name in ("compgen", "complete"):
        roles = {"-W": _WORDS, "-C": _CODE_ROLE, "-F": _NAME}
        yield from ((args[i + 1], where, roles[t]) for i, t in enumerate(texts[:-1]) if t in roles)
    elif name == "trap" and texts and texts[0] not in ("-", "-l", "-p", "--"):
        yield args[0], where, _CODE_ROLE


def _tests(node: Node, double: bool) -> Iterator[tuple[Node, str, str]]:
    """``-v NAME`` in ``[ ]`` and ``[[ ]]``, and the arithmetic comparisons of ``[[ ]]``."""
    where = node_text(node)
    for sub in descendants(node, into=False):
        operator = sub.child_by_field_name("operator")
        if operator is None or not sub.type.endswith("ary_expression"):
            continue
        if sub.type == "unary_expression" and node_text(operator) == "-v":
            yield from ((c, where, _NAME) for c in sub.named_children if c != operator)
        elif double and node_text(operator) in _ARITHMETIC_TESTS:
            sides = (sub.child_by_field_name(side) for side in ("left", "right"))
            yield from ((s, where, _ARITHMETIC) for s in sides if s is not None)


def _expansion(node: Node) -> Iterator[tuple[Node, str, str]]:
    """``${x:offset:length}``, ``${x@P}`` and ``${!x}``."""
    kids = node.children
    kinds = [c.type for c in kids]
    where = node_text(node)
    if kinds[1:] == ["!", "variable_name", "}"]:
        yield kids[2], where, _INDIRECT
    if "@" in kinds and kinds[kinds.index("@") + 1 : kinds.index("@") + 2] == ["P"]:
        yield from ((c, where, _PROMPT) for c in kids if c.type == "variable_name")
    if ":" in kinds:
        yield from ((c, where, _ARITHMETIC) for c in kids[kinds.index(":") + 1 :] if c.is_named)


def descendants(node: Node, into: bool = True, past: str = "") -> Iterator[Node]:
    """``node`` and its descendants in order, without recursion; not inside substitutions
    unless ``into``, nor inside nodes of type ``past``."""
    stack = [node]
    while stack:
        found = stack.pop()
        yield found
        if (into or found.type not in _SUBSTITUTIONS) and found.type != past:
            stack.extend(reversed(found.children))


def _plain(heredoc: Node) -> bool:
    return all(c.type == "heredoc_content" for c in heredoc.named_children)


def _literal(node: Node) -> str | None:
    try:
        return literal_word(node, first=False)[0]
    except PolicyRejection:
        return None


def _referenced(expansion: Node) -> set[str]:
    """The variable ``$x`` or ``${x...}`` reads (not ``${#x}``: its length)."""
    first = expansion.named_children[0] if expansion.named_children else None
    if first is not None and first.type == "subscript":
        first = first.child_by_field_name("name")
    named = first is not None and first.type in ("variable_name", "special_variable_name")
    if first is None or not named or node_text(expansion)[:3] == "${#":
        return set()
    return {node_text(first)}


def _assigned(node: Node) -> str:
    name = node.child_by_field_name("name") if node.type == "variable_assignment" else node
    if name is not None and name.type == "subscript":
        name = name.child_by_field_name("name") or name
    return (_literal(name) or node_text(name)) if name is not None else ""


def _flag(node: Node) -> bool:
    return node.type != "variable_assignment" and (_literal(node) or "").startswith("-")


def _flags(declaration: Node) -> list[str]:
    """The option letters of a ``declare`` (``-i``, ``-A``...)."""
    return [(_literal(c) or "")[1:] for c in declaration.named_children if _flag(c)]


def _command(node: Node) -> tuple[str | None, list[Node]]:
    """A simple command's name (past ``command`` and ``builtin``) and argument nodes."""
    head = node.child_by_field_name("name")
    name = _literal(head.named_children[0]) if head is not None and head.named_children else None
    args = node.children_by_field_name("argument")
    while name in ("command", "builtin") and args:
        name, args = _literal(args[0]), args[1:]
    return name, args


def _options(texts: list[str | None], takes: frozenset[str]) -> tuple[list[int], dict[str, int]]:
    """The operands' indexes, and the index of each option's value (``read -a NAME``)."""
    operands: list[int] = []
    values: dict[str, int] = {}
    for i, text in enumerate(texts):
        if i in values.values():
            continue  # the value of the option before it
        if text is None or not text.startswith("-") or text == "-" or "--" in texts[:i]:
            operands.append(i)
        elif (letter := next((c for c in text[1:] if c in takes), None)) is not None:
            values[letter] = i if text.index(letter) + 1 < len(text) else i + 1
    return operands, {k: v for k, v in values.items() if v < len(texts)}


def _stages(substitution: Node) -> list[tuple[Node, str | None]]:
    """The simple commands of a substitution's pipeline, each with the literal text a
    here-string or here-document feeds it; empty when it is anything else (``$(< file)``)."""
    body = [c for c in substitution.named_children if c.type != "comment"]
    if len(body) != 1:
        return []
    found: list[tuple[Node, str | None]] = []
    for stage in body[0].named_children if body[0].type == "pipeline" else body:
        outer = stage.named_children if stage.type == "redirected_statement" else []
        stage = (stage.child_by_field_name("body") or stage) if outer else stage
        if stage.type != "command":
            return []
        fed: str | None = None
        for redirect in [*outer, *stage.named_children]:
            if redirect.type == "herestring_redirect" and redirect.named_children:
                fed = (_literal(redirect.named_children[-1]) or "") + "\n"
            elif redirect.type == "heredoc_redirect":
                bodies = [c for c in redirect.named_children if c.type == "heredoc_body"]
                fed = node_text(bodies[0]) if bodies and _plain(bodies[0]) else None
        found.append((stage, fed))
    return found


def _numeric(substitution: Node) -> bool:
    """Whether a substitution only prints numbers: a counter last (``... | wc -l``), or a
    program that prints numbers, then filters that pick lines (``| sort -n | head -n 1``)."""
    words = [_words(command) for command, _ in _stages(substitution)]
    known = [w for w in words if w is not None]
    if not known or len(known) != len(words):
        return False
    source = known[0][0] in _NUMBER_SOURCES or _counts(known[0])
    picked = all(w[0] in _PICKERS and _option_words(w[1:]) for w in known[1:])
    return _counts(known[-1]) or (source and picked)


def _words(command: Node, plain: bool = False) -> list[str] | None:
    """A command's literal words (unless ``plain``, with no glob and no code), or None."""
    name, args = _command(command)
    texts: list[str] = [name or ""]
    for arg in args:
        try:
            text, glob = literal_word(arg, first=False)
        except PolicyRejection:
            return None
        if not plain and (glob or _CODE.search(text)):
            return None
        texts.append(text)
    return texts if name else None


def _counts(words: list[str]) -> bool:
    """``wc``, ``grep -c``, ``du``, and ``stat -c``/``find -printf`` printing only numbers."""
    name, args = words[0], words[1:]
    if name == "grep":
        return any(re.fullmatch(r"-\w*c\w*|--count", a) for a in args)
    if name in _FORMATS:
        formats = [args[i + 1] for i, a in enumerate(args[:-1]) if a in _FORMATS[name]]
        outputs = any(a in _FIND_OUTPUTS or a.startswith(("-exec", "-ok")) for a in args)
        numeric = all(_NUMERIC_FORMAT.fullmatch(f) and not _NAMES_FORMAT.search(f) for f in formats)
        return bool(formats) and numeric and not outputs
    return name in _COUNTERS


def _option_words(args: list[str]) -> bool:
    """Only options and their values (``-n 1``, ``-d .``): no file to read."""
    values = [False] + [re.fullmatch(r"-[A-Za-z]", a) is not None for a in args[:-1]]
    return all(arg.startswith("-") or value for arg, value in zip(args, values, strict=True))


def _printed(substitution: Node) -> str | None:
    """What a substitution prints of literal text through ``echo``, ``rev``, ``base64 -d``."""
    text: str | None = None
    for command, fed in _stages(substitution):
        words = _words(command, plain=True)
        text = _filter(words, fed if fed is not None else text) if words else None
        if text is None:
            return None
    return text


def _filter(words: list[str], stdin: str | None) -> str | None:
    name, args = words[0], words[1:]
    if name == "echo":  # `echo -n` aside, an option is one this does not follow
        newline = "" if args[:1] == ["-n"] else "\n"
        words = args[1:] if newline == "" else args
        return None if words[:1] and words[0].startswith("-") else " ".join(words) + newline
    if stdin is None or (args and name != "base64"):
        return None
    if name == "rev":
        return "\n".join(line[::-1] for line in stdin.split("\n"))
    if name == "base64" and args and all(a in ("-d", "--decode", "-D") for a in args):
        try:
            return base64.b64decode("".join(stdin.split())).decode("utf-8", "replace")
        except binascii.Error:
            return None
    return None


def _code_texts(root: Node) -> Iterator[str]:
    """The command's literal texts holding code, and what its substitutions print of them."""
    for node in descendants(root):
        text: str | None = None
        if node.type in _LITERALS:
            text = _literal(node)
        elif node.type == "heredoc_body" and _plain(node):
            text = node_text(node)
        elif node.type == "command_substitution":
            text = _printed(node)
        if text and _CODE.search(text):
            yield text
