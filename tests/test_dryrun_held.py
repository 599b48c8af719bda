"""Scratch runs in a project directory: a virtual environment, ``node_modules`` or ``.git``
is not copied but bound read-only into the copy, so a directory past the copy's limits only
because of them still gets its trial run, and what is in them stays readable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conch.command.candidates import Trial
from conch.execute.dryrun import DryRun, SandboxDryRunner, ScratchLimits, bwrap_argv
from conch.execute.scratch import held_paths, names_held, scan_tree, tree_changes
from conch.policy import PolicyContext, assess
from requires import needs

ENV = {"PATH": "/usr/bin:/bin"}
LIMITS = ScratchLimits(max_files=20)  # the project's own files fit; its .venv does not


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project: two files of its own and a .venv of 50 files."""
    top = tmp_path / "project"
    (top / ".venv" / "lib").mkdir(parents=True)
    for n in range(50):
        (top / ".venv" / "lib" / f"m{n}.py").write_text("x = 1\n", encoding="utf-8")
    (top / "notes.txt").write_text("b 10\na 2\n", encoding="utf-8")
    (top / "app.py").write_text("print('hi')\n", encoding="utf-8")
    return top


@pytest.fixture
def copies(tmp_path: Path) -> Path:
    copies = tmp_path / "copies"
    copies.mkdir()
    return copies


@pytest.fixture
def runner(project: Path, copies: Path) -> SandboxDryRunner:
    """Dry runs in the project, its copies within ``LIMITS`` (the .venv does not fit)."""
    return SandboxDryRunner(project, "/bin/sh", ENV, limits=LIMITS, scratch_dir=copies)


def outcome(run: DryRun | None) -> str:
    assert run is not None
    return Trial(run.command, assess(run.command, PolicyContext(unsafe=True)), run).outcome


def test_the_scan_lists_a_held_directory_once_and_counts_nothing_in_it(project: Path) -> None:
    assert scan_tree(project, max_files=20) is None  # the .venv puts it past the limit
    entries = scan_tree(project, max_files=20, held=frozenset({".venv"}))
    assert entries is not None
    assert sorted(entries) == [(".venv", "held"), ("app.py", "file"), ("notes.txt", "file")]
    assert held_paths(entries) == [".venv"]


def test_a_symlink_with_a_held_name_is_copied_as_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    top = tmp_path / "top"
    top.mkdir()
    os.symlink(tmp_path / "real", top / "node_modules")
    assert scan_tree(top, held=frozenset({"node_modules"})) == [("node_modules", "link")]


def test_a_command_naming_a_held_directory_holds_nothing_back() -> None:
    assert names_held("rm -r .venv/lib/old")
    assert names_held("du -sh node_modules")
    assert not names_held("sort notes.txt > sorted.txt")
    # names that only contain a held name hold it back as usual
    assert not names_held("echo dist >> .gitignore")
    assert not names_held("ls .github/workflows && pip install virtualenv")


def test_the_held_directories_are_bound_read_only_after_the_copy() -> None:
    cwd, copy = Path("/home/u/project"), Path("/tmp/conch-dryrun-x/cwd")
    argv = bwrap_argv("bwrap", "ls", "/bin/sh", cwd, copy, (), held=[".venv", "web/node_modules"])
    at = argv.index("--bind")
    assert argv[at : at + 9] == [
        "--bind", str(copy), str(cwd),
        "--ro-bind", "/home/u/project/.venv", "/home/u/project/.venv",
        "--ro-bind", "/home/u/project/web/node_modules", "/home/u/project/web/node_modules",
    ]  # fmt: skip


@needs("bubblewrap")
def test_a_write_command_in_a_project_with_a_venv_gets_its_trial_run(
    runner: SandboxDryRunner, project: Path, copies: Path
) -> None:
    run = runner("sort notes.txt > sorted.txt && find . -name 'm*.py' | wc -l")
    assert run is not None and run.scratch and outcome(run) == "ok"
    assert run.stdout == b"50\n"  # the real .venv is there to read
    assert run.changes == ("created sorted.txt",)
    assert not (project / "sorted.txt").exists() and list(copies.iterdir()) == []


@needs("bubblewrap")
def test_a_write_into_a_held_directory_still_meets_a_read_only_file_system(
    runner: SandboxDryRunner, project: Path, copies: Path
) -> None:
    before = (project / ".venv" / "lib" / "m1.py").stat().st_mtime_ns
    run = runner("touch new.txt && find . -name m1.py -exec touch {} +")
    assert run is not None and run.scratch and run.wrote and outcome(run) == "wrote"
    assert (project / ".venv" / "lib" / "m1.py").stat().st_mtime_ns == before
    assert not (project / "new.txt").exists()


