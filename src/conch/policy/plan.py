"""What safe mode runs without a shell: a command line as a plan conch carries out itself.

``plan`` turns a command line into ``Plan`` steps (pipelines joined by ``;``, ``&&`` or
``||``), each a list of stages (one program's argv, quotes removed, globs flagged), with the
file redirections of each stage (``<``, ``>``, ``>>``, ``>|``, ``&>``, ``&>>``, and ``N>&M``
between descriptors 0, 1 and 2). ``conch.execute`` spawns every stage itself, connects the
pipes and opens the files: no shell runs. Anything else needs a real shell and raises
``PolicyRejection`` with the reason: substitutions, here-documents, loops, conditionals,
functions, subshells and groups, background jobs, assignments, and the shell's own builtins
(``cd DIR`` excepted, which a plan does itself: it changes the directory of the steps after
it, within the workspace).

Given the environment the command runs with, the plan expands what needs no shell:
``$NAME`` and ``${NAME}``, ``$PWD``, and brace expansion (``conch.policy.parse.Expander``);
without it, variables and braces need a shell. ``analyse_plan`` is what the policy judges
then: the words that will run, not the text.

Text handling: nothing is executed; only the working directory and the root are resolved.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from pathlib import Path

from tree_sitter import Node

from conch.errors import PolicyRejection
from conch.messages import Plan, PlanStage, PlanStep, Redirection, RedirectKind, Word
from conch.policy.parse import (
    Expander,
    ParseFailure,
    literal_word,
    node_text,
    parse_tree,
)

__all__ = [
    "Plan",
    "PlanStage",
    "PlanStep",
    "RedirectKind",
    "Redirection",
    "plan",
    "simple_words",
]

# Builtins of the shell with no program of the same name to run; ``cd`` is the plan's own.
SHELL_BUILTINS = frozenset(
    {
        "alias", "bg", "bind", "break", "builtin", "caller", "command", "compgen", "complete",
        "compopt", "continue", "declare", "dirs", "disown", "enable", "eval", "exec", "exit",
        "export", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "let", "local",
        "logout", "mapfile", "popd", "pushd", "read", "readarray", "readonly", "return", "set",
        "shift", "shopt", "source", ".", "suspend", "times", "trap", "type", "typeset",
        "ulimit", "umask", "unalias", "unset", "wait",
    }
)  # fmt: skip
_CONNECTORS = {"&&": "&&", "||": "||", ";": ";", "\n": ";"}
_FDS = {"0": 0, "1": 1, "2": 2}
_EXPRESSIONS = frozenset({"unary_expression", "binary_expression", "parenthesized_expression"})


def _needs_shell(what: str) -> PolicyRejection:
    return PolicyRejection(f"{what} needs a shell")


def plan(
    command: str,
    environ: Mapping[str, str] | None = None,
    *,
    cwd: Path | None = None,
    root: Path | None = None,
) -> Plan:
    """The plan of ``command``, or PolicyRejection saying what in it needs a real shell.

    ``environ`` is the environment the command runs with: its variables, ``$PWD`` (``cwd``)
    and brace expansion are expanded; None expands nothing. With ``cwd``, a ``cd`` may go
    anywhere inside the workspace (``root`` when given, else ``cwd``), and the plan carries
    that workspace for the runner to hold it to; without it, only down from where it starts.
    """
    return expanded_plan(command, environ, cwd, root)[0]


def expanded_plan(
    command: str, environ: Mapping[str, str] | None, cwd: Path | None, root: Path | None
) -> tuple[Plan, bool]:
    """The plan, and whether what runs differs from the text (an expansion or a ``cd``)."""
    try:
        tree = parse_tree(command)
    except ParseFailure as exc:
        raise PolicyRejection(f"Could not parse the command: {exc}.") from exc
    if tree.has_error:
        raise PolicyRejection(f"Could not parse the command {command.strip()[:60]!r}.")
    expander = None if environ is None else Expander(environ, None if cwd is None else str(cwd))
    reader = _Reader(expander)
    steps: list[PlanStep] = []
    connector = ""
    for child in tree.children:
        kind = child.type
        if kind == "comment":
            continue
        if kind == "&":
            raise _needs_shell("Running in the background ('&')")
        if kind in _CONNECTORS:
            connector = ";"
            continue
        if not child.is_named:
            raise _needs_shell(f"{kind!r}")
        steps.extend(reader.steps(child, connector or (";" if steps else "")))
        connector = ""
    if not steps:
        raise PolicyRejection("No command found to run.")
    workspace = None if cwd is None else os.path.realpath(root if root is not None else cwd)
    here = None if cwd is None else os.path.realpath(cwd)
    for step in steps:
        here = _check_builtins(step, here, workspace)
    changed = reader.changed or any(step.is_cd for step in steps)
    return Plan(tuple(steps), workspace), changed


def _check_builtins(step: PlanStep, here: str | None, workspace: str | None) -> str | None:
    """Refuse the builtins a plan cannot do; the directory after ``step`` (None: unknown)."""
    for stage in step.stages:
        if stage.name == "cd":
            if len(step.stages) > 1 or stage.redirects or len(stage.words) != 2:
                raise _needs_shell("'cd' in a pipeline, with redirections, options or no directory")
            target = stage.words[1]
            if target.glob or target.text.startswith("-"):
                raise _needs_shell(f"'cd {target.text}'")
            if here is None or workspace is None:
                parts = target.text.split("/")
                if target.text.startswith(("/", "~")) or ".." in parts:
                    # Paths are judged from the working directory: without it, a plan only
                    # goes down from there (the runner holds it to that, symlinks included).
                    raise _needs_shell(f"'cd {target.text}' out of the working directory")
                return here
            # `..` is read in the text, as the policy reads the paths after it; the runner
            # resolves symlinks and stops the plan where a `cd` would leave the workspace.
            new = posixpath.normpath(posixpath.join(here, target.text))
            if not _inside(new, workspace):
                raise _needs_shell(f"'cd {target.text}' out of the workspace {workspace!r}")
            return new
        if stage.name in SHELL_BUILTINS:
            raise _needs_shell(f"The shell builtin {stage.name!r}")
    return here


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class _Reader:
    """Reads the statements of a command line into plan steps, expanding its words with
    ``expander`` (None: every word must be literal)."""

    def __init__(self, expander: Expander | None) -> None:
        self.expander = expander
        self.changed = False  # a word expanded to something else than its text

    def steps(self, node: Node, connector: str) -> list[PlanStep]:
        kind = node.type
        if kind == "list":
            left, op, right = _list_parts(node)
            return self.steps(left, connector) + self.steps(right, _CONNECTORS[op])
        if kind == "redirected_statement":
            body = node.child_by_field_name("body")
            if body is None:
                raise _needs_shell(f"{node_text(node)[:40]!r}")
            steps = self.steps(body, connector)
            # The shell gives a statement's trailing redirections to its last simple command.
            last = steps[-1]
            stage = last.stages[-1]
            extra: list[Word] = []
            redirects = list(stage.redirects)
            for child in node.named_children:
                if child == body:
                    continue
                redirects.extend(self._redirection(child, extra))
            stage = PlanStage((*stage.words, *extra), tuple(redirects))
            steps[-1] = PlanStep(last.connector, (*last.stages[:-1], stage))
            return steps
        if kind == "pipeline":
            return [PlanStep(connector, self._pipeline(node))]
        if kind == "command":
            return [PlanStep(connector, (self._stage(node),))]
        if kind == "test_command" and node.children and node.children[0].type == "[":
            return [PlanStep(connector, (PlanStage(tuple(self._test_words(node))),))]
        raise _needs_shell(_construct(node))

    def words(self, node: Node) -> list[Word]:
        """The words ``node`` becomes (one, without an expander)."""
        if self.expander is None:
            text, glob = literal_word(node, first=True)
            return [Word(text, glob)]
        made = [Word(text, glob) for text, glob in self.expander.words(node)]
        if len(made) != 1 or made[0].text != _literal_text(node):
            self.changed = True
        return made

    def _test_words(self, node: Node) -> list[Word]:
        """``[ EXPR ]`` as the words of the ``[`` program (the grammar nests its expression)."""
        words: list[Word] = []
        for child in node.children:
            if child.type == "test_operator" or not child.is_named:
                words.append(Word(node_text(child)))
            elif child.type in _EXPRESSIONS:
                words.extend(self._test_words(child))
            else:
                # `[` gets its operands as they are: no globbing
                words.extend(Word(w.text) for w in self.words(child))
        return words

    def _pipeline(self, node: Node) -> tuple[PlanStage, ...]:
        stages: list[PlanStage] = []
        for child in node.children:
            if child.type == "|":
                continue
            if child.type == "|&":  # a |& b is a 2>&1 | b
                last = stages[-1]
                both = Redirection(2, RedirectKind.DUP, source=1)
                stages[-1] = PlanStage(last.words, (*last.redirects, both))
                continue
            if not child.is_named:
                raise _needs_shell(f"{child.type!r} in a pipeline")
            steps = self.steps(child, "")
            if len(steps) != 1:
                raise _needs_shell("A list inside a pipeline")
            stages.extend(steps[0].stages)
        return tuple(stages)

    def _stage(self, node: Node) -> PlanStage:
        words: list[Word] = []
        redirects: list[Redirection] = []
        for child in node.named_children:
            kind = child.type
            if kind == "command_name":
                nodes = child.named_children
            elif kind == "variable_assignment":
                raise _needs_shell(f"The assignment {node_text(child)[:40]!r}")
            elif kind == "file_redirect":
                extra: list[Word] = []
                redirects.extend(self._redirection(child, extra))
                words.extend(extra)
                continue
            elif kind in ("herestring_redirect", "heredoc_redirect"):
                raise _needs_shell("A here-document or here-string")
            else:
                nodes = [child]
            for item in nodes:
                words.extend(self.words(item))
        if not words:
            raise PolicyRejection("No command found to run.")
        if words[0].text == "cd" and self.expander is not None:
            self.expander.pwd = None  # what `$PWD` is after a `cd` is the runner's to know
        return PlanStage(tuple(words), tuple(redirects))

    def _redirection(self, node: Node, extra: list[Word]) -> list[Redirection]:
        """One ``file_redirect`` (``&>`` is two redirections); words the grammar hung after
        its target go to ``extra``."""
        if node.type != "file_redirect":
            raise _needs_shell("A here-document or here-string")
        before = _leaf_before(node)
        if (
            before is not None
            and before.end_byte == node.start_byte
            and node_text(before).isdigit()
        ):
            # `cat 0<f`: the grammar reads the descriptor as an argument, the shell does not.
            raise _needs_shell(f"The redirection {node_text(before)}{node_text(node)[:40]!r}")
        fd: int | None = None
        operator = ""
        target: Node | None = None
        for child in node.children:
            if child.type == "file_descriptor":
                fd = _FDS.get(node_text(child))
                if fd is None:
                    raise _needs_shell(f"The descriptor {node_text(child)!r}")
            elif not child.is_named:
                operator = operator or child.type
            elif target is None:
                target = child
            else:
                extra.extend(self.words(child))
        if target is None:
            raise _needs_shell(f"The redirection {node_text(node)[:40]!r}")
        if operator in (">&", "<&"):
            source = _FDS.get(node_text(target))
            if source is None:
                raise _needs_shell(f"The redirection {node_text(node)[:40]!r}")
            default = 1 if operator == ">&" else 0
            return [Redirection(default if fd is None else fd, RedirectKind.DUP, source=source)]
        made = self.words(target)
        if len(made) != 1:
            raise _needs_shell(f"A redirection to {len(made)} words ({node_text(target)[:40]!r})")
        path = made[0].text
        if made[0].glob:
            raise _needs_shell(f"A pattern as a redirection target ({path!r})")
        if operator in ("&>", "&>>"):
            if fd is not None:
                raise _needs_shell(f"The redirection {node_text(node)[:40]!r}")
            kind = RedirectKind.APPEND if operator == "&>>" else RedirectKind.WRITE
            return [Redirection(1, kind, path), Redirection(2, RedirectKind.DUP, source=1)]
        kinds = {
            "<": (0, RedirectKind.READ),
            ">": (1, RedirectKind.WRITE),
            ">|": (1, RedirectKind.WRITE),
            ">>": (1, RedirectKind.APPEND),
        }
        if operator not in kinds:
            raise _needs_shell(f"The redirection {node_text(node)[:40]!r}")
        default, kind = kinds[operator]
        return [Redirection(default if fd is None else fd, kind, path)]


def _literal_text(node: Node) -> str | None:
    """The value of a word with nothing to expand, or None."""
    try:
        return literal_word(node, first=True)[0]
    except PolicyRejection:
        return None


def _list_parts(node: Node) -> tuple[Node, str, Node]:
    named = [c for c in node.children if c.is_named and c.type != "comment"]
    ops = [c.type for c in node.children if not c.is_named]
    if len(named) != 2 or len(ops) != 1 or ops[0] not in ("&&", "||"):
        raise _needs_shell(f"{node_text(node)[:40]!r}")
    return named[0], ops[0], named[1]


def _leaf_before(node: Node) -> Node | None:
    """The last token before ``node`` in its statement, if any."""
    previous = node.prev_sibling
    while previous is not None and previous.child_count:
        previous = previous.children[-1]
    return previous


def _construct(node: Node) -> str:
    names = {
        "subshell": "A subshell '( )'",
        "compound_statement": "A group '{ }'",
        "for_statement": "A loop",
        "c_style_for_statement": "A loop",
        "while_statement": "A loop",
        "if_statement": "A conditional",
        "case_statement": "A case statement",
        "function_definition": "A function",
        "negated_command": "Negation ('!')",
        "test_command": "A test '[[ ]]'",
        "variable_assignment": "An assignment",
        "declaration_command": "A declaration",
    }
    return names.get(node.type, f"{node_text(node)[:40]!r}")


def simple_words(command: str) -> list[Word]:
    """The argv of one simple command with quotes removed (``~`` expanded, globs flagged).

    Raises PolicyRejection when ``command`` is anything else: a pipeline, a list, a
    redirection, or anything that needs a shell.
    """
    made = plan(command)
    if not made.simple:
        raise PolicyRejection(f"{command.strip()[:60]!r} is not one simple command.")
    return list(made.steps[0].stages[0].words)
