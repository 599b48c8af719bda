"""The shell integration in real shells on a pseudo-terminal, as a user at a keyboard drives
them: bash, zsh and fish with the block loaded, a scripted model behind conch.

Alt+E turns the typed request into the command, which runs on Enter; a command the policy
refuses leaves the line as typed and shows the reason; the ``conch`` function puts the
command conch ran into the shell's history (the Up arrow finds it). The screen is read
through the terminal emulator pyte, as a person sees it. Every shell runs with a temporary
HOME, in a temporary directory, with a canary file outside both that must stay untouched.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pyte
import pytest

import requires
from cliutil import CliResult, script
from conch.config.paths import Paths
from conch.storage.history import History

PROMPT = "PROMPT>"  # followed by a space, which pyte keeps only while text follows it
ALT_E = "\x1be"  # what a terminal sends for Alt+E: Escape, then e
UP = "\x1b[A"
COLUMNS, ROWS = 120, 40
STEP_S = 30.0  # one conch request on a busy machine: imports, the policy, a dry run
# A reply the policy refuses in every mode (data here; it is never typed into a shell).
REFUSED = "rm -rf ~"

SHELLS = [
    "bash",
    pytest.param("zsh", marks=requires.needs("zsh")),
    pytest.param("fish", marks=requires.needs("fish")),
]


class Terminal:
    """A shell on a pseudo-terminal, its output played on the emulator pyte."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self.stream = pyte.Stream(self.screen)

    @property
    def line(self) -> str:
        """The line the cursor is on, as shown."""
        return self.screen.display[self.screen.cursor.y].rstrip()

    @property
    def text(self) -> str:
        return "\n".join(row.rstrip() for row in self.screen.display)

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def wait(self, ready: Callable[[Terminal], bool], what: str, timeout: float = STEP_S) -> None:
        """Read the shell's output until ``ready`` holds; fail, showing the screen, when it
        does not within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not ready(self):
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}; the screen:\n{self.text}")
            try:
                self.stream.feed(self.child.read_nonblocking(65536, timeout=0.2))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                pytest.fail(f"the shell exited while waiting for {what}:\n{self.text}")

    def wait_line(self, expected: str, what: str) -> None:
        """Wait until the cursor's line reads ``expected``, the cursor at its end."""
        self.wait(
            lambda t: t.line == expected and t.screen.cursor.x >= len(expected),
            f"{what} (the line {expected!r})",
        )


