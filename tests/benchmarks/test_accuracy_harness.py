"""The accuracy benchmark's harness: fixtures, sandbox, comparison levels and statistics."""

from __future__ import annotations

import os
import socket
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from requires import needs

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.accuracy.candidate import Task
from benchmarks.accuracy.compare import Judge, compare, normalise
from benchmarks.accuracy.fixtures import copy_tree, load_tasks, materialise
from benchmarks.accuracy.generators import looks_like_refusal, strip_markdown
from benchmarks.accuracy.report import paired, pipeline_counts, render, sign_test, wilson
from benchmarks.accuracy.sandbox import RunResult, run_in_sandbox, tree_state

ENTRIES: list[dict[str, Any]] = [
    {"path": "/testbed", "type": "dir", "mode": "0o755", "mtime": "build_time"},
    {"path": "/testbed/empty", "type": "dir", "mode": "0o700", "mtime": 1600000000},
    {
        "path": "/testbed/a.txt",
        "type": "file",
        "mode": "0o640",
        "mtime": 1500000000,
        "text": "hi\n",
    },
    {
        "path": "/testbed/run.sh",
        "type": "file",
        "mode": "0o755",
        "mtime": "build_time",
        "base64": "ZWNobw==",
    },
    {
        "path": "/testbed/link",
        "type": "symlink",
        "mode": "0o777",
        "mtime": "build_time",
        "target": "a.txt",
    },
    {"path": "/root", "type": "dir", "mode": "0o755", "mtime": "build_time"},
]
BUILD_TIME = 1700000000.0


def task(command: str = "true", shell: str = "/bin/bash") -> Task:
    return Task(0, 1, "do it", command, command, 0, shell, {}, True)


def fixture_tree(root: Path) -> Path:
    materialise(ENTRIES, root, BUILD_TIME)
    return root


def test_the_test_split_has_300_tasks_of_which_258_are_clean() -> None:
    tasks = load_tasks()
    assert len(tasks) == 300
    assert sum(t.clean for t in tasks) == 258
    assert {t.fs for t in tasks} == {1, 2, 3, 4, 5}


def test_materialising_a_fixture_sets_modes_mtimes_symlinks_and_empty_dirs(tmp_path: Path) -> None:
    root = fixture_tree(tmp_path / "tree")
    a = (root / "testbed" / "a.txt").lstat()
    assert stat.S_IMODE(a.st_mode) == 0o640
    assert a.st_mtime == 1500000000
    assert (root / "testbed" / "run.sh").read_bytes() == b"echo"
    assert stat.S_IMODE((root / "testbed" / "run.sh").stat().st_mode) == 0o755
    assert os.readlink(root / "testbed" / "link") == "a.txt"
    empty = root / "testbed" / "empty"
    assert empty.is_dir() and not any(empty.iterdir())
    assert stat.S_IMODE(empty.stat().st_mode) == 0o700
    assert empty.stat().st_mtime == 1600000000
    assert (root / "testbed").stat().st_mtime == BUILD_TIME


def test_copying_a_tree_keeps_modes_mtimes_and_symlinks(tmp_path: Path) -> None:
    root = fixture_tree(tmp_path / "tree")
    copy = tmp_path / "copy"
    copy_tree(root, copy)
    for name in ("testbed", "testbed/empty", "testbed/a.txt", "testbed/run.sh"):
        original, copied = (root / name).lstat(), (copy / name).lstat()
        assert copied.st_mode == original.st_mode, name
        assert copied.st_mtime == original.st_mtime, name
    assert os.readlink(copy / "testbed" / "link") == "a.txt"
    assert tree_state(copy) == tree_state(root)


