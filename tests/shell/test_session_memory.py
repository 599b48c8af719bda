"""A ``ShellSession`` remembers: the session's summary at ``:quit``, ``:save`` and Ctrl+D,
the summaries of earlier sessions in the directory at the start, ``:history list|show|
delete``, and the turns the window lets go summarized rather than dropped."""

from __future__ import annotations

from pathlib import Path

from sessionutil import open_shell, said

from conch.errors import ProviderError
from conch.messages import Message
from conch.shell.events import Left, Listed, ShellEvent, Working
from conch.shell.memory import MemoryStore
from conch.shell.sessions import SavedSession

SUMMARY = "- Fixed the fixture path in tests/test_io.py\n- Left: the flaky network test"


def listed(events: list[ShellEvent]) -> list[str]:
    return [line for e in events if isinstance(e, Listed) for line in e.lines]


def records(state_dir: Path, kind: str) -> list[dict[str, object]]:
    saved = SavedSession.last(state_dir)
    assert saved is not None
    return [r for r in saved.records() if r["type"] == kind]


def test_quit_remembers_the_session_and_the_next_one_starts_with_it(tmp_path: Path) -> None:
    with open_shell(tmp_path, "The fixture path is relative.", SUMMARY) as shell:
        shell.line("why did the tests fail?")
        events = shell.line(":quit")
        assert Working("summarizing the session") in events
        assert isinstance(events[-1], Left) and shell.session.leaving
        assert "remembered this session as #1 (:history show 1)" in said(events)
        asked = shell.provider.sent[-1]
        assert asked.options.max_tokens == 160  # a summary, sized for a small model
        assert "User: why did the tests fail?" in asked.messages[1].content
        assert shell.session.book.turns[-1].kind == "memory"
        (record,) = records(shell.state_dir, "memory")
        assert (record["number"], record["by_model"]) == (1, True)
    with open_shell(tmp_path, "Go on with the flaky test.") as second:
        assert "the model remembers an earlier session here (:history list)" in said(second.opened)
        second.line("> what was left?")
        system = second.provider.sent[0].messages[0].content
        assert "[memory] Earlier sessions of the user:" in system
        assert "Left: the flaky network test" in system


def test_nothing_is_summarized_when_no_model_turn_happened(tmp_path: Path) -> None:
    with open_shell(tmp_path) as shell:
        shell.line("echo just-a-command")
        events = shell.line(":quit")
        assert said(events) == [] and isinstance(events[-1], Left)
        assert shell.provider.sent == []
        assert MemoryStore(shell.state_dir).entries() == []


def test_a_model_that_cannot_summarize_never_keeps_the_user_from_leaving(
    tmp_path: Path,
) -> None:
    with open_shell(tmp_path, "An answer.", ProviderError("server gone")) as shell:
        shell.line("why is the disk full?")
        events = list(shell.session.leave())  # Ctrl+D
        assert shell.session.leaving and isinstance(events[-1], Left)
        (warning,) = said(events)
        assert "could not summarize the session (server gone)" in warning
        assert "kept a digest of its questions as #1" in warning
        (entry,) = MemoryStore(shell.state_dir).entries()
        assert entry.summary == "- why is the disk full?"
        (record,) = records(shell.state_dir, "memory")
        assert record["by_model"] is False and record["error"] == "server gone"


def test_save_remembers_and_quit_replaces_it_once_more_was_said(tmp_path: Path) -> None:
    replies = ("One.", "- first summary", "Two.", "- second summary")
    with open_shell(tmp_path, *replies) as shell:
        shell.line("first question?")
        assert "remembered this session as #1 (:history show 1)" in said(shell.line(":save"))
        assert said(shell.line(":save"))[-1].startswith("every turn is saved")  # nothing new
        shell.line("second question?")
        shell.line(":quit")
        (entry,) = MemoryStore(shell.state_dir).entries()  # the first one replaced
        assert entry.summary == "- second summary"


