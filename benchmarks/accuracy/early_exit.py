"""What accuracy an early exit from conch's review keeps: stop after the first answer when it
looks good enough, and skip the answers made with examples found other ways.

    python -m benchmarks.accuracy.early_exit benchmarks/results/accuracy-clean258.json

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

from __future__ import annotations

import argparse
import json
import math
import random
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.accuracy.report import sign_test, wilson

SHIPPED = "shipped"  # the first answer's examples (its trials carry no "examples" key)
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "results" / "accuracy-early-exit"

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


# -- stopping rules ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rule:
    """When to stop after the first answer; ``scores_first``: deciding takes the likelihood of
    the first answer (one scoring call even when it stops)."""

    name: str
    description: str
    stops: Callable[[TaskView], bool]
    scores_first: bool = False
    family: str = ""


def _never(view: TaskView) -> bool:
    return False


def _always(view: TaskView) -> bool:
    return True


def _ok(view: TaskView) -> bool:
    return view.first.outcome == "ok"


def _ok_printed(view: TaskView) -> bool:
    return _ok(view) and not view.first.scratch


def _best_class(view: TaskView) -> bool:
    return view.first.allowed and RANK[view.first.outcome] == 0


def _ok_greedy(view: TaskView) -> bool:
    return _ok(view) and not view.first.doubtful


def _likely(threshold: float) -> Callable[[TaskView], bool]:
    def stops(view: TaskView) -> bool:
        likelihood = view.first.likelihood
        return _ok(view) and likelihood is not None and likelihood >= threshold

    return stops


def _likely_per_word(threshold: float) -> Callable[[TaskView], bool]:
    def stops(view: TaskView) -> bool:
        per_word = view.per_word
        return _ok(view) and per_word is not None and per_word >= threshold

    return stops


def _greedy_likely_per_word(threshold: float) -> Callable[[TaskView], bool]:
    def stops(view: TaskView) -> bool:
        return _ok_greedy(view) and _likely_per_word(threshold)(view)

    return stops


def rules(
    thresholds: Iterable[float] = THRESHOLDS, per_word: Iterable[float] = PER_WORD_THRESHOLDS
) -> list[Rule]:
    """The rules evaluated: R0-R4, their variants and the likelihood sweeps."""
    found = [
        Rule("R0", "never stop early (the full review)", _never, family="R0"),
        Rule("R1", "first answer's outcome is ok", _ok, family="R1"),
        Rule(
            "R1-printed",
            "R1, and it printed something (not a write command judged in a scratch copy)",
            _ok_printed,
            family="R1",
        ),
        Rule(
            "R1-class",
            "first answer in the best outcome class (ok, wrote or untried) and allowed",
            _best_class,
            family="R1",
        ),
    ]
    for t in thresholds:
        found.append(
            Rule(
                f"R2 T={t:g}",
                f"R1 and likelihood >= {t:g}",
                _likely(t),
                scores_first=True,
                family="R2",
            )
        )
    for t in per_word:
        found.append(
            Rule(
                f"R2/w t={t:g}",
                f"R1 and likelihood / (request words + 1) >= {t:g}",
                _likely_per_word(t),
                scores_first=True,
                family="R2/w",
            )
        )
    found += [
        Rule("R3", "always stop after the first answer (review: 1)", _always, family="R3"),
        Rule("R4", "R1 and the greedy command was not doubtful", _ok_greedy, family="R4"),
    ]
    for t in per_word:
        found.append(
            Rule(
                f"R4/w t={t:g}",
                f"R4 and likelihood / (request words + 1) >= {t:g}",
                _greedy_likely_per_word(t),
                scores_first=True,
                family="R4/w",
            )
        )
    return found


# -- scoring rules -------------------------------------------------------------------------------


@dataclass(slots=True)
class Outcome:
    """A rule's result on the tasks."""

    rule: Rule
    n: int = 0
    passed: int = 0
    stops: int = 0
    won: list[int] = field(default_factory=list)
    lost: list[int] = field(default_factory=list)
    spent: Cost = field(default_factory=Cost)
    full: Cost = field(default_factory=Cost)

    @property
    def p(self) -> float:
        return sign_test(len(self.won), len(self.lost))

    @property
    def rate(self) -> float:
        return self.passed / self.n if self.n else 0.0

    def to_json(self) -> dict[str, Any]:
        low, high = wilson(self.passed, self.n)
        return {
            "rule": self.rule.name,
            "family": self.rule.family,
            "description": self.rule.description,
            "n": self.n,
            "passed": self.passed,
            "rate": self.rate,
            "ci95": [low, high],
            "stops_early": self.stops,
            "won": len(self.won),
            "lost": len(self.lost),
            "p": self.p,
            "won_tasks": self.won,
            "lost_tasks": self.lost,
            "cost": self.spent.to_json(),
            "saved": {
                key: value - self.spent.to_json()[key] for key, value in self.full.to_json().items()
            },
        }


