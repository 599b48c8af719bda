"""The provider fault matrix: a misbehaving OpenAI-compatible server against every surface.

Each fault gives a clear one-line message, the exit status ``conch help exit-codes`` names
(5: the model failed), a history entry where the surface keeps history, and no traceback:
the one-shot CLI, ``conch run``, ``conch chat -p``, ``conch serve`` (an OpenAI-shaped error,
in a plain reply and in a stream) and ``conch mcp``'s ``propose_command`` (an error result).
Faults that are not failures on a surface (a reply in prose is an answer for the agent)
are checked to come through whole.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import fault_surfaces as surfaces
import pytest
from fault_server import HUGE, PROSE, FaultServer, closed_port, fault_server
from report import record

from cliutil import write_config

# fault -> what the message says when the fault is an error.
ERRORS = {
    "refused": "cannot reach the model server",
    "401": "refused the credentials (HTTP 401)",
    "429": "is rate limiting requests (HTTP 429)",
    "500": "failed (HTTP 500)",
    "slow_headers": "did not answer within",
    "stall": "did not answer within",
    "truncated": "was cut off before it ended",
    "malformed": "malformed reply from the model server",
    "empty": "the model returned an empty reply",
}
# Faults whose outcome depends on the surface: an error message there, else an answer.
ONLY_ERRORS_ON = {
    # A command was asked for: prose holds none. The agent may answer in prose.
    "prose": ({"oneshot", "mcp"}, "holds no command (it answered in prose)"),
    # No tools were offered for a command, so a tool call leaves no reply; the agent sees the
    # arguments rejected, says so to the model and gets its answer.
    "bad_tool_args": ({"oneshot", "mcp"}, "the model returned an empty reply"),
    "huge": (set(), ""),
}
FAULTS = [*ERRORS, *ONLY_ERRORS_ON]
ANSWER = "Here are the files."


@pytest.fixture(autouse=True)
def readable_certificates(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP clients read the certificates SSL_CERT_FILE names even for plain http: a variable
    naming a missing file (some build machines) is not what these tests are about."""
    named = os.environ.get("SSL_CERT_FILE")
    if named is not None and not Path(named).is_file():
        monkeypatch.delenv("SSL_CERT_FILE")


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with fault_server() as running:
        yield running


def _expected(fault: str, surface: str) -> str | None:
    """The words of the error ``fault`` gives on ``surface``, or None for an answer."""
    if fault in ERRORS:
        return ERRORS[fault]
    where, words = ONLY_ERRORS_ON[fault]
    return words if surface in where else None


@pytest.mark.parametrize("surface", surfaces.SURFACES)
@pytest.mark.parametrize("fault", FAULTS)
def test_fault(
    fault: str,
    surface: str,
    server: FaultServer,
    conch: surfaces.Conch,
    isolated_dirs: Path,
    tmp_path: Path,
) -> None:
    server.queue(fault, f"say:{ANSWER}") if fault == "bad_tool_args" else server.queue(fault)
    url = f"http://127.0.0.1:{closed_port()}/v1" if fault == "refused" else server.url
    root = tmp_path / "root"
    root.mkdir()
    if surface in surfaces.CLI_SURFACES:
        outcome = surfaces.run_cli(surface, conch, isolated_dirs, url)
    elif surface == "serve":
        outcome = surfaces.run_serve(url, root)
    else:
        outcome = surfaces.run_mcp(url, root)
    words = _expected(fault, surface)
    assert "Traceback" not in outcome.message + outcome.stdout
    record(
        "faults",
        f"{fault}-{surface}",
        fault=fault,
        surface=surface,
        error=words is not None,
        code=outcome.code,
        message=outcome.message.strip()[:300],
        traceback="Traceback" in outcome.message + outcome.stdout,
        history=outcome.entry is not None,
    )
    if words is not None:
        assert words in outcome.message, outcome.message
        assert "\n" not in outcome.message.rstrip("\n"), outcome.message
        if surface in surfaces.CLI_SURFACES:
            assert outcome.code == 5
            assert outcome.message.startswith("conch: ")
            assert outcome.entry is not None and outcome.entry.exit_code == 5
            assert words in str(outcome.entry.notes)
        elif surface == "serve":
            assert outcome.code == 502
        else:
            assert outcome.code == 1  # an error result
        return
    # Not a failure here: the reply comes through whole.
    if surface in surfaces.CLI_SURFACES:
        assert outcome.code == 0, outcome.message
        assert outcome.entry is not None and outcome.entry.exit_code == 0
    else:
        assert outcome.code in (200, 0), outcome.message
    seen = outcome.stdout if surface != "mcp" else outcome.message
    if fault == "huge":
        assert "a" * 100_000 in seen.replace("\\n", "")
        assert len(HUGE) == 100_005
    elif fault == "prose":
        assert PROSE in seen
    else:
        assert ANSWER in seen
        if surface in ("run", "chat"):
            assert outcome.entry is not None and outcome.entry.tool_calls
            failed = outcome.entry.tool_calls[0]
            assert failed["tool"] == "fs_read" and not failed["ok"]
            assert "not JSON" in failed["error"]
        if surface == "serve":
            assert "the arguments are not JSON" in outcome.stdout


def test_a_429_is_retried_after_the_pause_it_asks_for(
    server: FaultServer, conch: surfaces.Conch, isolated_dirs: Path
) -> None:
    import time

    server.queue("429", "ok")
    write_config(
        isolated_dirs,
        surfaces.settings_text(server.url).replace("max_retries: 0", "max_retries: 2"),
    )
    started = time.monotonic()
    result = conch("--print", "list the files here")
    waited = time.monotonic() - started
    assert (result.code, result.out) == (0, "ls -la\n"), result.err
    assert len(server.requests) == 2
    assert waited >= 1.0  # Retry-After: 1


def test_a_certificate_file_that_cannot_be_read_is_one_line(
    conch: surfaces.Conch, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "no-such-bundle.pem"))
    write_config(isolated_dirs, surfaces.settings_text("http://127.0.0.1:9/v1"))
    result = conch("--print", "list the files here")
    assert result.code == 5
    assert result.err.startswith("conch: cannot set up TLS") and "SSL_CERT_FILE" in result.err
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
