"""``conch chat``: the agent in a streaming REPL, or one prompt with ``-p``.

The session, its tools and the execution mode come from the library; this module reads
input, renders the turns (``agentview``), asks before commands (``confirm``), answers the
REPL's slash commands, and saves the chat after every turn (``sessionfile``).
"""

from __future__ import annotations

import argparse
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conch.cli import ui
from conch.cli.agentlog import TurnLog
from conch.cli.agentmetrics import Metrics, metrics_for, report_window
from conch.cli.agentsetup import AgentSetup, Refusals, model_name, open_session, setup_from
from conch.cli.agentview import TurnView, steps_summary, tools_table
from conch.cli.environment import Environment
from conch.cli.parsing import CHAT_ITERATIONS, USAGES, Parser, add_agent_flags, add_report_flags
from conch.cli.repl import Interrupts, make_reader
from conch.cli.status import ExitStatus
from conch.errors import ConchError, UsageError

if TYPE_CHECKING:
    from conch.agent.events import AgentEvent
    from conch.agent.session import Session
    from conch.tools.plan import PlanState

COMMANDS = (
    ("/help", "this list"),
    ("/tools", "the tools the agent has, and when it uses each"),
    ("/plan", "the steps of the last instruction, and the agent's checklist"),
    ("/system [TEXT]", "show the system prompt; with TEXT, make it the base (clears the chat)"),
    ("/reset", "start the conversation over (the plan too)"),
    ("/compress", "replace the conversation with a recap the model writes of it"),
    ("/clear", "clear the screen (the conversation stays)"),
    ("/exit", "leave (also /quit, or Ctrl+D)"),
)
KEYS = (
    "Enter sends; Alt+Enter or a line ending in \\ starts a new line; Ctrl+R searches "
    "earlier inputs. Ctrl+C stops a reply, clears the line, and three in a row leave."
)


def build_chat_parser() -> argparse.ArgumentParser:
    """The parser of ``conch chat``."""
    p = Parser(
        prog="conch chat",
        usage=USAGES["chat"],
        description="Chat with the agent and its tools: a streaming REPL, or one prompt with -p.",
        epilog="`conch help chat` has the REPL's commands and keys.",
    )
    p.add_argument("words", nargs="*", help=argparse.SUPPRESS)
    p.add_argument(
        "-p", "--prompt", metavar="PROMPT", help="send one prompt, print the reply, exit"
    )
    p.add_argument(
        "--continue",
        dest="resume",
        action="store_true",
        help="resume the last chat held in the sandbox directory",
    )
    p.add_argument(
        "--no-local-session",
        action="store_true",
        help="do not save this chat (--continue can still read the saved one)",
    )
    p.add_argument(
        "--compress",
        action="store_true",
        help="resume the saved chat (as --continue) as a recap the model writes of it",
    )
    p.add_argument(
        "--show-system-prompt", action="store_true", help="print the system prompt and exit"
    )
    add_agent_flags(p, CHAT_ITERATIONS, act=True)
    add_report_flags(p)
    return p


def run_chat(args: argparse.Namespace, env: Environment) -> int:
    """``conch chat``: check the flags, open the session, then one prompt or the REPL."""
    if args.prompt is not None and not args.prompt.strip():
        raise UsageError('the prompt after -p is empty; say what you want: conch chat -p "..."')
    setup = setup_from(args, env, "interactive")
    from conch.tools.plan import PlanState

    plan = PlanState()
    view = TurnView(env, None, quiet=args.quiet)
    metrics = metrics_for(args, env.cwd, lambda text: view.line(text, dim=True))
    confirm = None
    if env.open_terminal() is not None:
        from conch.cli.confirm import agent_approver

        confirm = agent_approver(env, view.pause)
    session, loaded = open_session(
        args, env, setup, confirm=confirm, refusals=Refusals(), plan=plan
    )
    try:
        if args.show_system_prompt:
            env.stdout.write(session.render_system().rstrip("\n") + "\n")
            return ExitStatus.OK
        log = TurnLog(env, ["conch", *args.argv], loaded)
        chat = Chat(args, env, session, setup, plan, view, model_name(loaded), log)
        chat.metrics = metrics
        report_window(metrics, loaded)
        if args.resume or args.compress:
            chat.resume()
        if args.compress:
            chat.compress()
        if args.prompt is not None:
            return chat.once(args.prompt)
        if not env.stdin_isatty:
            text = env.stdin.read()
            if not text.strip():
                raise UsageError('no prompt: stdin was empty; try: conch chat -p "..."')
            return chat.once(text)
        return chat.repl()
    finally:
        session.close()
        metrics.close()