def test_tree_state_sees_chmod_and_empty_directories(tmp_path: Path) -> None:
    root = fixture_tree(tmp_path / "tree")
    before = tree_state(root)
    (root / "testbed" / "a.txt").chmod(0o600)
    (root / "new").mkdir()
    after = tree_state(root)
    assert after["/testbed/a.txt"][1] == 0o600
    assert after["/new"] == ("dir", 0o755 & ~_umask(), "", "")
    assert before != after


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_normalising_strips_colours_trailing_spaces_and_blank_lines_then_sorts() -> None:
    assert normalise(b"\x1b[01;34mb\x1b[0m  \n\na    c\t d\n") == ["a c d", "b"]
    assert normalise(b"") == []
    assert normalise(b"x\r\ny\n") == normalise(b"y\nx")


def _result(stdout: bytes, state: dict[str, tuple[str, int, str, str]] | None = None) -> RunResult:
    return RunResult(stdout, b"", 0, False, state or {"/a": ("file", 0o644, "h", "")})


def fake_provider(answer: str) -> tuple[Any, list[int]]:
    """A provider that always answers ``answer``, and the list its calls are counted in."""
    from conch.providers import ScriptedProvider

    calls: list[int] = []

    def reply(messages: Any, options: Any) -> str:
        calls.append(1)
        return answer

    return ScriptedProvider(function=reply), calls


def test_a_candidate_passes_a_level_when_it_matches_either_reference() -> None:
    refs = {"bash": _result(b"a\nb\n"), "bash2": _result(b"a  \nb\n\n")}
    assert compare(task(), refs, _result(b"a  \nb\n\n"), None).strict
    levels = compare(task(), refs, _result(b"b\na\n"), None)
    assert (levels.strict, levels.normalised, levels.judged) == (False, True, None)


def test_a_different_tree_state_fails_every_level_without_asking_the_judge() -> None:
    provider, calls = fake_provider("yes")
    judge = Judge(provider)
    refs = {"bash": _result(b"x"), "bash2": _result(b"x")}
    other_state = _result(b"x", {"/a": ("file", 0o600, "h", "")})
    levels = compare(task(), refs, other_state, judge)
    assert (levels.strict, levels.normalised, levels.judged) == (False, False, False)
    assert calls == []


def test_the_judge_decides_only_when_the_state_matches_and_outputs_differ() -> None:
    refs = {"bash": _result(b"total 4\n-rw-r--r-- a\n"), "bash2": _result(b"a\n")}
    yes, _ = fake_provider("yes")
    levels = compare(task(), refs, _result(b"a.txt\n"), Judge(yes))
    assert (levels.strict, levels.normalised, levels.judged) == (False, False, True)
    no, calls = fake_provider("no")
    assert compare(task(), refs, _result(b"zzz\n"), Judge(no)).judged is False
    assert len(calls) == 2


def test_judge_answers_are_cached_on_disk(tmp_path: Path) -> None:
    cache = tmp_path / "judge.jsonl"
    provider, _ = fake_provider("yes")
    assert Judge(provider, cache).same("req", ("ls", b"a"), ("ls -1", b"b"))
    again, calls = fake_provider("no")
    assert Judge(again, cache).same("req", ("ls", b"a"), ("ls -1", b"b"))
    assert calls == []


def test_markdown_stripping_takes_the_first_fenced_block() -> None:
    assert strip_markdown("```bash\nls -la\n```") == "ls -la"
    assert strip_markdown("Here:\n```\nfind . -name x\n```\nDone.") == "find . -name x"
    assert strip_markdown("  pwd \n") == "pwd"
    assert strip_markdown("`sort -u a.txt`") == "sort -u a.txt"
    assert strip_markdown("use `ls` or `ls -a`") == "use `ls` or `ls -a`"


def test_refusals_are_recognised() -> None:
    assert looks_like_refusal("I'm sorry, but I can't help with that.")
    assert not looks_like_refusal("ls -la")


def test_wilson_interval_matches_known_values() -> None:
    low, high = wilson(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4)
    assert high == pytest.approx(0.7634, abs=1e-4)
    low, high = wilson(0, 10)
    assert low == 0.0
    assert high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson(129, 258)
    assert high - low == pytest.approx(0.12, abs=0.005)
    assert wilson(0, 0) == (0.0, 1.0)


