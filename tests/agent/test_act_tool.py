"""The ``do`` tool: a step in plain language goes through the one-shot pipeline (a scripted
model writes the command), then runs through the session's shell like a ``bash`` call; what
the policy refuses does not run, and the model is told which command it was.

Every test works in a temporary directory under a temporary HOME, with a canary file outside
the working directory that must be untouched."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from agentutil import EventLog, call, scripted_session, sent

from conch.agent import Limits
from conch.agent.act import (
    DO_DESCRIPTION,
    Actor,
    do_tool,
    edits_one_file,
    fails_for_real,
    one_shot_for,
    suits_a_command,
)
from conch.agent.bash import CommandRefused, Shell
from conch.agent.builtin import ToolOptions, default_tools
from conch.agent.conversation import alternation_problems
from conch.agent.steps import resolve_it
from conch.command.oneshot import OneShot
from conch.config.settings import Settings
from conch.execute.dryrun import DryRun
from conch.execute.run import Ran
from conch.messages import Message
from conch.policy import ExecutionMode
from conch.providers import ScriptedProvider
from conch.tools import Tool, make_tool
from requires import needs

# One answer, no dry runs, no validation: what the scripted model says is what runs.
_PLAIN = {"generation": {"dry_run": False, "review": 1}, "validation": {"enabled": False}}


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    home = Path.home()  # the suite's own temporary HOME (tests/conftest.py)
    assert home.is_relative_to(tmp_path)
    canary = tmp_path / "canary.txt"
    canary.write_text("keep me\n", encoding="utf-8")
    root = home / "project"
    root.mkdir()
    (root / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    yield root
    assert canary.read_text(encoding="utf-8") == "keep me\n"


# One answer, dry runs as conch makes them (a scratch copy for a write), no validation.
_TRIED = {"generation": {"review": 1}, "validation": {"enabled": False}}


def _actor(
    root: Path, *replies: str, mode: ExecutionMode = ExecutionMode.FULL, tried: bool = False
) -> Actor:
    settings = Settings.model_validate(_TRIED if tried else _PLAIN)
    return _actor_on(root, settings, ScriptedProvider.of(*replies), mode)


def _actor_on(
    root: Path,
    settings: Settings,
    provider: ScriptedProvider,
    mode: ExecutionMode = ExecutionMode.FULL,
) -> Actor:
    """An actor whose pipeline runs on ``settings`` and the scripted ``provider``, in ``root``."""
    service = OneShot(settings, lambda: provider, cache_dir=root.parent / ".cache")
    shell = Shell(cwd=root, mode=mode, root=root)
    return Actor(service, shell, environ={"HOME": str(root.parent), "PATH": "/usr/bin:/bin"})


def test_a_step_runs_the_command_the_pipeline_wrote(work: Path) -> None:
    out = _actor(work, "wc -l < notes.txt > count.txt")("count the lines of notes.txt")

    assert (work / "count.txt").read_text(encoding="utf-8").strip() == "3"
    assert out.text.startswith("command: wc -l < notes.txt > count.txt\n")
    assert "trial run on a copy: not tried: dry runs are turned off" in out.text
    assert isinstance(out.detail, Ran)
    assert out.detail.result.exit_code == 0


def test_the_output_of_the_command_comes_back(work: Path) -> None:
    out = _actor(work, "head -n 1 notes.txt")("show the first line of notes.txt")

    assert "one" in out.text.splitlines()[2:][0]


def test_a_refused_command_does_not_run_and_the_model_is_told_which(work: Path) -> None:
    actor = _actor(work, "rm notes.txt", mode=ExecutionMode.RESTRICTED)

    with pytest.raises(CommandRefused, match=r"conch wrote `rm notes.txt`, which did not run"):
        actor("delete notes.txt")
    assert (work / "notes.txt").exists()


def test_an_empty_step_is_an_error_before_the_model_is_asked(work: Path) -> None:
    actor = _actor(work)  # no reply queued: asking the model would fail differently

    with pytest.raises(ValueError, match="the step is empty"):
        actor("  \x1b[31m \n")


@needs("bubblewrap")
def test_an_in_place_edit_shows_what_the_file_holds_now(work: Path) -> None:
    actor = _actor(work, "sed -i 's/two/TWO/' notes.txt", tried=True)

    out = actor("write TWO for two in notes.txt")

    assert "trial run on a copy: worked in a throwaway copy" in out.text
    assert "changed notes.txt" in out.text
    assert out.text.endswith("notes.txt now holds (3 lines):\none\nTWO\nthree")


@needs("bubblewrap")
def test_a_command_that_failed_on_the_copy_does_not_run(work: Path) -> None:
    actor = _actor(work, "cat missing.txt > out.txt", "cat absent.txt > out.txt", tried=True)

    with pytest.raises(ValueError, match=r"failed on a copy of the files, so it did not run"):
        actor("copy missing.txt to out.txt")
    assert not (work / "out.txt").exists()


def test_only_a_trial_that_says_the_command_is_wrong_keeps_it_from_running() -> None:
    def run(code: int, err: str, timed_out: bool = False) -> DryRun:
        return DryRun("c", code, b"", err, timed_out=timed_out, scratch=True)

    assert fails_for_real(run(127, "sh: 1: rename: not found"))
    assert fails_for_real(run(1, "cat: missing.txt: No such file or directory"))
    assert fails_for_real(run(2, "sed: -e expression #1, char 9: unknown option to `s'"))
    # The sandbox's own limits: the command may work for real.
    assert not fails_for_real(run(137, "", timed_out=True))
    assert not fails_for_real(run(6, "curl: (6) Could not resolve host: example.org"))
    assert not fails_for_real(run(0, ""))


def test_the_policy_judges_in_the_shell_s_mode_and_root(work: Path) -> None:
    result = _actor(work, "cat /etc/hostname", mode=ExecutionMode.FULL).propose("show it")

    assert result.policy.mode is ExecutionMode.FULL
    assert result.policy.sandbox_root == work


def test_do_is_offered_first_with_bash_and_a_model(work: Path) -> None:
    options = ToolOptions(root=work, bash=True, act=True, audit=False)
    provider = ScriptedProvider.of("ls")

    names = [t.name for t in default_tools(options, None, lambda: provider)]

    assert names[0] == "do"
    assert "bash" in names
    assert "do" not in [t.name for t in default_tools(options)]  # no model: no do
    off = ToolOptions(root=work, bash=False, act=True, audit=False)
    assert "do" not in [t.name for t in default_tools(off, None, lambda: provider)]


def test_the_tool_makes_its_service_once_and_describes_itself(work: Path) -> None:
    made: list[OneShot] = []
    settings = Settings.model_validate(_PLAIN)
    provider = ScriptedProvider.of("ls", "ls")
    make = one_shot_for(settings, lambda: provider)

    def counted() -> OneShot:
        made.append(make())
        return made[-1]

    tool = do_tool(Shell(cwd=work, mode=ExecutionMode.FULL, root=work), counted)
    first = tool.function(step="list the files")
    tool.function(step="list the files again")

    assert len(made) == 1
    assert "notes.txt" in first.text
    assert tool.spec.description == DO_DESCRIPTION
    assert tool.spec.parameters["required"] == ["step"]


# -- act_first: the instruction goes to do before the model is asked ---------------------------


def _recording_write() -> Tool:
    def fs_write(path: str, content: str) -> str:
        return f"wrote {len(content)} characters to {path}"

    return make_tool(fs_write, name="fs_write", description="Write a file.")


def _recording_do(steps: list[str]) -> Tool:
    def do(step: str) -> str:
        steps.append(step)
        return f"command: echo done\ntrial run on a copy: worked\n{step} done\n[exit code 0]"

    return make_tool(do, name="do", description="Do one step.")


def test_with_act_first_the_instruction_is_the_first_do_step() -> None:
    steps: list[str] = []
    session = scripted_session("It is done.", tools=(_recording_do(steps),), act_first=True)
    log = EventLog()

    assert session.chat("Count the lines\nof notes.txt.", on_event=log) == "It is done."
    assert steps == ["Count the lines of notes.txt."]
    assert [f.call.name for f in log.finished] == ["do"]
    assert [m.role for m in session.history] == ["user", "assistant", "tool", "assistant"]
    asked = sent(session).sent[0].messages  # the model's first request holds the result
    assert asked[-1].role == "tool" and "Count the lines of notes.txt. done" in asked[-1].content
    assert not alternation_problems(session.history)


def test_code_to_write_goes_to_the_model_first_even_with_act_first() -> None:
    steps: list[str] = []
    session = scripted_session("Written.", tools=(_recording_do(steps),), act_first=True)
    instruction = "Write a Python script sum.py that prints the sum of numbers.txt. Run it."
    assert session.chat(instruction) == "Written."
    assert steps == []
    assert suits_a_command("Count the lines of notes.txt and save the number to n.txt.")
    assert not suits_a_command("Create a shell script list.sh that lists the .csv files.")


def test_a_value_changed_inside_one_file_goes_to_the_model_first() -> None:
    assert edits_one_file("In server.cfg, change the log level from info to debug.")
    assert edits_one_file("Set VERSION in .version.env to 2.")
    assert not edits_one_file("In every .cfg file under etc, change info to debug.")
    assert edits_one_file("Change the name in package.json to tinytool.")
    assert not edits_one_file("Change the file names in docs to lower case.")
    assert not edits_one_file("Rename notes.txt to notes.md.")
    assert not edits_one_file("Copy a.txt to b.txt.")  # no value changed inside
    assert not edits_one_file("Change a.txt so it holds the lines of b.txt.")  # two files
    assert not suits_a_command("In server.cfg, set the port to 81.")
    assert suits_a_command("Count the lines in server.cfg and write the number to n.txt.")


def test_an_edit_of_one_file_is_a_turn_without_do() -> None:
    steps: list[str] = []
    session = scripted_session("Edited.", "Counted.", tools=(_recording_do(steps),), act_first=True)
    assert session.chat("In app.ini, set the port to 81.") == "Edited."
    assert steps == []
    assert "do" not in (sent(session).sent[0].tools or ())  # not offered for this turn
    assert session.chat("Count the lines of app.ini.") == "Counted."
    assert steps == ["Count the lines of app.ini."]


@needs("bubblewrap")
def test_an_in_place_edit_that_changed_nothing_on_the_copy_does_not_run(work: Path) -> None:
    actor = _actor(work, "sed -i 's/zero/0/' notes.txt", "sed -i 's/none/0/' notes.txt", tried=True)

    with pytest.raises(ValueError, match=r"on a copy of the files \(left every file as it was\)"):
        actor("write 0 for zero in notes.txt")
    assert (work / "notes.txt").read_text(encoding="utf-8") == "one\ntwo\nthree\n"


def test_a_step_after_writing_code_names_the_file_it_means_by_it() -> None:
    steps: list[str] = []
    session = scripted_session(
        '{"tool": "fs_write", "args": {"path": "count.py", "content": "print(11)"}}',
        "Written.",
        "Saved.",
        tools=(_recording_do(steps), _recording_write()),
        act_first=True,
        stepwise=True,
    )
    instruction = (
        "Write a Python script count.py that prints the number of words in essay.txt. "
        "Run it and save its output to result.txt."
    )
    assert session.chat(instruction) == "Saved."
    assert steps == ["Run count.py and save count.py's output to result.txt."]


def test_it_is_resolved_only_from_a_file_named_before() -> None:
    assert resolve_it("Run it.", None) == "Run it."
    assert resolve_it("Run it.", "Say hello.") == "Run it."
    assert resolve_it("Save a list to out.txt.", "Write a.py.") == "Save a list to out.txt."
    assert resolve_it("Sort b.txt so it has no repeats.", "Write a.py.") == (
        "Sort b.txt so it has no repeats."
    )
    assert resolve_it('Replace "it" with "that" in a.txt.', "Write b.py.") == (
        'Replace "it" with "that" in a.txt.'
    )
    assert resolve_it("Run it.", "Say it, e.g. loudly.") == "Run it."
    assert resolve_it("Run it.", "Write main.c first.") == "Run main.c."
    assert resolve_it("Make it executable.", "Write docs/make.sh now.") == (
        "Make docs/make.sh executable."
    )


def test_without_act_first_or_without_do_the_model_goes_first() -> None:
    steps: list[str] = []
    session = scripted_session("Fine.", tools=(_recording_do(steps),))
    assert session.chat("Count the lines of notes.txt.") == "Fine."
    plain = scripted_session("Fine.", act_first=True)
    assert plain.chat("Count the lines of notes.txt.") == "Fine."
    assert steps == []


def test_a_model_repeating_the_first_step_exactly_is_stopped_like_any_repeat() -> None:
    steps: list[str] = []
    again = call("do", step="Count the lines of notes.txt.")
    session = scripted_session(
        again, "Done.", tools=(_recording_do(steps),), act_first=True, limits=Limits(max_repeats=1)
    )
    assert session.chat("Count the lines of notes.txt.") == "Done."
    assert len(steps) == 1


def _checked(root: Path, *replies: str, model_check: str) -> Actor:
    """An actor whose pipeline validates (no dry runs): static checks, and the model's review
    of the command when they find something (``on_issues``)."""
    settings = Settings.model_validate(
        {
            "generation": {"dry_run": False, "review": 1},
            "validation": {"model_check": model_check},
        }
    )
    return _actor_on(root, settings, ScriptedProvider.of(*replies))


@pytest.mark.parametrize(
    ("command", "found"),
    [
        ("conch-no-such-program notes.txt > out.txt", "is not installed"),
        ("""awk '{n++} END {print "%d\\n", n}' notes.txt > out.txt""", "use printf"),
    ],
)
def test_a_command_its_checks_say_cannot_work_does_not_run(
    work: Path, command: str, found: str
) -> None:
    actor = _checked(work, command, model_check="never")

    with pytest.raises(ValueError, match=rf"cannot work here \(.*{found}.*\), so it did not run"):
        actor("count the lines of notes.txt into out.txt")
    assert not (work / "out.txt").exists()


def test_validation_s_correction_runs_in_place_of_a_command_that_cannot_work(work: Path) -> None:
    review = (
        '{"valid": false, "issues": ["print does not format"], '
        '"corrected_command": "awk \'{n++} END {printf \\"%d\\\\n\\", n}\' notes.txt > out.txt", '
        '"confidence": 0.9, "explanation": "printf formats"}'
    )
    wrong = """awk '{n++} END {print "%d\\n", n}' notes.txt > out.txt"""
    actor = _checked(work, wrong, review, model_check="on_issues")

    out = actor("count the lines of notes.txt into out.txt")

    assert out.text.startswith("command: awk '{n++} END {printf \"%d\\n\", n}' notes.txt")
    assert (work / "out.txt").read_text(encoding="utf-8") == "3\n"


@needs("bubblewrap")
def test_a_step_asked_again_after_its_command_failed_carries_the_failure(work: Path) -> None:
    def reply(messages: Sequence[Message], options: object) -> str:
        told = "(Not `cat missing.txt > out.txt`, which failed:" in messages[-1].content
        return "cp notes.txt out.txt" if told else "cat missing.txt > out.txt"

    provider = ScriptedProvider.from_function(reply)
    actor = _actor_on(work, Settings.model_validate(_TRIED), provider)
    step = "copy the notes to out.txt"

    with pytest.raises(ValueError, match="failed on a copy of the files"):
        actor(step)
    out = actor(step)

    asked = provider.sent[-1].messages[-1].content
    assert "missing.txt: No such file or directory" in asked
    assert out.text.startswith("command: cp notes.txt out.txt")
    assert (work / "out.txt").read_text(encoding="utf-8") == "one\ntwo\nthree\n"


def test_validation_s_own_fix_is_not_refused_for_what_it_fixed(work: Path) -> None:
    review = (
        '{"valid": false, "issues": ["print does not format"], '
        '"corrected_command": "awk \'{n++} END {printf \\"%d\\\\n\\", n}\' notes.txt > out.txt", '
        '"confidence": 0.9, "explanation": "printf formats"}'
    )
    wrong = """awk '{n++} END {print "%d\\n", n}' notes.txt > out.txt"""
    settings = Settings.model_validate(
        {
            "generation": {"dry_run": False, "review": 1},
            "validation": {"model_check": "on_issues", "auto_fix": True},
        }
    )
    provider = ScriptedProvider.of(wrong, review)
    actor = _actor_on(work, settings, provider)

    out = actor("count the lines of notes.txt into out.txt")

    assert out.text.startswith("command: awk '{n++} END {printf")
    assert (work / "out.txt").read_text(encoding="utf-8") == "3\n"


def test_a_program_the_command_makes_itself_is_not_a_finding_that_stops_it(work: Path) -> None:
    (work / "build.sh").write_text("#!/bin/sh\necho built > built.txt\n", encoding="utf-8")
    actor = _checked(work, "chmod +x build.sh && ./build.sh", model_check="never")

    out = actor("make build.sh executable and run it")

    assert "[exit code 0]" in out.text, out.text
    assert out.text.startswith("command: chmod +x build.sh && ./build.sh")
    assert (work / "built.txt").read_text(encoding="utf-8") == "built\n"


@needs("bubblewrap")
def test_only_the_latest_failure_of_a_step_is_carried_and_a_success_clears_it(
    work: Path,
) -> None:
    def reply(messages: Sequence[Message], options: object) -> str:
        asked = messages[-1].content
        if "(Not `cat second.txt > out.txt`" in asked:
            return "cp notes.txt out.txt"
        if "(Not `cat first.txt > out.txt`" in asked:
            return "cat second.txt > out.txt"
        return "cat first.txt > out.txt"

    provider = ScriptedProvider.from_function(reply)
    actor = _actor_on(work, Settings.model_validate(_TRIED), provider)
    step = "copy the notes to out.txt"

    for _ in range(2):
        with pytest.raises(ValueError, match="failed on a copy of the files"):
            actor(step)
    assert actor(step).text.startswith("command: cp notes.txt out.txt")
    assert actor.failed == {}


@needs("bubblewrap")
def test_a_write_that_does_not_fit_the_step_on_the_copy_does_not_run(work: Path) -> None:
    (work / "Data.CSV").write_text("x\n", encoding="utf-8")
    wrong = 'for f in Data.CSV; do mv -- "$f" "$f.txt"; done'
    actor = _actor(work, wrong, wrong, tried=True)

    with pytest.raises(ValueError, match="whose name is not in lower case"):
        actor("rename Data.CSV so that its name is lower case")
    assert (work / "Data.CSV").exists() and not (work / "Data.CSV.txt").exists()


@needs("bubblewrap")
def test_a_command_that_prints_what_the_step_asks_to_write_does_not_run(work: Path) -> None:
    actor = _actor(work, "grep o notes.txt", "grep o notes.txt", tried=True)

    with pytest.raises(ValueError, match=r"only prints its result and does not write out\.txt"):
        actor("write the lines of notes.txt that contain an o to out.txt")
    assert actor.failed["write the lines of notes.txt that contain an o to out.txt"][1] == (
        "it prints its result and does not write out.txt"
    )


@needs("bubblewrap")
def test_a_command_that_writes_the_file_the_step_names_runs(work: Path) -> None:
    actor = _actor(work, "grep o notes.txt > out.txt", tried=True)

    out = actor("write the lines of notes.txt that contain an o to out.txt")

    assert out.text.startswith("command: grep o notes.txt > out.txt")
    assert (work / "out.txt").read_text(encoding="utf-8") == "one\ntwo\n"


@needs("bubblewrap")
def test_a_command_that_made_no_file_of_the_name_the_step_asks_for_does_not_run(
    work: Path,
) -> None:
    (work / "photos").mkdir()
    (work / "photos" / "IMG_1.jpg").write_text("one\n", encoding="utf-8")
    step = "In photos, rename IMG_1.jpg so that it starts with holiday_ (holiday_1.jpg)"
    wrong = "mkdir holiday && mv photos/IMG_1.jpg holiday/"
    actor = _actor(work, wrong, wrong, tried=True)

    with pytest.raises(ValueError, match=r"made no holiday_1\.jpg as the step asks"):
        actor(step)
    assert (work / "photos" / "IMG_1.jpg").exists() and not (work / "holiday").exists()

    right = "mv photos/IMG_1.jpg photos/holiday_1.jpg"
    done = _actor(work, right, tried=True)(step)
    assert done.text.startswith(f"command: {right}")
    assert (work / "photos" / "holiday_1.jpg").exists()


@needs("bubblewrap")
def test_a_file_asked_for_inside_a_new_directory_counts_as_made(work: Path) -> None:
    step = "copy notes.txt to out/notes-copy.txt"
    command = "mkdir out && cp notes.txt out/notes-copy.txt"
    done = _actor(work, command, tried=True)(step)
    assert done.text.startswith(f"command: {command}")
    assert (work / "out" / "notes-copy.txt").exists()
