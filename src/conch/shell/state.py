"""What ``conch shell`` remembers between lines: directory, environment, aliases, shell.

Every shell line runs in a fresh ``$SHELL -c`` child, so a ``cd`` or ``export`` inside it would
die with the child. ``ShellState.builtin`` runs ``cd``, ``export``, ``unset``, ``alias`` and
``unalias`` in-process instead, when the line is just that one builtin. A line that combines a
builtin with anything else (``cd build && make``, ``export A=1; env``, a redirection, a pipe)
runs in the shell as typed, so its ``cd`` or ``export`` does not persist.

Words with expansions (``$VAR``, ``~``, globs, ``$(...)``) are expanded by the user's shell
itself, with the state's directory and environment, so ``cd $OLDPWD/src`` means what bash means.
CDPATH is not consulted.

``ShellState.expand_alias`` expands an alias in the first word of a line (one level, like bash);
the words after the first are left to the shell.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from conch.host.process import run_process

__all__ = [
    "ALIAS_TIMEOUT_S",
    "Outcome",
    "ShellState",
    "find_shell",
    "load_aliases",
    "parse_aliases",
]

#: How long the user's interactive shell may take to list its aliases at start.
ALIAS_TIMEOUT_S = 3.0
#: How long the shell may take to expand the words of an in-process builtin.
EXPAND_TIMEOUT_S = 10.0

_FALLBACK_SHELLS = ("/bin/bash", "/bin/sh")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?=)(.*)", re.S)
_ALIAS_NAME = re.compile(r"[^\s=/$`'\"\\|&;<>()]+")
# Characters that ask the shell to expand a word; quotes and backslashes shlex handles itself.
_EXPANDS = frozenset("$`*?[~{")
_FIRST_WORD = re.compile(r"(\s*)([^\s;|&<>()'\"\\$`]+)(.*)", re.S)
_COMMAND = re.compile(r"\s*(\S+)\s*(.*)", re.S)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How an in-process builtin ended: its exit code and what it printed to each stream."""

    command: str
    exit_code: int
    output: str = ""
    error: str = ""


@dataclass(slots=True)
class ShellState:
    """The shell's state across lines. ``env`` is what every child gets; ``PWD`` and ``OLDPWD``
    in it follow ``cwd`` and ``oldpwd``. The Python process's own directory is never changed."""

    cwd: str
    env: dict[str, str]
    shell: str
    aliases: dict[str, str] = field(default_factory=dict)
    oldpwd: str | None = None

    @classmethod
    def from_environment(
        cls, environ: Mapping[str, str] | None = None, cwd: str | None = None
    ) -> ShellState:
        """A state starting from a copy of ``environ`` (default ``os.environ``) in ``cwd``
        (default the current directory). Aliases start empty: see ``load_aliases``."""
        env = dict(os.environ if environ is None else environ)
        here = os.path.abspath(cwd if cwd is not None else os.getcwd())
        env["PWD"] = here
        return cls(cwd=here, env=env, shell=find_shell(env), oldpwd=env.get("OLDPWD") or None)

    @classmethod
    def of_user(cls, environ: Mapping[str, str], cwd: str) -> ShellState:
        """The state ``conch shell`` starts with: ``from_environment``, and the aliases the
        user's interactive shell defines, read once (``load_aliases``)."""
        state = cls.from_environment(environ, cwd)
        state.aliases = load_aliases(state.shell, state.env)
        return state

    def expand_alias(self, line: str) -> str:
        """``line`` with an alias in its first word replaced by the alias's value (one level)."""
        match = _FIRST_WORD.match(line)
        if match is None or match.group(2) not in self.aliases:
            return line
        lead, name, rest = match.groups()
        if rest and not rest[0].isspace() and rest[0] not in ";|&<>()":
            return line  # `ll"x"` or `ll$x` is a different word
        return f"{lead}{self.aliases[name]}{rest}"

    def builtin(self, line: str) -> Outcome | None:
        """Run ``line`` in-process when it is exactly one of the stateful builtins; None when
        it must run in the shell (another command, an operator, or words the shell could not
        expand)."""
        words = _simple_words(line)
        if not words or words[0] not in _BUILTINS:
            return None
        match = _COMMAND.match(line)
        if match is None or match.group(1) != words[0]:
            return None  # a quoted or escaped command word: leave it to the shell
        args = words[1:]
        if any(ch in _EXPANDS for ch in match.group(2)):
            expanded = self._expand(match.group(2))
            if expanded is None:
                return None
            args = expanded
        return _BUILTINS[words[0]](self, line.strip(), args)

    def home(self) -> str | None:
        """The home directory this state's shell would use."""
        return self.env.get("HOME") or None

    def _expand(self, text: str) -> list[str] | None:
        # A leading `_` tells "no words" apart from "one empty word".
        argv = [self.shell, "-c", f"printf '%s\\0' _ {text}"]
        out = _capture(argv, self.cwd, self.env, EXPAND_TIMEOUT_S)
        if out is None or not out.startswith("_\0"):
            return None
        return out[2:].split("\0")[:-1]


