"""The confirmation rule, every combination: when a front end must ask, and explain first."""

from __future__ import annotations

from pathlib import Path

import pytest

from conch.config.settings import AllowedProgram, PromptConfig
from conch.policy import Decision, PolicyContext, Risk, Verdict
from conch.policy.confirm import Confirmation, confirmation, context_for, forced_explain

Y, _ = True, False

# The whole table: the prompt config lists programs (whitelist), the user asked to confirm
# (--confirm) or to explain (--explain), unsafe mode, and a program of the command has
# force_explain (only a listed program can have it), then what the rule says for each decision
# of the policy. "run": no question; "ask": a question; "ask+explain": a question after an
# explanation; "refuse": no question, the command never runs.
# fmt: off
TABLE = [
    # whitelist, confirm, explain, unsafe, force_explain | ALLOW | CONFIRM | REJECT
    (_, _, _, _, _, "ask"        , "ask"        , "refuse"),
    (_, _, _, Y, _, "ask"        , "ask"        , "refuse"),
    (_, _, Y, _, _, "ask"        , "ask"        , "refuse"),
    (_, _, Y, Y, _, "ask"        , "ask"        , "refuse"),
    (_, Y, _, _, _, "ask"        , "ask"        , "refuse"),
    (_, Y, _, Y, _, "ask"        , "ask"        , "refuse"),
    (_, Y, Y, _, _, "ask"        , "ask"        , "refuse"),
    (_, Y, Y, Y, _, "ask"        , "ask"        , "refuse"),
    (Y, _, _, _, _, "run"        , "ask"        , "refuse"),
    (Y, _, _, _, Y, "ask+explain", "ask+explain", "refuse"),
    (Y, _, _, Y, _, "ask"        , "ask"        , "refuse"),
    (Y, _, _, Y, Y, "ask+explain", "ask+explain", "refuse"),
    (Y, _, Y, _, _, "ask"        , "ask"        , "refuse"),
    (Y, _, Y, _, Y, "ask+explain", "ask+explain", "refuse"),
    (Y, _, Y, Y, _, "ask"        , "ask"        , "refuse"),
    (Y, _, Y, Y, Y, "ask+explain", "ask+explain", "refuse"),
    (Y, Y, _, _, _, "ask"        , "ask"        , "refuse"),
    (Y, Y, _, _, Y, "ask+explain", "ask+explain", "refuse"),
    (Y, Y, _, Y, _, "ask"        , "ask"        , "refuse"),
    (Y, Y, _, Y, Y, "ask+explain", "ask+explain", "refuse"),
    (Y, Y, Y, _, _, "ask"        , "ask"        , "refuse"),
    (Y, Y, Y, _, Y, "ask+explain", "ask+explain", "refuse"),
    (Y, Y, Y, Y, _, "ask"        , "ask"        , "refuse"),
    (Y, Y, Y, Y, Y, "ask+explain", "ask+explain", "refuse"),
]
# fmt: on

OUTCOMES = {
    "run": Confirmation(ask=False),
    "ask": Confirmation(ask=True),
    "ask+explain": Confirmation(ask=True, explain=True, forced_by=("ls",)),
    "refuse": Confirmation(ask=False),
}
LS = AllowedProgram(name="ls")
EXPLAINED = AllowedProgram(name="ls", force_explain=True)


def _core(wanted: Confirmation) -> tuple[bool, bool, tuple[str, ...]]:
    """What the rule decided (the reasons it gives are checked in tests/policy/test_rules.py)."""
    return wanted.ask, wanted.explain, wanted.forced_by


def verdict(decision: Decision, *commands: str) -> Verdict:
    return Verdict(decision, Risk.READ_ONLY, (), commands or ("ls",), (), ())


def test_the_table_has_every_combination_once() -> None:
    flags = [row[:5] for row in TABLE]
    assert len(set(flags)) == len(flags) == 2**4 + 2**3  # force_explain needs a whitelist


@pytest.mark.parametrize(
    ("whitelist", "confirm", "explain", "unsafe", "forced", "allow", "confirm_", "reject"),
    TABLE,
)
def test_the_rule_for_every_combination(
    whitelist: bool,
    confirm: bool,
    explain: bool,
    unsafe: bool,
    forced: bool,
    allow: str,
    confirm_: str,
    reject: str,
) -> None:
    programs = [EXPLAINED if forced else LS] if whitelist else []
    decisions = (Decision.ALLOW, Decision.CONFIRM, Decision.REJECT)
    for decision, outcome in zip(decisions, (allow, confirm_, reject), strict=True):
        got = confirmation(
            verdict(decision), programs, confirm=confirm, explain=explain, unsafe=unsafe
        )
        assert _core(got) == _core(OUTCOMES[outcome]), decision


@pytest.mark.parametrize(
    ("decision", "programs", "flags", "ask"),
    [
        # The cases users meet most, spelled out.
        (Decision.ALLOW, [], {}, True),  # no whitelist: every command is shown and asked
        (Decision.ALLOW, [LS], {}, False),  # whitelisted and read-only: runs at once
        (Decision.CONFIRM, [LS], {}, True),  # the policy wants a yes
        (Decision.ALLOW, [LS], {"confirm": True}, True),  # --confirm
        (Decision.ALLOW, [LS], {"unsafe": True}, True),  # unsafe mode always asks
        (Decision.REJECT, [LS], {"confirm": True}, False),  # never asked: never runs
    ],
)
def test_the_everyday_cases(
    decision: Decision, programs: list[AllowedProgram], flags: dict[str, bool], ask: bool
) -> None:
    assert confirmation(verdict(decision), programs, **flags).ask is ask


def test_force_explain_counts_only_programs_the_command_runs_and_says_which() -> None:
    programs = [LS, AllowedProgram(name="tar", force_explain=True)]
    assert not forced_explain(verdict(Decision.ALLOW, "ls"), programs)
    assert forced_explain(verdict(Decision.ALLOW, "ls", "tar"), programs)
    tar = confirmation(verdict(Decision.ALLOW, "ls", "tar"), programs)
    assert _core(tar) == (True, True, ("tar",))


def test_the_policy_context_of_a_prompt_config() -> None:
    assert context_for(PromptConfig()) == PolicyContext()
    listed = context_for(PromptConfig(tools=[LS]), unsafe=True, cwd=Path("/srv"))
    assert listed == PolicyContext(
        unsafe=True, allowed_tools=frozenset({"ls"}), cwd=Path("/srv"), pipelines=False
    )
    opted_in = context_for(PromptConfig(tools=[LS], allow_pipelines=True))
    assert opted_in == PolicyContext(allowed_tools=frozenset({"ls"}))
