"""The context of ``conch shell``: command output opening the next user turn, the sliding
window, the suggestions found in a reply, and turns saved as JSON."""

from __future__ import annotations

import json

import pytest

from conch.agent.conversation import MESSAGE_OVERHEAD, alternation_problems, tokenizer_counter
from conch.messages import Message
from conch.shell.context import (
    BUFFER_COMMANDS,
    EXEC_TAG,
    TAIL_CHARS,
    TAIL_LINES,
    Context,
    Eviction,
    output_tail,
    suggested_commands,
    turn_from_dict,
    turn_to_dict,
)

KNOWN = frozenset({"ls", "cd", "git", "make", "echo", "grep", "du", "sort", "tar", "python3"})


def words(text: str) -> int:
    return len(text.split())


def chat(context: Context, *exchanges: tuple[str, str]) -> None:
    for question, reply in exchanges:
        context.ask(question)
        context.answer(reply)


# -- command output opens the next user turn ----------------------------------------------


def test_with_no_command_run_the_user_turn_is_the_text_alone() -> None:
    context = Context("be brief")
    prompt = context.ask("  what is a tarball?  ")
    assert prompt.messages == (
        Message("system", "be brief"),
        Message("user", "what is a tarball?"),
    )
    assert prompt.eviction is None


def test_why_did_that_fail_carries_the_last_command_block() -> None:
    context = Context("be brief")
    context.record("make test", 2, "cc -o t t.c\nt.c:3: error: expected ';'\n")
    prompt = context.ask("why did that fail?")
    assert prompt.messages[-1] == Message(
        "user",
        "[exec output]\n$ make test\nexit code: 2\ncc -o t t.c\nt.c:3: error: expected ';'"
        "\n\nwhy did that fail?",
    )
    assert context.turns == prompt.messages[1:]


def test_three_commands_become_three_blocks_in_the_order_they_ran() -> None:
    context = Context()
    context.record("cd /srv", 0, "")
    context.record("ls", 0, "app\nlogs\n")
    context.record("cat app/missing", 1, "cat: app/missing: No such file or directory\n")
    content = context.ask("what now?").messages[-1].content
    assert content == "\n\n".join(
        [
            "[exec output]\n$ cd /srv\nexit code: 0\n(no output)",
            "[exec output]\n$ ls\nexit code: 0\napp\nlogs",
            "[exec output]\n$ cat app/missing\nexit code: 1\n"
            "cat: app/missing: No such file or directory",
            "what now?",
        ]
    )
    assert content.count(EXEC_TAG) == 3


def test_the_buffer_is_consumed_by_one_user_turn_only() -> None:
    context = Context()
    context.record("false", 1, "")
    assert len(context.pending) == 1
    context.ask("why?")
    context.answer("false always fails")
    assert context.pending == ()
    assert context.ask("thanks").messages[-1] == Message("user", "thanks")


def test_output_alone_can_be_sent_without_words() -> None:
    context = Context()
    context.record("uname", 0, "Linux\n")
    assert context.ask("").messages[-1] == Message(
        "user", "[exec output]\n$ uname\nexit code: 0\nLinux"
    )


def test_nothing_to_send_is_refused() -> None:
    with pytest.raises(ValueError, match="nothing to send"):
        Context().ask("   ")


def test_the_buffer_keeps_only_the_newest_commands_and_says_so() -> None:
    context = Context()
    for number in range(BUFFER_COMMANDS + 3):
        context.record(f"echo {number}", 0, f"{number}\n")
    assert [ran.command for ran in context.pending] == [
        f"echo {number}" for number in range(3, BUFFER_COMMANDS + 3)
    ]
    content = context.ask("ok").messages[-1].content
    assert content.startswith(
        "[exec output] [... 3 earlier commands cut]\n\n[exec output]\n$ echo 3"
    )
    assert content.count("$ echo") == BUFFER_COMMANDS


# -- capping the output ---------------------------------------------------------------------


