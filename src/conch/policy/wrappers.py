"""Commands that run other commands: how to find the command inside ``sudo``, ``xargs``...

Each wrapper's options are read with its option table (conch.policy.options: which options
take a value, GNU abbreviations resolved), so ``sudo -u root rm`` finds ``rm`` and not
``root``, and ``timeout --sig KILL 5 rm`` finds ``rm`` and not ``5``.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from conch.policy.model import Arg, Invocation
from conch.policy.options import command_start, read, table

SHELLS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "fish", "csh", "tcsh", "rbash"}
)
_INTERPRETER = re.compile(
    r"(python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node|nodejs|deno|bun|php[0-9.]*|lua[0-9.]*"
    r"|luajit|Rscript|R|tclsh|wish|osascript|pwsh|powershell|awk|gawk|mawk|nawk|jshell|irb|ghci"
    r"|julia|groovy|kotlin|kotlinc|scala|elixir|erl|escript|guile|racket|sbcl|clisp|ocaml"
    r"|raku|perl6|rakudo|gjs|qjs|tsx|ts-node|janet|fennel|hy|bb|clojure|clj|octave|sage)"
)


def is_interpreter(name: str | None) -> bool:
    """True for language interpreters that run code from an argument, a file or stdin."""
    return name is not None and _INTERPRETER.fullmatch(name) is not None


@dataclass(slots=True)
class Unwrapped:
    """What a wrapper runs: an argv, shell source text, or nothing that can be known."""

    argv: list[Arg] | None = None
    script: list[Arg] = field(default_factory=list)  # joined with spaces, then parsed as shell
    execs: list[list[Arg]] = field(default_factory=list)
    stdin_args: bool = False


@dataclass(frozen=True, slots=True)
class _Spec:
    short_values: str = ""  # short options that take a separate or attached value
    long_values: frozenset[str] = frozenset()


# Programs that run the command in their operands; their options (which take a value, so
# `sudo -u root rm` finds `rm` and not `root`) come from their option tables (conch.policy.options).
_RUNNERS = frozenset(
    {"sudo", "doas", "pkexec", "runuser", "env", "nohup", "coproc", "setsid", "unbuffer"}
    | {"time", "timeout", "nice", "ionice", "stdbuf", "command", "builtin", "exec", "chroot"}
    | {"flock", "xargs", "watch", "parallel", "sem"}
)
# Programs that run a shell string given with -c, wherever it stands.
_DASH_C = frozenset({"script", "sg", "flock"})
WRAPPERS = _RUNNERS | {"busybox", "eval", "su", "find", "toybox", "alias"} | _DASH_C | SHELLS
# Shells of other languages: their -c code is read as shell code for the denylist only (the
# program stays unknown).
FOREIGN_SHELLS = frozenset(
    {"nu", "xonsh", "elvish", "pwsh", "powershell", "osh", "ysh", "oil", "ion", "murex"}
)
# Programs whose options or `+` commands carry a command they run through a shell: a pager
# (`git -c core.pager=CMD`, `man -P CMD`), an alias (`git -c alias.x=!CMD`), a checkpoint
# action (`tar --checkpoint-action=exec=CMD`), an escape (`less +!CMD`, `dc -e '!CMD'`), or a
# command per result (`fd -x CMD`).
CODE_IN_OPTIONS = frozenset({"git", "tar", "man", "less", "more", "dc", "fd", "fdfind"})
_GIT_COMMAND_KEY = re.compile(
    r"(^|\.)(pager|editor|sshcommand|external|program|textconv|askpass|fsmonitor|clean"
    r"|smudge|process|helper|cmd|command|tool|path)$|^pager\.",
    re.IGNORECASE,
)
# Programs that read shell commands from stdin (`echo CMD | at now`, `parallel` without a
# command), besides the shells.
STDIN_SHELLS = frozenset({"at", "batch", "parallel", "sem"})
_PARALLEL_ARGS = frozenset({":::", "::::", ":::+", "::::+"})
_PLACEHOLDER = re.compile(r"\{[0-9]*[./#%]*/?\.?\}")
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _skip_options(args: list[Arg], spec: _Spec) -> tuple[int, set[str]]:
    """Index of the first operand after the options, and the flags seen (``-c``, ``--x``)."""
    flags: set[str] = set()
    i = 0
    while i < len(args):
        text = args[i].text
        if text is None or not text.startswith("-") or text == "-":
            break
        if text == "--":
            return i + 1, flags
        if text.startswith("--"):
            key = text.split("=", 1)[0]
            flags.add(key)
            i += 2 if key in spec.long_values and "=" not in text else 1
            continue
        letters = text[1:]
        consumed = 1
        for pos, letter in enumerate(letters):
            flags.add("-" + letter)
            if letter in spec.short_values:
                if pos == len(letters) - 1:
                    consumed = 2  # value is the next word
                break
        i += consumed
    return i, flags


def _shell(args: list[Arg]) -> Unwrapped:
    """``sh -c STRING``: the string is shell source; ``-o opt``/``-O opt`` take a value.
    fish also takes ``--command STRING``, ``--command=STRING`` and ``-C``/``--init-command``."""
    for i, arg in enumerate(args):
        text = arg.text or ""
        if text.startswith(("--command=", "--init-command=")):
            return Unwrapped(script=[Arg(arg.raw, text.split("=", 1)[1])])
        if text in ("--command", "--init-command", "-C") and i + 1 < len(args):
            return Unwrapped(script=[args[i + 1]])
    spec = _Spec("oO", frozenset({"--rcfile", "--init-file"}))
    index, flags = _skip_options(args, spec)
    if "-c" in flags and index < len(args):
        return Unwrapped(script=[_positional(args[index], args[index + 1 :])])
    return Unwrapped()


_POSITIONAL = re.compile(r'"\$([@*]|\{?[0-9]\}?)"|\$\{?([@*0-9])\}?')


def _positional(script: Arg, given: list[Arg]) -> Arg:
    """``sh -c 'rm -rf "$1"' _ DIR``: the arguments after the script are ``$0``, ``$1``...;
    they are put in its text (as they were written) so the policy reads what it runs."""
    if script.text is None or not given or any(a.text is None for a in given):
        return script

    def value(match: re.Match[str]) -> str:
        name = (match.group(1) or match.group(2) or "").strip("{}")
        if name in ("@", "*"):
            return " ".join(a.raw for a in given[1:])
        number = int(name)
        return given[number].raw if number < len(given) else "''"

    text = _POSITIONAL.sub(value, script.text)
    return Arg(script.raw, text)


def _foreign_shell(args: list[Arg]) -> Unwrapped:
    """``nu -c CODE``, ``pwsh -Command CODE``, ``xonsh --command=CODE``."""
    for i, arg in enumerate(args):
        text = arg.text or ""
        if text.lower().startswith("--command="):
            return Unwrapped(script=[Arg(arg.raw, text.split("=", 1)[1])])
        if text.lower() in ("-c", "--command", "-command", "-e", "--execute") and i + 1 < len(args):
            return Unwrapped(script=[args[i + 1]])
    return Unwrapped()


def _option_code(name: str, args: list[Arg]) -> Unwrapped:
    """The shell code and commands a program's options make it run (see CODE_IN_OPTIONS)."""
    found = table(name)
    if found is None:
        return Unwrapped()
    reading = read(found, [a.text for a in args])
    code: list[str | None] = []
    if name == "git":
        for setting in reading.values("-c"):
            key, _, value = (setting or "").partition("=")
            if setting is None or value.startswith("!"):
                code.append(None if setting is None else value[1:])
            elif _GIT_COMMAND_KEY.search(key):
                code.append(value)
    elif name == "tar":
        actions = reading.values("--checkpoint-action")
        code += [a[5:] if a else None for a in actions if a is None or a.startswith("exec=")]
        code += reading.values(
            "--to-command", "--use-compress-program", "-I", "--info-script", "-F"
        )
        code += reading.values("--new-volume-script", "--rsh-command", "--rmt-command")
    elif name == "man":
        code += [v for v in reading.values("-P", "--pager", "-H", "--html") if v != ""]
    elif name in ("less", "more"):
        code += [w[2:] for w in reading.plus if w[1:2] in ("!", "|")]
    elif name == "dc":
        for script in reading.scripts:
            code += [line.split("!", 1)[1] for line in (script or "!").splitlines() if "!" in line]
    out = Unwrapped(script=[_join([Arg(c or "$?", c) for c in code], "\n")] if code else [])
    if name in ("fd", "fdfind"):
        for i, arg in enumerate(args):
            if arg.text in ("-x", "-X", "--exec", "--exec-batch"):
                end = next((j for j in range(i + 1, len(args)) if args[j].text == ";"), len(args))
                if end > i + 1:
                    out.execs.append(args[i + 1 : end])
    return out


