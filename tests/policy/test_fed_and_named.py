"""Words a program gets at run time, and what a name stands for: ``xargs`` and ``parallel``
judged with the words their input gives, a program named by a path outside the system's
program directories, and reads that do more than read. Data only: ``assess`` runs nothing."""

from __future__ import annotations

import pytest

from conch.policy import Decision, ExecutionMode, PolicyContext, Risk, assess

EVERY_MODE = (
    PolicyContext(),
    PolicyContext(mode=ExecutionMode.FULL),
    PolicyContext(unsafe=True, mode=ExecutionMode.FULL),
)


@pytest.mark.parametrize(
    "command",
    [
        "xargs nice <<< 'rm -rf /etc'",
        "xargs env <<< 'rm -rf /usr'",
        "xargs timeout 9 <<< 'mkfs.ext4 /dev/sda1'",
        "xargs find <<< '/ -delete'",
        "echo '-o /etc/passwd /dev/null' | xargs sort",
        "echo '/dev/null /etc/shadow' | xargs uniq",
        "xargs -I {} sh -c {} <<< 'rm -rf ~'",
    ],
)
def test_what_xargs_builds_from_known_input_is_judged_as_it_runs(command: str) -> None:
    for context in EVERY_MODE:
        verdict = assess(command, context)
        assert verdict.decision is Decision.REJECT and verdict.denylisted, (command, context)


@pytest.mark.parametrize(
    "command",
    [
        "xargs -a /tmp/args find",
        "xargs -L1 env < /tmp/cmds",
        "cat list.txt | xargs git",
        "parallel -a /tmp/cmds",
        "parallel < /tmp/cmds",
        "xargs date <<< '-s @0'",
    ],
)
def test_words_from_input_the_policy_cannot_read_are_never_run_unasked(command: str) -> None:
    assert assess(command, PolicyContext()).decision is not Decision.ALLOW


@pytest.mark.parametrize(
    "command",
    [
        "find . -name '*.log' | xargs wc -l",
        "find src -type f -print0 | xargs -0 grep -l TODO",
        "printf 'a.txt b.txt' | xargs ls -l",
        "echo notes.txt | xargs cat",
    ],
)
def test_reading_pipelines_through_xargs_still_run(command: str) -> None:
    assert assess(command, PolicyContext()).decision is Decision.ALLOW, command


@pytest.mark.parametrize(
    ("command", "risk"),
    [
        ("/tmp/ls -la", Risk.UNKNOWN),
        ("./git log", Risk.UNKNOWN),
        ("~/bin/cat notes.txt", Risk.UNKNOWN),
        ("/usr/bin/../../tmp/ls", Risk.UNKNOWN),
        ("/usr/bin/ls -la", Risk.READ_ONLY),
        ("ls -la", Risk.READ_ONLY),
        ("cat /dev/watchdog", Risk.DESTRUCTIVE),
        ("sort /dev/urandom", Risk.UNKNOWN),
        ("head -c 16 /dev/urandom", Risk.READ_ONLY),
        ("printf '\\033]52;c;aGk=\\a'", Risk.UNKNOWN),
        ("printf '%s\\n' hello", Risk.READ_ONLY),
        ("git -C /tmp/elsewhere log -p", Risk.UNKNOWN),
        ("git --git-dir=/srv/x.git log", Risk.UNKNOWN),
        ("git -C sub status", Risk.READ_ONLY),
    ],
)
def test_what_a_name_or_a_read_may_really_do(command: str, risk: Risk) -> None:
    assert assess(command, PolicyContext(unsafe=True)).risk is risk, command
