"""Where a warm request spends its time: a breakdown of conch's pipeline, request by request.

Run: python benchmarks/speed/profile.py [--tasks 10] [--config FILE] [--out FILE.json]

Each request goes through ``conch.command.oneshot.OneShot``, the library call ``conch -p
REQUEST`` makes (the user's default settings, or those of ``--config``), on the warm model service
(started first, its model loaded before timing), in a scratch directory. Every call the
pipeline makes is timed where it happens: each generation (prompt tokens evaluated, tokens
reused from the engine's prompt cache, tokens generated, seconds), each likelihood score,
each dry run, and validation; what is left is conch's own work (examples, policy, parsing).
The subset is the latency benchmark's: every fifth clean NL2SH-ALFA task.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.speed.latency import subset  # noqa: E402


class Timed:
    """A provider that times every call of the provider it wraps."""

    def __init__(self, inner: Any, log: list[dict[str, Any]]) -> None:
        self.inner, self.log, self.name = inner, log, inner.name

    def stream(self, messages: Sequence[Any], options: Any, tools: Any = None) -> Iterator[Any]:
        from conch.messages import Finished

        start = time.perf_counter()
        row: dict[str, Any] = {"kind": "generate", "temperature": options.temperature}
        for event in self.inner.stream(messages, options, tools):
            if isinstance(event, Finished):
                timings = event.timings or {}
                row.update(
                    prompt=event.usage.prompt_tokens,
                    generated=event.usage.completion_tokens,
                    evaluated=timings.get("prompt_n"),
                    reused=timings.get("cache_n"),
                )
            yield event
        row["seconds"] = time.perf_counter() - start
        self.log.append(row)

    def likelihood(self, messages: Sequence[Any], reply: str) -> float | None:
        start = time.perf_counter()
        try:
            return self.inner.likelihood(messages, reply)  # type: ignore[no-any-return]
        finally:
            self.log.append({"kind": "score", "seconds": time.perf_counter() - start})

    def close(self) -> None:
        self.inner.close()


class TimedRunner:
    """A dry runner that times every dry run."""

    def __init__(self, inner: Any, log: list[dict[str, Any]]) -> None:
        self.inner, self.log = inner, log

    def __call__(self, command: str) -> Any:
        start = time.perf_counter()
        try:
            return self.inner(command)
        finally:
            self.log.append({"kind": "dry run", "seconds": time.perf_counter() - start})


def profile(requests: list[str], work: Path) -> list[dict[str, Any]]:
    from conch.command.oneshot import OneShot, OneShotRequest
    from conch.config.paths import Paths
    from conch.config.settings import load_settings
    from conch.daemon import open_provider

    loaded = load_settings(os.environ, Paths.default(), work, {}, lambda _: False)
    settings = loaded.settings
    cache_dir = Paths.default().cache_dir

    class TimedOneShot(OneShot):
        """The one-shot call the CLI makes, its dry runs timed into ``log``."""

        def __init__(self, log: list[dict[str, Any]], *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.log = log

        def _pipeline(self, request: Any, policy: Any, platform: Any) -> Any:
            pipeline = super()._pipeline(request, policy, platform)
            if pipeline.dry_runner is not None:
                pipeline.dry_runner = TimedRunner(pipeline.dry_runner, self.log)
            return pipeline

    rows = []
    platform = None
    for request in requests:
        log: list[dict[str, Any]] = []
        provider = Timed(open_provider(settings.ai, settings.daemon), log)
        service = TimedOneShot(
            log,
            settings,
            lambda provider=provider: provider,
            cache_dir=cache_dir,
            platform=platform,
        )
        start = time.perf_counter()
        stages: list[tuple[str, float]] = []

        def seen(
            event: Any, stages: list[tuple[str, float]] = stages, start: float = start
        ) -> None:
            from conch.command.proposal import Step

            if isinstance(event, Step):
                stages.append((event.label, time.perf_counter() - start))

        result = service.run(OneShotRequest(request, work, dict(os.environ)), seen)
        total = time.perf_counter() - start
        platform = service.platform  # detected once, as one process would
        provider.close()
        proposal = result.proposal
        spent: dict[str, float] = defaultdict(float)
        counts: dict[str, int] = defaultdict(int)
        for row in log:
            spent[row["kind"]] += row["seconds"]
            counts[row["kind"]] += 1
        validating = next((t for label, t in stages if label == "validating"), total)
        rows.append(
            {
                "request": request,
                "command": proposal.command if proposal is not None else None,
                "total_s": round(total, 3),
                "validation_s": round(total - validating, 3),
                "spent_s": {k: round(v, 3) for k, v in spent.items()},
                "calls": dict(counts),
                "conch_s": round(total - sum(spent.values()) - (total - validating), 3),
                "generations": [r for r in log if r["kind"] == "generate"],
                "stages": stages,
            }
        )
        print(
            f"{total:6.2f}s  {dict(counts)}  "
            + "  ".join(f"{k} {v:.2f}s" for k, v in spent.items())
            + f"  -> {proposal.command if proposal is not None else result.answer}",
            file=sys.stderr,
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--config", type=Path, help="a conch config file (default: yours)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.config is not None:
        os.environ["CONCH_CONFIG"] = str(args.config.resolve())
    requests = [nl for _, nl in subset(args.tasks)]
    with tempfile.TemporaryDirectory(prefix="conch-profile-") as tmp:
        rows = profile(requests, Path(tmp))
    totals = [r["total_s"] for r in rows]
    kinds = sorted({k for r in rows for k in r["spent_s"]})
    report = {
        "command": "python benchmarks/speed/profile.py " + " ".join(argv or sys.argv[1:]),
        "median_total_s": round(statistics.median(totals), 3),
        "median_spent_s": {
            k: round(statistics.median(r["spent_s"].get(k, 0.0) for r in rows), 3) for k in kinds
        },
        "median_validation_s": round(statistics.median(r["validation_s"] for r in rows), 3),
        "median_conch_s": round(statistics.median(r["conch_s"] for r in rows), 3),
        "rows": rows,
    }
    text = json.dumps(report, indent=2)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
