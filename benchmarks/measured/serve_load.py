"""`conch serve` under load: concurrent streaming clients on 127.0.0.1 with the official openai
client, first on the scripted provider (what the server itself costs), then on the embedded
model through the model service, where requests queue for the one model
(benchmarks/server/load.py).
"""

from __future__ import annotations

from typing import Any

from benchmarks.measured import publish
from benchmarks.server import load

NAME = "serve-load"
CLIENTS, EMBEDDED_CLIENTS = 50, 4


def headline(rows: list[dict[str, Any]]) -> list[str]:
    return [
        f"conch serve, {r['phase']}: {r['clients']} streaming clients, {r['requests']} requests, "
        f"{r['errors']} errors, latency p50 {r['latency_s']['p50']} s"
        for r in rows
    ]


def main(argv: list[str] | None = None) -> int:
    parser = publish.parser(NAME, __doc__)
    parser.add_argument("--clients", type=int, default=CLIENTS, help="scripted-phase clients")
    parser.add_argument(
        "--embedded-clients", type=int, default=EMBEDDED_CLIENTS, help="embedded-phase clients"
    )
    parser.add_argument("--skip-embedded", action="store_true", help="the scripted phase only")
    args = parser.parse_args(argv)
    partial = (
        args.clients < CLIENTS or args.embedded_clients < EMBEDDED_CLIENTS or args.skip_embedded
    )
    run = publish.begin(NAME, argv, args.out, partial)
    options = ["--clients", str(args.clients), "--embedded-clients", str(args.embedded_clients)]
    options += ["--skip-embedded"] if args.skip_embedded else []
    options += ["--out", str(run.stem)]
    with publish.defaults(), publish.runner_argv(options):
        code = load.main(options)
    run.stamp()
    run.finish(headline(publish.read_json(run.json_path)["rows"]))
    return code
