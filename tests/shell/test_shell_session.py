"""``ShellSession``, the turn logic of ``conch shell``, driven as a library object: no terminal,
a scripted model, a front end that answers from a list. Where each line goes, the offer of a
suggested command (ask, run, edit, decline, refuse), the one-shot pipeline for a line that
asks for a command, Ctrl+C in a turn, and the saved session.

Commands that run do so in the test's work directory under a temporary HOME; a canary file
outside it must come through untouched.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sessionutil import (
    Front,
    canary,  # noqa: F401 (autouse: checked after every test)
    kinds,
    open_shell,
    said,
)

from conch.agent.events import TurnFinished
from conch.errors import NoOneToAsk
from conch.execute.checked import Answer
from conch.messages import TextDelta
from conch.shell.context import EXEC_TAG
from conch.shell.events import (
    CommandRan,
    CommandShown,
    Output,
    Running,
    TurnEnded,
    TurnStarted,
    Working,
)
from conch.shell.request import kind_of
from conch.shell.sessions import SavedSession
from conch.shell.turns import SYSTEM_PROMPT
from requires import needs


def saved_execs(state_dir: Path) -> list[tuple[str, str]]:
    saved = SavedSession.last(state_dir)
    assert saved is not None
    return [(r["command"], r["source"]) for r in saved.records() if r["type"] == "exec"]


# -- where a line goes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("show the 3 most recent lines of app.log", True),
        ("find all the big files", True),
        ("please create a file named notes.txt", True),
        ("what is using port 8080", True),
        ("show the files in this directory", True),
        ("find files that contain TODO", True),
        ("why did that fail?", False),  # a question
        ("what does umask mean", False),
        ("what did that print", False),  # points back at what ran
        ("run it again", False),
        ("delete them", False),
        ("show the output again", False),
        ("my name is Ada", False),  # a statement, a greeting, a follow-up
        ("thanks", False),
        ("and now?", False),
        ("fix this:\nTypeError: x", False),  # pasted material
        ("", False),
    ],
)
def test_a_line_asks_for_a_command_or_goes_on_talking(line: str, command: bool) -> None:
    assert kind_of(line).command is command


def test_a_typed_line_runs_and_reaches_the_next_question(tmp_path: Path) -> None:
    with open_shell(tmp_path, "It printed a marker.") as shell:
        events = shell.line("echo marker-here")
        assert kinds(events) == ["Running", "CommandRan"]
        assert events[1] == CommandRan("echo marker-here", 0, "typed")
        assert b"marker-here" in shell.out.getvalue()
        shell.line("why did it print that?")
        asked = shell.provider.sent[0].messages
        assert asked[0].content.startswith(SYSTEM_PROMPT)
        assert asked[-1].content.startswith(f"{EXEC_TAG}\n$ echo marker-here\nexit code: 0\n")
        assert shell.audit() == []  # typed lines are the user's own: not audited
        assert saved_execs(shell.state_dir) == [("echo marker-here", "typed")]


def test_a_question_is_a_conversation_streamed_and_kept(tmp_path: Path) -> None:
    with open_shell(tmp_path, "Because the port is taken.") as shell:
        events = shell.line("why did the server fail?")
        assert events[0] == TurnStarted("ask", "why did the server fail?")
        text = "".join(e.text for e in events if isinstance(e, TextDelta))
        assert text == "Because the port is taken."
        ended = next(e for e in events if isinstance(e, TurnEnded))
        assert ended.ok and ended.reply == text
        assert [t.role for t in shell.session.context.turns] == ["user", "assistant"]
        assert shell.session.book.turns[0].kind == "ask"


def test_a_line_forced_to_the_model_is_a_conversation_whatever_it_asks(tmp_path: Path) -> None:
    with open_shell(tmp_path, "Sure.", "Sure again.") as shell:
        shell.line("> show the files here")
        shell.line("ls -la", flipped=True)
        assert [s.messages[0].content[: len(SYSTEM_PROMPT)] for s in shell.provider.sent] == [
            SYSTEM_PROMPT,
            SYSTEM_PROMPT,
        ]


def test_a_forcing_meta_with_nothing_after_it_says_so(tmp_path: Path) -> None:
    with open_shell(tmp_path) as shell:
        assert said(shell.line(":exec")) == ["nothing after ':exec'"]


# -- the offer of a suggested command -----------------------------------------------------------


def test_a_suggestion_is_checked_shown_and_asked_about_and_no_leaves_it(tmp_path: Path) -> None:
    with open_shell(tmp_path, "Try this:\nCMD: touch made-by-model") as shell:
        events = shell.line("> could you make a file?")
        assert Working("checking") in events
        [shown] = [e for e in events if isinstance(e, CommandShown)]
        assert (shown.heading, shown.command) == ("the model suggests:", "touch made-by-model")
        assert shown.verdict.risk.value == "writes"
        [question] = shell.front.asked
        assert (question.kind, question.command) == ("suggestion", "touch made-by-model")
        assert not (shell.work / "made-by-model").exists()
        assert [line[2:4] for line in shell.audit()] == [
            ["touch made-by-model", "refused:declined"]
        ]


def test_yes_runs_the_suggestion_on_the_terminal_with_its_audit_line(tmp_path: Path) -> None:
    front = Front([Answer.run()])
    with open_shell(tmp_path, "CMD: echo suggested-ran", "Done.", front=front) as shell:
        events = shell.line("> say something")
        assert Running("echo suggested-ran", "suggested") in events
        assert CommandRan("echo suggested-ran", 0, "suggested") in events
        assert [line[2:4] for line in shell.audit()] == [["echo suggested-ran", "exit:0"]]
        shell.line("why?")
        assert "$ echo suggested-ran\nexit code: 0\nsuggested-ran" in (
            shell.provider.sent[1].messages[-1].content
        )
        assert saved_execs(shell.state_dir) == [("echo suggested-ran", "suggested")]


def test_edit_runs_the_user_s_edit_after_the_policy_s_check(tmp_path: Path) -> None:
    front = Front([Answer.edit("echo first-draft")], edits=["echo edited-ran"])
    with open_shell(tmp_path, "CMD: echo first-draft", front=front) as shell:
        events = shell.line("> say something")
        assert shell.front.edited == ["echo first-draft"]
        assert CommandRan("echo edited-ran", 0, "edited") in events
        assert b"edited-ran" in shell.out.getvalue()


def test_an_empty_edit_runs_nothing_and_a_rejected_edit_never_runs(tmp_path: Path) -> None:
    front = Front([Answer.edit("ls"), Answer.edit("ls")], edits=["", "rm -rf /"])
    with open_shell(tmp_path, "CMD: ls", "CMD: ls", front=front) as shell:
        assert "nothing run" in said(shell.line("> list"))
        events = shell.line("> list again")
        assert [e.heading for e in events if isinstance(e, CommandShown)][-1] == "your edit:"
        assert any(s.startswith("not running it: Denylisted") for s in said(events))
        assert not any(isinstance(e, CommandRan) for e in events)
        assert shell.audit()[-1][2:4] == ["rm -rf /", "refused:policy"]


def test_a_rejected_suggestion_is_refused_without_a_question(tmp_path: Path) -> None:
    with open_shell(tmp_path, "Wipe it:\n```bash\nrm -rf ~\n```") as shell:
        events = shell.line("> free some space")
        assert shell.front.asked == []
        assert any(s.startswith("not running it: Denylisted") for s in said(events))
        assert [line[2:4] for line in shell.audit()] == [["rm -rf ~", "refused:policy"]]


def test_with_no_one_to_ask_a_suggestion_does_not_run(tmp_path: Path) -> None:
    front = Front([NoOneToAsk("echo x")])
    with open_shell(tmp_path, "CMD: echo x", front=front) as shell:
        assert "not run: there is no terminal to ask on" in said(shell.line("> say x"))
        assert [line[2:4] for line in shell.audit()] == [["echo x", "refused:unasked"]]


def test_a_wrong_path_is_corrected_by_the_model_and_the_correction_offered(
    tmp_path: Path,
) -> None:
    front = Front([Answer.run()])
    replies = ("CMD: cat notes.txt", "cat docs/notes.txt")
    with open_shell(tmp_path, *replies, front=front) as shell:
        (shell.work / "docs").mkdir()
        (shell.work / "docs" / "notes.txt").write_text("a note\n", encoding="utf-8")
        events = shell.line("> show my notes")
        headings = [(e.heading, e.command) for e in events if isinstance(e, CommandShown)]
        assert headings == [
            ("the model suggests:", "cat notes.txt"),
            ("the model's correction:", "cat docs/notes.txt"),
        ]
        assert "asking the model to correct it" in said(events)
        assert [q.command for q in shell.front.asked] == ["cat docs/notes.txt"]
        assert b"a note" in shell.out.getvalue()
        assert shell.session.book.turns[-1].kind == "repair"


def test_a_missing_command_offers_the_model_and_a_forced_one_does_not(tmp_path: Path) -> None:
    front = Front([Answer.run()])
    with open_shell(tmp_path, "There is no such script.", front=front) as shell:
        shell.line("./missing-script.sh --now")
        assert [(q.kind, q.command) for q in shell.front.asked] == [
            ("ask_model", "./missing-script.sh --now")
        ]
        asked = shell.provider.sent[0].messages[-1].content
        assert "exit code: 127" in asked and asked.endswith("\n\n./missing-script.sh --now")
        shell.line("$ ./missing-script.sh --now")
        assert len(shell.front.asked) == 1


# -- a line that asks for a command: the one-shot pipeline ---------------------------------------


def test_a_request_for_a_command_is_served_by_the_one_shot_pipeline(tmp_path: Path) -> None:
    front = Front([Answer.run()])
    with open_shell(
        tmp_path, "tail -n 1 logs/app.log", "It is the last line.", front=front
    ) as shell:
        (shell.work / "logs").mkdir()
        (shell.work / "logs" / "app.log").write_text("one\ntwo\n", encoding="utf-8")
        events = shell.line("show the last line of logs/app.log")
        assert events[0] == TurnStarted("command", "show the last line of logs/app.log")
        assert Working("generating") in events
        assert not any(isinstance(e, TextDelta) for e in events)  # the generation is not shown
        [shown] = [e for e in events if isinstance(e, CommandShown)]
        assert (shown.heading, shown.command) == ("the model suggests:", "tail -n 1 logs/app.log")
        assert CommandRan("tail -n 1 logs/app.log", 0, "suggested") in events
        generation = shell.provider.sent[0].messages
        assert not generation[0].content.startswith(SYSTEM_PROMPT)  # the one-shot's prompt
        assert generation[-1].content == "show the last line of logs/app.log"
        turns = [(t.role, t.content) for t in shell.session.context.turns]
        assert turns == [
            ("user", "show the last line of logs/app.log"),
            ("assistant", "CMD: tail -n 1 logs/app.log"),
        ]
        assert shell.session.book.turns[0].kind == "command"
        # A question after it knows what was proposed, and what it printed.
        shell.line("why only one line?")
        asked = shell.provider.sent[-1].messages
        assert asked[-2].content == "CMD: tail -n 1 logs/app.log"
        assert "$ tail -n 1 logs/app.log\nexit code: 0\ntwo" in asked[-1].content


def test_a_file_the_one_shot_s_command_misses_is_corrected_once_in_the_conversation(
    tmp_path: Path,
) -> None:
    front = Front([Answer.abort()])
    replies = ("tail -n 3 app.log", "tail -n 3 logs/app.log")
    with open_shell(tmp_path, *replies, front=front) as shell:
        (shell.work / "logs").mkdir()
        (shell.work / "logs" / "app.log").write_text("one\n", encoding="utf-8")
        events = shell.line("show the end of app.log")
        first, second = [e for e in events if isinstance(e, CommandShown)]
        problem = "'app.log' does not exist in the current directory (there is logs/app.log)"
        assert f"problem: {problem}" in first.notes
        assert (second.heading, second.command) == (
            "the model's correction:",
            "tail -n 3 logs/app.log",
        )
        repair = shell.provider.sent[1].messages
        assert repair[-2].content == "CMD: tail -n 3 app.log"  # in the conversation
        assert problem in repair[-1].content
        assert [q.kind for q in shell.front.asked] == ["suggestion"]


@needs("bubblewrap")
def test_the_pipeline_dry_runs_and_repairs_and_the_shell_does_not_check_again(
    tmp_path: Path,
) -> None:
    sections = {"generation": {"dry_run": True, "review": 1, "candidates": 1}}
    replies = ("tail -n 3 app.log", "tail -n 3 logs/app.log")
    with open_shell(tmp_path, *replies, sections=sections) as shell:
        (shell.work / "logs").mkdir()
        (shell.work / "logs" / "app.log").write_text("1\n2\n3\n4\n", encoding="utf-8")
        events = shell.line("show the 3 most recent lines of app.log")
        assert Working("repairing") in events
        assert Working("checking") not in events  # the shell's checker does not run again
        [shown] = [e for e in events if isinstance(e, CommandShown)]
        assert shown.command == "tail -n 3 logs/app.log"
        assert shown.notes == ("tried: worked, printed 3 lines",)


@needs("bubblewrap")
def test_a_read_only_suggestion_runs_contained_when_confirm_cmd_is_off(tmp_path: Path) -> None:
    sections = {"shell": {"confirm_cmd": False}}
    with open_shell(tmp_path, "CMD: echo ran-at-once", sections=sections) as shell:
        events = shell.line("> show me")
        assert shell.front.asked == []
        assert Output("ran-at-once\n", "") in events
        assert CommandRan("echo ran-at-once", 0, "suggested", contained=True) in events
        assert shell.out.getvalue() == b""  # captured, not on the terminal


def test_a_request_the_pipeline_finds_no_command_for_becomes_a_conversation(
    tmp_path: Path,
) -> None:
    prose = "I am not sure what you mean. Could you tell me more about what you want?"
    with open_shell(tmp_path, prose, "Tell me which greeting you like.") as shell:
        events = shell.line("greet me")
        starts = [e for e in events if isinstance(e, TurnStarted)]
        assert starts == [TurnStarted("command", "greet me"), TurnStarted("ask", "greet me")]
        assert "no command came of it; asking the model to answer in words" in said(events)
        turns = [(t.role, t.content) for t in shell.session.context.turns]
        assert turns == [("user", "greet me"), ("assistant", "Tell me which greeting you like.")]


def test_a_request_the_policy_rejects_is_refused(tmp_path: Path) -> None:
    with open_shell(tmp_path, "rm -rf ~") as shell:
        events = shell.line("free up all the space in my home")
        assert any(s.startswith("not running it: Denylisted") for s in said(events))
        assert shell.front.asked == []


# -- Ctrl+C and failures -------------------------------------------------------------------------


def test_ctrl_c_in_a_reply_stops_it_and_the_question_joins_the_next(tmp_path: Path) -> None:
    with open_shell(tmp_path, "A long answer that goes on and on", "Short.") as shell:
        stream = shell.session.handle("why is the build slow?")
        events = []
        for event in stream:
            events.append(event)
            if isinstance(event, TextDelta):
                events.append(stream.throw(KeyboardInterrupt()))
                events.extend(stream)
                break
        ended = next(e for e in events if isinstance(e, TurnEnded))
        assert ended.interrupted and not ended.ok
        assert "stopped; the question joins your next one" in said(events)
        shell.line("and the tests?")
        asked = shell.provider.sent[-1].messages[-1].content
        assert asked == "why is the build slow?\n\nand the tests?"


def test_a_failed_reply_is_one_warning_and_the_shell_goes_on(tmp_path: Path) -> None:
    from conch.errors import ProviderError

    with open_shell(tmp_path, ProviderError("the server is gone"), "Back.") as shell:
        events = shell.line("why is it down?")
        ended = next(e for e in events if isinstance(e, TurnEnded))
        assert isinstance(ended.error, ProviderError)
        assert said(events) == ["the server is gone; the question joins your next one"]
        assert any(isinstance(e, TurnFinished) for e in events) is False
        assert "Back." in "".join(e.text for e in shell.line("why?") if isinstance(e, TextDelta))
