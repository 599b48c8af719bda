"""What one ``conch shell`` holds while it runs: the shell's state, the model and its
context, the cost book, the saved session, and the terminal it talks to.

``ShellParts`` is shared by the loop (``shellrepl``), the model turns (``shellturn``), the
meta commands (``shellmeta``) and autonomous mode (``shellauto``); each of them adds a
behaviour, this module only holds and runs things.
"""

from __future__ import annotations

import argparse
import codecs
import dataclasses
import io
import os
import sys
import time
from collections.abc import Container
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO, cast

from conch.cli import ui
from conch.cli.agentlog import TurnLog
from conch.cli.agentview import TurnView
from conch.cli.environment import Environment
from conch.cli.repl import Interrupts
from conch.cli.shellinput import LineReader
from conch.shell.context import Context
from conch.shell.cost import CostBook, Price
from conch.shell.models import ModelChoice
from conch.shell.prompt import prompt_text
from conch.shell.route import known_commands
from conch.shell.run import append_history, history_file, run_line
from conch.shell.sessions import ShellSession, ShellSessionError
from conch.shell.state import ShellState, load_aliases
from conch.shell.turns import system_prompt

if TYPE_CHECKING:
    from conch.config.settings import LoadedSettings
    from conch.execute.run import Ran
    from conch.mcp.client import McpServers
    from conch.messages import GenerationOptions, Usage
    from conch.policy.rules import Permissions
    from conch.providers.base import Provider
    from conch.shell.check import Checked, Checker
    from conch.shell.turns import Reply

# The most a reply may be, in tokens.
REPLY_TOKENS = 1024


