"""Every example of the README's quick start and "Using it" section, on the real embedded
model through the warm model service, as a new user would type it, in a fresh copy of a
directory like a user's (``benchmarks/everyday/fixture.py``: logs, an access log, JSON, nested directories
with files of several sizes, old and new temporary files, empty directories, photos).

Each request is judged by what it does: it runs (the user answers Execute on the terminal; a
line with ``-p`` or ``--json`` prints, changes nothing, and its command is then run through
conch's runner) and a check reads the output or the tree: five files and only files, one
line per directory, a count beside each IP, the names only, the archive, the renamed photos,
the old temporary files gone and nothing else. A question gets a short answer in prose; the
subcommands succeed as documented; ``conch serve`` answers over HTTP and ``conch mcp`` over
MCP. A canary file outside the directory must be untouched."""

from __future__ import annotations

import json
import re
import shlex
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import keyring
import pexpect
import pytest

from cliutil import CliResult, spawn_conch
from conch.cli.repl import PROMPT
from conch.policy import Decision, PolicyContext, assess
from keyringutil import FileKeyring

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: benchmarks/
from benchmarks.everyday import fixture as readme_fixture
from benchmarks.everyday.run import nonblank_lines, tree_state

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
) -> Iterator[Path]:
    """A fresh copy of the user's directory, the warm service switched on, and a canary
    outside the directory that nothing may touch."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime_dir))
    monkeypatch.delenv("CONCH_DAEMON", raising=False)
    monkeypatch.setenv("TERM", "xterm")  # a terminal the chat REPL knows, no cursor queries
    monkeypatch.setenv("PROMPT_TOOLKIT_NO_CPR", "1")
    work = readme_fixture.build(tmp_path / "project")
    (work / "settings.ini").write_text("[server]\nhost = 0.0.0.0\nport = 8080\n", encoding="utf-8")
    canary = tmp_path / "canary.txt"
    canary.write_text("untouched\n", encoding="utf-8")
    yield work
    assert canary.read_text(encoding="utf-8") == "untouched\n", "the canary was changed"


def _parses(command: str) -> bool:
    verdict = assess(command, PolicyContext(unsafe=True))
    return bool(verdict.commands) and not any("parse" in r for r in verdict.reasons)


def _chat(line: str, cwd: Path) -> None:
    """``conch chat ...`` as typed: a REPL on a real terminal; one question, then /exit."""
    child = spawn_conch(cwd, *shlex.split(line)[1:])
    child.timeout = 600
    try:
        child.expect_exact(PROMPT)
        child.send("How many lines does logs/worker.log have?\r")
        reply = ""
        # The status line ends the reply; a command the agent wants to run is asked about
        # first (interactive mode), and the user says yes.
        while child.expect([r"● \d+% / \d+ tokens", r"Run it\? \[y/N(/a)?\]"]) == 1:
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
    from conch.cli.shellview import QUESTION

    child = spawn_conch(cwd, *shlex.split(line)[1:])
    child.timeout = 600
    try:
        child.expect(SHELL_PROMPT)
        # The line editor draws the prompt again as it takes a line: wait for the newline
        # that ends it before looking for the next prompt.
        child.send("wc -l logs/worker.log\r")
        child.expect_exact("\r\n")
        child.expect(r"2 logs/worker\.log")
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
    """``conch serve`` as typed (on a free port): it prints the URL to open, with its token;
    the web page is there, the API refuses a request without the token, the embedded model
    answers a chat request with it, and Ctrl+C stops it with exit 0."""
    import os
    import socket
    import subprocess
    import threading
    from urllib.parse import parse_qs, urlsplit

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [str(Path(sys.executable).with_name("conch")), *shlex.split(line)[1:]]
    env = {k: v for k, v in os.environ.items() if k != "CONCH_SERVER_API_KEY"}
    server = subprocess.Popen(
        [*argv, "--port", str(port)], cwd=cwd, env=env, stderr=subprocess.PIPE, text=True
    )
    assert server.stderr is not None
    base = f"http://127.0.0.1:{port}"
    seen: list[str] = []
    too_slow = threading.Timer(60, server.kill)  # no URL within a minute: stop waiting
    too_slow.start()
    try:
        while not seen or "conch serve: open " not in seen[-1]:
            printed = server.stderr.readline()
            assert printed, f"it ended before printing its URL: {''.join(seen)}"
            seen.append(printed)
        too_slow.cancel()
        url = seen[-1].split("conch serve: open ", 1)[1].strip()
        assert url.startswith(base + "/?token="), url
        token = parse_qs(urlsplit(url).query)["token"][0]
        page = httpx.get(url, timeout=60)
        assert page.status_code == 200 and "<html" in page.text.lower()
        assert httpx.get(base + "/v1/models", timeout=10).status_code == 401
        auth = {"Authorization": f"Bearer {token}"}
        model = httpx.get(base + "/v1/models", headers=auth, timeout=10).json()["data"][0]["id"]
        reply = httpx.post(
            base + "/v1/chat/completions",
            headers=auth,
            json={
                "model": model,
                "messages": [{"role": "user", "content": "What is 2 + 3? Only the number."}],
                "max_completion_tokens": 16,
            },
            timeout=600,
        ).json()
        assert "5" in reply["choices"][0]["message"]["content"], reply
    finally:
        too_slow.cancel()
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=60)
    assert server.returncode == 0, "".join(seen) + err


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


def _request(conch: Conch, line: str, cwd: Path) -> CliResult:
    """One README line as the user types it, with a terminal on which the user says yes."""
    stdin = ""
    if "|" in line:  # cat FILE | conch ...
        feeder, line = (part.strip() for part in line.split("|", 1))
        stdin = (cwd / shlex.split(feeder)[1]).read_text(encoding="utf-8")
    argv = shlex.split(line)[1:]
    if argv[0] == "auth":  # the key comes from stdin where no terminal asks for it
        stdin = "sk-test-0000000000000000WXYZ\n"
    if argv[0] in ("check", "daemon", "help", "doctor", "auth"):
        return conch(*argv, stdin=stdin, cwd=cwd)
    if argv[0] == "run":  # the agent asks before each file it changes: the user says yes
        return conch(*argv, stdin=stdin, cwd=cwd, answers="y\n" * 6)
    # The user's answers on the terminal: yes to a suggested fix, then Execute (a question
    # reads none of them).
    return conch(*argv, stdin=stdin, cwd=cwd, answers="y\ne\n")


def _run_printed(command: str, cwd: Path) -> None:
    """Run a command that a line printed through conch's own runner, as the user would by
    answering yes to it."""
    from conch.execute.checked import Answer, run_checked
    from conch.policy import PolicyContext

    ran = run_checked(
        command,
        PolicyContext(cwd=cwd),
        cwd=cwd,
        state_dir=None,
        approve=lambda *_: Answer.run(),
        interactive=False,
        timeout=60,
    )
    assert ran.result.exit_code == 0, (command, ran.result)


def _five_largest(result: CliResult, before: dict[str, bytes | None], cwd: Path) -> None:
    lines = nonblank_lines(result.out)
    assert len(lines) == 5, result.out
    for wanted in (
        readme_fixture.largest(cwd, recursive=False),
        readme_fixture.largest(cwd, recursive=True),
    ):
        names = [
            next((w for w in wanted if line.endswith(w.rsplit("/", 1)[-1])), "") for line in lines
        ]
        if sorted(names) == sorted(wanted):
            return
    raise AssertionError(f"not the five largest files, and only files:\n{result.out}")


def _each_directory(result: CliResult, before: dict[str, bytes | None], cwd: Path) -> None:
    named = [line.split()[-1].removeprefix("./").rstrip("/") for line in nonblank_lines(result.out)]
    named = [name for name in named if name != "."]  # du's own total line may come last
    assert sorted(named) == readme_fixture.top_dirs(cwd), result.out


def _archive(result: CliResult, before: dict[str, bytes | None], cwd: Path) -> None:
    import tarfile
    import zipfile

    [command] = nonblank_lines(result.out)
    assert tree_state(cwd) == before, "-p ran something"
    _run_printed(command, cwd)
    new = [cwd / name for name in tree_state(cwd).keys() - before.keys()]
    members: list[str] = []
    for path in new:
        if path.is_file() and tarfile.is_tarfile(path):
            with tarfile.open(path) as archive:
                members += archive.getnames()
        elif path.is_file() and zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                members += archive.namelist()
    assert any(m.endswith("logs/app.log") for m in members), (command, new, members)


def _empty_directories(result: CliResult, before: dict[str, bytes | None], cwd: Path) -> None:
    out = json.loads(result.out)
    assert tree_state(cwd) == before, "--json ran something"
    _run_printed(out["command"], cwd)
    after = tree_state(cwd)
    for empty in readme_fixture.EMPTY_DIRS:
        assert empty not in after, (out["command"], empty)
    files = {name for name, data in before.items() if data is not None}
    assert files <= after.keys(), (out["command"], files - after.keys())


def _old_tmp_files(result: CliResult, before: dict[str, bytes | None], cwd: Path) -> None:
    after = tree_state(cwd)
    old = {name for name, age in readme_fixture.TMP_FILES.items() if age > 7}
    assert not old & after.keys(), (result.err, old & after.keys())
    kept = {name for name, data in before.items() if data is not None} - old
    assert kept <= after.keys(), (result.err, kept - after.keys())


def _ip_counts(result: CliResult, before: dict[str, bytes | None], cwd: Path) -> None:
    lines = nonblank_lines(result.out)
    for ip, count in readme_fixture.ip_counts().items():
        line = next((line for line in lines if ip in line.split()), None)
        assert line is not None and str(count) in line.split(), (ip, count, result.out)


def _renamed(result: CliResult, before: dict[str, bytes | None], cwd: Path) -> None:
    after = tree_state(cwd)
    for name in ("photo1", "holiday photo"):
        assert f"{name}.jpg" in after and f"{name}.jpeg" not in after, (result.err, sorted(after))
        assert after[f"{name}.jpg"] == before[f"{name}.jpeg"]


def _names_only(result: CliResult, before: dict[str, bytes | None], cwd: Path) -> None:
    names = [line.strip('"') for line in nonblank_lines(result.out)]
    assert sorted(names) == readme_fixture.OLDER_THAN_30, result.out
    assert "jq " in result.err, "the command was not shown before it ran"


def _build_script(result: CliResult, before: dict[str, bytes | None], cwd: Path) -> None:
    assert "build.sh" in result.out, result.out
    assert len(result.out.split()) <= 60, "not a short answer"


def _prose(result: CliResult, before: dict[str, bytes | None], cwd: Path) -> None:
    assert len(result.out.split()) >= 5, result.out
    assert tree_state(cwd) == before, "a question ran something"


# What each request of the README must do (by its words).
EFFECTS = {
    "list the five largest files in this directory": _five_largest,
    "show disk usage of each directory here": _each_directory,
    "compress the logs directory": _archive,
    "delete empty directories": _empty_directories,
    "remove .tmp files older than a week": _old_tmp_files,
    "count unique IPs in access.log by frequency": _ip_counts,
    "rename every .jpeg file here to .jpg": _renamed,
    "names of users older than 30": _names_only,
    "why does this fail": _prose,
    "is it safe to delete ~/.cache": _prose,
    "which of these is the build script": _build_script,
}


def _effect_of(line: str) -> Callable[[CliResult, dict[str, bytes | None], Path], None] | None:
    return next((check for words, check in EFFECTS.items() if f'"{words}"' in line), None)


def test_every_request_of_the_readme_has_a_check_of_its_effect() -> None:
    requests = [line for line in LINES if '"' in line and not line.startswith(SUBCOMMANDS)]
    assert requests and all(_effect_of(line) is not None for line in requests), requests


SUBCOMMANDS = tuple(
    f"conch {word}"
    for word in (
        "check",
        "daemon",
        "help",
        "doctor",
        "run",
        "auth",
        "chat",
        "shell",
        "serve",
        "mcp",
    )
)


@pytest.mark.parametrize("line", LINES)
def test_every_readme_example_does_what_it_says(
    conch: Conch, project: Path, line: str, capfd: pytest.CaptureFixture[str]
) -> None:
    if "--analyze" in line:  # diagnoses the last run: make one first
        _request(conch, 'conch -p "show disk usage of each directory here"', project)
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
    before = tree_state(project)
    previous = keyring.get_keyring()
    keyring.set_keyring(FileKeyring(project.parent / "keyring.json"))  # for `conch auth`
    try:
        capfd.readouterr()
        result = _request(conch, line, project)
    finally:
        keyring.set_keyring(previous)
    # A command runs on the user's terminal: what it prints goes to the process's stdout.
    ran = capfd.readouterr()
    result = CliResult(result.out + ran.out, result.err + ran.err, result.code)
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
    check = _effect_of(line)
    assert check is not None, f"no check of what {line!r} does"
    check(result, before, project)
