"""``conch doctor``: what works on this machine and what is missing, one line each.

The checks are the library's (``conch.diagnose.doctor``); this module parses the command line
and renders the report, as text or ``--json``. The exit status is 1 when something the current
settings need is broken, else 0.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from conch.cli.configflag import add_config_flag
from conch.cli.environment import Environment
from conch.cli.parsing import USAGES, Parser
from conch.cli.status import ExitStatus

if TYPE_CHECKING:
    from conch.diagnose.report import Report

_LABELS = {"ok": "ok", "fail": "FAIL", "warn": "warn"}


def build_doctor_parser() -> argparse.ArgumentParser:
    """The parser of ``conch doctor``."""
    p = Parser(
        prog="conch doctor",
        usage=USAGES["doctor"],
        description="Check what conch needs here: engine, model file, model service, sandbox, "
        "config files, keyring, provider. Exit 1 when something the settings need is broken.",
    )
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    add_config_flag(p)
    p.add_argument("--traceback", action="store_true", help="show tracebacks on errors")
    return p


def run_doctor(args: argparse.Namespace, env: Environment) -> int:
    """Run every check and show the report."""
    from conch.diagnose.doctor import diagnose

    report = diagnose(env.environ, env.cwd)
    if args.json:
        env.stdout.write(json.dumps(report.to_json(), indent=2) + "\n")
    else:
        env.stdout.write(render(report))
    return ExitStatus.OK if report.ok else ExitStatus.ERROR


def render(report: Report) -> str:
    """One line per check (with the fix when it is broken), then a verdict."""
    width = max(len(check.name) for check in report.checks)
    lines = []
    for check in report.checks:
        text = f"{check.detail}; fix: {check.fix}" if check.broken and check.fix else check.detail
        lines.append(f"{check.name:<{width}}  {_LABELS[check.status]:<4}  {text}")
    broken = report.broken
    if broken:
        lines.append(f"broken: {', '.join(broken)} (what the current settings need)")
    else:
        lines.append("everything the current settings need works")
    return "\n".join(lines) + "\n"
