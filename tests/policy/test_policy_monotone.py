"""Properties of the parser and the policy under hypothesis: no crash on any text, the same
verdict twice, and monotone: wrapping a command never makes it less restricted, and a
command's risk is never lower than any of its parts'. The budgets are small, for CI; the
coverage-guided search is benchmarks/policy/fuzz.py."""

from __future__ import annotations

import shlex

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conch.policy import Decision, ExecutionMode, PolicyContext, Verdict, assess
from conch.policy.classify import RISK_ORDER
from conch.policy.commands import analyse
from conch.policy.parse import ParseFailure, parse_tree

CONTROL = st.text(alphabet=st.characters(max_codepoint=0x9F), max_size=80)
SHELLISH = st.text(alphabet=st.sampled_from(list("abcrm -/~$(){}[]|&;<>'\"`\\*?!#=\n\t:.")))
# Parts of commands: programs from every risk class, arguments and paths.
PROGRAMS = st.sampled_from(
    [
        *("ls", "cat", "rm", "rm -rf", "dd", "chmod -R 777", "curl", "sudo", "python3 -c"),
        *("mkfs", "git status", "git reset --hard", "find . -delete", "echo", "tee", "kill"),
    ]
)
ARGS = st.lists(
    st.sampled_from(["/", "~", "x", "/etc", "/tmp/y", "-f", "of=/dev/sda", "*", "$HOME", "'a b'"]),
    max_size=3,
)
COMMANDS = st.builds(lambda p, a: " ".join([p, *a]), PROGRAMS, ARGS)
MODES = st.sampled_from(list(ExecutionMode))
WRAPS = [
    lambda c: f"sudo {c}",
    lambda c: f"env {c}",
    lambda c: f"nohup {c}",
    lambda c: f"timeout 5 {c}",
    lambda c: f"sh -c {shlex.quote(c)}",
    lambda c: f"bash -c {shlex.quote(c)}",
    lambda c: f"eval {shlex.quote(c)}",
    lambda c: f"ls | {c}",
    lambda c: f"{c} | cat",
    lambda c: f"true && {c}",
    lambda c: f"echo $({c})",
    lambda c: f"xargs {c} < /dev/null",
]
SEVERITY = {Decision.ALLOW: 0, Decision.CONFIRM: 1, Decision.REJECT: 2}


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(CONTROL, st.booleans())
def test_control_characters_never_crash_and_never_allow(text: str, unsafe: bool) -> None:
    verdict = assess(text, PolicyContext(unsafe=unsafe))
    hidden = any((ord(c) < 0x20 and c not in "\t\n") or 0x7F <= ord(c) <= 0x9F for c in text)
    if hidden:
        assert verdict.decision is not Decision.ALLOW


@settings(max_examples=20, deadline=None)
@given(st.integers(min_value=10_000, max_value=200_000), SHELLISH)
def test_huge_inputs_never_crash(size: int, tail: str) -> None:
    text = ("a" * size) + tail
    assert isinstance(assess(text), Verdict)
    assert isinstance(assess("$(" * (size // 100) + tail), Verdict)


@settings(max_examples=200)
@given(st.text(max_size=200))
def test_the_parser_never_raises_anything_but_parse_failure(text: str) -> None:
    try:
        root = parse_tree(text)
    except ParseFailure:
        assert assess(text).decision is Decision.REJECT
    else:
        assert root.type == "program"


@settings(max_examples=150)
@given(SHELLISH, MODES, st.booleans())
def test_assess_is_deterministic(text: str, mode: ExecutionMode, unsafe: bool) -> None:
    context = PolicyContext(unsafe=unsafe, mode=mode)
    assert assess(text, context) == assess(text, context)


@settings(max_examples=300, deadline=None)
@given(COMMANDS, st.sampled_from(range(len(WRAPS))), MODES, st.booleans())
def test_wrapping_never_loosens_the_verdict(
    command: str, wrap: int, mode: ExecutionMode, unsafe: bool
) -> None:
    context = PolicyContext(unsafe=unsafe, mode=mode)
    bare = assess(command, context)
    wrapped = assess(WRAPS[wrap](command), context)
    assert SEVERITY[wrapped.decision] >= SEVERITY[bare.decision], (wrapped.reasons, bare.reasons)
    if bare.denylisted:
        assert wrapped.denylisted
    if bare.decision is Decision.REJECT:
        assert wrapped.decision is Decision.REJECT


@settings(max_examples=300, deadline=None)
@given(st.lists(COMMANDS, min_size=1, max_size=3), st.sampled_from(["; ", " | ", " && "]))
def test_a_commands_risk_is_never_below_any_of_its_parts(parts: list[str], joiner: str) -> None:
    whole = assess(joiner.join(parts))
    for part in parts:
        risk = assess(part).risk
        assert RISK_ORDER.index(whole.risk) >= RISK_ORDER.index(risk)
        # every program of a part is among the whole's
        assert set(assess(part).commands) <= set(whole.commands)


@settings(max_examples=200, deadline=None)
@given(SHELLISH)
def test_nested_code_is_found_whatever_the_text(text: str) -> None:
    # The walker never raises on text it hands itself (sh -c, eval, alias bodies).
    for wrapped in (f"sh -c {shlex.quote(text)}", f"alias x={shlex.quote(text)}"):
        try:
            analysis = analyse(wrapped)
        except RecursionError:
            assert assess(wrapped).decision is Decision.REJECT  # assess turns it into this
        else:
            assert analysis.invocations[0].name in ("sh", "alias")
