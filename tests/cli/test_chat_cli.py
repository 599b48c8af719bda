"""``conch chat`` in this process, with the scripted provider: one prompt with -p or on
stdin, the system prompt, saved chats and --continue, the REPL's slash commands read from a
stream, and the errors."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from cliutil import CliResult, capture, dead_server, missing_model, one_line_error, script, step
from conch.cli.sessionfile import session_path
from conch.config.paths import Paths

Conch = Callable[..., CliResult]


def saved_chat(work: Path) -> Path:
    return session_path(Paths.default().state_dir, work.resolve())


def test_a_prompt_with_p_prints_the_reply_and_exits_0(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    (tmp_path / "work" / "todo.txt").write_text("buy milk\n", encoding="utf-8")
    provider = capture(
        isolated_dirs,
        "chat-p",
        step("fs_read", path="todo.txt"),
        "Your list says: buy milk.",
    )
    result = conch("chat", "-p", "what is on my list")
    assert result.code == 0, result.err
    assert result.out == "Your list says: buy milk.\n"
    assert "✓ fs_read path=todo.txt → 1|buy milk" in result.err
    assert provider.sent[0].messages[-1].content == "what is on my list"
    assert "1|buy milk" in provider.sent[1].messages[-1].content


def test_stdin_that_is_not_a_terminal_is_the_whole_prompt(
    conch: Conch, isolated_dirs: Path
) -> None:
    provider = capture(isolated_dirs, "chat-stdin", "Two lines.")
    result = conch("chat", stdin="count these\nlines\n")
    assert result.code == 0, result.err
    assert result.out == "Two lines.\n"
    assert provider.sent[0].messages[-1].content == "count these\nlines\n"


def test_empty_stdin_is_a_usage_error(conch: Conch, isolated_dirs: Path) -> None:
    script(isolated_dirs, "unused")
    result = conch("chat", stdin="  \n")
    assert result.code == 2
    assert result.err == 'conch: no prompt: stdin was empty; try: conch chat -p "..."\n'


@pytest.mark.parametrize(
    ("flags", "present", "absent"),
    [
        ([], ["- fs_write:", "- evaluate:", "- plan:"], ["- bash:", "- fs:"]),
        (["--allow-bash", "--no-python"], ["- bash:", "BASH: No command can run"], ["evaluate"]),
        (["--tools-mode", "unified"], ["- fs:"], ["- fs_write:"]),
        (["--allow-dangerous"], ["BASH: Commands run without asking"], []),
    ],
)
def test_show_system_prompt_prints_the_prompt_of_these_flags(
    conch: Conch, isolated_dirs: Path, flags: list[str], present: list[str], absent: list[str]
) -> None:
    provider = capture(isolated_dirs, f"chat-system-{'-'.join(flags)}")
    result = conch("chat", "--show-system-prompt", *flags)
    assert result.code == 0, result.err
    assert result.out.startswith("You are conch")
    assert "AVAILABLE TOOLS" in result.out
    for text in present:
        assert text in result.out
    for text in absent:
        assert text not in result.out
    assert provider.sent == []


def test_every_turn_is_saved_and_continue_takes_the_chat_up_again(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    first = capture(isolated_dirs, "chat-save-1", "Hello Ada.")
    assert conch("chat", "-p", "my name is Ada").code == 0
    path = saved_chat(tmp_path / "work")
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert [m["role"] for m in saved["messages"]] == ["user", "assistant"]
    assert saved["messages"][1]["content"] == "Hello Ada."
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert first.sent

    second = capture(isolated_dirs, "chat-save-2", "Your name is Ada.")
    result = conch("chat", "--continue", "-p", "what is my name")
    assert result.code == 0, result.err
    assert result.out == "Your name is Ada.\n"
    assert "resumed the chat saved for" in result.err
    contents = [m.content for m in second.sent[0].messages[1:]]
    assert contents == ["my name is Ada", "Hello Ada.", "what is my name"]
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert len(saved["messages"]) == 4


def test_without_continue_a_chat_starts_afresh_and_replaces_the_saved_one(
    conch: Conch, isolated_dirs: Path
) -> None:
    capture(isolated_dirs, "chat-fresh-1", "Hello Ada.")
    assert conch("chat", "-p", "my name is Ada").code == 0
    second = capture(isolated_dirs, "chat-fresh-2", "I do not know.")
    assert conch("chat", "-p", "what is my name").code == 0
    assert [m.role for m in second.sent[0].messages] == ["system", "user"]


def test_continue_with_nothing_saved_says_so_and_starts_a_new_chat(
    conch: Conch, isolated_dirs: Path
) -> None:
    capture(isolated_dirs, "chat-nothing", "Hi.")
    result = conch("chat", "--continue", "-p", "hi")
    assert result.code == 0
    assert "no saved chat for" in result.err and "starting a new one" in result.err


def test_no_local_session_saves_nothing(conch: Conch, isolated_dirs: Path, tmp_path: Path) -> None:
    capture(isolated_dirs, "chat-nosave", "Hi.")
    assert conch("chat", "--no-local-session", "-p", "hi").code == 0
    assert not saved_chat(tmp_path / "work").exists()


def test_a_damaged_saved_chat_is_one_line_naming_the_file(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    capture(isolated_dirs, "chat-damaged", "Hi.")
    path = saved_chat(tmp_path / "work")
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    result = conch("chat", "--continue", "-p", "hi")
    assert result.code == 1
    assert result.err.startswith(f"conch: the saved chat {path} is damaged")
    assert "start without --continue" in result.err and result.err.count("\n") == 1


def test_the_repl_answers_its_commands_and_a_turn(conch: Conch, isolated_dirs: Path) -> None:
    provider = capture(isolated_dirs, "chat-repl", "Hello!", "Fresh start.")
    lines = ["/help", "/tools", "/plan", "hello", "/nope", "/reset", "again", "/exit", "never"]
    result = conch("chat", stdin="\n".join(lines) + "\n", tty=True)
    assert result.code == 0, result.err
    assert "/system [TEXT]" in result.out and "Ctrl+R" in result.out
    assert "  fs_write     Create a file or replace all of its content." in result.out
    assert "no plan yet" in result.out
    assert "Hello!" in result.out and "Fresh start." in result.out
    assert "conch: unknown command /nope; /help lists them" in result.err
    assert "conch: the conversation starts over" in result.err
    assert [m.role for m in provider.sent[1].messages] == ["system", "user"]
    assert len(provider.sent) == 2


def test_the_repl_ends_at_the_end_of_its_input(conch: Conch, isolated_dirs: Path) -> None:
    capture(isolated_dirs, "chat-eof", "Hi.")
    result = conch("chat", stdin="hi\n", tty=True)
    assert result.code == 0
    assert "Hi." in result.out


def test_system_shows_the_prompt_and_system_text_replaces_its_base(
    conch: Conch, isolated_dirs: Path
) -> None:
    provider = capture(isolated_dirs, "chat-system", "Arr.")
    stdin = "/system\n/system You are a pirate.\nhello\n"
    result = conch("chat", stdin=stdin, tty=True)
    assert result.code == 0, result.err
    assert "You are conch" in result.out
    system = provider.sent[0].messages[0].content
    assert system.startswith("You are a pirate.") and "You are conch" not in system


def test_a_failed_turn_in_the_repl_is_one_line_and_the_repl_goes_on(
    conch: Conch, isolated_dirs: Path
) -> None:
    capture(isolated_dirs, "chat-fail", step("fs_list", path="."), step("fs_glob", pattern="*"))
    result = conch("chat", "--max-iterations", "1", stdin="look\n/tools\n", tty=True)
    assert result.code == 0
    assert "conch: the agent stopped after 1 model replies" in result.err
    assert "fs_write" in result.out


def test_the_iteration_limit_of_a_prompt_is_exit_6(conch: Conch, isolated_dirs: Path) -> None:
    capture(isolated_dirs, "chat-limit", step("fs_list", path="."), "late")
    result = conch("chat", "--max-iterations", "1", "-p", "look around")
    assert result.code == 6
    assert result.err.splitlines()[-1].startswith("conch: the agent stopped after 1 model")


def test_in_interactive_mode_every_command_is_asked_about(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    capture(
        isolated_dirs,
        "chat-ask",
        step("bash", command="ls"),
        step("bash", command="touch asked.txt"),
        "Done.",
    )
    result = conch(
        "chat", "--allow-bash", "--no-act", "-p", "list, then make a file", answers="n\ny\n"
    )
    assert result.code == 0, result.err
    assert result.err.count("Run it? [y/N/a]") == 2
    assert "✗ bash: ls → " in result.err
    assert (tmp_path / "work" / "asked.txt").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["chat", "hello"], "`conch chat` takes no words"),
        (["chat", "-p", " "], "the prompt after -p is empty"),
        (["chat", "--mode", "bogus"], "argument --mode: invalid choice: 'bogus'"),
        (["chat", "--allow-dangerous", "--mode", "restricted"], "cannot be combined"),
    ],
)
def test_bad_command_lines_are_one_line_usage_errors(
    conch: Conch, argv: list[str], message: str
) -> None:
    assert message in one_line_error(conch(*argv), 2)


def test_a_dead_server_is_one_line_and_exit_5(conch: Conch, isolated_dirs: Path) -> None:
    dead_server(isolated_dirs)
    error = one_line_error(conch("chat", "-p", "hello"), 5)
    assert error.startswith("conch: cannot reach the model server at http://127.0.0.1:9")


def test_no_model_is_one_line_and_exit_1(conch: Conch, isolated_dirs: Path) -> None:
    missing_model(isolated_dirs)
    error = one_line_error(conch("chat", "-p", "hello"), 1)
    assert error.startswith("conch: ai.local.model_path names /no/m.gguf")