def test_long_output_keeps_its_last_lines() -> None:
    output = "".join(f"line {n}\n" for n in range(100))
    tail = output_tail(output)
    lines = tail.split("\n")
    assert lines[0] == "[... 60 earlier lines cut]"
    assert lines[1:] == [f"line {n}" for n in range(100 - TAIL_LINES, 100)]


def test_long_lines_are_cut_to_the_character_cap_whole_lines_first() -> None:
    output = "\n".join(f"{n:02d}" * 150 for n in range(30))  # 30 lines of 300 characters
    tail = output_tail(output)
    marker, _, body = tail.partition("\n")
    assert len(body) <= TAIL_CHARS
    kept = body.split("\n")
    assert marker == f"[... {30 - len(kept)} earlier lines cut]"
    assert kept[-1] == "29" * 150
    assert len(kept) == TAIL_CHARS // 301
    assert all(len(line) == 300 for line in kept)


def test_one_huge_line_keeps_its_end() -> None:
    tail = output_tail("a" * 5000 + "END")
    assert tail == "[... 1003 earlier characters cut]\n" + "a" * (TAIL_CHARS - 3) + "END"


def test_one_earlier_line_is_singular() -> None:
    assert output_tail("first\nsecond\nthird", lines=2) == "[... 1 earlier line cut]\nsecond\nthird"


def test_short_output_is_kept_whole() -> None:
    assert output_tail("one\ntwo\n") == "one\ntwo"


def test_recorded_output_is_capped() -> None:
    context = Context()
    ran = context.record("seq 1000", 0, "".join(f"{n}\n" for n in range(1, 1001)))
    assert ran.tail.startswith("[... 960 earlier lines cut]\n961\n")
    assert ran.tail.endswith("\n1000")


def test_terminal_escapes_and_redrawn_lines_are_cleaned() -> None:
    output = "\x1b[31merror\x1b[0m: bad\r\n10%\r50%\r100%\r\ndone\x07\n"
    assert output_tail(output) == "error: bad\n100%\ndone"


# -- alternation and reset ------------------------------------------------------------------


def test_two_user_turns_never_follow_each_other() -> None:
    context = Context("sys")
    context.record("ls", 0, "a\n")
    context.ask("what is a?")
    # the reply never came (an error, Ctrl+C): the next question joins the unanswered one
    context.record("cat a", 0, "hello\n")
    prompt = context.ask("and now?")
    assert [m.role for m in prompt.messages] == ["system", "user"]
    assert prompt.messages[-1].content == (
        "[exec output]\n$ ls\nexit code: 0\na\n\nwhat is a?\n\n"
        "[exec output]\n$ cat a\nexit code: 0\nhello\n\nand now?"
    )
    context.answer("it says hello")
    context.record("ls", 0, "a\n")
    messages = context.ask("more?").messages
    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    assert alternation_problems(messages) == []


def test_an_answer_needs_a_question() -> None:
    context = Context()
    with pytest.raises(ValueError, match="no user turn"):
        context.answer("hello")
    chat(context, ("hi", "hello"))
    with pytest.raises(ValueError, match="no user turn"):
        context.answer("again")


def test_reset_forgets_turns_and_buffer_but_keeps_the_system_prompt() -> None:
    context = Context("sys")
    chat(context, ("hi", "hello"))
    context.record("ls", 0, "a\n")
    context.reset()
    assert context.turns == ()
    assert context.pending == ()
    assert context.messages() == [Message("system", "sys")]
    assert context.ask("fresh").messages == (Message("system", "sys"), Message("user", "fresh"))


def test_no_system_prompt_sends_no_system_message() -> None:
    assert Context().ask("hi").messages == (Message("user", "hi"),)


# -- the sliding window ---------------------------------------------------------------------


def test_past_max_turns_the_oldest_pair_is_evicted() -> None:
    context = Context("sys", max_turns=4)
    chat(context, ("q1", "a1"), ("q2", "a2"))
    prompt = context.ask("q3")
    assert prompt.eviction == Eviction(2, False, context.tokens(), 4096)
    assert prompt.eviction.notice == "[context] oldest 2 turns evicted"
    assert [m.content for m in prompt.messages] == ["sys", "q2", "a2", "q3"]


