"""Completions for conch's own command line, generated from its argument parser by shtab.

The front end builds one parser that holds every subcommand (``conch.cli.integrationcmd``);
this module turns it into a script for bash, zsh or fish that works when sourced from an rc
file or ``eval``ed: shtab's usage header is dropped (it says to copy the script to a file),
and zsh's ending, which calls the completion function directly unless the script is
``eval``ed, is replaced by a ``compdef`` that waits for ``compinit``.
"""

from __future__ import annotations

import argparse

from conch.errors import ConchError
from conch.integration.shellcode import check_shell

_ZSH_ENDING = "typeset -A opt_args\n"
_ZSH_REGISTER = """\
typeset -A opt_args

# compdef exists once compinit has run; without it there is nothing to register with.
if (( $+functions[compdef] )); then
  compdef _shtab_conch conch
fi
"""


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script of ``parser`` (prog ``conch``) for ``shell``."""
    import shtab

    script = str(shtab.complete(parser, shell=check_shell(shell)))
    script = _without_header(script)
    if shell == "zsh":
        cut = script.rfind(_ZSH_ENDING)
        if cut < 0:
            raise ConchError("the zsh completion script has an unexpected form; upgrade shtab")
        script = script[:cut] + _ZSH_REGISTER
    return script.strip("\n") + "\n"


def _without_header(script: str) -> str:
    """``script`` from its first line that is not a comment or blank."""
    lines = script.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.strip() and not line.lstrip().startswith("#"):
            return "".join(lines[index:])
    return ""
