"""Natural language to one command, and the explainer call around it."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path

from conch.command.examples import Example, corpus, nearest
from conch.command.request import RequestContext, build_messages
from conch.config.settings import PromptConfig, ValidationSettings
from conch.errors import ModelOutputError
from conch.messages import GenerationOptions, Message, ProviderEvent, Usage
from conch.policy import PolicyContext
from conch.providers.base import EventCallback, Provider, complete, drain, respond
from conch.validate.extract import ONE_LINE_GRAMMAR, extract_command

EXPLAINER_PROMPT = (
    "You are a shell and tool usage explainer. Explain what the given command will do on the "
    "user's platform: describe each program, each flag and argument, and the overall effect, "
    "including anything it changes or deletes. If it failed when conch tried it, say so and "
    "what the error means. Be brief and concrete; plain text, no markdown headings."
)

REPAIR_PROMPT = (
    "That command failed when tried on this machine:\n{error}\n"
    "Reply with a corrected command for the same request, on one line, nothing else."
)

MISFIT_PROMPT = (
    "When tried on this machine, that command ran but {reason}.\n"
    "Reply with a corrected command for the same request, on one line, nothing else."
)

REFUSED_PROMPT = (
    "conch cannot run that command: {reason}\n"
    "Reply with one command for the same request that conch can run, on one line, nothing else."
)

# How worked examples are looked up: the request and how many, most similar last.
Find = Callable[[str, int], list[Example]]

DOCUMENTATION_PROMPT = "Documentation on this machine of programs that may help:\n"


@dataclass(frozen=True, slots=True)
class Generated:
    """A command the model proposed, with the raw reply it came from and, where the provider
    gives it, the reply's log-probability (the sum over its tokens)."""

    command: str
    reply: str
    usage: Usage
    seconds: float
    logprob: float | None = None


@dataclass(frozen=True, slots=True)
class Ask:
    """What every attempt at one request shares: the prompt config, the platform, the
    request and what goes with it.

    ``few_shot`` worked examples nearest to the request are shown first; with a whitelist of
    allowed programs, only examples that use them. ``hints`` (see
    ``conch.command.whatis.program_hints``) and ``documentation`` (see ``documentation_for``)
    end the system prompt, in that order. ``end_bias`` favours ending the command once it is
    complete (``generation.brevity``). ``find`` looks the examples up instead of
    ``conch.command.examples.nearest`` (``generation.review``, the benchmark's ablations).
    ``rules`` says what the mode the command will run in allows (``mode_rules``); it goes
    before the hints.
    """

    prompt: PromptConfig
    platform_description: str
    ctx: RequestContext
    few_shot: int = 0
    documentation: str = ""
    hints: str = ""
    end_bias: float = 0.0
    find: Find | None = None
    rules: str = ""  # what the mode the command will run in allows (``mode_rules``)
    shared: tuple[Example, ...] = ()  # examples every request shares, before its own


@dataclass(frozen=True, slots=True)
class Attempt:
    """One try at an ``Ask``: how to sample, and what went wrong before.

    ``failed`` is a ``(command, error)`` pair from an earlier attempt: the model is shown it
    and asked for a corrected command. ``misfit`` is a ``(command, reason)`` pair: a command
    that ran but printed what does not fit the request (``conch.command.judge``), and why.
    ``refused`` is a ``(command, reason)`` pair: a command
    the policy refuses in this mode, and why; the model is asked for one it allows. ``examples_skip`` shows the next ``few_shot`` examples
    instead, after skipping that many of the nearest.
    """

    temperature: float = 0.0
    seed: int | None = None
    max_tokens: int = 256
    failed: tuple[str, str] | None = None
    refused: tuple[str, str] | None = None
    misfit: tuple[str, str] | None = None
    examples_skip: int = 0


SAFE_MODE_RULES = (
    "conch runs the command without a shell. Use programs joined by |, &&, || or ; with "
    "file redirections (< file, > file, >> file, 2>&1) as needed. Do not use $(...), "
    "backticks, $VARIABLES, loops, if, functions, here-documents, subshells or &."
)
ONE_PROGRAM_RULES = (
    "conch runs exactly one program without a shell: no |, ;, && or ||, no redirections, "
    "no $(...), backticks or $VARIABLES."
)


def mode_rules(policy: PolicyContext) -> str:
    """What the model is told about the mode the command will run in: nothing in unsafe
    mode (the user's shell runs anything), the shell-free forms in safe mode."""
    if policy.unsafe:
        return ""
    return SAFE_MODE_RULES if policy.pipelines else ONE_PROGRAM_RULES


def generate(
    provider: Provider,
    ask: Ask,
    attempt: Attempt | None = None,
    on_event: EventCallback | None = None,
) -> Generated:
    """Ask the model for one command and extract it from the reply; ``on_event`` sees the
    reply as it streams."""
    return drain(generate_events(provider, ask, attempt), on_event)


