"""What accuracy an early exit from conch's review keeps: stop after the first answer when it
looks good enough, and skip the answers made with examples found other ways.

    python -m benchmarks.experiments.early_exit benchmarks/results/accuracy-clean258.json

By default (``generation.review: 3``) conch makes up to three answers per request and picks one
by dry-run outcome, then by the model's likelihood of the request given the command
(``conch.command.propose``). A report of such a run records every candidate each answer tried
(``trials``; the first answer's have no ``examples`` key). For every task this takes the first
answer's chosen command, judges it at the normalised level as the benchmark judges a final
answer (the recorded verdict when it is the final command; otherwise run now in the sandbox,
references run again right before it), and scores stopping rules: a rule that stops takes the
first answer's command, one that does not takes the full review's. Per rule: normalised passes,
the tasks it stops early on, a paired sign test against the full review, and the model calls,
scoring calls and dry runs it saves. No model is involved.

Writes ``STEM.md`` and ``STEM.json`` (``--out``, default
``benchmarks/results/accuracy-early-exit``).
"""

from benchmarks.experiments.early_exit.answers import (
    Answer,
    TaskView,
    cost,
    reconstruct_choice,
    review_choice,
    split_answers,
    view,
)
from benchmarks.experiments.early_exit.report import main
from benchmarks.experiments.early_exit.rules import (
    Outcome,
    Rule,
    evaluate,
    held_out,
    recommend,
    rules,
    verdicts,
)

__all__ = [
    "Answer",
    "Outcome",
    "Rule",
    "TaskView",
    "cost",
    "evaluate",
    "held_out",
    "main",
    "recommend",
    "reconstruct_choice",
    "review_choice",
    "rules",
    "split_answers",
    "verdicts",
    "view",
]
