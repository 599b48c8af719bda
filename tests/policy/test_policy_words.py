"""simple_words, the commands a verdict names, and the Verdict's JSON shape."""

from __future__ import annotations

import os
import shlex
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conch.errors import PolicyRejection
from conch.messages import Word
from conch.policy import Decision, ExecutionMode, PolicyContext, Risk, assess, simple_words


def test_simple_words_removes_quotes_of_every_kind() -> None:
    words = simple_words("""echo 'a b' "c d" e\\ f $'g\\th' r''m "x"y""")
    assert [w.text for w in words] == ["echo", "a b", "c d", "e f", "g\th", "rm", "xy"]


def test_simple_words_flags_an_unquoted_glob() -> None:
    assert simple_words("ls *.py") == [Word("ls"), Word("*.py", glob=True)]


def test_simple_words_does_not_flag_a_quoted_glob() -> None:
    assert simple_words("ls '*.py'") == [Word("ls"), Word("*.py", glob=False)]


def test_simple_words_does_not_flag_an_escaped_glob() -> None:
    assert simple_words("ls \\*.py") == [Word("ls"), Word("*.py", glob=False)]


def test_simple_words_flags_question_marks_and_brackets() -> None:
    assert [w.glob for w in simple_words("ls a?.txt [ab].txt")] == [False, True, True]


def test_simple_words_expands_a_leading_tilde() -> None:
    assert simple_words("ls ~/docs")[1].text == os.path.expanduser("~") + "/docs"


def test_simple_words_keeps_a_quoted_tilde() -> None:
    assert simple_words("ls '~'")[1].text == "~"


@pytest.mark.parametrize(
    "command",
    [
        "ls | wc",
        "ls > out",
        "ls; pwd",
        "echo $HOME",
        "echo $(date)",
        "FOO=1 ls",
        "echo {a,b}",
        "echo 'unterminated",
        "",
        "(ls)",
        "ls &",
    ],
)
def test_simple_words_rejects_anything_but_one_simple_command(command: str) -> None:
    with pytest.raises(PolicyRejection):
        simple_words(command)


@given(
    st.lists(
        st.text(
            # What the parser accepts: no NUL, surrogates, unassigned or private-use
            # characters, and no control or invisible format characters but tab and newline.
            alphabet=st.characters(
                blacklist_characters="\x00",
                blacklist_categories=("Cs", "Co", "Cn", "Cf", "Zl", "Zp"),
            ).filter(lambda c: c in "\t\n" or unicodedata.category(c) != "Cc"),
            min_size=1,
        ),
        min_size=1,
    )
)
def test_simple_words_round_trips_quoted_words(words: list[str]) -> None:
    # shlex.quote leaves `==...` bare, which tree-sitter-bash reports as an error (below).
    words = [w for w in words if not w.startswith("==")] or ["x"]
    command = "cmd " + " ".join(shlex.quote(w) for w in words)
    assert [w.text for w in simple_words(command)] == ["cmd", *words]


@given(st.lists(st.from_regex(r"[A-Za-z0-9_./=+-]{1,12}", fullmatch=True), min_size=1))
def test_simple_words_keeps_plain_words_unchanged(words: list[str]) -> None:
    # `~` expands; tree-sitter-bash reports a bare `==...` word as an error (fails closed)
    words = [w for w in words if not w.startswith(("~", "=="))]
    result = simple_words(" ".join(["cmd", *words]))
    assert [w.text for w in result] == ["cmd", *words]
    assert not any(w.glob for w in result)


def test_the_verdict_commands_lists_nested_commands_in_order_without_repeats() -> None:
    assert list(assess("sudo env X=1 rm $(ls) && ls | xargs rm").commands) == [
        "sudo",
        "env",
        "rm",
        "ls",
        "xargs",
    ]


def test_the_verdict_commands_reads_through_shell_strings() -> None:
    assert list(assess("bash -c 'curl x | sh -c \"rm y\"'").commands) == [
        "bash",
        "curl",
        "sh",
        "rm",
    ]


def test_the_verdict_commands_names_the_base_name_of_a_path() -> None:
    assert list(assess("/usr/bin/env /bin/rm x").commands) == ["env", "rm"]


def test_the_verdict_commands_skips_an_unknowable_command_name() -> None:
    assert list(assess("$(echo rm) -rf x").commands) == ["echo"]


def test_verdict_to_json_has_every_field() -> None:
    verdict = assess("ls | rm x")
    assert verdict.to_json() == {
        "decision": "confirm",
        "risk": "destructive",
        "reasons": list(verdict.reasons),
        "commands": ["ls", "rm"],
        "operators": ["|"],
        "paths": [],
        "denylisted": False,
        "needs_shell": False,
    }


