"""``conch check``: the safety policy alone, with no model."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from conch.cli.environment import Environment
from conch.cli.status import ExitStatus
from conch.errors import UsageError

if TYPE_CHECKING:
    from conch.policy import PolicyContext, Verdict
    from conch.policy.rules import Ruling


def run_check(args: argparse.Namespace, env: Environment) -> int:
    """Print the policy's verdict on a command; exit 0 unless it is rejected (3)."""
    from conch.execute.environ import contained_environment
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
        # Safe mode expands $NAME as a run would: from what a command may see (no secrets).
        environ=None if args.unsafe else contained_environment(env.environ),
    )
    verdict = assess(command, context)
    ruling = _ruling(command, verdict, context, env)
    if args.json:
        data = verdict.to_json()
        data["outcome"] = {"action": str(ruling.outcome), "rule": ruling.rule, "why": ruling.why}
        env.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
    else:
        env.stdout.write(f"{verdict.decision.value}: {command}\n")
        env.stdout.write(f"  risk: {verdict.risk.value}\n")
        if verdict.commands:
            env.stdout.write(f"  commands: {', '.join(verdict.commands)}\n")
        if verdict.operators:
            env.stdout.write(f"  operators: {' '.join(verdict.operators)}\n")
        for reason in verdict.reasons:
            env.stdout.write(f"  - {reason}\n")
        decided_by = ruling.rule or f"the {context.mode} mode"
        if verdict.decision is Decision.REJECT:
            decided_by = "the safety policy"
        elif ruling.rule is None and ruling.why.startswith("Your denylist"):
            decided_by = "permissions.deny"
        env.stdout.write(f"  {ruling.outcome.value} (decided by {decided_by}): {ruling.why}\n")
    refused = verdict.decision is Decision.REJECT or ruling.outcome.value == "refuse"
    return ExitStatus.REJECTED if refused else ExitStatus.OK


def _ruling(command: str, verdict: Verdict, context: PolicyContext, env: Environment) -> Ruling:
    """What the one rule does with ``command`` in the context's mode, with the permission
    rules of the user's config (``permissions:``); a project overlay is not read here."""
    from conch.config.paths import Paths
    from conch.config.settings import load_settings
    from conch.policy.confirm import ConfirmOptions, command_ruling
    from conch.policy.rules import permissions_from

    settings = load_settings(env.environ, Paths.default(), env.cwd, {}).settings
    options = ConfirmOptions(mode=context.mode, permissions=permissions_from(settings.permissions))
    return command_ruling(command, verdict, options, mode=context.mode, unsafe=context.unsafe)