def test_paired_counts_and_the_sign_test() -> None:
    rows = [
        {"task": 1, "tool": "conch", "judged": True},
        {"task": 1, "tool": "bare", "judged": False},
        {"task": 2, "tool": "conch", "judged": True},
        {"task": 2, "tool": "bare", "judged": True},
        {"task": 3, "tool": "conch", "judged": False},
        {"task": 3, "tool": "bare", "judged": False},
    ]
    info = paired(rows, "conch", "bare", "judged")
    assert (info["both"], info["only_a"], info["only_b"], info["neither"]) == (1, 1, 0, 1)
    assert sign_test(0, 0) == 1.0
    assert sign_test(10, 0) == pytest.approx(2 / 1024)


def test_the_report_counts_what_conchs_pipeline_did() -> None:
    def trial(command: str, source: str, outcome: str) -> dict[str, str]:
        return {"command": command, "source": source, "outcome": outcome}

    def row(task: int, command: str, trials: list[dict[str, str]] | None, ok: bool) -> dict:
        return {
            "task": task,
            "tool": "conch",
            "fs": 1,
            "difficulty": 0,
            "clean": True,
            "nl": "x",
            "command": command,
            "error": None,
            "refused": False,
            "policy": "allow",
            "seconds": 1.0,
            "trials": trials,
            "strict": ok,
            "normalised": ok,
            "judged": None,
        }

    rows = [
        row(0, "ls", [trial("ls", "greedy", "ok")], True),
        row(1, "ls -a", [trial("lx", "greedy", "failed"), trial("ls -a", "sample", "ok")], True),
        row(
            2, "cat b", [trial("cat a", "greedy", "failed"), trial("cat b", "repair", "ok")], False
        ),
        row(3, "pwd", None, False),  # a peer's row, or a run from before trials were kept
    ]
    counts = {key: [r["task"] for r in part] for key, part in pipeline_counts(rows).items()}
    assert counts == {
        "traced": [0, 1, 2],
        "sampled": [1],
        "repaired": [2],
        "changed": [1, 2],
        "greedy failed": [1, 2],
    }
    meta = {
        "command": "c",
        "model": "m",
        "server": "s",
        "date": "d",
        "tasks": 4,
        "clean_tasks": 4,
        "judge": "none",
    }
    text = render(meta, rows, ["conch"])
    expected = (
        "| conch | 3 | 2, 1 pass normalised | 1, 1 pass normalised | 1, 0 pass normalised "
        "| 2, 1 pass normalised |"
    )
    assert expected in text


@needs("bubblewrap")
def test_a_sandboxed_touch_changes_the_state_and_ls_does_not(tmp_path: Path) -> None:
    root = fixture_tree(tmp_path / "tree")
    copy_tree(root, tmp_path / "one")
    listed = run_in_sandbox(tmp_path / "one", "ls /testbed", "/bin/bash", {})
    assert listed.exit_code == 0
    assert listed.stdout == b"a.txt\nempty\nlink\nrun.sh\n"
    copy_tree(root, tmp_path / "two")
    touched = run_in_sandbox(tmp_path / "two", "touch /testbed/x", "/bin/bash", {})
    assert touched.exit_code == 0
    assert set(touched.state) - set(listed.state) == {"/testbed/x"}
    assert listed.state == {k: v for k, v in touched.state.items() if k != "/testbed/x"}


@needs("bubblewrap")
def test_a_sandboxed_command_cannot_see_the_host(tmp_path: Path) -> None:
    secret = tmp_path / "host-only.txt"
    secret.write_text("secret\n")
    root = fixture_tree(tmp_path / "tree")
    result = run_in_sandbox(root, f"cat {secret}; ls /work; echo $FOO-$HOME", "/bin/bash", {})
    assert b"secret" not in result.stdout
    assert result.stdout == b"-/root\n"
    assert b"No such file" in result.stderr