class Chat:
    """One chat: its session, how turns are shown, and where it is saved."""

    def __init__(
        self,
        args: argparse.Namespace,
        env: Environment,
        session: Session,
        setup: AgentSetup,
        plan: PlanState,
        view: TurnView,
        model: str,
        log: TurnLog,
    ) -> None:
        from conch.cli.sessionfile import session_path
        from conch.config.paths import Paths

        self.args, self.env, self.session, self.setup = args, env, session, setup
        self.plan, self.view, self.model, self.log = plan, view, model, log
        view.n_ctx = session.context_tokens
        self.state_dir = Paths.default().state_dir
        self.path = session_path(self.state_dir, setup.root)
        self.save_enabled = not args.no_local_session
        self.interrupts = Interrupts()
        self.metrics = Metrics()
        self._replying = False

    # -- the conversation --------------------------------------------------------------------

    def resume(self) -> None:
        """Take up the chat saved for this sandbox (a note when there is none)."""
        from conch.cli.sessionfile import SessionFileError, load_session

        messages = load_session(self.path)
        if messages is None:
            self._say(f"no saved chat for {self.setup.root} yet; starting a new one")
            return
        try:
            self.session.restore(messages)
        except ValueError as exc:
            raise SessionFileError(
                f"the saved chat {self.path} cannot be resumed ({exc}); delete it, or start "
                "without --continue"
            ) from None
        turns = sum(m.role == "user" for m in messages)
        self._say(f"resumed the chat saved for {self.setup.root} ({turns} messages from you)")

    def turn(self, text: str) -> str:
        """One turn, shown as it happens; the chat is saved, and the turn recorded in the
        history log, however it ends."""
        self.view.begin()
        self.metrics.begin(text)
        try:
            with self.log.turn(text):
                on_event = self.log.tee(self.metrics.tee(self.view.on_event))
                reply = self.session.chat(text, on_event=on_event)
                self.log.code = ExitStatus.OK
                return reply
        finally:
            self.view.pause()
            self.save()

    def compress(self) -> str | None:
        """Replace the conversation with a recap the model writes of it (``/compress``,
        ``--compress``), show the recap and save the chat; None when there was nothing to
        compress."""
        self.view.begin("writing a recap")
        self.metrics.begin("(a recap of the conversation)")
        try:
            recap = self.session.compress(on_event=self.metrics.tee(_stages(self.view)))
        finally:
            self.view.pause()
        if recap is None:
            self._say("nothing to compress yet")
            return None
        self.plan.clear()
        self.save()
        if self.view.out is not None:  # the REPL: the recap is part of the conversation
            self.view.out.write(recap.rstrip("\n") + "\n")
            self.view.out.flush()
        else:
            self._say(f"recap: {recap}")
        self._say("the conversation so far is replaced by this recap")
        return recap

    def save(self) -> None:
        """Write the chat to its file (unless --no-local-session); a failure is a warning."""
        if not self.save_enabled:
            return
        from conch.agent.stepplan import plan_record
        from conch.cli.sessionfile import save_session

        plan = plan_record(self.session.plan)
        try:
            save_session(self.path, self.setup.root, self.model, self.session.history, plan)
        except OSError as exc:
            self.env.stderr.write(f"conch: warning: cannot save the chat to {self.path}: {exc}\n")

    def status_line(self) -> None:
        """``● ctx% / tokens  last: tk/s`` after a reply."""
        prompt, completion = self.view.usage
        tokens = prompt + completion
        if not tokens:
            from conch.agent.conversation import message_tokens

            tokens = sum(message_tokens(m) for m in self.session.messages)
        self.view.status(tokens)

    # -- one prompt --------------------------------------------------------------------------

    def once(self, text: str) -> int:
        """Send one prompt and print the reply (streamed when stdout is a terminal)."""
        streamed = self.env.stdout_isatty
        self.view.out = self.env.stdout if streamed else None
        reply = self.turn(text)
        if not streamed:
            self.env.stdout.write(reply.rstrip("\n") + "\n")
            self.env.stdout.flush()
        self.status_line()
        return ExitStatus.OK

    # -- the REPL ----------------------------------------------------------------------------

    def repl(self) -> int:
        """Read, answer, repeat until /exit or Ctrl+D; Ctrl+C as in a shell."""
        history = chat_history_path(self.state_dir) if self.save_enabled else None
        read = make_reader(self.env, history)
        self.view.out = self.env.stdout
        self._banner()
        previous = signal.signal(signal.SIGINT, self._interrupted)
        try:
            return self._loop(read)
        finally:
            signal.signal(signal.SIGINT, previous)

    def _loop(self, read: Callable[[], str]) -> int:
        while True:
            try:
                line = read()
            except EOFError:
                self.env.stderr.write("\n")
                return ExitStatus.OK
            except KeyboardInterrupt:  # at the prompt: the line is gone, a new prompt
                if self.interrupts.press():
                    return ExitStatus.INTERRUPTED
                continue
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                if self.command(text) == "exit":
                    return ExitStatus.OK
                continue
            self._repl_turn(line)

    def _repl_turn(self, text: str) -> None:
        self._replying = True
        try:
            self.turn(text)
            self._replying = False
            self.status_line()
        except KeyboardInterrupt:
            self.view.pause()
            self.env.stdout.write("\n")
            self._say("stopped")
        except ConchError as exc:  # the model failed, or the agent gave up: say so, go on
            self.env.stderr.write(f"conch: {exc}\n")
        finally:
            self._replying = False

    def _interrupted(self, signum: int, frame: Any) -> None:
        """Ctrl+C outside the line editor: the first one stops the reply being made, the
        third within the window leaves at once, and between replies it does nothing else."""
        if self.interrupts.press():
            os.write(2, b"\nconch: three Ctrl+C: leaving now\n")
            os._exit(ExitStatus.INTERRUPTED)
        if self._replying:
            self._replying = False
            raise KeyboardInterrupt

    def command(self, text: str) -> str | None:
        """Answer a slash command; ``"exit"`` when the REPL should end."""
        name, _, rest = text.partition(" ")
        out = self.env.stdout
        if name in ("/exit", "/quit"):
            return "exit"
        if name == "/help":
            width = max(len(c) for c, _ in COMMANDS) + 2
            out.write("".join(f"  {c:<{width}}{what}\n" for c, what in COMMANDS))
            out.write(f"  {KEYS}\n")
        elif name == "/tools":
            out.write(tools_table(self.session.tools) + "\n")
        elif name == "/plan":
            shown = steps_summary(self.session.plan)
            shown += [self.plan.render()] if self.plan.items else []
            out.write("\n".join(shown or ["no plan yet"]) + "\n")
        elif name == "/system":
            if rest.strip():
                self.session.set_system(rest.strip())
                self.plan.clear()
                self.save()
                self._say("the system prompt's base is replaced; the conversation starts over")
            else:
                out.write(self.session.render_system().rstrip("\n") + "\n")
        elif name == "/compress":
            self._replying = True
            try:
                self.compress()
            except KeyboardInterrupt:
                self._say("stopped; the conversation is kept")
            except ConchError as exc:
                self.env.stderr.write(f"conch: {exc}\n")
            finally:
                self._replying = False
        elif name == "/reset":
            self.session.reset()
            self.plan.clear()
            self.save()
            self._say("the conversation starts over")
        elif name == "/clear":
            if self.env.stdout_isatty:
                out.write("\x1b[H\x1b[2J")
        else:
            self._say(f"unknown command {name}; /help lists them")
        out.flush()
        return None

    def _banner(self) -> None:
        bash = f"bash ({self.setup.mode})" if self.setup.bash else "no bash"
        self._say(
            f"chat with {self.model} in {self.setup.root}; {len(self.session.tools)} tools, "
            f"{bash}. /help for commands, Ctrl+D to leave."
        )

    def _say(self, text: str) -> None:
        if self.args.quiet:
            return
        self.env.stderr.write(ui.paint(self.env, f"conch: {text}", "2") + "\n")
        self.env.stderr.flush()


def _stages(view: TurnView) -> Callable[[AgentEvent], None]:
    """The events of a recap being written, shown as progress only (the recap is shown
    whole once it is done)."""
    from conch.messages import Stage

    def on_event(event: AgentEvent) -> None:
        if isinstance(event, Stage):
            view.on_event(event)

    return on_event


def chat_history_path(state_dir: Path) -> Path:
    """The REPL's input history file."""
    return state_dir / "chat_history"
