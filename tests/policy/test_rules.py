"""The one rule for every action: run, ask or refuse, from the mode, the risk, what the user
asked for and their permission rules; and the config section that holds those rules."""

from __future__ import annotations

import pytest

from conch.config.permissions import PermissionSettings
from conch.policy import Risk
from conch.policy.rules import (
    Action,
    ExecutionMode,
    Kind,
    Outcome,
    Permission,
    Permissions,
    decide,
    mode_outcome,
    permissions_from,
)

INTER, R, F = ExecutionMode.INTERACTIVE, ExecutionMode.RESTRICTED, ExecutionMode.FULL
RUN, ASK, REFUSE = Outcome.RUN, Outcome.ASK, Outcome.REFUSE

# fmt: off
MODE_TABLE = [
    # risk               interactive restricted full
    (Risk.READ_ONLY,     ASK,        RUN,       RUN),
    (Risk.WRITES,        ASK,        ASK,       RUN),
    (Risk.NETWORK,       ASK,        ASK,       RUN),
    (Risk.UNKNOWN,       ASK,        ASK,       RUN),
    (Risk.DESTRUCTIVE,   ASK,        ASK,       RUN),
    (Risk.PRIVILEGED,    ASK,        ASK,       RUN),
]
# fmt: on


@pytest.mark.parametrize(("risk", "interactive", "restricted", "full"), MODE_TABLE)
def test_the_mode_decides_by_risk(
    risk: Risk, interactive: Outcome, restricted: Outcome, full: Outcome
) -> None:
    for mode, expected in ((INTER, interactive), (R, restricted), (F, full)):
        assert mode_outcome(mode, risk) is expected
        assert decide(Action(Kind.COMMAND, "x", risk=risk), mode).outcome is expected


def test_a_rejected_command_is_refused_whatever_the_mode_or_rules() -> None:
    rules = Permissions({"bash": (("*", Permission.ALLOW),)})
    action = Action(Kind.COMMAND, "rm -rf /", Risk.DESTRUCTIVE, True, ("Denylisted.",))
    for mode in (INTER, R, F):
        ruling = decide(action, mode, permissions=rules)
        assert ruling.outcome is REFUSE and ruling.why == "Denylisted."


def test_the_last_matching_rule_wins_and_names_itself() -> None:
    rules = Permissions(
        {
            "bash": (
                ("git *", Permission.ALLOW),
                ("git push*", Permission.ASK),
                ("git push --force*", Permission.DENY),
            )
        }
    )

    def ruling(command: str, mode: ExecutionMode = R) -> tuple[Outcome, str | None]:
        got = decide(Action(Kind.COMMAND, command, Risk.WRITES), mode, permissions=rules)
        return got.outcome, got.rule

    assert ruling("git commit -m x") == (RUN, "bash: 'git *' -> allow")
    assert ruling("git push origin") == (ASK, "bash: 'git push*' -> ask")
    assert ruling("git push --force origin") == (REFUSE, "bash: 'git push --force*' -> deny")
    assert ruling("make") == (ASK, None)  # no rule: the mode decides
    assert ruling("git commit -m x", INTER)[0] is RUN  # the user's allow holds in every mode


def test_the_custom_denylist_refuses_in_every_mode() -> None:
    rules = Permissions(deny=("terraform destroy*",))
    action = Action(Kind.COMMAND, "terraform destroy -auto-approve", Risk.UNKNOWN)
    for mode in (INTER, R, F):
        ruling = decide(action, mode, permissions=rules)
        assert ruling.outcome is REFUSE and "denylist" in ruling.why


def test_what_the_user_asked_for_asks_before_the_mode_runs() -> None:
    action = Action(Kind.COMMAND, "ls", Risk.READ_ONLY)
    assert decide(action, F, confirm=True).outcome is ASK
    assert decide(action, F, unsafe=True).outcome is ASK
    forced = decide(action, F, forced_explain=("ls",))
    assert forced.outcome is ASK and forced.explain