@pytest.fixture
def places(tmp_path: Path, isolated_dirs: Path) -> Iterator[dict[str, Path]]:
    """The temporary HOME (``isolated_dirs``), a working directory with one file, a private
    TMPDIR, and a canary outside HOME that must be untouched at the end."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "marker-file.txt").write_text("x\n", encoding="utf-8")
    temp = tmp_path / "tmp"
    temp.mkdir()
    canary = tmp_path / "canary.txt"
    canary.write_text("untouched\n", encoding="utf-8")
    # fish builds completions from every manual page on its first start unless this exists.
    (isolated_dirs / ".local" / "share" / "fish" / "generated_completions").mkdir(parents=True)
    yield {"home": isolated_dirs, "work": work, "tmp": temp}
    assert canary.read_text(encoding="utf-8") == "untouched\n", "the canary was changed"
    assert sorted(isolated_dirs.iterdir()) == sorted(
        p for p in isolated_dirs.iterdir() if p.name in {".config", ".local", ".bashrc"}
    )


@pytest.fixture
def shell(
    request: pytest.FixtureRequest, places: dict[str, Path], conch: Callable[..., CliResult]
) -> Iterator[Terminal]:
    """The shell named by the test's parameter, at its first prompt, with the integration
    loaded: bash and zsh source what `conch integration show` prints; fish reads its
    config.fish, where `conch integration install fish --yes` put the block."""
    name: str = request.param
    home, work = places["home"], places["work"]
    conch_bin = Path(sys.executable).parent / "conch"
    assert conch_bin.exists(), "the conch console script is not installed next to Python"
    environ = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PROMPT_COMMAND", "BASH_ENV", "ENV", "ZDOTDIR", "HISTFILE"}
    }
    environ |= {
        "PATH": f"{conch_bin.parent}{os.pathsep}{environ.get('PATH', '')}",
        "TERM": "xterm",
        "PS1": f"{PROMPT} ",
        "TMPDIR": str(places["tmp"]),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "HISTFILE": str(home / ".local" / "history"),
        "LANG": "C.UTF-8",
    }
    if name == "fish":
        config = home / ".config" / "fish" / "config.fish"
        config.parent.mkdir(parents=True)
        config.write_text(
            f"set -g fish_greeting ''\nfunction fish_prompt; echo -n '{PROMPT} '; end\n",
            encoding="utf-8",
        )
        installed = conch("integration", "install", "fish", "--yes")
        assert installed.code == 0, installed.err
        argv, setup = ["-i"], ""
    else:
        code = home / ".local" / f"conch.{name}"
        code.parent.mkdir(parents=True, exist_ok=True)
        shown = conch("integration", "show", name)
        assert shown.code == 0, shown.err
        code.write_text(shown.out, encoding="utf-8")
        argv = ["--norc", "--noprofile", "-i"] if name == "bash" else ["-f", "-i"]
        options = "" if name == "bash" else f"PS1='{PROMPT} '; unsetopt prompt_sp; "
        setup = f"{options}source {code}; clear\r"
    child = pexpect.spawn(
        shutil.which(name) or name,
        argv,
        cwd=str(work),
        env=environ,
        encoding="utf-8",
        timeout=STEP_S,
        dimensions=(ROWS, COLUMNS),
    )
    terminal = Terminal(child)
    try:
        if setup:
            terminal.wait(lambda t: PROMPT in t.text, "the first prompt")
            terminal.send(setup)
        terminal.wait(lambda t: t.line == PROMPT and t.text.count(PROMPT) == 1, "the prompt")
        yield terminal
    finally:
        child.close(force=True)


def _requests() -> int:
    return sum(1 for _ in History(Paths.default().state_dir).entries())


@pytest.mark.parametrize("shell", SHELLS, indirect=True)
def test_the_key_turns_the_request_into_the_command_and_enter_runs_it(
    shell: Terminal, places: dict[str, Path]
) -> None:
    script(places["home"], "ls -1")
    shell.send(ALT_E)  # on an empty line: nothing happens, conch is not asked
    shell.send("list the files here")
    shell.wait_line(f"{PROMPT} list the files here", "the typed request")
    shell.send(ALT_E)
    shell.wait_line(f"{PROMPT} ls -1", "the proposed command in place of the request")
    assert _requests() == 1  # the key on the empty line asked nothing
    shell.send("\r")
    shell.wait(lambda t: "marker-file.txt" in t.text and t.line == PROMPT, "the command's output")


@pytest.mark.parametrize("shell", SHELLS, indirect=True)
def test_a_refused_command_leaves_the_line_and_shows_the_reason(
    shell: Terminal, places: dict[str, Path]
) -> None:
    script(places["home"], REFUSED)
    typed = f"{PROMPT} tidy up my home directory"
    shell.send("tidy up my home directory")
    shell.wait_line(typed, "the typed request")
    shell.send(ALT_E)
    shell.wait(
        lambda t: "the safety policy rejects this command" in t.text,
        "the policy's reason",
    )
    shell.wait_line(typed, "the request, unchanged")
    assert "Denylisted" in shell.text and "rm -rf" not in shell.text
    assert _requests() == 1
    shell.send("\x03")  # Ctrl+C: the line is dropped, never run


@pytest.mark.parametrize("shell", SHELLS, indirect=True)
def test_the_conch_function_puts_what_ran_in_the_shell_s_history(
    shell: Terminal, places: dict[str, Path]
) -> None:
    script(places["home"], "touch made-by-conch.txt")
    shell.send('conch "make a file"\r')
    shell.wait(lambda t: "[A]bort?" in t.text, "the question")
    shell.send("e\r")
    shell.wait(lambda t: t.line == PROMPT and t.text.count(PROMPT) >= 2, "the next prompt")
    assert (places["work"] / "made-by-conch.txt").exists()
    shell.send(UP)
    shell.wait_line(f"{PROMPT} touch made-by-conch.txt", "the command from the history")
    assert list(places["tmp"].glob("conch-*")) == []  # the private temp files are gone
    shell.send("\x03")
