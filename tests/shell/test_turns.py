"""A model turn of ``conch shell``: what is sent, where the reply ends, what of it is shown
and kept, and the request for a corrected command."""

from __future__ import annotations

import pytest

from conch.messages import Finished, GenerationOptions, TextDelta
from conch.providers.base import drain
from conch.providers.scripted import ScriptedProvider
from conch.shell.context import EXEC_TAG, Context
from conch.shell.turns import ANSWER_AGAIN, REPAIR_TOKENS, model_turn, repair_turn


def test_the_reply_ends_where_the_model_would_invent_a_command_s_output() -> None:
    context = Context("system")
    context.record("wc -l server.log", 0, "4 server.log\n")
    provider = ScriptedProvider.of("Count them.\nCMD: wc -l server.log")
    reply = drain(model_turn(context, provider, "how many lines?", GenerationOptions(stop=("x",))))
    sent = provider.sent[0]
    assert sent.options.stop == ("x", EXEC_TAG)
    assert sent.messages[-1].content.startswith(EXEC_TAG)
    assert reply.commands == ("wc -l server.log",)


def test_made_up_output_is_neither_streamed_nor_kept_in_the_conversation() -> None:
    context = Context("system")
    context.record("ls logs", 0, "app.log  error.log\n")
    invented = (
        "CMD: ls logs\nexit code: 0\napp.log  error.log\n\n"
        "CMD: tail -n 3 logs/app.log\nexit code: 0\nmade-up line one\nmade-up line two"
    )
    provider = ScriptedProvider.of(invented)
    events: list[object] = []
    reply = drain(
        model_turn(context, provider, "show the end of app.log", GenerationOptions()),
        events.append,
    )
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert streamed == reply.text == "CMD: tail -n 3 logs/app.log"
    assert isinstance(events[-1], Finished)  # the rest of the text came before the end
    assert reply.dropped == 6
    assert reply.commands == ("tail -n 3 logs/app.log",)
    assert context.turns[-1].content == "CMD: tail -n 3 logs/app.log"


def test_a_correction_is_asked_for_after_the_question_with_the_problems() -> None:
    context = Context("system")
    provider = ScriptedProvider.of("CMD: tail -n 3 app.log", "CMD: tail -n 3 logs/app.log")
    drain(model_turn(context, provider, "show the end of app.log", GenerationOptions()))
    problem = "'app.log' does not exist in the current directory (there is logs/app.log)"
    repaired = drain(
        repair_turn(context, provider, "tail -n 3 app.log", [problem], GenerationOptions())
    )
    assert repaired.command == "tail -n 3 logs/app.log"
    sent = provider.sent[1]
    roles = [m.role for m in sent.messages]
    assert roles == ["system", "user", "assistant", "user"]
    assert sent.messages[2].content == "CMD: tail -n 3 app.log"
    assert problem in sent.messages[3].content
    assert sent.options.grammar is not None and sent.options.max_tokens == REPAIR_TOKENS
    assert [m.role for m in context.turns] == ["user", "assistant"]  # the conversation stays


def test_a_correction_needs_a_reply_to_correct() -> None:
    with pytest.raises(ValueError, match="no reply to correct"):
        drain(repair_turn(Context("s"), ScriptedProvider.of("x"), "ls", ["p"], GenerationOptions()))


def test_a_reply_that_only_replays_the_transcript_is_asked_for_once_more() -> None:
    context = Context("system")
    context.record("cat notes.txt", 0, "error: port 8123 already in use\n")
    replay = "CMD: cat notes.txt\nexit code: 0\nerror: port 8123 already in use"
    provider = ScriptedProvider.of(replay, "Port 8123 is taken by another process.")
    reply = drain(model_turn(context, provider, "why did that fail?", GenerationOptions()))
    assert reply.text == "Port 8123 is taken by another process."
    assert reply.dropped == 3
    again = provider.sent[1].messages
    assert [m.role for m in again[-3:]] == ["user", "assistant", "user"]
    assert again[-2].content == replay and again[-1].content == ANSWER_AGAIN
    assert reply.usage.completion_tokens == sum(len(text.split()) for text in (replay, reply.text))
    assert [m.content for m in context.turns][1:] == [reply.text]  # the nudge is not kept


def test_a_command_block_after_a_proposed_file_is_suggested() -> None:
    # The file's label names its path: every reader pairs the fences the same way, so the
    # shell block after it is a suggestion and the file's lines are not.
    reply = (
        "FILE: src/app.py\n"
        "```python src/app.py\n"
        "print('hello')\n"
        "```\n"
        "Run it:\n"
        "```bash\n"
        "python src/app.py\n"
        "```"
    )
    provider = ScriptedProvider.of(reply)
    turn = model_turn(Context("system"), provider, "write app.py", GenerationOptions(), files=True)
    done = drain(turn)
    assert [file.path for file in done.files] == ["src/app.py"]
    assert done.files[0].content == "print('hello')\n"
    assert done.commands == ("python src/app.py",)