@needs("bubblewrap")
def test_the_sandbox_has_no_network(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        root = fixture_tree(tmp_path / "tree")
        result = run_in_sandbox(root, f"echo hi > /dev/tcp/127.0.0.1/{port}", "/bin/bash", {})
    assert result.exit_code != 0


@needs("busybox")
def test_conch_is_told_the_platform_of_the_machine_a_task_stands_for() -> None:
    from benchmarks.accuracy.conch_tool import task_platform

    busybox, host = task_platform("/bin/sh"), task_platform("/bin/bash")
    assert (busybox.userland, busybox.shell) == ("busybox", "/bin/sh")
    assert busybox.versions["sort"].startswith("busybox")
    assert "BusyBox" in busybox.describe() and "BusyBox" not in host.describe()


@needs("bubblewrap", "busybox")
def test_the_task_environment_is_set_and_busybox_runs_sh_tasks(tmp_path: Path) -> None:
    root = fixture_tree(tmp_path / "tree")
    result = run_in_sandbox(root, 'echo "$FILES $TZ $LANG"', "/bin/bash", {"FILES": "/a /b"})
    assert result.stdout == b"/a /b UTC C.UTF-8\n"
    busybox = run_in_sandbox(root, "readlink /proc/$$/exe; command -v find", "/bin/sh", {})
    assert busybox.stdout.splitlines()[0].endswith(b"busybox")
    assert busybox.stdout.splitlines()[1] == b"/opt/busybox-bin/find"


@needs("bubblewrap")
def test_the_timeout_kills_a_long_command_fast(tmp_path: Path) -> None:
    root = fixture_tree(tmp_path / "tree")
    started = time.monotonic()
    result = run_in_sandbox(root, "sleep 30 & sleep 30", "/bin/bash", {}, timeout=1.0)
    assert result.timed_out
    assert time.monotonic() - started < 5


def _report(tools: list[str], tasks: list[int], command: str) -> dict[str, Any]:
    rows = [
        {
            "task": t,
            "tool": tool,
            "fs": 1,
            "difficulty": 0,
            "clean": True,
            "nl": f"task {t}",
            "command": "ls",
            "error": None,
            "refused": False,
            "policy": "allow",
            "seconds": 1.0,
            "strict": t % 2 == 0,
            "normalised": t % 2 == 0,
            "judged": t % 2 == 0,
        }
        for tool in tools
        for t in tasks
    ]
    meta = {
        "command": command,
        "model": "m.gguf",
        "server": "http://127.0.0.1:1/v1",
        "date": "2026-11-21 16:00 UTC",
        "tasks": len(tasks),
        "clean_tasks": len(tasks),
        "all_tasks": False,
        "judge": "m.gguf, temperature 0 (3 calls this run)",
        "tools": tools,
        "reference_pairs": None,
        "seconds": 10.0,
    }
    return {"meta": meta, "rows": rows}


def test_merge_combines_runs_of_different_tools(tmp_path: Path) -> None:
    import json

    from benchmarks.accuracy.run import main

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_report(["conch"], [0, 1, 2], "run A")), encoding="utf-8")
    b.write_text(json.dumps(_report(["sgpt", "bare"], [0, 1, 2], "run B")), encoding="utf-8")
    out = tmp_path / "merged"
    assert main(["--merge", str(a), str(b), "--out", str(out)]) == 0
    merged = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert merged["meta"]["tools"] == ["conch", "sgpt", "bare"]
    assert merged["meta"]["command"] == "run A && run B"
    assert len(merged["rows"]) == 9
    assert set(merged["meta"]["paired_clean"]) == {"sgpt", "bare"}
    assert merged["meta"]["summary"]["conch"]["clean"]["n"] == 3
    assert "run A && run B" in out.with_suffix(".md").read_text(encoding="utf-8")