def test_history_lists_shows_and_forgets_remembered_sessions(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "state")
    store.add("- worked on the parser", cwd="/elsewhere", model="fast")
    with open_shell(tmp_path) as shell:
        assert said(shell.opened) == []  # another directory's session is not recalled
        (line,) = listed(shell.line(":history list"))
        assert line.startswith("   1  ") and "/elsewhere  - worked on the parser" in line
        shown = listed(shell.line(":history show 1"))
        assert shown[0].startswith("#1  ") and shown[0].endswith("(fast)")
        assert shown[1:] == ["- worked on the parser"]
        assert said(shell.line(":history delete 1")) == ["forgot the session #1"]
        assert said(shell.line(":history show 1")) == [
            "no remembered session numbered 1 (:history list)"
        ]
        assert said(shell.line(":history show")) == [
            "write :history, :history list, :history show N or :history delete N"
        ]
        assert listed(shell.line(":history list")) == [
            "no sessions remembered yet (a summary is written at :quit and :save)"
        ]


def test_memory_off_writes_and_recalls_nothing(tmp_path: Path) -> None:
    MemoryStore(tmp_path / "state").add("- old", cwd=str(tmp_path / "work"), model="m")
    with open_shell(tmp_path, "Hi.", sections={"shell": {"memory": False}}) as shell:
        assert shell.session.remembered == ""
        shell.line("hello there?")
        assert said(shell.line(":quit")) == []
        assert len(shell.provider.sent) == 1


def test_evicted_turns_are_summarized_and_kept_for_the_model(tmp_path: Path) -> None:
    replies = ("A1.", "A2.", "- asked about q1", "A3.", "- asked about q1 and q2")
    with open_shell(tmp_path, *replies, sections={"shell": {"max_turns": 2}}) as shell:
        shell.line("why did one fail?")
        events = shell.line("why did two fail?")
        assert "[context] oldest 2 turns evicted; the model keeps a summary of them" in said(events)
        summarize = shell.provider.sent[2].messages
        assert (
            "User: why did one fail?" in summarize[1].content
            and "conch: A1." in summarize[1].content
        )
        assert shell.session.earlier == "- asked about q1"
        shell.line("why did three fail?")
        system = shell.provider.sent[3].messages[0].content
        assert "[earlier] Earlier in this session:\n- asked about q1" in system
        saved = [r["summary"] for r in records(shell.state_dir, "earlier")]
        assert saved == ["- asked about q1", "- asked about q1 and q2"]
        assert "Summary so far:\n- asked about q1" in shell.provider.sent[4].messages[1].content
        assert [t.content for t in shell.session.context.turns] == ["why did three fail?", "A3."]


def test_a_digest_stands_in_when_the_evicted_turns_cannot_be_summarized(
    tmp_path: Path,
) -> None:
    replies = ("A1.", "A2.", ProviderError("busy"))
    with open_shell(tmp_path, *replies, sections={"shell": {"max_turns": 2}}) as shell:
        shell.line("why did one fail?")
        events = shell.line("why did two fail?")
        assert "[context] oldest 2 turns evicted; a digest of them stays (busy)" in said(events)
        assert shell.session.earlier == "- why did one fail?"


def test_without_summarize_evicted_the_window_only_says_so(tmp_path: Path) -> None:
    sections = {"shell": {"max_turns": 2, "summarize_evicted": False}}
    with open_shell(tmp_path, "A1.", "A2.", sections=sections) as shell:
        shell.line("why did one fail?")
        assert "[context] oldest 2 turns evicted" in said(shell.line("why did two fail?"))
        assert len(shell.provider.sent) == 2 and shell.session.earlier == ""


def test_continue_takes_up_the_summary_of_the_evicted_turns(tmp_path: Path) -> None:
    replies = ("A1.", "A2.", "- asked about q1")
    with open_shell(tmp_path, *replies, sections={"shell": {"max_turns": 2}}) as shell:
        shell.line("why did one fail?")
        shell.line("why did two fail?")
    with open_shell(tmp_path, resume=True) as again:
        assert again.session.earlier == "- asked about q1"
        assert again.session.context.turns[-1] == Message("assistant", "A2.")
    with open_shell(tmp_path) as fresh:
        assert fresh.session.earlier == ""  # a new session starts afresh
