"""--init, --create-prompt, --add-prompt and --list-tools."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml

from cliutil import CliResult, write_config
from conch.config.edits import Resolution, merge_tools
from conch.config.settings import AllowedProgram

Conch = Callable[..., CliResult]


def test_init_writes_starter_config_and_never_overwrites(conch: Conch, isolated_dirs: Path) -> None:
    first = conch("--init")
    path = isolated_dirs / ".config" / "conch" / "config.yaml"
    assert first.code == 0 and path.exists()
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data["ai"]["provider"] == "local"
    assert data["default_prompt"]["tools"] == []
    before = path.read_text(encoding="utf-8")
    second = conch("--init")
    assert second.code == 1
    assert str(path) in second.err and "already exists" in second.err
    assert path.read_text(encoding="utf-8") == before


def test_create_prompt_writes_a_template_for_one_tool(conch: Conch, tmp_path: Path) -> None:
    result = conch("--create-prompt", "jq")
    written = tmp_path / "work" / "jq.yaml"
    assert result.code == 0 and written.exists()
    data = yaml.safe_load(written.read_text(encoding="utf-8"))
    assert data["tools"][0]["name"] == "jq"
    custom = conch("--create-prompt", "git", "prompts-git.yaml")
    assert custom.code == 0 and (tmp_path / "work" / "prompts-git.yaml").exists()


def test_add_prompt_merges_new_tools_and_keeps_comments(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    config = write_config(
        isolated_dirs, "# my settings\nai:\n  provider: local\ndefault_prompt:\n  tools: []\n"
    )
    prompt = tmp_path / "work" / "p.yaml"
    prompt.parent.mkdir(exist_ok=True)
    prompt.write_text("tools:\n  - name: jq\n    config: use jq\n", encoding="utf-8")
    result = conch("--add-prompt", "p.yaml")
    assert result.code == 0
    text = config.read_text(encoding="utf-8")
    assert "# my settings" in text
    assert yaml.safe_load(text)["default_prompt"]["tools"] == [{"name": "jq", "config": "use jq"}]


def _setup_duplicate(isolated_dirs: Path, tmp_path: Path, incoming: str) -> Path:
    config = write_config(
        isolated_dirs,
        "default_prompt:\n  tools:\n    - name: jq\n      config: old\n      force_explain: true\n",
    )
    prompt = tmp_path / "work" / "p.yaml"
    prompt.parent.mkdir(exist_ok=True)
    prompt.write_text(incoming, encoding="utf-8")
    return config


def test_duplicate_without_a_terminal_is_an_error_and_writes_nothing(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    config = _setup_duplicate(isolated_dirs, tmp_path, "tools:\n  - name: jq\n    config: new\n")
    before = config.read_text(encoding="utf-8")
    result = conch("--add-prompt", "p.yaml")
    assert result.code == 2
    assert "no terminal" in result.err
    assert config.read_text(encoding="utf-8") == before


def test_overwrite_keeps_force_explain_when_incoming_leaves_it_unset(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    config = _setup_duplicate(isolated_dirs, tmp_path, "tools:\n  - name: jq\n    config: new\n")
    result = conch("--add-prompt", "p.yaml", tty=True, answers="o\n")
    assert result.code == 0
    assert "(preserving force_explain from global config)" in result.out
    tool = yaml.safe_load(config.read_text(encoding="utf-8"))["default_prompt"]["tools"][0]
    assert tool == {"name": "jq", "config": "new", "force_explain": True}


def test_explicit_force_explain_false_overrides(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    config = _setup_duplicate(
        isolated_dirs, tmp_path, "tools:\n  - name: jq\n    config: new\n    force_explain: false\n"
    )
    conch("--add-prompt", "p.yaml", tty=True, answers="o\n")
    tool = yaml.safe_load(config.read_text(encoding="utf-8"))["default_prompt"]["tools"][0]
    assert tool["force_explain"] is False


def test_cancel_leaves_the_config_untouched_even_after_earlier_choices(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    config = write_config(
        isolated_dirs,
        "default_prompt:\n  tools:\n    - name: jq\n      config: a\n    - name: git\n      config: b\n",
    )
    before = config.read_text(encoding="utf-8")
    prompt = tmp_path / "work" / "p.yaml"
    prompt.parent.mkdir(exist_ok=True)
    prompt.write_text(
        "tools:\n  - name: jq\n    config: A\n  - name: git\n    config: B\n  - name: ls\n",
        encoding="utf-8",
    )
    result = conch("--add-prompt", "p.yaml", tty=True, answers="o\nc\n")
    assert result.code == 4
    assert config.read_text(encoding="utf-8") == before


def test_skip_keeps_the_existing_tool() -> None:
    existing = [AllowedProgram(name="jq", config="a")]
    merged, result = merge_tools(
        existing, [AllowedProgram(name="jq", config="b")], lambda c, n: Resolution.SKIP
    )
    assert merged == existing and result.skipped == ["jq"]


def test_list_tools_marks_presence_on_path(conch: Conch, isolated_dirs: Path) -> None:
    write_config(
        isolated_dirs,
        "default_prompt:\n  tools:\n    - name: ls\n    - name: surely-not-a-program-xyz\n",
    )
    result = conch("--list-tools")
    assert result.code == 0
    assert "[x] ls" in result.out
    assert "[ ] surely-not-a-program-xyz" in result.out


def test_list_tools_with_a_prompt_file_lists_both(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    prompt = tmp_path / "work" / "p.yaml"
    prompt.parent.mkdir(exist_ok=True)
    prompt.write_text("tools:\n  - name: sh\n", encoding="utf-8")
    result = conch("--list-tools", "p.yaml")
    assert "default_prompt" in result.out and "[x] sh" in result.out
