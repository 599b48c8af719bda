"""Commands safe mode runs through a shell: loops read as their words, and what stays refused.

Safe mode runs what it can as a plan of programs (``conch.policy.plan``). A command that needs
a real shell (a loop, ``$(...)``, a here-document, a conditional, a function...) runs through
``/bin/sh`` instead: contained when nobody was asked (``conch.execute.contain``), in the
user's shell after a person's yes. The policy still sees every program it runs
(``conch.policy.commands``); this module adds what a shell changes:

* ``readings``: a ``for`` loop over literal words, globs and brace sequences, read with its
  variable replaced by each word (``for f in *.log; do rm "$f"; done`` is judged as
  ``rm *.log``), so the denylist, the sandbox root and the classifier see what the loop names;
* ``refusals``: what safe mode still refuses. Code the policy cannot see: ``source``,
  ``trap`` code, ``hash -p``, an alias whose text is only known at run time, the variables the
  shell runs as code (``PS4``, ``PROMPT_COMMAND``, ``BASH_ENV``, ``ENV``). And a program that
  destroys (``rm``, ``mv``, ``dd``...) given a word only known at run time, or run after a
  ``cd`` to a directory only known at run time: the denylist cannot judge those paths;
* ``extra_risks``: what raises the risk: setting a variable programs read (``PATH``,
  ``LD_PRELOAD``...), an expansion that splits into several words at run time.

Text handling only: nothing is executed.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from tree_sitter import Node

from conch.errors import PolicyRejection
from conch.policy import options
from conch.policy.classify import classify
from conch.policy.model import Analysis, Arg, Invocation
from conch.policy.parse import (
    GLOB_CHARS,
    SHELL_VARIABLES,
    ParseFailure,
    expand_braces,
    literal_word,
    node_text,
    parse_tree,
)
from conch.policy.risk import Risk
from conch.policy.wrappers import SHELLS, WRAPPERS, unwrap

__all__ = [
    "CODE_VARIABLES",
    "DESTROYERS",
    "code_runner",
    "directory_change",
    "extra_risks",
    "readings",
    "refusals",
    "text_refusals",
    "through_shell",
    "unset_variables",
]

# The most readings of one command (the loops' words multiplied), and the most words of one
# loop read one by one; a brace sequence longer than that is read by its first and last
# words, which have the same form as those between.
MAX_READINGS = 32
MAX_WORDS = 16

# Programs that destroy or overwrite what their arguments name, whatever the classifier says
# of their other forms; with a word only known at run time, the denylist cannot judge them.
DESTROYERS = frozenset(
    {"rm", "rmdir", "unlink", "shred", "mv", "dd", "truncate", "cp", "ln", "install"}
    | {"rsync", "chmod", "chown", "chgrp", "wipefs"}
)
# Variables whose value the shell itself runs as code.
CODE_VARIABLES = frozenset({"PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "BASH_ENV", "ENV"})
# Builtins that set the variables their arguments name.
_BINDERS = frozenset(
    {"read", "readarray", "mapfile", "getopts", "unset", "declare", "typeset", "local"}
    | {"export", "readonly", "printf", "let", "eval"}
)
_DIRECTORY_CHANGERS = frozenset({"cd", "pushd", "popd"})
_NETWORK_FILES = ("/dev/tcp/", "/dev/udp/")
_OPEN_LOOPS = frozenset({"while_statement"})  # `until` loops too: the grammar names them so
# Where bash evaluates a word as arithmetic or a variable name (array subscripts included).
_EVALUATING = frozenset(
    {"test_command", "arithmetic_expansion", "compound_statement", "binary_expression"}
)
_SUBSTITUTION = re.compile(r"\$\(|`")
# Builtins that evaluate the names or numbers they are given (``unset 'a[$(cmd)]'``).
_NAME_EVALUATORS = frozenset(
    {"declare", "typeset", "local", "export", "readonly", "unset", "let", "read"}
    | {"mapfile", "readarray", "getopts", "printf", "test", "["}
)
_UPPER = re.compile(r"[A-Z_][A-Z0-9_]*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPACE = re.compile(r"\s")


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
    nodes = list(_descendants(root))
    loops = [n for n in nodes if n.type == "for_statement"]
    names = [_loop_name(loop) for loop in loops]
    bound: list[tuple[list[_Value], list[_Edit]]] = []
    for loop, name in zip(loops, names, strict=True):
        if name is None or names.count(name) > 1 or _set_elsewhere(name, loop, nodes):
            continue
        values = _values(loop.children_by_field_name("value"))
        edits = _uses(name, loop, nodes)
        if values is None or edits is None or not edits:
            continue
        bound.append((values, edits))
    total = 1
    for values, _ in bound:
        total *= len(values)
    if not bound or total > MAX_READINGS:
        return []
    source = command.encode("utf-8")
    found: list[str] = []
    for combination in itertools.product(*(values for values, _ in bound)):
        replaced = [
            (edit, value)
            for value, (_, edits) in zip(combination, bound, strict=True)
            for edit in edits
        ]
        text = source
        for edit, value in sorted(replaced, key=lambda r: -r[0].start):
            text = text[: edit.start] + _render(value, edit).encode("utf-8") + text[edit.end :]
        found.append(text.decode("utf-8"))
    return list(dict.fromkeys(found))


def refusals(analysis: Analysis) -> list[str]:
    """Why safe mode refuses ``analysis``'s command even through a shell (empty: it runs)."""
    reasons: list[str] = []
    for inv in analysis.invocations:
        reasons += _hidden_code(inv)
    reasons += [
        f"The command sets {name}, whose value the shell runs as code the policy cannot see."
        for name in sorted(_assigned(analysis) & CODE_VARIABLES)
    ]
    reasons += [
        f"The variable {name} holds shell code ({value[:40]!r}), which arithmetic or the "
        "shell's own expansions may run where the policy cannot see it."
        for name, value in analysis.variables.items()
        if value is not None and ("$(" in value or "`" in value)
    ]
    destroyers = [inv for inv in analysis.invocations if _destroys(inv)]
    for inv in destroyers:
        runtime = [a.raw for a in _targets(inv) if a.text is None]
        if runtime:
            reasons.append(
                f"{inv.name} is given {runtime[0]!r}, a path only known at run time, which the "
                "denylist cannot judge."
            )
    moved = [inv for inv in analysis.invocations if _unknown_directory(inv)]
    if destroyers and moved:
        name = destroyers[0].name
        reasons.append(
            f"{name} runs after {moved[0].raw_name or moved[0].name!r} goes to a directory only "
            "known at run time, so the denylist cannot judge its paths."
        )
    return list(dict.fromkeys(reasons))


