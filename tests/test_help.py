"""The built-in help pages and the built-in prompt configs."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from conch.cli.help import TOPICS, render_help
from conch.config.prompts import builtin_prompt, builtin_prompt_names
from conch.config.settings import PromptConfig
from conch.errors import UsageError

REQUIRED_TOPICS = (
    "overview",
    "quickstart",
    "config",
    "tools",
    "scope",
    "peek",
    "safety",
    "unsafe",
    "explain",
    "analyze",
    "history",
    "packages",
    "ops",
    "advanced",
    "topics",
)


def test_the_required_topics_are_present_in_their_order() -> None:
    positions = [TOPICS.index(name) for name in REQUIRED_TOPICS]
    assert positions == sorted(positions)
    assert {"providers", "check", "exit-codes"} <= set(TOPICS)


def test_the_topics_page_lists_every_topic_once_with_a_summary() -> None:
    lines = [line.split() for line in render_help("topics").splitlines() if line.startswith("  ")]
    listed = [words[0] for words in lines if words and words[0] in TOPICS]
    assert sorted(listed) == sorted(TOPICS) and len(set(listed)) == len(listed)
    assert all(len(words) > 1 for words in lines if words and words[0] in TOPICS)


@pytest.mark.parametrize("topic", TOPICS)
def test_every_topic_renders_non_empty_plain_text(topic: str) -> None:
    text = render_help(topic)
    assert text.strip()
    assert text.endswith("\n")
    assert "\x1b" not in text


@pytest.mark.parametrize("topic", TOPICS)
def test_every_topic_fits_in_78_columns(topic: str) -> None:
    too_long = [line for line in render_help(topic).splitlines() if len(line) > 78]
    assert too_long == []


def test_no_topic_gives_the_overview_page() -> None:
    text = render_help(None)
    assert text == render_help("overview")
    assert "conch help topics" in text
    assert "conch " in text


def test_topic_names_are_matched_case_insensitively() -> None:
    assert render_help("  Safety ") == render_help("safety")


def test_an_unknown_topic_raises_a_usage_error_naming_it() -> None:
    with pytest.raises(UsageError, match="unknown help topic 'nope'; run `conch help topics`"):
        render_help("nope")


def test_importing_help_does_not_import_yaml_or_pydantic() -> None:
    code = (
        "import sys, conch.cli.help, conch.config.prompts; conch.cli.help.render_help('config'); "
        "conch.config.prompts.builtin_prompt('jq'); "
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in {'yaml', 'pydantic'}); "
        "print(','.join(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ""


def test_the_built_in_prompts_include_the_documented_packages() -> None:
    names = builtin_prompt_names()
    assert {"jq", "git", "find", "files", "text", "archive", "docker"} <= set(names)
    packages = render_help("packages")
    for name in names:
        assert f"{name}.yaml" in packages


@pytest.mark.parametrize("name", builtin_prompt_names())
def test_every_built_in_prompt_is_a_valid_prompt_config_with_tools(name: str) -> None:
    text = builtin_prompt(name)
    assert text is not None
    config = PromptConfig.model_validate(yaml.safe_load(text))
    assert config.tools
    assert config.meta_prompt.strip()
    assert all(tool.config.strip() for tool in config.tools)


def test_a_built_in_prompt_is_found_with_or_without_its_suffix() -> None:
    assert builtin_prompt("jq") == builtin_prompt("jq.yaml") == builtin_prompt("jq.yml")
    assert builtin_prompt("no-such-prompt.yaml") is None
    assert builtin_prompt("../settings") is None


def test_force_explain_is_set_where_the_packages_say() -> None:
    def tools(name: str) -> dict[str, bool | None]:
        config = PromptConfig.model_validate(yaml.safe_load(builtin_prompt(name) or ""))
        return {tool.name: tool.force_explain for tool in config.tools}

    assert tools("text")["sed"] is True
    assert tools("docker")["docker"] is True
    assert tools("git")["git"] is None
