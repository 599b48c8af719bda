"""Interpreter code deleting a guarded tree through its language's library is denylisted in
every mode; the same calls on a project's own directories are not. Data only: every command
here reaches ``assess`` or the text reader, which run nothing."""

from __future__ import annotations

import pytest

from conch.policy import Decision, ExecutionMode, PolicyContext, assess
from conch.policy.code_deletes import deletes_guarded_tree

GUARDED = [
    "python3 -c 'import shutil; shutil.rmtree(\"/\")'",
    "python3 -c 'import shutil,os; shutil.rmtree(os.path.expanduser(\"~\"))'",
    "python3 -c 'import shutil, pathlib; shutil.rmtree(pathlib.Path.home())'",
    'ruby -e \'require "fileutils"; FileUtils.rm_rf("/etc")\'',
    "ruby -e 'FileUtils.rm_r(Dir.home)'",
    'node -e \'require("fs").rmSync("/usr", {recursive: true})\'',
    'node -e \'require("fs").rmSync(require("os").homedir(), {recursive: true})\'',
    "julia -e 'rm(homedir(), recursive=true)'",
    "perl -MFile::Path=rmtree -e 'rmtree(\"/\")'",
    'php -r \'system("true"); rmdir_p(getenv("HOME"));\'',
]

PROJECT = [
    "python3 -c 'import shutil; shutil.rmtree(\"build\")'",
    "ruby -e 'FileUtils.rm_rf(\"tmp/cache\")'",
    'node -e \'require("fs").rmSync("dist", {recursive: true})\'',
    "julia -e 'rm(\"out\", recursive=true)'",
    "python3 -c 'import os; os.remove(\"/tmp/x.txt\")'",
    "python3 -c 'print(\"rmtree(/)\")'",
]


@pytest.mark.parametrize("command", GUARDED)
def test_a_library_delete_of_a_guarded_tree_is_denylisted_in_every_mode(command: str) -> None:
    for context in (
        PolicyContext(),
        PolicyContext(mode=ExecutionMode.FULL),
        PolicyContext(unsafe=True, mode=ExecutionMode.FULL),
    ):
        verdict = assess(command, context)
        assert verdict.decision is Decision.REJECT and verdict.denylisted, (command, context)


@pytest.mark.parametrize("command", PROJECT)
def test_the_same_calls_on_a_project_directory_are_not_denylisted(command: str) -> None:
    verdict = assess(command, PolicyContext(mode=ExecutionMode.FULL))
    assert not verdict.denylisted, verdict.reasons


def test_the_reader_names_the_call_and_the_path() -> None:
    assert deletes_guarded_tree('shutil.rmtree("/")') == "rmtree('/')"
    assert deletes_guarded_tree("rm(homedir(), recursive=true)") == (
        "rm(...) of the home directory"
    )
    assert deletes_guarded_tree('os.remove("/etc")') is None  # not a tree delete
    assert deletes_guarded_tree('rm("/", force=false)') is not None  # a flag is named
