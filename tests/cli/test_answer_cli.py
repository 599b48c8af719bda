"""Questions get answers through the one-shot CLI, with the scripted provider."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import pytest

from cliutil import CliResult, write_config
from conch.config.paths import Paths
from conch.providers import ScriptedProvider, register_provider
from conch.storage.history import History

Conch = Callable[..., CliResult]

ERROR = "error: No such file or directory: config.yaml\n"
MISSING = (
    "The program looked for config.yaml in the current directory and did not find it. "
    "Check that the file exists:\n```sh\nls -l config.yaml\n```"
)


def capture(home: Path, name: str, *replies: str) -> ScriptedProvider:
    """A scripted provider the config selects, kept so the test can read what it was sent."""
    provider = ScriptedProvider.of(*replies)
    register_provider(name, lambda settings: provider)
    write_config(home, f"generation:\n  dry_run: false\nai:\n  provider: {name}\n")
    return provider


def last_entry() -> dict[str, object]:
    entry = History(Paths.default().state_dir).latest()
    assert entry is not None
    return asdict(entry)


def test_a_question_about_piped_input_gets_prose_on_stdout(
    conch: Conch, isolated_dirs: Path
) -> None:
    provider = capture(isolated_dirs, "answer-piped", MISSING)
    result = conch("what does this error mean", stdin=ERROR)
    assert result.code == 0
    assert result.out.startswith("The program looked for config.yaml")
    assert result.out.endswith("\n\n  ls -l config.yaml\n")
    assert "```" not in result.out
    assert "risk: read-only" in result.err
    prompt = provider.sent[0].messages[-1].content
    assert "No such file or directory: config.yaml" in prompt
    assert prompt.endswith("Question: what does this error mean")
    assert len(provider.sent) == 1


def test_a_suggested_command_is_only_printed_never_run(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    capture(
        isolated_dirs,
        "answer-touch",
        "An empty file marks the job as done:\n```sh\ntouch made-by-answer.txt\n```",
    )
    result = conch("why does the job need a marker file", tty=True, answers="e\n")
    assert result.code == 0
    assert "  touch made-by-answer.txt\n" in result.out
    assert "risk: writes" in result.err
    assert not (tmp_path / "work" / "made-by-answer.txt").exists()
    assert not (Paths.default().state_dir / "audit.log").exists()
    entry = last_entry()
    assert entry["executed"] is False
    assert entry["generated_command"] == "touch made-by-answer.txt"
    assert "answered as a question" in str(entry["notes"])


def test_a_suggestion_the_policy_rejects_is_left_out(conch: Conch, isolated_dirs: Path) -> None:
    capture(isolated_dirs, "answer-reject", "It frees space.\n```sh\nrm -rf ~\n```")
    result = conch("is it safe to delete my home directory")
    assert result.code == 0
    assert result.out == "It frees space.\n"
    assert "left out" in result.err and "rm -rf" not in result.out
    assert last_entry()["decision"] == "reject"


def test_json_gives_the_answer_the_command_and_its_verdict(
    conch: Conch, isolated_dirs: Path
) -> None:
    capture(isolated_dirs, "answer-json", MISSING)
    result = conch("--json", "what does this error mean", stdin=ERROR)
    data = json.loads(result.out)
    assert data["answer"].startswith("The program looked for config.yaml")
    assert data["command"] == "ls -l config.yaml"
    assert data["verdict"]["risk"] == "read-only"
    capture(isolated_dirs, "answer-json-prose", "unlink removes one file; rm takes options.")
    plain = json.loads(conch("--json", "what is the difference between rm and unlink").out)
    assert plain == {"answer": "unlink removes one file; rm takes options."}


def test_command_flag_forces_the_task_path(conch: Conch, isolated_dirs: Path) -> None:
    provider = capture(isolated_dirs, "answer-forced-task", "ls -l config.yaml", "umask")
    result = conch("--command", "--print", "what does this error mean", stdin=ERROR)
    assert result.code == 0
    assert result.out == "ls -l config.yaml\n"
    assert "Question:" not in provider.sent[0].messages[-1].content
    result = conch("--command", "--json", "what is umask")
    assert json.loads(result.out)["command"] == "umask"


def test_answer_flag_forces_a_question(conch: Conch, isolated_dirs: Path) -> None:
    provider = capture(isolated_dirs, "answer-forced", "It lists the files, largest first.")
    result = conch("--answer", "list the files by size")
    assert result.code == 0
    assert result.out == "It lists the files, largest first.\n"
    assert provider.sent[0].messages[-1].content == "Question: list the files by size"


def test_flags_about_running_a_command_keep_a_question_on_the_task_path(
    conch: Conch, isolated_dirs: Path
) -> None:
    capture(isolated_dirs, "answer-print", "cat config.yaml")
    result = conch("--print", "why does this fail", stdin=ERROR)
    assert result.out == "cat config.yaml\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--answer", "--command", "x"), "not allowed with argument"),
        (("--answer", "--analyze"), "not allowed with argument"),
        (("--answer", "--print", "x"), "--answer cannot be combined with --print"),
        (("--answer", "--yes", "x"), "--answer cannot be combined with --yes"),
        (("--answer", "--explain", "x"), "--answer cannot be combined with --explain"),
    ],
)
def test_bad_combinations_with_answer_are_one_line_usage_errors(
    conch: Conch, isolated_dirs: Path, argv: tuple[str, ...], message: str
) -> None:
    capture(isolated_dirs, "answer-usage")
    result = conch(*argv)
    assert result.code == 2
    assert message in result.err
    assert result.err.count("\n") == 1


def test_analyze_explains_a_refusal_from_the_policy_without_the_model_or_unsafe(
    conch: Conch, isolated_dirs: Path
) -> None:
    capture(isolated_dirs, "refused-run", "rm -rf ~")
    assert conch("--yes", "clean up my home directory").code == 3
    provider = capture(isolated_dirs, "refusal-analysis")
    result = conch("--analyze")
    assert result.code == 0
    assert result.out.startswith("The safety policy refused `rm -rf ~`, so nothing ran.")
    assert "Denylisted" in result.out and "Ask for something narrower" in result.out
    assert "unsafe" not in result.out
    assert provider.sent == []


def test_analyze_of_a_failed_run_drops_advice_to_use_unsafe(
    conch: Conch, isolated_dirs: Path
) -> None:
    capture(isolated_dirs, "failed-run", "ls /definitely/not/here")
    assert conch("--yes", "list a missing directory").code == 2
    provider = capture(
        isolated_dirs,
        "failed-analysis",
        "ls exited with 2 because /definitely/not/here does not exist. "
        "Re-run with conch -u to allow more. Check the path with ls -d /definitely.",
    )
    result = conch("--analyze")
    assert result.code == 0
    assert result.out == (
        "ls exited with 2 because /definitely/not/here does not exist. "
        "Check the path with ls -d /definitely.\n"
    )
    facts = provider.sent[0].messages[1].content
    assert "Command: ls /definitely/not/here" in facts
    assert "Ran: yes" in facts
    assert "Exit code: 2 (the command failed and reported an error)" in facts
