"""The README's examples are run, so they never rot."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_python_examples_run() -> None:
    blocks = _blocks("python")
    assert blocks
    for code in blocks:
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
        )
        assert out.returncode == 0, out.stderr


def test_readme_quick_start_is_two_commands_and_ci_runs_the_second() -> None:
    text = README.read_text(encoding="utf-8")
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)\n```", quick, re.S)
    assert len(commands) == 2
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1].replace("pip install -e", "pip install -q -e") in ci


def test_readme_mentions_every_runtime_dependency() -> None:
    import tomllib

    pyproject = tomllib.loads((README.parent / "pyproject.toml").read_text(encoding="utf-8"))
    text = README.read_text(encoding="utf-8").lower()
    for requirement in pyproject["project"]["dependencies"]:
        name = re.split(r"[<>=\[ ]", requirement)[0].lower()
        assert name in text, f"{name} is not named in the README's dependency table"


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of a Markdown file."""
    anchors = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def test_every_relative_link_in_the_readme_and_docs_resolves() -> None:
    root = README.parent
    pages = [README, *sorted((root / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            if not resolved.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def test_readme_tools_table_names_every_built_in_tool(tmp_path: Path) -> None:
    from conch.agent.builtin import ToolOptions, default_tools

    options = ToolOptions(
        root=tmp_path, fs_mode="both", bash=True, web=True, memory_dir=tmp_path / "memory"
    )
    text = README.read_text(encoding="utf-8")
    table = text.split("The built-in tools", 1)[1].split("\n\n", 2)[1]
    names = [t.name for t in default_tools(options)]
    assert {"fs_read", "fs", "bash", "evaluate", "web_fetch", "memory"} <= set(names)
    for name in names:
        assert f"`{name}`" in table, f"{name} is missing from the README's tools table"