def _switch_user(name: str, args: list[Arg]) -> Unwrapped | None:
    """``su -c CMD``, ``su -c'CMD'``, ``runuser -l USER -c CMD``, ``--command=CMD``,
    ``--session-command CMD``: CMD is shell code (None: no such option)."""
    found = table(name)
    if found is None:
        return None
    # Read to the end: su's operands (USER, then the shell's arguments) are not a command.
    whole = dataclasses.replace(found, command=None, permute=True)
    reading = read(whole, [a.text for a in args])
    scripts = reading.values("-c", "--command", "--session-command")
    if not scripts:
        return None
    return Unwrapped(script=[Arg(s if s is not None else "$?", s) for s in scripts[:1]])


def _find(args: list[Arg]) -> Unwrapped:
    out = Unwrapped()
    i = 0
    while i < len(args):
        if args[i].text in _FIND_EXEC:
            j = i + 1
            while j < len(args) and args[j].text not in (";", "+"):
                j += 1
            if j > i + 1:
                out.execs.append(args[i + 1 : j])
            i = j
        i += 1
    return out


def _dash_c(args: list[Arg]) -> Unwrapped:
    """``script -c CMD``, ``sg GROUP -c CMD``, ``flock FILE -c CMD``: CMD is shell code."""
    for i, arg in enumerate(args):
        text = arg.text or ""
        if text in ("-c", "--command") and i + 1 < len(args):
            return Unwrapped(script=[args[i + 1]])
        if text.startswith("--command="):
            return Unwrapped(script=[Arg(arg.raw, text.split("=", 1)[1])])
        short = text.startswith("-") and not text.startswith("--") and text.endswith("c")
        if short and i + 1 < len(args):
            return Unwrapped(script=[args[i + 1]])
    return Unwrapped()


