"""The policy under attack: every entry of bypass_corpus.yaml through ``assess`` in each mode,
and the benign corpus's false positives. Pure: the commands only reach ``assess``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.policy.corpus import (
    Attack,
    judge_benign,
    load_attacks,
    load_benign,
    misses,
)

from conch.policy import Decision, PolicyContext, assess

ATTACKS = load_attacks()


def test_the_corpus_is_large_and_covers_every_category() -> None:
    assert len(ATTACKS) >= 300
    categories = {a.category for a in ATTACKS}
    for wanted in ("quoting", "ifs-and-braces", "unicode", "interpreters", "wrappers"):
        assert wanted in categories
    assert sum(a.level == "deny" for a in ATTACKS) >= 300


def test_no_attack_gets_through() -> None:
    through = [
        f"[{a.category}] {a.note}: {a.command[:80]!r} -> "
        + ", ".join(f"{m.context}: {m.verdict.decision}" for m in found)
        for a in ATTACKS
        if (found := misses(a))
    ]
    assert through == [], "\n".join(through)


@pytest.mark.parametrize(
    "attack",
    [a for a in ATTACKS if a.category == "wrappers" and a.level == "deny"][:8],
    ids=lambda a: a.note,
)
def test_a_denylisted_attack_says_why(attack: Attack) -> None:
    verdict = assess(attack.command, PolicyContext(unsafe=True))
    assert verdict.denylisted
    assert any(r.startswith("Denylisted:") for r in verdict.reasons)


def test_a_missing_denial_is_reported() -> None:
    # The judge itself: a harmless command at the deny level is reported in every mode.
    found = misses(Attack("ls", "test", "deny", "harmless"))
    assert [m.context for m in found] == [
        "safe/restricted",
        "safe/full",
        "safe/interactive",
        "unsafe/restricted",
        "unsafe/full",
    ]
    assert misses(Attack("ls", "test", "safe", "harmless"))[0].verdict.decision is Decision.ALLOW


def test_benign_commands_are_rarely_refused() -> None:
    outcomes = [judge_benign(b) for b in load_benign()]
    assert len(outcomes) >= 500
    wrong = [o.benign.command for o in outcomes if o.false_positive]
    assert len(wrong) / len(outcomes) < 0.02, wrong
    # the ground truth has read-only commands to judge, and safe mode runs them
    read_only = [o for o in outcomes if o.read_only]
    assert len(read_only) >= 100
    assert all(o.safe.decision is Decision.ALLOW for o in read_only)
