"""Load on ``conch serve``: concurrent streaming clients on 127.0.0.1, bounded in count and time.

Two phases, each against a ``conch serve`` process started here (and stopped after):

1. ``--clients`` streaming clients (default 50) on the scripted provider: what the server
   itself costs (routing, the agent loop, SSE) when the model is free;
2. ``--embedded-clients`` streaming clients (default 4) on the embedded model through the
   model service: requests queue for the one model, so latency grows with the queue.

Each client sends ``--requests`` requests, one after the other, with the official ``openai``
client (``stream_options.include_usage``). A phase stops at ``--phase-timeout`` seconds;
requests still running then count as errors. Reported per phase: latency and time to first
token (p50, p90, p99), completion tokens per second (all clients together, and per request),
errors. Written to ``--out``.json and ``--out``.md.

    python -m benchmarks.server.load                     # both phases
    python -m benchmarks.server.load --skip-embedded     # the scripted phase only
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai

from benchmarks.common import log, run_meta, stop_on_signals, stop_process, write_report_files

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "server-load"
START_SECONDS = 120.0
# The scripted reply: about 120 words, streamed by the provider in 8-character pieces.
SCRIPTED_REPLY = " ".join(
    f"Line {n}: the quick brown fox jumps over the lazy dog." for n in range(1, 14)
)
PROMPT = "Write two short sentences about the sea."


@dataclass
class Sample:
    """One request: how long it took, when its first text came, how many tokens it got."""

    seconds: float = 0.0
    first_token_s: float | None = None
    completion_tokens: int = 0
    error: str | None = None


@dataclass
class Phase:
    """One phase's settings and samples."""

    name: str
    clients: int
    requests: int
    max_tokens: int
    wall_s: float = 0.0
    samples: list[Sample] = field(default_factory=list)


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def conch_serve(args: list[str], env: dict[str, str], log_path: Path) -> Iterator[tuple[str, str]]:
    """``conch serve ARGS`` on 127.0.0.1 until the block ends, with a key made here; its base
    URL and the key."""
    port = free_port()
    key = secrets.token_urlsafe(32)
    with log_path.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "conch", "serve", "--port", str(port), "-q", *args],
            env={**env, "CONCH_SERVER_API_KEY": key},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"conch serve exited: {log_path.read_text('utf-8')[-2000:]}")
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise RuntimeError("conch serve did not start") from None
                time.sleep(0.2)
        yield base, key
    finally:
        stop_process(process, 30)


async def one_client(client: openai.AsyncOpenAI, model: str, phase: Phase) -> None:
    for _ in range(phase.requests):
        sample = Sample()
        phase.samples.append(sample)
        started = time.monotonic()
        try:
            stream = await client.chat.completions.create(
                model=model,
                messages=[{"role": "user", "content": PROMPT}],
                stream=True,
                stream_options={"include_usage": True},
                max_completion_tokens=phase.max_tokens,
                tool_choice="none",
            )
            async for chunk in stream:
                if (
                    sample.first_token_s is None
                    and chunk.choices
                    and chunk.choices[0].delta.content
                ):
                    sample.first_token_s = time.monotonic() - started
                if chunk.usage is not None:
                    sample.completion_tokens = chunk.usage.completion_tokens
        except Exception as exc:  # counted and reported, the run goes on
            sample.error = f"{type(exc).__name__}: {exc}"[:200]
        sample.seconds = time.monotonic() - started