def find_shell(env: Mapping[str, str]) -> str:
    """The user's shell: ``$SHELL`` when it names a runnable file, else bash, else sh."""
    for candidate in (env.get("SHELL", ""), *_FALLBACK_SHELLS):
        if os.path.isabs(candidate) and _runnable(candidate):
            return candidate
    return _FALLBACK_SHELLS[-1]


def _runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def load_aliases(
    shell: str, env: Mapping[str, str] | None = None, timeout: float = ALIAS_TIMEOUT_S
) -> dict[str, str]:
    """The aliases the user's interactive shell defines (``$SHELL -ic alias``), or an empty
    dict when the shell fails, prints nothing usable or takes longer than ``timeout``."""
    out = _capture(
        [shell, "-ic", "alias"], os.getcwd(), os.environ if env is None else env, timeout
    )
    return parse_aliases(out) if out else {}


def parse_aliases(text: str) -> dict[str, str]:
    """Aliases from the output of ``alias``: bash's ``alias ll='ls -l'`` or zsh's
    ``ll='ls -l'`` lines. Lines that are neither are skipped."""
    aliases: dict[str, str] = {}
    for line in text.splitlines():
        try:
            words = shlex.split(line)
        except ValueError:
            continue
        if words[:1] == ["alias"]:
            words = words[1:]
        if len(words) != 1 or "=" not in words[0]:
            continue
        name, value = words[0].split("=", 1)
        if _ALIAS_NAME.fullmatch(name):
            aliases[name] = value
    return aliases


def _capture(argv: list[str], cwd: str, env: Mapping[str, str], timeout: float) -> str | None:
    """stdout of ``argv``, or None when it fails, cannot start or outlives ``timeout``.

    ``run_process`` starts it in a session of its own (an interactive shell must not take
    over our terminal) and kills the whole group on timeout (a grandchild holding the pipe
    must not keep us waiting)."""
    try:
        done = run_process(
            argv, cwd=cwd, env=env, timeout=timeout, stderr="discard", kill_grace=0.0
        )
    except OSError:
        return None
    if done.timed_out or done.exit_code != 0:
        return None
    return done.stdout.decode("utf-8", "replace")


def _simple_words(line: str) -> list[str] | None:
    """The words of a line that is one simple command, or None (operators, newlines, bad
    quoting)."""
    if "\n" in line or "\r" in line:
        return None
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        words = list(lexer)
    except ValueError:
        return None
    if any(word and all(ch in lexer.punctuation_chars for ch in word) for word in words):
        return None
    return words


def _cd(state: ShellState, command: str, args: list[str]) -> Outcome:
    physical = False
    while args and args[0] in ("-L", "-P", "--"):
        physical = physical or args[0] == "-P"
        if args.pop(0) == "--":
            break
    if len(args) > 1:
        return Outcome(command, 1, error="cd: too many arguments\n")
    printed = False
    if not args:
        target = state.home()
        if target is None:
            return Outcome(command, 1, error="cd: HOME not set\n")
    elif args[0] == "-":
        if state.oldpwd is None:
            return Outcome(command, 1, error="cd: OLDPWD not set\n")
        target, printed = state.oldpwd, True
    else:
        target = args[0]
    if target == "":
        return Outcome(command, 0)
    new = os.path.normpath(os.path.join(state.cwd, target))
    if physical:
        new = os.path.realpath(new)
    problem = _not_enterable(new)
    if problem:
        return Outcome(command, 1, error=f"cd: {target}: {problem}\n")
    state.oldpwd, state.cwd = state.cwd, new
    state.env["OLDPWD"], state.env["PWD"] = state.oldpwd, new
    return Outcome(command, 0, output=f"{new}\n" if printed else "")


