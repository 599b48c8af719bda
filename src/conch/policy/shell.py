"""Commands safe mode runs through a shell: what stays refused, and what raises the risk.

Safe mode runs what it can as a plan of programs (``conch.policy.plan``). A command that needs
a real shell (a loop, ``$(...)``, a here-document, a conditional, a function...) runs through
a shell instead: bash contained when nobody was asked (``conch.execute.contain``), the user's
shell after a person's yes. The policy still sees every program it runs
(``conch.policy.commands``), and reads a ``for`` loop as its words (``conch.policy.loops``);
this module adds what a shell changes:

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

import re
from collections.abc import Mapping

from tree_sitter import Node

from conch.policy import options
from conch.policy.classify import classify
from conch.policy.loops import BINDERS, descendants, loop_name, readings
from conch.policy.model import Analysis, Arg, Invocation
from conch.policy.parse import (
    SHELL_VARIABLES,
    ParseFailure,
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


# Programs that destroy or overwrite what their arguments name, whatever the classifier says
# of their other forms; with a word only known at run time, the denylist cannot judge them.
DESTROYERS = frozenset(
    {"rm", "rmdir", "unlink", "shred", "mv", "dd", "truncate", "cp", "ln", "install"}
    | {"rsync", "chmod", "chown", "chgrp", "wipefs"}
)
# Variables whose value the shell itself runs as code.
CODE_VARIABLES = frozenset({"PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "BASH_ENV", "ENV"})
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
    nodes = list(descendants(root))
    bound = _assigned(analysis)
    bound.update(
        name for loop in nodes if loop.type == "for_statement" if (name := loop_name(loop))
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
    for node in descendants(root):
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
        if inv.name in BINDERS:
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
