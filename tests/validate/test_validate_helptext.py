"""Help-text collection against real programs on this machine and fake ones on a temp PATH."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conch.validate import ValidationSettings, collect_help, default_policy_check, help_for_prompt
from conch.validate.helptext import truncate

BSD_USAGE = "usage: fakestat [-FLnq] [-f format] [-t timefmt] [file ...]"


def _script(directory: Path, name: str, body: str) -> Path:
    path = directory / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def fake_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory of fake programs, first on PATH."""
    directory = tmp_path / "bin"
    directory.mkdir()
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ['PATH']}")
    _script(
        directory,
        "fakestat",
        f'case "$1" in --help|-h|--version) echo "{BSD_USAGE}" >&2; exit 1;; esac\nexit 0',
    )
    return directory


@pytest.fixture
def popen_calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every argv handed to subprocess.Popen (which still runs)."""
    calls: list[list[str]] = []
    real = subprocess.Popen

    def recording(argv: list[str], *args: Any, **kwargs: Any) -> Any:
        calls.append(list(argv))
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", recording)
    return calls


def _forbid_subprocesses(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a subprocess was started")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(subprocess, "run", refuse)


def _cache_files(cache: Path) -> list[Path]:
    return sorted((cache / "help").glob("*.json"))


def test_ls_help_text_mentions_the_all_option(tmp_path: Path) -> None:
    ls = collect_help(["ls"], None, tmp_path)["ls"]
    assert ls.exists and ls.path is not None
    assert "--all" in (ls.help_text or "")
    assert "--all" in ls.options and "-a" in ls.options


def test_help_text_is_truncated_to_the_configured_size_with_a_note(tmp_path: Path) -> None:
    settings = ValidationSettings(max_help_text_size=300)
    ls = collect_help(["ls"], settings, tmp_path)["ls"]
    assert ls.help_text is not None and len(ls.help_text) <= 300
    assert ls.help_text.endswith("[... truncated by conch]")
    assert "--all" in ls.options  # the option index still sees the whole help
    assert truncate("short", 300) == "short"


def test_a_missing_program_is_reported_and_never_executed(
    tmp_path: Path, popen_calls: list[list[str]]
) -> None:
    missing = collect_help(["definitely-not-installed-xyz"], None, tmp_path)
    assert not missing["definitely-not-installed-xyz"].exists
    assert not any("definitely-not-installed-xyz" in " ".join(argv) for argv in popen_calls)


def test_a_builtin_exists_without_any_subprocess(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _forbid_subprocesses(monkeypatch)
    helps = collect_help(["cd", "export"], None, tmp_path)
    assert helps["cd"].exists and helps["cd"].builtin
    assert helps["export"].exists and helps["export"].help_text is None


def test_a_bsd_style_usage_printed_to_stderr_is_collected(tmp_path: Path, fake_bin: Path) -> None:
    fake = collect_help(["fakestat"], None, tmp_path)["fakestat"]
    assert fake.exists and fake.path == str(fake_bin / "fakestat")
    assert fake.help_text == BSD_USAGE
    assert {"-F", "-L", "-n", "-q", "-f", "-t"} <= set(fake.options)
    assert {"-f", "-t"} <= set(fake.value_options)
    assert fake.version is None  # "usage: ..." on --version is not a version


def test_the_second_collection_is_served_from_the_cache_without_subprocesses(
    tmp_path: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = collect_help(["fakestat", "ls"], None, tmp_path)
    assert len(_cache_files(tmp_path)) == 2
    _forbid_subprocesses(monkeypatch)
    second = collect_help(["fakestat", "ls"], None, tmp_path)
    assert second == first


def test_changing_the_binary_mtime_invalidates_its_cache_entry(
    tmp_path: Path, fake_bin: Path, popen_calls: list[list[str]]
) -> None:
    collect_help(["fakestat"], None, tmp_path)
    probed = len(popen_calls)
    assert probed > 0
    collect_help(["fakestat"], None, tmp_path)
    assert len(popen_calls) == probed
    binary = fake_bin / "fakestat"
    later = binary.stat().st_mtime_ns + 10_000_000_000
    os.utime(binary, ns=(later, later))
    collect_help(["fakestat"], None, tmp_path)
    assert len(popen_calls) > probed


def test_a_cache_entry_older_than_the_ttl_is_probed_again(
    tmp_path: Path, fake_bin: Path, popen_calls: list[list[str]]
) -> None:
    collect_help(["fakestat"], None, tmp_path)
    (entry,) = _cache_files(tmp_path)
    data = json.loads(entry.read_text())
    data["created"] = time.time() - 8 * 86400
    entry.write_text(json.dumps(data))
    probed = len(popen_calls)
    again = collect_help(["fakestat"], None, tmp_path)["fakestat"]
    assert len(popen_calls) > probed and again.help_text == BSD_USAGE
    assert json.loads(entry.read_text())["created"] > time.time() - 60


def test_a_corrupt_cache_file_is_ignored_and_rewritten(tmp_path: Path, fake_bin: Path) -> None:
    collect_help(["fakestat"], None, tmp_path)
    (entry,) = _cache_files(tmp_path)
    entry.write_text("{not json")
    assert collect_help(["fakestat"], None, tmp_path)["fakestat"].help_text == BSD_USAGE
    assert json.loads(entry.read_text())["help"]["help_text"] == BSD_USAGE


def test_a_program_that_hangs_on_help_is_killed_and_yields_no_help(
    tmp_path: Path, fake_bin: Path
) -> None:
    _script(fake_bin, "hangs", "sleep 30")
    started = time.monotonic()
    hung = collect_help(["hangs"], None, tmp_path)["hangs"]
    assert time.monotonic() - started < 4.0
    assert hung.exists and hung.help_text is None and hung.version is None
    assert hung.note == "help probe timed out"


def test_a_program_the_policy_guard_refuses_is_never_run(
    tmp_path: Path, fake_bin: Path, popen_calls: list[list[str]]
) -> None:
    marker = tmp_path / "ran"
    _script(fake_bin, "fakefmt", f"touch {marker}")
    helps = collect_help(["fakefmt"], None, tmp_path, policy_check=lambda name: name != "fakefmt")
    assert helps["fakefmt"].exists and helps["fakefmt"].help_text is None
    assert "not probed" in (helps["fakefmt"].note or "")
    assert not marker.exists()
    assert not any(str(fake_bin / "fakefmt") in argv for argv in popen_calls)


def test_programs_whose_help_flags_could_act_are_never_run(tmp_path: Path, fake_bin: Path) -> None:
    marker = tmp_path / "halted"
    _script(fake_bin, "shutdown", f"touch {marker}")
    helps = collect_help(["shutdown"], None, tmp_path, policy_check=lambda name: True)
    assert helps["shutdown"].exists and not marker.exists()


def test_the_default_policy_guard_refuses_what_the_policy_rejects() -> None:
    assert default_policy_check("ls")
    assert not default_policy_check("mkfs")


def test_a_path_to_a_local_script_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    script = _script(tmp_path, "local.sh", f"touch {marker}")
    helps = collect_help([str(script)], None, tmp_path, policy_check=lambda name: True)
    assert helps[str(script)].exists and not marker.exists()


def test_help_for_prompt_gives_a_capped_excerpt_per_command(tmp_path: Path) -> None:
    text = help_for_prompt(["ls", "definitely-not-installed-xyz"], None, tmp_path, per_command=400)
    ls_block, missing_block = text.split("\n\n")
    assert ls_block.startswith("## ls (") and "Usage:" in ls_block
    assert len(ls_block) < 400 + 120
    assert "NOT INSTALLED" in missing_block


def test_settings_are_accepted_as_a_mapping_and_unknown_keys_are_refused(
    tmp_path: Path,
) -> None:
    collect: Callable[..., Any] = collect_help
    assert collect(["cd"], {"collect_man_pages": False}, tmp_path)["cd"].exists
    with pytest.raises(ValueError):
        ValidationSettings.model_validate({"no_such_key": 1})
    assert ValidationSettings().skip_commands == ["cd", "pwd", "echo", "true", "false"]
