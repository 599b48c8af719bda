"""The code conch puts in a user's own shell, and the marked block it lives in.

For each shell (bash, zsh, fish) the code defines two things (the text is in ``shells/``):

- a key binding: the key sends the command line to ``conch --print --quiet --command --``
  and, when conch exits 0, puts the proposed command in its place with the cursor at the end,
  for the user to edit and run; when conch exits non-zero (a refused command, an error) the
  line stays as it was and conch's last line on stderr is shown;
- a ``conch`` function that runs conch with ``CONCH_SHELL_HISTORY`` naming a private temp
  file, then adds each command line conch wrote there (the commands it ran) to the shell's
  own history, and removes the file.

The block wraps that code, and the completions of conch's own command line, between two
marker lines, so that installing again replaces it and uninstalling removes exactly it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path

from conch.errors import UsageError
from conch.integration.keys import Key

SHELLS = ("bash", "zsh", "fish")
START = "# >>> conch integration >>>"
END = "# <<< conch integration <<<"


def check_shell(shell: str) -> str:
    """``shell`` when conch has code for it; UsageError naming the ones it has."""
    if shell not in SHELLS:
        raise UsageError(f"unknown shell '{shell}'; conch integrates with {', '.join(SHELLS)}")
    return shell


@cache
def _template(shell: str) -> str:
    return resources.files(__package__).joinpath("shells", f"conch.{shell}").read_text("utf-8")


def shell_code(shell: str, key: Key) -> str:
    """The key binding and the ``conch`` function for ``shell``, with ``key`` bound."""
    code = _template(check_shell(shell))
    return code.replace("@KEYNAME@", key.name).replace("@KEY@", key.for_shell(shell))


def build_block(shell: str, key: Key, completions: str = "") -> str:
    """The whole marked block for ``shell``'s rc file: markers, a line saying where it comes
    from, the code, and ``completions`` (the completion script of conch's command line)."""
    parts = [
        START,
        f"# Added by `conch integration install {shell}`; "
        f"`conch integration uninstall {shell}` removes this block.",
        shell_code(shell, key).strip("\n"),
    ]
    if completions.strip():
        parts += ["# Completions for conch's own command line.", completions.strip("\n")]
    parts.append(END)
    return "\n".join(parts) + "\n"


def rc_path(shell: str, environ: Mapping[str, str], home: Path) -> Path:
    """The file ``shell`` reads when an interactive shell starts: ``~/.bashrc``,
    ``${ZDOTDIR:-~}/.zshrc``, ``${XDG_CONFIG_HOME:-~/.config}/fish/config.fish``."""
    check_shell(shell)
    if shell == "bash":
        return home / ".bashrc"
    if shell == "zsh":
        return Path(environ.get("ZDOTDIR") or home) / ".zshrc"
    config = environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    return Path(config) / "fish" / "config.fish"