class ShellParts:
    """One shell's state. ``flags``: the dotted settings the command line gave (for
    ``:config show``); ``state_dir``: where the session, the input history and the lock of
    the shell's history file live."""

    def __init__(
        self,
        args: argparse.Namespace,
        env: Environment,
        loaded: LoadedSettings,
        flags: dict[str, Any],
        choice: ModelChoice,
        state_dir: Path,
    ) -> None:
        self.args, self.env, self.loaded, self.flags = args, env, loaded, flags
        self.state_dir = state_dir
        self.settings = loaded.settings.shell
        self.state = ShellState.from_environment(env.environ, cwd=str(env.cwd))
        self.state.aliases = load_aliases(self.state.shell, self.state.env)
        self.context = Context(
            system_prompt(self.state.shell),
            max_turns=self.settings.max_turns,
            token_budget=self.settings.token_budget,
        )
        prices = {
            name: Price(p.input_per_million, p.output_per_million)
            for name, p in self.settings.prices.items()
        }
        self.book = CostBook(prices, self.settings.cost_warning)
        self.view = TurnView(env, env.stdout)
        self.interrupts = Interrupts()
        self.choice = choice
        self.provider: Provider = self._open(choice)
        self.session: ShellSession | None = None
        self.autonomous = False
        self._mcp: McpServers | None = None
        self._mcp_started = False
        self.read: LineReader | None = None  # set by the loop
        self.auto: object | None = None  # the agent of autonomous mode (shellauto.AutoAgent)
        self._known: tuple[tuple[str, tuple[str, ...]], Container[str]] | None = None
        self._checker: Checker | None = None
        self._out = _output(env)
        self._keys = _keys(env)

    # -- the model -----------------------------------------------------------------------------

    @property
    def options(self) -> GenerationOptions:
        """Sampling for the active model's replies."""
        from conch.messages import GenerationOptions

        return GenerationOptions(temperature=self.choice.ai.temperature, max_tokens=REPLY_TOKENS)

    def switch(self, choice: ModelChoice) -> None:
        """Answer with ``choice`` from now on (the conversation stays)."""
        provider = self._open(choice)
        self.provider.close()
        self.provider, self.choice, self.auto = provider, choice, None

    def _open(self, choice: ModelChoice) -> Provider:
        from conch.agent.conversation import estimate_tokens, tokenizer_counter
        from conch.cli.authcmd import ask_for_missing_key
        from conch.daemon import open_provider

        if choice.named:
            ask_for_missing_key(choice.ai, self.env)
        provider = open_provider(choice.ai, self.loaded.settings.daemon)
        tokenizer = getattr(provider, "count_tokens", None)
        self.context.counter = tokenizer_counter(tokenizer) if tokenizer else estimate_tokens
        return provider

    def active_settings(self) -> LoadedSettings:
        """The settings with the active model as their ``ai`` section (for the history log)."""
        settings = self.loaded.settings.model_copy(update={"ai": self.choice.ai})
        return dataclasses.replace(self.loaded, settings=settings)

    def turn_log(self) -> TurnLog:
        """A history-log writer for one model turn or goal."""
        return TurnLog(self.env, ["conch", *self.args.argv], self.active_settings())

    def count(self, usage: Usage, kind: str) -> None:
        """Count a turn's tokens (and warn once past ``shell.cost_warning``)."""
        warning = self.book.add(self.choice.name, usage, kind)
        if warning:
            self.warn(warning)

    # -- the shell ---------------------------------------------------------------------------

    def prompt(self) -> str:
        """The prompt for the next line."""
        return prompt_text(self.state.cwd, self.state.home(), self.choice.name, self.autonomous)

    def known(self) -> Container[str]:
        """The command names the router knows, built again when PATH or the aliases change."""
        key = (self.state.env.get("PATH", ""), tuple(sorted(self.state.aliases)))
        if self._known is None or self._known[0] != key:
            self._known = (key, known_commands(key[1], path=key[0]))
        return self._known[1]

    def check(self, command: str) -> Checked:
        """A suggested command checked where it would run (``conch.shell.check``)."""
        if self._checker is None:
            from conch.config.paths import Paths
            from conch.shell.check import Checker

            self._checker = Checker(self.loaded.settings, Paths.default().cache_dir)
        return self._checker.check(command, self.state)

    def run(self, line: str, source: str = "typed") -> Ran:
        """Run ``line`` in the shell, live on the terminal; what it printed goes to the
        context (unless ``shell.capture_output`` is off) and it is noted in the session.
        ``source``: ``typed``, ``suggested`` or ``edited`` (those two are the user's yes to a
        suggestion, appended to the shell's history file when ``shell.append_history``, and
        given their line in the audit log as every command conch runs for the model is)."""
        self.env.stdout.flush()
        self.env.stderr.flush()
        cwd, started = Path(self.state.cwd), time.monotonic()
        ran = run_line(line, self.state, stdin_fd=self._keys, out=self._out)
        if source != "typed":
            from conch.execute.audit import append_audit, audit_line

            seconds = time.monotonic() - started
            append_audit(self.state_dir, audit_line(line, cwd, ran.exit_code, seconds))
        if self.settings.capture_output:
            self.context.record(ran.command, ran.exit_code, ran.output)
        self.save({"type": "exec", "command": line, "exit_code": ran.exit_code, "source": source})
        if source != "typed" and self.settings.append_history:
            self._append_history(line)
        return ran

    @property
    def permissions(self) -> Permissions:
        """The user's permission rules (``permissions:`` in the config)."""
        from conch.policy.rules import permissions_from

        return permissions_from(self.loaded.settings.permissions)

    def run_contained(self, line: str) -> Ran | None:
        """Run a suggestion nobody was asked about, contained (``conch.execute.checked``:
        bubblewrap, the filesystem read-only, no network, no secrets), with what it printed
        shown and given to the context like a typed line's. None when it cannot run that
        way (it needs your shell, or no sandbox runs here): ask instead."""
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
        self.env.stdout.write(done.result.stdout)
        self.env.stderr.write(done.result.stderr)
        if done.note:
            self.say(done.note)
        if self.settings.capture_output:
            self.context.record(done.command, done.exit_code, done.output)
        self.save(
            {"type": "exec", "command": line, "exit_code": done.exit_code, "source": "suggested"}
        )
        return done

    def _append_history(self, line: str) -> None:
        path = history_file(self.state)
        if path is None:
            return
        try:
            append_history(line, path, self.state_dir)
        except (OSError, TimeoutError) as exc:
            self.warn(f"cannot append to {path}: {exc}")

    # -- the session -------------------------------------------------------------------------

    def save(self, record: dict[str, Any]) -> None:
        """Add a record to the saved session; a failure is a warning, and saving stops."""
        if self.session is None:
            return
        try:
            self.session.append(record)
        except ShellSessionError as exc:
            self.warn(f"{exc}; this session is no longer saved")
            self.session = None

    def save_turn(self, typed: str, reply: Reply) -> None:
        """Record a model turn (the question as sent and as typed, then the reply)."""
        from conch.messages import Message

        if self.session is None:
            return
        try:
            self.session.add_turn(Message("user", reply.sent), text=typed)
            self.session.add_turn(
                Message("assistant", reply.text),
                model=self.choice.name,
                prompt_tokens=reply.usage.prompt_tokens,
                completion_tokens=reply.usage.completion_tokens,
            )
        except ShellSessionError as exc:
            self.warn(f"{exc}; this session is no longer saved")
            self.session = None

    # -- talking to the user -----------------------------------------------------------------

    def say(self, text: str) -> None:
        """A dim ``conch:`` line on stderr."""
        self.view.pause()
        self.env.stderr.write(ui.paint(self.env, f"conch: {text}", "2") + "\n")
        self.env.stderr.flush()

    def warn(self, text: str) -> None:
        """A ``conch:`` line on stderr that is not dimmed."""
        self.view.pause()
        self.env.stderr.write(f"conch: {text}\n")
        self.env.stderr.flush()

    def mcp_servers(self) -> McpServers | None:
        """The MCP servers of the config, started the first time they are wanted (None
        when none is enabled); one that cannot start is a warning."""
        if not self._mcp_started:
            from conch.cli.mcpuse import connect_mcp

            self._mcp_started = True
            settings = self.loaded.settings
            self._mcp = connect_mcp(settings, self.env.environ, self.state_dir, self.warn)
        return self._mcp

    def close(self) -> None:
        """Release the model, the MCP servers and the files."""
        if self._mcp is not None:
            self._mcp.close()
        self.provider.close()
        if self._keys is not None:
            os.close(self._keys)
            self._keys = None


def _output(env: Environment) -> BinaryIO | None:
    """Where shell lines write: the process's stdout itself, or a text stream in its place."""
    if env.stdout is sys.stdout:
        return None
    return cast(BinaryIO, _TextSink(env.stdout))


def _keys(env: Environment) -> int | None:
    """Where a shell line's keys come from: the process's terminal (None: the default), or
    nowhere when the shell does not read one (its input lines are not a program's keys)."""
    if env.stdin is sys.stdin and env.stdin_isatty:
        return None
    return os.open(os.devnull, os.O_RDONLY)


class _TextSink(io.RawIOBase):
    """A binary stream that decodes what it is given into a text stream."""

    def __init__(self, out: TextIO) -> None:
        super().__init__()
        self._text = out
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self._text.write(self._decoder.decode(chunk))
        return len(chunk)

    def flush(self) -> None:
        self._text.flush()