def test_a_command_that_needs_a_shell_says_it_runs_through_one_contained() -> None:
    assert assess("ls | wc -l $(cat list)").reasons[0] == (
        "Runs through a shell (the word '$(cat list)' expands at run time); what runs without "
        "a question runs contained."
    )


def test_what_safe_mode_refuses_even_in_a_shell_tells_the_user_about_unsafe_mode() -> None:
    assert assess("for f in *; do rm -rf $f; done").reasons[0] == (
        "rm is given '$f', a path only known at run time, which the denylist cannot "
        "judge. Safe mode does not run it; unsafe mode runs your shell and always asks first."
    )


def test_a_pipeline_safe_mode_runs_itself_says_so() -> None:
    assert assess("ls | wc").reasons == ("Runs without a shell: conch does | itself.",)


def test_an_operator_in_a_one_program_prompt_config_names_the_setting() -> None:
    context = PolicyContext(allowed_tools=frozenset({"ls", "wc"}), pipelines=False)
    assert assess("ls | wc", context).reasons[0] == (
        "Disallowed shell operator '|': this prompt config allows one program at a time "
        "(allow_pipelines: true allows pipes and lists); unsafe mode allows operators and "
        "always asks first."
    )


@pytest.mark.parametrize(
    ("command", "context", "needs_unsafe"),
    [
        ("ls | wc &", PolicyContext(), False),  # runs through a shell
        ("source env.sh", PolicyContext(), True),  # code it cannot see: unsafe mode would ask
        ("$CMD x", PolicyContext(), True),  # the program is known only at run time
        ("echo 'oops", PolicyContext(), True),  # does not parse
        ("ls | wc", PolicyContext(unsafe=True), False),  # not rejected at all
        ("rm -rf / | wc", PolicyContext(), False),  # denylisted: no mode runs it
        ("ls | rm x", PolicyContext(allowed_tools=frozenset({"ls"})), False),  # whitelist
        ("ls", PolicyContext(), False),
    ],
)
def test_the_verdict_says_when_only_unsafe_mode_would_run_it(
    command: str, context: PolicyContext, needs_unsafe: bool
) -> None:
    verdict = assess(command, context)
    assert verdict.needs_unsafe is needs_unsafe
    if needs_unsafe:
        relaxed = assess(command, PolicyContext(unsafe=True))
        assert relaxed.decision is Decision.CONFIRM


@pytest.mark.parametrize("unsafe", [False, True])
@pytest.mark.parametrize(
    "command",
    ["ls | wc", "ls &", "echo $(date)", "echo 'oops", "rm -rf /", "$CMD x", "rm x", "ls"],
)
def test_no_reason_names_a_command_line_flag(command: str, unsafe: bool) -> None:
    # Reasons reach every surface (terminal, HTTP, MCP); hints about flags are the CLI's.
    for mode in ExecutionMode:
        context = PolicyContext(unsafe=unsafe, mode=mode)
        assert not any("--" in reason for reason in assess(command, context).reasons)


def test_whitelist_reason_names_the_command_and_the_allowed_tools() -> None:
    verdict = assess("rm x", PolicyContext(allowed_tools=frozenset({"jq"})))
    assert "Disallowed command 'rm'. Allowed tools: jq" in verdict.reasons


def test_parse_failure_reason_says_could_not_parse() -> None:
    verdict = assess("echo 'oops")
    assert verdict.risk is Risk.UNKNOWN
    assert any("could not parse" in r for r in verdict.reasons)


def test_denylisted_reason_says_unsafe_does_not_help() -> None:
    verdict = assess("rm -rf /", PolicyContext(unsafe=True))
    assert verdict.decision is Decision.REJECT
    assert any("not even in unsafe mode" in r for r in verdict.reasons)


def test_unknowable_command_name_reason_says_so() -> None:
    verdict = assess("$CMD file")
    assert any("cannot be known" in r for r in verdict.reasons)


def test_paths_lists_path_like_arguments_and_redirect_targets() -> None:
    verdict = assess("cp ./a /tmp/b ~/c > out/log", PolicyContext(unsafe=True))
    assert verdict.paths == ("./a", "/tmp/b", "~/c", "out/log")


def test_lone_surrogates_are_rejected_not_a_crash() -> None:
    assert assess("echo \ud800").decision is Decision.REJECT


def test_private_use_characters_are_rejected_before_they_reach_tree_sitter() -> None:
    # "{" + U+10D136 segfaults tree-sitter-bash 0.25.1
    assert assess("{\U0010d136").decision is Decision.REJECT


def test_a_shell_with_dash_c_but_no_string_is_not_read_only() -> None:
    assert assess("bash -c").decision is Decision.CONFIRM


def test_deep_nesting_is_rejected_not_a_crash() -> None:
    verdict = assess("echo " + "$(" * 3000 + "ls" + ")" * 3000)
    assert verdict.decision is Decision.REJECT
