"""Coverage-guided fuzzing of ``conch.policy.assess`` with atheris, in-process: the inputs
only ever reach the pure policy function, nothing runs.

    python -m benchmarks.policy.fuzz [--seconds 120] [--out benchmarks/results/policy-fuzz]

A child process runs atheris (libFuzzer) for the time budget over ``assess`` in safe and
unsafe mode, seeded with the bypass corpus; any exception but the policy's own is a crash,
and so is a verdict that breaks the policy's invariants (an unparsable or denylisted text
allowed, unsafe mode allowing anything). The parent reads libFuzzer's statistics and writes
``.json`` and ``.md`` with executions, seconds, crashes and coverage (edges and features).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results"
COMMAND = "python -m benchmarks.policy.fuzz --seconds {seconds}"


def _target(data: bytes) -> None:
    from conch.policy import Decision, PolicyContext, assess

    text = data.decode("utf-8", errors="replace")
    safe = assess(text)
    unsafe = assess(text, PolicyContext(unsafe=True))
    if unsafe.decision is Decision.ALLOW:
        raise AssertionError(f"unsafe mode allowed {text!r}")
    if (safe.denylisted or unsafe.denylisted) and Decision.REJECT not in (
        safe.decision,
        unsafe.decision,
    ):
        raise AssertionError(f"a denylisted command was not rejected: {text!r}")
    if safe.denylisted != unsafe.denylisted:
        raise AssertionError(f"the denylist depends on the mode: {text!r}")


def _child(seconds: int, corpus_dir: str) -> None:
    """Run atheris in this process until the budget is spent (libFuzzer exits the process)."""
    import atheris

    with atheris.instrument_imports():
        # imported here so that atheris instruments them for coverage
        import conch.policy
        import conch.policy.commands
        import conch.policy.denylist  # noqa: F401
    atheris.Setup(
        [
            sys.argv[0],
            f"-max_total_time={seconds}",
            "-print_final_stats=1",
            "-max_len=4096",
            "-timeout=20",
            "-rss_limit_mb=4096",
            corpus_dir,
        ],
        _target,
    )
    atheris.Fuzz()


def _seed(directory: Path) -> int:
    from benchmarks.policy.corpus import load_attacks

    count = 0
    for i, attack in enumerate(load_attacks()):
        data = attack.command.encode("utf-8", errors="surrogatepass")
        if len(data) <= 4096:
            (directory / f"seed-{i:04d}").write_bytes(data)
            count += 1
    return count


def _stat(pattern: str, text: str) -> int | None:
    found = re.findall(pattern, text)
    return int(found[-1]) if found else None


def run(seconds: int) -> dict[str, Any]:
    """Fuzz for ``seconds`` in a child process and return the figures."""
    with tempfile.TemporaryDirectory(prefix="conch-policy-fuzz-") as work:
        corpus = Path(work) / "corpus"
        corpus.mkdir()
        seeds = _seed(corpus)
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.policy.fuzz", "--child", str(seconds), str(corpus)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=seconds + 600,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        )
        elapsed = time.perf_counter() - started
        log = proc.stdout + proc.stderr
        crashed = ("==ERROR" in log) or ("Uncaught Python exception" in log)
        generated = len(list(corpus.iterdir())) - seeds
    return {
        "command": COMMAND.format(seconds=seconds),
        "budget_seconds": seconds,
        "seconds": round(elapsed, 1),
        "seed_inputs": seeds,
        "executions": _stat(r"stat::number_of_executed_units:\s*(\d+)", log),
        "executions_per_second": _stat(r"stat::average_exec_per_sec:\s*(\d+)", log),
        "coverage_edges": _stat(r"\bcov: (\d+)", log),
        "coverage_features": _stat(r"\bft: (\d+)", log),
        "new_corpus_inputs": generated,
        "peak_rss_mb": _stat(r"stat::peak_rss_mb:\s*(\d+)", log),
        "crashes": 1 if crashed else 0,
        "exit_code": proc.returncode,
        "crash_log": log[-4000:] if crashed else "",
    }


def markdown(result: dict[str, Any]) -> str:
    rows = [
        ("time budget (s)", result["budget_seconds"]),
        ("wall time (s)", result["seconds"]),
        ("seed inputs (the bypass corpus)", result["seed_inputs"]),
        ("executions", result["executions"]),
        ("executions per second", result["executions_per_second"]),
        ("coverage: edges (libFuzzer `cov`)", result["coverage_edges"]),
        ("coverage: features (libFuzzer `ft`)", result["coverage_features"]),
        ("new inputs kept for coverage", result["new_corpus_inputs"]),
        ("peak RSS (MB)", result["peak_rss_mb"]),
        ("**crashes or broken invariants**", f"**{result['crashes']}**"),
    ]
    lines = [
        "# Coverage-guided fuzzing of the safety policy (atheris)",
        "",
        f"Reproduce: `{result['command']}`. Inputs only reach `conch.policy.assess` (safe and "
        "unsafe mode); a crash is any exception, or a verdict that allows an unparsable or "
        "denylisted text, or lets unsafe mode allow anything, or a denylist that depends on "
        "the mode.",
        "",
        "| figure | value |",
        "|---|---:|",
        *(f"| {name} | {value} |" for name, value in rows),
    ]
    if result["crash_log"]:
        lines += ["", "## Crash", "", "```", result["crash_log"], "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        _child(int(argv[1]), argv[2])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=120)
    parser.add_argument("--out", type=Path, default=RESULTS / "policy-fuzz")
    args = parser.parse_args(argv)
    result = run(args.seconds)
    report = markdown(result)
    args.out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    args.out.with_suffix(".md").write_text(report, "utf-8")
    print(report, end="")
    return 1 if result["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
