"""``conch serve``: check the flags, open the models, and serve until Ctrl+C.

The server itself is ``conch.server``; this module turns the command line into its
``ServerConfig`` (the same tool and mode flags as ``conch run``, and the bind, the key and
the time limit) and refuses, before anything loads, a bind the key rule does not allow
(``conch.host.auth.server_key``). With no key given it makes a token, on loopback only,
and prints the URL to open with it, like Jupyter: the server never answers without one
unless ``--no-auth`` says so (loopback only, with a warning).
"""

from __future__ import annotations

import argparse
import contextlib

from conch.cli import ui
from conch.cli.agentsetup import flag_tools, model_name, setup_from
from conch.cli.environment import Environment
from conch.cli.parsing import CHAT_ITERATIONS, USAGES, Parser, add_agent_flags
from conch.cli.status import ExitStatus
from conch.errors import UsageError

NO_AUTH_WARNING = (
    "conch serve: warning: --no-auth: any program or user on this machine can use this server "
    "and the tools it offers"
)


def build_serve_parser() -> argparse.ArgumentParser:
    """The parser of ``conch serve``."""
    p = Parser(
        prog="conch serve",
        usage=USAGES["serve"],
        description="Serve the agent over an OpenAI-compatible HTTP API "
        "(/v1/chat/completions) with a web chat page at /.",
        epilog="`conch help serve` has the API, the extra stream events, keys and limits.",
    )
    p.add_argument("words", nargs="*", help=argparse.SUPPRESS)
    server = p.add_argument_group("server")
    server.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    server.add_argument("--port", type=int, default=8080, help="port to listen on (default: 8080)")
    server.add_argument(
        "--api-key",
        metavar="KEY",
        help="the key clients must send as Authorization: Bearer KEY (default: "
        "$CONCH_SERVER_API_KEY; none: a fresh token, printed in the URL to open); "
        "needed on any address but loopback",
    )
    server.add_argument(
        "--no-auth",
        action="store_true",
        help="no key at all: any local program may use the server (loopback only)",
    )
    server.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="longest a request may take (default: 600)",
    )
    add_agent_flags(p, CHAT_ITERATIONS)
    return p


def run_serve(args: argparse.Namespace, env: Environment) -> int:
    """Serve until interrupted; exit 0 then, 2 for flags that do not fit."""
    from conch.host.auth import server_key
    from conch.server.config import API_KEY_ENV, GIVE_KEY, Caps, ServerConfig

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, not {args.port}")
    if not args.timeout > 0:
        raise UsageError(f"--timeout must be more than 0 seconds, not {args.timeout:g}")
    given = args.api_key if args.api_key is not None else env.environ.get(API_KEY_ENV)
    key, made = server_key(args.host, given, no_auth=args.no_auth, give=GIVE_KEY)
    setup = setup_from(args, env, "restricted")

    from conch.cli.loading import load_for
    from conch.server.models import ModelTable
    from conch.server.run import listen, serve

    loaded = load_for(args, env)
    tools = flag_tools(args, setup, loaded.settings)
    from conch.agent.builtin import containment_off

    off = containment_off(tools)
    if off is not None:
        env.stderr.write(f"conch serve: {off}\n")
    config = ServerConfig(
        host=args.host,
        port=args.port,
        api_key=key or None,
        no_auth=args.no_auth,
        caps=Caps(timeout_s=args.timeout),
        tools=tools,
        max_iterations=setup.iterations(loaded.settings),
        temperature=loaded.settings.ai.temperature,
    )
    models = ModelTable.from_settings(loaded.settings)
    sock = listen(args.host, args.port)
    host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{host}:{sock.getsockname()[1]}/"
    bash = f"bash ({setup.mode})" if setup.bash else "no bash"
    about = f"{model_name(loaded)}; {setup.root}; {bash}"
    # uvicorn shuts down cleanly on Ctrl+C, then passes the interrupt on: that is the end,
    # as it is when Ctrl+C comes before uvicorn has started.
    with contextlib.suppress(KeyboardInterrupt), sock:
        _announce(env, args, url, about, key if made else None)
        serve(config, models, log_level="warning" if args.quiet else "info", sock=sock)
    return ExitStatus.OK


def _announce(
    env: Environment, args: argparse.Namespace, url: str, about: str, token: str | None
) -> None:
    """What the server is, and the URL to open: with ``token`` (one conch made), the URL
    carries it and is printed even with ``-q``, for there is no other way to learn it."""
    if args.no_auth:
        env.stderr.write(ui.paint(env, NO_AUTH_WARNING, "33") + "\n")
    if not args.quiet:
        key = "no key" if args.no_auth else "a token is required" if token else "a key is required"
        line = f"conch serve: {about}; {key}. Ctrl+C stops it."
        env.stderr.write(ui.paint(env, line, "2") + "\n")
    if token:
        env.stderr.write(f"conch serve: open {url}?token={token}\n")
    elif not args.quiet:
        how = "" if args.no_auth else " (with the API key: Authorization: Bearer KEY)"
        env.stderr.write(f"conch serve: open {url}{how}\n")
    env.stderr.flush()
