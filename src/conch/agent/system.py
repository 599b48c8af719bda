"""The system prompt, in five layers and a fixed order.

1. base: conch's short default (written for a small model), the operator's replacement
   (``Session.system``), or nothing (``Session.no_builtin_system``);
2. tool addenda: each tool's own ``system`` paragraph, in registration order;
3. operator appends (``Session.system_append``), in call order;
4. the dynamic preamble: date, knowledge cutoff, knowledge-loop rules, citing sources, and
   the memory vocabulary last;
5. the tools catalogue: one line per tool (name and short trigger), and how to get a tool's
   full manual from ``tool_lookup``.

Stable layers come first, so a prompt cache (llama.cpp's KV cache, a hosted prompt cache)
still holds them when a later layer changes: the memory vocabulary changes when a memory
entry is saved, the date once a day. Every spliced text goes through ``conch.sanitize``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from conch import sanitize
from conch.tools import Tool

if TYPE_CHECKING:
    from conch.policy import ExecutionMode

DEFAULT_BASE = """\
You are conch, a helpful assistant in the user's Unix shell.
- Answer briefly and plainly.
- Use a tool when it helps: to read files, run commands, compute, or look things up.
- Never guess file contents, command output, dates or facts that a tool can check.
- Call one tool at a time and read its result before the next step.
- When a tool fails, read the error, then fix the call or try another way. Do not repeat \
the same call.
- If the user refuses a command, do not propose it again.
- When you have the answer, give it and stop calling tools."""

# A small model copies the form of what it is shown: a question and a change, each done in
# JSON steps, for models that write tool calls as text (measured on benchmarks/agent).
JSON_STEPS_EXAMPLE = """\
EXAMPLES:
user: What database host does app.cfg use?
assistant: {"tool": "fs_read", "arguments": {"path": "app.cfg"}}
user: Result of fs_read:
1|db_host = db.local
2|timeout = 10
assistant: {"answer": "db.local"}

user: In app.cfg set the timeout to 30.
assistant: {"tool": "fs_read", "arguments": {"path": "app.cfg"}}
user: Result of fs_read:
1|db_host = db.local
2|timeout = 10
assistant: {"tool": "fs_edit", "arguments": {"path": "app.cfg", "old_text": "timeout = 10", \
"new_text": "timeout = 30"}}
user: Result of fs_edit:
edited 'app.cfg': replaced 1 place (line 2)
assistant: {"answer": "app.cfg now sets timeout = 30."}"""

# A third worked example, where bash and fs_write are both offered: a result computed by a
# command and written to the file the user named (small models otherwise answer in words).
JSON_STEPS_BASH_EXAMPLE = """\
user: Count the lines of log.txt and write the number to n.txt.
assistant: {"tool": "bash", "arguments": {"command": "wc -l log.txt"}}
user: Result of bash:
12 log.txt
[exit code 0]
assistant: {"tool": "fs_write", "arguments": {"path": "n.txt", "content": "12\\n"}}
user: Result of fs_write:
created 'n.txt' (3 bytes, 1 lines)
assistant: {"answer": "n.txt holds 12, the number of lines in log.txt."}"""

# Where ``do`` is offered, the third example shows it instead: the step said in plain
# language, the command conch wrote, its trial run and its result (conch.agent.act).
JSON_STEPS_DO_EXAMPLE = """\
user: Count the lines of log.txt and write the number to n.txt.
assistant: {"tool": "do", "arguments": {"step": "write the number of lines of log.txt to n.txt"}}
user: Result of do:
command: wc -l < log.txt > n.txt
trial run on a copy: worked in a throwaway copy of this directory: created n.txt
(no output)
[exit code 0]
n.txt now holds (1 line):
12
assistant: {"answer": "n.txt holds 12, the number of lines in log.txt."}"""

LOOKUP_TOOL = "tool_lookup"
EVALUATE_TOOL = "evaluate"
MAX_VOCABULARY = 200


@dataclass(frozen=True, slots=True)
class PreambleOptions:
    """What the dynamic preamble says.

    ``date``: today's date (the model's own idea of "today" is its training cutoff);
    ``time``: the time of day too, to the minute (off by default: a prompt that changes
    every minute defeats the prompt cache; the ``datetime`` tool tells the exact time);
    ``now``: the clock (default: local time). ``knowledge_cutoff``: when the model's
    training data ends (``"2023-12"``), if known. ``knowledge_loop``: the memory-then-web
    rules, when both memory and web tools are offered. ``cite_sources``: ask the model to
    name the pages and memory entries an answer uses, when such tools are offered.
    ``enabled``: False leaves the preamble out.
    """

    date: bool = True
    time: bool = False
    now: Callable[[], datetime] | None = None
    knowledge_cutoff: str | None = None
    knowledge_loop: bool = True
    cite_sources: bool = True
    enabled: bool = True


def trigger_of(tool: Tool) -> str:
    """A tool's short trigger: its ``trigger``, else the first line of its description."""
    if tool.trigger.strip():
        return tool.trigger
    lines = tool.spec.description.strip().splitlines()
    return lines[0] if lines else ""


