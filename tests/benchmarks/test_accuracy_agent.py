"""``conch-agent``: conch's agent as a tool of the accuracy harness (benchmarks/accuracy/agent_tool.py).

No model and no server: a scripted provider answers both the agent's loop (JSON steps, as the
harness's server is asked) and the one-shot pipeline inside ``do`` (one answer, no dry runs,
no validation, so what it says is what runs). The agent's commands run under conch's own
containment in a throwaway copy of a task's tree; a canary outside the temporary HOME must be
left untouched.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from requires import needs

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.accuracy.agent_tool import (
    AGENT_GUIDANCE,
    MAX_REPLIES,
    AgentCandidate,
    AgentGenerator,
    CountingProvider,
    agent_tools,
    answer_text,
    instruction_for,
    repeated_command,
)
from benchmarks.accuracy.candidate import Candidate, Task
from benchmarks.accuracy.fixtures import load_tasks
from benchmarks.accuracy.generators import PROVIDER_ERROR, command_from_reply
from benchmarks.accuracy.report import is_extraction_failure
from benchmarks.accuracy.sandbox import tree_state

from conch.agent.outputs import expected_outputs
from conch.agent.steps import split_steps
from conch.agent.system import DEFAULT_BASE
from conch.config.settings import Settings
from conch.errors import ProviderError
from conch.messages import GenerationOptions, Message
from conch.policy import ExecutionMode
from conch.providers.scripted import Reply, ScriptedProvider, SentRequest

# do's pipeline with one answer, no dry runs and no validation: the scripted command runs.
PLAIN = Settings.model_validate(
    {"generation": {"dry_run": False, "review": 1}, "validation": {"enabled": False}}
)
TASK = next(t for t in load_tasks() if t.index == 0)  # "list files in the current directory"


@dataclass
class JsonSteps(ScriptedProvider):
    """A scripted model written to in JSON steps, as the harness's llama.cpp server is."""

    native_tool_calls: bool = False


def is_agent(request: SentRequest) -> bool:
    """A request of the agent's loop (its system prompt), not of do's pipeline."""
    return request.messages[0].content.startswith(DEFAULT_BASE[:40])


def step(tool: str, **arguments: Any) -> str:
    return json.dumps({"tool": tool, "arguments": arguments})


def answer(text: str) -> str:
    return json.dumps({"answer": text})


def scripted(agent: Sequence[Reply], pipeline: str = "ls") -> JsonSteps:
    """The loop gets ``agent``'s replies in turn (the last one again once they run out), the
    pipeline always ``pipeline``."""
    replies = list(agent)

    def reply(messages: Sequence[Message], options: GenerationOptions) -> Reply:
        if not messages[0].content.startswith(DEFAULT_BASE[:40]):
            return pipeline
        return replies.pop(0) if len(replies) > 1 else replies[0]

    return JsonSteps(function=reply)


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """Where the agent's copies go; a canary outside HOME that nothing may touch."""
    home = Path.home()
    assert home.is_relative_to(tmp_path)  # the suite's temporary HOME (tests/conftest.py)
    canary = tmp_path / "canary.txt"
    canary.write_text("keep me\n", encoding="utf-8")
    place = tmp_path / "scratch"
    place.mkdir()
    yield place
    assert canary.read_text(encoding="utf-8") == "keep me\n"
    assert list(place.iterdir()) == []  # every copy the agent worked in is gone


def generator(provider: ScriptedProvider, scratch: Path) -> AgentGenerator:
    return AgentGenerator(
        "http://127.0.0.1:1/v1", "m", provider=provider, settings=PLAIN, scratch=scratch
    )


# -- the instruction -----------------------------------------------------------------------------


