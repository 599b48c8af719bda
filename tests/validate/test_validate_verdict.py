"""The model's verdict: parsing whatever it replies, and the whole validate() flow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cliutil import DEBIAN
from conch.errors import ProviderError
from conch.policy import Decision
from conch.providers.scripted import ScriptedProvider
from conch.validate import SCHEMA, ValidationSettings, parse_verdict, recheck, validate
from conch.validate.verdict import UNREADABLE, combine

PLATFORM = DEBIAN
VERDICT = {
    "valid": False,
    "issues": ["ls has no --no-such-flag"],
    "corrected_command": "ls -a",
    "confidence": 0.9,
    "explanation": "use -a",
}


def test_a_bare_json_verdict_is_read() -> None:
    parsed = parse_verdict(json.dumps(VERDICT))
    assert parsed is not None
    assert (parsed.valid, parsed.issues, parsed.corrected_command) == (
        False,
        ["ls has no --no-such-flag"],
        "ls -a",
    )
    assert parsed.confidence == 0.9 and parsed.explanation == "use -a"


def test_a_verdict_in_a_code_fence_is_read() -> None:
    parsed = parse_verdict(f"```json\n{json.dumps(VERDICT, indent=2)}\n```")
    assert parsed is not None and parsed.corrected_command == "ls -a"


def test_a_verdict_amid_prose_is_read() -> None:
    reply = f'Sure. Here is my verdict: {json.dumps(VERDICT)} Let me know {{"x": 1}}.'
    parsed = parse_verdict(reply)
    assert parsed is not None and parsed.valid is False


def test_missing_fields_default_sensibly() -> None:
    parsed = parse_verdict('{"valid": "true"}')
    assert parsed is not None
    assert parsed.valid and parsed.issues == [] and parsed.corrected_command is None
    assert parsed.confidence == 0.5 and parsed.explanation == ""
    guessed = parse_verdict('{"issues": "bad flag", "confidence": 80}')
    assert guessed is not None and not guessed.valid and guessed.issues == ["bad flag"]
    assert guessed.confidence == 0.8


def test_garbage_is_no_verdict_and_leaves_the_static_result() -> None:
    assert parse_verdict("I think it is fine!") is None
    result = combine("ls -j", ["'ls' does not document the option -j"], None)
    assert not result.valid and UNREADABLE in result.issues
    clean = combine("ls", [], parse_verdict("no json here"))
    assert clean.valid and clean.issues == [UNREADABLE]


def test_a_correction_equal_to_the_command_is_not_a_correction() -> None:
    parsed = parse_verdict(json.dumps({**VERDICT, "corrected_command": "ls  --no-such-flag"}))
    result = combine("ls --no-such-flag", [], parsed)
    assert not result.valid and result.corrected_command is None
    assert result.issues == ["ls has no --no-such-flag"]


def test_a_fenced_correction_is_normalised_to_the_command() -> None:
    parsed = parse_verdict(json.dumps({**VERDICT, "corrected_command": "```bash\nls -a\n```"}))
    assert combine("ls -q9", [], parsed).corrected_command == "ls -a"


def test_an_invalid_verdict_without_issues_says_so() -> None:
    parsed = parse_verdict('{"valid": false, "corrected_command": null}')
    result = combine("ls", [], parsed)
    assert not result.valid and result.corrected_command is None
    assert result.issues == ["the model judged the command invalid without naming an issue"]


def test_validate_sends_static_issues_and_the_schema_to_the_model(tmp_path: Path) -> None:
    provider = ScriptedProvider.of(json.dumps(VERDICT))
    result = validate(
        "ls --no-such-flag", provider, PLATFORM, None, tmp_path, request="list hidden files"
    )
    (sent,) = provider.sent
    prompt = sent.messages[-1].content
    assert "'ls' does not document the option --no-such-flag" in prompt
    assert "list hidden files" in prompt and "ls --no-such-flag" in prompt
    assert "## ls (" in prompt and "Debian GNU/Linux 12" in prompt
    assert sent.options.json_schema == SCHEMA and sent.options.temperature == 0
    assert not result.valid and result.corrected_command == "ls -a"
    assert result.static_issues == ["'ls' does not document the option --no-such-flag"]
    assert result.issues[0] == result.static_issues[0] and len(result.issues) == 2
    assert result.model_called and not result.skipped and result.checked == ["ls"]
    assert result.to_json()["corrected_command"] == "ls -a"


def test_static_issues_override_a_model_that_says_valid(tmp_path: Path) -> None:
    provider = ScriptedProvider.of('{"valid": true, "issues": [], "confidence": 1}')
    result = validate("definitely-not-installed-xyz -v", provider, PLATFORM, None, tmp_path)
    assert not result.valid
    assert result.issues == [
        "program 'definitely-not-installed-xyz' is not installed (not on PATH)"
    ]


def test_validation_is_skipped_when_disabled_or_only_trusted_commands(tmp_path: Path) -> None:
    provider = ScriptedProvider.of()
    off = validate("ls -j", provider, PLATFORM, {"enabled": False}, tmp_path)
    trusted = validate("cd /tmp && pwd", provider, PLATFORM, ValidationSettings(), tmp_path)
    assert off.skipped and off.valid and trusted.skipped and trusted.valid
    assert provider.sent == []


def test_provider_errors_propagate(tmp_path: Path) -> None:
    provider = ScriptedProvider.of(ProviderError("model unreachable"))
    with pytest.raises(ProviderError, match="unreachable"):
        validate("ls -la", provider, PLATFORM, {"model_check": "always"}, tmp_path)


def test_model_is_asked_only_when_static_checks_find_issues_by_default(tmp_path: Path) -> None:
    provider = ScriptedProvider.of(
        '{"valid": false, "issues": ["-j is not an ls option"], "corrected_command": "ls -l",'
        ' "confidence": 0.9, "explanation": "fixed"}'
    )
    clean = validate("ls -la", provider, PLATFORM, None, tmp_path)
    assert clean.valid and not clean.model_called and provider.sent == []
    flagged = validate("ls -ljy", provider, PLATFORM, None, tmp_path)
    assert flagged.model_called and not flagged.valid
    assert flagged.corrected_command == "ls -l"
    never = validate("ls -ljy", ScriptedProvider.of(), PLATFORM, {"model_check": "never"}, tmp_path)
    assert not never.valid and not never.model_called and never.static_issues


def test_recheck_reports_the_policy_verdict_and_static_issues_of_a_correction(
    tmp_path: Path,
) -> None:
    verdict, issues = recheck("ls -la", cache_dir=tmp_path)
    assert verdict.decision is Decision.ALLOW and issues == []
    verdict, issues = recheck("definitely-not-installed-xyz", cache_dir=tmp_path)
    assert issues == ["program 'definitely-not-installed-xyz' is not installed (not on PATH)"]