def evaluate(
    rule: Rule,
    views: Sequence[TaskView],
    first_passed: dict[int, bool],
    full_passed: dict[int, bool],
) -> Outcome:
    """``rule`` on ``views``: a task it stops on gets the first answer's verdict
    (``first_passed``), any other the full review's (``full_passed``)."""
    result = Outcome(rule)
    for item in views:
        stops = rule.stops(item)
        full = full_passed[item.task]
        passed = first_passed[item.task] if stops else full
        result.n += 1
        result.passed += passed
        result.stops += stops
        if passed and not full:
            result.won.append(item.task)
        elif full and not passed:
            result.lost.append(item.task)
        everything = cost(item.answers, scored=len(item.answers) > 1)
        result.full.add(everything)
        result.spent.add(cost(item.answers[:1], scored=rule.scores_first) if stops else everything)
    return result


# -- judging commands as the benchmark does --------------------------------------------------


class Judgements:
    """Normalised-level verdicts of commands on tasks, run as ``benchmarks.accuracy.run`` runs a
    final answer (the references run again right before each), cached per task and command,
    and in ``cache`` (JSON lines) across runs when given."""

    def __init__(self, scratch: Path, cache: Path | None = None) -> None:
        from benchmarks.accuracy.fixtures import load_tasks
        from benchmarks.accuracy.run import Runner

        self.runner = Runner(scratch)
        self.tasks = {task.index: task for task in load_tasks()}
        self.cache_path = cache
        self.known: dict[tuple[int, str], bool] = {}
        self.runs = 0
        self.missing_programs: set[int] = set()  # tasks whose reference exited 127
        if cache is not None and cache.exists():
            for line in cache.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    entry = json.loads(line)
                    self.known[(int(entry["task"]), str(entry["command"]))] = bool(
                        entry["normalised"]
                    )
                    if entry.get("reference_missing_program"):
                        self.missing_programs.add(int(entry["task"]))

    def passed(self, task_index: int, command: str) -> bool:
        key = (task_index, command)
        if key not in self.known:
            from benchmarks.accuracy.compare import compare

            task = self.tasks[task_index]
            references = self.runner.refs(task, again=True)
            if any(ref.exit_code == 127 for ref in references.values()):
                self.missing_programs.add(task_index)
            levels = compare(task, references, self.runner.run(task, command), None, command)
            self.known[key] = bool(levels.normalised)
            self.runs += 1
            if self.cache_path is not None:
                self.cache_path.parent.mkdir(parents=True, exist_ok=True)
                with self.cache_path.open("a", encoding="utf-8") as handle:
                    entry = {
                        "task": task_index,
                        "command": command,
                        "normalised": self.known[key],
                        "reference_missing_program": task_index in self.missing_programs,
                    }
                    handle.write(json.dumps(entry) + "\n")
        return self.known[key]


Verdict = Callable[[int, str], bool]


