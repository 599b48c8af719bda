"""``conch daemon start|status|stop``: the warm model service, by hand.

Requests start the service on their own; these commands warm it up ahead of time (start also
loads the model), show what it is doing, and end it before its idle timeout.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from conch.cli import ui
from conch.cli.configflag import add_config_flag
from conch.cli.environment import Environment
from conch.cli.parsing import USAGES, Parser
from conch.cli.status import ExitStatus

if TYPE_CHECKING:
    from conch.config.paths import Paths
    from conch.config.settings import Settings
    from conch.daemon.location import Location

ACTIONS = ("start", "status", "stop")


def build_daemon_parser() -> argparse.ArgumentParser:
    """The parser of ``conch daemon``."""
    p = Parser(prog="conch daemon", usage=USAGES["daemon"])
    p.add_argument("action", choices=ACTIONS, help="what to do with the model service")
    p.add_argument("--json", action="store_true", help="print the service's status as JSON")
    add_config_flag(p)
    p.add_argument("--traceback", action="store_true", help="show tracebacks on errors")
    return p


def run_daemon(args: argparse.Namespace, env: Environment) -> int:
    """Dispatch one ``conch daemon`` action."""
    from conch.config.paths import Paths
    from conch.config.settings import load_settings
    from conch.daemon.location import Location

    paths = Paths.default()
    # No trust question here: an overlay not trusted yet is ignored, as in scripts.
    settings = load_settings(env.environ, paths, env.cwd).settings
    location = Location.default(paths, env.environ)
    if args.action == "start":
        return _start(args, env, settings, paths, location)
    if args.action == "stop":
        return _stop(args, env, location)
    return _status(args, env, location)


def _start(
    args: argparse.Namespace, env: Environment, settings: Settings, paths: Paths, location: Location
) -> int:
    from conch.daemon.client import ServiceSpec, service_status, start_service

    before = service_status(location)
    progress = ui.Progress(env, enabled=not args.json)
    try:
        spec = ServiceSpec.build(
            settings.ai, settings.daemon, paths, location, progress=progress.stage
        )
        status = start_service(spec, progress.stage)
    finally:
        progress.clear()
    if not settings.daemon.enabled:
        env.stderr.write(
            "conch: note: daemon.enabled is false, so requests run the model in-process "
            "and do not use this service\n"
        )
    if args.json:
        env.stdout.write(json.dumps({"running": True, **status}) + "\n")
        return ExitStatus.OK
    reused = before is not None and before.get("pid") == status.get("pid")
    env.stdout.write(f"model service: {'already running' if reused else 'started'}\n")
    _describe(env, status)
    return ExitStatus.OK


def _status(args: argparse.Namespace, env: Environment, location: Location) -> int:
    from conch.daemon.client import service_status

    status = service_status(location)
    if status is None:
        if args.json:
            env.stdout.write(json.dumps({"running": False, "socket": str(location.socket)}) + "\n")
        else:
            env.stdout.write(f"model service: not running (socket {location.socket})\n")
        return ExitStatus.ERROR
    if args.json:
        env.stdout.write(json.dumps({"running": True, **status}) + "\n")
    else:
        env.stdout.write("model service: running\n")
        _describe(env, status)
    return ExitStatus.OK


def _stop(args: argparse.Namespace, env: Environment, location: Location) -> int:
    from conch.daemon.client import stop_service

    pid = stop_service(location)
    if args.json:
        env.stdout.write(json.dumps({"stopped": pid}) + "\n")
    elif pid is None:
        env.stdout.write("model service: not running\n")
    else:
        env.stdout.write(f"model service: stopped (pid {pid})\n")
    return ExitStatus.OK


def _describe(env: Environment, status: dict[str, Any]) -> None:
    """A few lines a person can read at a glance."""
    model = status.get("model") or {}
    if status.get("loaded"):
        load = status.get("load_seconds")
        state = f"loaded in {load:.1f} s" if isinstance(load, int | float) else "loaded"
    elif status.get("load_error"):
        state = f"not loaded: {status['load_error']}"
    else:
        state = "loading" if status.get("loading") else "not loaded yet"
    size = model.get("size")
    lines = [
        ("pid", f"{status.get('pid')} (conch {status.get('version')})"),
        ("socket", str(status.get("socket"))),
        ("model", f"{model.get('path')} ({_size(size) if size else '?'}), {state}"),
        (
            "requests",
            f"{status.get('requests', 0)} served, {status.get('active', 0)} running, "
            f"{status.get('waiting', 0)} waiting",
        ),
        (
            "idle",
            f"{_duration(status.get('idle_s'))}; exits after "
            f"{_duration(status.get('idle_timeout_s'))} idle",
        ),
        ("uptime", _duration(status.get("uptime_s"))),
    ]
    rss = status.get("rss_bytes")
    if rss:
        lines.append(("memory", f"{_size(rss)} resident"))
    for label, value in lines:
        env.stdout.write(f"  {label:<9} {value}\n")


def _duration(seconds: Any) -> str:
    if not isinstance(seconds, int | float):
        return "?"
    whole = int(seconds)
    if whole < 60:
        return f"{seconds:.0f} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


def _size(count: Any) -> str:
    if not isinstance(count, int | float):
        return "?"
    if count >= 2**30:
        return f"{count / 2**30:.1f} GiB"
    return f"{count / 2**20:.0f} MiB"
