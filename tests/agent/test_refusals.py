"""The agent answers the request in front of it: a delete of the working directory is refused
with the files the request names and the call that deletes only them; an answer given while a
tool's failure stands is held back once with the request named again; the reply after a
refused or failed call says what and why; and pruning never drops the current request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentutil import Approver, EventLog, call, scripted_session, sent

from conch.agent import Limits, Session, ToolOptions
from conch.agent.conversation import alternation_problems
from conch.agent.loop import RETRY
from conch.execute.checked import Answer
from conch.messages import TextDelta, ToolCall
from conch.policy import ExecutionMode
from conch.providers.scripted import Reply, ScriptedProvider
from conch.tools import tool

REQUEST = "delete all the .tmp files here"


def step(name: str, **arguments: object) -> str:
    """A tool call as a JSON-step model writes it."""
    return json.dumps({"tool": name, "arguments": arguments})


def answer(text: str) -> str:
    return json.dumps({"answer": text})


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    for name in ("build.tmp", "cache.tmp", "notes.txt", "tmp_plan.txt", "src/app.py"):
        (work / name).write_text(f"{name}\n", encoding="utf-8")
    return work


def _session(work: Path, approver: Approver, *replies: Reply) -> Session:
    """The embedded model's way (JSON steps) with the file tools, asking ``approver``."""
    options = ToolOptions(
        root=work,
        mode=ExecutionMode.RESTRICTED,
        confirm=approver,
        audit=False,
        evaluate=False,
        plan=False,
        datetime=False,
    )
    return Session(ScriptedProvider.of(*replies), tools=options, tool_calls="json")


def _left(work: Path) -> list[str]:
    return sorted(p.relative_to(work).as_posix() for p in work.rglob("*") if p.is_file())


def test_a_delete_of_the_root_is_refused_with_the_files_the_request_names(work: Path) -> None:
    approver = Approver(Answer.run())
    session = _session(
        work,
        approver,
        step("fs_delete", path=str(work), recursive=True),
        step("fs_delete", path="*.tmp"),
        answer("Deleted build.tmp and cache.tmp."),
    )
    log = EventLog()
    reply = session.chat(REQUEST, on_event=log)
    refused, deleted = log.finished
    assert refused.result.is_error
    assert "refusing to delete the sandbox root" in refused.result.content
    assert 'Next, call fs_delete with {"path": "*.tmp"}' in refused.result.content
    assert "it deletes only 'build.tmp', 'cache.tmp'," in refused.result.content
    assert approver.asked == ["rm -- build.tmp cache.tmp"]  # one question for the pattern
    assert deleted.result.content == "deleted 2 entries matching '*.tmp': build.tmp, cache.tmp"
    assert _left(work) == ["notes.txt", "src/app.py", "tmp_plan.txt"]
    assert reply == "Deleted build.tmp and cache.tmp."  # the failure was made good: no note


def test_the_reply_after_a_refused_delete_says_what_was_refused(work: Path) -> None:
    session = _session(
        work, Approver(Answer.abort()), step("fs_delete", path="*.tmp"), answer("Done.")
    )
    log = EventLog()
    reply = session.chat(REQUEST, on_event=log)
    note = "[fs_delete was refused: the user refused it; nothing was done.]"
    assert reply == f"Done.\n{note}"
    assert "".join(e.text for e in log.events if isinstance(e, TextDelta)) == reply
    assert session.history[-1].content == reply
    assert len(sent(session).sent) == 2  # a refusal is the user's word: no second try
    assert "build.tmp" in _left(work)


def test_a_reply_that_says_it_was_refused_is_left_as_it_is(work: Path) -> None:
    said = "You refused the deletion, so the .tmp files are still there."
    session = _session(
        work, Approver(Answer.abort()), step("fs_delete", path="*.tmp"), answer(said)
    )
    assert session.chat(REQUEST) == said


def test_an_answer_while_a_failure_stands_is_held_back_with_the_request_named_again(
    work: Path,
) -> None:
    approver = Approver(Answer.run())
    session = _session(
        work,
        approver,
        step("fs_read", path="notes.txt"),
        answer("notes.txt has 1 line."),
        step("fs_delete", path=".", recursive=True),
        step("fs_list", path="."),
        answer("notes.txt has 1 line."),  # the earlier question, answered again
        step("fs_delete", path="*.tmp"),
        answer("Deleted the two .tmp files."),
    )
    assert session.chat("How many lines does notes.txt have?") == "notes.txt has 1 line."
    log = EventLog()
    assert session.chat(REQUEST, on_event=log) == "Deleted the two .tmp files."
    shown = "".join(e.text for e in log.events if isinstance(e, TextDelta))
    assert "notes.txt" not in shown  # the held-back answer was never shown
    retry = sent(session).sent[5].messages[-1].content
    assert retry.startswith(f'The last fs_delete call failed, so "{REQUEST}" is not done yet.')
    assert "Its error: PermissionError: fs_delete: refusing to delete the sandbox root" in retry
    assert '{"path": "*.tmp"}' in retry
    assert _left(work) == ["notes.txt", "src/app.py", "tmp_plan.txt"]
    assert alternation_problems(session.history) == []


