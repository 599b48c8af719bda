"""Reading an accuracy report of conch: each task's answers, the trials each answer tried, the
one conch chose, and what making them cost."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SHIPPED = "shipped"  # the first answer's examples (its trials carry no "examples" key)

# conch.command.candidates.RANK, restated so that reading a report needs no conch import.
RANK = {"ok": 0, "wrote": 0, "untried": 0, "empty": 1, "warned": 1, "failed": 2}

# Likelihood thresholds swept for R2 (the sum of the request's token log-probabilities given
# the command) and for its per-word variant (that sum over the request's words + 1).
THRESHOLDS = (-60.0, -50.0, -40.0, -35.0, -30.0, -25.0, -20.0, -15.0, -10.0)
PER_WORD_THRESHOLDS = (-4.0, -3.5, -3.0, -2.75, -2.5, -2.25, -2.0, -1.75, -1.5)

# The paired sign test's level for "cannot be told from the full review".
NOISE_P = 0.05
# The out-of-sample check of tuned thresholds: these families, this many random halvings.
TUNED_FAMILIES = ("R2", "R2/w", "R4/w")
SPLITS = 500

Trial = dict[str, Any]


# -- reading a report: the answers of each task -----------------------------------------------


@dataclass(frozen=True, slots=True)
class Answer:
    """One of conch's answers to a request: its trials in order and the one it chose."""

    examples: str
    trials: tuple[Trial, ...]
    chosen: int
    reconstructed: int  # the choice rebuilt from outcomes and decisions (``reconstruct_choice``)
    determined: bool  # whether that rebuild did not need outputs the report lacks

    @property
    def choice(self) -> Trial:
        return self.trials[self.chosen]

    @property
    def command(self) -> str:
        return str(self.choice["command"])

    @property
    def outcome(self) -> str:
        return str(self.choice["outcome"])

    @property
    def likelihood(self) -> float | None:
        value = self.choice.get("likelihood")
        return None if value is None else float(value)

    @property
    def allowed(self) -> bool:
        return self.choice.get("decision") != "reject"

    @property
    def scratch(self) -> bool:
        return bool(self.choice.get("scratch"))

    @property
    def doubtful(self) -> bool:
        """Whether the greedy command gave reason for doubt: alternatives were sampled (or a
        repair asked for) in this answer."""
        return any(t.get("source") != "greedy" for t in self.trials)

    @property
    def generations(self) -> int:
        """Model calls that generated a command: one per trial, plus a repair that was asked
        for but brought back a command already tried (no new trial is recorded then)."""
        asked = 1 if self.repair_asked and not self._repair_recorded else 0
        return len(self.trials) + asked

    @property
    def repair_asked(self) -> bool:
        """conch asks for a repair when the choice before it failed its dry run, which ranks
        alone tell: every candidate the policy allowed before the repair failed."""
        before = [t for t in self.trials if t.get("source") not in ("repair", "reshaped")]
        ranks = [RANK[t["outcome"]] for t in before if t.get("decision") != "reject"]
        return bool(ranks) and min(ranks) == RANK["failed"]

    @property
    def _repair_recorded(self) -> bool:
        return any(t.get("source") == "repair" for t in self.trials)


def split_answers(trials: Sequence[Trial]) -> list[tuple[str, list[Trial]]]:
    """The trials grouped into answers, in order, by how their examples were found."""
    answers: list[tuple[str, list[Trial]]] = []
    for trial in trials:
        examples = str(trial.get("examples", SHIPPED))
        if not answers or answers[-1][0] != examples:
            answers.append((examples, []))
        answers[-1][1].append(trial)
    return answers


def _signature(trial: Trial) -> tuple[str, ...] | None:
    """What the trial votes with in ``conch.command.candidates.choose`` where the report tells
    (None: its output, which the report does not keep). Write attempts, scratch runs and
    untried commands vote with the command; a non-scratch run that printed nothing with an
    empty output."""
    if trial.get("scratch") or trial["outcome"] in ("wrote", "untried"):
        return ("command", " ".join(str(trial["command"]).split()))
    if trial["outcome"] == "empty":
        return ("output",)
    return None


def _choose_proxy(trials: Sequence[Trial]) -> tuple[int, bool]:
    """``candidates.choose`` on recorded trials: the best outcome class among those the policy
    allows, then the biggest vote, then the earliest. Candidates whose output is not recorded
    vote with their command text (identical commands print the same); the result is
    ``determined`` unless two different such commands were in the running."""
    eligible = [i for i, t in enumerate(trials) if t.get("decision") != "reject"]
    if not eligible:
        return 0, True
    best = min(RANK[trials[i]["outcome"]] for i in eligible)
    pool = [i for i in eligible if RANK[trials[i]["outcome"]] == best]
    votes: dict[tuple[str, ...], list[int]] = {}
    unknown: set[str] = set()
    for i in pool:
        signature = _signature(trials[i])
        if signature is None:
            command = " ".join(str(trials[i]["command"]).split())
            unknown.add(command)
            signature = ("unrecorded output", command)
        votes.setdefault(signature, []).append(i)
    winner = max(votes.values(), key=lambda group: (len(group), -group[0]))
    return winner[0], len(unknown) < 2


