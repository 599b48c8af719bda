"""Programs found by their manual pages' one-line descriptions (``generation.program_hints``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conch.command.whatis import CACHE_FILE, HINTS_PROMPT, program_hints, whatis_index
from requires import needs


def _fake_man(bin_dir: Path, listing: str) -> None:
    """A ``man`` whose ``-k .`` prints ``listing``, and the programs it names."""
    man = bin_dir / "man"
    man.write_text(f"#!/bin/sh\ncat <<'EOF'\n{listing}EOF\n", encoding="utf-8")
    man.chmod(0o755)


def _program(bin_dir: Path, name: str) -> None:
    path = bin_dir / name
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(0o755)


def test_the_index_keeps_programs_on_path_from_command_sections(tmp_path: Path) -> None:
    _fake_man(
        tmp_path,
        "pstree (1)           - display a tree of processes\n"
        "vmstat (8)           - Report virtual memory statistics\n"
        "printf (3)           - formatted output conversion\n"
        "ghost (1)            - a program that is not installed\n",
    )
    for name in ("pstree", "vmstat", "printf"):
        _program(tmp_path, name)

    index = whatis_index(str(tmp_path), tmp_path / "cache")

    assert index == {
        "pstree": "display a tree of processes",
        "vmstat": "Report virtual memory statistics",
    }
    cached = json.loads((tmp_path / "cache" / CACHE_FILE).read_text(encoding="utf-8"))
    assert cached["programs"] == index


def test_the_cache_answers_without_running_man_again(tmp_path: Path) -> None:
    _fake_man(tmp_path, "pstree (1)           - display a tree of processes\n")
    _program(tmp_path, "pstree")
    first = whatis_index(str(tmp_path), tmp_path)
    (tmp_path / "man").unlink()  # a second build would now find nothing

    assert whatis_index(str(tmp_path), tmp_path) == first
    (tmp_path / "cache-free").mkdir()
    assert whatis_index(str(tmp_path), tmp_path / "cache-free") == {}  # built anew: no man


def test_hints_name_the_best_matching_programs_first(tmp_path: Path) -> None:
    _fake_man(
        tmp_path,
        "pstree (1)           - display a tree of processes\n"
        "ps (1)               - report a snapshot of the current processes.\n"
        "fold (1)             - wrap each input line to fit in specified width\n",
    )
    for name in ("pstree", "ps", "fold"):
        _program(tmp_path, name)

    hints = program_hints("show the processes as a tree", 2, str(tmp_path), tmp_path)

    assert hints == (
        HINTS_PROMPT + "pstree - display a tree of processes\n"
        "ps - report a snapshot of the current processes"
    )
    assert program_hints("zzzz qqqq", 2, str(tmp_path), tmp_path) == ""
    assert program_hints("show the processes", 0, str(tmp_path), tmp_path) == ""


def test_no_man_on_path_gives_no_hints_and_caches_nothing(tmp_path: Path) -> None:
    _program(tmp_path, "fold")
    assert whatis_index(str(tmp_path), tmp_path) == {}
    assert program_hints("wrap lines", 3, str(tmp_path), tmp_path) == ""
    assert not (tmp_path / CACHE_FILE).exists()


@needs("man")
def test_this_machines_manual_pages_find_pstree_for_a_process_tree(tmp_path: Path) -> None:
    hints = program_hints("display the processes as a tree", 3, os.environ["PATH"], tmp_path)
    assert hints.startswith(HINTS_PROMPT)
    assert "\npstree - " in hints


def test_hints_end_the_system_prompt_before_any_documentation() -> None:
    from conch.command.generate import DOCUMENTATION_PROMPT, Ask, generate
    from conch.command.request import RequestContext
    from conch.config.settings import PromptConfig
    from conch.providers import ScriptedProvider

    provider = ScriptedProvider.of("pstree")
    ctx = RequestContext(request="show the process tree")
    hints = HINTS_PROMPT + "pstree - display a tree of processes"
    generate(provider, Ask(PromptConfig(), "Linux", ctx, documentation="## pstree", hints=hints))
    system = provider.sent[0].messages[0].content
    assert system.endswith(hints + "\n\n" + DOCUMENTATION_PROMPT + "## pstree")
    assert provider.sent[0].messages[-1].content == "show the process tree"