def test_the_instruction_is_the_request_and_the_guidance_general_and_asks_for_no_file(
    tmp_path: Path,
) -> None:
    assert instruction_for("  print the size of notes.txt ") == "print the size of notes.txt"
    assert not any(word in AGENT_GUIDANCE for word in ("testbed", "workspace", "system/"))
    assert "final command only" in AGENT_GUIDANCE and "try commands" in AGENT_GUIDANCE
    assert split_steps(AGENT_GUIDANCE) != []  # plain sentences
    # Its own words add no output check to the request's (notes.txt is not there).
    assert expected_outputs(AGENT_GUIDANCE, Path("/nonexistent")) == ()
    harness = AgentGenerator("http://127.0.0.1:1/v1", "m")
    counted = CountingProvider(harness.provider)
    assert AGENT_GUIDANCE in harness.session(tmp_path, counted).render_system()
    counted.close()


def test_an_answer_that_repeats_what_a_do_step_printed_is_that_step_s_command() -> None:
    done = [("ls", "a\nb"), ("echo 'hello world'", "hello world")]
    assert repeated_command("hello world", done) == "echo 'hello world'"
    assert repeated_command("a b", done) == "ls"  # spaces and line breaks aside
    assert repeated_command("echo 'hello world'", done) is None  # the command itself
    assert repeated_command("ls -l", done) is None  # a command of its own
    assert repeated_command("hello world printed.", done) == "echo 'hello world'"  # prose
    assert repeated_command("The files are a and b.", []) is None  # no step to take
    assert repeated_command("", [("true", "")]) is None


def test_the_agent_gets_its_tools_and_limits_as_asked(tmp_path: Path) -> None:
    options = agent_tools(tmp_path)
    assert (options.root, options.bash, options.mode, options.act) == (
        tmp_path,
        True,
        ExecutionMode.FULL,
        True,
    )
    assert (options.evaluate, options.web, options.audit, options.settings) == (
        False,
        False,
        False,
        None,
    )
    harness = AgentGenerator("http://127.0.0.1:1/v1", "m")  # the harness's provider, unasked
    counted = CountingProvider(harness.provider)
    session = harness.session(tmp_path, counted)
    assert session.act_first
    assert session.limits.max_iterations == MAX_REPLIES == 6
    assert session.options.temperature == 0.0
    # The counted provider is the server's to the session: JSON steps, its tokenizer.
    assert session.json_steps and counted.name == harness.provider.name
    assert counted.count_tokens == harness.provider.count_tokens  # type: ignore[attr-defined]
    counted.close()  # shared by every request: left open


@needs("bubblewrap")
def test_the_instruction_goes_to_do_first_then_to_the_model(scratch: Path) -> None:
    provider = scripted([answer("ls")])
    candidate = generator(provider, scratch).generate(TASK)

    told = instruction_for(TASK.nl)
    pipeline = [r for r in provider.sent if not is_agent(r)]
    loop = [r for r in provider.sent if is_agent(r)]
    assert len(pipeline) == 1 and TASK.nl in pipeline[0].messages[-1].content
    assert len(loop) == 1
    users = [m.content for m in loop[0].messages if m.role == "user"]
    assert users[0] == told
    # do's result, before the model's first reply (JSON steps read results as user messages)
    assert users[1:] == [loop[0].messages[-1].content]
    assert users[1].startswith("Result of do:\ncommand: ls\n")
    assert all(r.options.temperature == 0.0 for r in loop)
    assert candidate.command == "ls"


# -- the command taken from the answer -----------------------------------------------------------


@needs("bubblewrap")
def test_the_command_is_taken_from_the_answer_as_bare_md_takes_it(scratch: Path) -> None:
    raw = "```bash\nls -l /testbed\n```"
    candidate = generator(scripted([answer(raw)]), scratch).generate(TASK)

    assert (candidate.command, candidate.raw, candidate.error) == ("ls -l /testbed", raw, None)
    bare = command_from_reply(raw, 0.0, markdown=True)
    assert bare.command == candidate.command


@needs("bubblewrap")
def test_the_note_the_loop_adds_after_a_refusal_is_not_part_of_the_command(
    scratch: Path,
) -> None:
    # /etc is outside the agent's copy: the policy refuses, and the loop adds a line saying so.
    provider = scripted([step("bash", command="cat /etc/hostname"), answer("cat /etc/hostname")])
    candidate = generator(provider, scratch).generate(TASK)

    assert candidate.raw.startswith("cat /etc/hostname\n[bash was refused: ")
    assert candidate.command == "cat /etc/hostname"


