"""``conch daemon start|status|stop`` and ``--no-daemon``, through the in-process CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cliutil import CliResult, write_config
from conch.daemon import client
from conch.daemon.process import pid_alive
from conch.providers.local import provider as local
from conch.providers.local.engines import ChunkCallback

Conch = Callable[..., CliResult]


@pytest.fixture
def configured(runtime: Path, fake_model: Path, isolated_dirs: Path) -> Path:
    """A config whose local model is the fake one (served by the fake backend)."""
    return write_config(
        isolated_dirs,
        f"ai:\n  local:\n    model_path: {fake_model}\ndaemon:\n  idle_timeout_s: 60\n",
    )


def test_start_status_stop(conch: Conch, configured: Path) -> None:
    result = conch("daemon", "status")
    assert result.code == 1
    assert result.out.startswith("model service: not running (socket ")

    started = conch("daemon", "start")
    assert started.code == 0, started.err
    assert started.out.startswith("model service: started\n")
    assert "loaded" in started.out and "exits after 1 min 0 s idle" in started.out

    again = conch("daemon", "start")
    assert again.code == 0 and again.out.startswith("model service: already running\n")

    status = conch("daemon", "status", "--json")
    assert status.code == 0
    data = json.loads(status.out)
    assert data["running"] is True and data["loaded"] is True
    assert data["requests"] == 0 and data["idle_timeout_s"] == 60
    pid = data["pid"]
    assert pid_alive(pid)

    human = conch("daemon", "status")
    assert human.code == 0
    assert f"pid       {pid} (conch " in human.out
    assert "memory" in human.out

    stopped = conch("daemon", "stop")
    assert stopped.code == 0 and stopped.out == f"model service: stopped (pid {pid})\n"
    assert not pid_alive(pid)
    assert conch("daemon", "status").code == 1
    assert conch("daemon", "stop").out == "model service: not running\n"


def test_a_model_that_cannot_load_is_one_line_and_leaves_no_service(
    conch: Conch, configured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONCH_TEST_LOAD_FAILS", "1")
    started = conch("daemon", "start")
    assert started.code == 1
    assert started.err.count("\n") == 1 and "cannot be loaded, on purpose" in started.err
    assert conch("daemon", "status").code == 1
    request = conch("--print", "--quiet", "--no-history", "say=pwd")
    assert request.code == 1 and "cannot be loaded, on purpose" in request.err


def test_a_request_goes_through_the_service(conch: Conch, configured: Path) -> None:
    result = conch("--print", "--quiet", "--no-history", "say=pwd")
    assert result.code == 0, result.err
    assert result.out == "pwd\n"
    status = json.loads(conch("daemon", "status", "--json").out)
    assert status["requests"] >= 1


class PwdEngine:
    """An engine that answers ``pwd`` to everything."""

    def chat(self, request: dict[str, Any], on_chunk: ChunkCallback | None) -> None:
        assert on_chunk is not None
        on_chunk({"choices": [{"index": 0, "delta": {"content": "pwd"}, "finish_reason": None}]})
        on_chunk({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})

    def close(self) -> None:
        return None

    def end_token(self) -> int | None:
        return None

    def likelihood(self, messages: Any, reply: str) -> float | None:
        return None

    def count_tokens(self, text: str) -> int | None:
        return None


def test_no_daemon_runs_the_model_in_process(
    conch: Conch, configured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local, "open_engine", lambda *args: PwdEngine())
    result = conch("--print", "--quiet", "--no-daemon", "say=pwd")
    assert result.code == 0, result.err
    assert result.out == "pwd\n"
    assert conch("daemon", "status").code == 1  # nothing was started


def test_bad_daemon_arguments_are_one_line_usage_errors(conch: Conch, configured: Path) -> None:
    for argv in (("daemon", "start", "stop"), ("daemon", "--json")):
        result = conch(*argv)
        assert result.code == 2
        assert result.err.count("\n") == 1 and "Traceback" not in result.err
        assert result.err.startswith("conch: ")


@pytest.mark.parametrize(
    "argv",
    [
        ["daemon", "start"],
        ["daemon", "status", "--json"],
        ["daemon", "stop", "--traceback"],
    ],
)
def test_daemon_with_its_actions_is_the_subcommand(
    conch: Conch, configured: Path, argv: list[str]
) -> None:
    result = conch(*argv)
    assert result.code in (0, 1) and "conch: " not in result.err, result.err
    assert result.out.startswith(("model service:", "{"))


@pytest.mark.parametrize(
    "argv", [["daemon"], ["daemon", "status", "of", "nginx"], ["daemon", "logs"]]
)
def test_daemon_with_anything_else_says_how_to_ask_instead(conch: Conch, argv: list[str]) -> None:
    result = conch(*argv)
    assert result.code == 2
    assert f"conch -- {' '.join(argv)}" in result.err


def test_a_service_that_cannot_start_is_a_note_and_the_request_runs_here(
    conch: Conch, configured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client, "DEFAULT_BACKEND", "daemon_fakes:no_such_backend")
    monkeypatch.setattr(local, "open_engine", lambda *args: PwdEngine())
    result = conch("--print", "say=pwd")
    assert result.code == 0, result.err
    assert result.out == "pwd\n"
    assert "conch: note: the model service exited at start" in result.err
    assert "running the model in this process instead" in result.err
    quiet = conch("--print", "--quiet", "say=pwd")
    assert quiet.out == "pwd\n" and "note" not in quiet.err