@needs("bubblewrap")
def test_a_command_that_names_the_venv_is_judged_on_a_full_copy_or_not_at_all(
    runner: SandboxDryRunner, project: Path, copies: Path
) -> None:
    run = runner("rm .venv/lib/m1.py")
    assert run is not None and not run.scratch and outcome(run) == "wrote"
    roomy = SandboxDryRunner(project, "/bin/sh", ENV, scratch_dir=copies)
    run = roomy("rm .venv/lib/m1.py")
    assert run is not None and run.scratch and run.changes == ("deleted .venv/lib/m1.py",)
    assert (project / ".venv" / "lib" / "m1.py").exists()


def test_what_changed_leaves_the_held_directory_out(project: Path, tmp_path: Path) -> None:
    entries = scan_tree(project, held=frozenset({".venv"}))
    assert entries is not None
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / ".venv").mkdir()  # the empty place the real one was bound over
    for name in ("app.py", "notes.txt"):
        (copy / name).write_bytes((project / name).read_bytes())
        os.utime(copy / name, ns=(os.stat(project / name).st_mtime_ns,) * 2)
    (copy / "out.txt").write_text("x\n", encoding="utf-8")
    assert tree_changes(project, copy, entries) == ("created out.txt",)


def test_find_exec_of_a_program_that_is_not_installed_is_a_failure() -> None:
    command = "find docs -name '* *' -exec rename 's/ /_/g' {} \\;"
    missing = "find: ‘rename’: No such file or directory\n" * 2
    run = DryRun(command, 0, b"", missing)
    assert run.failed and run.exec_missing and not run.warned
    start = DryRun(
        "find nothere -exec wc -l {} \\;", 1, b"", "find: ‘nothere’: No such file or directory\n"
    )
    assert start.failed and not start.exec_missing  # a missing start path fails by its exit
    other = DryRun(
        "find . -exec cat {} \\;", 0, b"x", "find: ‘rename’: No such file or directory\n"
    )
    assert not other.failed and other.warned


@needs("bubblewrap")
def test_a_real_find_exec_of_a_missing_program_fails_its_dry_run(project: Path) -> None:
    runner = SandboxDryRunner(project, "/bin/sh", ENV, scratch=False)
    run = runner("find . -name notes.txt -exec conch-no-such-program {} \\;")
    assert run is not None and run.exit_code == 0 and run.failed and outcome(run) == "failed"


def test_find_exec_whose_program_failed_on_every_file_is_a_failure() -> None:
    command = "find docs -name '* *' -exec bash -c 'mv \"$1\" \"${1// /_}\"' {} \\;"
    failed = DryRun(command, 0, b"", "mv: cannot stat '': No such file or directory\n" * 2)
    assert failed.failed and failed.exec_failed
    printed = DryRun("find . -exec cat {} \\;", 0, b"x\n", "cat: ./d: Is a directory\n")
    assert not printed.failed and printed.warned  # it printed what it was for
    plain = DryRun("ls nothere; true", 0, b"", "ls: cannot access 'nothere': No such file\n")
    assert not plain.failed  # no find -exec: exit 0 stands


@needs("bubblewrap")
def test_a_real_find_exec_that_fails_on_every_file_fails_its_dry_run(project: Path) -> None:
    runner = SandboxDryRunner(project, "/bin/sh", ENV, scratch=False)
    run = runner('find . -name notes.txt -exec sh -c \'mv "$1" "$1.bak"\' {} \\;')
    assert run is not None and run.exit_code == 0 and outcome(run) == "failed"


def test_a_pipeline_whose_first_part_found_no_file_is_a_failure_though_it_exited_0() -> None:
    typo = DryRun(
        "cat < names.txt | xargs echo", 0, b"", "sh: 1: cannot open names.txt: No such file\n"
    )
    assert typo.failed and typo.input_missing and not typo.warned
    start = DryRun(
        "find nodir -type f | wc -l", 0, b"0\n", "find: ‘nodir’: No such file or directory\n"
    )
    assert start.failed
    found = DryRun("grep -r x . | head", 0, b"", "grep: ./link: No such file or directory\n")
    assert not found.failed and found.warned  # a name the command does not give
    chosen = DryRun("cat a.txt || true", 0, b"", "cat: a.txt: No such file or directory\n")
    assert not chosen.failed  # no pipe: the exit code stands


@needs("bubblewrap")
def test_a_real_pipeline_reading_a_missing_file_fails_its_dry_run(project: Path) -> None:
    runner = SandboxDryRunner(project, "/bin/sh", ENV, scratch=False)
    run = runner("cat < note.txt | wc -l")
    assert run is not None and run.exit_code == 0 and outcome(run) == "failed"
    assert outcome(runner("cat < notes.txt | wc -l")) == "ok"


def test_find_exec_moving_into_a_directory_that_is_not_there_is_a_failure() -> None:
    command = 'find . -name "*.py" -exec mv {} src/ \\;'
    said = "mv: cannot move './util.py' to 'src/': Not a directory\n"
    assert DryRun(command, 0, b"", said).failed
