"""``conch mcp``: check the flags, load the settings without asking anything, build the tools
the flags ask for plus ``propose_command``, and serve them (``conch.mcp.server``).

Nothing is asked on the terminal: a project config not trusted yet is ignored (with a note on
stderr), and a command that would need a yes is refused. Notes go to stderr; over stdio,
stdout is the protocol's.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from conch.cli.agentsetup import flag_tools, setup_from
from conch.cli.environment import Environment
from conch.cli.parsing import USAGES, Parser, add_agent_flags
from conch.cli.status import ExitStatus
from conch.errors import UsageError

if TYPE_CHECKING:
    from conch.config.settings import LoadedSettings

KEY_ENV = "CONCH_MCP_API_KEY"
NO_AUTH_WARNING = (
    "warning: --no-auth: any program or user on this machine can call these tools, "
    "commands included"
)


def build_mcp_parser() -> argparse.ArgumentParser:
    """The parser of ``conch mcp``."""
    p = Parser(
        prog="conch mcp",
        usage=USAGES["mcp"],
        description="Serve conch's tools to MCP clients: over stdio (the default), or over "
        "streamable HTTP at /mcp with --http. Every command goes through the safety policy "
        "in the execution mode below; nothing is ever asked, what needs a yes is refused.",
        epilog="`conch help mcp` has the tools, the modes, HTTP keys and MCP client config.",
    )
    p.add_argument("words", nargs="*", help=argparse.SUPPRESS)
    http = p.add_argument_group("transport")
    http.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    http.add_argument(
        "--host",
        default="127.0.0.1",
        help="with --http: the address to listen on "
        f"(default: 127.0.0.1; any other needs a key in ${KEY_ENV})",
    )
    http.add_argument(
        "--port", type=int, default=8765, help="with --http: the port (default: 8765; 0: any)"
    )
    http.add_argument(
        "--api-key-env",
        default=KEY_ENV,
        metavar="VAR",
        help="with --http: the variable holding the key clients must send "
        f"(default: {KEY_ENV}; unset: a fresh token, printed)",
    )
    http.add_argument(
        "--no-auth",
        action="store_true",
        help="with --http: no key at all; any local program may call the tools (loopback only)",
    )
    add_agent_flags(p, 0)
    return p


def run_mcp(args: argparse.Namespace, env: Environment) -> int:
    """``conch mcp``: serve until the client goes (stdio) or Ctrl+C (HTTP)."""
    from conch.host.auth import server_key

    if not args.http and (args.host != "127.0.0.1" or args.port != 8765 or args.no_auth):
        raise UsageError("--host, --port and --no-auth are for --http; stdio needs none of them")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0 to 65535, not {args.port}")
    give = f"${args.api_key_env}"
    api_key: str | None = None
    made = False
    if args.http:
        given = env.environ.get(args.api_key_env) or None
        api_key, made = server_key(args.host, given, no_auth=args.no_auth, give=give)
    setup = setup_from(args, env, "restricted")
    loaded = _settings(args, env)
    say = _sayer(env, args.quiet)
    from conch.agent.builtin import containment_off, default_tools
    from conch.agent.propose import Proposer, propose_tool
    from conch.agent.system import mcp_instructions
    from conch.config.paths import Paths
    from conch.mcp.server import bind, build_server, serve_http, serve_stdio
    from conch.policy import ExecutionMode

    if setup.bash and setup.mode is ExecutionMode.INTERACTIVE:
        say(
            "interactive mode asks before every command and no one can be asked here: "
            "the bash tool will refuse every command"
        )

    def refused(command: str, why: str) -> None:
        say(f"refused ({why}): {' '.join(command.split())[:200]}")

    options = flag_tools(args, setup, loaded.settings, plan=False, on_refused=refused)
    tools = default_tools(options)
    off = containment_off(options)
    if off is not None:
        say(off)
    proposer = Proposer(
        loaded.settings,
        setup.root,
        mode=setup.mode,
        root=setup.root,
        environ=env.environ,
        cache_dir=Paths.default().cache_dir,
    )
    tools.append(propose_tool(proposer))
    server = build_server(tools, mcp_instructions(tools, setup.mode))
    names = ", ".join(t.name for t in tools)
    try:
        if not args.http:
            say(f"serving MCP on stdio from {setup.root}: {names}")
            serve_stdio(server)
            return ExitStatus.OK
        try:
            sock = bind(args.host, args.port)
        except OSError as exc:
            raise UsageError(
                f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}"
            ) from None
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        if args.no_auth:
            _warn(env, NO_AUTH_WARNING)
        say(f"serving MCP at http://{shown}:{port}/mcp from {setup.root}: {names}")
        if made:  # the only way to learn the token: printed even with -q
            _warn(env, f"clients of http://{shown}:{port}/mcp send Authorization: Bearer {api_key}")
        serve_http(server, sock, args.host, api_key, give=give)
        return ExitStatus.OK
    finally:
        proposer.close()


def _settings(args: argparse.Namespace, env: Environment) -> LoadedSettings:
    """The settings, with the flags; an untrusted project config is ignored, not asked about."""
    from conch.config.paths import Paths
    from conch.config.settings import load_settings

    flags = {
        "ai.provider": args.provider,
        "ai.model": args.model,
        "daemon.enabled": False if args.no_daemon else None,
    }
    loaded = load_settings(env.environ, Paths.default(), env.cwd, flags)
    overlay = loaded.overlay_path
    if overlay is not None and not loaded.overlay_trusted:
        _sayer(env, args.quiet)(f"ignoring project config {overlay} (not trusted yet)")
    return loaded


def _warn(env: Environment, text: str) -> None:
    """A line on stderr that ``-q`` does not silence."""
    env.stderr.write(f"conch mcp: {text}\n")
    env.stderr.flush()


def _sayer(env: Environment, quiet: bool) -> Callable[[str], None]:
    def say(text: str) -> None:
        if not quiet:
            env.stderr.write(f"conch mcp: {text}\n")
            env.stderr.flush()

    return say
