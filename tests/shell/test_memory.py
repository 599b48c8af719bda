"""Session memory of ``conch shell``: the model's summary of a session, the store of
summaries (list, show, delete, the newest few for the next session), and the summary of the
turns the context window evicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conch.errors import ModelOutputError, ProviderError
from conch.messages import Message
from conch.providers.scripted import ScriptedProvider
from conch.shell.context import Context
from conch.shell.memory import (
    MEMORY_DIR,
    SUMMARY_CHARS,
    SUMMARY_TOKENS,
    MemoryEntry,
    MemoryStore,
    MemoryStoreError,
    digest,
    evicted_turns,
    memory_block,
    summarize_evicted,
    summarize_session,
    transcript,
)


def _turns() -> list[Message]:
    context = Context()
    context.record("make test", 2, "FAILED tests/test_io.py::test_read\n2 failed")
    context.ask("why did that fail?")
    context.answer("The fixture path is relative.\nCMD: pytest tests/test_io.py -k fixture")
    context.ask("fix it in tests/conftest.py")
    context.answer("Use Path(__file__).parent in tests/conftest.py.")
    return list(context.turns)


def test_the_session_summary_is_asked_with_a_short_prompt_and_a_small_budget() -> None:
    provider = ScriptedProvider.of(
        "Here is a summary:\n- Fixed the fixture path in tests/conftest.py.\n- make test passes."
    )
    summary = summarize_session(provider, _turns())
    assert summary is not None
    assert summary.text == "- Fixed the fixture path in tests/conftest.py.\n- make test passes."
    assert summary.by_model and summary.usage.completion_tokens > 0
    sent = provider.sent[0]
    assert sent.options.max_tokens == SUMMARY_TOKENS
    assert [m.role for m in sent.messages] == ["system", "user"]
    body = sent.messages[1].content
    # Command output is reduced to the command and its exit code.
    assert "ran: make test (exit 2)" in body and "2 failed" not in body
    assert "User: ran: make test (exit 2)\nwhy did that fail?" in body
    assert "conch: The fixture path is relative." in body


def test_no_turns_means_no_summary_and_no_request() -> None:
    provider = ScriptedProvider.of()
    assert summarize_session(provider, []) is None
    assert provider.sent == []


def test_a_reply_with_nothing_but_a_preamble_is_no_summary() -> None:
    with pytest.raises(ModelOutputError):
        summarize_session(ScriptedProvider.of("Summary:\n\n```\n```"), _turns())


def test_a_long_reply_is_cut_to_a_few_lines() -> None:
    reply = "\n".join(f"{n}. step {n} " + "x" * 150 for n in range(1, 12))
    summary = summarize_session(ScriptedProvider.of(reply), _turns())
    assert summary is not None
    assert len(summary.text) <= SUMMARY_CHARS
    assert summary.text.startswith("- step 1 ")


def test_the_transcript_keeps_the_newest_turns_within_its_bound() -> None:
    turns = [Message("user", f"question {n} " + "q" * 300) for n in range(40)]
    text = transcript(turns, max_chars=1000)
    assert len(text) <= 1000
    assert "question 39" in text and "question 0 " not in text


def test_the_store_numbers_lists_shows_and_deletes(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    first = store.add("Fixed the build.", cwd="/p", model="fast", session="a.jsonl")
    second = store.add("Wrote the parser.\nTests left.", cwd="/q", model="cloud")
    assert (first.number, second.number) == (1, 2)
    assert (tmp_path / MEMORY_DIR / "memory.jsonl").is_file()
    lines = store.list_lines()
    assert len(lines) == 2 and lines[1].split()[0] == "2" and lines[1].endswith("Wrote the parser.")
    assert store.show(2).summary == "Wrote the parser.\nTests left."
    assert store.delete(1) == first
    # Numbers never change, and a deleted number is not given out again while a later lives.
    assert [e.number for e in store.entries()] == [2]
    assert store.add("Third.", cwd="/p", model="fast").number == 3
    with pytest.raises(MemoryStoreError, match="no remembered session numbered 1"):
        store.show(1)
    with pytest.raises(MemoryStoreError):
        store.delete(7)


def test_recent_gives_the_newest_oldest_first_and_can_keep_to_a_directory(
    tmp_path: Path,
) -> None:
    store = MemoryStore(tmp_path)
    for n in range(5):
        store.add(f"session {n}", cwd="/p" if n % 2 == 0 else "/q", model="fast")
    assert [e.summary for e in store.recent(2)] == ["session 3", "session 4"]
    assert [e.summary for e in store.recent(5, cwd="/p")] == [
        "session 0",
        "session 2",
        "session 4",
    ]
    assert store.recent(0) == []


def test_the_store_keeps_a_bounded_number_and_skips_damaged_lines(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, keep=3)
    for n in range(5):
        store.add(f"session {n}", cwd="/p", model="fast")
    assert [e.number for e in store.entries()] == [3, 4, 5]
    with store.path.open("a", encoding="utf-8") as handle:
        handle.write('{"number": "x"}\nnot json\n')
    assert len(store.entries()) == 3
    with pytest.raises(ValueError):
        store.add("  ", cwd="/p", model="fast")
    assert MemoryStore(tmp_path / "none").list_lines()[0].startswith("no sessions remembered")


def test_an_entry_reads_back_what_it_wrote() -> None:
    entry = MemoryEntry(4, "2026-05-10T10:00:00+0000", "/p", "fast", "Did things.", "s.jsonl")
    assert MemoryEntry.from_dict(json.loads(json.dumps(entry.to_dict()))) == entry
    assert MemoryEntry.from_dict({"number": 1}) is None
    assert MemoryEntry.from_dict([1]) is None


def test_the_memory_block_fits_its_bound_dropping_the_oldest(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.add("old " + "o" * 500, cwd="/p", model="fast")
    store.add("new work", cwd="/p", model="fast")
    block = memory_block(store.recent(2), max_chars=200)
    assert block.startswith("[memory]")
    assert "new work" in block and "old" not in block
    assert memory_block([]) == ""


def test_evicted_turns_are_summarized_with_the_summary_so_far() -> None:
    context = Context(max_turns=2)
    for n in range(2):
        context.ask(f"question {n}")
        context.answer(f"answer {n}")
    before = context.turns
    prompt = context.ask("question 2")
    assert prompt.eviction is not None
    evicted = evicted_turns(before, prompt.eviction.turns)
    assert [t.content for t in evicted] == ["question 1", "answer 1"]
    provider = ScriptedProvider.of("- Asked questions 0 and 1.")
    summary = summarize_evicted(provider, evicted, previous="- Set up the project.")
    assert summary.text == "- Asked questions 0 and 1." and summary.by_model
    body = provider.sent[0].messages[1].content
    assert body.startswith("Summary so far:\n- Set up the project.")
    assert "User: question 1\n\nconch: answer 1" in body


def test_when_the_model_fails_a_digest_of_the_questions_stands_in() -> None:
    turns = [Message("user", "why does make fail?"), Message("assistant", "Because.")]
    provider = ScriptedProvider.of(ProviderError("the model server is unreachable"))
    summary = summarize_evicted(provider, turns, previous="- Earlier: set up.")
    assert not summary.by_model and "unreachable" in summary.error
    assert summary.text == "- Earlier: set up.\n- why does make fail?"


def test_a_digest_is_bounded() -> None:
    turns = [Message("user", f"q{n} " + "w" * 200) for n in range(20)]
    text = digest(turns)
    assert len(text) <= SUMMARY_CHARS and "q19" in text
