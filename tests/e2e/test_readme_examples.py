"""Every example of the README's quick start and "Using it" section, on the real embedded
model through the warm model service, as a new user would type it in a directory that has
what the examples talk about. Requests run with ``--json`` (nothing runs): the command must
parse and the policy must not reject it; the piped question must get prose; the other lines
(subcommands, --analyze) must succeed as documented; ``conch serve`` answers over HTTP and
``conch mcp`` over MCP."""

from __future__ import annotations

import json
import re
import shlex
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import keyring
import pexpect
import pytest

from cliutil import CliResult, spawn_conch
from conch.cli.repl import PROMPT
from conch.policy import Decision, PolicyContext, assess
from keyringutil import FileKeyring

pytestmark = pytest.mark.e2e

Conch = Callable[..., CliResult]
README = Path(__file__).resolve().parents[2] / "README.md"


def readme_lines() -> list[str]:
    """The quick start's conch request and every line of the "Using it" block."""
    text = README.read_text(encoding="utf-8")
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    first = re.search(r'\.venv/bin/(conch "[^"]+")', quick)
    assert first is not None
    using = text.split("## Using it", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", using, re.S)
    assert block is not None
    lines = [re.split(r"\s{2,}#", line)[0].strip() for line in block.group(1).splitlines()]
    return [first.group(1), *(line for line in lines if line)]


LINES = readme_lines()


@pytest.fixture
def project(
    tmp_path: Path, runtime_dir: Path, embedded_model: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A directory with what the examples talk about, and the warm service switched on."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime_dir))
    monkeypatch.delenv("CONCH_DAEMON", raising=False)
    monkeypatch.setenv("TERM", "xterm")  # a terminal the chat REPL knows, no cursor queries
    monkeypatch.setenv("PROMPT_TOOLKIT_NO_CPR", "1")
    work = tmp_path / "project"
    (work / "logs").mkdir(parents=True)
    (work / "src").mkdir()
    for size, name in ((4000, "big.bin"), (2000, "notes.txt"), (300, "small.txt")):
        (work / name).write_bytes(b"x" * size)
    (work / "logs" / "app.log").write_text("started\nstopped\n", encoding="utf-8")
    (work / "photo.jpeg").write_bytes(b"\xff\xd8\xff")
    (work / "access.log").write_text(
        "".join(f"10.0.0.{i % 3} - - [24/Nov/2026] GET / 200\n" for i in range(9)),
        encoding="utf-8",
    )
    (work / "users.json").write_text(
        json.dumps([{"name": "ada", "age": 36}, {"name": "bob", "age": 25}]), encoding="utf-8"
    )
    (work / "error.log").write_text(
        "error: No such file or directory: config.yaml\n", encoding="utf-8"
    )
    (work / "build.sh").write_text("#!/bin/sh\nmake all\n", encoding="utf-8")
    (work / "settings.ini").write_text("[server]\nhost = 0.0.0.0\nport = 8080\n", encoding="utf-8")
    (work / "empty-dir").mkdir()
    return work


def _parses(command: str) -> bool:
    verdict = assess(command, PolicyContext(unsafe=True))
    return bool(verdict.commands) and not any("parse" in r for r in verdict.reasons)


def _chat(line: str, cwd: Path) -> None:
    """``conch chat ...`` as typed: a REPL on a real terminal; one question, then /exit."""
    child = spawn_conch(cwd, *shlex.split(line)[1:])
    child.timeout = 600
    try:
        child.expect_exact(PROMPT)
        child.send("How many lines does logs/app.log have?\r")
        reply = ""
        # The status line ends the reply; a command the agent wants to run is asked about
        # first (interactive mode), and the user says yes.
        while child.expect([r"● \d+% / \d+ tokens", r"Run it\? \[y/N\]"]) == 1:
            reply += child.before
            child.send("y\r")
        reply += child.before
        child.expect_exact(PROMPT)
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert "2" in reply or "two" in reply.lower(), reply
    assert child.exitstatus == 0


SHELL_PROMPT = r"\[conch:[^\]]*\]\$"


def _shell(line: str, cwd: Path) -> None:
    """``conch shell`` as typed: a shell line runs, a question about its output gets a
    reply (a suggested command is declined), then :quit."""
    from conch.cli.shellturn import QUESTION

    child = spawn_conch(cwd, *shlex.split(line)[1:])
    child.timeout = 600
    try:
        child.expect(SHELL_PROMPT)
        # The line editor draws the prompt again as it takes a line: wait for the newline
        # that ends it before looking for the next prompt.
        child.send("wc -l logs/app.log\r")
        child.expect_exact("\r\n")
        child.expect(r"2 logs/app\.log")
        child.expect(SHELL_PROMPT)
        child.send("how many lines did that count?\r")
        child.expect_exact("\r\n")
        while child.expect([SHELL_PROMPT, re.escape(QUESTION.strip())]) == 1:
            child.send("n\r")
            child.expect_exact("\r\n")
        reply = child.before
        child.send(":quit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert reply.strip(), "the model's turn printed nothing"
    assert child.exitstatus == 0


def _serve(line: str, cwd: Path) -> None:
    """``conch serve`` as typed (on a free port): the web page is there, the embedded model
    answers a chat request through the API, and Ctrl+C stops it with exit 0."""
    import socket
    import subprocess
    import time

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [str(Path(sys.executable).with_name("conch")), *shlex.split(line)[1:]]
    server = subprocess.Popen([*argv, "--port", str(port)], cwd=cwd, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "it did not start"
            time.sleep(0.2)
        page = httpx.get(base + "/", timeout=10)
        assert page.status_code == 200 and "<html" in page.text.lower()
        model = httpx.get(base + "/v1/models", timeout=10).json()["data"][0]["id"]
        reply = httpx.post(
            base + "/v1/chat/completions",
            json={
                "model": model,
                "messages": [{"role": "user", "content": "What is 2 + 3? Only the number."}],
                "max_completion_tokens": 16,
            },
            timeout=600,
        ).json()
        assert "5" in reply["choices"][0]["message"]["content"], reply
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=60)
    assert server.returncode == 0, err.decode()


def _mcp(line: str, cwd: Path) -> None:
    """``conch mcp`` as typed, from an MCP client of the official SDK over stdio: the tools
    are listed with their schemas and ``propose_command`` gives a checked command."""
    import os

    import anyio
    from mcp import Client, StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k.startswith(("XDG_", "HOME", "PATH"))}
    params = StdioServerParameters(
        command=str(Path(sys.executable).with_name("conch")),
        args=shlex.split(line)[1:],
        env=env,
        cwd=str(cwd),
    )

    async def main() -> tuple[list[str], str]:
        with anyio.fail_after(900):
            async with Client(params) as client:
                listed = await client.list_tools()
                proposed = await client.call_tool(
                    "propose_command", {"request": "list the files in this directory"}
                )
        [block] = proposed.content
        return [t.name for t in listed.tools], block.text  # type: ignore[union-attr]

    names, text = anyio.run(main)
    assert {"propose_command", "fs_read"} <= set(names), names
    answer = json.loads(text)
    assert answer["decision"] != str(Decision.REJECT), answer
    assert _parses(answer["command"]), answer


def _run(conch: Conch, line: str, cwd: Path) -> CliResult:
    """One README line as the user types it; requests get --json so nothing runs."""
    stdin = ""
    if "|" in line:  # cat FILE | conch ...
        feeder, line = (part.strip() for part in line.split("|", 1))
        stdin = (cwd / shlex.split(feeder)[1]).read_text(encoding="utf-8")
    argv = shlex.split(line)[1:]
    if argv[0] == "auth":  # the key comes from stdin where no terminal asks for it
        stdin = "sk-test-0000000000000000WXYZ\n"
    agent = ("check", "daemon", "help", "doctor", "run", "auth")
    if argv[0] not in agent and "--analyze" not in argv:
        argv = ["--json", "--quiet", *(a for a in argv if a not in ("-p", "--json", "-e"))]
    return conch(*argv, stdin=stdin, cwd=cwd)


@pytest.mark.parametrize("line", LINES)
def test_every_readme_example_works_as_written(conch: Conch, project: Path, line: str) -> None:
    if "--analyze" in line:  # diagnoses the last run: make one first
        _run(conch, 'conch "show disk usage of each directory here"', project)
    if line.startswith("conch daemon"):  # reports on the service: have it running
        conch("daemon", "start", cwd=project)
    if line.startswith("conch chat"):
        _chat(line, project)
        return
    if line.startswith("conch shell"):
        _shell(line, project)
        return
    if line.startswith("conch serve"):
        _serve(line, project)
        return
    if line.startswith("conch mcp"):
        _mcp(line, project)
        return
    previous = keyring.get_keyring()
    keyring.set_keyring(FileKeyring(project.parent / "keyring.json"))  # for `conch auth`
    try:
        result = _run(conch, line, project)
    finally:
        keyring.set_keyring(previous)
    words = shlex.split(line.split("|")[-1])
    if words[1] == "run":  # the agent's task, done in the directory
        assert result.code == 0, result.err
        settings = (project / "settings.ini").read_text(encoding="utf-8")
        assert "port = 9090" in settings and "8080" not in settings, settings
        return
    if words[1] == "auth":
        assert result.code == 0, result.err
        assert "WXYZ" in result.out and "sk-test-0000" not in result.out, result.out
        return
    if words[1] == "check":
        assert result.code == 3 and "Denylisted" in result.out, result.out + result.err
        return
    if words[1] in ("daemon", "help", "doctor") or "--analyze" in words:
        assert result.code == 0, result.err
        assert result.out.strip(), result.err
        return
    assert result.code == 0, result.err
    out = json.loads(result.out)
    if "|" in line:  # a question about piped input gets prose
        assert len(out.get("answer", "").split()) >= 5, out
        return
    if "answer" in out:  # asked about something: prose is a fine reply
        assert len(out["answer"].split()) >= 5, out
        return
    assert out["decision"] != str(Decision.REJECT), out
    assert _parses(out["command"]), out["command"]
