"""Variants of conch with one part of the pipeline switched off, to measure what it adds.

``conch-no-dry-run``: the same ``propose`` call without dry runs, so without the extra
candidates and the repair they trigger (what ``conch --no-dry-run`` does).
"""

from __future__ import annotations

from benchmarks.accuracy.candidate import Candidate, Task
from benchmarks.accuracy.conch_tool import ConchGenerator, conch_candidate


class ConchNoDryRun(ConchGenerator):
    """conch with ``--no-dry-run``."""

    name = "conch-no-dry-run"

    def generate(self, task: Task) -> Candidate:
        return conch_candidate(self.provider, task.nl, None)
