"""A ``ShellSession`` with its models routed by task type and a fallback chain, the project's
tree in the model's context, ``:cost detail``, and the agent's context window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sessionutil import open_shell, said

from conch.config.settings import AISettings
from conch.errors import ProviderError
from conch.messages import Note
from conch.providers import ScriptedProvider, window
from conch.providers.window import DEFAULT_WINDOW, ContextWindow
from conch.shell.auto import AutoAgent
from conch.shell.events import Listed, ShellEvent, TurnStarted
from conch.shell.fallback import FallbackProvider
from conch.shell.request import LineKind, kind_of

MODELS: dict[str, Any] = {
    "deep": {"provider": "scripted"},
    "cloud": {"provider": "scripted", "model": "cloud-model"},
}


def listed(events: list[ShellEvent]) -> list[str]:
    return [line for e in events if isinstance(e, Listed) for line in e.lines]


# -- one classification of a line --------------------------------------------------------------


def test_a_line_is_classified_once_into_its_task_and_its_path() -> None:
    assert kind_of("show the 3 most recent lines of app.log") == LineKind("command", True)
    assert kind_of("run it again") == LineKind("command", False)  # points back
    assert kind_of("why did that fail?") == LineKind("question", False)
    # Code is a conversation: written and explained in words and files, not one command.
    assert kind_of("write a python script that renames photos by date") == LineKind("code", False)


# -- routing and fallback ----------------------------------------------------------------------


def test_without_routing_or_fallback_the_active_model_answers(tmp_path: Path) -> None:
    with open_shell(tmp_path, "Fine.") as shell:
        assert shell.session.provider_for("code") is shell.session.provider
        shell.line("> hello?")
        assert shell.session.book.turns[0].model == "scripted"


def test_a_code_line_goes_to_the_model_routing_names_and_is_booked_under_it(
    tmp_path: Path,
) -> None:
    deep = ScriptedProvider.of("Use a dict.")
    sections = {"models": MODELS, "shell": {"routing": {"code": ["deep"]}}}
    with open_shell(tmp_path, sections=sections, others={"deep": deep}) as shell:
        assert isinstance(shell.session.provider_for("code"), FallbackProvider)
        assert shell.session.provider_for("question") is shell.session.provider
        events = shell.line("> how do I refactor this function?")
        assert events[0] == TurnStarted("ask", "how do I refactor this function?")
        assert "answered by deep" in said(events)
        assert len(deep.sent) == 1 and shell.provider.sent == []
        assert [(t.model, t.kind) for t in shell.session.book.turns] == [("deep", "ask")]


def test_a_failing_model_falls_back_and_the_turn_is_booked_under_the_one_that_answered(
    tmp_path: Path,
) -> None:
    cloud = ScriptedProvider.of("It is the port.")
    sections = {"models": MODELS, "shell": {"fallback": ["cloud"]}}
    with open_shell(
        tmp_path, ProviderError("out of memory"), sections=sections, others={"cloud": cloud}
    ) as shell:
        events = shell.line("why did the server fail?")
        (note,) = [e for e in events if isinstance(e, Note)]
        assert note.text == "scripted: out of memory; asking cloud"
        assert "answered by cloud" in said(events)
        assert shell.session.book.turns[-1].model == "cloud"
        assert shell.session.context.turns[-1].content == "It is the port."
    assert cloud.sent  # opened once asked, closed with the shell


def test_a_model_chosen_with_model_stays_first_in_its_chain(tmp_path: Path) -> None:
    deep = ScriptedProvider.of("From deep.")
    shell_section = {"routing": {"question": ["cloud"]}, "fallback": ["cloud"]}
    sections = {"models": MODELS, "shell": shell_section}
    with open_shell(tmp_path, sections=sections, others={"deep": deep}) as shell:
        before = shell.session.provider_for("question")
        assert isinstance(before, FallbackProvider)
        assert [link.name for link in before.links] == ["cloud"]
        shell.line(":model deep")
        provider = shell.session.provider_for("question")
        assert isinstance(provider, FallbackProvider)
        assert [link.name for link in provider.links] == ["deep", "cloud"]  # pinned first


def test_an_unknown_model_in_routing_is_said_at_the_start(tmp_path: Path) -> None:
    sections = {"models": MODELS, "shell": {"routing": {"code": ["nope"]}}}
    with open_shell(tmp_path, "Fine.", sections=sections) as shell:
        (warning,) = [w for w in said(shell.opened) if "nope" in w]
        assert warning.startswith("shell.routing.code nope: no such model")
        assert warning.endswith("; the active model answers instead")
        assert shell.session.provider_for("code") is shell.session.provider


def test_every_request_for_a_command_is_booked_under_the_model_that_answered(
    tmp_path: Path,
) -> None:
    deep = ScriptedProvider.of("ls -t | head -n 3", "du -sh .")
    sections = {"models": MODELS, "shell": {"routing": {"command": ["deep"]}}}
    with open_shell(tmp_path, sections=sections, others={"deep": deep}) as shell:
        first = shell.line("show the 3 newest files")
        second = shell.line("show how much space this directory takes")
        assert first[0] == TurnStarted("command", "show the 3 newest files")
        assert second[0].kind == "command"  # type: ignore[attr-defined]
        assert len(deep.sent) == 2 and shell.provider.sent == []
        assert "answered by deep" in said(first) and "answered by deep" in said(second)
        turns = [(t.model, t.kind) for t in shell.session.book.turns]
        assert turns == [("deep", "command"), ("deep", "command")]
        # One chain, one provider: the one the pipeline asks is the one a turn reads.
        assert shell.session.provider_for("command") is shell.session.provider_for("command")


def test_a_request_for_a_command_goes_through_the_chain_too(tmp_path: Path) -> None:
    cloud = ScriptedProvider.of("ls -t | head -n 3")
    sections = {"models": MODELS, "shell": {"fallback": ["cloud"]}}
    with open_shell(
        tmp_path, ProviderError("down"), sections=sections, others={"cloud": cloud}
    ) as shell:
        events = shell.line("show the 3 newest files")
        assert events[0] == TurnStarted("command", "show the 3 newest files")
        assert cloud.sent and shell.session.book.turns[-1].model == "cloud"


# -- the project's tree ------------------------------------------------------------------------


def test_the_model_sees_the_project_and_a_new_one_after_cd(tmp_path: Path) -> None:
    with open_shell(tmp_path, "A python project.", "A sub directory.") as shell:
        (shell.work / "pyproject.toml").write_text("[project]\n", encoding="utf-8")
        (shell.work / "src").mkdir()
        (shell.work / "src" / "app.py").write_text("", encoding="utf-8")
        (shell.work / "sub").mkdir()
        (shell.work / "sub" / "notes.md").write_text("", encoding="utf-8")
        shell.line("> what is this project?")
        system = shell.provider.sent[0].messages[0].content
        assert f"[project] {shell.work} (python)" in system
        assert "\nsrc/\n  app.py\n" in system and "pyproject.toml" in system
        shell.line("cd sub")
        shell.line("> and this one?")
        system = shell.provider.sent[1].messages[0].content
        assert f"[project] {shell.work / 'sub'}\nnotes.md" in system
        assert "pyproject.toml" not in system


def test_project_context_off_leaves_the_tree_out(tmp_path: Path) -> None:
    sections = {"shell": {"project_context": False}}
    with open_shell(tmp_path, "Fine.", sections=sections) as shell:
        shell.line("> what is here?")
        assert "[project]" not in shell.provider.sent[0].messages[0].content


# -- :cost detail --------------------------------------------------------------------------------


def test_cost_detail_sets_the_estimate_against_the_count(tmp_path: Path) -> None:
    with open_shell(tmp_path, "Because the port is taken.") as shell:
        shell.line("why did the server fail?")
        (turn,) = shell.session.book.turns
        assert turn.estimate is not None and turn.estimate.prompt_tokens > 0
        lines = listed(shell.line(":cost detail"))
        assert "prompt est/counted" in lines[0]
        assert " ask " in lines[1] and "%" in lines[1]
        assert lines[-2].startswith("session: prompt ")
        assert listed(shell.line(":cost"))[0].endswith("price")
        assert said(shell.line(":cost nope")) == ["write :cost, or :cost detail"]


# -- the agent's context window ------------------------------------------------------------------


def test_the_agent_takes_the_model_s_context_window(tmp_path: Path) -> None:
    sections = {"ai": {"provider": "scripted", "context_window": 12345}}
    with open_shell(tmp_path, sections=sections) as shell:
        assert AutoAgent(shell.session).session.context_tokens == 12345


def test_the_context_window_is_asked_once_per_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server that is down gives the default without it being remembered: the shell
    # asks once per model all the same, not at every goal.
    asked: list[str] = []

    def down(ai: AISettings, **kwargs: Any) -> ContextWindow:
        asked.append(ai.provider)
        return ContextWindow(DEFAULT_WINDOW, "default", "the server could not be reached")

    monkeypatch.setattr(window, "context_window", down)
    with open_shell(tmp_path) as shell:
        (shell.work / "sub").mkdir()
        first = AutoAgent(shell.session)
        shell.line("cd sub")
        again = AutoAgent(shell.session)
        assert first.session.context_tokens == again.session.context_tokens == DEFAULT_WINDOW
        assert len(asked) == 1
