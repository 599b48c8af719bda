"""What ``conch chat`` and ``conch run`` share: the sandbox, the execution mode and the
tools their flags ask for, the settings, the session, and the commands that were refused."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conch.cli.environment import Environment
from conch.cli.status import ExitStatus
from conch.errors import UsageError

if TYPE_CHECKING:
    from conch.agent.builtin import ToolOptions
    from conch.agent.session import Session
    from conch.config.agent import AgentSettings
    from conch.config.settings import LoadedSettings, Settings
    from conch.execute.checked import Approve
    from conch.policy import ExecutionMode
    from conch.tools.plan import PlanState


@dataclass(slots=True)
class Refusals:
    """The commands of the agent's that did not run, and why (``policy``, ``declined``,
    ``unasked``): the library tells it as each one is refused."""

    seen: list[tuple[str, str]] = field(default_factory=list)

    def __call__(self, command: str, why: str) -> None:
        self.seen.append((command, why))

    def status(self) -> int:
        """The exit status they call for: 3 when the policy refused a command, 4 when one
        needed a yes that was not given, 0 when nothing was refused."""
        if any(why == "policy" for _, why in self.seen):
            return ExitStatus.REJECTED
        return ExitStatus.NEEDS_CONFIRMATION if self.seen else ExitStatus.OK


@dataclass(slots=True)
class AgentSetup:
    """What the flags ask for, checked: the sandbox, whether there is a bash tool and in
    which mode, and how many model replies a turn may take."""

    root: Path
    bash: bool
    mode: ExecutionMode
    max_iterations: int | None  # --max-iterations, when given
    act: bool = False  # --act: the do tool, given each instruction first
    default_iterations: int = 10  # the command's own, where neither flag nor config says
    cwd: Path | None = None  # where relative paths in flags start (None: the process's)

    def iterations(self, settings: Settings) -> int:
        """Model replies a turn may take: the flag, else ``agent.max_iterations``, else
        the command's default."""
        if self.max_iterations is not None:
            return self.max_iterations
        return settings.agent.max_iterations or self.default_iterations


def setup_from(args: argparse.Namespace, env: Environment, default_mode: str) -> AgentSetup:
    """Check the shared flags (UsageError naming the flag when they do not fit together)."""
    from conch.agent.modes import parse_mode
    from conch.policy import ExecutionMode

    if args.max_iterations is not None and args.max_iterations < 1:
        raise UsageError(f"--max-iterations must be 1 or more, not {args.max_iterations}")
    timeout = getattr(args, "command_timeout", None)
    if timeout is not None and not timeout > 0:
        raise UsageError(f"--command-timeout must be more than 0 seconds, not {timeout:g}")
    if args.allow_dangerous:
        if args.mode is not None and parse_mode(args.mode) is not ExecutionMode.FULL:
            raise UsageError(
                f"--allow-dangerous is full-autonomous mode; it cannot be combined with "
                f"--mode {args.mode}"
            )
        mode = ExecutionMode.FULL
    elif args.mode is not None:
        mode = parse_mode(args.mode)
        if mode is ExecutionMode.FULL:
            raise UsageError(
                "full-autonomous mode runs commands without asking: say so with --allow-dangerous"
            )
        if not (args.allow_bash or getattr(args, "act", False)):
            raise UsageError(
                "--mode sets how the bash tool's commands run; add --allow-bash to offer it"
            )
    else:
        mode = parse_mode(default_mode)
    # Where commands may run, acting through the pipeline is the default (measured: 33/49
    # against 22/49 on the agent tasks, docs/agent.md); --no-act turns it off.
    commands = bool(args.allow_bash or args.allow_dangerous)
    asked = bool(getattr(args, "act", False))
    act = asked or (commands and hasattr(args, "act") and not getattr(args, "no_act", False))
    if asked and getattr(args, "no_act", False):
        raise UsageError("--act and --no-act contradict each other: give one")
    return AgentSetup(
        sandbox_root(args.sandbox, env),
        args.allow_bash or args.allow_dangerous or act,
        mode,
        args.max_iterations,
        act,
        getattr(args, "default_iterations", 10),
        env.cwd,
    )


