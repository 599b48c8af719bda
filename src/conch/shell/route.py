"""Where a line typed into ``conch shell`` goes: the shell, the model, a meta command, nowhere.

``route`` is a pure function. It parses the line with the policy's shell parser and is told
which command names exist; ``known_commands`` builds that view from the real PATH, lazily.

The order of the checks:

1. A blank line goes nowhere.
2. ``:name ...`` is a meta command for the shell itself (``conch.shell.meta``, whose table
   also sends ``:exec CMD`` to the shell and ``:ask TEXT`` to the model: ``meta.routed``).
3. ``$ cmd`` and ``!cmd`` force the shell; ``> text`` and ``? text`` force the model.
4. Otherwise the line runs in the shell when its first word is a command (a builtin, an alias, a
   function, a program on PATH, or a path to a program), the line parses as shell, and the words
   after the command do not read as an English sentence. Everything else goes to the model.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from conch.policy.commands import analyse
from conch.policy.model import Invocation

__all__ = ["BUILTINS", "Route", "Target", "flip", "known_commands", "route"]

Target = Literal["shell", "model", "meta", "empty"]

#: bash's builtins (POSIX special builtins included) and the ``time`` keyword: commands that
#: need not be on PATH.
BUILTINS: tuple[str, ...] = (
    *(".", ":", "[", "[[", "alias", "bg", "bind", "break", "builtin", "caller", "cd"),
    *("command", "compgen", "complete", "compopt", "continue", "declare", "dirs", "disown"),
    *("echo", "enable", "eval", "exec", "exit", "export", "false", "fc", "fg", "getopts"),
    *("hash", "help", "history", "jobs", "kill", "let", "local", "logout", "mapfile", "popd"),
    *("printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "set", "shift"),
    *("shopt", "source", "suspend", "test", "times", "trap", "true", "type", "typeset"),
    *("time", "ulimit", "umask", "unalias", "unset", "wait"),
)


@dataclass(frozen=True, slots=True)
class Route:
    """Where a line goes and why.

    ``text`` is what to send: the line without its forcing prefix, or for a meta command its
    name and arguments without the colon (``"model fast"``). ``forced`` is true when the user
    chose the target (a prefix, ``:exec``/``:ask``, or sending the line the other way).
    """

    target: Target
    text: str
    forced: bool
    reason: str


_META = re.compile(r":([A-Za-z][\w-]*)(?=\s|$)")
_PATH_LIKE = ("./", "../", "/", "~/")
# echo and printf take text to print, so English after them is still a shell line.
_TEXT_COMMANDS = frozenset({"echo", "printf"})
# A bare `yes` is far more often a reply to the model than the endless `yes` program.
_REPLIES = frozenset({"yes"})


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that rarely appear as arguments of a command but often in a sentence.
_STRONG = _words(
    "the me my mine myself i you your we our us please what how why when where who whom whose "
    "which is are was were be been do does did can could would should will shall must might "
    "that this these those of it its them they their some every each than because if not to "
    "into about in by"
)
# Words that read as English but are also real arguments (`make all`, `docker compose up`).
_WEAK = _words("a an all and or for with from at on off up out here there then so any just")
# Flags, paths, globs, quotes, expansions, operators, numbers, file names with an extension.
_SHELLISH = re.compile(r"""^-|[/~=$*\[\]{}@:%+\\"'`<>|&;()0-9]|\.(?=.)|^\.+$""")
_PLAIN = re.compile(r"[a-z]+")
_MANY_PLAIN_WORDS = 4


def route(line: str, known: Container[str]) -> Route:
    """Decide where ``line`` goes. ``known`` holds the command names of this shell (builtins,
    aliases, functions and programs on PATH); ``route`` never looks anything up itself."""
    text = line.strip()
    if not text:
        return Route("empty", "", False, "empty line")
    meta = _META.match(text)
    if meta:
        return Route("meta", text[1:], False, f"meta command ':{meta.group(1)}'")
    if text[0] in "!>?" or (text[0] == "$" and (len(text) == 1 or text[1].isspace())):
        return _forced("model" if text[0] in ">?" else "shell", text[1:].strip(), text[0])
    return _natural(text, known)


