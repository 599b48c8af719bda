"""Other readings of a command line, for the denylist: the ways a shell may read it that the
grammar does not model, and a crude scan for a line that does not parse at all."""

from __future__ import annotations

import fnmatch
import posixpath
import re

from conch.policy.carried import MKFS
from conch.policy.denylist import TEXT_SPLIT, recursive
from conch.policy.model import Analysis
from conch.policy.targets import catastrophic_path, is_block_device


def textual_catastrophe(command: str) -> bool:
    """A crude scan used only when the command does not parse, so broken syntax cannot hide
    ``rm -rf /`` from the denylist."""
    words = [w for w in TEXT_SPLIT.split(re.sub(r"[\"'\\]", "", command)) if w]
    names = {posixpath.basename(w) for w in words}
    if any(MKFS.fullmatch(n) for n in names) or any(is_block_device(w) for w in words):
        return True
    rm = "rm" in names or any(set(n) & set("*?[") and fnmatch.fnmatchcase("rm", n) for n in names)
    if rm and recursive([w for w in words if w.startswith("-")]):
        return any(catastrophic_path(w) for w in words)
    return False


_IFS = re.compile(r"\$\{IFS[^}]*\}|\$IFS\b")
_EMPTY = re.compile(r"\$\{?[@*]\}?|\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*")
_BRACE_WORD = re.compile(r"(?<![^\s;&|(])\{([^{}\s'\"]*,[^{}\s'\"]*)\}(?![^\s;&|)])")


def readings(command: str, analysis: Analysis) -> list[str]:
    """Other ways the shell may read ``command`` that the grammar does not model, for the
    denylist only: a backslash-newline removed (``r\\<newline>m``), ``$IFS`` as a space
    (``rm${IFS}-rf${IFS}/``), a brace list as separate words (``{rm,-rf,/}``), and, when a
    program's name is only known at run time, unset variables as empty (``r${x}m``)."""
    found: list[str] = []
    if "\\\n" in command:
        found.append(command.replace("\\\n", ""))
    if _IFS.search(command):
        found.append(_IFS.sub(" ", command))
    if _BRACE_WORD.search(command):
        found.append(_BRACE_WORD.sub(lambda m: " ".join(m.group(1).split(",")), command))
    if any(inv.name is None for inv in analysis.invocations):
        found.append(_EMPTY.sub("", _IFS.sub(" ", command)))
    return [text for text in dict.fromkeys(found) if text != command]
