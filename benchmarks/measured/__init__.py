"""The README's "Measured" table, one command per row: ``python -m benchmarks NAME``.

Each row's module (``benchmarks/measured/<name>.py``) starts what its measurement needs (the
engine server with conch's packaged model, conch's model service, ``conch serve``), runs the
existing runner at conch's current defaults, writes one report,
``benchmarks/results/<report>.md`` and ``.json``, that starts with the command that reproduces
it, and prints the headline the README row shows. docs/benchmarks.md has a section per row.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the README's "Measured" table and the command that measures it."""

    name: str  # python -m benchmarks NAME
    module: str  # its main(argv) runs the measurement
    summary: str  # one line: what it measures
    duration: str  # how long a full run takes on the 2-core machine
    report: str  # the report's stem under benchmarks/results/
    anchor: str  # its section of docs/benchmarks.md, which the README row links
    # Reports of the same figure written before this command existed: a full run supersedes them.
    replaces: tuple[str, ...] = ()


ROWS = (
    Row(
        "startup",
        "benchmarks.measured.startup",
        "conch --help and conch check as fresh processes, beside python and the peers' --help",
        "about 2 min",
        "startup",
        "start-up",
        ("speed-startup.json",),
    ),
    Row(
        "latency",
        "benchmarks.measured.latency",
        "a request cold (the model loaded per process) and warm (the model service)",
        "about 25 min",
        "latency",
        "cold-vs-warm",
        ("speed-latency.json",),
    ),
    Row(
        "warm",
        "benchmarks.measured.warm",
        "a warm request at the default settings, among its task's files, plus the CLI's start-up",
        "about 20 min",
        "warm",
        "a-warm-request-at-the-default-settings",
        ("speed-request-pipeline-partial.json", "speed-profile-forward.json"),
    ),
    Row(
        "overhead",
        "benchmarks.measured.overhead",
        "conch's own overhead over calling llama.cpp directly, the same prompts",
        "about 3 min",
        "overhead",
        "overhead",
        ("speed-overhead.json",),
    ),
    Row(
        "agent",
        "benchmarks.measured.agent",
        "49 multi-step file tasks: conch's agent beside smolagents and llm, one server",
        "about 25 min for conch alone, about 7 h with the three peers",
        "agent",
        "the-agent",
        ("agent-side-by-side.md", "agent-all-tasks.md"),
    ),
    Row(
        "policy",
        "benchmarks.measured.policy",
        "the safety policy against attacks by class and everyday commands (nothing runs)",
        "about 10 s",
        "policy",
        "policy-corpus",
    ),
    Row(
        "containment",
        "benchmarks.measured.containment",
        "what running a command in the sandbox its verdict shapes costs, per command",
        "under 1 min",
        # The name SECURITY.md and docs/policy.md link.
        "containment-cost",
        "containment",
    ),
    Row(
        "serve-load",
        "benchmarks.measured.serve_load",
        "conch serve under 50 streaming clients (scripted model) and 4 (the embedded model)",
        "about 3 min",
        # The name docs/server.md links.
        "server-load",
        "conch-serve-under-load",
    ),
    Row(
        "readme-examples",
        "benchmarks.measured.readme_examples",
        "the README's examples run as typed, judged by effect; 10 held-out everyday requests",
        "about 12 min (three runs of the README's examples, then the held-out requests)",
        "readme-examples",
        "the-readmes-examples-by-what-they-do",
        ("everyday-heldout.md",),
    ),
    Row(
        "accuracy",
        "benchmarks.measured.accuracy",
        "NL2SH-ALFA's 258 clean tasks: conch, the bare model, llm-cmd and shell-gpt, judged by effect",
        "about 5 h (about 1.5 h for conch alone)",
        "accuracy",
        "command-accuracy",
        ("accuracy-clean258.md",),
    ),
)


def find(name: str) -> Row | None:
    """The row called ``name``."""
    return next((row for row in ROWS if row.name == name), None)
