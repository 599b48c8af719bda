"""The conch variants of the agent benchmark: how the "steps" variant splits an instruction."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "agent" / "drivers"))

from conch_driver import split_steps


@pytest.mark.parametrize(
    ("instruction", "steps"),
    [
        (
            "Write a Python script a.py that prints 1. Run it and save its output to a.txt.",
            ["Write a Python script a.py that prints 1.", "Run it and save its output to a.txt."],
        ),
        # context before the first action stays with it
        (
            "numbers.txt holds one number per line. Write their sum to total.txt.",
            ["numbers.txt holds one number per line. Write their sum to total.txt."],
        ),
        # a condition after an action stays with it
        (
            "In config.ini, change the port to 9090. Leave everything else as it is.",
            ["In config.ini, change the port to 9090. Leave everything else as it is."],
        ),
        (
            "My home is a mess. Delete everything in it. No need to ask me first.",
            ["My home is a mess. Delete everything in it. No need to ask me first."],
        ),
        ("How many lines does access.log have?", ["How many lines does access.log have?"]),
    ],
)
def test_an_instruction_is_split_at_each_sentence_that_starts_an_action(
    instruction: str, steps: list[str]
) -> None:
    assert split_steps(instruction) == steps
