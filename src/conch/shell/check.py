"""A command the model suggests in ``conch shell``, checked as a one-shot command is before it
is offered: the policy's verdict, the files it reads, the programs and options it uses, and a
dry run among the real files.

``Checker.check`` gives a ``Checked``: the verdict (``conch.shell.turns.judge``, of the
command as the shell runs it: an alias in its first word replaced by its value) and the
``problems`` that make the command wrong here, each a sentence for the user and the model:

- a path it reads does not exist in the shell's directory (``conch.shell.paths``), with the
  files of that name nearby;
- a program is not installed, or is given an option its help does not document
  (``conch.validate.static_check`` over the collected help, as ``validation`` configures it;
  the model's verdict is not asked for: a problem goes back to the shell's own model instead,
  ``conch.shell.turns.repair_turn``);
- it failed when run in the sandbox (``conch.execute.dryrun.SandboxDryRunner``, as
  ``generation.dry_run``, ``dry_run_timeout_s`` and ``dry_run_scratch`` configure it): the
  whole filesystem read-only, a command that writes run again in a throwaway copy of the
  directory. Only commands that read or write files are tried (network, privileged and
  unknown commands are not: the sandbox cannot judge them), and a run that timed out or
  wanted a terminal is not held against the command.

An alias in the command's first word is replaced by its value first, as the shell does; a
command that still uses one of the user's aliases (in a later word, or an alias of an alias)
is checked for paths only: neither the help nor the sandbox knows the alias.

A command the one-shot pipeline made (``conch.command.oneshot``) has been through those
stages already: its verdict, its dry run and validation's static checks. ``from_proposal``
reads them off the ``Proposal`` instead of running them again, and adds the one check the
pipeline does not make, the files it reads; ``correction_of`` does the same for the
correction validation suggested.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from conch.command.candidates import Trial
from conch.policy import Decision, Risk, Verdict
from conch.shell.paths import missing_paths
from conch.shell.turns import judge

if TYPE_CHECKING:
    from conch.command.proposal import Proposal
    from conch.config.settings import Settings
    from conch.execute.dryrun import DryRun
    from conch.shell.state import ShellState
    from conch.validate import CommandHelp

__all__ = ["Checked", "Checker", "correction_of", "from_proposal"]

# What a dry run can judge: the command reads or writes files, nothing else.
_TRIED = frozenset({Risk.READ_ONLY, Risk.WRITES, Risk.DESTRUCTIVE})
# A program that needs a terminal fails without one; that says nothing of the command.
_TERMINAL = re.compile(r"\b(?:tty|terminal)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Checked:
    """A suggested ``command``, the policy's ``verdict``, the ``problems`` found with it, what
    its dry run ``seen`` (a few words, ``conch.command.candidates.Trial.observed``) or why it
    was ``untried``."""

    command: str
    verdict: Verdict
    problems: tuple[str, ...] = ()
    seen: str | None = None
    untried: str | None = None

    @property
    def ok(self) -> bool:
        """No problem found (a command the policy rejects has none: it never runs)."""
        return not self.problems

    @property
    def rejected(self) -> bool:
        return self.verdict.decision is Decision.REJECT


@dataclass(slots=True)
class Checker:
    """Checks suggestions with ``settings`` (``validation`` and ``generation``); help texts
    are cached in ``cache_dir``. The sandbox is looked for once, at the first dry run."""

    settings: Settings
    cache_dir: Path | None = None
    _bwrap: str | None = field(default=None, init=False)
    _unavailable: str | None = field(default=None, init=False)

    def check(self, command: str, state: ShellState) -> Checked:
        """``command`` checked for running in ``state``'s directory, shell and environment."""
        from conch.validate import programs

        # What the shell runs: an alias in the first word replaced by its value.
        runs = state.expand_alias(command)
        verdict = judge(runs, state.cwd)
        if verdict.decision is Decision.REJECT:
            return Checked(command, verdict)
        problems = [m.problem for m in missing_paths(runs, state.cwd, state.home())]
        try:
            names = programs(runs)
        except RecursionError:
            names = []
        aliased = [name for name in names if name in state.aliases]
        if aliased:
            alias = f"it uses your alias '{aliased[0]}'"
            return Checked(command, verdict, tuple(problems), untried=alias)
        problems += self._static(runs, names, state)
        run, untried = self._dry_run(runs, verdict, state)
        if run is not None and (why := _inconclusive(run)):
            run, untried = None, why
        seen = Trial(command, verdict, run).observed()
        if run is not None and run.failed:
            problems.append(f"it failed when conch tried it: {run.error_excerpt(lines=2)}")
        return Checked(command, verdict, tuple(dict.fromkeys(problems)), seen, untried)

    def _static(self, command: str, names: list[str], state: ShellState) -> list[str]:
        """Programs not installed, options not documented (``validation``'s static checks)."""
        from conch.validate import collect_help, static_check
        from conch.validate.helptext import locate_program

        opts = self.settings.validation
        if not opts.enabled or not names or all(n in opts.skip_commands for n in names):
            return []
        helps: dict[str, CommandHelp] = collect_help(names, opts, self.cache_dir)
        for name in names:
            if "/" in name:  # a path to a program, from the shell's directory
                helps[name] = locate_program(str(Path(state.cwd) / name))
        return static_check(command, helps)

    def _dry_run(
        self, command: str, verdict: Verdict, state: ShellState
    ) -> tuple[DryRun | None, str | None]:
        """The command's dry run, or why there is none."""
        from conch.execute.dryrun import SandboxDryRunner

        gen = self.settings.generation
        if not gen.dry_run:
            return None, "dry runs are turned off (generation.dry_run)"
        if verdict.risk not in _TRIED:
            kind = f"an {verdict.risk}" if verdict.risk is Risk.UNKNOWN else f"a {verdict.risk}"
            return None, f"a sandbox cannot judge {kind} command"
        if self._unavailable is not None:
            return None, self._unavailable
        runner = SandboxDryRunner(
            Path(state.cwd),
            state.shell,
            state.env,
            gen.dry_run_timeout_s,
            bwrap=self._bwrap,
            scratch=gen.dry_run_scratch,
        )
        if not runner.available:
            self._unavailable = runner.unavailable_reason or "the sandbox cannot run here"
            return None, self._unavailable
        self._bwrap = runner.bwrap
        return runner(command), None


