"""``ShellSession`` as a library object, continued: the meta commands (one table, read by
``:help`` and run by the session), autonomous mode and its halting rule, the cost warning,
and taking a saved session up again. No terminal; a scripted model; the front end answers
from a list.

Commands that run do so in the test's work directory under a temporary HOME; a canary file
outside it must come through untouched.
"""

from __future__ import annotations

from pathlib import Path

from sessionutil import (
    Front,
    canary,  # noqa: F401 (autouse: checked after every test)
    open_shell,
    said,
)

from cliutil import step
from conch.agent.events import ToolFinished
from conch.config.settings import AISettings, LoadedSettings, Settings
from conch.errors import ProviderError
from conch.execute.checked import Answer, Choice
from conch.messages import TextDelta
from conch.policy import assess
from conch.policy.confirm import Confirmation
from conch.providers import ScriptedProvider
from conch.shell.auto import halting
from conch.shell.events import (
    Help,
    Left,
    Listed,
    McpShown,
    Question,
    Said,
    ScreenCleared,
    TurnEnded,
    TurnStarted,
)
from conch.shell.meta import META_COMMANDS, help_lines
from conch.shell.models import ModelChoice
from conch.shell.session import ShellSession
from conch.shell.state import ShellState

# -- meta commands -------------------------------------------------------------------------------


def test_help_lists_the_table_and_quit_leaves(tmp_path: Path) -> None:
    with open_shell(tmp_path) as shell:
        [shown] = shell.line(":help")
        assert isinstance(shown, Help) and list(shown.lines) == help_lines()
        assert len(shown.lines) == len(META_COMMANDS)
        assert shell.line(":q") == [Left()]
        assert shell.session.leaving


def test_an_unknown_meta_command_is_one_warning(tmp_path: Path) -> None:
    with open_shell(tmp_path) as shell:
        [warning] = shell.line(":frob")
        assert warning.text == "unknown meta command :frob; :help lists them"  # type: ignore[union-attr]
        assert warning.warning  # type: ignore[union-attr]


def test_clear_reset_cost_and_mcp_are_events(tmp_path: Path) -> None:
    with open_shell(tmp_path, "Hello.") as shell:
        assert shell.line(":clear") == [ScreenCleared()]
        shell.line("why hello?")
        assert isinstance(shell.line(":cost")[0], Listed)
        assert said(shell.line(":reset")) == ["the conversation starts over"]
        assert shell.session.context.turns == ()
        assert shell.line(":mcp") == [McpShown(None)]


def test_model_switches_by_name_and_the_conversation_stays(tmp_path: Path) -> None:
    opened: list[str] = []

    def open_model(choice: ModelChoice) -> ScriptedProvider:
        opened.append(choice.name)
        return ScriptedProvider.of(f"from {choice.name}")

    settings = Settings(models={"fast": AISettings(provider="scripted")})
    work = tmp_path / "work"
    work.mkdir()
    session = ShellSession(
        LoadedSettings(settings, tmp_path / "config.yaml", False),
        ModelChoice("default", settings.ai),
        state=ShellState.from_environment({"PATH": "/usr/bin:/bin"}, cwd=str(work)),
        state_dir=tmp_path / "state",
        approve=Front().approve,
        edit=Front().edit,
        open_model=open_model,
    )
    try:
        assert said(list(session.handle(":model nope"))) == [
            ":model nope: no such model; known models: fast"
        ]
        assert said(list(session.handle(":model fast"))) == [
            "fast answers from now on (the conversation stays)"
        ]
        assert opened == ["default", "fast"]
        assert session.prompt().endswith("[conch:fast]$ ")
        reply = "".join(e.text for e in session.handle("why?") if isinstance(e, TextDelta))
        assert reply == "from fast"
        [models] = list(session.handle(":models"))
        assert isinstance(models, Listed) and models.lines[-1].startswith("* fast")
    finally:
        session.close()


def test_a_model_that_cannot_be_opened_is_a_warning_and_the_shell_goes_on(
    tmp_path: Path,
) -> None:
    sections = {"models": {"cloud": {"provider": "scripted"}}}
    down = ProviderError("cannot reach http://127.0.0.1:8080")
    with open_shell(tmp_path, "Still here.", sections=sections, others={"cloud": down}) as shell:
        events = shell.line(":model cloud")
        assert events == [
            Said(
                "cannot open cloud: cannot reach http://127.0.0.1:8080; scripted answers still",
                True,
            )
        ]
        assert shell.session.choice.name == "scripted" and not shell.session.pinned
        assert "Still here." in "".join(
            e.text for e in shell.line("> are you there?") if isinstance(e, TextDelta)
        )


def test_history_shows_the_saved_records(tmp_path: Path) -> None:
    with open_shell(tmp_path, "Hello Ada.") as shell:
        shell.line("echo typed")
        shell.line("my name is Ada")
        [listed] = shell.line(":history")
        assert isinstance(listed, Listed)
        assert listed.lines == (
            "  $ echo typed  [exit 0]",
            "you: my name is Ada",
            "model: Hello Ada.",
        )