def tool_addenda(tools: Iterable[Tool]) -> str:
    """Layer 2: every tool's system addendum (each capped at 8 KiB), blank lines between."""
    return _join(sanitize.paragraph(t.system) for t in tools if t.system.strip())


def operator_appendix(appends: Iterable[str]) -> str:
    """Layer 3: the operator's appends in order, blank lines between, capped at 16 KiB."""
    return sanitize.appendix(_join(a.strip("\n") for a in appends))


def stable_layers(base: str, tools: Sequence[Tool], appends: Sequence[str]) -> str:
    """Layers 1 to 3, which change only when the operator changes them."""
    return _join([base.strip("\n"), tool_addenda(tools), operator_appendix(appends)])


def render_preamble(
    options: PreambleOptions, tool_names: Iterable[str] = (), vocabulary: Sequence[str] = ()
) -> str:
    """Layer 4, in cache-friendly order: date, cutoff, knowledge loop, sources, vocabulary."""
    if not options.enabled:
        return ""
    names = set(tool_names)
    memory = any(n.startswith("memory") for n in names)
    web = any(n.startswith("web") for n in names)
    blocks: list[str] = []
    if options.date:
        blocks.append(_date_block(options, "datetime" in names))
    if options.knowledge_cutoff:
        cutoff = sanitize.one_line(options.knowledge_cutoff, sanitize.NAME_CAP)
        blocks.append(
            f"KNOWLEDGE CUTOFF: your training data ends around {cutoff}. You do not know "
            "later events: say so, or look them up with a tool."
        )
    if options.knowledge_loop and memory and web:
        blocks.append(
            "KNOWLEDGE LOOP: for questions of fact,\n"
            "1. search memory first;\n"
            "2. then search the web too, even if memory had an answer;\n"
            "3. merge both, preferring the more recent or authoritative source;\n"
            "4. save durable new facts from the web to memory."
        )
    if options.cite_sources and (memory or web):
        blocks.append(
            "CITE SOURCES: when an answer uses a web page or a memory entry, name it "
            "(the URL or the entry)."
        )
    if memory:
        words = [sanitize.name(w) for w in vocabulary[:MAX_VOCABULARY] if w.strip()]
        listed = ", ".join(words) if words else "(no entries yet)"
        blocks.append(f"MEMORY VOCABULARY (keywords of saved entries): {listed}")
    return _join(blocks)


# Which tool writes files (seed easyai's write/edit policy): in the catalogue when evaluate is
# offered, and in the instructions ``conch mcp`` gives MCP clients.
WRITE_POLICY = (
    f"WRITE/EDIT POLICY: {EVALUATE_TOOL} is read-only: it cannot write files, start "
    "programs or use the network. Write and edit files with the file tools (or bash "
    "when it is offered)."
)