def flag_tools(
    args: argparse.Namespace,
    setup: AgentSetup,
    settings: Settings | None = None,
    **extra: Any,
) -> ToolOptions:
    """The built-in tools the shared tool flags ask for (``--sandbox``, ``--tools-mode``,
    ``--allow-bash`` and the mode, ``--no-python``, ``--web``, ``--search-url``,
    ``--memory``, ``--memory-dir``, ``--command-timeout``), with what ``settings`` say where a flag does not
    (the ``agent:`` section: the terminal's limits, memory, the web) and the permission rules
    and ``execution.pass_env`` of ``settings``; ``extra`` sets the rest."""
    from conch.agent.builtin import ToolOptions
    from conch.config.agent import AgentSettings

    agent = settings.agent if settings is not None else AgentSettings()
    if settings is not None:
        from conch.policy.rules import permissions_from

        extra.setdefault("permissions", permissions_from(settings.permissions))
        extra.setdefault("pass_env", tuple(settings.execution.pass_env))
        extra.setdefault("scrub_env", settings.execution.scrub_env)
    terminal = agent.terminal
    timeout = getattr(args, "command_timeout", None)
    extra.setdefault("command_timeout", timeout or terminal.timeout_seconds)
    extra.setdefault("max_stdout", terminal.max_stdout_bytes)
    extra.setdefault("max_stderr", terminal.max_stderr_bytes)
    search_url = getattr(args, "search_url", None) or agent.search_url
    web = bool(args.web or getattr(args, "search_url", None) or agent.web)
    if web and search_url and "web_search" not in extra:
        from conch.tools.web import SearxngSearch

        extra["web_search"] = SearxngSearch(search_url)
    asked = getattr(args, "memory_dir", None) or ("" if getattr(args, "memory", False) else None)
    extra.setdefault("memory_dir", memory_dir(asked, agent, setup))
    return ToolOptions(
        root=setup.root,
        fs_mode=args.tools_mode,
        bash=setup.bash,
        mode=setup.mode,
        evaluate=not args.no_python,
        web=web,
        act=setup.act,
        settings=settings,
        **extra,
    )


def memory_dir(flag: str | None, agent: AgentSettings, setup: AgentSetup) -> Path | None:
    """Where the memory tool keeps its notes: ``--memory-dir DIR`` (``flag``), else (with
    ``--memory``, ``flag`` empty, or ``agent.memory: true``) ``agent.memory_dir``, else
    ``memory/`` in the state directory; None when neither flag nor config asks for memory. A relative DIR starts at
    the working directory."""
    if flag is None and not agent.memory:
        return None
    named = flag or agent.memory_dir
    if named:
        path = Path(named).expanduser()
        return path if path.is_absolute() else ((setup.cwd or Path.cwd()) / path).resolve()
    from conch.config.paths import Paths

    return Paths.default().state_dir / "memory"


def sandbox_root(sandbox: str | None, env: Environment) -> Path:
    """The sandbox directory (default: the working directory), resolved; UsageError when
    it is not a directory."""
    root = (env.cwd / Path(sandbox).expanduser()) if sandbox else env.cwd
    if not root.is_dir():
        what = "does not exist" if not root.exists() else "is not a directory"
        raise UsageError(f"--sandbox {sandbox}: {root} {what}; give an existing directory")
    return root.resolve()


def open_session(
    args: argparse.Namespace,
    env: Environment,
    setup: AgentSetup,
    *,
    confirm: Approve | None,
    refusals: Refusals,
    plan: PlanState,
) -> tuple[Session, LoadedSettings]:
    """The session the flags ask for, on the configured model. ``confirm`` asks the user
    about a command (None: no one can be asked, so the mode refuses what needs a yes)."""
    from conch.agent.builtin import containment_off, evaluate_off
    from conch.agent.loop import Limits
    from conch.agent.session import Session
    from conch.cli.loading import load_for
    from conch.cli.mcpuse import connect_mcp
    from conch.config.paths import Paths

    loaded = load_for(args, env)
    tools = flag_tools(
        args, setup, loaded.settings, confirm=confirm, plan_state=plan, on_refused=refusals
    )
    limits = Limits(max_iterations=setup.iterations(loaded.settings))
    session = Session.from_settings(
        loaded.settings, tools=tools, limits=limits, act_first=setup.act
    )
    if not getattr(args, "quiet", False):
        for off in (evaluate_off(tools), containment_off(tools)):
            if off is not None:
                _warn(env)(off)
    try:
        servers = connect_mcp(loaded.settings, env.environ, Paths.default().state_dir, _warn(env))
    except BaseException:
        session.close()
        raise
    if servers is not None:
        session.with_mcp(servers)
    return session, loaded


def _warn(env: Environment) -> Callable[[str], None]:
    def warn(text: str) -> None:
        env.stderr.write(f"conch: {text}\n")
        env.stderr.flush()

    return warn


def model_name(loaded: LoadedSettings) -> str:
    """The model in a few words: provider and model (or model file)."""
    ai = loaded.settings.ai
    model = ai.model_in_use
    return f"{ai.provider}: {model}" if model else ai.provider