async def run_phase(served: tuple[str, str], phase: Phase, timeout_s: float) -> None:
    base, key = served
    client = openai.AsyncOpenAI(
        base_url=f"{base}/v1", api_key=key, max_retries=0, timeout=timeout_s
    )
    model = (await client.models.list()).data[0].id
    started = time.monotonic()
    tasks = [asyncio.create_task(one_client(client, model, phase)) for _ in range(phase.clients)]
    _, pending = await asyncio.wait(tasks, timeout=timeout_s)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    phase.wall_s = time.monotonic() - started
    missing = phase.clients * phase.requests - len(phase.samples)
    phase.samples += [Sample(error="not started before the phase timed out")] * missing
    for sample in phase.samples:
        if sample.seconds == 0.0 and sample.error is None:
            sample.error = "still running when the phase timed out"
    await client.close()


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def summary(phase: Phase) -> dict[str, Any]:
    ok = [s for s in phase.samples if s.error is None]
    latency = [s.seconds for s in ok]
    first = [s.first_token_s for s in ok if s.first_token_s is not None]
    tokens = sum(s.completion_tokens for s in ok)
    return {
        "phase": phase.name,
        "clients": phase.clients,
        "requests": len(phase.samples),
        "errors": len(phase.samples) - len(ok),
        "wall_s": round(phase.wall_s, 2),
        "latency_s": {f"p{q}": _round(percentile(latency, q)) for q in (50, 90, 99)},
        "first_token_s": {f"p{q}": _round(percentile(first, q)) for q in (50, 90, 99)},
        "completion_tokens": tokens,
        "tokens_per_s_all": round(tokens / phase.wall_s, 1) if phase.wall_s else None,
        "tokens_per_s_per_request": _round(
            statistics.mean(s.completion_tokens / s.seconds for s in ok) if ok else None
        ),
        "error_samples": sorted({s.error for s in phase.samples if s.error})[:5],
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def markdown(meta: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    lines = [
        "# conch serve under load",
        "",
        f"{meta['date']}; {meta['machine']}. Every client streams with the official openai",
        "client (`stream_options.include_usage`), on 127.0.0.1. Reproduce with:",
        "",
        f"    {meta['command']}",
        "",
        "| phase | clients | requests | errors | wall s | latency p50 / p90 / p99 s "
        "| first token p50 / p90 / p99 s | tokens/s (all) | tokens/s (per request) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lat, first = r["latency_s"], r["first_token_s"]
        lines.append(
            f"| {r['phase']} | {r['clients']} | {r['requests']} | {r['errors']} | {r['wall_s']} "
            f"| {lat['p50']} / {lat['p90']} / {lat['p99']} "
            f"| {first['p50']} / {first['p90']} / {first['p99']} "
            f"| {r['tokens_per_s_all']} | {r['tokens_per_s_per_request']} |"
        )
    lines += [
        "",
        "Tokens are as the provider counts them: the scripted provider counts words; the",
        "embedded model counts its own tokens. The scripted phase measures the server (agent",
        "loop, SSE, 50 requests at once); the embedded phase measures requests queueing for",
        "the one local model in the model service. The load generator runs on the same",
        "machine as the server. Each request builds conch's tool set (a few ms: each tool's",
        "schema is built once per process); the embedded phase's first request also waits",
        "for the model service to start and load the model.",
    ]
    for r in rows:
        if r["error_samples"]:
            lines += ["", f"Errors in {r['phase']}: " + "; ".join(r["error_samples"])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50, help="scripted-phase clients")
    parser.add_argument("--embedded-clients", type=int, default=4)
    parser.add_argument("--requests", type=int, default=2, help="requests per client")
    parser.add_argument("--embedded-max-tokens", type=int, default=48)
    parser.add_argument("--phase-timeout", type=float, default=600.0)
    parser.add_argument("--skip-embedded", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if not 1 <= args.clients <= 200 or not 1 <= args.requests <= 20:
        parser.error("--clients must be 1..200 and --requests 1..20")
    stop_on_signals()
    load_before = os.getloadavg()[0]
    phases: list[Phase] = []
    with tempfile.TemporaryDirectory(prefix="conch-load-") as scratch:
        work = Path(scratch)
        config = work / "scripted.yaml"
        count = args.clients * args.requests
        replies = "\n".join(f"    - {SCRIPTED_REPLY!r}" for _ in range(count))
        config.write_text(f"ai:\n  provider: scripted\n  script:\n{replies}\n", encoding="utf-8")
        env = {**os.environ, "CONCH_CONFIG": str(config), "CONCH_DAEMON": "0"}
        phase = Phase("scripted", args.clients, args.requests, 512)
        log(f"scripted: {args.clients} clients x {args.requests} requests")
        with conch_serve(["--sandbox", str(work)], env, work / "scripted.log") as served:
            asyncio.run(run_phase(served, phase, args.phase_timeout))
        phases.append(phase)
        if not args.skip_embedded:
            env = {k: v for k, v in os.environ.items() if k not in ("CONCH_CONFIG", "CONCH_DAEMON")}
            phase = Phase("embedded", args.embedded_clients, 1, args.embedded_max_tokens)
            log(f"embedded: {args.embedded_clients} clients x 1 request (the model service)")
            with conch_serve(["--sandbox", str(work)], env, work / "embedded.log") as served:
                asyncio.run(run_phase(served, phase, args.phase_timeout))
            phases.append(phase)
    rows = [summary(p) for p in phases]
    meta = run_meta("benchmarks.server.load", "scripted / embedded", "conch serve", len(rows))
    meta["machine"] = f"{os.cpu_count()} cores, load average {load_before:.1f} at the start"
    meta["samples"] = {p.name: [asdict(s) for s in p.samples] for p in phases}
    write_report_files(meta, rows, args.out, markdown(meta, rows))
    for row in rows:
        log(str(row))
    return 1 if any(r["errors"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
