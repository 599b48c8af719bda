"""How likely the model finds its own first answer: a check that costs nothing at generation.

    python -m benchmarks.experiments.early_exit.forward_scores --server http://127.0.0.1:18080/v1 \
        [--early-exit benchmarks/results/accuracy-early-exit.json] \
        [--out benchmarks/results/accuracy-forward-scores]

conch's early stop (``generation.review_stop``) keeps the first answer when its dry run worked
and the request is likely enough given the command (the *reverse* score, one extra model call
per request). The *forward* score, the command's own log-probability given the prompt it was
generated from, comes with the generation itself. This measures whether the forward score
tells good first answers from bad as well as the reverse one does.

For every task of an early-exit analysis (``benchmarks.experiments.early_exit``, which records
per task the first answer's command and outcome and whether it and the full review pass),
the first answer's prompt is rebuilt as conch builds it (the same worked examples, the same
system prompt for the task's platform) and the command's tokens are forced through the
server (``conch.providers.llama_server``), token by token. Recorded per task: the sum, the
mean and the lowest of the token log-probabilities.

Then stopping rules are scored as ``early_exit`` scores them: a rule that stops takes the
first answer's verdict, one that does not the full review's. ``F T=...`` stops when the first
answer was the greedy one, its dry run worked and the forward sum is at least T; ``Fmean``
and ``Fmin`` use the mean and the lowest token log-probability; ``R2 T=-40`` is the shipped
rule (reverse score); ``F T=... or R2 T=-40`` is how conch applies a forward threshold
(``generation.review_stop_forward``): the forward check first, the score only when it does not
stop. Tasks whose first answer was not the greedy command are never stopped by a forward rule
(the score comes with the greedy generation only).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from benchmarks.accuracy.conch_tool import task_platform
from benchmarks.accuracy.fixtures import load_tasks
from benchmarks.accuracy.report import sign_test, wilson

# Beside the accuracy benchmark's reports: docs and conch's settings cite them there.
RESULTS = Path(__file__).resolve().parents[3] / "benchmarks" / "results"
SUMS = (-1.0, -1.5, -2.0, -3.0, -4.0, -5.0, -6.0, -8.0, -10.0, -15.0)
MEANS = (-0.05, -0.1, -0.15, -0.2, -0.3, -0.4, -0.5, -0.75, -1.0)
MINS = (-0.5, -1.0, -1.5, -2.0, -2.5, -3.0, -4.0, -5.0, -6.0)


def first_prompt(request: str, shell: str) -> list[Any]:
    """The messages of conch's first answer to ``request`` at the default settings, as
    ``conch.command.generate.generate_events`` builds them (unsafe mode: no mode rules)."""
    from conch.command.generate import select_examples
    from conch.command.request import RequestContext, build_messages
    from conch.config.settings import Settings

    settings = Settings()
    prompt, gen = settings.default_prompt, settings.generation
    examples = select_examples(prompt, request, gen.few_shot)
    ctx = RequestContext(request=request)
    return build_messages(prompt, task_platform(shell).describe(), ctx, examples)


def token_logprobs(
    client: httpx.Client, root: str, messages: Sequence[Any], reply: str
) -> list[float]:
    """Each token's log-probability of ``reply`` after ``messages``, and of its end."""
    chat = [m.to_openai() for m in messages]
    prompt = client.post(root + "/apply-template", json={"messages": chat}).json()["prompt"]
    tokens = client.post(root + "/tokenize", json={"content": reply}).json()["tokens"]
    grammar = "root ::= " + " ".join(f"<[{int(t)}]>" for t in tokens)
    body = {
        "prompt": prompt,
        "grammar": grammar,
        "n_predict": len(tokens) + 2,
        "n_probs": 1,
        "temperature": 0,
        "cache_prompt": True,
    }
    done = client.post(root + "/completion", json=body).json()
    return [float(p["logprob"]) for p in done["completion_probabilities"]]


def collect(server: str, tasks: Sequence[dict[str, Any]]) -> dict[int, dict[str, float]]:
    """Forward scores of every task's first answer, by task index."""
    root = server.rstrip("/").removesuffix("/v1")
    shells = {t.index: t.shell for t in load_tasks()}
    out: dict[int, dict[str, float]] = {}
    with httpx.Client(timeout=300) as client:
        for n, task in enumerate(tasks, 1):
            index, command = int(task["task"]), str(task["first_command"])
            messages = first_prompt(_request(index), shells[index])
            probs = token_logprobs(client, root, messages, command)
            out[index] = {
                "sum": round(sum(probs), 3),
                "mean": round(sum(probs) / len(probs), 4),
                "min": round(min(probs), 3),
                "tokens": len(probs),
            }
            print(f"[{n}/{len(tasks)}] #{index} {out[index]}", file=sys.stderr)
    return out


