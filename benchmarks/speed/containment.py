"""What containment costs per command: the same commands run by ``run_checked`` contained
(nobody asked: bubblewrap shaped by the verdict) and as a person's yes runs them (no sandbox).

Run: python -m benchmarks.speed.containment [--rounds 30] [--out FILE.md]

Each round runs every command both ways, alternately, in a scratch directory with a few
files, output captured; the figure is the wall time of ``run_checked`` (policy, plan, spawn,
wait), median and 90th percentile over the rounds. The difference is the sandbox's price:
starting ``bwrap``, its namespaces and mounts. Commands of several programs run through
conch's plan runner (a Python process) either way.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from conch.execute.checked import Answer, run_checked  # noqa: E402
from conch.execute.sandbox import find_sandbox  # noqa: E402
from conch.policy import ExecutionMode, PolicyContext, Verdict  # noqa: E402
from conch.policy.confirm import Confirmation, ConfirmOptions  # noqa: E402

COMMANDS = (
    "true",
    "ls -la",
    "wc -l notes.txt",
    "grep -n milk notes.txt",
    "sort notes.txt | uniq -c",
    "touch made.txt",
)


def _yes(command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
    return Answer.run()


def _once(command: str, work: Path, contained: bool) -> float:
    mode = ExecutionMode.FULL if contained else ExecutionMode.INTERACTIVE
    context = PolicyContext(mode=mode, cwd=work, sandbox_root=work)
    started = time.perf_counter()
    ran = run_checked(
        command,
        context,
        cwd=work,
        state_dir=None,
        approve=_yes,
        options=ConfirmOptions(mode=mode),
        interactive=False,
        timeout=30,
    )
    seconds = time.perf_counter() - started
    if (ran.contained is not None) != contained or ran.result.exit_code != 0:
        raise SystemExit(f"{command!r} did not run as measured: {ran.result}")
    return seconds


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass(frozen=True, slots=True)
class Timing:
    """One command's wall times, in milliseconds: medians and 90th percentiles over the rounds."""

    command: str
    approved_ms: float
    contained_ms: float
    approved_p90_ms: float
    contained_p90_ms: float


def measure(rounds: int) -> tuple[list[Timing], str]:
    """Every command ``rounds`` times both ways; the timings and where bubblewrap came from."""
    sandbox = find_sandbox()
    if not sandbox.usable:
        raise SystemExit(f"no sandbox here: {sandbox.error}")
    timings: list[Timing] = []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        (work / "notes.txt").write_text("milk\neggs\nmilk\nbread\n", encoding="utf-8")
        for command in COMMANDS:
            plain: list[float] = []
            boxed: list[float] = []
            for _ in range(rounds):
                boxed.append(_once(command, work, True))
                plain.append(_once(command, work, False))
                (work / "made.txt").unlink(missing_ok=True)
            timings.append(
                Timing(
                    command,
                    statistics.median(plain) * 1000,
                    statistics.median(boxed) * 1000,
                    _quantile(plain, 0.9) * 1000,
                    _quantile(boxed, 0.9) * 1000,
                )
            )
    return timings, str(sandbox.source)


def added_ms(timings: list[Timing]) -> list[float]:
    """What containment added to each command's median."""
    return [t.contained_ms - t.approved_ms for t in timings]


def markdown(timings: list[Timing], rounds: int, source: str, command: str) -> str:
    added = added_ms(timings)
    lines = [
        "# Containment: the cost per command",
        "",
        f"`{command}` on {platform.machine()}, {os.cpu_count()} CPUs, {source} bubblewrap. Wall "
        "time of `run_checked` (policy, plan, spawn, wait), output captured; medians and 90th "
        f"percentiles over the {rounds} rounds, in milliseconds.",
        "",
        "| command | approved (no sandbox) | contained | p90 approved | p90 contained |",
        "|---|---:|---:|---:|---:|",
    ]
    for t in timings:
        shown = t.command.replace("|", chr(92) + "|")
        lines.append(
            f"| `{shown}` | {t.approved_ms:.1f} | {t.contained_ms:.1f} "
            f"| {t.approved_p90_ms:.1f} | {t.contained_p90_ms:.1f} |"
        )
    lines += [
        "",
        f"Containment adds {statistics.median(added):.1f} ms per command (median of the "
        f"commands' medians; from {min(added):.1f} to {max(added):.1f} ms).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    timings, source = measure(args.rounds)
    command = f"python -m benchmarks.speed.containment --rounds {args.rounds}"
    text = markdown(timings, args.rounds, source, command)
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
