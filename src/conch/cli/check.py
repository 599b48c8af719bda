"""``conch check``: the safety policy alone, with no model."""

from __future__ import annotations

import argparse
import json

from conch.cli.environment import Environment
from conch.cli.status import ExitStatus
from conch.errors import UsageError


def run_check(args: argparse.Namespace, env: Environment) -> int:
    """Print the policy's verdict on a command; exit 0 unless it is rejected (3)."""
    from conch.policy import Decision, ExecutionMode, PolicyContext, assess

    command = " ".join(args.command).strip()
    if not command:
        raise UsageError("conch check needs a command after --, e.g. conch check -- rm -rf /tmp/x")
    tools = frozenset(t.strip() for t in (args.tools or "").split(",") if t.strip())
    context = PolicyContext(
        unsafe=args.unsafe,
        allowed_tools=tools or None,
        mode=ExecutionMode(args.mode),
        cwd=env.cwd,
        # A tool list is a prompt config's whitelist: one program at a time unless allowed.
        pipelines=not tools or args.allow_pipelines,
    )
    verdict = assess(command, context)
    if args.json:
        env.stdout.write(json.dumps(verdict.to_json(), ensure_ascii=False) + "\n")
    else:
        env.stdout.write(f"{verdict.decision.value}: {command}\n")
        env.stdout.write(f"  risk: {verdict.risk.value}\n")
        if verdict.commands:
            env.stdout.write(f"  commands: {', '.join(verdict.commands)}\n")
        if verdict.operators:
            env.stdout.write(f"  operators: {' '.join(verdict.operators)}\n")
        for reason in verdict.reasons:
            env.stdout.write(f"  - {reason}\n")
    return ExitStatus.REJECTED if verdict.decision is Decision.REJECT else ExitStatus.OK
