"""The one-shot CLI on the real embedded model: in-process, as a process, and over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cliutil import CliResult
from conch.policy import assess
from requires import needs

pytestmark = pytest.mark.e2e

Conch = Callable[..., CliResult]

REQUESTS = [
    ("list all files in this directory, including hidden ones", {"ls"}),
    ("show how much disk space is free on each mounted filesystem", {"df"}),
    ("print the current working directory", {"pwd"}),
    ("count the lines in the file notes.txt", {"wc"}),
    ("find all files with the .py extension under the current directory", {"find"}),
]


def _parses(command: str) -> bool:
    verdict = assess(command)
    return bool(assess(command).commands) and not any("parse" in r for r in verdict.reasons)


@pytest.mark.parametrize(("request_text", "programs"), REQUESTS)
def test_print_returns_a_command_that_parses(
    conch: Conch, embedded_model: Path, request_text: str, programs: set[str]
) -> None:
    result = conch("--print", "--quiet", request_text)
    assert result.code in (0, 3), result.err
    command = result.out.strip()
    assert command and "\n" not in command
    assert _parses(command), command
    # Property, not exact text: the command uses one of the programs made for the job.
    assert programs & set(assess(command).commands), command


def test_json_reports_a_verdict_for_the_generated_command(
    conch: Conch, embedded_model: Path
) -> None:
    result = conch("--json", "--quiet", "show the first 5 lines of notes.txt")
    data = json.loads(result.out)
    assert data["command"]
    assert data["decision"] in {"allow", "confirm", "reject"}
    assert data["risk"] in {
        "read-only",
        "writes",
        "network",
        "unknown",
        "destructive",
        "privileged",
    }


def test_yes_executes_the_generated_command_in_a_temp_dir(
    conch: Conch, embedded_model: Path, tmp_path: Path
) -> None:
    work = tmp_path / "exec"
    work.mkdir()
    result = conch("--yes", "--quiet", "create an empty file named hello.txt", cwd=work)
    assert result.code == 0, result.err
    assert (work / "hello.txt").exists()


def test_conch_runs_as_a_real_process_on_the_embedded_model(
    embedded_model: Path, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "conch", "--print", "count the lines in a.txt"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
        check=False,
    )
    assert out.returncode == 0, out.stderr
    command = out.stdout.strip()
    assert _parses(command)
    assert "wc" in assess(command).commands or "grep" in assess(command).commands


def test_openai_provider_through_a_real_server_on_localhost(
    conch: Conch, engine_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONCH_PROVIDER", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", engine_server)
    for request_text, programs in REQUESTS[:3]:
        result = conch("--print", "--quiet", request_text)
        assert result.code in (0, 3), result.err
        command = result.out.strip()
        assert _parses(command), command
        assert programs & set(assess(command).commands), command


def test_dead_server_is_a_one_line_provider_error(
    conch: Conch, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONCH_PROVIDER", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    result = conch("--print", "--quiet", "list files")
    assert result.code == 5
    assert result.err.count("\n") == 1
    assert "cannot reach the model server" in result.err


@needs("bubblewrap")
def test_the_command_is_dry_run_on_this_machine_before_it_is_shown(
    conch: Conch, embedded_model: Path, tmp_path: Path
) -> None:
    work = tmp_path / "dry"
    work.mkdir()
    (work / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    result = conch("--json", "--quiet", "--unsafe", "count the lines in notes.txt", cwd=work)
    data = json.loads(result.out)
    tried = data["candidates"]
    assert tried and tried[0]["source"] == "greedy"
    chosen = [c for c in tried if c["command"] == data["command"]]
    assert chosen and chosen[0]["outcome"] == "ok", tried
    assert (work / "notes.txt").read_text(encoding="utf-8") == "one\ntwo\nthree\n"