def reconstruct_choice(trials: Sequence[Trial]) -> tuple[int, bool]:
    """The trial an answer chose, rebuilt from outcomes and decisions, and whether the report
    holds everything that choice depends on. After a repair (or a reshaped retry) conch
    chooses again among all the answer's trials, so one choice over all of them is the
    answer's."""
    return _choose_proxy(trials)


def marked_choice(trials: Sequence[Trial]) -> int | None:
    """The trial conch itself marked as the answer's choice: the review scores exactly each
    answer's chosen command and records the score on it (``likelihood``)."""
    marked = [i for i, t in enumerate(trials) if t.get("likelihood") is not None]
    return marked[0] if len(marked) == 1 else None


def make_answer(examples: str, trials: Sequence[Trial]) -> Answer:
    rebuilt, determined = reconstruct_choice(trials)
    marked = marked_choice(trials)
    chosen = rebuilt if marked is None else marked
    return Answer(examples, tuple(trials), chosen, rebuilt, determined)


def review_choice(answers: Sequence[Answer]) -> int:
    """``_Request.review``'s pick: never a rejected answer over an allowed one, nor a worse
    dry-run outcome over a better one; then the likeliest request; the first on a tie."""

    def rank(i: int) -> tuple[bool, int, float, int]:
        answer = answers[i]
        score = answer.likelihood if answer.likelihood is not None else -math.inf
        return (answer.allowed, -RANK[answer.outcome], score, -i)

    return max(range(len(answers)), key=rank)


@dataclass(frozen=True, slots=True)
class TaskView:
    """One task of a conch report: the request, the answers and the recorded final result."""

    task: int
    request: str
    answers: tuple[Answer, ...]
    final_command: str | None
    final_passed: bool

    @property
    def first(self) -> Answer:
        return self.answers[0]

    @property
    def words(self) -> int:
        return len(self.request.split())

    @property
    def per_word(self) -> float | None:
        """The first answer's likelihood per word of the request (+1 for the end of reply), a
        rough per-token likelihood."""
        likelihood = self.first.likelihood
        return None if likelihood is None else likelihood / (self.words + 1)


def view(row: dict[str, Any]) -> TaskView:
    """A report row of conch as answers; raises ValueError when it has no trials."""
    trials = row.get("trials") or []
    if not trials:
        raise ValueError(f"task {row.get('task')}: no trials recorded")
    answers = tuple(make_answer(examples, group) for examples, group in split_answers(trials))
    if answers[0].examples != SHIPPED:
        raise ValueError(f"task {row.get('task')}: the first trial is not the first answer's")
    return TaskView(
        int(row["task"]), str(row["nl"]), answers, row.get("command"), bool(row["normalised"])
    )


# -- what each answer costs ---------------------------------------------------------------------


@dataclass(slots=True)
class Cost:
    """Model calls and dry runs of some answers to a request."""

    answers: int = 0
    generations: int = 0  # calls generating a command (greedy, samples, repairs)
    scores: int = 0  # likelihood calls (the review scores each distinct chosen command)
    dry_runs: int = 0  # sandbox runs (a command tried before is not run again)

    def add(self, other: Cost) -> None:
        self.answers += other.answers
        self.generations += other.generations
        self.scores += other.scores
        self.dry_runs += other.dry_runs

    @property
    def model_calls(self) -> int:
        return self.generations + self.scores

    def to_json(self) -> dict[str, int]:
        return {
            "answers": self.answers,
            "generations": self.generations,
            "scores": self.scores,
            "model_calls": self.model_calls,
            "dry_runs": self.dry_runs,
        }


def cost(answers: Sequence[Answer], scored: bool) -> Cost:
    """What making ``answers`` took; ``scored``: their chosen commands were scored (the review
    does it when it makes more than one answer, a likelihood rule for the first)."""
    seen: set[str] = set()
    dry_runs = 0
    for answer in answers:
        for trial in answer.trials:
            command = str(trial["command"])
            if command not in seen and "exit_code" in trial:
                dry_runs += 1
            seen.add(command)
    scores = len({a.command for a in answers}) if scored else 0
    return Cost(len(answers), sum(a.generations for a in answers), scores, dry_runs)
