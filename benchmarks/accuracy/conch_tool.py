"""conch as a tool under test: ``conch.command.propose.propose``, as ``conch --print --unsafe`` runs it.

The benchmark stands in for the user's machine with the task's file tree: conch's dry runs of
candidate commands happen in that tree bound read-only as ``/`` (with the host's ``/usr`` and
``/etc``, as the judged runs see them), where the CLI would use the real filesystem bound
read-only. A command that tries to write runs again in a throwaway writable copy of the tree,
as the CLI runs it again in a copy of the current directory (the tree is the task's working
directory, ``/``, and small). conch never sees the reference commands or their output.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.accuracy.candidate import Candidate, Task
from benchmarks.accuracy.candidate import looks_refused as looks_like_refusal
from benchmarks.accuracy.fixtures import copy_tree, remove_tree
from benchmarks.accuracy.generators import PROVIDER_ERROR, make_provider
from benchmarks.accuracy.sandbox import (
    DEFAULT_PATH,
    busybox_applets,
    bwrap_argv,
    is_busybox_shell,
)
from conch.command.examples import Example
from conch.errors import ConchError, ModelOutputError
from conch.execute.dryrun import DEFAULT_TIMEOUT_S, DryRun, DryRunner, judge_in_copy, run_capped
from conch.host.platform import PlatformContext
from conch.providers.base import Provider


@dataclass(frozen=True, slots=True)
class ConchCandidate(Candidate):
    """conch's answer with the candidate commands its pipeline tried, in order, and the
    outcome of each one's dry run."""

    trials: list[dict[str, Any]] | None = None


class FixtureDryRunner:
    """conch's dry runs for one task: its fixture tree, read-only, as ``/``; a command that
    tries to write runs again in a writable copy of the tree (``scratch``), which is then
    deleted. The tree itself never changes (beyond the empty mount points bubblewrap needs)."""

    def __init__(
        self, root: Path, task: Task, timeout: float = DEFAULT_TIMEOUT_S, scratch: bool = True
    ) -> None:
        self.root = root
        self.task = task
        self.timeout = timeout
        self.scratch = scratch

    def __call__(self, command: str) -> DryRun | None:
        started = time.monotonic()
        argv = bwrap_argv(self.root, command, self.task.shell, self.task.env, read_only=True)
        run = run_capped(argv, command, self._env(), self.timeout)
        if not self.scratch:
            return run
        return judge_in_copy(run, lambda: self._in_copy(command), started)

    def _in_copy(self, command: str) -> DryRun | None:
        parent = Path(tempfile.mkdtemp(prefix="conch-fixture-dryrun-"))
        try:
            copy = parent / "tree"
            copy_tree(self.root, copy)  # shutil.copytree, symlinks kept, times restored
            argv = bwrap_argv(copy, command, self.task.shell, self.task.env, read_only=False)
            return run_capped(argv, command, self._env(), self.timeout)
        finally:
            remove_tree(parent)

    @staticmethod
    def _env() -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "")}


@functools.cache
def task_platform(shell: str) -> PlatformContext:
    """What conch's platform detection finds on the machine a task stands for.

    Most tasks stand for this machine (GNU userland, bash). The busybox tasks (``/bin/sh``)
    stand for a busybox system: their commands run with busybox's applets first on ``PATH``,
    so conch detects its platform with the same ``PATH`` and shell, as it would when
    installed there (the applets are linked into a temporary directory for the probes).
    """
    from conch.config.paths import Paths
    from conch.host.platform import detect_platform

    if not is_busybox_shell(shell):
        return detect_platform(Paths.default().cache_dir, dict(os.environ))
    binary, applets = busybox_applets()
    links = Path(tempfile.mkdtemp(prefix="conch-busybox-platform-"))
    try:
        for applet in applets:
            (links / applet).symlink_to(binary)
        return detect_platform(None, {"PATH": f"{links}:{DEFAULT_PATH}", "SHELL": shell})
    finally:
        shutil.rmtree(links, ignore_errors=True)


def conch_candidate(
    provider: Provider,
    request: str,
    dry_runner: DryRunner | None = None,
    overrides: dict[str, Any] | None = None,
    shell: str = "/bin/bash",
    find: Callable[[str, int], list[Example]] | None = None,
    unsafe: bool = True,
) -> Candidate:
    """conch's answer to ``request``, as ``conch --print --unsafe REQUEST`` would produce it
    (``unsafe=False``: as ``conch --print REQUEST``, safe mode, as a user gets it).

    This is the one place the benchmark enters conch: ``conch.command.oneshot.OneShot``,
    the library call the CLI makes, with the default settings, the platform description of
    the machine the task stands for (``task_platform`` of the task's ``shell``), and dry runs
    in ``dry_runner`` (the task's tree). ``overrides`` (nested like the config file) change
    settings for the ablation variants, and ``find`` how worked examples are found.
    """
    from conch.command.oneshot import OneShot, OneShotRequest, Want
    from conch.config.paths import Paths
    from conch.config.settings import Settings
    from conch.policy import PolicyContext

    settings = Settings.model_validate(overrides or {})
    service = OneShot(
        settings,
        lambda: provider,  # shared by every task: never closed here
        cache_dir=Paths.default().cache_dir,
        platform=task_platform(shell),
        dry_runner=dry_runner,
        find=find,
    )
    root = getattr(dry_runner, "root", None)  # commands run at the tree's root
    asked = OneShotRequest(
        request,
        root if isinstance(root, Path) else Path.cwd(),
        dict(os.environ),
        want=Want.COMMAND,
        dry_run=dry_runner is not None,
        policy=PolicyContext(unsafe=unsafe),
    )
    started = time.monotonic()
    try:
        result = service.run(asked)
        proposal = result.proposal
        assert proposal is not None
    except ModelOutputError as exc:
        seconds = time.monotonic() - started
        message = str(exc)
        return Candidate(None, "", seconds, error=message, refused="prose" in message)
    except ConchError as exc:
        return Candidate(None, "", time.monotonic() - started, error=f"{PROVIDER_ERROR}{exc}")
    seconds = time.monotonic() - started
    trials = proposal.trials_json()
    if looks_like_refusal(proposal.command):
        return ConchCandidate(None, proposal.generated.reply, seconds, refused=True, trials=trials)
    return ConchCandidate(proposal.command, proposal.generated.reply, seconds, trials=trials)


class ConchGenerator:
    """conch's one-shot pipeline, in-process; dry runs in the task's tree when it is known."""

    name = "conch"

    def __init__(self, base_url: str, model: str | None) -> None:
        self.provider = make_provider(base_url, model)
        self.roots: dict[int, Path] = {}

    def generate(self, task: Task) -> Candidate:
        root = self.roots.get(task.fs)
        runner = FixtureDryRunner(root, task) if root is not None else None
        return conch_candidate(self.provider, task.nl, runner, shell=task.shell)
