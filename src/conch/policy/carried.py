"""Commands carried inside other commands' words, for the denylist: shell commands in an
interpreter's string literals or argv lists, a known program handed to one that is not
read-only, and shell code handed over as one argument or variable (``tmux new 'CMD'``,
``PAGER='CMD' man``).

Each function takes ``judge``: what the denylist finds catastrophic in a piece of shell text
(a sentence, or None), so this module reads words and the denylist stays the one judge.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from conch.policy.classify import Risk, classify, names
from conch.policy.code_deletes import changes_critical_file, deletes_guarded_tree
from conch.policy.model import Invocation
from conch.policy.wrappers import SHELLS, WRAPPERS, is_interpreter

Judge = Callable[[str], "str | None"]
MKFS = re.compile(r"mkfs(\..*)?|mke2fs|mkswap|wipefs|mkdosfs|mkntfs|newfs(_.*)?")


def quote(text: str) -> str:
    """``text`` as one single-quoted shell word."""
    return "'" + text.replace("'", "'\\''") + "'"


# Code that runs shell commands from a string: system("..."), os.system, backticks, exec.
_STRING_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|`([^`]*)`')


def _program_word(word: str) -> bool:
    """A word naming a program that changes something (what an unknown program may run)."""
    changers = names(Risk.DESTRUCTIVE) | names(Risk.PRIVILEGED) | names(Risk.WRITES)
    return word in changers or word in WRAPPERS or word in SHELLS or word in ("dd", "find")


def interpreter_strings(inv: Invocation, judge: Judge) -> str | None:
    """Shell commands written as string literals in interpreter code (``python -c
    'os.system("...")'``, ``awk 'BEGIN{system("...")}'``, ``perl -e '`...`'``), and library
    calls deleting a guarded tree (``conch.policy.code_deletes``)."""
    if not is_interpreter(inv.name):
        return None
    for arg in inv.args:
        tree = deletes_guarded_tree(arg.text or "")
        if tree is not None:
            return f"{inv.name} code deleting a guarded tree: {tree}"
        changed = changes_critical_file(arg.text or "")
        if changed is not None:
            return f"{inv.name} code changing a system file: {changed}"
        code = (arg.text or "").replace('\\"', '"')  # `exec('os.system(\\"...\\")')`
        literals = _literals(code)
        literals += [inner for outer in literals for inner in _literals(outer)]
        for literal in literals + _PERCENT_X.findall(code):
            if " " in literal and judge(literal):
                return f"{inv.name} code running the shell command {literal[:40]!r}"
        for argv in _literal_lists(arg.text or ""):
            if judge(" ".join(quote(w) for w in argv)):
                return f"{inv.name} code running the command {' '.join(argv)[:40]!r}"
    return None


def _literals(code: str) -> list[str]:
    return [next(g for g in m.groups() if g is not None) for m in _STRING_LITERAL.finditer(code)]


# Ruby's and Perl's command literals: %x(...), qx(...), qx{...}.
_PERCENT_X = re.compile(r"(?:%x|qx)[({\[]([^)}\]]*)[)}\]]")
# Between the string literals of one argv written in code: commas, brackets, parentheses.
_LIST_GLUE = re.compile(r"[\s,\[\]()]*")


def _literal_lists(code: str) -> list[list[str]]:
    """Runs of string literals written as one list or call's arguments (``["rm", "-rf",
    "/"]``, ``execlp("rm", "rm", "-rf", "/")``, ``spawn("rm", ["-rf", "/"])``): the argv a
    library call runs without a shell."""
    runs: list[list[str]] = []
    current: list[str] = []
    end = 0
    for match in _STRING_LITERAL.finditer(code):
        glued = _LIST_GLUE.fullmatch(code[end : match.start()]) is not None
        if current and not glued:
            runs.append(current)
            current = []
        current.append(next(g for g in match.groups() if g is not None))
        end = match.end()
    if current:
        runs.append(current)
    return [run for run in runs if len(run) > 1]


def handed_over(inv: Invocation, judge: Judge) -> str | None:
    """A program that is not read-only handed a known one with its arguments (``strace rm -rf /``,
    ``mywrapper sh -c '...'``): judged as if the known program ran."""
    if inv.name in WRAPPERS or classify(inv) is Risk.READ_ONLY:
        return None
    if is_interpreter(inv.name):
        return None
    texts = inv.texts()
    for i, text in enumerate(texts):
        if text is None:
            return None
        if _program_word(posixpath.basename(text)) or MKFS.fullmatch(posixpath.basename(text)):
            rest = [t for t in texts[i:] if t is not None]
            found = judge(" ".join(quote(t) for t in rest))
            return f"{inv.name} running {text!r}: {found}" if found else None
    return None


def carried(inv: Invocation, judge: Judge) -> str | None:
    """Shell code handed over as one argument to a program that may run it: a terminal or
    multiplexer (``tmux new 'CMD'``, ``xterm -e 'CMD'``), a remote or container shell
    (``ssh host 'CMD'``), a relay (``socat - EXEC:'CMD'``), an editor's or debugger's escape
    (``vim -c ':!CMD'``, ``gdb -ex 'shell CMD'``), or a variable a program runs
    (``PAGER='CMD' man ls``, ``env EDITOR='CMD' crontab -e``). Whatever program it is, an
    argument that reads as a catastrophic command is judged as one; read-only programs only
    print theirs."""
    texts = [a.text for a in inv.assigned_values]
    if inv.name == "env":
        texts += [a.text.split("=", 1)[1] for a in inv.args if a.text and "=" in a.text]
    elif (
        inv.name is not None
        and inv.name not in WRAPPERS
        and not is_interpreter(inv.name)
        and classify(inv) is not Risk.READ_ONLY
    ):
        texts += [a.text for a in inv.args]
    for text in texts:
        if text is None or not any(c.isspace() for c in text):
            continue
        # Code in an editor's or tool's own language (`emacs --eval`, `vim -c 'py3 ...'`).
        code = changes_critical_file(text) or deletes_guarded_tree(text)
        if code is not None:
            return f"{inv.name} given code that does {code}"
        candidates = [text, text.lstrip(":!| ")]
        if text.startswith("-") and not text.startswith("--"):
            candidates.append(text[2:])  # `-e'CMD'`: a short option's attached value
        candidates += [text.split(sep, 1)[1] for sep in "=:" if sep in text]
        candidates += [
            next(g for g in m.groups() if g is not None) for m in _STRING_LITERAL.finditer(text)
        ]
        for candidate in dict.fromkeys(candidates):
            first = candidate.split(maxsplit=1)[0] if candidate.split() else ""
            if set(first) & set("*?["):
                continue  # a list of names (`* *.mp3`), not a command
            if judge(candidate):
                return f"{inv.name} handed the command {candidate[:40]!r}"
    return None