def flip(sent: Route) -> Route:
    """The same text sent the other way (shell <-> model), forced: what Alt+Enter sends.

    Meta commands and empty lines have no other way and come back unchanged.
    """
    if sent.target == "shell":
        return Route("model", sent.text, True, "sent to the model instead of the shell")
    if sent.target == "model":
        return Route("shell", sent.text, True, "sent to the shell instead of the model")
    return sent


def known_commands(
    aliases: Iterable[str] = (), functions: Iterable[str] = (), path: str | None = None
) -> Container[str]:
    """The command names of this shell, for ``route``: bash's builtins (``BUILTINS``), the
    given aliases and functions, and executables on ``path`` (default: ``$PATH`` at lookup).

    Programs are looked up on PATH only when asked about, and each answer is remembered, so
    build a new view when PATH changes.
    """
    return _KnownCommands(frozenset((*BUILTINS, *aliases, *functions)), path)


class _KnownCommands:
    """Fixed names plus a remembered PATH lookup per name."""

    def __init__(self, names: frozenset[str], path: str | None) -> None:
        self._names = names
        self._path = path
        self._on_path: dict[str, bool] = {}

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str) or not name:
            return False
        if name in self._names:
            return True
        if "/" in name:  # a path names a file, not a command to look up
            return False
        if name not in self._on_path:
            self._on_path[name] = shutil.which(name, path=self._path) is not None
        return self._on_path[name]


def _forced(target: Target, text: str, prefix: str) -> Route:
    if not text:
        return Route("empty", "", True, f"nothing after {prefix!r}")
    where = "shell" if target == "shell" else "model"
    return Route(target, text, True, f"forced to the {where} by {prefix!r}")


def _natural(text: str, known: Container[str]) -> Route:
    try:
        analysis = analyse(text)
    except RecursionError:  # nested deeply enough to exhaust the stack: not a line to run
        return Route("model", text, False, "the line does not parse as shell")
    if not analysis.invocations:
        if analysis.failures:
            return Route("model", text, False, "the line does not parse as shell")
        return Route("shell", text, False, "no command, but the line parses as shell")
    first = analysis.invocations[0]
    word = first.raw_name
    if not _is_command(first, known):
        return Route("model", text, False, f"first word {word!r} is not a command")
    if analysis.failures:
        return Route(
            "model",
            text,
            False,
            f"first word {word!r} is a command, but the line does not parse as shell",
        )
    if text in _REPLIES:
        return Route("model", text, False, f"a bare {text!r} reads as a reply")
    if first.name not in _TEXT_COMMANDS and _reads_as_sentence(
        [a.raw for a in first.args], len(analysis.operators)
    ):
        return Route(
            "model",
            text,
            False,
            f"first word {word!r} is a command, but the line reads as a sentence",
        )
    return Route("shell", text, False, f"first word {word!r} is a command and the line parses")


def _is_command(first: Invocation, known: Container[str]) -> bool:
    if first.name is None:  # `$EDITOR file`: a name that expands at run time
        return True
    return first.raw_name.startswith(_PATH_LIKE) or first.raw_name in known


def _reads_as_sentence(args: Sequence[str], operators: int) -> bool:
    """Whether the words after the command read as English rather than as arguments.

    Function words, pronouns and sentence punctuation count for English; flags, paths, globs,
    quotes, numbers and shell operators count against it. A line with no English at all is
    never a sentence, and a tie goes to English: real arguments rarely contain these words.
    """
    english = 0.0
    shellish = float(operators)
    plain = 0
    for index, raw in enumerate(args):
        word = raw.rstrip("?,.!")
        punctuation = raw[len(word) :]
        if not word or _SHELLISH.search(word):
            shellish += 1
            continue
        lower = word.lower()
        if lower in _STRONG:
            english += 1
        elif lower in _WEAK:
            english += 0.5
        if _PLAIN.fullmatch(word):
            plain += 1
        if "?" in punctuation and index == len(args) - 1:
            english += 1
        elif punctuation:
            english += 0.5
    if plain >= _MANY_PLAIN_WORDS:
        english += 0.5
    return english >= 1 and english >= shellish