def test_save_writes_a_transcript_where_the_shell_is(tmp_path: Path) -> None:
    with open_shell(tmp_path, "An answer.") as shell:
        shell.line("why do tests fail?")
        events = shell.line(":save notes.md")
        text = (shell.work / "notes.md").read_text(encoding="utf-8")
        assert "## You\n\nwhy do tests fail?\n" in text and "## Model\n\nAn answer.\n" in text
        assert said(events)[0] == f"wrote the conversation to {shell.work / 'notes.md'}"


# -- autonomous mode -----------------------------------------------------------------------------

# Goals as the agent works on them, without a plan first (tests/shell/test_shell_wiring.py
# plans them).
NO_PLAN = {"shell": {"preplan": False}}


def test_auto_on_turns_plain_language_into_goals_with_a_badge(tmp_path: Path) -> None:
    with open_shell(tmp_path, "Nothing to do.", sections=NO_PLAN) as shell:
        shell.line(":auto")
        assert "⚡" in shell.session.prompt()
        events = shell.line("tidy up please")
        assert events[0] == TurnStarted("goal", "tidy up please")
        ended = next(e for e in events if isinstance(e, TurnEnded))
        assert ended.ok and ended.reply == "Nothing to do."
        shell.line(":auto off")
        assert "⚡" not in shell.session.prompt()
        turns = [t.content for t in shell.session.context.turns]
        assert turns == ["[auto] tidy up please", "Nothing to do."]


def test_a_destructive_step_halts_and_no_leaves_the_files(tmp_path: Path) -> None:
    replies = (step("bash", command="ls"), step("bash", command="rm -r victim"), "Left it.")
    with open_shell(tmp_path, *replies, sections=NO_PLAN) as shell:
        (shell.work / "victim").mkdir()
        events = shell.line(":auto remove the victim directory")
        assert [(q.kind, q.command) for q in shell.front.asked] == [("halt", "rm -r victim")]
        assert (shell.work / "victim").is_dir()
        ran = [e.ran.command for e in events if isinstance(e, ToolFinished) and e.ran]
        assert ran == ["ls"]  # read-only: no question
        assert "$ ls\nexit code: 0" in shell.session.context.turns[-2].content
        assert "1 command of the agent's did not run" in said(events)


def test_a_typed_yes_lets_a_halted_step_run(tmp_path: Path) -> None:
    front = Front([Answer.run()])
    replies = (step("bash", command="rm -r victim"), "Removed it.")
    with open_shell(tmp_path, *replies, front=front, sections=NO_PLAN) as shell:
        (shell.work / "victim").mkdir()
        shell.line(":auto remove the victim directory")
        assert not (shell.work / "victim").exists()
        assert shell.session.book.turns[-1].kind == "auto"


def test_a_halted_step_is_never_allowed_for_the_rest_of_the_session(tmp_path: Path) -> None:
    asked: list[Question] = []

    def approve(question: Question) -> Answer:
        asked.append(question)
        return Answer.run_always("rm *")

    ask = halting(approve)
    verdict = assess("rm -r victim")
    severe = ask("rm -r victim", verdict, Confirmation(ask=True, severe=True, always="rm *"))
    mild = ask("touch x", verdict, Confirmation(ask=True, always="touch *"))
    assert [q.kind for q in asked] == ["halt", "agent"]
    assert (severe.choice, severe.always) == (Choice.RUN, "")
    assert mild.always == "rm *"


# -- cost, and the saved session -----------------------------------------------------------------


def test_the_cost_warning_is_said_once(tmp_path: Path) -> None:
    sections = {
        "shell": {
            "cost_warning": 0.0001,
            "prices": {"scripted": {"input_per_million": 10, "output_per_million": 30}},
        }
    }
    with open_shell(tmp_path, "one two three", "four", sections=sections) as shell:
        first = said(shell.line("why is the sky blue?"))
        second = said(shell.line("why not?"))
        warnings = [s for s in first + second if "shell.cost_warning" in s]
        assert len(warnings) == 1


def test_a_saved_session_is_taken_up_again(tmp_path: Path) -> None:
    with open_shell(tmp_path, "Hello Ada.") as shell:
        shell.line("my name is Ada")
        state_dir = shell.state_dir
    provider = ScriptedProvider.of("Your name is Ada.")
    settings = Settings()
    work = tmp_path / "work"
    session = ShellSession(
        LoadedSettings(settings, tmp_path / "config.yaml", False),
        ModelChoice("scripted", settings.ai),
        state=ShellState.from_environment({"PATH": "/usr/bin:/bin"}, cwd=str(work)),
        state_dir=state_dir,
        approve=Front().approve,
        edit=Front().edit,
        open_model=lambda choice: provider,
    )
    try:
        opened = said(list(session.open(resume=True)))
        assert opened[0].startswith("resumed the shell session") and "(1 questions)" in opened[0]
        list(session.handle("> what is my name"))
        contents = [m.content for m in provider.sent[0].messages[1:]]
        assert contents == ["my name is Ada", "Hello Ada.", "what is my name"]
    finally:
        session.close()
