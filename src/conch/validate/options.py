"""Reading which options a program documents, from its ``--help`` output and man page."""

from __future__ import annotations

import re
from dataclasses import dataclass

# An option-looking token not glued to a preceding word ("non-zero" is not "-zero").
_TOKEN = re.compile(r"(?<![\w\-])(--?[A-Za-z0-9@][\w\-]*)")
# BSD usage clusters: "[-FLnq]" documents -F, -L, -n and -q.
_CLUSTER = re.compile(r"\[-([A-Za-z0-9@]+)\]")
# "[-f format]" (BSD usage, man synopsis): -f takes a value.
_BRACKET_VALUE = re.compile(r"\[-([A-Za-z0-9])\s+[^\]\s\-|][^\]]*\]")
# "-d, --delimiter=DELIM" (GNU): both spellings take a value; "--color[=WHEN]" is optional.
_GNU_VALUE = re.compile(r"(?<![\w\-])(?:-([A-Za-z0-9]),\s*)?(--[A-Za-z0-9][\w\-]*)=")
# "-e PATTERNS", "-o <file>": an option followed by an upper-case or bracketed placeholder.
_PLACEHOLDER = re.compile(r"(?<![\w\-])-([A-Za-z0-9])[ ]+(?:[A-Z][A-Z_\-]+\b|<[^>\s]+>)")
_LONG_PLACEHOLDER = re.compile(
    r"(?<![\w\-])(--[A-Za-z0-9][\w\-]*)[ ]+(?:[A-Z][A-Z_\-]+\b|<[^>\s]+>)"
)
# A usage line that takes a command or subcommand: options after it belong to something else.
_TAKES_COMMAND = re.compile(
    r"^\s*usage:.*?(?:<command>|\bCOMMAND\b|\bsubcommand\b|<subcommand>|\bPROGRAM\b)",
    re.IGNORECASE | re.MULTILINE,
)
# What the probe itself passed (or prints in "unknown option --help"): not evidence of anything.
_PROBE_TOKENS = frozenset({"--help", "-h", "--version", "-V", "-v", "-", "--"})
_MIN_TOKENS = 2


@dataclass(frozen=True, slots=True)
class OptionIndex:
    """The options a program's documentation names, and which of them take a value."""

    options: frozenset[str]
    value_options: frozenset[str]
    takes_command: bool


def build_index(*texts: str | None) -> OptionIndex | None:
    """Index the options named in ``texts``; None when they document too few to judge by.

    A reply like "unknown option --help" names nothing but the probe's own flag, so it must
    not make every real option look wrong.
    """
    options: set[str] = set()
    values: set[str] = set()
    takes_command = False
    for text in texts:
        if not text:
            continue
        options.update(_TOKEN.findall(text))
        for cluster in _CLUSTER.findall(text):
            options.update(f"-{letter}" for letter in cluster)
        values.update(f"-{m}" for m in _BRACKET_VALUE.findall(text))
        for short, long in _GNU_VALUE.findall(text):
            values.add(long)
            if short:
                values.add(f"-{short}")
        values.update(f"-{m}" for m in _PLACEHOLDER.findall(text))
        values.update(_LONG_PLACEHOLDER.findall(text))
        takes_command = takes_command or _TAKES_COMMAND.search(text) is not None
    if len(options - _PROBE_TOKENS) < _MIN_TOKENS:
        return None
    return OptionIndex(frozenset(options), frozenset(values & options), takes_command)
