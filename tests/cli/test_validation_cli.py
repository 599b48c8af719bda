"""Validation in the one-shot CLI: issues shown, corrections offered, results recorded."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from cliutil import CliResult, write_config
from conch.config.paths import Paths
from conch.storage.history import History

Conch = Callable[..., CliResult]

FIX = json.dumps(
    {
        "valid": False,
        "issues": ["ls has no -j or -y option"],
        "corrected_command": "ls -l",
        "confidence": 0.9,
        "explanation": "use -l",
    }
)


def scripted(home: Path, *replies: str, validation: str = "") -> None:
    script = "".join(f"    - {json.dumps(r)}\n" for r in replies)
    # Dry runs off: these replies are scripted for validation's model call.
    generation = "generation:\n  dry_run: false\n"
    write_config(home, f"{generation}ai:\n  provider: scripted\n  script:\n{script}{validation}")


def test_json_carries_the_validation_result_and_keeps_the_original(
    conch: Conch, isolated_dirs: Path
) -> None:
    scripted(isolated_dirs, "ls -ljy", FIX)
    result = conch("--json", "list files in long form")
    data = json.loads(result.out)
    assert data["command"] == "ls -ljy"
    assert data["validation"]["valid"] is False
    assert data["validation"]["corrected_command"] == "ls -l"
    assert any("-j" in issue or "-y" in issue for issue in data["validation"]["static_issues"])
    assert data["validation"]["applied_correction"] is False


def test_the_fix_is_offered_and_accepted_at_the_terminal(conch: Conch, isolated_dirs: Path) -> None:
    scripted(isolated_dirs, "ls -ljy", FIX)
    result = conch("list files in long form", tty=True, answers="y\ne\n")
    assert "suggested fix" in result.err and "+ ls -l" in result.err
    assert result.code == 0
    entry = History(Paths.default().state_dir).latest()
    assert entry is not None
    assert entry.generated_command == "ls -l"
    assert entry.validation is not None and entry.validation["applied_correction"] is True


def test_declining_the_fix_keeps_the_generated_command(conch: Conch, isolated_dirs: Path) -> None:
    scripted(isolated_dirs, "ls -ljy", FIX)
    result = conch("list files in long form", tty=True, answers="n\na\n")
    assert result.code == 4
    entry = History(Paths.default().state_dir).latest()
    assert entry is not None and entry.generated_command == "ls -ljy"
    assert "validation fix declined" in str(entry.notes)


def test_auto_fix_applies_the_correction_without_asking(conch: Conch, isolated_dirs: Path) -> None:
    scripted(isolated_dirs, "ls -ljy", FIX, validation="validation:\n  auto_fix: true\n")
    result = conch("--print", "list files in long form")
    assert result.out == "ls -l\n"
    assert "auto_fix" in result.err


def test_a_missing_program_is_reported_and_the_model_is_asked(
    conch: Conch, isolated_dirs: Path
) -> None:
    verdict = json.dumps(
        {"valid": False, "issues": ["not installed"], "corrected_command": None, "confidence": 1}
    )
    scripted(isolated_dirs, "frobnicate-xyz --all", verdict)
    result = conch("--json", "frobnicate everything")
    data = json.loads(result.out)
    assert any("not installed" in i for i in data["validation"]["static_issues"])
    assert data["validation"]["model_called"] is True


def test_disabled_validation_sends_one_request_only(conch: Conch, isolated_dirs: Path) -> None:
    scripted(isolated_dirs, "ls -ljy", validation="validation:\n  enabled: false\n")
    data = json.loads(conch("--json", "list").out)
    assert data["validation"] is None