def generate_events(
    provider: Provider, ask: Ask, attempt: Attempt | None = None
) -> Generator[ProviderEvent, None, Generated]:
    """``generate`` as a stream: the model's events as they come, then the command."""
    attempt = attempt or Attempt()
    examples = select_examples(
        ask.prompt, ask.ctx.request, ask.few_shot, attempt.examples_skip, ask.find
    )
    messages = build_messages(
        ask.prompt, ask.platform_description, ask.ctx, [*ask.shared, *examples]
    )
    # In the system prompt: after the request, the model takes them for the request.
    extra = [text for text in (ask.rules, ask.hints) if text]
    extra += [DOCUMENTATION_PROMPT + ask.documentation] if ask.documentation else []
    if extra:
        messages[0] = Message("system", "\n\n".join([messages[0].content, *extra]))
    if attempt.failed is not None:
        command, error = attempt.failed
        messages += [
            Message("assistant", command),
            Message("user", REPAIR_PROMPT.format(error=error)),
        ]
    elif attempt.misfit is not None:
        command, reason = attempt.misfit
        messages += [
            Message("assistant", command),
            Message("user", MISFIT_PROMPT.format(reason=reason)),
        ]
    elif attempt.refused is not None:
        command, reason = attempt.refused
        messages += [
            Message("assistant", command),
            Message("user", REFUSED_PROMPT.format(reason=reason)),
        ]
    options = GenerationOptions(
        temperature=attempt.temperature,
        max_tokens=attempt.max_tokens,
        stop=("\n\n",),
        grammar=ONE_LINE_GRAMMAR,
        seed=attempt.seed,
        end_bias=ask.end_bias,
        logprobs=True,
    )
    started = time.monotonic()
    response = yield from respond(provider, messages, options)
    command = extract_command(response.text)
    if "\n" in command:
        raise ModelOutputError("the model replied with several lines; ask for one command")
    seconds = time.monotonic() - started
    return Generated(command, response.text, response.usage, seconds, response.logprob)


def select_examples(
    prompt: PromptConfig, request: str, k: int, skip: int = 0, find: Find | None = None
) -> list[Example]:
    """The nearest worked examples that fit the prompt config's whitelist, most similar last;
    with ``skip``, the ``k`` after the ``skip`` nearest; found by ``find`` if given."""
    if k <= 0:
        return []
    allowed = {t.name for t in prompt.tools}
    wanted = k + skip
    if not allowed:
        candidates = (find or nearest)(request, wanted)
    else:
        # Nearest among the examples of the allowed programs: the nearest of the whole corpus
        # rarely use them (a jq request shares its words with find and awk examples).
        fits = [e for e in (find or nearest)(request, WHITELIST_DEPTH) if _program(e) in allowed]
        candidates = fits[-wanted:]
        if len(candidates) < wanted:  # too few share a word: any examples of those programs
            chosen = set(candidates)
            others = [e for e in corpus() if _program(e) in allowed and e not in chosen]
            candidates = others[: wanted - len(candidates)] + candidates
    return candidates[: len(candidates) - skip] if skip else candidates


# How deep ``select_examples`` looks for examples of a whitelist's programs (the corpus
# holds about 2,100 examples; looking through all of them takes a few milliseconds).
WHITELIST_DEPTH = 5000


def _program(example: Example) -> str:
    return example.command.split()[0]


def documentation_for(
    prompt: PromptConfig,
    request: str,
    programs: int,
    few_shot: int,
    settings: ValidationSettings,
    cache_dir: Path | None,
    find: Find | None = None,
) -> str:
    """An excerpt of this machine's ``--help`` (or man page) for the first ``programs``
    programs the nearest worked examples (found by ``find``) use, nearest first; empty when
    there are none."""
    if programs <= 0:
        return ""
    names: list[str] = []
    for example in reversed(select_examples(prompt, request, max(few_shot, programs), 0, find)):
        name = example.command.split()[0]
        if name not in names:
            names.append(name)
    from conch.validate import help_for_prompt

    return help_for_prompt(names[:programs], settings, cache_dir, per_command=800)


def explain(
    provider: Provider,
    command: str,
    request: str | None,
    on_event: EventCallback | None = None,
    seen: str | None = None,
) -> str:
    """A plain-language explanation of ``command`` (temperature 0); ``seen`` is what its dry
    run saw (``Proposal.dry_run_seen``), so the explanation does not call a failing command
    working."""
    user = f"Command: {command}"
    if request:
        user = f"The user asked: {request}\n{user}"
    if seen:
        user += f"\nWhen conch tried it in a read-only sandbox, it {seen}."
    return _answer(provider, EXPLAINER_PROMPT, user, 400, "explanation", on_event)


def _answer(
    provider: Provider,
    system: str,
    user: str,
    max_tokens: int,
    what: str,
    on_event: EventCallback | None,
) -> str:
    messages = [Message("system", system), Message("user", user)]
    options = GenerationOptions(temperature=0.0, max_tokens=max_tokens)
    text = complete(provider, messages, options, on_event=on_event).text.strip()
    if not text:
        raise ModelOutputError(f"the model returned an empty {what}; retry")
    return text