@dataclass(slots=True)
class Verdicts:
    """Per task: the first answer's verdict (recorded when it is the final command, else judged
    now), and the final command's verdict judged now, to see how far now differs from then."""

    first: dict[int, bool] = field(default_factory=dict)
    first_now: dict[int, bool] = field(default_factory=dict)
    first_source: dict[int, str] = field(default_factory=dict)
    final_recorded: dict[int, bool] = field(default_factory=dict)
    final_now: dict[int, bool] = field(default_factory=dict)


def verdicts(views: Sequence[TaskView], judge: Verdict, rejudge_final: bool = True) -> Verdicts:
    """Every verdict the rules need; ``judge(task, command)`` runs a command now."""
    found = Verdicts()
    for item in views:
        found.final_recorded[item.task] = item.final_passed
        final_now = None
        if rejudge_final and item.final_command:
            final_now = judge(item.task, item.final_command)
            found.final_now[item.task] = final_now
        command = item.first.command
        if command == item.final_command:
            found.first[item.task] = item.final_passed
            found.first_source[item.task] = "recorded"
            found.first_now[item.task] = item.final_passed if final_now is None else final_now
        else:
            now = judge(item.task, command)
            found.first[item.task] = now
            found.first_source[item.task] = "judged now"
            found.first_now[item.task] = now
    return found


# -- consistency checks ---------------------------------------------------------------------------


def checks(views: Sequence[TaskView]) -> dict[str, Any]:
    """How far the reconstruction from outcomes agrees with conch's own marks, and whether the
    review's rule picks the recorded final command."""
    first = [v.first for v in views]
    determined = [a for a in first if a.determined]
    from_first = [v for v in views if v.final_command == v.first.command]
    review_ok = [v for v in views if v.answers[review_choice(v.answers)].command == v.final_command]
    unmarked = [v.task for v in views if marked_choice(v.first.trials) is None]
    return {
        "tasks": len(views),
        "first_unmarked": unmarked,
        "reconstruction_determined": len(determined),
        "reconstruction_agrees_when_determined": sum(
            a.reconstructed == a.chosen for a in determined
        ),
        "reconstruction_undetermined_agrees": sum(
            a.reconstructed == a.chosen for a in first if not a.determined
        ),
        "reconstruction_undetermined": len(first) - len(determined),
        "reconstruction_disagrees": [
            {
                "task": v.task,
                "marked": v.first.command,
                "rebuilt": v.first.trials[v.first.reconstructed]["command"],
                "determined": v.first.determined,
            }
            for v in views
            if v.first.reconstructed != v.first.chosen
        ],
        "final_from_first_answer": len(from_first),
        "review_choice_reproduces_final": len(review_ok),
        "review_choice_mismatch": [v.task for v in views if v not in review_ok],
        "first_answer_outcomes": _counts(a.outcome for a in first),
        "first_answer_doubtful": sum(a.doubtful for a in first),
    }


