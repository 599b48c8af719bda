"""Task files for the agent: YAML, JSON and Markdown, turned into the starting instruction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conch.agent.task import Task, load_task, task_prompt
from conch.errors import InputError

API_DOCS = Task(
    "Generate API documentation",
    {"directory": "src/api/"},
    ("List all API endpoint files", "Extract function signatures", "Create OpenAPI spec"),
)


def test_a_yaml_task_file(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(
        "goal: Generate API documentation\ncontext:\n  directory: src/api/\ninstructions:\n"
        "  - List all API endpoint files\n  - Extract function signatures\n"
        "  - Create OpenAPI spec\n",
        encoding="utf-8",
    )
    assert load_task(path) == API_DOCS


def test_a_json_task_file(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    data = {
        "goal": API_DOCS.goal,
        "context": API_DOCS.context,
        "instructions": list(API_DOCS.instructions),
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    assert load_task(path) == API_DOCS


def test_a_markdown_task_file(tmp_path: Path) -> None:
    path = tmp_path / "plan.md"
    path.write_text(
        "# Generate API documentation\n\n## Context\n- directory: src/api/\n\n"
        "## Instructions\n1. List all API endpoint files\n2. Extract function signatures\n"
        "3. Create OpenAPI spec\n",
        encoding="utf-8",
    )
    assert load_task(path) == API_DOCS


def test_the_task_becomes_the_agents_starting_instruction() -> None:
    assert task_prompt(API_DOCS) == (
        "You are assisting with the following task:\n\nGOAL: Generate API documentation\n\n"
        "CONTEXT:\n- Directory: src/api/\n\nINSTRUCTIONS (follow as guidance):\n"
        "1. List all API endpoint files\n2. Extract function signatures\n3. Create OpenAPI spec\n\n"
        "Use the available tools to accomplish this goal. You may adapt your approach as needed, "
        "but try to follow the instructions provided."
    )


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("plan.yaml", "context: {}\n", "needs a `goal`"),
        ("plan.json", "{not json", "plan.json"),
        ("missing.yaml", None, "cannot read task file"),
    ],
)
def test_a_bad_task_file_is_an_input_error(
    tmp_path: Path, name: str, text: str | None, message: str
) -> None:
    path = tmp_path / name
    if text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_task(path)
