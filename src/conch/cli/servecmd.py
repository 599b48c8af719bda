"""``conch serve``: check the flags, open the models, and serve until Ctrl+C.

The server itself is ``conch.server``; this module turns the command line into its
``ServerConfig`` (the same tool and mode flags as ``conch run``, and the bind, the key and
the time limit) and refuses, before anything loads, a bind that would be open without a key.
"""

from __future__ import annotations

import argparse
import contextlib

from conch.cli import ui
from conch.cli.agentsetup import flag_tools, model_name, setup_from
from conch.cli.environment import Environment
from conch.cli.status import ExitStatus
from conch.errors import UsageError


def run_serve(args: argparse.Namespace, env: Environment) -> int:
    """Serve until interrupted; exit 0 then, 2 for flags that do not fit."""
    from conch.server.config import API_KEY_ENV, Caps, ServerConfig, check_bind

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, not {args.port}")
    if not args.timeout > 0:
        raise UsageError(f"--timeout must be more than 0 seconds, not {args.timeout:g}")
    key = args.api_key if args.api_key is not None else env.environ.get(API_KEY_ENV)
    check_bind(args.host, key)
    setup = setup_from(args, env, "restricted")

    from conch.cli.oneshot import load_for
    from conch.server.models import ModelTable
    from conch.server.run import serve

    loaded = load_for(args, env)
    tools = flag_tools(args, setup)
    config = ServerConfig(
        host=args.host,
        port=args.port,
        api_key=key or None,
        caps=Caps(timeout_s=args.timeout),
        tools=tools,
        max_iterations=setup.max_iterations,
        temperature=loaded.settings.ai.temperature,
    )
    models = ModelTable.from_settings(loaded.settings)
    if not args.quiet:
        bash = f"bash ({setup.mode})" if setup.bash else "no bash"
        host = f"[{args.host}]" if ":" in args.host else args.host
        key_note = "API key required" if key else "no API key (loopback only)"
        env.stderr.write(
            ui.paint(
                env,
                f"conch serve: http://{host}:{args.port}/ with {model_name(loaded)}; "
                f"{setup.root}; {bash}; {key_note}. Ctrl+C stops it.",
                "2",
            )
            + "\n"
        )
        env.stderr.flush()
    # uvicorn shuts down cleanly on Ctrl+C, then passes the interrupt on: that is the end.
    with contextlib.suppress(KeyboardInterrupt):
        serve(config, models, log_level="warning" if args.quiet else "info")
    return ExitStatus.OK