def test_merge_shows_an_earlier_run_of_conch_under_another_name(tmp_path: Path) -> None:
    import json

    from benchmarks.accuracy.run import main

    new, old = tmp_path / "new.json", tmp_path / "old.json"
    new.write_text(json.dumps(_report(["conch"], [0, 1, 2], "run new")), encoding="utf-8")
    old.write_text(json.dumps(_report(["conch"], [0, 1, 2], "run old")), encoding="utf-8")
    out = tmp_path / "merged"
    assert main(["--merge", str(new), f"{old}@conch-before", "--out", str(out)]) == 0
    merged = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert merged["meta"]["tools"] == ["conch", "conch-before"]
    assert merged["meta"]["command"] == "run new && run old  (shown as conch-before)"
    assert set(merged["meta"]["paired_clean"]) == {"conch-before"}
    assert [r["tool"] for r in merged["rows"]] == ["conch"] * 3 + ["conch-before"] * 3
    with pytest.raises(SystemExit, match="@NAME needs a one-tool report"):
        two = tmp_path / "two.json"
        two.write_text(json.dumps(_report(["sgpt", "bare"], [0, 1, 2], "B")), encoding="utf-8")
        main(["--merge", str(new), f"{two}@x", "--out", str(out)])


def test_merge_with_tasks_compares_runs_on_the_tasks_both_have(tmp_path: Path) -> None:
    import json

    from benchmarks.accuracy.run import main

    part, whole = tmp_path / "part.json", tmp_path / "whole.json"
    part.write_text(json.dumps(_report(["conch"], [0, 1], "run part")), encoding="utf-8")
    whole.write_text(json.dumps(_report(["conch"], [0, 1, 2, 3], "run whole")), encoding="utf-8")
    out = tmp_path / "merged"
    argv = ["--merge", str(part), f"{whole}@before", "--tasks", "0,1", "--out", str(out)]
    assert main(argv) == 0
    merged = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert merged["meta"]["tasks"] == 2 and merged["meta"]["clean_tasks"] == 2
    assert sorted(r["task"] for r in merged["rows"]) == [0, 0, 1, 1]
    assert "only the 2 tasks of --tasks" in merged["meta"]["command"]


def test_merge_refuses_reports_on_different_tasks(tmp_path: Path) -> None:
    import json

    from benchmarks.accuracy.run import main

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_report(["conch"], [0, 1], "run A")), encoding="utf-8")
    b.write_text(json.dumps(_report(["sgpt"], [0, 1, 2], "run B")), encoding="utf-8")
    with pytest.raises(SystemExit, match="same tasks"):
        main(["--merge", str(a), str(b), "--out", str(tmp_path / "m")])


def test_join_combines_shards_of_one_run_in_task_order(tmp_path: Path) -> None:
    import json

    from benchmarks.accuracy.run import main

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_report(["conch"], [0, 2, 4], "shard A")), encoding="utf-8")
    b.write_text(json.dumps(_report(["conch"], [1, 3], "shard B")), encoding="utf-8")
    out = tmp_path / "joined"
    assert main(["--join", str(a), str(b), "--out", str(out)]) == 0
    joined = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert [r["task"] for r in joined["rows"]] == [0, 1, 2, 3, 4]
    assert joined["meta"]["command"] == "shard A & shard B"
    assert joined["meta"]["tasks"] == joined["meta"]["clean_tasks"] == 5
    # tasks 0, 2 and 4 pass in the made-up rows
    assert joined["meta"]["summary"]["conch"]["clean"]["normalised"]["passed"] == 3