def test_answer_text_drops_only_the_loops_trailing_notes() -> None:
    assert answer_text("ls\n[bash was refused: outside the root.]\n[do failed: no.]") == "ls"
    assert answer_text("[bash failed: x]") == "[bash failed: x]"  # nothing else to keep
    assert answer_text("echo '[a b]'\nls") == "echo '[a b]'\nls"


# -- an agent that fails is an extraction failure --------------------------------------------------


def _row(candidate: Candidate) -> dict[str, Any]:
    return {"command": candidate.command, "refused": candidate.refused}


@needs("bubblewrap")
@pytest.mark.parametrize(
    ("replies", "error"),
    [
        # a new command every reply: the iteration limit
        ([step("bash", command=f"ls -{flag}") for flag in "alRt1hSr"], "the agent stopped"),
        ([answer("")], "ModelOutputError"),  # an empty answer
        ([ProviderError("connection refused")], PROVIDER_ERROR),  # the server
    ],
    ids=["iteration-limit", "empty-answer", "server-error"],
)
def test_an_agent_that_fails_is_an_extraction_failure(
    scratch: Path, replies: list[Reply], error: str
) -> None:
    candidate = generator(scripted(replies), scratch).generate(TASK)

    assert candidate.command is None and not candidate.refused
    assert candidate.error is not None and candidate.error.startswith(error)
    assert is_extraction_failure(_row(candidate))
    assert isinstance(candidate, AgentCandidate) and candidate.agent is not None
    if error == "the agent stopped":
        assert f"iteration limit {MAX_REPLIES}" in candidate.error
        assert candidate.agent["replies"] == MAX_REPLIES


# -- the agent's copy is not the judged one ------------------------------------------------------


@needs("bubblewrap")
def test_the_agent_works_in_its_own_copy_and_the_judged_run_starts_from_the_tree(
    scratch: Path, tmp_path: Path
) -> None:
    from benchmarks.accuracy.run import Runner

    runner = Runner(tmp_path / "harness")
    root = runner.roots[TASK.fs]
    before = tree_state(root)
    provider = scripted(
        [step("bash", command="ls testbed"), step("bash", command="pwd"), answer("ls /testbed")],
        pipeline="touch testbed/agent-was-here.txt",
    )
    agent = generator(provider, scratch)
    agent.roots.update(runner.roots)
    candidate = agent.generate(TASK)

    assert isinstance(candidate, AgentCandidate) and candidate.agent is not None
    calls = candidate.agent["calls"]
    assert [c["tool"] for c in calls] == ["do", "bash", "bash"]
    assert "agent-was-here.txt" in calls[1]["result"]  # the agent's copy has its file
    worked_in = Path(calls[2]["result"].splitlines()[0])
    assert worked_in.is_relative_to(scratch) and not worked_in.exists()
    assert tree_state(root) == before  # the harness's tree is untouched
    judged = runner.run(TASK, str(candidate.command))
    assert judged.exit_code == 0 and b"hello.c" in judged.stdout
    assert b"agent-was-here" not in judged.stdout


# -- what each task records ------------------------------------------------------------------------