def _parallel(args: list[Arg], index: int) -> Unwrapped:
    """GNU parallel: ``parallel [opts] CMD ::: ARGS`` runs CMD once per argument through a
    shell (``{}`` stands for the argument, else it is appended); without ``:::`` the
    arguments come from stdin; without CMD each argument (or stdin line) is a command."""
    rest = args[index:]
    split = next((i for i, a in enumerate(rest) if a.text in _PARALLEL_ARGS), len(rest))
    command, values = rest[:split], [a for a in rest[split + 1 :] if a.text not in _PARALLEL_ARGS]
    if not command:
        return Unwrapped(script=[_join(values, "\n")]) if values else Unwrapped()
    text = " ".join(a.text if a.text is not None else a.raw for a in command)
    if not values:
        known_command = all(a.text is not None for a in command)
        return Unwrapped(script=[Arg(text, text if known_command else None)], stdin_args=True)
    runs = []
    for value in values:
        word = value.text if value.text is not None else value.raw
        quoted = "'" + word.replace("'", "'\\''") + "'"
        runs.append(
            _PLACEHOLDER.sub(quoted, text) if _PLACEHOLDER.search(text) else f"{text} {quoted}"
        )
    joined = "\n".join(runs)
    known = all(a.text is not None for a in (*command, *values))
    return Unwrapped(script=[Arg(joined, joined if known else None)])


