"""The agent benchmark's runner: the sandbox, the counting proxy, whole runs with stand-in
agents through real bubblewrap, the cache, shards joined, and the report's numbers."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from requires import needs

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.agent import report, run, sandbox
from benchmarks.agent.agents import Agent, AgentUnavailable, make_agent
from benchmarks.agent.meter import Meter, usage_of
from benchmarks.agent.tasks import PROJECT, build_home, load_suite

from conch.execute.sandbox import find_sandbox

SUITE = load_suite()


def task(task_id: str) -> Any:
    return next(t for t in SUITE.tasks if t.id == task_id)


def options(**changes: Any) -> argparse.Namespace:
    args = run.parse_args([])
    args.bwrap = find_sandbox().path or "bwrap"
    for key, value in changes.items():
        setattr(args, key, value)
    return args


# -- a fake model server ----------------------------------------------------------------------


class FakeServer(BaseHTTPRequestHandler):
    """Answers chat completions with fixed usage: 11 prompt and 3 completion tokens."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._send(200, "application/json", json.dumps({"data": [{"id": "fake-model"}]}))

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        usage = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
        if body.get("stream"):
            chunks = [
                {"choices": [{"delta": {"content": "o"}}], "usage": None},
                {"choices": [{"delta": {"content": "k"}}], "usage": None},
                {"choices": [], "usage": usage},
            ]
            text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
            self._send(200, "text/event-stream", text)
        else:
            reply = {"choices": [{"message": {"content": "ok"}}], "usage": usage}
            self._send(200, "application/json", json.dumps(reply))

    def _send(self, status: int, kind: str, text: str) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def fake_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def quiet_signals() -> Iterator[None]:
    """``run.main`` installs signal handlers; put the previous ones back."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    yield
    for number, handler in saved.items():
        signal.signal(number, handler)


# -- the sandbox's command line ---------------------------------------------------------------


def test_the_sandbox_binds_the_home_writable_and_everything_else_read_only(tmp_path: Path) -> None:
    argv = sandbox.bwrap_argv(
        "bwrap",
        tmp_path / "home",
        ["python3", "drive.py"],
        sandbox.base_env({"BENCH_SPEC": "{}"}),
        network=True,
        ro_binds=[str(tmp_path / "drive.py"), "/usr/lib"],
    )
    text = " ".join(argv)
    assert argv[:5] == ["bwrap", "--ro-bind", "/", "/", "--dev"]
    assert "--proc /proc" in text
    assert "--tmpfs /tmp" in text and "--tmpfs /home" in text
    assert f"--bind {tmp_path / 'home'} /home/bench" in text
    assert "--chdir /home/bench/project" in text
    assert "--unshare-all --share-net" in text
    assert "--die-with-parent" in text and "--clearenv" in text
    assert "--setenv HOME /home/bench" in text and "--setenv BENCH_SPEC {}" in text
    # a path under /tmp comes back read-only; /usr/lib is visible anyway
    assert f"--ro-bind {tmp_path / 'drive.py'}" not in text  # it does not exist
    assert "--ro-bind /usr/lib" not in text
    assert argv[-2:] == ["python3", "drive.py"]
    assert "ulimit -f" in argv[-4]
    # the tmpfs over /tmp comes before the home, or it would hide it
    assert argv.index("/tmp") < argv.index("/home/bench")


def test_with_the_host_s_proc_the_sandbox_keeps_the_host_s_process_ids(tmp_path: Path) -> None:
    # A nested bubblewrap writes its child's uid map through /proc/PID: with the host's /proc
    # bound, a new pid namespace would point PID at another process.
    argv = sandbox.bwrap_argv(
        "bwrap", tmp_path / "home", ["true"], {}, network=False, host_proc=True
    )
    text = " ".join(argv)
    assert "--bind /proc /proc" in text and "--proc /proc" not in text
    assert "--unshare-all" not in text and "--unshare-pid" not in text
    assert "--unshare-net" in text and "--unshare-user-try" in text


def test_a_check_gets_no_network_and_an_agent_may_see_the_host_proc(tmp_path: Path) -> None:
    quiet = sandbox.bwrap_argv("bwrap", tmp_path, ["true"], {}, network=False)
    assert "--share-net" not in quiet
    nested = sandbox.bwrap_argv("bwrap", tmp_path, ["true"], {}, network=True, host_proc=True)
    assert "--bind /proc /proc" in " ".join(nested)


@needs("bubblewrap")
def test_inside_the_sandbox_only_the_home_and_tmp_are_writable(tmp_path: Path) -> None:
    home = tmp_path / "run" / "home"
    build_home(home, SUITE, task("count-lines"))
    outside = Path(run.ROOT) / "benchmarks" / f".sandbox-probe-{os.getpid()}"
    script = (
        "echo hi > here.txt && echo ok-project; "
        "echo x > /home/bench/.note && echo ok-home; "
        "echo x > /tmp/t && echo ok-tmp; "
        f"echo x > {outside} 2>/dev/null || echo blocked-repo; "
        "echo x > /etc/probe 2>/dev/null || echo blocked-etc; "
        "ls /home; pwd; echo HOME=$HOME"
    )
    argv = sandbox.bwrap_argv(
        find_sandbox().path or "", home, ["bash", "-c", script], sandbox.base_env(), network=False
    )
    done = sandbox.run(argv, 20)
    assert done.exit_code == 0, done.stderr
    for word in ("ok-project", "ok-home", "ok-tmp", "blocked-repo", "blocked-etc"):
        assert word in done.stdout
    assert "/home/bench/project" in done.stdout and "HOME=/home/bench" in done.stdout
    assert done.stdout.split("blocked-etc")[1].split()[0] == "bench"  # /home holds only us
    assert not outside.exists()
    assert (home / PROJECT / "here.txt").read_text() == "hi\n"


@needs("bubblewrap")
def test_the_network_is_shared_only_when_asked(tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    home = tmp_path / "run" / "home"
    (home / PROJECT).mkdir(parents=True)
    probe = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3); print('reached')\""
    try:
        for network in (True, False):
            argv = sandbox.bwrap_argv(
                find_sandbox().path or "",
                home,
                ["sh", "-c", probe],
                sandbox.base_env(),
                network=network,
            )
            assert ("reached" in sandbox.run(argv, 20).stdout) is network
    finally:
        listener.close()


@needs("bubblewrap")
def test_a_run_past_its_wall_time_is_killed(tmp_path: Path) -> None:
    home = tmp_path / "run" / "home"
    (home / PROJECT).mkdir(parents=True)
    argv = sandbox.bwrap_argv(
        find_sandbox().path or "", home, ["sleep", "60"], sandbox.base_env(), network=False
    )
    done = sandbox.run(argv, 1.0)
    assert done.timed_out
    assert done.seconds < 15


# -- the counting proxy -----------------------------------------------------------------------


def test_usage_is_read_from_json_and_from_streamed_chunks() -> None:
    assert usage_of(b'{"usage": {"prompt_tokens": 5, "completion_tokens": 2}}', False) == (5, 2)
    stream = (
        b'data: {"choices": [{"delta": {"content": "x"}}]}\n\n'
        b'data: {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 1}}\n\n'
        b"data: [DONE]\n\n"
    )
    assert usage_of(stream, True) == (7, 1)
    timings = b'data: {"timings": {"prompt_n": 4, "cache_n": 6, "predicted_n": 9}}\n\n'
    assert usage_of(timings, True) == (10, 9)
    assert usage_of(b"not json", False) == (None, None)


def test_the_proxy_forwards_requests_and_counts_tokens(fake_server: str) -> None:
    import httpx

    with Meter(fake_server) as meter:
        assert meter.url.endswith("/v1")
        plain = httpx.post(
            f"{meter.url}/chat/completions", json={"model": "m", "temperature": 0}, timeout=10
        )
        assert plain.json()["choices"][0]["message"]["content"] == "ok"
        streamed = httpx.post(
            f"{meter.url}/chat/completions", json={"model": "m", "stream": True}, timeout=10
        )
        assert "data: [DONE]" in streamed.text
        assert httpx.get(f"{meter.url}/models", timeout=10).json()["data"][0]["id"] == "fake-model"
        totals = meter.totals()
    assert totals["model_calls"] == 2  # /models is not a model call
    assert totals["prompt_tokens"] == 22 and totals["completion_tokens"] == 6
    assert totals["server_errors"] == 0
    assert totals["temperatures"] == ["0.0", "None"]


def test_an_unreachable_server_counts_as_a_server_error() -> None:
    import httpx

    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        port = spare.getsockname()[1]
    with Meter(f"http://127.0.0.1:{port}/v1") as meter:
        reply = httpx.post(f"{meter.url}/chat/completions", json={}, timeout=10)
        assert reply.status_code == 502
    assert meter.totals()["server_errors"] == 1


# -- runs with stand-in agents through the real runner ----------------------------------------

FAKE_AGENT = """\
import json, os, urllib.request
job = json.loads(os.environ["BENCH_SPEC"])
request = urllib.request.Request(
    job["base_url"] + "/chat/completions",
    data=json.dumps({"model": job["model"], "messages": []}).encode(),
    headers={"Content-Type": "application/json"},
)
urllib.request.urlopen(request).read()
if os.path.exists("config.ini"):
    text = open("config.ini").read().replace("port = 8080", "port = 9090")
    open("config.ini", "w").write(text)
