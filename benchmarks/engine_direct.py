"""Measure the embedded engine directly: model load time, prompt and generation speed.

    python benchmarks/engine_direct.py [--runs 3] [--model PATH] [--engine auto]

Goes through conch's LocalProvider (the same path the CLI uses) and prints one line per run
plus the load time, using the engine's own timings where it reports them.
"""

from __future__ import annotations

import argparse
import statistics
import time

from conch.messages import GenerationOptions, Message
from conch.paths import Paths
from conch.providers.base import complete
from conch.providers.local import LocalProvider
from conch.settings import LocalSettings

PROMPTS = [
    "list the ten largest files under the current directory",
    "find all python files modified in the last 2 days",
    "count the lines of every .md file here",
]


def main() -> None:
    parser = argparse.ArgumentParser(description="benchmark the embedded engine")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--model", default=None, help="GGUF file (default: embedded model)")
    parser.add_argument("--engine", default="auto")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()

    settings = LocalSettings(model_path=args.model, engine=args.engine, n_threads=args.threads)
    provider = LocalProvider(settings, Paths.default().cache_dir)
    provider.load()
    print(f"load: {provider.load_seconds:.2f} s")
    speeds: list[float] = []
    system = Message("system", "Reply with one shell command only, on one line, no markdown.")
    for run in range(args.runs):
        prompt = PROMPTS[run % len(PROMPTS)]
        started = time.monotonic()
        response = complete(provider, [system, Message("user", prompt)], GenerationOptions())
        wall = time.monotonic() - started
        timings = provider.last_timings or {}
        speed = float(timings.get("predicted_per_second") or 0.0)
        prompt_speed = float(timings.get("prompt_per_second") or 0.0)
        if not speed and wall:
            speed = response.usage.completion_tokens / wall
        speeds.append(speed)
        print(
            f"run {run + 1}: {wall:.2f} s, {response.usage.prompt_tokens} prompt tokens "
            f"({prompt_speed:.1f}/s), {response.usage.completion_tokens} generated "
            f"({speed:.1f}/s): {response.text.strip()!r}"
        )
    print(f"median generation speed: {statistics.median(speeds):.1f} tokens/s")
    provider.close()


if __name__ == "__main__":
    main()
