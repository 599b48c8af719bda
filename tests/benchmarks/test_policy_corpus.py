"""The policy corpus by attack class: its loader, its held-out split, its size, and that the
report's goals fail when the policy does. Pure: the commands only reach verdict functions."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.policy.measure import measure
from benchmarks.policy.report import HELDOUT_WARNING, headline, markdown
from benchmarks.policy.suite import (
    CONTEXTS,
    DATA,
    EXISTING,
    SEVERITIES,
    Attack,
    Everyday,
    import_existing,
    load_all_attacks,
    load_everyday,
    load_new_attacks,
    split_of,
)

from conch.policy import Decision, PolicyContext, Risk, Verdict

NEW = load_new_attacks()
EVERYDAY = load_everyday()
CLASSES = (
    "read-only-trusted",
    "code-through-options",
    "option-parsing",
    "mutating-queries",
    "denylist-blind-spots",
    "secrets",
)


def test_there_are_at_least_600_new_attacks_beyond_the_existing_corpus() -> None:
    existing = {a.cmd for a in import_existing()}
    written = [a for a in NEW if a.cmd not in existing]
    assert len(written) >= 600
    assert len({a.cmd for a in NEW}) == len(NEW)


def test_every_class_has_many_attacks_across_many_programs() -> None:
    for cls in CLASSES:
        members = [a for a in NEW if a.cls == cls]
        assert len(members) >= 50, cls
        programs = {a.cmd.split()[0] for a in members}
        assert len(programs) >= 15, cls


def test_every_attack_has_a_known_severity_and_a_note() -> None:
    for attack in load_all_attacks():
        assert attack.severity in SEVERITIES, attack
        assert attack.note.strip(), attack
        assert attack.cmd.strip(), attack
    assert {a.severity for a in NEW if a.cls == "denylist-blind-spots"} == {"catastrophic"}


def test_the_existing_corpus_is_imported_whole_as_a_class() -> None:
    existing = import_existing()
    assert len(existing) >= 500
    assert {a.cls for a in existing} == {EXISTING}
    everything = load_all_attacks()
    assert sum(a.cls == EXISTING for a in everything) == len({a.cmd for a in existing})


def test_there_are_at_least_400_everyday_commands_without_duplicates() -> None:
    assert len(EVERYDAY) >= 400
    assert len({e.command for e in EVERYDAY}) == len(EVERYDAY)
    sources = {e.source.split(" ")[0] for e in EVERYDAY}
    assert {"nl2sh-alfa", "agent", "examples.tsv", "examples-more.tsv"} <= sources


def test_the_split_is_deterministic_and_holds_out_about_a_quarter() -> None:
    assert split_of("ls -la") == split_of("ls -la")
    assert {split_of(f"echo {i}") for i in range(50)} == {"train", "heldout"}
    for group in ([a.cmd for a in load_all_attacks()], [e.command for e in EVERYDAY]):
        held = sum(split_of(c) == "heldout" for c in group) / len(group)
        assert 0.18 < held < 0.32
    # the split depends on the command text alone, not on where it sits in the corpus
    first = {a.cmd: a.split for a in NEW}
    again = {a.cmd: a.split for a in reversed(load_new_attacks(DATA))}
    assert first == again


def test_data_files_say_the_held_out_part_is_not_to_be_tuned_on() -> None:
    for path in sorted(DATA.glob("attacks-*.yaml")):
        text = path.read_text(encoding="utf-8")
        assert "HELD-OUT" in text and "Do not tune" in text, path.name
        assert "DATA" in text, path.name


def _verdict(decision: Decision, *, denylisted: bool = False) -> Verdict:
    return Verdict(decision, Risk.UNKNOWN, ("fake",), (), (), (), denylisted=denylisted)


SMALL_ATTACKS = [
    Attack("wipe everything", "fake-class", "catastrophic", "a catastrophe"),
    Attack("change something", "fake-class", "harmful", "a harmful one"),
    Attack("show a key", "fake-class", "leak", "a leak"),
]
SMALL_EVERYDAY = [Everyday(f"list {i}", "fake") for i in range(10)]


def _goals(result: dict[str, object]) -> dict[str, bool]:
    goals = result["goals"]
    assert isinstance(goals, list)
    return {g["name"]: g["met"] for g in goals}


def test_a_policy_that_allows_everything_misses_the_attack_goals() -> None:
    result = measure(lambda c, ctx: _verdict(Decision.ALLOW), SMALL_ATTACKS, SMALL_EVERYDAY)
    met = list(_goals(result).values())
    assert met == [False, False, False, False, True]
    # The leak is in no goal; the held-out part's misses are counted, never listed.
    assert len(result["misses"]) + result["heldout_misses"] == 2
    assert all(m["split"] == "train" for m in result["misses"])
    assert "[MISSED]" in headline(result)


def test_held_out_misses_are_counted_and_their_commands_never_shown() -> None:
    attacks = [Attack(f"wipe number {i}", "fake-class", "catastrophic", "x") for i in range(40)]
    result = measure(lambda c, ctx: _verdict(Decision.ALLOW), attacks, SMALL_EVERYDAY)
    held = [a for a in attacks if a.split == "heldout"]
    assert held and result["heldout_misses"] == len(held)
    text = markdown(result)
    assert all(f"`{a.cmd}`" not in text for a in held)
    assert all(f"`{a.cmd}`" in text for a in attacks if a.split == "train")


def test_a_policy_that_refuses_everything_misses_the_everyday_goal() -> None:
    result = measure(
        lambda c, ctx: _verdict(Decision.REJECT, denylisted=True), SMALL_ATTACKS, SMALL_EVERYDAY
    )
    assert list(_goals(result).values()) == [True, True, True, True, False]
    assert result["everyday"]["all"]["refused_by_kind"]["denylist"] == 10


def test_a_policy_that_tells_them_apart_meets_every_goal() -> None:
    def verdict(command: str, context: PolicyContext) -> Verdict:
        if command.startswith("wipe"):
            return _verdict(Decision.REJECT, denylisted=True)
        if command.startswith("change"):
            return _verdict(Decision.CONFIRM)
        return _verdict(Decision.ALLOW)

    result = measure(verdict, SMALL_ATTACKS, SMALL_EVERYDAY)
    assert all(_goals(result).values())
    assert result["misses"] == []
    assert "[MISSED]" not in headline(result)


def test_a_catastrophe_denylisted_in_only_some_contexts_is_reported_per_context() -> None:
    def verdict(command: str, context: PolicyContext) -> Verdict:
        if context.unsafe:
            return _verdict(Decision.CONFIRM)
        return _verdict(Decision.REJECT, denylisted=True)

    result = measure(verdict, SMALL_ATTACKS[:1], SMALL_EVERYDAY)
    row = next(r for r in result["classes"] if r["class"] == "fake-class" and r["split"] == "all")
    unsafe = [name for name in CONTEXTS if name.startswith("unsafe")]
    assert row["not_denylisted"] == {name: int(name in unsafe) for name in CONTEXTS}
    assert (
        _goals(result)["catastrophic attacks not rejected as denylisted in some context"] is False
    )


@pytest.mark.parametrize("kind", ["needs a shell", "other"])
def test_everyday_refusals_are_split_by_kind(kind: str) -> None:
    def verdict(command: str, context: PolicyContext) -> Verdict:
        return Verdict(
            Decision.REJECT, Risk.UNKNOWN, ("r",), (), (), (), needs_unsafe=kind != "other"
        )

    result = measure(verdict, [], SMALL_EVERYDAY)
    assert result["everyday"]["all"]["refused_by_kind"][kind] == 10


def test_the_report_shows_both_splits_and_the_warning() -> None:
    result = measure(lambda c, ctx: _verdict(Decision.ALLOW), SMALL_ATTACKS, SMALL_EVERYDAY)
    text = markdown(result)
    assert HELDOUT_WARNING in text
    assert "| train |" in text and "| heldout |" in text
    assert "wipe everything" in text
