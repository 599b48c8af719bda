"""``Session``: one model, its tools, a layered system prompt and a conversation.

The library's entry point; every front end builds on it, and so can a third-party agent::

    from conch import Session, tool

    @tool
    def add(a: int, b: int) -> int:
        "Add two numbers."
        return a + b

    session = Session.local().with_default_tools(False).add_tool(add)
    print(session.chat("What is 2 + 40?"))

Pick the model once (``Session.local``, ``Session.remote``, ``Session.from_settings``, or
any ``Provider``), shape the system prompt and the tools with the fluent calls, then
``chat``. The prompt and the tools are built at the first turn (or ``init``). After that,
what keeps the conversation and what clears it:

==========================  =================  ==========================================
call                        history kept?      what happens
==========================  =================  ==========================================
``refresh_system()``        yes                the prompt is rendered again (callable
                                               appends recomputed) and replaces the old
``set_system(text)``        no (cleared)       ``text`` becomes the base, then as above
``add_tool(t)`` after init  yes                ``t`` joins the tools, then as above
``add_tool(t)`` before      (no history yet)   ``t`` is queued for the first turn
``with_mcp(servers)``       yes                their tools join (an MCP server that stops
                                               takes its tools with it at the next turn)
``reset()``                 no (cleared)       the conversation starts over
``restore(messages)``       replaced           a saved conversation is taken up again
``compress()``              replaced           by a recap the model writes of it
==========================  =================  ==========================================

``system``, ``no_builtin_system``, ``system_append``, ``preamble_options`` configure; after
the first turn they take effect at the next ``refresh_system``. The preamble (date, memory
vocabulary) is rendered again at every turn.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from conch.agent.act import suits_a_command
from conch.agent.builtin import ToolOptions, default_tools, memory_vocabulary, shell_for
from conch.agent.conversation import (
    PRUNE_AT,
    Conversation,
    TokenCounter,
    alternation_problems,
    estimate_tokens,
    tokenizer_counter,
)
from conch.agent.events import AgentEvent, PlanStep
from conch.agent.lookup import lookup_tool
from conch.agent.loop import ACT_TOOL, Agent, Limits
from conch.agent.stepplan import StepPlan
from conch.agent.steps import split_steps
from conch.agent.system import (
    DEFAULT_BASE,
    PreambleOptions,
    compose,
    render_catalogue,
    render_preamble,
    stable_layers,
)
from conch.messages import GenerationOptions, Message, ProviderEvent, TextDelta
from conch.providers.base import Provider
from conch.providers.window import DEFAULT_WINDOW, context_window
from conch.tools import Tool, ToolRegistry

if TYPE_CHECKING:
    from conch.config.settings import Settings
    from conch.mcp.client import McpServers

ToolCallMode = Literal["auto", "native", "json"]
Append = str | Callable[[], str]

# Providers whose models are taken not to emit native tool calls, unless the provider says
# otherwise with a ``native_tool_calls`` attribute: the embedded model.
_WITHOUT_NATIVE_CALLS = frozenset({"local"})


def native_tool_calls(provider: Provider) -> bool:
    """Whether ``provider``'s model emits native tool calls: its ``native_tool_calls``
    attribute when it has one, else True for every provider but the embedded model."""
    flag = getattr(provider, "native_tool_calls", None)
    if isinstance(flag, bool):
        return flag
    return provider.name not in _WITHOUT_NATIVE_CALLS


class Session:
    """A chat with tools: see the module documentation for the calls and their contract.

    ``tools``: which built-in tools to offer and how (``ToolOptions``). ``tool_calls``:
    ``native`` tool calls, ``json`` steps written as text, or ``auto`` (by the provider).
    ``options``: sampling for every model reply. ``limits``: iterations, result caps, loop
    detection. ``context_tokens``: the model's context window; the conversation is pruned
    at 80% of it less the reply's ``max_tokens``, keeping the last ``keep_turns`` turns.
    ``count_tokens``: the tokenizer (default: the provider's ``count_tokens`` where it has one,
    an estimate of four characters a token wherever that cannot say). ``stepwise``: a
    message that asks for several actions in turn ("Write x.py .... Run it and save its
    output to y.txt.") is given one action per turn, all within one turn's iteration limit
    (``conch.agent.steps``), a plan whose steps ``plan`` keeps with how each went
    (``conch.agent.stepplan``); by default on where the model writes JSON steps (small models).
    ``act_first``: where ``do`` is offered (``ToolOptions.act``), each instruction (each
    step of it, stepwise) goes to ``do`` first, before the model is asked.
    """

    def __init__(
        self,
        provider: Provider,
        *,
        tools: ToolOptions | None = None,
        tool_calls: ToolCallMode = "auto",
        options: GenerationOptions | None = None,
        limits: Limits | None = None,
        context_tokens: int = DEFAULT_WINDOW,
        keep_turns: int = 5,
        count_tokens: TokenCounter | None = None,
        stepwise: bool | None = None,
        act_first: bool = False,
    ) -> None:
        self.provider = provider
        self.act_first = act_first
        self.tool_options = tools or ToolOptions()
        self.json_steps = tool_calls == "json" or (
            tool_calls == "auto" and not native_tool_calls(provider)
        )
        self.stepwise = self.json_steps if stepwise is None else stepwise
        self.options = options or GenerationOptions(max_tokens=1024)
        self.limits = limits or Limits()
        self.context_tokens = context_tokens
        self._request: str | None = None  # what the current turn works on
        if count_tokens is None:
            tokenizer = getattr(provider, "count_tokens", None)
            count_tokens = tokenizer_counter(tokenizer) if tokenizer else estimate_tokens
        counter = count_tokens
        self._conversation = Conversation(counter=counter, keep_turns=keep_turns)
        self._base: str | None = None
        self._appends: list[Append] = []
        self._preamble = PreambleOptions()
        self._use_defaults = True
        self._defaults: list[Tool] | None = None
        self._extra: list[Tool] = []
        self._mcp: McpServers | None = None
        self._mcp_close = False
        self._mcp_seen = -1
        self._lookup = lookup_tool(lambda: self.tools)
        self._tools: list[Tool] | None = None
        self._stable: str | None = None
        self._running: Generator[AgentEvent, None, str] | None = None
        self._plan = StepPlan()

    # -- picking the model -------------------------------------------------------------------

    @classmethod
    def local(
        cls, model_path: str | Path | None = None, *, n_ctx: int = 4096, **kwargs: Any
    ) -> Session:
        """The embedded model (or the GGUF file at ``model_path``) in this process; it loads
        at the first turn. ``kwargs`` go to the constructor."""
        from conch.config.settings import AISettings, LocalSettings
        from conch.providers.base import create_provider

        local = LocalSettings(
            model_path=None if model_path is None else str(model_path), n_ctx=n_ctx
        )
        kwargs.setdefault("context_tokens", n_ctx)
        return cls(create_provider(AISettings(provider="local", local=local)), **kwargs)

    @classmethod
    def remote(
        cls, url: str, model: str, *, api_key_env: str = "OPENAI_API_KEY", **kwargs: Any
    ) -> Session:
        """A model behind an OpenAI-compatible server at ``url`` (llama.cpp, Ollama, vLLM,
        OpenAI); the key, where one is needed, comes from ``api_key_env`` or the keyring."""
        from conch.config.settings import AISettings
        from conch.providers.base import create_provider

        ai = AISettings(provider="openai", base_url=url, model=model, api_key_env=api_key_env)
        if "context_tokens" not in kwargs:  # asked of the server once
            kwargs["context_tokens"] = context_window(ai).tokens
        return cls(create_provider(ai), **kwargs)

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> Session:
        """The model ``settings`` name, opened as the front ends open it (the embedded
        model through the warm model service when it is enabled)."""
        from conch.daemon import open_provider

        ai = settings.ai
        kwargs.setdefault("tool_calls", ai.tool_calls)
        if "context_tokens" not in kwargs:  # configured, the embedded model's, or asked
            kwargs["context_tokens"] = context_window(ai).tokens
        kwargs.setdefault("options", GenerationOptions(temperature=ai.temperature, max_tokens=1024))
        return cls(open_provider(ai, settings.daemon), **kwargs)

    # -- shaping the prompt and the tools ----------------------------------------------------

    def system(self, text: str) -> Session:
        """Replace the built-in base prompt with ``text``, verbatim."""
        self._base = text
        return self

    def no_builtin_system(self) -> Session:
        """Drop the built-in base prompt (author the prompt with ``system_append``)."""
        self._base = ""
        return self

    def system_append(self, text: Append) -> Session:
        """Add text after the base and the tool addenda, in call order; a callable is
        called again at every ``refresh_system``."""
        self._appends.append(text)
        return self

    def preamble_options(self, options: PreambleOptions | None = None, **changes: Any) -> Session:
        """Set the preamble's options: a whole ``PreambleOptions``, or fields to change."""
        self._preamble = replace(options or self._preamble, **changes)
        return self

    def with_default_tools(self, enabled: bool = True) -> Session:
        """Offer conch's built-in tools (on by default); after the first turn the tools
        change at once and the prompt is refreshed (history kept)."""
        self._use_defaults = enabled
        if self._tools is not None:
            self.refresh_system()
        return self

    def add_tool(self, tool: Tool) -> Session:
        """Offer ``tool`` too (its system addendum joins the prompt). Before the first turn
        it is queued; after, it is offered at once and the prompt refreshed, history kept.
        ValueError when a tool of that name is already offered."""
        taken = {t.name for t in self._extra}
        if self._tools is not None:
            taken.update(t.name for t in self._tools)
        if tool.name in taken:
            raise ValueError(f"a tool named '{tool.name}' is already offered")
        self._extra.append(tool)
        if self._tools is not None:
            self.refresh_system()
        return self

    def with_mcp(self, servers: McpServers, *, close: bool = True) -> Session:
        """Offer the tools of the MCP ``servers`` too (``conch.mcp.client.McpServers``,
        started), after the caller's tools. A server that stops takes its tools with it at
        the next turn (history kept). ``close``: close the servers with the session."""
        self._mcp, self._mcp_close = servers, close
        self._mcp_seen = servers.generation
        if servers.permit is None:  # each call decided by the one rule, asked as commands are
            servers.permit = shell_for(self.tool_options).permit_foreign
        if self._tools is not None:
            self.refresh_system()
        return self

    def init(self) -> Session:
        """Build the tools and the system prompt (the first turn does this itself)."""
        if self._tools is None:
            self._tools = self._collect()
            self._stable = self._render_stable(self._tools)
            self._conversation.system = self._compose(self._tools, self._stable)
        return self

    # -- the system prompt -------------------------------------------------------------------

    def render_system(self) -> str:
        """The system prompt as the model would get it now."""
        tools = self._tools if self._tools is not None else self._collect()
        stable = self._stable if self._stable is not None else self._render_stable(tools)
        return self._compose(tools, stable)

    def refresh_system(self) -> Session:
        """Render the prompt again (callable appends too) and use it; history kept."""
        if self._tools is None:
            return self.init()
        self._tools = self._collect()
        self._stable = self._render_stable(self._tools)
        self._conversation.system = self._compose(self._tools, self._stable)
        return self

    def set_system(self, text: str) -> Session:
        """Make ``text`` the base prompt and start the conversation over."""
        self._base = text
        self._close_running()
        self._conversation.clear()
        return self.refresh_system()

    def reset(self) -> Session:
        """Start the conversation over (prompt and tools stay, the plan goes)."""
        self._close_running()
        self._conversation.clear()
        self._plan.clear()
        return self

    def restore(self, history: Iterable[Message]) -> Session:
        """Start the conversation over from ``history`` (messages as ``history`` gives
        them, without the system prompt): a saved chat resumed. ValueError when the
        messages would not make a valid conversation; the old one is kept then."""
        messages = list(history)
        problems = alternation_problems(messages)
        if any(m.role == "system" for m in messages):
            problems.insert(0, "a system message in the history")
        if problems:
            raise ValueError(f"not a valid conversation: {problems[0]}")
        self.reset()
        for message in messages:
            self._conversation.add(message)
        return self

    def compress(self, on_event: Callable[[ProviderEvent], None] | None = None) -> str | None:
        """Replace the conversation with a recap the model writes of it, and return the
        recap (``conch.agent.compress``); None when there is nothing to compress.
        ``on_event`` hears the recap as it streams."""
        from conch.agent.compress import compress

        self._close_running()
        return compress(self, on_event)

    # -- talking -----------------------------------------------------------------------------

    def stream(self, text: str) -> Generator[AgentEvent, None, str]:
        """One turn as a stream of events (text deltas, tool calls, ``TurnFinished`` last);
        the generator returns the visible reply. Leaving the stream early ends the turn
        cleanly."""
        self._close_running()
        events = self._turns(text)
        self._running = events
        return events

    def proceed(self) -> Generator[AgentEvent, None, str]:
        """One turn on the history as it stands, without a new message: for a conversation
        ``restore``d up to a user message, or up to the results of tool calls that ran
        outside the session (an API client that runs its own tools). Streams as ``stream``
        does; ValueError when the history ends otherwise."""
        last = self._conversation.messages[-1] if self._conversation.messages else None
        if last is None or last.role not in ("user", "tool"):
            raise ValueError(
                "nothing to answer: the history must end with a user message or tool results"
            )
        self._close_running()
        events = self._turn(None)
        self._running = events
        return events

    def chat(
        self,
        text: str,
        on_event: Callable[[AgentEvent], None] | None = None,
        on_token: Callable[[str], None] | None = None,
    ) -> str:
        """One turn: the visible reply. ``on_event`` hears every event, ``on_token`` every
        piece of visible text. Raises ``IterationLimit`` or ``LoopDetected`` when the agent
        gives up, and lets Ctrl+C through; the history stays valid either way."""
        events = self.stream(text)
        try:
            while True:
                try:
                    event = next(events)
                except StopIteration as stop:
                    reply: str = stop.value
                    return reply
                if on_token is not None and isinstance(event, TextDelta):
                    on_token(event.text)
                if on_event is not None:
                    on_event(event)
        except BaseException:
            events.close()  # a callback raised (Ctrl+C included): end the turn cleanly
            raise

    # -- what it holds -----------------------------------------------------------------------

    @property
    def history(self) -> tuple[Message, ...]:
        """The conversation so far, without the system prompt."""
        return self._conversation.messages

    @property
    def plan(self) -> tuple[PlanStep, ...]:
        """The steps of the last instruction given one action per turn, with how each went
        (``conch.agent.stepplan``); empty when it was one action."""
        return self._plan.steps

    @property
    def messages(self) -> list[Message]:
        """The system message (from the first turn on), then the history."""
        return self._conversation.wire()

    @property
    def tools(self) -> list[Tool]:
        """The tools offered now (built at the first turn)."""
        return list(self._tools if self._tools is not None else self._collect())

    def close(self) -> None:
        """Release the model (and the MCP servers given to ``with_mcp`` to close)."""
        self._close_running()
        if self._mcp is not None and self._mcp_close:
            self._mcp.close()
        self.provider.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- inside ------------------------------------------------------------------------------

    def _turns(self, text: str) -> Generator[AgentEvent, None, str]:
        """``text`` as one turn, or, when stepwise and it asks for several actions, as a
        plan of one turn per action (``conch.agent.stepplan``); returns the last reply."""
        steps = split_steps(text) if self.stepwise else [text]
        self._plan.clear()
        if len(steps) == 1:
            return (yield from self._turn(text))
        return (yield from self._plan.run(steps, self._turn, self.limits))

    def _turn(
        self, text: str | None, limits: Limits | None = None
    ) -> Generator[AgentEvent, None, str]:
        self.init()
        if self._mcp is not None and self._mcp.generation != self._mcp_seen:
            self._mcp_seen = self._mcp.generation
            self.refresh_system()  # an MCP server stopped: its tools go
        assert self._tools is not None and self._stable is not None
        tools = self._tools
        if self.act_first and text is not None and not suits_a_command(text):
            tools = [t for t in tools if t.name != ACT_TOOL]  # the model's own work (act.py)
        self._conversation.system = self._compose(tools, self._stable)
        self._request = text if text is not None else self._conversation.request_text()
        budget = int(self.context_tokens * PRUNE_AT) - self.options.max_tokens
        agent = Agent(
            self.provider,
            ToolRegistry(tools),
            self.options,
            json_steps=self.json_steps,
            limits=limits or self.limits,
            budget=max(budget, 1),
            root=self.tool_options.root,
            act_first=self.act_first,
        )
        return (yield from agent.run(self._conversation, text))

    def _close_running(self) -> None:
        if self._running is not None:
            self._running.close()
            self._running = None

    def _collect(self) -> list[Tool]:
        tools: list[Tool] = []
        if self._use_defaults:
            if self._defaults is None:
                self._defaults = default_tools(
                    self.tool_options, lambda: self._request, lambda: self.provider
                )
            tools += self._defaults
        tools += self._extra
        if self._mcp is not None:
            tools += self._mcp.tools
        if self._use_defaults:
            tools.append(self._lookup)
        names = [t.name for t in tools]
        doubled = sorted({n for n in names if names.count(n) > 1})
        if doubled:
            raise ValueError(f"more than one tool named {', '.join(doubled)}")
        return tools

    def _render_stable(self, tools: list[Tool]) -> str:
        base = DEFAULT_BASE if self._base is None else self._base
        appends = [a() if callable(a) else a for a in self._appends]
        return stable_layers(base, tools, appends)

    def _compose(self, tools: list[Tool], stable: str) -> str:
        names = [t.name for t in tools]
        return compose(
            stable,
            render_preamble(self._preamble, names, self._vocabulary(names)),
            render_catalogue(tools, json_steps=self.json_steps),
        )

    def _vocabulary(self, names: list[str]) -> list[str]:
        directory = self.tool_options.memory_dir
        if directory is None or not any(n.startswith("memory") for n in names):
            return []
        return memory_vocabulary(directory)