def test_the_default_window_holds_forty_turns() -> None:
    context = Context()
    chat(context, *[(f"q{n}", f"a{n}") for n in range(20)])
    prompt = context.ask("q20")
    assert prompt.eviction is not None
    assert prompt.eviction.notice == "[context] oldest 2 turns evicted"
    assert len(context.turns) == 39
    assert context.turns[0] == Message("user", "q1")


def test_over_the_token_budget_the_oldest_pairs_are_evicted() -> None:
    # each turn costs its words plus the role markers
    turn = 3 + MESSAGE_OVERHEAD
    context = Context(token_budget=3 * turn, counter=words)
    chat(context, ("one two three", "four five six"), ("seven eight nine", "ten eleven twelve"))
    assert context.tokens() == 4 * turn
    prompt = context.ask("and the rest please")
    assert prompt.eviction is not None
    assert prompt.eviction.notice == "[context] oldest 4 turns evicted"
    assert prompt.eviction.tokens == 4 + MESSAGE_OVERHEAD == context.tokens()
    assert prompt.messages == (Message("user", "and the rest please"),)


def test_the_budget_counts_the_system_prompt() -> None:
    context = Context("a b c d e f", token_budget=25, counter=words)
    chat(context, ("one two", "three four"))
    assert context.tokens() == 10 + 6 + 6
    prompt = context.ask("five six")
    assert prompt.eviction is not None and prompt.eviction.turns == 2
    assert context.tokens() == 10 + 6


def test_a_window_that_fits_evicts_nothing() -> None:
    context = Context(token_budget=100, counter=words)
    chat(context, ("one", "two"))
    assert context.ask("three").eviction is None
    assert len(context.turns) == 3


def test_an_oversize_newest_turn_is_kept_whole_and_flagged() -> None:
    context = Context(token_budget=5, counter=words)
    prompt = context.ask("one two three four five six")
    assert prompt.eviction == Eviction(0, True, 6 + MESSAGE_OVERHEAD, 5)
    assert prompt.eviction.notice == (
        "[context] the newest turn alone is over the budget (10 of 5 tokens), kept whole"
    )
    assert prompt.messages == (Message("user", "one two three four five six"),)


def test_evicting_everything_older_can_still_leave_an_oversize_turn() -> None:
    context = Context(token_budget=12, counter=words)
    chat(context, ("hi", "hello"))
    context.record("ls", 0, "a b c d e f g h i j\n")
    prompt = context.ask("why?")
    assert prompt.eviction is not None
    assert prompt.eviction.turns == 2 and prompt.eviction.oversize
    assert prompt.eviction.notice.startswith("[context] oldest 2 turns evicted; the newest turn")
    assert [m.role for m in prompt.messages] == ["user"]


def test_a_tokenizer_counter_can_count_the_window() -> None:
    context = Context(token_budget=14, counter=tokenizer_counter(words))
    chat(context, ("one two three", "four"))
    assert context.ask("five").eviction == Eviction(2, False, 5, 14)