@needs("bubblewrap")
def test_each_row_records_the_agents_model_calls_tool_calls_and_seconds(
    scratch: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.accuracy import run as harness

    provider = scripted([step("bash", command="ls -a"), answer("ls")])
    agent = generator(provider, scratch)
    monkeypatch.setattr(harness, "WORK", tmp_path / "work")
    monkeypatch.setattr(harness, "make_tools", lambda names, url, model: [agent])
    args = harness.parse_args(["--tools", "conch-agent", "--tasks", "0", "--no-judge"])
    _, rows, names = harness.evaluate(args, "http://127.0.0.1:1/v1", "m", "m")

    assert names == ["conch-agent"]
    [row] = rows
    assert (row["tool"], row["command"], row["normalised"]) == ("conch-agent", "ls", True)
    counts = row["agent"]
    # do's pipeline once, then the loop twice (a bash call, the answer)
    assert (counts["model_calls"], counts["replies"], counts["tool_calls"]) == (3, 2, 2)
    assert counts["likelihoods"] == 0
    assert [c["tool"] for c in counts["calls"]] == ["do", "bash"]
    assert row["seconds"] > 0 and row["trials"] is None
    assert len(provider.sent) == counts["model_calls"]

    # The cache and a replay keep the counts (a resumed run, --replay).
    from benchmarks.accuracy.cache import CandidateCache, candidate_from

    kept = candidate_from(row)
    assert isinstance(kept, AgentCandidate) and kept.agent == counts
    cache = CandidateCache(tmp_path / "cache", enabled=True)
    cache.put("conch-agent", TASK, kept)
    again = cache.get("conch-agent", TASK)
    assert isinstance(again, AgentCandidate) and again.agent == counts


def test_conch_agent_is_a_tool_the_harness_accepts_but_not_a_default(tmp_path: Path) -> None:
    from benchmarks.accuracy import cache
    from benchmarks.accuracy.run import DEFAULT_TOOLS, make_tools

    assert "conch-agent" not in DEFAULT_TOOLS
    [tool] = make_tools(["conch-agent"], "http://127.0.0.1:1/v1", "m")
    assert isinstance(tool, AgentGenerator) and tool.name == "conch-agent"
    assert isinstance(tool.roots, dict)  # the harness fills in its trees
    # Its cached answers start afresh when the agent tool or conch changes.
    assert "benchmarks/accuracy/agent_tool.py" in cache._TOOL_SOURCES["conch-agent"]
    assert "src/conch" in cache._TOOL_SOURCES["conch-agent"]
    assert cache.code_fingerprint("conch-agent") != cache.code_fingerprint("conch-no-review")


def test_a_task_without_a_harness_tree_gets_one_built_from_its_fixture(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Path] = []

    def ask(self: AgentGenerator, task: Task, tree: Path) -> AgentCandidate:
        seen.append(tree)
        assert (tree / "testbed" / "hello.c").is_file()
        return AgentCandidate("ls", "ls", 0.1, agent={})

    monkeypatch.setattr(AgentGenerator, "ask", ask)
    candidate = generator(JsonSteps(), scratch).generate(TASK)
    assert candidate.command == "ls"
    assert seen and not seen[0].exists()


def test_the_report_shows_conch_agent_beside_conch_with_its_extraction_failures(
    tmp_path: Path,
) -> None:
    from benchmarks.accuracy.combine import write_report

    def row(task: int, tool: str, command: str | None, ok: bool) -> dict[str, Any]:
        agent = {"model_calls": 4, "replies": 2, "tool_calls": 2} if tool == "conch-agent" else None
        return {
            "task": task,
            "tool": tool,
            "fs": 1,
            "difficulty": 0,
            "clean": True,
            "nl": "x",
            "command": command,
            "error": None if command else "the agent stopped: iteration limit 6",
            "refused": False,
            "policy": "allow" if command else None,
            "seconds": 1.0,
            "trials": None,
            "agent": agent,
            "strict": ok,
            "normalised": ok,
            "judged": None,
        }

    rows = [
        row(0, "conch", "ls", True),
        row(0, "conch-agent", "ls", True),
        row(1, "conch", "ls -x", False),
        row(1, "conch-agent", None, False),
    ]
    meta = {
        "command": "c",
        "model": "m",
        "server": "s",
        "date": "d",
        "tasks": 2,
        "clean_tasks": 2,
        "judge": "none",
    }
    write_report(meta, rows, ["conch", "conch-agent"], tmp_path / "r")

    summary = meta["summary"]["conch-agent"]["clean"]  # type: ignore[index]
    assert (summary["extraction_failures"], summary["normalised"]["passed"]) == (1, 1)
    assert "conch-agent" in meta["paired_clean"]  # type: ignore[operator]
    assert "| conch-agent |" in (tmp_path / "r.md").read_text(encoding="utf-8")