def extra_risks(analysis: Analysis) -> list[tuple[Risk, str]]:
    """Risks a shell adds to what the programs do: a program left running in the background,
    a variable programs read is set, a word splits into several at run time, bash's network
    files (``/dev/tcp/HOST/PORT``)."""
    found: list[tuple[Risk, str]] = []
    if "&" in analysis.operators:
        found.append((Risk.UNKNOWN, "it leaves a program running in the background"))
    words = [a for inv in analysis.invocations for a in inv.args]
    words += [r.target for r in analysis.redirects]
    if any((a.path_text or a.raw).startswith(_NETWORK_FILES) for a in words):
        found.append((Risk.NETWORK, "bash opens a network connection for /dev/tcp and /dev/udp"))
    tables = options.tables()
    for name in sorted(_assigned(analysis)):
        if _UPPER.fullmatch(name) and not tables.harmless(name):
            found.append((Risk.UNKNOWN, f"it sets {name}, which may change what programs run"))
    for inv in analysis.invocations:
        for arg in inv.args:
            split = arg.text is None and not arg.raw.startswith('"')
            if split and arg.path_text is not None and _SPACE.search(arg.path_text):
                found.append((Risk.UNKNOWN, f"{arg.raw!r} splits into several words"))
    return found


def unset_variables(command: str, analysis: Analysis, environ: Mapping[str, str]) -> list[str]:
    """Why ``$NAME`` words of ``command`` would be empty: the variable is not in ``environ``
    (what commands run with: a secret of conch's is not), nor set by the command itself (an
    assignment, a loop, ``read``), nor one the shell sets."""
    try:
        root = parse_tree(command)
    except ParseFailure:
        return []
    nodes = list(_descendants(root))
    bound = _assigned(analysis)
    bound.update(
        name for loop in nodes if loop.type == "for_statement" if (name := _loop_name(loop))
    )
    reasons: list[str] = []
    for node in nodes:
        if node.type not in ("simple_expansion", "expansion"):
            continue
        names = [c for c in node.named_children if c.type == "variable_name"]
        if not names:
            continue
        name = node_text(names[0])
        plain = node.type == "simple_expansion" or node_text(node) == f"${{{name}}}"
        if not plain or not _NAME.fullmatch(name) or name in bound or name in environ:
            continue
        if name == "PWD":
            continue
        if name in SHELL_VARIABLES or name.startswith("BASH_"):
            continue
        reasons.append(f"${name} is not set, or not passed to commands (execution.pass_env).")
    return list(dict.fromkeys(reasons))