@pytest.mark.parametrize(("max_turns", "budget"), [(0, 10), (10, 0)])
def test_a_window_needs_room(max_turns: int, budget: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Context(max_turns=max_turns, token_budget=budget)


# -- suggestions in a reply -----------------------------------------------------------------

EXTRACTION: list[tuple[str, list[str]]] = [
    ("CMD: ls -la", ["ls -la"]),
    (
        "Check first.\nCMD: git status\nThen:\nCMD: git diff --stat\n",
        ["git status", "git diff --stat"],
    ),
    ("CMD: `du -sh .`", ["du -sh ."]),
    ("CMD:ls\ncmd: ls\n  CMD: ls\nCommand: ls", []),
    ("```bash\nls -la\n```", ["ls -la"]),
    ("```sh\ngrep -rn TODO src\n```", ["grep -rn TODO src"]),
    ("```shell\nmake\nmake install\n```", ["make", "make install"]),
    ("```console\n$ ls\napp  logs\n$ du -sh logs\n12M\tlogs\n```", ["ls", "du -sh logs"]),
    ("```bash\n$ git log -1\ncommit abc\n```", ["git log -1"]),
    ("```\ngit pull\nmake test\n```", ["git pull", "make test"]),
    ("```\ntotal 8\ndrwxr-xr-x 2 root root 4096 .\n```", []),
    ("```python\nimport os\nprint(os.getcwd())\n```", []),
    ("```bash\n# build it\n\nmake\n  # and clean\nmake clean\n```", ["make", "make clean"]),
    (
        "```bash\ntar -czf out.tar.gz \\\n    --exclude .git \\\n    src\nls\n```",
        ["tar -czf out.tar.gz --exclude .git src", "ls"],
    ),
    ("```console\n$ python3 -m venv \\\n> .venv\n```", ["python3 -m venv .venv"]),
    ("CMD: ls\n```bash\nls\ngit status\n```\nCMD: git status", ["ls", "git status"]),
    ("```bash\ngit fetch\n```\nthen\nCMD: git rebase", ["git fetch", "git rebase"]),
    ("CMD: git rebase\nfirst fetch:\n```sh\ngit fetch\n```", ["git rebase", "git fetch"]),
    ("```bash\nCMD: make\n```", ["make"]),
    ("```bash\n  du -sh * | sort -h  \n```", ["du -sh * | sort -h"]),
    ("The disk is full because the logs were never rotated.", []),
    ("Use `ls` to list files, or read the manual.", []),
    ("```sh\ngit status\n", ["git status"]),
]


@pytest.mark.parametrize(("reply", "expected"), EXTRACTION)
def test_suggested_commands(reply: str, expected: list[str]) -> None:
    assert suggested_commands(reply, KNOWN) == expected


def test_windows_line_endings_are_read_like_unix_ones() -> None:
    assert suggested_commands("CMD: ls\r\n```bash\r\nmake\r\n```\r\n", KNOWN) == ["ls", "make"]


# -- saving turns ---------------------------------------------------------------------------


def test_turns_round_trip_through_json() -> None:
    context = Context("sys")
    context.record("ls", 0, "a\n")
    chat(context, ("what is a?", "a file"), ("ünïcode ✓", "ok"))
    saved = json.dumps([turn_to_dict(turn) for turn in context.turns])
    restored = Context("sys")
    restored.restore(turn_from_dict(data) for data in json.loads(saved))
    assert restored.turns == context.turns
    assert restored.ask("next").messages[-3:] == (
        Message("user", "ünïcode ✓"),
        Message("assistant", "ok"),
        Message("user", "next"),
    )


def test_a_turn_is_a_plain_dict() -> None:
    assert turn_to_dict(Message("user", "hi")) == {"role": "user", "content": "hi"}


@pytest.mark.parametrize(
    "data",
    [
        {"role": "system", "content": "x"},
        {"role": "tool", "content": "x"},
        {"role": "user"},
        {"role": "user", "content": 3},
        ["user", "hi"],
        "user: hi",
    ],
)
def test_what_is_not_a_turn_is_refused(data: object) -> None:
    with pytest.raises(ValueError, match="turn"):
        turn_from_dict(data)


def test_only_user_and_assistant_messages_are_turns() -> None:
    with pytest.raises(ValueError, match="not a turn"):
        turn_to_dict(Message("system", "sys"))


def test_restored_turns_must_alternate_from_a_user_turn() -> None:
    context = Context()
    with pytest.raises(ValueError, match="turn 0 is a assistant turn"):
        context.restore([Message("assistant", "hi")])
    with pytest.raises(ValueError, match="turn 2 is a assistant turn"):
        context.restore(
            [Message("user", "a"), Message("assistant", "b"), Message("assistant", "c")]
        )
