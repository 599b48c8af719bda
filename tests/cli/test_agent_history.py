"""The history log's entries for the agent: one per ``conch run`` task and one per ``conch
chat`` turn, however it ends (answered, refused, out of iterations, a dead server)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cliutil import CliResult, dead_server, script, step, write_config
from conch.config.paths import Paths
from conch.storage.history import History, HistoryEntry

Conch = Callable[..., CliResult]


def entries() -> list[HistoryEntry]:
    return list(History(Paths.default().state_dir).entries())


def test_a_run_is_one_entry_with_its_tool_calls_and_commands(
    conch: Conch, isolated_dirs: Path
) -> None:
    script(
        isolated_dirs,
        step("fs_write", path="notes.txt", content="milk\n"),
        step("bash", command="wc -l notes.txt"),
        step("fs_read", path="missing.txt"),
        "notes.txt has one line.",  # held back once: the last call failed
        "notes.txt has one line.",
    )
    result = conch("run", "--allow-dangerous", "--no-act", "write notes.txt and count its lines")
    assert result.code == 0, result.err
    answer, note = result.out.splitlines()
    assert answer == "notes.txt has one line.", result.err
    assert note.startswith("[fs_read failed: no such file 'missing.txt'")  # the reply says so
    [entry] = entries()
    argv = ["conch", "run", "--allow-dangerous", "--no-act", "write notes.txt and count its lines"]
    assert entry.argv == argv
    assert entry.request == "write notes.txt and count its lines"
    assert entry.exit_code == 0 and entry.provider == "scripted"
    assert entry.generated_command == "wc -l notes.txt" and entry.executed
    calls = entry.tool_calls or []
    assert [(c["tool"], c["ok"]) for c in calls] == [
        ("fs_write", True),
        ("bash", True),
        ("fs_read", False),
    ]
    assert calls[1]["command"] == "wc -l notes.txt"
    assert "missing.txt" in calls[2]["error"]
    assert entry.notes is None and entry.duration_ms is not None


def test_a_run_out_of_iterations_is_recorded_with_exit_6_and_why(
    conch: Conch, isolated_dirs: Path
) -> None:
    script(isolated_dirs, step("fs_list", path="."), step("fs_list", path="sub"), "late")
    result = conch("run", "--max-iterations", "2", "look around")
    assert result.code == 6
    [entry] = entries()
    assert entry.exit_code == 6
    assert "iteration limit 2" in (entry.notes or "")
    assert [c["tool"] for c in entry.tool_calls or []] == ["fs_list", "fs_list"]


def test_a_dead_server_is_recorded_with_its_error(conch: Conch, isolated_dirs: Path) -> None:
    dead_server(isolated_dirs)
    result = conch("run", "look around")
    assert result.code == 5
    [entry] = entries()
    assert entry.exit_code == 5 and entry.request == "look around"
    assert entry.notes and entry.notes in result.err


def test_each_chat_turn_is_one_entry(conch: Conch, isolated_dirs: Path) -> None:
    script(isolated_dirs, "Hello.")
    conch("chat", "-p", "hi")
    script(isolated_dirs, step("datetime"), "It is late.")
    conch("chat", "--continue", "-p", "what time is it?")
    first, second = entries()
    assert (first.argv, first.request, first.exit_code) == (["conch", "chat", "-p", "hi"], "hi", 0)
    assert first.tool_calls == []
    assert second.request == "what time is it?"
    assert [c["tool"] for c in second.tool_calls or []] == ["datetime"]


def test_history_enabled_false_writes_nothing(conch: Conch, isolated_dirs: Path) -> None:
    write_config(
        isolated_dirs,
        'ai:\n  provider: scripted\n  script:\n    - "Hello."\nhistory:\n  enabled: false\n',
    )
    assert conch("chat", "-p", "hi").code == 0
    assert entries() == []
