"""conch's overhead over calling the engine directly, with the same prompt.

Run: python benchmarks/speed/overhead.py [--rounds 5] [--out benchmarks/results/speed-overhead.json]

The same requests, built exactly as conch builds them (system prompt with this machine's
platform, few-shot examples, one-line grammar, temperature 0), are answered two ways:

* direct: xllamacpp's in-process server called with the OpenAI-shaped request, streaming, in
  this process (no conch code on the path);
* conch: `conch.providers.base.complete` on the provider `ai.provider: local` gives the CLI,
  which is the warm model service (a Unix socket, JSON lines, the service's LocalProvider).

Both sides have the prompt prefix cached (one unmeasured warm-up request each), run one
after the other, never at once. Time is wall time from the request to the last token;
tokens/s is completion tokens over that time. Overhead = conch median / direct median - 1.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

REQUESTS = [
    "list the ten largest files under the current directory",
    "find all python files modified in the last 2 days",
    "count the lines of every .md file here",
    "show the disk usage of each directory here, sorted",
    "print the 5 most common words in notes.txt",
]


def conch_requests(limit: int | None = None) -> list[tuple[list[Any], Any]]:
    """(messages, options) exactly as conch's one-shot path builds them."""
    from conch.command.generate import select_examples
    from conch.command.request import RequestContext, build_messages
    from conch.config.paths import Paths
    from conch.config.settings import Settings
    from conch.host.platform import detect_platform
    from conch.messages import GenerationOptions
    from conch.validate.extract import ONE_LINE_GRAMMAR

    settings = Settings()
    prompt = settings.default_prompt
    described = detect_platform(Paths.default().cache_dir).describe()
    options = GenerationOptions(
        temperature=0.0, max_tokens=256, stop=("\n\n",), grammar=ONE_LINE_GRAMMAR
    )
    built = []
    for request in REQUESTS[:limit]:
        examples = select_examples(prompt, request, settings.generation.few_shot)
        built.append(
            (build_messages(prompt, described, RequestContext(request=request), examples), options)
        )
    return built


def direct(requests: list[tuple[list[Any], Any]], rounds: int) -> list[dict[str, Any]]:
    """The engine alone: xllamacpp.Server.handle_chat_completions, streaming."""
    import xllamacpp

    from conch.config.paths import Paths
    from conch.providers.local.engines import default_threads
    from conch.providers.local.model_files import embedded_model_path
    from conch.providers.local.provider import build_request

    params = xllamacpp.CommonParams()
    params.model.path = str(embedded_model_path(Paths.default().cache_dir))
    params.n_ctx = 4096
    params.cpuparams.n_threads = default_threads()
    params.cpuparams_batch.n_threads = default_threads()
    params.verbosity = 1
    server = xllamacpp.Server(params)
    rows = []
    for messages, options in requests:
        body = {
            **build_request(messages, options),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        for round_ in range(rounds + 1):
            usage: dict[str, Any] = {}

            def on_chunk(chunk: dict[str, Any], usage: dict[str, Any] = usage) -> bool:
                if chunk.get("usage"):
                    usage.update(chunk["usage"])
                return False

            start = time.perf_counter()
            server.handle_chat_completions(body, on_chunk)
            seconds = time.perf_counter() - start
            if round_:
                rows.append({"seconds": seconds, "tokens": int(usage.get("completion_tokens", 0))})
    del server
    return rows


def through_conch(
    requests: list[tuple[list[Any], Any]], rounds: int
) -> tuple[list[dict[str, Any]], Any]:
    """conch's local path: the provider the CLI uses (the warm model service)."""
    from conch.config.settings import Settings
    from conch.daemon import open_provider
    from conch.providers.base import complete

    settings = Settings()
    provider = open_provider(settings.ai, settings.daemon)
    rows = []
    for messages, options in requests:
        for round_ in range(rounds + 1):
            start = time.perf_counter()
            response = complete(provider, messages, options)
            seconds = time.perf_counter() - start
            if round_:
                rows.append({"seconds": seconds, "tokens": response.usage.completion_tokens})
    status = None
    from conch.daemon.client import service_status
    from conch.daemon.location import Location

    try:
        status = service_status(Location.default())
    except Exception as exc:  # the report says why there is no memory figure
        status = {"error": str(exc)}
    provider.close()
    return rows, status


def stats(rows: list[dict[str, Any]]) -> dict[str, float]:
    seconds = [r["seconds"] for r in rows]
    rates = [r["tokens"] / r["seconds"] for r in rows if r["seconds"] > 0]
    return {
        "median_s": round(statistics.median(seconds), 4),
        "median_tokens_per_s": round(statistics.median(rates), 2),
        "requests": len(rows),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None, help="only the first N requests")
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "speed-overhead.json"
    )
    args = parser.parse_args(argv)
    os.environ.pop("CONCH_DAEMON", None)
    requests = conch_requests(args.limit)
    direct_rows = direct(requests, args.rounds)
    conch_rows, service = through_conch(requests, args.rounds)
    d, c = stats(direct_rows), stats(conch_rows)
    report = {
        "benchmark": "overhead",
        "command": f"python benchmarks/speed/overhead.py --rounds {args.rounds}",
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "direct": d,
        "conch": c,
        "overhead_time": round(c["median_s"] / d["median_s"] - 1, 4),
        "overhead_tokens_per_s": round(1 - c["median_tokens_per_s"] / d["median_tokens_per_s"], 4),
        "same_token_counts": [r["tokens"] for r in direct_rows]
        == [r["tokens"] for r in conch_rows],
        "service": service,
        "rows": {"direct": direct_rows, "conch": conch_rows},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(
        json.dumps(
            {
                k: report[k]
                for k in (
                    "direct",
                    "conch",
                    "overhead_time",
                    "overhead_tokens_per_s",
                    "same_token_counts",
                )
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
