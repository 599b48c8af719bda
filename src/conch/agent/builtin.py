"""conch's own toolset, assembled for one session.

With a sandbox root: the file tools and ``evaluate`` (when a sandbox can run it), both
confined to it. With ``bash``: the ``bash`` tool under the chosen execution mode. Unless
turned off: ``plan`` and ``datetime``. When asked for: the web tools (``web``; off by default:
an agent that reads URLs could also reach services on this machine's network) and, with a
memory directory, ``memory``.
``tool_lookup`` is added by the session, last, over every tool it ends up with.

Each tool module is imported when its tool is built, so a session without a tool does not
pay for its imports.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from conch.agent.bash import (
    DEFAULT_TIMEOUT_S,
    MAX_STDERR,
    MAX_STDOUT,
    OnRefused,
    Shell,
    bash_tool,
)
from conch.agent.evaluate import Evaluator, evaluate_tool
from conch.execute.checked import Approve
from conch.execute.sandbox import Sandbox
from conch.policy import ExecutionMode
from conch.policy.rules import Permissions
from conch.tools import Tool

if TYPE_CHECKING:
    from conch.config.settings import Settings
    from conch.providers.base import Provider
    from conch.tools.fs_base import Request
    from conch.tools.plan import PlanState
    from conch.tools.web import SearchBackend

FsMode = Literal["split", "unified", "both"]


@dataclass(frozen=True, slots=True)
class ToolOptions:
    """Which built-in tools a session gets, and how they behave.

    ``root``: the sandbox directory; the file tools and ``evaluate`` exist only with one,
    and confined to it (``bash`` runs there too, and its paths must stay inside it).
    ``fs_mode``: one file tool per action (``split``, best for small models), one ``fs``
    tool with an ``action`` (``unified``, with batches), or ``both``. ``bash``: offer the
    ``bash`` tool, which runs commands under ``mode``, asking ``confirm`` where the mode
    wants a yes (``unsafe``: through the user's shell, always asking; ``command_timeout``
    in seconds; ``max_stdout`` and ``max_stderr``: bytes of a command's output kept). ``state_dir``: where the audit log of commands goes (None: the platform's
    state directory; ``audit=False``: none). ``evaluate_sandbox``: the bubblewrap for
    ``evaluate`` (None: found on first use). ``web_search``: the search backend handed to
    the web tools. ``memory_dir``: the memory directory (None: no memory tool).
    ``plan_state``: the task list behind the ``plan`` tool, for a front end that shows it
    (None: a fresh one). ``on_refused``: called with a command and why it did not run
    (``policy``, ``declined`` or ``unasked``) before the model is told. ``permissions``:
    the user's permission rules (``conch.policy.rules``); ``pass_env``: variables a
    contained command may see besides the usual ones.
    """

    root: Path | None = None
    fs_mode: FsMode = "split"
    bash: bool = False
    mode: ExecutionMode = ExecutionMode.RESTRICTED
    confirm: Approve | None = None
    unsafe: bool = False
    command_timeout: float = DEFAULT_TIMEOUT_S
    max_stdout: int = MAX_STDOUT
    max_stderr: int = MAX_STDERR
    state_dir: Path | None = None
    audit: bool = True
    evaluate: bool = True
    evaluate_sandbox: Sandbox | None = None
    datetime: bool = True
    plan: bool = True
    web: bool = False
    web_search: SearchBackend | None = None
    memory_dir: Path | None = None
    plan_state: PlanState | None = None
    on_refused: OnRefused | None = None
    # The user's permission rules (``permissions:`` in the config) and the variables a
    # contained command may see besides the usual ones (``execution.pass_env``).
    permissions: Permissions | None = None
    pass_env: tuple[str, ...] = ()
    scrub_env: bool = True
    # ``do``: steps said in plain language, acted on through the one-shot pipeline
    # (``conch.agent.act``), offered first; it runs commands, so only with ``bash``.
    # ``settings``: what the pipeline is configured with (None: conch's defaults).
    act: bool = False
    settings: Settings | None = None


def default_tools(
    options: ToolOptions,
    request: Request | None = None,
    provider: Callable[[], Provider] | None = None,
) -> list[Tool]:
    """The built-in tools ``options`` ask for, in the order they are offered: the ones a task
    uses most first (a small model leans on the first tools it reads about). ``request``
    gives the request being worked on (a refused delete names the files it asks for);
    ``provider`` the session's model, which ``do`` writes its commands with (without one,
    no ``do``)."""
    tools: list[Tool] = []
    shell = shell_for(options)
    if options.act and options.bash and provider is not None:
        from conch.agent.act import do_tool, one_shot_for

        tools.append(do_tool(shell, one_shot_for(options.settings, provider)))
    if options.root is not None:
        from conch.tools.fs import fs_tools

        before_delete = deletes_as_rm(shell)
        tools += fs_tools(
            options.root,
            options.fs_mode,
            before_delete,
            request,
            before_write=shell.permit_write,
            before_move=shell.permit_move,
        )
    if options.bash:
        tools.append(bash_tool(shell))
    if options.root is not None and options.evaluate:
        evaluator = Evaluator(options.root, options.evaluate_sandbox)
        if evaluator.available():  # a tool that can only fail would cost the model steps
            tools.append(evaluate_tool(evaluator))
    if options.plan:
        from conch.tools.plan import PlanState, plan_tool

        tools.append(plan_tool(PlanState() if options.plan_state is None else options.plan_state))
    if options.datetime:
        from conch.tools.clock import datetime_tool

        tools.append(datetime_tool())
    if options.web:
        from conch.tools.web import web_tools

        tools += web_tools(search=options.web_search, before_fetch=shell.permit_fetch)
    if options.memory_dir is not None:
        from conch.tools.memory import memory_tool

        tools.append(memory_tool(options.memory_dir))
    return tools


def evaluate_off(options: ToolOptions) -> str | None:
    """Why ``evaluate`` is not offered although ``options`` ask for it (no sandbox can run
    it here), one line for the user; None when it is offered or was not asked for."""
    if options.root is None or not options.evaluate:
        return None
    reason = Evaluator(options.root, options.evaluate_sandbox).unavailable_reason()
    if reason is None:
        return None
    return f"evaluate (Python in a sandbox) is off: {reason}; --no-python turns it off quietly"


def containment_off(options: ToolOptions) -> str | None:
    """Why commands that would run without a question cannot run contained here (no sandbox
    runs), one line for the user, said once when the session starts; None when they can, or
    when ``options`` offer no ``bash``. Such commands are then asked about, or refused with
    no one to ask (``conch.policy.rules``)."""
    if not options.bash or options.unsafe:
        return None
    from conch.execute.sandbox import find_sandbox

    sandbox = find_sandbox()
    if sandbox.usable:
        return None
    return (
        f"no sandbox can run here ({sandbox.error}): every command is asked about, or refused "
        f"with no one to ask; {sandbox.fix}"
    )


def deletes_as_rm(shell: Shell) -> Callable[[Sequence[str], bool], None]:
    """A file tool's delete, decided as the ``rm`` that would do it under ``shell``'s mode:
    the policy, then the user where the mode wants a yes (in every mode but
    full-autonomous a delete is asked about, or refused when no one can be asked). The
    entries a pattern matches are one ``rm`` of them all: one question. The user refusing
    it ends the tool call with an error the model reads."""

    def before_delete(paths: Sequence[str], recursive: bool) -> None:
        command = shlex.join(["rm", "-r", "--", *paths] if recursive else ["rm", "--", *paths])
        shell.permit(command, parts=tuple(paths))  # delete rules match the paths

    return before_delete


def shell_for(options: ToolOptions) -> Shell:
    """The ``Shell`` the ``bash`` tool of ``options`` runs commands with."""
    state_dir = options.state_dir
    if state_dir is None and options.audit:
        from conch.config.paths import Paths

        state_dir = Paths.default().state_dir
    return Shell(
        cwd=options.root or Path.cwd(),
        mode=options.mode,
        confirm=options.confirm,
        state_dir=state_dir if options.audit else None,
        root=options.root,
        unsafe=options.unsafe,
        timeout=options.command_timeout,
        max_stdout=options.max_stdout,
        max_stderr=options.max_stderr,
        on_refused=options.on_refused,
        permissions=options.permissions,
        pass_env=options.pass_env,
        scrub_env=options.scrub_env,
    )


def memory_vocabulary(directory: Path) -> list[str]:
    """The keywords of the entries saved in the memory ``directory``."""
    from conch.tools.memory import memory_vocabulary as vocabulary

    return list(vocabulary(directory))
