"""Risk classes per program, judged on every argument (default-deny).

A program is read-only only when the program and every argument match a read-only form of its
option table (``data/programs.yaml``, read by conch.policy.options); an option the table does
not list makes it at least a write, and a program in no table is ``unknown``.
"""

from __future__ import annotations

import posixpath
import re
from functools import cache
from typing import Any

from conch.policy import options
from conch.policy.model import Arg, Invocation, Redirect
from conch.policy.risk import RISK_ORDER, Risk, highest
from conch.policy.scripts import CHECKS
from conch.policy.wrappers import SHELLS, is_interpreter

__all__ = ["RISK_ORDER", "Risk", "classify", "explain", "highest", "names", "redirect_risk"]


@cache
def names(risk: Risk) -> frozenset[str]:
    """The programs whose plain form has ``risk``: the fixed ones, and the tables' programs
    whose listed forms have it (for read-only: some form of the program is read-only)."""
    found = {name for name, fixed in options.tables().fixed.items() if fixed is risk}
    for name, table in options.tables().programs.items():
        plain = Risk.READ_ONLY if table.reads_with or table.subcommands else table.risk
        if plain is risk:
            found.add(name)
    return frozenset(found)


def __getattr__(attribute: str) -> Any:
    # READ_ONLY, WRITES... as module attributes, loaded on first use.
    if attribute in ("READ_ONLY", "WRITES", "DESTRUCTIVE", "PRIVILEGED", "NETWORK"):
        return names(Risk[attribute])
    raise AttributeError(attribute)


def _environment(variables: list[str] | tuple[str, ...]) -> list[tuple[Risk, str]]:
    """Variables set for a command: any but the harmless ones may make it run code
    (``PAGER``, ``LESSOPEN``, ``GIT_EXTERNAL_DIFF``, ``LD_PRELOAD``, ``BASH_ENV``...)."""
    tables = options.tables()
    return [
        (Risk.UNKNOWN, f"it sets {name}, which may change what the program runs")
        for name in variables
        if not tables.harmless(name)
    ]


def explain(inv: Invocation) -> list[tuple[Risk, str]]:
    """The risks of one invocation with why, most severe first (empty: read-only)."""
    name = inv.name
    if name is None or name == "":
        return [(Risk.UNKNOWN, "the program is only known at run time")]
    texts = [_word(arg) for arg in inv.args]
    found = _environment(inv.assignments)
    if not _system_program(inv.raw_name):
        found.append((Risk.UNKNOWN, f"it runs the file {inv.raw_name}, which may be any program"))
    found += _side_effects(name, texts)
    if name in SHELLS:
        literal = [t for t in texts if t is not None]
        # With -c the code itself was parsed and is judged command by command.
        runs_string = _dash_c(literal) and any(not t.startswith("-") for t in literal)
        if not runs_string:
            found.append((Risk.UNKNOWN, f"{name} runs a script or reads one"))
    elif (table := options.table(name)) is not None:
        reading = options.read(table, texts)
        for check in reading.table.checks:
            found += CHECKS[check](reading)
        found += _environment(reading.assignments)
        final = reading.table
        if final.risk is not Risk.READ_ONLY and not final.reads_with:
            found.append((final.risk, " ".join(reading.path)))
        found += [(risk, why) for risk, why in reading.risks if risk is not Risk.READ_ONLY]
        if name in ("xargs", "parallel", "sem") and _unbounded(texts):
            found.append((Risk.UNKNOWN, "as many processes at once as there is input"))
    elif (fixed := options.tables().fixed.get(name)) is not None:
        found.append((fixed, name))
    elif name.startswith("mkfs"):
        found.append((Risk.DESTRUCTIVE, name))
    else:
        what = "an interpreter runs code" if is_interpreter(name) else "a program with no table"
        found.append((Risk.UNKNOWN, what))
    if inv.stdin_args and not inv.stdin_judged:
        found.append((Risk.UNKNOWN, "xargs adds words from its input, which may be options"))
    found = [(risk, why) for risk, why in found if risk is not Risk.READ_ONLY]
    return sorted(found, key=lambda f: -RISK_ORDER.index(f[0]))


# Where the programs the tables describe are installed; a program named by a path elsewhere
# (`./ls`, `/tmp/cat`, `~/bin/git`) is whatever file is there.
_SYSTEM_BIN = frozenset(
    {"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"}
    | {"/usr/libexec", "/opt/homebrew/bin", "/opt/local/bin", "/run/current-system/sw/bin"}
)


