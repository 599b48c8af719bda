"""``scripts/record_shell_session.py``: the terminal's output made plain text, the Markdown
page, the session's environment, and whole runs on a scripted model (no real model)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "record_shell_session.py"

_SPEC = importlib.util.spec_from_file_location("record_shell_session", SCRIPT)
assert _SPEC is not None and _SPEC.loader is not None
recorder = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = recorder  # dataclasses look their module up while they are made
_SPEC.loader.exec_module(recorder)


# -- plain_text --------------------------------------------------------------------------------

# What ``conch shell`` wrote to its terminal for a prompt, ``cat notes.txt`` typed and taken,
# the command's output and the next prompt (prompt_toolkit's redraws included).
TYPED_LINE = (
    "\x1b[?2004h\x1b[?1l\x1b[?25l\x1b[0m\x1b[?7l\x1b[0m\x1b[J\x1b[0m/w [conch:scripted]$"
    "\x1b[20D\x1b[21C\x1b[?7h\x1b[0m\x1b[?12l\x1b[?25h\x1b[?25l\x1b[?7l\x1b[21D\x1b[0m"
    "/w [conch:scripted]$ cat notes.txt\x1b[?7h\x1b[0m\x1b[?12l\x1b[?25h\x1b[?25l\x1b[?7l"
    "\x1b[34D\x1b[0m\x1b[J\x1b[0m/w [conch:scripted]$ cat notes.txt\x1b[34D\x1b[0m\r\r\n"
    "\x1b[J\x1b[?7h\x1b[0m\x1b[?12l\x1b[?25h\x1b[?2004lerror: port 8123 already in use\r\n"
    "\x1b[?2004h\x1b[?25l\x1b[0m\x1b[?7l\x1b[0m\x1b[J\x1b[0m/w [conch:scripted]$\x1b[20D"
    "\x1b[21C\x1b[?7h"
)


def test_a_typed_line_and_its_output_read_as_on_screen() -> None:
    assert recorder.plain_text(TYPED_LINE) == (
        "/w [conch:scripted]$ cat notes.txt\nerror: port 8123 already in use\n/w [conch:scripted]$"
    )


def test_a_spinner_and_colours_leave_only_the_reply() -> None:
    raw = (
        "\r\x1b[2K⠋ thinking  0.0s\r\x1b[2K⠙ thinking  0.1s\r\x1b[2KThe port is taken.\r\n"
        "\x1b[2mthe model suggests:\x1b[0m\r\n\x1b[1m  ss -ltn\x1b[0m\r\n"
        "  risk: \x1b[32mread-only\x1b[0m\r\n"
    )
    assert recorder.plain_text(raw) == (
        "The port is taken.\nthe model suggests:\n  ss -ltn\n  risk: read-only"
    )


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]0;window title\x07after", "after"),  # OSC, ended by BEL
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),  # hyperlink, ended by ST
        ("abc\bd", "abd"),  # backspace, then overwrite
        ("abcdef\x1b[3D\x1b[K", "abc"),  # erase to the end of the line
        ("abcdef\x1b[4G\x1b[1K", "    ef"),  # erase to the cursor
        ("one\r\ntwo\r\n\x1b[2Athree\x1b[J", "three"),  # up, then erase below
        ("a\tb", "a       b"),
        ("x\x1b7yy\x1b8z", "xzy"),  # cursor saved and restored
        ("\x1b(Bplain\x1b=", "plain"),  # character set, keypad mode
        ("trailing   \r\n\r\n\r\n", "trailing"),
    ],
)
def test_escape_sequences_and_controls_act_or_go(raw: str, shown: str) -> None:
    assert recorder.plain_text(raw) == shown


def test_clearing_the_screen_keeps_the_history() -> None:
    assert recorder.plain_text("before\r\n\x1b[H\x1b[2Jafter") == "before\nafter"


def test_lines_that_scroll_off_the_screen_are_kept() -> None:
    lines = [f"line {number}" for number in range(3 * recorder.ROWS)]
    assert recorder.plain_text("\r\n".join(lines) + "\r\n") == "\n".join(lines)


def test_a_line_wider_than_the_pseudo_terminal_stays_whole() -> None:
    line = "x" * (recorder.COLUMNS + 17)
    assert recorder.plain_text(line + "\r\nnext") == f"{line}\nnext"


# -- the page ----------------------------------------------------------------------------------


def recording(transcript: str = "~/project [conch:local]$ ls\nnotes.txt") -> object:
    return recorder.Recording(
        command="python scripts/record_shell_session.py --out x.md",
        cpus=2,
        machine="Linux-6.1-x86_64 (x86_64), Python 3.11.7",
        date="2025-01-02 03:04 UTC",
        model="`local`: model.gguf through the model service",
        transcript=transcript,
        turns=[
            recorder.Turn(3, "why did it fail?", 41.26, suggested=1, ran=0),
            recorder.Turn(4, "a | b", 9.04, suggested=2, ran=1),
        ],
        notes=["The first model turn includes starting the model service."],
    )


def test_the_page_has_the_command_machine_date_transcript_and_turn_table() -> None:
    page = recorder.render_markdown(recording())
    lines = page.splitlines()
    assert lines[0] == "# A recorded `conch shell` session"
    assert "- command: `python scripts/record_shell_session.py --out x.md`" in lines
    assert "- machine: 2 CPUs, Linux-6.1-x86_64 (x86_64), Python 3.11.7" in lines
    assert "- date: 2025-01-02 03:04 UTC" in lines
    assert "- model: `local`: model.gguf through the model service" in lines
    assert "```text\n~/project [conch:local]$ ls\nnotes.txt\n```\n" in page
    assert "| step | line | seconds | suggested | ran |" in lines
    assert "| 3 | `why did it fail?` | 41.3 | 1 | 0 |" in lines
    assert "| 4 | `a \\| b` | 9.0 | 2 | 1 |" in lines  # a pipe does not split the cell
    assert "- The first model turn includes starting the model service." in lines
    assert page.endswith("\n") and not page.endswith("\n\n")


def test_a_transcript_with_backticks_gets_a_longer_fence() -> None:
    page = recorder.render_markdown(recording("the reply:\n```bash\nls\n```"))
    assert "````text\nthe reply:\n```bash\nls\n```\n````\n" in page


# -- the environment ---------------------------------------------------------------------------


def test_the_session_gets_a_fresh_home_and_keeps_the_model_cache(tmp_path: Path) -> None:
    environ = {
        "HOME": "/home/me",
        "PATH": "/usr/bin",
        "CONCH_MODEL": "other",
        "OPENAI_API_KEY": "sk-x",
        "PAGER": "most",
    }
    home, runtime, config = tmp_path / "home", tmp_path / "run", tmp_path / "c.yaml"
    env = recorder.session_environment(environ, home, runtime, None)
    assert env["HOME"] == str(home)
    assert env["XDG_CONFIG_HOME"] == str(home / ".config")
    assert env["XDG_STATE_HOME"] == str(home / ".local" / "state")
    assert env["XDG_CACHE_HOME"] == "/home/me/.cache"  # where the model already is
    assert env["XDG_RUNTIME_DIR"] == str(runtime)
    assert env["PATH"] == "/usr/bin"
    assert not {"CONCH_MODEL", "OPENAI_API_KEY", "PAGER", "CONCH_CONFIG"} & set(env)
    env = recorder.session_environment(
        {**environ, "XDG_CACHE_HOME": "/big/cache"}, home, runtime, config
    )
    assert env["XDG_CACHE_HOME"] == "/big/cache"
    assert env["CONCH_CONFIG"] == str(config)


# -- whole runs on a scripted model ------------------------------------------------------------


def scripted_config(tmp_path: Path, *replies: str) -> Path:
    config = tmp_path / "scripted.yaml"
    config.write_text(
        f"ai:\n  provider: scripted\n  script: {json.dumps(list(replies))}\n", encoding="utf-8"
    )
    return config


def run_script(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "scripts/record_shell_session.py", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_script_records_a_session_on_a_scripted_model(tmp_path: Path) -> None:
    config = scripted_config(
        tmp_path,
        "Port 8123 was taken. CMD: ss -ltn",  # no CMD: line of its own: nothing to offer
        "wc -l server.log",  # a request for a command: the one-shot pipeline's answer
        "The server could not bind port 8123; its log has 4 lines.",  # the memory at :quit
    )
    out = tmp_path / "session.md"
    result = run_script("--config", str(config), "--out", str(out))
    assert result.returncode == 0, result.stderr
    page = out.read_text(encoding="utf-8")
    transcript = page[page.index("```text\n") : page.index("\n```\n")]
    assert "~/project [conch:scripted]$ cat server.log\n" in transcript
    assert "ERROR listen tcp 127.0.0.1:8123: bind: address already in use\n" in transcript
    assert "~/project [conch:scripted]$ why did the server fail to start?\n" in transcript
    assert "Port 8123 was taken. CMD: ss -ltn\n" in transcript
    assert "Run it? [y]es, [e]dit, [n]o [n] y\n4 server.log\n" in transcript
    assert "session: 2 turns, " in transcript  # :cost
    assert transcript.rstrip().endswith(
        "~/project [conch:scripted]$ :quit\nconch: remembered this session as #1 (:history show 1)"
    )
    assert "\x1b" not in page
    rows = [line for line in page.splitlines() if line.startswith("| 3 ") or line[:4] == "| 4 "]
    assert [row.split(" | ")[1] for row in rows] == [
        "`why did the server fail to start?`",
        "`count the lines of server.log`",
    ]
    assert [row.split(" | ")[3:] for row in rows] == [["0", "0 |"], ["1", "1 |"]]
    assert "- model: `scripted`" in page
    assert f"--config {config} --out {out}`" in page


def test_a_request_with_no_suggestion_to_accept_fails_in_one_line(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, "It could not bind.", "Use wc.")
    out = tmp_path / "session.md"
    result = run_script("--config", str(config), "--out", str(out))
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "record_shell_session: step 4 ('count the lines of server.log'): "
        "the model suggested no command to accept"
    )
    assert not out.exists()


def test_a_step_that_times_out_ends_the_recording(tmp_path: Path) -> None:
    options = recorder.Options(
        out=tmp_path / "session.md",
        config=scripted_config(tmp_path),
        start_timeout=30.0,
        step_timeout=1.0,
        turn_timeout=1.0,
        command="test",
    )
    with pytest.raises(recorder.StepFailed) as failed:
        recorder.record(options, [recorder.Step("sleep 4", "shell")])
    assert str(failed.value) == "step 1 ('sleep 4') timed out after 1 s waiting for the prompt"


def test_a_missing_config_file_is_a_usage_error(tmp_path: Path) -> None:
    result = run_script("--config", str(tmp_path / "nope.yaml"))
    assert result.returncode == 2
    assert result.stderr == (
        f"record_shell_session: --config {tmp_path / 'nope.yaml'}: no such file\n"
    )