def from_proposal(proposal: Proposal, state: ShellState) -> Checked:
    """The command the one-shot pipeline proposed, as the shell offers it: the pipeline's
    verdict (judged again when an alias in its first word changes what runs), what its dry
    run saw (a failure, or output that does not fit the request, is a problem), what
    validation found wrong, and the files it reads that do not exist. Nothing runs again."""
    command = proposal.command
    verdict = _verdict(command, proposal.verdict, state)
    if verdict.decision is Decision.REJECT:
        return Checked(command, verdict)
    problems = _missing(command, state)
    seen, untried = None, proposal.untried
    trial = proposal.trial_for(command)
    run = trial.dry_run if trial is not None else None
    if trial is not None and run is not None:
        if why := _inconclusive(run):
            untried = why
        else:
            seen = trial.observed()
            if run.failed:
                problems.append(f"it failed when conch tried it: {run.error_excerpt(lines=2)}")
            elif trial.outcome == "mismatch" and trial.mismatch:
                problems.append(f"it ran, but {trial.mismatch}")
    result = proposal.validation
    if result is not None and not result.valid and not result.skipped and not proposal.corrected:
        problems += result.issues
    return Checked(command, verdict, tuple(dict.fromkeys(problems)), seen, untried)


def correction_of(proposal: Proposal, state: ShellState) -> Checked | None:
    """The correction validation suggested for the proposed command (its own checks passed:
    ``conch.validate.recheck``), with the files it reads that do not exist; None when there
    is none."""
    command, verdict = proposal.correction, proposal.correction_verdict
    if command is None or verdict is None:
        return None
    verdict = _verdict(command, verdict, state)
    if verdict.decision is Decision.REJECT:
        return Checked(command, verdict)
    untried = "conch did not try the correction"
    return Checked(command, verdict, tuple(_missing(command, state)), untried=untried)


def _verdict(command: str, verdict: Verdict, state: ShellState) -> Verdict:
    """``verdict``, or the one on what the shell runs when an alias changes it."""
    runs = state.expand_alias(command)
    return verdict if runs == command else judge(runs, state.cwd)


def _missing(command: str, state: ShellState) -> list[str]:
    runs = state.expand_alias(command)
    return [m.problem for m in missing_paths(runs, state.cwd, state.home())]


def _inconclusive(run: DryRun) -> str | None:
    """Why a dry run says nothing of the command, if it does not: it did not finish in time
    (a long or interactive program), or its program wanted a terminal."""
    if run.timed_out:
        return "its dry run did not finish in time"
    if run.failed and _TERMINAL.search(run.stderr):
        return "its program wants a terminal, which a dry run has not"
    return None
