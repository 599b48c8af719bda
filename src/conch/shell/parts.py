"""What one ``conch shell`` holds while it runs, and the small things it does with it.

``ShellParts`` holds the shell's state (directory, environment, aliases), the model and what
it sees (``conch.shell.context.Context``), the cost book, the saved session, the front end's
callbacks (``Approve``, ``Edit``), and the services it opens on first use (the checker of
suggestions, the one-shot pipeline, the MCP servers, the other models of a fallback chain).
Its methods run a line, save a record, count a turn's tokens, pick the provider of a turn
(``provider_for``: the active model, or a chain of them, ``conch.shell.routing``) and make
the system prompt the model reads (``refresh_system``: the shell's prompt, then the
memory of earlier sessions, the summary of the turns the window let go, the project's tree
and the plan of an ``:auto`` goal); those that have something to tell are generators of
``ShellEvent``s (``yield from parts.run(line)``). What the shell decides is in the modules built on it:
``conch.shell.asking`` (model turns), ``conch.shell.offer`` (suggested commands),
``conch.shell.auto`` (autonomous mode), ``conch.shell.meta`` (meta commands) and
``conch.shell.session`` (``ShellSession``, which ties them to an input line).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Container, Generator, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from conch.shell.complete import CommandNames
from conch.shell.context import Context
from conch.shell.cost import CostBook, Estimate, Price
from conch.shell.events import Approve, CommandRan, Edit, Output, Running, Said, ShellEvent
from conch.shell.memory import MemoryStore
from conch.shell.models import ModelChoice
from conch.shell.prompt import prompt_text
from conch.shell.routing import FallbackSettings
from conch.shell.run import append_history, history_file, run_line
from conch.shell.sessions import SavedSession, ShellSessionError
from conch.shell.state import ShellState
from conch.shell.turns import system_prompt

if TYPE_CHECKING:
    from conch.command.oneshot import OneShot
    from conch.config.settings import LoadedSettings, Settings
    from conch.execute.run import Ran
    from conch.mcp.client import McpServers
    from conch.messages import GenerationOptions, Usage
    from conch.policy.rules import Permissions
    from conch.providers.base import Provider
    from conch.shell.check import Checked, Checker
    from conch.shell.fallback import FallbackProvider
    from conch.shell.preplan import Plan
    from conch.shell.project import ProjectContext
    from conch.shell.routing import TaskType
    from conch.shell.turns import Reply

__all__ = ["REPLY_TOKENS", "SHELL_STEPS", "OpenModel", "ShellParts"]

#: The most a reply may be, in tokens.
REPLY_TOKENS = 1024
#: Model replies one goal of autonomous mode (``:auto``) may take, unless told otherwise.
SHELL_STEPS = 20

#: Opens the model a ``ModelChoice`` names (a front end may ask for a missing API key first).
OpenModel = Callable[[ModelChoice], "Provider"]


class ShellParts:
    """One shell's state and services.

    ``loaded``: the settings; ``choice``: the model that answers first; ``state``: the
    directory, environment, aliases and shell lines run with; ``state_dir``: where the saved
    session, the audit log and the lock of the shell's history file live. ``approve`` and
    ``edit``: the front end's questions (``conch.shell.events``). ``open_model``: opens a
    model (default: ``conch.daemon.open_provider``); ``open_mcp``: starts the configured MCP
    servers, for ``:auto`` and ``:mcp`` (None: none). ``environ`` and ``flags``: the process
    environment and the dotted settings the command line gave, for ``:config show``.
    ``max_steps``: model replies one ``:auto`` goal may take. ``keys`` and ``out``: where a
    shell line's keys come from and where it writes (None: the process's terminal).
    ``cache_dir``: help texts and platform facts (default: conch's cache directory).
    ``pinned``: the user chose the model (``--model``): a routing chain keeps it first.
    """

    def __init__(
        self,
        loaded: LoadedSettings,
        choice: ModelChoice,
        *,
        state: ShellState,
        state_dir: Path,
        approve: Approve,
        edit: Edit,
        open_model: OpenModel | None = None,
        open_mcp: Callable[[], McpServers | None] | None = None,
        environ: Mapping[str, str] | None = None,
        flags: Mapping[str, Any] | None = None,
        max_steps: int = SHELL_STEPS,
        keys: int | None = None,
        out: BinaryIO | None = None,
        cache_dir: Path | None = None,
        pinned: bool = False,
    ) -> None:
        self.loaded = loaded
        self.settings = loaded.settings.shell
        self.state = state
        self.state_dir = state_dir
        self.approve, self.edit = approve, edit
        self.environ: Mapping[str, str] = dict(environ if environ is not None else state.env)
        self.flags: Mapping[str, Any] = dict(flags or {})
        self.max_steps = max_steps
        self.keys, self.out = keys, out
        self._cache_dir = cache_dir
        self.base_system = system_prompt(state.shell, self.settings.propose_files)
        self.context = Context(
            self.base_system,
            max_turns=self.settings.max_turns,
            token_budget=self.settings.token_budget,
        )
        self.memory = MemoryStore(state_dir, keep=self.settings.memory_keep)
        self.start_cwd = state.cwd  # where the session began: its memory's directory
        self.remembered = ""  # the [memory] block of earlier sessions (conch.shell.remember)
        self.earlier = ""  # the summary of the turns the window let go
        self.talked = 0  # model turns since the session's summary was last written
        self.summary_number: int | None = None  # that summary's number in the memory
        self.plan: Plan | None = None  # the plan of the :auto goal at hand
        self.project: ProjectContext | None = None
        if self.settings.project_context:
            from conch.shell.project import ProjectContext

            self.project = ProjectContext(
                depth=self.settings.project_depth,
                entries=self.settings.project_entries,
                max_bytes=self.settings.project_max_bytes,
                home=state.home(),
            )
        self.fallback = FallbackSettings.from_settings(self.settings)
        self.pinned = pinned
        self._opened: dict[str, Provider] = {}  # other models a chain opened, by name
        self._chains: dict[tuple[str, ...], FallbackProvider] = {}  # by their models' names
        self._windows: dict[str, int] = {}  # context windows in tokens, by model name
        self._pipeline: Provider | None = None  # the one-shot pipeline's provider now
        prices = {
            name: Price(p.input_per_million, p.output_per_million)
            for name, p in self.settings.prices.items()
        }
        self.book = CostBook(prices, self.settings.cost_warning)
        self._open_model = open_model or _open_provider(loaded.settings)
        self.choice = choice
        self.provider: Provider = self._open(choice)
        self.saved: SavedSession | None = None
        self.autonomous = False
        self.auto: object | None = None  # the agent of autonomous mode (conch.shell.auto)
        self.leaving = False
        self._open_mcp = open_mcp
        self._mcp: McpServers | None = None
        self._mcp_started = False
        self.names = CommandNames(state)
        self._checker: Checker | None = None
        self._oneshot: OneShot | None = None

    # -- the model -----------------------------------------------------------------------------

    @property
    def options(self) -> GenerationOptions:
        """Sampling for the active model's replies."""
        from conch.messages import GenerationOptions

        return GenerationOptions(temperature=self.choice.ai.temperature, max_tokens=REPLY_TOKENS)

    @property
    def active_settings(self) -> Settings:
        """The settings with the active model as their ``ai`` section."""
        return self.loaded.settings.model_copy(update={"ai": self.choice.ai})

    def switch(self, choice: ModelChoice) -> None:
        """Answer with ``choice`` from now on (the conversation stays); the user chose it, so
        a routing chain keeps it first (``pinned``)."""
        provider = self._opened.pop(choice.name, None) or self._open_model(choice)
        self._count_with(provider)
        self.provider.close()
        self.provider, self.choice, self.auto, self._oneshot = provider, choice, None, None
        self._chains.clear()  # their links may hold the provider just closed
        self.pinned = True

    def provider_for(self, task: TaskType) -> Provider:
        """The provider of a model turn of type ``task``: with ``shell.routing`` or
        ``shell.fallback`` set, a ``FallbackProvider`` over the chain ``pick_chain`` makes
        (the models opened as they are first asked, and kept); else, or when the chain is
        the active model alone or names an unknown model, the active model's. One chain is
        one provider, the same for every turn (until ``:model``): what it records
        (``answered_by``) is the last turn's, whoever kept it (the one-shot pipeline
        keeps the provider it was first given)."""
        from conch.errors import UsageError
        from conch.shell.routing import chain_provider, pick_chain

        if not self.fallback.routing and not self.fallback.fallback:
            return self.provider
        settings = self.loaded.settings
        try:
            chain = pick_chain(task, settings, self.choice, self.fallback, pinned=self.pinned)
        except UsageError:  # said once, at the start (ShellSession.open)
            return self.provider
        names = tuple(c.name for c in chain)
        if names == (self.choice.name,):
            return self.provider
        if names not in self._chains:
            self._chains[names] = chain_provider(chain, self.fallback, opener=self.provider_of)
        return self._chains[names]

    def provider_of(self, choice: ModelChoice) -> Provider:
        """The provider of ``choice`` (for a chain, the planner): the active one, or one
        opened for it and kept until the shell closes."""
        if choice.name == self.choice.name:
            return self.provider
        if choice.name not in self._opened:
            self._opened[choice.name] = self._open_model(choice)
        return self._opened[choice.name]

    def window(self) -> int:
        """The active model's context window in tokens (``conch.providers.window``), asked
        once per model for the whole session: a server that is down is not probed again
        at every goal (the default window stands until the shell starts again)."""
        if self.choice.name not in self._windows:
            from conch.providers.window import context_window

            self._windows[self.choice.name] = context_window(self.choice.ai).tokens
        return self._windows[self.choice.name]

    def refresh_system(self) -> None:
        """The system prompt for the next turn: the shell's own, then the memory of earlier
        sessions, the summary of the turns the window let go, the project's tree (made again
        when the directory changed: ``conch.shell.project.ProjectContext``) and the plan of
        an ``:auto`` goal, each a short block the window never evicts."""
        blocks = [self.base_system, self.remembered]
        if self.earlier:
            blocks.append(f"[earlier] Earlier in this session:\n{self.earlier}")
        if self.project is not None:
            summary = self.project.get(self.state.cwd)
            blocks.append(summary.text if summary is not None else "")
        if self.plan is not None:
            blocks.append(self.plan.as_context())
        self.context.system = "\n\n".join(block for block in blocks if block)

    def _open(self, choice: ModelChoice) -> Provider:
        provider = self._open_model(choice)
        self._count_with(provider)
        return provider

    def _count_with(self, provider: Provider) -> None:
        """The window counts tokens with ``provider``'s tokenizer (else an estimate)."""
        from conch.agent.conversation import estimate_tokens, tokenizer_counter

        tokenizer = getattr(provider, "count_tokens", None)
        self.context.counter = tokenizer_counter(tokenizer) if tokenizer else estimate_tokens

    @property
    def cache_dir(self) -> Path:
        if self._cache_dir is None:
            from conch.config.paths import Paths

            self._cache_dir = Paths.default().cache_dir
        return self._cache_dir

    def oneshot(self) -> OneShot:
        """The one-shot request service on the active model (``conch.command.oneshot``),
        made at its first use and again after ``:model``."""
        if self._oneshot is None:
            from conch.command.oneshot import OneShot

            self._oneshot = OneShot(
                self.active_settings,
                lambda: self._pipeline or self.provider,
                cache_dir=self.cache_dir,
            )
        return self._oneshot

    def pipeline_on(self, provider: Provider | None) -> None:
        """The provider the one-shot pipeline is opened on (None: the active model's). The
        pipeline keeps the first it is given until ``:model`` makes a new one, which is why
        ``provider_for`` gives one provider per chain: the same one every time."""
        self._pipeline = provider

    def count(
        self,
        usage: Usage,
        kind: str,
        *,
        model: str | None = None,
        estimated: Estimate | None = None,
    ) -> Iterator[ShellEvent]:
        """Count a turn's tokens under ``model`` (the one that answered; default: the
        active one), with the ``estimated`` tokens of its text for ``:cost detail`` (and
        warn once past ``shell.cost_warning``)."""
        warning = self.book.add(model or self.choice.name, usage, kind, estimated)
        if warning:
            yield Said(warning, warning=True)

    # -- the shell ---------------------------------------------------------------------------

    def prompt(self) -> str:
        """The prompt for the next line."""
        return prompt_text(self.state.cwd, self.state.home(), self.choice.name, self.autonomous)

    def known(self) -> Container[str]:
        """The command names the router knows (``names``: made again when PATH or the
        aliases change)."""
        return self.names.known()

    def check(self, command: str) -> Checked:
        """A suggested command checked where it would run (``conch.shell.check``)."""
        if self._checker is None:
            from conch.shell.check import Checker

            self._checker = Checker(self.loaded.settings, self.cache_dir)
        return self._checker.check(command, self.state)

    @property
    def permissions(self) -> Permissions:
        """The user's permission rules (``permissions:`` in the config)."""
        from conch.policy.rules import permissions_from

        return permissions_from(self.loaded.settings.permissions)

    def run(self, line: str, source: str = "typed") -> Generator[ShellEvent, None, Ran]:
        """Run ``line`` in the shell, live on the terminal (a generator that returns the
        ``Ran``); what it printed goes to the context (unless ``shell.capture_output`` is
        off) and it is noted in the saved session. ``source``: ``typed``, ``suggested`` or
        ``edited`` (those two are the user's yes to a suggestion: given their line in the
        audit log, as every command conch runs for the model is, and appended to the shell's
        history file when ``shell.append_history``)."""
        yield Running(line, source)
        cwd, started = Path(self.state.cwd), time.monotonic()
        ran = run_line(line, self.state, stdin_fd=self.keys, out=self.out)
        if source != "typed":
            from conch.execute.audit import append_audit, audit_line

            seconds = time.monotonic() - started
            append_audit(self.state_dir, audit_line(line, cwd, ran.exit_code, seconds))
        if self.settings.capture_output:
            self.context.record(ran.command, ran.exit_code, ran.output)
        yield CommandRan(line, ran.exit_code, source)
        yield from self.save(
            {"type": "exec", "command": line, "exit_code": ran.exit_code, "source": source}
        )
        if source != "typed" and self.settings.append_history:
            yield from self._append_history(line)
        return ran

    def run_contained(self, line: str) -> Generator[ShellEvent, None, Ran | None]:
        """Run a suggestion nobody was asked about, contained (``conch.execute.checked``:
        bubblewrap, the filesystem read-only, no network, no secrets); what it printed is
        an ``Output`` and reaches the context like a typed line's. Returns the ``Ran``, or
        None when it cannot run that way (it needs the user's shell, or no sandbox runs
        here): ask instead."""
        from conch.errors import NoOneToAsk, PolicyRejection
        from conch.execute.checked import Answer, run_checked
        from conch.policy import ExecutionMode, PolicyContext
        from conch.policy.confirm import ConfirmOptions

        def nobody(command: str, verdict: object, wanted: object) -> Answer:
            raise NoOneToAsk(command)

        cwd = Path(self.state.cwd)
        mode = ExecutionMode.RESTRICTED
        try:
            done = run_checked(
                line,
                PolicyContext(mode=mode, cwd=cwd),
                cwd=cwd,
                state_dir=self.state_dir,
                approve=nobody,
                options=ConfirmOptions(mode=mode, permissions=self.permissions),
                interactive=False,
            )
        except (PolicyRejection, NoOneToAsk):
            return None
        yield Output(done.result.stdout, done.result.stderr)
        if done.note:
            yield Said(done.note)
        if self.settings.capture_output:
            self.context.record(done.command, done.exit_code, done.output)
        yield CommandRan(line, done.exit_code, "suggested", contained=True)
        yield from self.save(
            {"type": "exec", "command": line, "exit_code": done.exit_code, "source": "suggested"}
        )
        return done

    def _append_history(self, line: str) -> Iterator[ShellEvent]:
        path = history_file(self.state)
        if path is None or "\n" in line:  # a history file holds a command a line
            return
        try:
            append_history(line, path, self.state_dir)
        except (OSError, TimeoutError) as exc:
            yield Said(f"cannot append to {path}: {exc}", warning=True)

    # -- the saved session -------------------------------------------------------------------

    def save(self, record: dict[str, Any]) -> Iterator[ShellEvent]:
        """Add a record to the saved session; a failure is a warning, and saving stops."""
        if self.saved is None:
            return
        try:
            self.saved.append(record)
        except ShellSessionError as exc:
            yield Said(f"{exc}; this session is no longer saved", warning=True)
            self.saved = None

    def save_turn(self, typed: str, reply: Reply, model: str | None = None) -> Iterator[ShellEvent]:
        """Record a model turn (the question as sent and as typed, then the reply, with the
        ``model`` that answered: by default the active one)."""
        from conch.messages import Message

        self.talked += 1
        if self.saved is None:
            return
        try:
            self.saved.add_turn(Message("user", reply.sent), text=typed)
            self.saved.add_turn(
                Message("assistant", reply.text),
                model=model or self.choice.name,
                prompt_tokens=reply.usage.prompt_tokens,
                completion_tokens=reply.usage.completion_tokens,
            )
        except ShellSessionError as exc:
            yield Said(f"{exc}; this session is no longer saved", warning=True)
            self.saved = None

    # -- the rest ----------------------------------------------------------------------------

    def mcp_servers(self) -> McpServers | None:
        """The MCP servers of the config, started the first time they are wanted (None
        when none is enabled, or no opener was given)."""
        if not self._mcp_started:
            self._mcp_started = True
            self._mcp = self._open_mcp() if self._open_mcp is not None else None
        return self._mcp

    def close(self) -> None:
        """Release the models and the MCP servers."""
        if self._mcp is not None:
            self._mcp.close()
            self._mcp = None
        for provider in self._opened.values():
            provider.close()
        self._opened.clear()
        self.provider.close()


def _open_provider(settings: Settings) -> OpenModel:
    """Opens a model as every front end does (``conch.daemon.open_provider``)."""

    def open_model(choice: ModelChoice) -> Provider:
        from conch.daemon import open_provider

        return open_provider(choice.ai, settings.daemon)

    return open_model