def mcp_instructions(tools: Sequence[Tool], mode: ExecutionMode) -> str:
    """What ``conch mcp`` tells a client's model (MCP's ``instructions``): what conch is, the
    write/edit policy, and what the execution mode lets commands do."""
    from conch.agent.modes import describe  # the policy package, only when it is needed

    names = {t.name for t in tools}
    lines = [
        "conch: tools for working in a Unix shell, safely. Every command a tool runs is "
        "checked by conch's safety policy first; a refused command does not run and the "
        "reason comes back instead.",
        WRITE_POLICY,
    ]
    if "bash" in names:
        lines.append("BASH: " + describe(mode, can_ask=False))
    if "propose_command" in names:
        lines.append(
            "propose_command turns a request into one checked command with the policy's "
            "verdict; it never runs it."
        )
    return "\n\n".join(lines)


def render_catalogue(tools: Sequence[Tool], *, json_steps: bool = False) -> str:
    """Layer 5: one line per tool (name and trigger), where the manual is, and, for models
    that write tool calls as JSON text, the shape of a step."""
    if not tools:
        return ""
    names = [t.name for t in tools]
    heading = "AVAILABLE TOOLS"
    if LOOKUP_TOOL in names:
        heading += f' (call {LOOKUP_TOOL} with name="<tool>" for its full manual)'
    lines = [heading + ":"]
    for tool in tools:
        label = sanitize.name(tool.name)
        if json_steps:
            label += f"({_argument_names(tool)})"
        lines.append(f"- {label}: {sanitize.one_line(trigger_of(tool))}")
    blocks = ["\n".join(lines)]
    if EVALUATE_TOOL in names:
        blocks.append(WRITE_POLICY)
    if json_steps:
        blocks.append(
            "HOW TO CALL A TOOL: reply with JSON only, "
            '{"tool": "<name>", "arguments": {...}}, then wait for the result. '
            'When the work is done, reply {"answer": "<your answer>"}.'
        )
        if {"fs_read", "fs_edit"} <= set(names):
            example = JSON_STEPS_EXAMPLE
            if "do" in names:
                example += "\n\n" + JSON_STEPS_DO_EXAMPLE
            elif {"bash", "fs_write"} <= set(names):
                example += "\n\n" + JSON_STEPS_BASH_EXAMPLE
            blocks.append(example)
    return _join(blocks)


def render_system(
    base: str,
    tools: Sequence[Tool] = (),
    appends: Sequence[str] = (),
    options: PreambleOptions | None = None,
    vocabulary: Sequence[str] = (),
    *,
    json_steps: bool = False,
) -> str:
    """The whole system prompt: the five layers in order, blank lines between."""
    return compose(
        stable_layers(base, tools, appends),
        render_preamble(options or PreambleOptions(), [t.name for t in tools], vocabulary),
        render_catalogue(tools, json_steps=json_steps),
    )


def compose(*layers: str) -> str:
    """Non-empty layers joined by blank lines."""
    return _join(layers)


def _join(parts: Iterable[str]) -> str:
    return "\n\n".join(p for p in parts if p.strip())


def _date_block(options: PreambleOptions, has_clock: bool) -> str:
    now = options.now() if options.now is not None else datetime.now().astimezone()
    stamp = now.strftime("%A %Y-%m-%d %H:%M" if options.time else "%A %Y-%m-%d")
    zone = now.strftime("%Z (UTC%z)") if now.tzinfo is not None else ""
    text = f"DATE: {stamp}{', time zone ' + zone if zone else ''}."
    text += " This is authoritative: use it, not your training data, for anything about today."
    if has_clock and not options.time:
        text += " For the exact time, call datetime."
    return text


def _argument_names(tool: Tool) -> str:
    schema = tool.spec.parameters
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    if not isinstance(properties, dict):
        return ""
    names = [sanitize.name(str(n)) + ("" if n in required else "?") for n in properties]
    return ", ".join(names)


def schema_text(tool: Tool) -> str:
    """A tool's parameter schema as indented JSON (for the manual view)."""
    return json.dumps(tool.spec.parameters, indent=2, ensure_ascii=False)
