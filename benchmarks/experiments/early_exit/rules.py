"""Stopping rules for conch's review, scored on the recorded answers: when each stops after
the first answer, what it passes against the full review, and the thresholds chosen out of
sample."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.accuracy.report import sign_test, wilson
from benchmarks.experiments.early_exit.answers import (
    NOISE_P,
    PER_WORD_THRESHOLDS,
    RANK,
    SPLITS,
    THRESHOLDS,
    TUNED_FAMILIES,
    Cost,
    TaskView,
    cost,
    marked_choice,
    review_choice,
)

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
