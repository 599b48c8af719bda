"""The key that sends the command line to conch: read from what a user types after ``--key``
and written the way each shell's binding command wants it.

Only Alt or Ctrl with one letter (Alt also with a digit): those reach every shell as the
same bytes on every terminal. The Ctrl keys a terminal or the line editor already needs
(Ctrl+C, Ctrl+D, Enter, Tab, Backspace, flow control, suspend) are refused.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

from conch.errors import UsageError

DEFAULT_KEY = r"\ee"

# Ctrl+letter keys that are not free: interrupt, end of input, backspace, tab, newline and
# Enter, flow control, suspend.
_TAKEN = {"c": "interrupts", "d": "ends input", "h": "is Backspace", "i": "is Tab",
          "j": "is Enter", "m": "is Enter", "q": "resumes output", "s": "stops output",
          "z": "suspends"}  # fmt: skip
_ALT = re.compile(r"(?:\\e|(?:alt|meta|m)[-+])(?P<char>.)", re.IGNORECASE)
_CTRL = re.compile(r"(?:\\c-?|(?:ctrl|control|c)[-+]|\^)(?P<char>.)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Key:
    """A key: Alt or Ctrl (``modifier``) with one lower-case letter or digit (``char``)."""

    modifier: str  # "alt" or "ctrl"
    char: str

    @property
    def name(self) -> str:
        """How people write it: ``Alt+E``, ``Ctrl+X``."""
        return f"{self.modifier.capitalize()}+{self.char.upper()}"

    def for_shell(self, shell: str) -> str:
        """The key as ``shell``'s binding command reads it (bash ``bind``, zsh ``bindkey``,
        fish ``bind``)."""
        if self.modifier == "alt":
            return f"\\e{self.char}"
        if shell == "bash":
            return f"\\C-{self.char}"
        if shell == "zsh":
            return f"^{self.char.upper()}"
        return f"\\c{self.char}"


def parse_key(text: str) -> Key:
    """The key ``text`` names: ``\\ee``, ``alt-e``, ``Alt+E`` or ``M-e`` for Alt+E; ``\\C-x``,
    ``ctrl-x``, ``C-x`` or ``^X`` for Ctrl+X. UsageError for anything else, and for a Ctrl key
    the terminal or the line editor needs."""
    spec = text.strip()
    for modifier, pattern in (("alt", _ALT), ("ctrl", _CTRL)):
        match = pattern.fullmatch(spec)
        if match is None:
            continue
        char = match["char"].lower()
        allowed = string.ascii_lowercase + (string.digits if modifier == "alt" else "")
        if char not in allowed:
            kinds = "a letter or a digit" if modifier == "alt" else "a letter"
            raise UsageError(f"--key {text!r}: {modifier.capitalize()} takes {kinds}")
        if modifier == "ctrl" and char in _TAKEN:
            raise UsageError(
                f"--key {text!r}: Ctrl+{char.upper()} {_TAKEN[char]}; choose another key"
            )
        return Key(modifier, char)
    raise UsageError(
        f"--key {text!r}: give Alt or Ctrl and one letter, e.g. --key alt-e, --key '\\ee' "
        "or --key ctrl-x"
    )
