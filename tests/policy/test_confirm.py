"""The confirmation rule, every combination: when a front end must ask, and explain first."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from conch.config.settings import AllowedProgram, PromptConfig
from conch.policy import Decision, PolicyContext, Risk, Verdict
from conch.policy.confirm import Confirmation, confirmation, context_for, forced_explain


def verdict(decision: Decision, *commands: str) -> Verdict:
    return Verdict(decision, Risk.READ_ONLY, (), commands or ("ls",), (), ())


LS = AllowedProgram(name="ls")
EXPLAINED = AllowedProgram(name="ls", force_explain=True)

# (whitelist, confirm, explain, unsafe, force_explain); force_explain belongs to a listed
# program, so there is no combination of it without a whitelist.
FLAGS = [f for f in itertools.product([False, True], repeat=5) if f[0] or not f[4]]


def expected(
    decision: Decision, listed: bool, confirm: bool, explain: bool, unsafe: bool, forced: bool
) -> Confirmation:
    if decision is Decision.REJECT:
        return Confirmation(ask=False)
    quiet = listed and decision is Decision.ALLOW
    quiet = quiet and not (confirm or explain or unsafe or forced)
    return Confirmation(ask=not quiet, explain=forced)


@pytest.mark.parametrize("decision", list(Decision))
@pytest.mark.parametrize(("listed", "confirm", "explain", "unsafe", "forced"), FLAGS)
def test_the_rule_for_every_combination(
    decision: Decision, listed: bool, confirm: bool, explain: bool, unsafe: bool, forced: bool
) -> None:
    programs = [EXPLAINED if forced else LS] if listed else []
    got = confirmation(verdict(decision), programs, confirm=confirm, explain=explain, unsafe=unsafe)
    assert got == expected(decision, listed, confirm, explain, unsafe, forced)


@pytest.mark.parametrize(
    ("decision", "programs", "flags", "ask"),
    [
        # The cases users meet most, spelled out.
        (Decision.ALLOW, [], {}, True),  # no whitelist: every command is shown and asked
        (Decision.ALLOW, [LS], {}, False),  # whitelisted and read-only: runs at once
        (Decision.CONFIRM, [LS], {}, True),  # the policy wants a yes
        (Decision.ALLOW, [LS], {"confirm": True}, True),  # --confirm
        (Decision.ALLOW, [LS], {"unsafe": True}, True),  # --unsafe always asks
        (Decision.REJECT, [LS], {"confirm": True}, False),  # never asked: never runs
    ],
)
def test_the_everyday_cases(
    decision: Decision, programs: list[AllowedProgram], flags: dict[str, bool], ask: bool
) -> None:
    assert confirmation(verdict(decision), programs, **flags).ask is ask


def test_force_explain_counts_only_programs_the_command_runs() -> None:
    programs = [LS, AllowedProgram(name="tar", force_explain=True)]
    assert not forced_explain(verdict(Decision.ALLOW, "ls"), programs)
    assert forced_explain(verdict(Decision.ALLOW, "ls", "tar"), programs)
    tar = confirmation(verdict(Decision.ALLOW, "tar"), programs)
    assert tar == Confirmation(ask=True, explain=True)


def test_the_policy_context_of_a_prompt_config() -> None:
    assert context_for(PromptConfig()) == PolicyContext()
    listed = context_for(PromptConfig(tools=[LS]), unsafe=True, cwd=Path("/srv"))
    assert listed == PolicyContext(unsafe=True, allowed_tools=frozenset({"ls"}), cwd=Path("/srv"))