def _join(values: list[Arg], sep: str) -> Arg:
    text = sep.join(a.text if a.text is not None else a.raw for a in values)
    return Arg(text, text if all(a.text is not None for a in values) else None)


def unwrap(name: str, args: list[Arg]) -> Unwrapped:
    """What the wrapper ``name`` runs given its ``args`` (empty result when it runs nothing)."""
    if name in SHELLS:
        return _shell(args)
    if name in FOREIGN_SHELLS:
        return _foreign_shell(args)
    if name in CODE_IN_OPTIONS:
        return _option_code(name, args)
    if name in _DASH_C:
        found = _dash_c(args)
        if found.script or name != "flock":
            return found
    if name == "alias":
        # An alias body is shell code that runs wherever the alias name is used.
        bodies = [Arg(a.raw, a.text.split("=", 1)[1]) for a in args if a.text and "=" in a.text]
        return Unwrapped(script=[_join(bodies, "\n")]) if bodies else Unwrapped()
    if name == "find":
        return _find(args)
    if name in ("busybox", "toybox"):
        return Unwrapped(argv=args or None)
    if name == "eval":
        return Unwrapped(script=args)
    if name in ("su", "runuser"):
        switched = _switch_user(name, args)
        if switched is not None or name == "su":
            return switched or Unwrapped()
    read = command_start(name, [a.text for a in args])
    if read is None:
        return Unwrapped()
    start, flags, reading = read
    index = len(args) if start is None else start
    if name in ("parallel", "sem"):
        return _parallel(args, index)
    if name == "command" and flags & {"-v", "-V"}:
        return Unwrapped()  # only looks the name up
    if name == "env":
        for arg in args[:index]:
            text = arg.text or ""
            # `env -S'CMD'` and `env --split-string=CMD` carry the string in the same word.
            if text.startswith("--split-string="):
                return Unwrapped(script=[Arg(arg.raw, text.split("=", 1)[1]), *args[index:]])
            if text.startswith("-S") and len(text) > 2:
                return Unwrapped(script=[Arg(arg.raw, text[2:]), *args[index:]])
        strings = reading.values("-S", "--split-string")
        if strings:
            value = strings[0]
            return Unwrapped(script=[Arg(value or "$?", value), *args[index:]])
    if name == "flock" and flags & {"-c", "--command"}:
        return Unwrapped(script=args[index + 1 :])
    if name == "watch" and not flags & {"-x", "--exec"}:
        return Unwrapped(script=args[index:])
    rest = args[index:] or None
    if name == "xargs":
        return Unwrapped(argv=rest or [Arg("echo", "echo")], stdin_args=True)
    return Unwrapped(argv=rest)


def reads_code_from_stdin(inv: Invocation) -> bool:
    """True when a shell or interpreter would take its program from stdin."""
    texts = inv.texts()
    if inv.name in ("at", "batch"):
        return not any(t is None or t.startswith(("-f", "-l", "-d", "-r", "-c")) for t in texts)
    if inv.name in ("parallel", "sem"):
        found = command_start(inv.name, inv.texts())
        return found is None or found[0] is None  # no command: each stdin line is one
    if inv.name in ("source", "."):
        return bool(texts) and texts[0] in ("/dev/stdin", "-", "/proc/self/fd/0", "/dev/fd/0")
    if inv.name not in SHELLS and not is_interpreter(inv.name):
        return False
    if inv.name in ("awk", "gawk", "mawk", "nawk"):
        return False  # awk's program is always an argument or -f file
    for arg in inv.args:
        text = arg.text
        if text is None:
            return False
        if text in ("-", "/dev/stdin", "-s"):
            return True
        if text in ("-c", "-e", "-E", "-m", "-r") or (
            text.startswith("-") and not text.startswith("--") and "c" in text[1:]
        ):
            return False
        if not text.startswith(("-", "+")):
            return False  # a script file
    return True