def test_without_a_sandbox_what_would_run_unasked_is_asked_about() -> None:
    ruling = decide(Action(Kind.COMMAND, "ls", Risk.READ_ONLY), F, contain=False)
    assert ruling.outcome is ASK and ruling.uncontained and "sandbox" in ruling.why
    # A question was coming anyway: said as the mode's.
    asked = decide(Action(Kind.COMMAND, "touch x", Risk.WRITES), R, contain=False)
    assert asked.outcome is ASK and not asked.uncontained


def test_file_actions_follow_the_mode_like_commands_that_would_do_them() -> None:
    for kind in (Kind.CREATE, Kind.WRITE, Kind.DELETE, Kind.MOVE):
        action = Action(kind, "notes.txt", Risk.WRITES)
        assert [decide(action, m).outcome for m in (INTER, R, F)] == [ASK, ASK, RUN]
    read = Action(Kind.READ, "notes.txt", Risk.READ_ONLY)
    assert [decide(read, m).outcome for m in (INTER, R, F)] == [ASK, RUN, RUN]


def test_a_foreign_tool_is_asked_about_in_every_mode_unless_a_rule_allows_it() -> None:
    action = Action(Kind.MCP_TOOL, "github.create_issue", Risk.UNKNOWN)
    for mode in (INTER, R, F):
        assert decide(action, mode, contain=False).outcome is ASK
    allowed = Permissions({"mcp": (("github.*", Permission.ALLOW),)})
    for mode in (INTER, R, F):
        assert decide(action, mode, permissions=allowed, contain=False).outcome is RUN


def test_the_config_section_compiles_in_order() -> None:
    section = PermissionSettings.model_validate(
        {
            "deny": ["terraform destroy*"],
            "bash": {"git *": "allow", "git push*": "ask"},
            "mcp": {"github.*": "allow"},
        }
    )
    rules = permissions_from(section)
    assert rules.deny == ("terraform destroy*",)
    assert rules.rules["bash"] == (("git *", Permission.ALLOW), ("git push*", Permission.ASK))
    assert "write" not in rules.rules
    with pytest.raises(ValueError, match="allow"):
        PermissionSettings.model_validate({"bash": {"x": "maybe"}})


def test_command_rules_match_each_program_of_the_command() -> None:
    from conch.policy import PolicyContext, assess
    from conch.policy.confirm import ConfirmOptions, command_ruling

    rules = Permissions({"bash": (("git status*", Permission.ALLOW),)}, deny=("rm -r *",))
    options = ConfirmOptions(mode=R, permissions=rules)

    def outcome(command: str) -> Outcome:
        verdict = assess(command, PolicyContext(mode=R))
        return command_ruling(command, verdict, options, mode=R).outcome

    assert outcome("git status --short") is RUN
    # An allowed program does not carry another one with it.
    assert outcome("git status && touch x") is ASK
    # The denylist matches each program, by its name, however it is joined or spelled.
    assert outcome("true; rm -r  build") is REFUSE
    assert outcome("/bin/rm -r build") is REFUSE


def test_file_rules_match_the_path() -> None:
    rules = Permissions({"write": (("*.lock", Permission.DENY), ("notes.txt", Permission.ALLOW))})
    lock = Action(Kind.WRITE, "fs_write Cargo.lock", parts=("Cargo.lock",))
    notes = Action(Kind.WRITE, "fs_write notes.txt", parts=("notes.txt",))
    assert decide(lock, F, permissions=rules).outcome is REFUSE
    assert decide(notes, R, permissions=rules).outcome is RUN
    # A delete of several paths is allowed only when the rules allow every one.
    both = Action(Kind.DELETE, "rm -- a b", parts=("notes.txt", "other.txt"))
    allow_notes = Permissions({"delete": (("notes.txt", Permission.ALLOW),)})
    assert decide(both, R, permissions=allow_notes).outcome is ASK


def test_an_action_without_a_risk_takes_its_kind_s() -> None:
    assert decide(Action(Kind.WRITE, "notes.txt"), R).outcome is ASK
    assert decide(Action(Kind.READ, "notes.txt"), R).outcome is RUN