def _request(index: int) -> str:
    return next(t.nl for t in load_tasks() if t.index == index)


Stop = Callable[[dict[str, Any], dict[str, float] | None], bool]


def _forward(key: str, threshold: float) -> Stop:
    def stop(task: dict[str, Any], score: dict[str, float] | None) -> bool:
        greedy_ok = task["first_outcome"] == "ok" and not task["first_doubtful"]
        return greedy_ok and score is not None and score[key] >= threshold

    return stop


def _reverse(threshold: float) -> Stop:
    def stop(task: dict[str, Any], score: dict[str, float] | None) -> bool:
        likely = task["first_likelihood"]
        return task["first_outcome"] == "ok" and likely is not None and likely >= threshold

    return stop


def _either(first: Stop, second: Stop) -> Stop:
    def stop(task: dict[str, Any], score: dict[str, float] | None) -> bool:
        return first(task, score) or second(task, score)

    return stop


def score_rules(
    tasks: Sequence[dict[str, Any]], scores: dict[int, dict[str, float]]
) -> list[dict[str, Any]]:
    """Every rule's normalised passes against the full review's, paired."""
    rules: list[tuple[str, Stop]] = [("R2 T=-40 (shipped, reverse)", _reverse(-40.0))]
    rules += [(f"F T={t:g}", _forward("sum", t)) for t in SUMS]
    rules += [(f"Fmean t={t:g}", _forward("mean", t)) for t in MEANS]
    rules += [(f"Fmin t={t:g}", _forward("min", t)) for t in MINS]
    # As conch applies it: the forward check first, the score only when it does not stop.
    rules += [
        (f"F T={t:g} or R2 T=-40", _either(_forward("sum", t), _reverse(-40.0))) for t in SUMS
    ]
    full = sum(bool(t["final_passed_now"]) for t in tasks)
    rows = []
    for name, stop in rules:
        passed = won = lost = stopped = 0
        for task in tasks:
            early = stop(task, scores.get(int(task["task"])))
            stopped += early
            result = bool(task["first_passed_now"] if early else task["final_passed_now"])
            final = bool(task["final_passed_now"])
            passed += result
            won += result and not final
            lost += final and not result
        low, high = wilson(passed, len(tasks))
        rows.append(
            {
                "rule": name,
                "passed": passed,
                "ci95": [round(low, 3), round(high, 3)],
                "stops_early": stopped,
                "won": won,
                "lost": lost,
                "p": round(sign_test(won, lost), 3),
                "full_review_passed": full,
            }
        )
    return rows


def render(rows: Sequence[dict[str, Any]], command: str, n: int) -> str:
    lines = [
        "# The forward score as the early stop's check",
        "",
        f"`{command}`",
        "",
        f"{n} clean tasks; a rule that stops takes the first answer's verdict (normalised), one "
        "that does not the full review's. Won/lost: tasks against the full review; p: paired "
        "sign test.",
        "",
        "| rule | passed | 95% CI | stops after one answer | won | lost | p |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        low, high = r["ci95"]
        lines.append(
            f"| {r['rule']} | {r['passed']}/{n} | {low:.1%}–{high:.1%} | {r['stops_early']} "
            f"| {r['won']} | {r['lost']} | {r['p']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--server", required=True, help="an OpenAI-compatible llama.cpp …/v1")
    parser.add_argument(
        "--early-exit", type=Path, default=RESULTS / "accuracy-early-exit.json", metavar="JSON"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "accuracy-forward-scores")
    args = parser.parse_args(argv)
    tasks = json.loads(args.early_exit.read_text())["tasks"]
    cached = args.out.with_suffix(".json")
    scores: dict[int, dict[str, float]] = {}
    if cached.exists():
        scores = {int(k): v for k, v in json.loads(cached.read_text())["scores"].items()}
    missing = [t for t in tasks if int(t["task"]) not in scores]
    scores.update(collect(args.server, missing))
    rows = score_rules(tasks, scores)
    command = "python -m benchmarks.experiments.early_exit.forward_scores " + " ".join(
        argv or sys.argv[1:]
    )
    data = {"command": command, "rules": rows, "scores": {str(k): v for k, v in scores.items()}}
    cached.write_text(json.dumps(data, indent=1) + "\n")
    text = render(rows, command, len(tasks))
    args.out.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