def _system_program(raw_name: str) -> bool:
    """A bare name (looked up on ``PATH``) or a path into a system program directory."""
    if "/" not in raw_name:
        return True
    directory = posixpath.dirname(posixpath.normpath(raw_name))
    return directory in _SYSTEM_BIN


# Devices that do something when opened (a watchdog reboots the machine unless fed), and
# endless streams a program that reads to the end never finishes (filling memory or /tmp).
_ARMED = re.compile(r"/dev/watchdog\d*")
_ENDLESS = frozenset({"/dev/zero", "/dev/urandom", "/dev/random", "/dev/full"})
_BOUNDED_READERS = frozenset({"head", "dd", "od", "xxd", "hexdump", "cmp"})
# A terminal control sequence that makes the terminal act (OSC: set the clipboard, title...).
_OSC = re.compile(r"\\(?:e|E|033|x1[bB]|u001[bB])\]|\x1b\]")
# Options that point git at a repository whose config may name programs to run.
_GIT_ELSEWHERE = ("-C", "--git-dir", "--work-tree")


def _side_effects(name: str, texts: list[str | None]) -> list[tuple[Risk, str]]:
    """What reading commands do besides reading: open an armed device, read an endless
    stream, print a terminal control sequence, use another repository's config."""
    found: list[tuple[Risk, str]] = []
    words = [t for t in texts if t is not None]
    if any(_ARMED.fullmatch(w) for w in words):
        found.append((Risk.DESTRUCTIVE, "opening a watchdog device arms a reboot"))
    if name not in _BOUNDED_READERS and any(w in _ENDLESS for w in words):
        found.append((Risk.UNKNOWN, "it reads an endless stream to its end"))
    if name in ("echo", "printf") and any(_OSC.search(w) for w in words):
        found.append((Risk.UNKNOWN, "it prints a control sequence the terminal acts on"))
    if name == "git":
        for i, word in enumerate(words):
            key, _, value = word.partition("=")
            target = value if key in _GIT_ELSEWHERE[1:] else None
            if word == "-C" or word in _GIT_ELSEWHERE[1:]:
                target = words[i + 1] if i + 1 < len(words) else None
            if target and (target.startswith(("/", "~")) or target.split("/")[0] == ".."):
                found.append((Risk.UNKNOWN, "another repository's config may run programs"))
                break
    return found


def _word(arg: Arg) -> str | None:
    """An argument as the program sees it, or None when it may be anything (an option too).
    A word only known at run time is still an operand when it cannot start with a dash:
    ``$HOME/x``, or a process substitution (``<(ls)``, a ``/dev/fd`` path)."""
    if arg.text is not None:
        return arg.text
    if arg.path_text is not None and not arg.path_text.startswith("-"):
        return arg.path_text
    if arg.raw.startswith(("<(", ">(")):
        return "/dev/fd/63"
    return None


def classify(inv: Invocation) -> Risk:
    """The risk of one invocation; wrappers are judged on their own, not on what they wrap."""
    return highest([risk for risk, _why in explain(inv)])


def _unbounded(texts: list[str | None]) -> bool:
    """``xargs -P 0`` / ``parallel -j 0``: no limit on processes running at once."""
    for i, text in enumerate(texts):
        if text is None:
            continue
        value = None
        if text in ("-P", "-j", "--max-procs", "--jobs") and i + 1 < len(texts):
            value = texts[i + 1]
        elif text.startswith(("-P", "-j")) and not text.startswith("--"):
            value = text[2:]
        elif text.startswith(("--max-procs=", "--jobs=")):
            value = text.split("=", 1)[1]
        if value is not None and value.strip("0") == "" and value != "":
            return True
    return False


def _dash_c(texts: list[str]) -> bool:
    return any(t.startswith("-") and not t.startswith("--") and "c" in t for t in texts)


def redirect_risk(redirect: Redirect) -> Risk:
    """Writing to a file is a write; reading or writing the usual devices is not."""
    target = redirect.target.text
    if not redirect.writes or target in _HARMLESS_DEVICES:
        return Risk.READ_ONLY
    return Risk.WRITES


_HARMLESS_DEVICES = frozenset(
    {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2"}
)