def _not_enterable(path: str) -> str:
    if not os.path.exists(path):
        return "No such file or directory"
    if not os.path.isdir(path):
        return "Not a directory"
    if not os.access(path, os.X_OK):
        return "Permission denied"
    return ""


def _export(state: ShellState, command: str, args: list[str]) -> Outcome | None:
    parsed = _options(args, "-p")
    if parsed is None:
        return None  # `export -n`, `export -f`: the shell's business
    listing, names = parsed
    if listing or not names:
        return None  # the shell lists the environment it was given, which is ``state.env``
    errors: list[str] = []
    for arg in names:
        match = _ASSIGNMENT.fullmatch(arg)
        if match:
            name, operator, value = match.groups()
            state.env[name] = state.env.get(name, "") + value if operator == "+=" else value
        elif not _NAME.fullmatch(arg):
            errors.append(f"export: `{arg}': not a valid identifier\n")
        # `export NAME` alone marks a variable for export: every variable here already is.
    return Outcome(command, 1 if errors else 0, error="".join(errors))


def _unset(state: ShellState, command: str, args: list[str]) -> Outcome | None:
    parsed = _options(args, "-v")
    if parsed is None:
        return None  # `unset -f` removes shell functions, which live in the shell
    errors: list[str] = []
    for name in parsed[1]:
        if _NAME.fullmatch(name):
            state.env.pop(name, None)
        else:
            errors.append(f"unset: `{name}': not a valid identifier\n")
    return Outcome(command, 1 if errors else 0, error="".join(errors))


def _alias(state: ShellState, command: str, args: list[str]) -> Outcome | None:
    parsed = _options(args, "-p")
    if parsed is None:
        return None
    listing, words = parsed
    if listing or not words:
        text = "".join(_alias_line(k, v) for k, v in sorted(state.aliases.items()))
        return Outcome(command, 0, output=text)
    output: list[str] = []
    errors: list[str] = []
    for arg in words:
        name, equals, value = arg.partition("=")
        if equals and _ALIAS_NAME.fullmatch(name):
            state.aliases[name] = value
        elif equals:
            errors.append(f"alias: `{name}': invalid alias name\n")
        elif name in state.aliases:
            output.append(_alias_line(name, state.aliases[name]))
        else:
            errors.append(f"alias: {name}: not found\n")
    return Outcome(command, 1 if errors else 0, "".join(output), "".join(errors))


def _unalias(state: ShellState, command: str, args: list[str]) -> Outcome | None:
    parsed = _options(args, "-a")
    if parsed is None:
        return None
    everything, names = parsed
    if everything:
        state.aliases.clear()
        return Outcome(command, 0)
    if not names:
        return None  # the shell prints the usage
    errors = [f"unalias: {name}: not found\n" for name in names if name not in state.aliases]
    for name in names:
        state.aliases.pop(name, None)
    return Outcome(command, 1 if errors else 0, error="".join(errors))


def _options(args: list[str], known: str) -> tuple[bool, list[str]] | None:
    """Whether the one supported option was given, and the words after the options; None for
    any other option."""
    given = False
    while args and args[0].startswith("-") and args[0] != "-":
        if args[0] == "--":
            return given, args[1:]
        if args[0] != known:
            return None
        given, args = True, args[1:]
    return given, args


def _alias_line(name: str, value: str) -> str:
    quoted = value.replace("'", "'\\''")
    return f"alias {name}='{quoted}'\n"


_BUILTINS: dict[str, Callable[[ShellState, str, list[str]], Outcome | None]] = {
    "cd": _cd,
    "export": _export,
    "unset": _unset,
    "alias": _alias,
    "unalias": _unalias,
}