def test_join_puts_other_tools_on_the_same_tasks_side_by_side(tmp_path: Path) -> None:
    import json

    from benchmarks.accuracy.run import main

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_report(["conch"], [0, 1, 2], "run A")), encoding="utf-8")
    b.write_text(json.dumps(_report(["sgpt"], [0, 1, 2], "run B")), encoding="utf-8")
    out = tmp_path / "joined"
    assert main(["--join", str(a), str(b), "--out", str(out)]) == 0
    joined = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert joined["meta"]["tools"] == ["conch", "sgpt"]
    assert [(r["task"], r["tool"]) for r in joined["rows"]] == [
        (0, "conch"),
        (0, "sgpt"),
        (1, "conch"),
        (1, "sgpt"),
        (2, "conch"),
        (2, "sgpt"),
    ]
    assert joined["meta"]["tasks"] == 3


@pytest.mark.parametrize(
    ("tools", "tasks", "message"),
    [
        (["sgpt"], [1], "different tools"),
        (["conch", "sgpt"], [0, 2], "different tools"),
        (["conch"], [2, 3], "repeats tasks"),
    ],
)
def test_join_refuses_other_tools_and_repeated_tasks(
    tmp_path: Path, tools: list[str], tasks: list[int], message: str
) -> None:
    import json

    from benchmarks.accuracy.run import main

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_report(["conch"], [0, 2], "shard A")), encoding="utf-8")
    b.write_text(json.dumps(_report(tools, tasks, "shard B")), encoding="utf-8")
    with pytest.raises(SystemExit, match=message):
        main(["--join", str(a), str(b), "--out", str(tmp_path / "j")])


def test_the_candidate_cache_keeps_conchs_trials(tmp_path: Path) -> None:
    from benchmarks.accuracy.candidate import Candidate
    from benchmarks.accuracy.conch_tool import ConchCandidate
    from benchmarks.accuracy.run import CandidateCache

    cache = CandidateCache(tmp_path, enabled=True)
    trials = [{"command": "lx", "source": "greedy", "outcome": "failed"}]
    cache.put("conch", task(), ConchCandidate("ls", "ls", 1.0, trials=trials))
    cache.put("sgpt", task(), Candidate("ls -l", "ls -l", 2.0))
    kept = cache.get("conch", task())
    assert isinstance(kept, ConchCandidate)
    assert kept.trials == trials
    assert kept.command == "ls"
    assert type(cache.get("sgpt", task())) is Candidate


# -- conch's dry runs in a task's tree: read-only, and writes again in a throwaway copy --


@pytest.fixture
def dry_tree(tmp_path: Path) -> Path:
    """A fixture tree that has had read-only dry runs (which add their mount points)."""
    from benchmarks.accuracy.conch_tool import FixtureDryRunner

    root = fixture_tree(tmp_path / "tree")
    for shell in ("/bin/bash", "/bin/sh"):
        FixtureDryRunner(root, task(shell=shell))("true")
    return root