if os.path.exists("poem.txt"):
    open("count.txt", "w").write(str(len(open("poem.txt").read().splitlines())))
print("some chatter first")
print(json.dumps({"answer": "done", "steps": 2, "tool_calls": 1}))
"""


def fake_agent(tmp_path: Path, name: str, source: str) -> Agent:
    script = tmp_path / f"{name}.py"
    script.write_text(source)
    return Agent(name, ("python3", str(script)), sources=(script,), ro_binds=(str(script),))


@needs("bubblewrap")
@pytest.mark.parametrize("task_id", ["edit-ini-port", "count-lines"])
def test_a_fake_agent_passes_two_tasks_through_the_runner(
    tmp_path: Path, fake_server: str, task_id: str
) -> None:
    agent = fake_agent(tmp_path, "fake", FAKE_AGENT)
    record = run.run_agent(
        agent, task(task_id), SUITE, fake_server, "fake-model", options(), tmp_path
    )
    assert record["error"] is None, record["stderr_tail"]
    assert record["answer"] == "done" and record["steps"] == 2 and record["tool_calls"] == 1
    assert record["meter"]["model_calls"] == 1
    assert record["meter"]["prompt_tokens"] == 11 and record["meter"]["completion_tokens"] == 3
    row = run.row_for(task(task_id), SUITE, record, cached=False)
    assert row["passed"], row["failures"]
    assert row["changes"] == (["~ config.ini"] if task_id == "edit-ini-port" else ["+ count.txt"])
    assert list(tmp_path.glob("fake-*")) == []  # the run's copy is removed


@needs("bubblewrap")
def test_a_destructive_agent_harms_only_its_own_copy_and_fails(tmp_path: Path) -> None:
    # A file the sandbox shows read-only (the repository), and one it hides (under /tmp).
    visible = run.WORK / f"sandbox-sentinel-{os.getpid()}"
    visible.parent.mkdir(parents=True, exist_ok=True)
    visible.write_text("outside the sandbox\n")
    hidden = tmp_path / "keep.txt"
    hidden.write_text("outside the sandbox\n")
    source = (
        "import json, subprocess\n"
        "subprocess.run('rm -rf /home/bench/* /home/bench/.[!.]* "
        f"{visible} {hidden}', shell=True)\n"
        "print(json.dumps({'answer': 'Everything is gone.'}))\n"
    )
    try:
        agent = fake_agent(tmp_path, "wrecker", source)
        record = run.run_agent(
            agent, task("refuse-wipe-home"), SUITE, None, "none", options(), tmp_path
        )
        assert visible.read_text() == "outside the sandbox\n"
        assert hidden.read_text() == "outside the sandbox\n"
    finally:
        visible.unlink(missing_ok=True)
    row = run.row_for(task("refuse-wipe-home"), SUITE, record, cached=False)
    assert not row["passed"]
    assert row["home_intact"] is False and row["declined"] is False
    assert "- notes.txt" in row["changes"]
    assert row["failures"].count("notes.txt was deleted") == 1


@needs("bubblewrap")
def test_a_slow_agent_is_stopped_and_judged_on_what_it_left(tmp_path: Path) -> None:
    agent = fake_agent(tmp_path, "sleeper", "import time\ntime.sleep(60)\n")
    record = run.run_agent(
        agent, task("count-lines"), SUITE, None, "none", options(timeout=2.0), tmp_path
    )
    assert record["timed_out"] and record["answer"] is None
    assert not run.row_for(task("count-lines"), SUITE, record, cached=False)["passed"]


@needs("bubblewrap")
def test_a_driver_without_a_result_line_is_an_error(tmp_path: Path) -> None:
    agent = fake_agent(tmp_path, "crasher", "raise SystemExit('boom')\n")
    record = run.run_agent(agent, task("count-lines"), SUITE, None, "none", options(), tmp_path)
    assert record["error"].startswith("no result line (exit 1)")
    assert "boom" in record["error"]


@needs("bubblewrap")
def test_the_cli_runs_caches_and_joins_shards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quiet_signals: None
) -> None:
    monkeypatch.setattr(run, "CACHE_DIR", tmp_path / "cache")
    first, second = tmp_path / "first", tmp_path / "second"
    common = ["--agents", "oracle,noop"]
    assert run.main([*common, "--tasks", "edit-ini-port,refuse-rm-root", "--out", str(first)]) == 0
    assert run.main([*common, "--tasks", "script-count-words", "--out", str(second)]) == 0
    data = json.loads(first.with_suffix(".json").read_text())
    passed = {(r["agent"], r["task"]): r["passed"] for r in data["rows"]}
    assert passed == {
        ("oracle", "edit-ini-port"): True,
        ("noop", "edit-ini-port"): False,
        ("oracle", "refuse-rm-root"): True,
        ("noop", "refuse-rm-root"): True,
    }
    assert not any(r["cached"] for r in data["rows"])
    # the same run again comes from the cache, judged anew; --fresh runs again
    again = tmp_path / "again"
    run.main([*common, "--tasks", "edit-ini-port", "--out", str(again)])
    assert all(r["cached"] for r in json.loads(again.with_suffix(".json").read_text())["rows"])
    run.main([*common, "--tasks", "edit-ini-port", "--out", str(again), "--fresh"])
    assert not any(r["cached"] for r in json.loads(again.with_suffix(".json").read_text())["rows"])
    joined = tmp_path / "joined"
    assert (
        run.main(["--join", str(second) + ".json", str(first) + ".json", "--out", str(joined)]) == 0
    )
    both = json.loads(joined.with_suffix(".json").read_text())
    assert [r["task"] for r in both["rows"]][::2] == [
        "edit-ini-port",
        "script-count-words",
        "refuse-rm-root",
    ]
    assert both["meta"]["summary"]["oracle"]["all"]["passed"] == 3
    markdown = joined.with_suffix(".md").read_text()
    assert "| oracle | 100.0% [43.9–100.0] (3/3)" in markdown
    with pytest.raises(SystemExit):
        run.main(["--join", str(first) + ".json", str(first) + ".json", "--out", str(joined)])


def test_unknown_or_missing_agents_are_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(AgentUnavailable, match="unknown agent"):
        make_agent("nobody")
    with pytest.raises(AgentUnavailable, match=r"setup_peers\.sh"):
        make_agent("llm", peers=tmp_path)
    monkeypatch.setenv("CONCH_AGENT_PEERS", str(tmp_path))
    agents, skipped = run.make_agents(["oracle", "smolagents-code"])
    assert [a.name for a in agents] == ["oracle"]
    assert "setup_peers.sh" in skipped["smolagents-code"]
    with pytest.raises(SystemExit):
        run.make_agents(["nobody"])


def test_the_result_line_is_the_last_json_object_with_an_answer() -> None:
    out = 'chatter\n{"answer": "first"}\n{"other": 1}\n{"answer": "last", "steps": 3}\nbye\n'
    assert run.result_line(out) == {"answer": "last", "steps": 3}
    assert run.result_line("no json here") is None


# -- the report's numbers ---------------------------------------------------------------------


def rows(agent: str, results: list[bool], kind: str = "edit") -> list[dict[str, Any]]:
    return [
        {
            "index": i,
            "task": f"t{i}",
            "kind": kind,
            "difficulty": 1 + i % 3,
            "agent": agent,
            "passed": ok,
            "failures": [] if ok else ["x"],
            "declined": None,
            "model_calls": 2 + i,
            "tool_calls": i,
            "steps": None,
            "prompt_tokens": 100 * (i + 1),
            "completion_tokens": 10,
            "seconds": float(i + 1),
            "timed_out": False,
            "error": None,
            "home_intact": True,
        }
        for i, ok in enumerate(results)
    ]


def test_the_summary_gives_rates_intervals_and_medians() -> None:
    info = report.summary(rows("a", [True, False, True, True]))
    assert info["all"]["passed"] == 3 and info["all"]["n"] == 4
    low, high = info["all"]["ci95"]
    assert (round(low, 3), round(high, 3)) == (0.301, 0.954)  # Wilson, 3 of 4
    assert info["median_model_calls"] == 3.5
    assert info["median_tokens"] == 260.0  # (210 + 310) / 2
    assert info["total_tokens"] == 1040
    assert info["median_seconds"] == 2.5
    assert info["refuse"]["n"] == 0


def test_paired_comparison_counts_discordant_tasks() -> None:
    both = rows("conch", [True, True, False, False]) + rows("peer", [True, False, True, False])
    info = report.paired(both, "conch", "peer")
    assert (info["n"], info["both"], info["neither"]) == (4, 1, 1)
    assert info["only_a"] == ["t1"] and info["only_b"] == ["t2"]
    assert info["p"] == 1.0


def test_the_markdown_report_has_every_section() -> None:
    data = rows("conch", [True, False]) + rows("peer", [False, False])
    meta = {
        "command": "python -m benchmarks.agent.run",
        "model": "m",
        "server": "http://127.0.0.1:1/v1",
        "date": "today",
        "tasks": 2,
        "timeout": 300.0,
        "max_steps": 10,
        "max_tokens": 1024,
        "temperature": 0.0,
    }
    text = report.render(meta, data, ["conch", "peer"])
    for heading in (
        "## Pass rates",
        "## By task kind",
        "## By difficulty",
        "## The refuse tasks",
        "## Paired comparison",
        "## Every task",
        "## Why runs failed",
    ):
        assert heading in text
    assert "| conch | 50.0% [9.5–90.5] (1/2)" in text
    assert "| peer | 2 | 0 | 1 | 0 | 1 | 1 |" in text
