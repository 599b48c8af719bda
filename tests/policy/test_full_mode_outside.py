"""Full-autonomous mode asks about a command that may change what it names when it names a
path outside the working directory: run unasked it would be contained to the working
directory, so it could not do it anyway. Data only: ``assess`` runs nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from conch.policy import Decision, ExecutionMode, PolicyContext, assess

# A working directory outside /tmp, whose private copy a sandbox keeps (paths are only read).
PROJECT = Path("/srv/users/ann/project")


@pytest.mark.parametrize(
    "command",
    [
        "find /srv/www/site/logs -name '*.log' -delete",
        "rm -f /var/www/site/old.html",
        "rm -r ../sibling/build",
        "shred -u /var/log/app.log",
        "someprogram --purge /opt/thing",
    ],
)
def test_a_change_outside_the_working_directory_is_asked_about(command: str) -> None:
    verdict = assess(command, PolicyContext(mode=ExecutionMode.FULL, cwd=PROJECT))
    assert verdict.decision is Decision.CONFIRM, verdict.reasons
    assert any("outside the working directory" in r for r in verdict.reasons)


@pytest.mark.parametrize(
    "command",
    [
        "find . -name '*.log' -delete",
        "rm -r ./build",
        "rm -f /tmp/scratch.txt",
        "grep -r TODO /etc/hosts",
        "cp /etc/hosts copy.txt",
    ],
)
def test_work_inside_it_or_that_only_reads_outside_runs(command: str) -> None:
    verdict = assess(command, PolicyContext(mode=ExecutionMode.FULL, cwd=PROJECT))
    assert verdict.decision is Decision.ALLOW, verdict.reasons


def test_restricted_mode_is_unchanged() -> None:
    # Restricted-autonomous mode asks about every change already; the reason stays its own.
    verdict = assess("rm -r ../sibling/build", PolicyContext(cwd=PROJECT))
    assert verdict.decision is Decision.CONFIRM
    assert not any("outside the working directory" in r for r in verdict.reasons)
