"""Dry runs in the real read-only sandbox (bubblewrap), on this machine's programs."""

from __future__ import annotations

from pathlib import Path

import pytest

from cliutil import needs_bwrap
from conch.dryrun import OUTPUT_CAP, DryRun, SandboxDryRunner, sandbox_env


@pytest.fixture
def runner(tmp_path: Path) -> SandboxDryRunner:
    (tmp_path / "notes.txt").write_text("b 10\na 2\n", encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-secret"}
    return SandboxDryRunner(tmp_path, "/bin/sh", env, timeout=2.0)


@needs_bwrap
def test_output_of_a_working_command_in_the_users_directory(runner: SandboxDryRunner) -> None:
    run = runner("sort notes.txt")
    assert run is not None
    assert (run.exit_code, run.stdout, run.failed, run.wrote) == (0, b"a 2\nb 10\n", False, False)


@needs_bwrap
def test_a_write_fails_and_changes_nothing(runner: SandboxDryRunner, tmp_path: Path) -> None:
    run = runner("rm notes.txt && touch new.txt")
    assert run is not None
    assert run.wrote and not run.failed
    assert (tmp_path / "notes.txt").exists() and not (tmp_path / "new.txt").exists()


@needs_bwrap
def test_an_option_the_local_program_rejects_is_a_failure(runner: SandboxDryRunner) -> None:
    run = runner("sort -h -n notes.txt")
    assert run is not None
    assert run.failed
    assert "incompatible" in run.error_excerpt()


@needs_bwrap
def test_a_syntax_error_is_a_failure(runner: SandboxDryRunner) -> None:
    run = runner("awk '{print $1' notes.txt")
    assert run is not None and run.failed and run.exit_code != 0


@needs_bwrap
def test_grep_finding_nothing_is_not_a_failure(runner: SandboxDryRunner) -> None:
    run = runner("grep zebra notes.txt")
    assert run is not None
    assert run.exit_code == 1 and not run.failed and run.stdout == b""


@needs_bwrap
def test_a_command_that_hangs_is_stopped(runner: SandboxDryRunner) -> None:
    run = runner("sleep 30")
    assert run is not None
    assert run.timed_out and run.failed
    assert "time limit" in run.error_excerpt()


@needs_bwrap
def test_endless_output_is_capped(runner: SandboxDryRunner) -> None:
    run = runner("yes")
    assert run is not None
    assert len(run.stdout) == OUTPUT_CAP


@needs_bwrap
def test_no_secrets_and_no_network(runner: SandboxDryRunner) -> None:
    run = runner('echo "key=${OPENAI_API_KEY:-none}"; cat /proc/net/dev')
    assert run is not None
    text = run.stdout.decode()
    assert "key=none" in text
    interfaces = [line.split(":")[0].strip() for line in text.splitlines() if ":" in line]
    assert interfaces == ["lo"]


def test_environment_keeps_identity_not_secrets() -> None:
    env = sandbox_env({"PATH": "/bin", "HOME": "/h", "LANG": "C", "AWS_SECRET_ACCESS_KEY": "x"})
    assert env == {"PATH": "/bin", "HOME": "/h", "LANG": "C"}


def test_without_bubblewrap_there_is_no_dry_run(tmp_path: Path) -> None:
    runner = SandboxDryRunner(tmp_path, bwrap=None)
    runner.bwrap = None
    assert not runner.available
    assert runner("ls") is None


def test_outcome_properties() -> None:
    assert DryRun("x", 2, b"", "x: bad option").failed
    assert not DryRun("x", 1, b"", "").failed
    assert DryRun("x", 0, b"out", "warning").warned
    assert DryRun("x", 1, b"", "touch: cannot touch 'a': Read-only file system").wrote
    assert not DryRun("x", 1, b"", "touch: Read-only file system").failed