def text_refusals(command: str) -> list[str]:
    """What the text of ``command`` hides from the policy: a ``while`` or ``until`` loop that
    starts programs in the background (nothing bounds how many), or a quoted ``$(...)`` that
    bash's tests and arithmetic evaluate (``[[ -v 'a[$(cmd)]' ]]``)."""
    if "&" not in command and "$(" not in command and "`" not in command:
        return []
    try:
        root = parse_tree(command)
    except ParseFailure:
        return []
    reasons: list[str] = []
    for node in _descendants(root):
        if node.type == "&" and not node.is_named and _inside(node, _OPEN_LOOPS):
            reasons.append("A while or until loop starts programs in the background without bound.")
        quoted = node.type == "raw_string" and _SUBSTITUTION.search(node_text(node))
        if quoted and _inside(node, _EVALUATING):
            reasons.append(
                f"The quoted {node_text(node)[:40]!r} is evaluated by the shell's test or "
                "arithmetic, which runs the code in it where the policy cannot see it."
            )
    return list(dict.fromkeys(reasons))


def _inside(node: Node, kinds: frozenset[str]) -> bool:
    parent = node.parent
    while parent is not None and parent.type not in kinds:
        parent = parent.parent
    return parent is not None


def code_runner(analysis: Analysis) -> str | None:
    """A program other than a shell that runs shell code of its own making (``parallel``
    and ``watch`` build a command line from their arguments), or None."""
    for inv in analysis.invocations:
        name = inv.name
        if name in WRAPPERS and name not in SHELLS and unwrap(name, list(inv.args)).script:
            return name
    return None


def through_shell(why: str) -> str:
    """The verdict's line for a command that runs through a shell, ``why`` being what needs
    one (``A loop needs a shell.``)."""
    what = why.strip().rstrip(".")
    for suffix in (", which needs a shell", " needs a shell"):
        what = what.removesuffix(suffix)
    what = what[:1].lower() + what[1:]
    return f"Runs through a shell ({what}); what runs without a question runs contained."


# loops -------------------------------------------------------------------------------------


def _descendants(node: Node) -> Iterator[Node]:
    yield node
    for child in node.children:
        yield from _descendants(child)


def _loop_name(loop: Node) -> str | None:
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
            if head is None or node_text(head) not in _BINDERS:
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


def _uses(name: str, loop: Node, nodes: list[Node]) -> list[_Edit] | None:
    """Where ``$name`` and ``${name}`` are used after the start of ``loop``; None when it is
    used with an operator (``${name%.txt}``), which this reading does not follow."""
    edits: list[_Edit] = []
    for node in nodes:
        if node.type not in ("simple_expansion", "expansion") or node.start_byte < loop.start_byte:
            continue
        names = [c for c in node.named_children if c.type == "variable_name"]
        if not names or node_text(names[0]) != name:
            continue
        if node.type == "expansion" and node_text(node) != f"${{{name}}}":
            continue  # stays a word only known at run time
        parent = node.parent
        quoted = parent is not None and parent.type == "string"
        whole = _alone(node) if not quoted else parent is not None and _alone_in_string(parent)
        if quoted and whole and parent is not None:
            edits.append(_Edit(parent.start_byte, parent.end_byte, True, True))
        else:
            edits.append(_Edit(node.start_byte, node.end_byte, quoted, whole))
    return edits


def _alone(node: Node) -> bool:
    parent = node.parent
    return parent is None or parent.type not in ("concatenation", "string", "heredoc_body")