def test_the_second_answer_stands_and_says_why_the_call_failed(work: Path) -> None:
    session = _session(
        work,
        Approver(),
        step("fs_delete", path=".", recursive=True),
        answer("All .tmp files have been deleted."),
        answer("All .tmp files have been deleted."),
    )
    reply = session.chat(REQUEST)
    first, note = reply.splitlines()
    assert first == "All .tmp files have been deleted."
    assert note.startswith("[fs_delete failed: refusing to delete the sandbox root")
    assert note.endswith("the whole working directory; nothing was deleted.]")
    assert "build.tmp" in _left(work)


def test_a_failed_look_made_good_by_another_call_does_not_stand(work: Path) -> None:
    session = _session(
        work,
        Approver(),
        step("fs_read", path="todo.txt"),
        step("fs_list", path="."),
        answer("There is no todo.txt; the files are notes.txt and tmp_plan.txt."),
    )
    reply = session.chat("what is in todo.txt?")
    assert reply == "There is no todo.txt; the files are notes.txt and tmp_plan.txt."
    assert len(sent(session).sent) == 3  # not held back: a failed read is not left standing


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    if key != "right":
        raise KeyError(f"no key {key!r}")
    return "found"


def test_a_failure_made_good_by_the_same_tool_needs_no_note() -> None:
    session = scripted_session(
        call("lookup", "c1", key="wrong"), call("lookup", "c2", key="right"), "found it",
        tools=(lookup,),
    )  # fmt: skip
    assert session.chat("look it up") == "found it"
    assert RETRY not in " ".join(m.content for m in sent(session).sent[-1].messages)


def test_a_repeat_that_was_not_run_adds_no_note() -> None:
    session = scripted_session(
        call("lookup", "c1", key="right"), call("lookup", "c2", key="right"),
        call("lookup", "c3", key="right"), "found",
        tools=(lookup,),
    )  # fmt: skip
    assert session.chat("look it up") == "found"


@tool
def chatter(n: int) -> str:
    """Print a lot."""
    return "line\n" * n


@tool
def flaky(n: int) -> str:
    """Fail once."""
    raise RuntimeError("not now")


def test_pruning_keeps_the_latest_request_however_many_calls_and_notes_follow_it() -> None:
    replies: list[Reply] = ["Three lines."]
    replies += [call("chatter", str(n), n=n + 150) for n in range(6)]
    replies += [call("flaky", "f", n=1), "Three lines.", "done"]  # held back, then told again
    session = scripted_session(
        *replies, tools=(chatter, flaky), context_tokens=2048, keep_turns=2,
        limits=Limits(max_iterations=20),
    )  # fmt: skip
    session.chat("How many lines does notes.txt have?")
    reply = session.chat("fill the context, then say done")
    assert reply.splitlines()[0] == "done"
    last = sent(session).sent[-1].messages
    contents = [m.content for m in last]
    assert "fill the context, then say done" in contents
    assert any("dropped to fit the context" in c for c in contents)
    assert last[-1].content.startswith('The last flaky call failed, so "fill the context')
    assert alternation_problems(last) == []


def test_a_native_call_refused_by_the_user_is_noted_too(work: Path) -> None:
    options = ToolOptions(
        root=work, mode=ExecutionMode.RESTRICTED, confirm=Approver(Answer.abort()), audit=False,
        evaluate=False, plan=False, datetime=False,
    )  # fmt: skip
    replies: list[Reply] = [ToolCall("c1", "fs_delete", '{"path": "notes.txt"}'), "Okay."]
    session = Session(ScriptedProvider.of(*replies), tools=options, tool_calls="native")
    reply = session.chat("delete notes.txt")
    assert reply == "Okay.\n[fs_delete was refused: the user refused it; nothing was done.]"
    results = [m for m in session.history if m.role == "tool"]
    assert len(results) == 1 and "CommandRefused" in results[0].content
