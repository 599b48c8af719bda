"""The early-exit analysis's report (Markdown and JSON) and its command line."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.accuracy.report import wilson
from benchmarks.experiments.early_exit.answers import NOISE_P, TaskView, view
from benchmarks.experiments.early_exit.rules import (
    Judgements,
    Outcome,
    Verdicts,
    checks,
    evaluate,
    held_out,
    recommend,
    rules,
    verdicts,
)

# The report goes beside the accuracy benchmark's (docs and conch's settings cite it there).
DEFAULT_OUT = Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "accuracy-early-exit"


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
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.experiments.early_exit",
        description="What accuracy an early exit from conch's review keeps.",
    )
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
    command = "python -m benchmarks.experiments.early_exit " + shlex.join(
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
