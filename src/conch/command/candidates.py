"""Choosing among candidate commands by what their dry runs did.

Each candidate is dry-run (see ``conch.execute.dryrun``) and sorted into an outcome: it printed
something (``ok``), it tried to change files (``wrote``, which a read-only dry run cannot
judge), it printed nothing, it complained on stderr (``warned``), or it failed (an error exit
with a message, or a timeout), or it printed something that does not fit the request
(``mismatch``, see ``conch.command.judge``). A command that tried to write and was run again in a throwaway
copy of the directory (a scratch run) is judged by that run: ``ok`` when it exited 0, even
silently or with notes on stderr (a write command that works prints nothing; ``dd``, ``git``
and ``tar`` report on stderr), unless what it wrote does not fit the request (``mismatch``,
``conch.command.judge.written_mismatch``), ``failed`` as any run, ``empty`` for a silent
non-zero exit, and still ``wrote`` when it wrote outside the copy.

The best outcome class wins; within it, candidates vote with what they printed (whitespace-
and order-insensitive), so the command that most samples agree on is chosen, and on a tie the
earliest (the greedy answer comes first). Write commands (scratch runs included) vote with the
command itself: what they print says little about what they did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from conch.execute.dryrun import DryRun
from conch.policy import Decision, Verdict

_SPACES = re.compile(r"[ \t]+")


# Outcome classes and their rank (lower is better). A write attempt ranks with printing: a
# read-only dry run cannot judge it. A write command that worked in its scratch copy is "ok"
# (a failed one "failed"). "untried": no dry run (unavailable, or policy-rejected).
# "mismatch": it worked, but what it printed does not fit the request (``conch.command.judge``).
RANK = {"ok": 0, "wrote": 0, "untried": 0, "empty": 1, "warned": 1, "mismatch": 1, "failed": 2}


@dataclass(slots=True)
class Trial:
    """One candidate command, the policy's verdict on it and its dry run (if any)."""

    command: str
    verdict: Verdict
    dry_run: DryRun | None = None
    source: str = "greedy"  # greedy | sample | repair
    examples: str = (
        "shipped"  # how its worked examples were found (conch.command.examples.RETRIEVALS)
    )
    likelihood: float | None = None  # the review's score, when it chose among answers
    forward: float | None = None  # the command's own log-probability, for the greedy one
    mismatch: str | None = None  # why its output does not fit the request (conch.command.judge)

    @property
    def outcome(self) -> str:
        run = self.dry_run
        if run is None:
            return "untried"
        if run.failed:
            return "failed"
        if run.wrote:
            return "wrote"
        if run.scratch:  # write commands report on stderr (dd, git, tar) and print nothing
            if run.exit_code != 0:
                return "empty"
            return "mismatch" if self.mismatch else "ok"
        if run.warned:
            return "warned"
        if not run.stdout.strip():
            return "empty"
        return "mismatch" if self.mismatch else "ok"

    def observed(self) -> str | None:
        """What the dry run saw, in a few words for the user; None when there was none."""
        run = self.dry_run
        if run is None:
            return None
        first = run.error_excerpt(lines=1, width=120)
        outcome = self.outcome
        if outcome == "failed":
            return f"failed (exit {run.exit_code}): {first}" if first else "failed"
        if outcome == "wrote":
            return "tried to change files, so a read-only dry run could not judge it"
        if run.scratch:
            where = "in a throwaway copy of this directory"
            did = f"worked {where}" if run.exit_code == 0 else f"exited {run.exit_code} {where}"
            changed = "; ".join(run.changes) if run.changes else "changed no file"
            but = f"; {self.mismatch}" if self.mismatch and run.changes else ""
            return f"{did}: {changed}{but}"
        if outcome == "warned":
            return f"worked, with a warning: {first}"
        if outcome == "mismatch":
            return f"worked, but {self.mismatch}"
        if outcome == "empty":
            return "ran and printed nothing" + (f" (exit {run.exit_code})" if run.exit_code else "")
        lines = len(run.stdout.splitlines())
        return f"worked, printed {lines} line{'s' if lines != 1 else ''}"

    def signature(self) -> tuple[str, ...]:
        """What the command did, for voting: its output lines normalised and sorted, or the
        command itself when the output says nothing (a write attempt, a scratch run, no dry
        run)."""
        run = self.dry_run
        if run is None or run.wrote or run.scratch:
            return ("command", " ".join(self.command.split()))
        text = run.stdout.decode("utf-8", errors="replace")
        lines = (_SPACES.sub(" ", line).strip() for line in text.splitlines())
        return ("output", *sorted(line for line in lines if line))

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "command": self.command,
            "source": self.source,
            "decision": str(self.verdict.decision),
            "outcome": self.outcome,
        }
        if self.examples != "shipped":
            data["examples"] = self.examples
        if self.likelihood is not None:
            data["likelihood"] = round(self.likelihood, 3)
        if self.forward is not None:
            data["forward"] = round(self.forward, 3)
        if self.dry_run is not None:
            data["exit_code"] = self.dry_run.exit_code
            if self.dry_run.scratch:
                data["scratch"] = True
            if self.outcome in ("failed", "warned"):
                data["error"] = self.dry_run.error_excerpt()
            if self.mismatch:
                data["mismatch"] = self.mismatch
        return data


def is_doubtful(trial: Trial) -> bool:
    """Whether a candidate's dry run gives reason to look for alternatives."""
    return trial.dry_run is not None and trial.outcome not in ("ok", "wrote")


def choose(trials: list[Trial]) -> int:
    """The index of the trial to propose (the first one when nothing is better)."""
    eligible = [i for i, t in enumerate(trials) if t.verdict.decision is not Decision.REJECT]
    if not eligible:
        return 0
    best = min(RANK[trials[i].outcome] for i in eligible)
    pool = [i for i in eligible if RANK[trials[i].outcome] == best]
    votes: dict[tuple[str, ...], list[int]] = {}
    for i in pool:
        votes.setdefault(trials[i].signature(), []).append(i)
    winner = max(votes.values(), key=lambda group: (len(group), -group[0]))
    return winner[0]