@needs("bubblewrap", "busybox")
def test_conchs_dry_run_of_a_working_write_runs_in_a_copy_of_the_tree(
    dry_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    from benchmarks.accuracy.conch_tool import FixtureDryRunner

    made: list[str] = []
    real = tempfile.mkdtemp

    def mkdtemp(*args: Any, **kwargs: Any) -> str:
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    before = tree_state(dry_tree)
    run = FixtureDryRunner(dry_tree, task())("cd /testbed && sort a.txt > out && cat out")
    assert run is not None
    assert (run.scratch, run.exit_code, run.stdout, run.wrote) == (True, 0, b"hi\n", False)
    assert tree_state(dry_tree) == before
    assert len(made) == 1 and not Path(made[0]).exists()


@needs("bubblewrap", "busybox")
def test_conchs_dry_run_of_a_failing_write_is_a_failure_and_changes_nothing(
    dry_tree: Path,
) -> None:
    from benchmarks.accuracy.conch_tool import FixtureDryRunner

    before = tree_state(dry_tree)
    run = FixtureDryRunner(dry_tree, task())("sort -r /testbed/textfile1.txt > /testbed/out")
    assert run is not None and run.scratch and run.failed
    assert "textfile1.txt" in run.error_excerpt()
    busybox = FixtureDryRunner(dry_tree, task(shell="/bin/sh"))("touch /testbed/new && ls /testbed")
    assert busybox is not None and busybox.scratch and b"new" in busybox.stdout
    assert tree_state(dry_tree) == before


@needs("bubblewrap", "busybox")
def test_conchs_dry_run_of_a_write_outside_the_tree_or_without_scratch_is_not_judged(
    dry_tree: Path,
) -> None:
    from benchmarks.accuracy.conch_tool import FixtureDryRunner

    outside = FixtureDryRunner(dry_tree, task())("touch /usr/conch-test")
    assert outside is not None and outside.wrote and not outside.failed
    off = FixtureDryRunner(dry_tree, task(), scratch=False)("touch /testbed/x")
    assert off is not None and off.wrote and not off.scratch
    assert not (dry_tree / "testbed" / "x").exists()


def _recorded(tmp_path: Path, commands: dict[str, str], task_index: int) -> Path:
    import json

    rows = [
        {
            "task": task_index,
            "tool": tool,
            "command": command,
            "raw": command,
            "seconds": 2.0,
            "error": None,
            "refused": False,
        }
        for tool, command in commands.items()
    ]
    path = tmp_path / "recorded.json"
    path.write_text(json.dumps({"meta": {}, "rows": rows}), encoding="utf-8")
    return path


@needs("bubblewrap")
def test_replay_runs_recorded_commands_with_references_run_right_before_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.accuracy import run as harness

    date_task = next(t for t in load_tasks() if t.clean and t.bash == "date")
    recorded = _recorded(tmp_path, {"sgpt": "date", "bare": "date -u"}, date_task.index)
    events: list[str] = []
    real_run, real_generate = harness.Runner.run, harness.Replay.generate

    def run(self: Any, task: Task, command: str) -> RunResult:
        events.append(f"run {command}")
        return real_run(self, task, command)

    def generate(self: Any, task: Task) -> Any:
        events.append(f"answer {self.name}")
        return real_generate(self, task)

    monkeypatch.setattr(harness.Runner, "run", run)
    monkeypatch.setattr(harness.Replay, "generate", generate)
    args = harness.parse_args(
        ["--replay", str(recorded), "--tasks", str(date_task.index), "--no-judge"]
    )
    _, rows, names = harness.evaluate(args, "http://127.0.0.1:1/v1", "m", "m")
    assert names == ["sgpt", "bare"]
    refs = [f"run {date_task.bash}", f"run {date_task.bash2}"]
    # Each tool's answer, then both references again, then the answer's own run.
    assert events == ["answer sgpt", *refs, "run date", "answer bare", *refs, "run date -u"]
    assert [(r["tool"], r["command"], r["seconds"]) for r in rows] == [
        ("sgpt", "date", 2.0),
        ("bare", "date -u", 2.0),
    ]


def test_replay_refuses_a_tool_or_task_the_report_lacks(tmp_path: Path) -> None:
    from benchmarks.accuracy.run import replay_tools

    recorded = _recorded(tmp_path, {"sgpt": "date"}, 9)
    tasks = [t for t in load_tasks() if t.index == 9]
    assert [
        t.name
        for t in replay_tools(recorded, ["conch", "bare", "bare+md", "sgpt", "llm-cmd"], tasks)
    ] == ["sgpt"]
    with pytest.raises(SystemExit, match="no answers of llm-cmd; it has sgpt"):
        replay_tools(recorded, ["llm-cmd"], tasks)
    with pytest.raises(SystemExit, match=r"sgpt has no answer to task\(s\) 10"):
        replay_tools(recorded, ["sgpt"], [t for t in load_tasks() if t.index in (9, 10)])
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"bad\.json: not a readable report"):
        replay_tools(tmp_path / "bad.json", ["sgpt"], tasks)