def _alone_in_string(string: Node) -> bool:
    named = [c for c in string.named_children if c.type != "string_content" or node_text(c)]
    return len(named) == 1 and _alone(string)


def _render(value: _Value, edit: _Edit) -> str:
    """``value`` written where ``edit`` says, as shell text that reads back the same."""
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


# refusals ----------------------------------------------------------------------------------


def _operands(inv: Invocation) -> list[str | None]:
    texts = inv.texts()
    while texts and texts[0] is not None and texts[0].startswith("-") and texts[0] != "-":
        if texts.pop(0) == "--":
            break
    return texts


def _hidden_code(inv: Invocation) -> list[str]:
    """Why ``inv`` runs code the policy cannot see, if it does."""
    name = inv.name
    if name in ("source", "."):
        return [f"'{name}' runs the code of a file, which the policy cannot see."]
    if name == "trap":
        operands = _operands(inv)
        if operands and operands[0] not in ("-", ""):
            return ["'trap' sets code for the shell to run later, which the policy cannot see."]
    if name == "hash" and any(t is None or t.startswith("-p") for t in inv.texts()):
        return ["'hash -p' makes a name run another program."]
    if name in ("declare", "typeset", "local") and any(
        t is None or (t.startswith("-") and "n" in t) for t in inv.texts()
    ):
        return [f"'{name} -n' makes a name set another variable, which the policy cannot follow."]
    if name == "alias" and any(a.text is None for a in inv.args):
        return ["The alias's text is only known at run time, so its code cannot be checked."]
    texts = [t for t in inv.texts() if t is not None]
    if name in _NAME_EVALUATORS and (name not in ("printf", "test", "[") or "-v" in texts):
        hidden = next((t for t in texts if _SUBSTITUTION.search(t)), None)
        if hidden is not None:
            return [
                f"'{name}' evaluates {hidden[:40]!r} as a name or a number, which runs the "
                "code in it where the policy cannot see it."
            ]
    return []


def _assigned(analysis: Analysis) -> set[str]:
    """Every variable the command may set: assignments, declarations, ``read NAME``..."""
    names = set(analysis.variables)
    for inv in analysis.invocations:
        names.update(inv.assignments)
        if inv.name in _BINDERS:
            for text in inv.texts():
                if text is not None and not text.startswith("-"):
                    # ``NAME=VALUE``; a name reference (``declare -n ref=PS4``) sets VALUE.
                    name, _, value = text.partition("=")
                    names.update((re.split(r"[\[+]", name, maxsplit=1)[0], value))
    return names


def _destroys(inv: Invocation) -> bool:
    if inv.name is None:
        return False
    return inv.name in DESTROYERS or classify(inv) in (Risk.DESTRUCTIVE, Risk.PRIVILEGED)


def _targets(inv: Invocation) -> tuple[Arg, ...]:
    """The arguments of a program that destroys which name what it destroys: all of them,
    but only the destination of ``cp`` (its sources are only read)."""
    if inv.name != "cp" or not inv.args:
        return inv.args
    for i, arg in enumerate(inv.args):
        text = arg.text or ""
        if text in ("-t", "--target-directory") and i + 1 < len(inv.args):
            return (inv.args[i + 1],)
        if text.startswith(("--target-directory=", "-t")) and text not in ("-t",):
            return (arg,)
    return inv.args[-1:]


def _unknown_directory(inv: Invocation) -> bool:
    """A ``cd`` (``pushd``, ``popd``) whose directory is only known at run time: none given
    (home, or the directory stack), ``-``, a pattern, or a word that expands."""
    if inv.name not in _DIRECTORY_CHANGERS:
        return False
    operands = _operands(inv)
    if inv.name == "popd" or not operands or operands[0] in (None, "-"):
        return True
    return any(arg.glob for arg in inv.args)


def directory_change(analysis: Analysis) -> str | None:
    """The first ``cd``, ``pushd`` or ``popd`` of ``analysis``, as written, or None. Run by a
    shell, the paths after it are read from a directory the sandbox-root check does not
    follow."""
    for inv in analysis.invocations:
        if inv.name in _DIRECTORY_CHANGERS:
            return " ".join([inv.raw_name or inv.name or "", *(a.raw for a in inv.args)])
    return None