def _counts(values: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return dict(sorted(counts.items()))


def held_out(
    views: Sequence[TaskView],
    first_passed: dict[int, bool],
    full_passed: dict[int, bool],
    families: Sequence[str] = TUNED_FAMILIES,
    splits: int = SPLITS,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Threshold choice checked out of sample. For each likelihood family and each of
    ``splits`` random halvings of the tasks, the threshold stopping on the most tasks of one
    half while losing none net there (none at all when no threshold manages it) is scored on
    the other half. Per family: the mean change in passes against the full review, scaled to
    all the tasks, the mean share of tasks stopping early, and the thresholds chosen."""
    n = len(views)
    every = rules()
    results = []
    for family in families:
        members = [r for r in every if r.family == family]
        stops = {r.name: [r.stops(v) for v in views] for r in members}
        full = [int(full_passed[v.task]) for v in views]
        gain = {
            name: [
                (int(first_passed[v.task]) - full[i]) if flags[i] else 0
                for i, v in enumerate(views)
            ]
            for name, flags in stops.items()
        }
        rng = random.Random(seed)
        deltas: list[float] = []
        shares: list[float] = []
        chosen: dict[str, int] = {}
        for _ in range(splits):
            order = list(range(n))
            rng.shuffle(order)
            tune, test = order[: n // 2], order[n // 2 :]
            fits = [r.name for r in members if sum(gain[r.name][i] for i in tune) >= 0]
            pick = max(fits, key=lambda name: sum(stops[name][i] for i in tune), default=None)
            label = pick or "none"
            chosen[label] = chosen.get(label, 0) + 1
            if pick is None:
                deltas.append(0.0)
                shares.append(0.0)
                continue
            deltas.append(sum(gain[pick][i] for i in test) * n / len(test))
            shares.append(sum(stops[pick][i] for i in test) / len(test))
        results.append(
            {
                "family": family,
                "splits": splits,
                "mean_change_in_passes": sum(deltas) / splits,
                "mean_share_stopping_early": sum(shares) / splits,
                "chosen": dict(sorted(chosen.items(), key=lambda item: -item[1])),
            }
        )
    return results


@dataclass(frozen=True, slots=True)
class Picks:
    """The rules stopping early on the most tasks under two readings of "within noise"."""

    no_net_loss: Outcome | None  # passes at least as many tasks as the full review
    not_significant: Outcome | None  # the paired sign test does not reject at NOISE_P


def recommend(outcomes: Sequence[Outcome]) -> Picks:
    """Among rules that stop early at all: the one stopping on the most tasks with no net loss
    against the full review, and the one stopping on the most whose loss the sign test cannot
    tell from noise; on a tie, the one passing more, then one needing no scoring call."""
    full = next((o.passed for o in outcomes if o.rule.name == "R0"), None)

    def best(fits: list[Outcome]) -> Outcome | None:
        return max(fits, key=lambda o: (o.stops, o.passed, not o.rule.scores_first), default=None)

    stopping = [o for o in outcomes if o.stops > 0]
    no_loss = [o for o in stopping if full is not None and o.passed >= full]
    return Picks(best(no_loss), best([o for o in stopping if o.p >= NOISE_P]))


# -- the report ----------------------------------------------------------------------------------


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def _rate_cell(o: Outcome) -> str:
    low, high = wilson(o.passed, o.n)
    return f"{100 * o.rate:.1f}% [{100 * low:.1f}–{100 * high:.1f}]"


def _p(value: float) -> str:
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"


def rules_table(outcomes: Sequence[Outcome]) -> list[str]:
    lines = [
        "| rule | stops after the first answer when | passed | rate [95% CI] | stops early"
        " | won / lost vs full review | sign test p |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        lines.append(
            f"| {o.rule.name} | {o.rule.description} | {o.passed}/{o.n} | {_rate_cell(o)}"
            f" | {o.stops} ({_pct(o.stops, o.n)}) | {len(o.won)} / {len(o.lost)} | {_p(o.p)} |"
        )
    return lines


def cost_table(outcomes: Sequence[Outcome]) -> list[str]:
    lines = [
        "| rule | answers made | generation calls | scoring calls | model calls | dry runs |",
        "|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        spent, full = o.spent.to_json(), o.full.to_json()
        cells = [
            f"{spent[key]} (−{full[key] - spent[key]}, {_pct(full[key] - spent[key], full[key])})"
            for key in ("answers", "generations", "scores", "model_calls", "dry_runs")
        ]
        lines.append(f"| {o.rule.name} | " + " | ".join(cells) + " |")
    return lines


def _pick_line(label: str, o: Outcome | None, full: Outcome) -> str:
    if o is None:
        return f"- {label}: no rule that stops early."
    return (
        f"- {label}: **{o.rule.name}** ({o.rule.description}): {o.passed}/{o.n} against"
        f" {full.passed}/{full.n}, stopping early on {o.stops} ({_pct(o.stops, o.n)}) of the"
        f" requests, {len(o.won)} won / {len(o.lost)} lost (p = {_p(o.p)})."
    )


@dataclass(frozen=True, slots=True)
class Findings:
    """Everything the report shows."""

    command: str
    report_path: str
    views: Sequence[TaskView]
    verdicts: Verdicts
    outcomes: Sequence[Outcome]
    outcomes_now: Sequence[Outcome]
    checks: dict[str, Any]
    held_out: list[dict[str, Any]]
    judge_runs: int
    missing_programs: list[int]


def render(f: Findings) -> str:
    n = len(f.views)
    found, check = f.verdicts, f.checks
    judged_now = sum(1 for s in found.first_source.values() if s == "judged now")
    differ = [t for t in found.final_now if found.final_now[t] != found.final_recorded[t]]
    now_pass = sum(found.final_now.values())
    picks = recommend(f.outcomes)
    r0 = next(o for o in f.outcomes if o.rule.name == "R0")
    differ_text = f" (tasks {', '.join(map(str, differ))})" if differ else ""
    outcomes_text = ", ".join(
        f"{name} {count}"
        for name, count in sorted(check["first_answer_outcomes"].items(), key=lambda i: -i[1])
    )
    lines = [
        "# Early exit from conch's review: what accuracy stopping after the first answer keeps",
        "",
        f"Command: `{f.command}`",
        "",
        f"Report read: `{f.report_path}`, its conch rows ({n} clean tasks, made with",
        "`generation.review: 3`).",
        "",
        "Each task's first answer (the trials without an `examples` key) is taken at the",
        "command it chose. A stopping rule that stops keeps that command: answers 2 and 3",
        "are never made or scored. One that does not stop takes the full review's recorded",
        "final command. Every verdict is at the benchmark's headline level, **normalised**",
        "(same tree state and the same stdout after normalisation, against either",
        "reference). When the first answer's command is also the final command, its",
        "recorded verdict is reused. Otherwise it was run now in the same sandbox",
        f"({judged_now} tasks), with the references run again right before it as the",
        "benchmark does. No model was run.",
        "",
        "## Checks",
        "",
        "- The first answer's choice is the trial conch marked with the review's likelihood.",
        "  The review scores exactly each answer's chosen command and records the score on",
        f"  it; {n - len(check['first_unmarked'])}/{n} first answers carry exactly one mark.",
        "- The choice was also rebuilt from the recorded outcomes and policy decisions, as",
        "  `candidates.choose` makes it (best outcome class, then the vote, then the earliest).",
        f"  On {check['reconstruction_determined']} tasks the report holds everything that",
        "  choice depends on, and the rebuilt choice agrees with the mark on",
        f"  {check['reconstruction_agrees_when_determined']} of them. On the other"
        f" {check['reconstruction_undetermined']}, the vote",
        "  depends on what different commands printed, which the report does not keep;",
        "  voting by command text agrees with the mark on"
        f" {check['reconstruction_undetermined_agrees']} of them.",
        f"- The final command came from the first answer on {check['final_from_first_answer']}"
        f"/{n} tasks. The review's rule",
        "  (allowed, outcome class, likelihood, earliest), applied to the three marked",
        f"  choices, gives the recorded final command on {check['review_choice_reproduces_final']}"
        f"/{n}.",
        f"- First answers' outcomes: {outcomes_text}. The greedy command",
        f"  was doubtful, so alternatives were sampled, on {check['first_answer_doubtful']} tasks.",
        f"- R0 uses the recorded verdicts, so it gives the recorded {r0.passed}/{n} by",
        f"  construction. Re-judged now, the final commands pass {now_pass}/{len(found.final_now)}:"
        f" {len(differ)} of the {len(found.final_now)} R0",
        f"  verdicts differ from the recorded ones{differ_text}.",
        f"- Tasks where a reference command's program was missing on this machine (exit 127):"
        f" {len(f.missing_programs)}{' ' + str(f.missing_programs) if f.missing_programs else ''}"
        ". The tools `benchmarks/accuracy/setup.sh` installs must be present; if one",
        "  is missing, a reference and a candidate that both fail to find it count as a match.",
        f"- Commands run in the sandbox for this report (each after its task's two references):"
        f" {f.judge_runs}; any others came from a cache.",
        "",
        "## Stopping rules",
        "",
        "Normalised level, with recorded verdicts wherever the command is the final one.",
        "Won / lost counts tasks the rule passes and the full review fails, and the other way",
        "round. p is the two-sided exact sign test on those tasks.",
        "",
        *rules_table(f.outcomes),
        "",
        "## What each rule saves",
        "",
        "Totals over the tasks, with the saving against the full review in brackets.",
        "Columns: answers made; model calls that generate a command (greedy, samples,",
        "repairs); likelihood scoring calls; the sum of those two; and dry runs in the",
        "sandbox. A likelihood rule has to score the first answer even when it stops. The",
        "full review scores each distinct chosen command.",
        "",
        *cost_table(f.outcomes),
        "",
    ]
    if f.outcomes_now and differ:
        lines += [
            "## The same rules with every verdict judged now",
            "",
            "Here both the first answer's verdict and the final command's come from this",
            "report's own runs, so a difference between then and now cannot favour either",
            "side.",
            "",
            "| rule | passed | rate [95% CI] | stops early | won / lost vs full review (now) | p |",
            "|---|---|---|---|---|---|",
        ]
        for o in f.outcomes_now:
            lines.append(
                f"| {o.rule.name} | {o.passed}/{o.n} | {_rate_cell(o)} | {o.stops}"
                f" | {len(o.won)} / {len(o.lost)} | {_p(o.p)} |"
            )
        lines.append("")
    elif f.outcomes_now:
        lines += [
            "Every final command's verdict judged now equals the recorded one, so scoring",
            "both sides with verdicts judged now gives the same table.",
            "",
        ]
    splits = f.held_out[0]["splits"] if f.held_out else 0
    lines += [
        "## Likelihood thresholds chosen out of sample",
        "",
        "The sweeps above choose a threshold on the same tasks they score it on. This check",
        f"draws {splits} random halvings of the tasks. For each family and each halving, it",
        "takes the threshold that stops early on the most tasks of one half without losing",
        "any task net there (or no threshold, if every one loses), and scores that",
        "threshold on the other half. The change in passes is scaled to all",
        f"{n} tasks.",
        "",
        "| family | mean change in passes vs full review | mean share stopping early"
        " | thresholds chosen (times) |",
        "|---|---|---|---|",
    ]
    for fold in f.held_out:
        chosen = ", ".join(f"{name} ({times})" for name, times in list(fold["chosen"].items())[:4])
        lines.append(
            f"| {fold['family']} | {fold['mean_change_in_passes']:+.1f}"
            f" | {100 * fold['mean_share_stopping_early']:.1f}% | {chosen} |"
        )
    lines += [
        "",
        "## Which rule stops early the most while staying within noise",
        "",
        _pick_line("Losing no task net", picks.no_net_loss, r0),
        _pick_line(
            f"Loss not significant (sign test p >= {NOISE_P}), a weak test on {n} tasks",
            picks.not_significant,
            r0,
        ),
        "",
        "## Caveats",
        "",
        "- Same recorded answers: every rule is scored on the candidates this one run made,",
        "  and there was no new model run. The first answer is made before any other, so a",
        "  rule that stops early would in practice give the first answer recorded here, up",
        "  to run-to-run differences. (The `conch-one-answer` rows in the same report come",
        "  from an earlier run on earlier code.)",
        "- Commands that were not the final answer are judged now, not at run time.",
        "  Outputs that depend on the clock (`date`, fresh mtimes) or on the installed",
        "  tools may differ. The Checks section gives how often the final commands' verdicts",
        "  now differ from then; when some do, a second table scores both sides with",
        "  verdicts judged now.",
        "- The likelihood thresholds are swept on the same tasks they are scored on. The",
        "  out-of-sample check shows how much of a tuned threshold's result holds. The",
        "  per-word variant divides by the request's words + 1, a rough stand-in for its",
        "  token count.",
        "- Model calls are counted from the recorded trials. A repair that came back with a",
        "  command already tried adds no trial, so it is inferred from the outcomes. Calls",
        "  that validation makes after the choice are the same for every rule and are not",
        "  counted. The report's per-task seconds are not used, because that run had two",
        "  shards sharing one server.",
        "- Only the normalised level is scored (the judged level would need the model).",
    ]
    return "\n".join(lines) + "\n"


def load_views(path: Path) -> list[TaskView]:
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    picked = [r for r in rows if r["tool"] == "conch" and r.get("clean", True)]
    if not picked:
        raise ValueError("no conch rows")
    return sorted((view(r) for r in picked), key=lambda v: v.task)


def analyse(views: Sequence[TaskView], found: Verdicts) -> tuple[list[Outcome], list[Outcome]]:
    """Every rule with the recorded verdicts, and with every verdict judged now."""
    every = rules()
    recorded = [evaluate(r, views, found.first, found.final_recorded) for r in every]
    now: list[Outcome] = []
    if len(found.final_now) == len(views):
        now = [evaluate(r, views, found.first_now, found.final_now) for r in every]
    return recorded, now


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="a conch report JSON (generation.review: 3)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="writes OUT.md, OUT.json")
    parser.add_argument(
        "--cache", type=Path, default=None, help="keep sandbox verdicts in this JSON-lines file"
    )
    args = parser.parse_args(argv)
    try:
        views = load_views(args.report)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        parser.error(f"{args.report}: not a readable conch report with trials ({exc})")
    with tempfile.TemporaryDirectory(prefix="conch-early-exit-") as scratch:
        judgements = Judgements(Path(scratch), args.cache)
        found = verdicts(views, judgements.passed)
    outcomes, outcomes_now = analyse(views, found)
    command = "python -m benchmarks.accuracy.early_exit " + shlex.join(
        sys.argv[1:] if argv is None else argv
    )
    findings = Findings(
        command,
        str(args.report),
        views,
        found,
        outcomes,
        outcomes_now,
        checks(views),
        held_out(views, found.first, found.final_recorded),
        judgements.runs,
        sorted(judgements.missing_programs),
    )
    text = render(findings)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{args.out}.md").write_text(text, encoding="utf-8")
    Path(f"{args.out}.json").write_text(
        json.dumps(to_json(findings), indent=1) + "\n", encoding="utf-8"
    )
    print(text)
    return 0


def to_json(f: Findings) -> dict[str, Any]:
    found = f.verdicts
    picks = recommend(f.outcomes)
    return {
        "meta": {"command": f.command, "report": f.report_path, "tasks": len(f.views)},
        "checks": f.checks,
        "judge_runs": f.judge_runs,
        "references_missing_a_program": f.missing_programs,
        "final_rejudged_now": {
            "passed": sum(found.final_now.values()),
            "differ_from_recorded": [
                t for t in found.final_now if found.final_now[t] != found.final_recorded[t]
            ],
        },
        "rules": [o.to_json() for o in f.outcomes],
        "rules_judged_now": [o.to_json() for o in f.outcomes_now],
        "held_out": f.held_out,
        "picks": {
            "no_net_loss": picks.no_net_loss.rule.name if picks.no_net_loss else None,
            "not_significant": picks.not_significant.rule.name if picks.not_significant else None,
        },
        "tasks": [
            {
                "task": v.task,
                "first_command": v.first.command,
                "first_outcome": v.first.outcome,
                "first_likelihood": v.first.likelihood,
                "first_doubtful": v.first.doubtful,
                "first_passed": found.first[v.task],
                "first_verdict": found.first_source[v.task],
                "first_passed_now": found.first_now[v.task],
                "final_command": v.final_command,
                "final_passed": found.final_recorded[v.task],
                "final_passed_now": found.final_now.get(v.task),
            }
            for v in f.views
        ],
    }


if __name__ == "__main__":
    raise SystemExit(main())
